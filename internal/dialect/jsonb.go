package dialect

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// jsonb values are kept by MariaDB and SQLite as PostgreSQL's output
// text of the value ({"a": 1, "b": [1, 2]}), and only shepherd writes
// that text: every jsonb constant, cast constant and parameter stored
// into a jsonb column (COPY's rows are constants) is read as jsonb_in
// reads it and written again as jsonb_out writes it (CanonicalJSONB),
// so that the engines' JSON_EQUALS and shepherd_jsonb_eq, which read the
// stored text, see the document PostgreSQL sees: one member per key
// (the last of duplicates), \u escapes decoded. Computed values stored
// into a jsonb column are refused: their text would not be canonical.
// json columns keep the text as written, as PostgreSQL's json does.

// maxJSONBDepth bounds the nesting CanonicalJSONB reads; deeper
// documents are refused (MariaDB's JSON functions stop at 32 anyway).
const maxJSONBDepth = 1000

// maxJSONBExponent bounds the exponent of a number CanonicalJSONB
// writes out in full; larger ones are refused rather than expanded.
const maxJSONBExponent = 1000

// CanonicalJSONB reads s as PostgreSQL's jsonb input reads it and
// returns jsonb's output text of it: object members ordered as jsonb
// orders them (shorter keys first, then bytewise) with the last of
// duplicate keys kept, strings with only the escapes jsonb_out writes,
// numbers as numeric_out writes them (1e2 is 100, 1.50 stays 1.50), and
// ", " and ": " between items. Input PostgreSQL refuses gets its error
// (22P02, or 22P05 for \u0000); documents nested deeper than
// maxJSONBDepth and numbers with exponents beyond maxJSONBExponent are
// refused (0A000).
func CanonicalJSONB(s string) (string, error) {
	p := jsonbParser{s: s}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return "", err
	}
	p.space()
	if p.i != len(p.s) {
		return "", p.syntax()
	}
	var b strings.Builder
	v.write(&b)
	return b.String(), nil
}

// jsonbValue is one parsed value: kind is 'o' (object), 'a' (array),
// 's' (string, in text), or 'n' (number, bool or null, in text as
// written out).
type jsonbValue struct {
	kind  byte
	text  string
	keys  []string
	items []jsonbValue
}

func (v jsonbValue) write(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONBString(b, k)
			b.WriteString(": ")
			v.items[i].write(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteString(", ")
			}
			it.write(b)
		}
		b.WriteByte(']')
	case 's':
		writeJSONBString(b, v.text)
	default:
		b.WriteString(v.text)
	}
}

// writeJSONBString writes s quoted as PostgreSQL's escape_json does.
func writeJSONBString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

type jsonbParser struct {
	s string
	i int
}

func (p *jsonbParser) syntax() error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type json")
}

func (p *jsonbParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonbParser) value(depth int) (jsonbValue, error) {
	if depth > maxJSONBDepth {
		return jsonbValue{}, pgerr.New(pgerr.FeatureNotSupported, "jsonb documents nested more than %d levels deep are not supported by shepherd", maxJSONBDepth)
	}
	if p.i >= len(p.s) {
		return jsonbValue{}, p.syntax()
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		p.i++
		v := jsonbValue{kind: 'a'}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			p.space()
			it, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.items = append(v.items, it)
			p.space()
			if p.i >= len(p.s) {
				return v, p.syntax()
			}
			if p.s[p.i] == ']' {
				p.i++
				return v, nil
			}
			if p.s[p.i] != ',' {
				return v, p.syntax()
			}
			p.i++
		}
	case c == '"':
		s, err := p.str()
		return jsonbValue{kind: 's', text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, w := range []string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], w) {
				p.i += len(w)
				// The lexer reads a word to its end: "truex" is one
				// invalid token.
				if p.i < len(p.s) && isJSONWordChar(p.s[p.i]) {
					return jsonbValue{}, p.syntax()
				}
				return jsonbValue{kind: 'n', text: w}, nil
			}
		}
		return jsonbValue{}, p.syntax()
	}
}

func isJSONWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

func (p *jsonbParser) object(depth int) (jsonbValue, error) {
	p.i++
	members := map[string]jsonbValue{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return jsonbValue{kind: 'o'}, nil
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return jsonbValue{}, p.syntax()
		}
		k, err := p.str()
		if err != nil {
			return jsonbValue{}, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return jsonbValue{}, p.syntax()
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return jsonbValue{}, err
		}
		members[k] = v // the last of duplicate keys wins
		p.space()
		if p.i >= len(p.s) {
			return jsonbValue{}, p.syntax()
		}
		if p.s[p.i] == '}' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return jsonbValue{}, p.syntax()
		}
		p.i++
	}
	o := jsonbValue{kind: 'o'}
	for k := range members {
		o.keys = append(o.keys, k)
	}
	// jsonb's order of keys (lengthCompareJsonbString): by length in
	// bytes, then bytewise.
	sort.Slice(o.keys, func(i, j int) bool {
		a, b := o.keys[i], o.keys[j]
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	for _, k := range o.keys {
		o.items = append(o.items, members[k])
	}
	return o, nil
}

// str reads a string and returns its value, escapes decoded.
func (p *jsonbParser) str() (string, error) {
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.syntax()
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.syntax()
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.s) {
			return "", p.syntax()
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || !strings.HasPrefix(p.s[p.i:], `\u`) {
					return "", p.syntax()
				}
				p.i += 2
				lo, err := p.hex4()
				if err != nil {
					return "", err
				}
				if lo < 0xdc00 || lo > 0xdfff {
					return "", p.syntax()
				}
				r = utf16.DecodeRune(r, lo)
			}
			if r == 0 {
				return "", pgerr.New("22P05", "unsupported Unicode escape sequence").
					WithDetail(`\u0000 cannot be converted to text.`)
			}
			b.WriteRune(r)
		default:
			return "", p.syntax()
		}
	}
}

func (p *jsonbParser) hex4() (rune, error) {
	if p.i+4 > len(p.s) {
		return 0, p.syntax()
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil || strings.ContainsAny(p.s[p.i:p.i+4], "+-") {
		return 0, p.syntax()
	}
	p.i += 4
	return rune(v), nil
}

// number reads a JSON number and writes it as numeric_out writes the
// numeric numeric_in reads from it: the digits with the point moved by
// the exponent, as many places after the point as the text had less the
// exponent (none if that is negative), no sign on zero.
func (p *jsonbParser) number() (jsonbValue, error) {
	start := p.i
	neg := false
	if p.s[p.i] == '-' {
		neg = true
		p.i++
	}
	digits := func() string {
		j := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		return p.s[j:p.i]
	}
	whole := digits()
	if whole == "" || len(whole) > 1 && whole[0] == '0' {
		return jsonbValue{}, p.syntax()
	}
	frac := ""
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if frac = digits(); frac == "" {
			return jsonbValue{}, p.syntax()
		}
	}
	exp := 0
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		sign := 1
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			if p.s[p.i] == '-' {
				sign = -1
			}
			p.i++
		}
		e := digits()
		if e == "" {
			return jsonbValue{}, p.syntax()
		}
		n, err := strconv.Atoi(e)
		if err != nil || n > maxJSONBExponent {
			return jsonbValue{}, pgerr.New(pgerr.FeatureNotSupported, "jsonb number %s with an exponent beyond %d is not supported by shepherd", p.s[start:p.i], maxJSONBExponent)
		}
		exp = sign * n
	}
	if p.i < len(p.s) && isJSONWordChar(p.s[p.i]) {
		return jsonbValue{}, p.syntax()
	}
	scale := len(frac) - exp
	if scale < 0 {
		scale = 0
	}
	// all is the digits; the point sits after point of them.
	all := whole + frac
	point := len(whole) + exp
	for point < 1 {
		all = "0" + all
		point++
	}
	for len(all) < point+scale {
		all += "0"
	}
	all = all[:point+scale]
	intPart := strings.TrimLeft(all[:point], "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if scale > 0 {
		out += "." + all[point:]
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return jsonbValue{kind: 'n', text: out}, nil
}

// jsonbStored writes a value stored into a jsonb column on MariaDB and
// SQLite (see CanonicalJSONB): constants are written canonically by
// typed, parameters by the session; other values are refused unless
// they are canonical already (canonicalJSONBExpr).
func (w *writer) jsonbStored(n *pg_query.Node) {
	if tc := n.GetTypeCast(); tc != nil && !w.pg() && tc.Arg.GetAConst() != nil && tc.Arg.GetAConst().GetSval() != nil {
		if t, _, _, ok := schema.TypeOf(tc.TypeName); ok && t == "json" {
			// '...'::json stored as jsonb: PostgreSQL reads the text
			// as jsonb.
			w.jsonbConstant(tc.Arg.GetAConst().GetSval().Sval)
			return
		}
	}
	if !w.pg() && n.GetSetToDefault() == nil && !w.canonicalJSONBExpr(n, true) {
		w.refuse("a computed value stored into a jsonb column (only constants, parameters, jsonb columns and CASE or COALESCE of them)")
	}
	w.typed(n, "jsonb")
}

// jsonbConstant writes a string constant where a jsonb value is
// expected, in jsonb's output text.
func (w *writer) jsonbConstant(s string) {
	v, err := CanonicalJSONB(s)
	if err != nil {
		if pe := pgerr.From(err); pe != nil {
			if pe.Code == pgerr.FeatureNotSupported {
				w.refuse("%s", pe.Message)
			}
			panic(failure{pe})
		}
		panic(failure{pgerr.Wrap(pgerr.InvalidTextRepresentation, err, "jsonb")})
	}
	w.literal(v)
}

// canonicalJSONBExpr reports whether n, stored into a jsonb column on
// MariaDB or SQLite, gives jsonb's output text of its value: NULL, a
// jsonb column (or EXCLUDED's), a cast to jsonb of a string constant or
// a parameter (written canonically), at the top (top) a string constant
// or a parameter, and CASE or COALESCE of such values, whose string
// constants must be canonical already: they are written as they are.
func (w *writer) canonicalJSONBExpr(n *pg_query.Node, top bool) bool {
	switch {
	case n == nil:
		return true
	case n.GetParamRef() != nil:
		return top
	case n.GetColumnRef() != nil:
		if f := n.GetColumnRef().Fields; len(f) == 2 && f[0].GetString_().GetSval() == "excluded" {
			return true // the row proposed for insertion: written canonically
		}
		return w.typeOf(n) == "jsonb"
	case n.GetAConst() != nil:
		c := n.GetAConst()
		if c.Isnull || top && c.GetSval() != nil {
			return true
		}
		if c.GetSval() == nil {
			return false
		}
		v, err := CanonicalJSONB(c.GetSval().Sval)
		return err == nil && v == c.GetSval().Sval
	case n.GetTypeCast() != nil:
		t, _, _, ok := schema.TypeOf(n.GetTypeCast().TypeName)
		arg := n.GetTypeCast().Arg
		if !ok || t != "jsonb" {
			return false
		}
		if arg.GetParamRef() != nil || arg.GetAConst() != nil {
			return true // written canonically by cast and the session
		}
		return arg.GetColumnRef() != nil && w.typeOf(arg) == "jsonb"
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		for _, a := range ce.Args {
			if !w.canonicalJSONBExpr(a.GetCaseWhen().Result, false) {
				return false
			}
		}
		return ce.Defresult == nil || w.canonicalJSONBExpr(ce.Defresult, false)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if !w.canonicalJSONBExpr(a, false) {
				return false
			}
		}
		return true
	}
	return false
}

// checkJSONBSelect refuses INSERT ... SELECT into jsonb columns on
// MariaDB and SQLite unless each such column's value is canonical
// (canonicalJSONBExpr).
func (w *writer) checkJSONBSelect(sel *pg_query.SelectStmt, types []*schema.Column) {
	if w.pg() {
		return
	}
	var cols []int
	for i, c := range types {
		if c != nil && c.Type == "jsonb" {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		w.refuse("INSERT ... SELECT into jsonb columns of other than one plain SELECT")
	}
	w.pushScope(sel.FromClause)
	defer w.popScope()
	for _, i := range cols {
		if i >= len(sel.TargetList) {
			return // PostgreSQL's error
		}
		v := sel.TargetList[i].GetResTarget().GetVal()
		if cr := v.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			w.refuse("INSERT ... SELECT * into jsonb columns (list the columns)")
		}
		if !w.canonicalJSONBExpr(v, false) {
			w.refuse("INSERT ... SELECT of a value for jsonb column %q that is not a jsonb column or a constant in PostgreSQL's output form", types[i].Name)
		}
	}
}
