package pgcatalog

import (
	sqldriver "database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	msqlite "modernc.org/sqlite"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// The SQLite functions the rewritten queries call. They are registered
// for every connection of the modernc library (its registry is
// process-wide), under names no translated data statement uses.

// setters holds, by a token the query passes to pgcat_set_config, the
// session's SET of each catalog query running that calls set_config()
// (Session.SetConfig): the function registry is process-wide, the
// sessions are not.
var setters struct {
	sync.Mutex
	next int64
	m    map[int64]*setter
}

type setter struct {
	set func(name string, value *string, local bool) (string, error)
	err error // the first the session gave, with its SQLSTATE
}

// addSetter registers set for a query and returns its token (never 0)
// and the function that unregisters it.
func addSetter(set func(name string, value *string, local bool) (string, error)) (int64, *setter, func()) {
	setters.Lock()
	defer setters.Unlock()
	if setters.m == nil {
		setters.m = map[int64]*setter{}
	}
	setters.next++
	tok, st := setters.next, &setter{set: set}
	setters.m[tok] = st
	return tok, st, func() {
		setters.Lock()
		defer setters.Unlock()
		delete(setters.m, tok)
	}
}

func init() {
	// pgcat_set_config(token, name, value, is_local) is set_config(): it
	// changes the session's setting, so it is not deterministic (SQLite
	// calls it for every row, as PostgreSQL does).
	msqlite.MustRegisterScalarFunction("pgcat_set_config", 4, func(_ *msqlite.FunctionContext, a []sqldriver.Value) (sqldriver.Value, error) {
		tok, _ := a[0].(int64)
		setters.Lock()
		st := setters.m[tok]
		setters.Unlock()
		if st == nil {
			return nil, fmt.Errorf("set_config() without a session")
		}
		if a[1] == nil {
			st.err = pgerr.New(pgerr.InvalidParameterValue, "SET requires parameter name")
			return nil, st.err
		}
		var value *string
		if a[2] != nil {
			v := toText(a[2])
			value = &v
		}
		local := false
		switch x := a[3].(type) {
		case int64:
			local = x != 0
		case nil:
			return nil, nil // strict in is_local
		default:
			switch strings.ToLower(toText(x)) {
			case "t", "true", "on", "yes", "1":
				local = true
			}
		}
		v, err := st.set(toText(a[1]), value, local)
		if err != nil {
			if st.err == nil {
				st.err = err
			}
			return nil, err
		}
		return v, nil
	})
	reg := func(name string, n int32, f func(args []sqldriver.Value) (sqldriver.Value, error)) {
		msqlite.MustRegisterDeterministicScalarFunction(name, n,
			func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) { return f(args) })
	}
	reg("pgcat_regex", 3, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		re, err := compileRegex(toText(a[1]), toText(a[2]))
		if err != nil {
			return nil, err
		}
		return bool01(re.MatchString(toText(a[0]))), nil
	})
	reg("pgcat_int", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		switch v := a[0].(type) {
		case nil, int64:
			return v, nil
		case float64:
			return int64(v), nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(toText(a[0])), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid input syntax for type integer: %q", toText(a[0]))
		}
		return n, nil
	})
	reg("pgcat_float", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		switch v := a[0].(type) {
		case nil, float64:
			return v, nil
		case int64:
			return float64(v), nil
		}
		return strconv.ParseFloat(strings.TrimSpace(toText(a[0])), 64)
	})
	reg("pgcat_regpart", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		part, _ := a[1].(int64)
		return regPart(toText(a[0]), part), nil
	})
	reg("pgcat_text", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return toText(a[0]), nil
	})
	// pgcat_acldefault(kind, owner, owner's name) is acldefault(kind,
	// owner): PostgreSQL 15's built-in privileges of an object of a kind
	// (acldefault in its utils/adt/acl.c), a JSON array of aclitems.
	reg("pgcat_acldefault", 3, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		owner := toText(a[2])
		if a[2] == nil {
			owner = toText(a[1])
		}
		var public, own string
		switch toText(a[0]) {
		case "c":
		case "r":
			own = "arwdDxt"
		case "s":
			own = "rwU"
		case "d":
			public, own = "Tc", "CTc"
		case "f":
			public, own = "X", "X"
		case "l", "T":
			public, own = "U", "U"
		case "L":
			own = "rw"
		case "n":
			own = "UC"
		case "t":
			own = "C"
		case "F", "S":
			own = "U"
		case "p":
			own = "sA"
		default:
			return nil, pgerr.New(pgerr.InternalError, "unrecognized object type abbreviation: %s", toText(a[0]))
		}
		items := []string{}
		if public != "" {
			items = append(items, "="+public+"/"+owner)
		}
		if own != "" {
			items = append(items, owner+"="+own+"/"+owner)
		}
		b, err := json.Marshal(items)
		return string(b), err
	})
	// pgcat_array_remove(array, v) is array_remove(): the JSON array
	// without the elements equal to v (NULL elements when v is NULL).
	reg("pgcat_array_remove", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		var elems []any
		if err := json.Unmarshal([]byte(toText(a[0])), &elems); err != nil {
			return nil, err
		}
		out := []any{}
		for _, e := range elems {
			switch {
			case e == nil && a[1] == nil:
			case e != nil && a[1] != nil && fmt.Sprint(e) == toText(a[1]):
			default:
				out = append(out, e)
			}
		}
		b, err := json.Marshal(out)
		return string(b), err
	})
	reg("pgcat_zero", 0, func([]sqldriver.Value) (sqldriver.Value, error) { return int64(0), nil })
	reg("pgcat_format_type", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		oid, ok := a[0].(int64)
		if !ok {
			return nil, nil
		}
		mod, given := int64(-1), false
		if m, ok := a[1].(int64); ok {
			mod, given = m, true
		}
		if !given && oid == 1042 {
			return "character", nil // format_type(bpchar, NULL)
		}
		if oid == 0 {
			return "-", nil
		}
		return formatType(uint32(oid), mod), nil
	})
	reg("pgcat_encoding_to_char", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		switch a[0] {
		case int64(6):
			return "UTF8", nil
		case int64(0):
			return "SQL_ASCII", nil
		}
		return "", nil
	})
	reg("pgcat_quote_ident", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return quoteIfNeeded(toText(a[0])), nil
	})
	// pgcat_qualify_nextval(expr) qualifies the sequence of a
	// nextval('s'::regclass) default with public, as PostgreSQL prints
	// a regclass not on the search path.
	reg("pgcat_qualify_nextval", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		e := toText(a[0])
		if rest, ok := strings.CutPrefix(e, "nextval('"); ok && !strings.Contains(strings.SplitN(rest, "'", 2)[0], ".") {
			return "nextval('public." + rest, nil
		}
		return e, nil
	})
	// pgcat_quote_literal and pgcat_quote_nullable are quote_literal()
	// and quote_nullable(): a string constant, with E'' when it has a
	// backslash (doubled), as PostgreSQL writes it.
	reg("pgcat_quote_literal", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return quoteLiteral(toText(a[0])), nil
	})
	reg("pgcat_quote_nullable", 1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return "NULL", nil
		}
		return quoteLiteral(toText(a[0])), nil
	})
	// pgcat_format is format() with %s, %I, %L and %%.
	reg("pgcat_format", -1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if len(a) == 0 || a[0] == nil {
			return nil, nil
		}
		f := toText(a[0])
		var b strings.Builder
		k := 1
		for i := 0; i < len(f); i++ {
			if f[i] != '%' || i+1 == len(f) {
				b.WriteByte(f[i])
				continue
			}
			i++
			if f[i] == '%' {
				b.WriteByte('%')
				continue
			}
			var v any
			if k < len(a) {
				v = a[k]
			}
			k++
			switch f[i] {
			case 's':
				b.WriteString(toText(v))
			case 'I':
				b.WriteString(quoteIfNeeded(toText(v)))
			case 'L':
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.WriteString("'" + strings.ReplaceAll(toText(v), "'", "''") + "'")
				}
			default:
				return nil, fmt.Errorf("unrecognized format() type specifier %q", f[i])
			}
		}
		return b.String(), nil
	})
	reg("pgcat_starts_with", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		return bool01(strings.HasPrefix(toText(a[0]), toText(a[1]))), nil
	})
	reg("pgcat_left", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		n, ok := a[1].(int64)
		if a[0] == nil || !ok {
			return nil, nil
		}
		r := []rune(toText(a[0]))
		if n < 0 {
			n = max(int64(len(r))+n, 0)
		}
		return string(r[:min(int(n), len(r))]), nil
	})
	reg("pgcat_translate", 3, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil || a[1] == nil || a[2] == nil {
			return nil, nil
		}
		from, to := []rune(toText(a[1])), []rune(toText(a[2]))
		var b strings.Builder
		for _, c := range toText(a[0]) {
			i := strings.IndexRune(string(from), c)
			switch {
			case i < 0:
				b.WriteRune(c)
			default:
				k := len([]rune(string(from)[:i]))
				if k < len(to) {
					b.WriteRune(to[k])
				}
			}
		}
		return b.String(), nil
	})
	// pgcat_json(v, type) is an array value as a JSON array: the stored
	// form already is; a client's parameter comes in PostgreSQL's text
	// form.
	reg("pgcat_json", 2, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		s := toText(a[0])
		if strings.HasPrefix(s, "[") {
			return s, nil
		}
		t := "_text"
		if a[1] != nil {
			t = toText(a[1])
		}
		if !strings.HasPrefix(t, "_") && t != "int2vector" && t != "oidvector" {
			t = "_" + t
		}
		return arrayJSON(t, s), nil
	})
	reg("pgcat_array_at", 3, func(a []sqldriver.Value) (sqldriver.Value, error) {
		i, ok1 := a[1].(int64)
		base, ok2 := a[2].(int64)
		if a[0] == nil || !ok1 || !ok2 {
			return nil, nil
		}
		var arr []any
		if err := json.Unmarshal([]byte(toText(a[0])), &arr); err != nil {
			return nil, err
		}
		i -= base
		if i < 0 || i >= int64(len(arr)) {
			return nil, nil
		}
		return sqlValue(arr[i]), nil
	})
	reg("pgcat_array_to_string", -1, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if len(a) < 2 || a[0] == nil || a[1] == nil {
			return nil, nil
		}
		var arr []any
		if err := json.Unmarshal([]byte(toText(a[0])), &arr); err != nil {
			return nil, err
		}
		var parts []string
		for _, e := range arr {
			switch {
			case e == nil && len(a) > 2 && a[2] != nil:
				parts = append(parts, toText(a[2]))
			case e == nil:
			default:
				parts = append(parts, elemText(e))
			}
		}
		return strings.Join(parts, toText(a[1])), nil
	})
	// pgcat_condef(def, prettydef, pretty, qualify) is
	// pg_get_constraintdef: the pretty form of a CHECK is prettydef, or,
	// without one, def with one pair of parentheses less.
	reg("pgcat_condef", 4, func(a []sqldriver.Value) (sqldriver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		def := toText(a[0])
		if q, _ := a[3].(int64); q != 0 {
			// public is not on the search path: the referenced table
			// is qualified.
			def = strings.Replace(def, " REFERENCES ", " REFERENCES public.", 1)
		}
		if p, _ := a[2].(int64); p != 0 {
			if a[1] != nil {
				return toText(a[1]), nil
			}
			if strings.HasPrefix(def, "CHECK ((") && strings.HasSuffix(def, "))") {
				return "CHECK (" + strings.TrimSuffix(strings.TrimPrefix(def, "CHECK (("), "))") + ")", nil
			}
		}
		return def, nil
	})
	// pgcat_indexdef(def, cols, column, pretty) is pg_get_indexdef: the
	// whole definition (column 0), qualified unless pretty, or one
	// column's.
	reg("pgcat_indexdef", 4, func(a []sqldriver.Value) (sqldriver.Value, error) {
		col, _ := a[2].(int64)
		if col == 0 {
			if p, _ := a[3].(int64); p != 0 {
				return strings.Replace(toText(a[0]), " ON public.", " ON ", 1), nil
			}
			return a[0], nil
		}
		var cols []string
		if err := json.Unmarshal([]byte(toText(a[1])), &cols); err != nil {
			return nil, err
		}
		if col < 1 || int(col) > len(cols) {
			return "", nil
		}
		return cols[col-1], nil
	})
	msqlite.MustRegisterFunction("pgcat_json_agg", &msqlite.FunctionImpl{NArgs: 2, Deterministic: true,
		MakeAggregate: func(msqlite.FunctionContext) (msqlite.AggregateFunction, error) { return &jsonAgg{}, nil }})
}

// jsonAgg is array_agg: the values in order, as a JSON array (NULL for
// no rows); booleans are kept as JSON booleans.
type jsonAgg struct {
	vals []any
	any  bool
}

func (j *jsonAgg) Step(_ *msqlite.FunctionContext, a []sqldriver.Value) error {
	j.any = true
	v := any(a[0])
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	if a[1] != nil && toText(a[1]) == "bool" {
		if n, ok := v.(int64); ok {
			v = n != 0
		}
	}
	j.vals = append(j.vals, v)
	return nil
}

func (j *jsonAgg) WindowInverse(*msqlite.FunctionContext, []sqldriver.Value) error {
	return fmt.Errorf("array_agg as a window function")
}
func (j *jsonAgg) Final(*msqlite.FunctionContext) {}
func (j *jsonAgg) WindowValue(*msqlite.FunctionContext) (sqldriver.Value, error) {
	if !j.any {
		return nil, nil
	}
	b, err := json.Marshal(j.vals)
	return string(b), err
}

func toText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// sqlValue converts a decoded JSON element to an SQLite value.
func sqlValue(e any) any {
	switch x := e.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case bool:
		return bool01(x)
	}
	return e
}

func elemText(e any) string {
	switch x := e.(type) {
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "t"
		}
		return "f"
	case string:
		return x
	}
	return fmt.Sprint(e)
}

var regexCache sync.Map

// compileRegex compiles a POSIX regular expression as PostgreSQL's ~
// reads it (the common subset Go's RE2 shares).
func compileRegex(pat, flags string) (*regexp.Regexp, error) {
	key := flags + "/" + pat
	if re, ok := regexCache.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	p := pat
	if flags == "i" {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %v", err)
	}
	regexCache.Store(key, re)
	return re, nil
}

// formatType is PostgreSQL's format_type(oid, typmod).
func formatType(oid uint32, mod int64) string {
	t := typeByOID[oid]
	if t == nil {
		return "???"
	}
	if t.elem != 0 && strings.HasPrefix(t.name, "_") {
		return formatType(t.elem, mod) + "[]"
	}
	name := sqlTypeName(t.name, nil)
	switch t.name {
	case "varchar", "bpchar":
		if mod >= 4 {
			return fmt.Sprintf("%s(%d)", name, mod-4)
		}
		if t.name == "bpchar" {
			return "bpchar"
		}
	case "numeric":
		if mod >= 4 {
			m := mod - 4
			return fmt.Sprintf("numeric(%d,%d)", m>>16, m&0xffff)
		}
	case "timestamp", "timestamptz", "time", "timetz":
		if mod >= 0 {
			base := map[string]string{"timestamp": "timestamp(%d) without time zone", "timestamptz": "timestamp(%d) with time zone",
				"time": "time(%d) without time zone", "timetz": "time(%d) with time zone"}[t.name]
			return fmt.Sprintf(base, mod)
		}
	case "char":
		return `"char"`
	}
	return name
}

// fail is the error of a query that failed: the session's, with its
// SQLSTATE, when set_config() failed, else the engine's.
func (st *setter) fail(err error) error {
	if st != nil && st.err != nil {
		return st.err
	}
	return engineError(err)
}

// quoteLiteral is PostgreSQL's quote_literal of a non-NULL text.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}
