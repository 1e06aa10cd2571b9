package sqlan

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// PostgreSQL's semantics are the contract: a statement PostgreSQL refuses
// must fail through shepherd as it fails there, even where MariaDB and
// SQLite would accept it. Otherwise the majority's answer wins, the
// PostgreSQL replica is taken out, and its catch-up fails on the same
// statement for ever. The checks here refuse, before any replica runs
// it, what PostgreSQL refuses and the others do not, with PostgreSQL's
// SQLSTATE and message:
//
//   - text that is not UTF-8, or holds a NUL byte (22021), in the query
//     text, in a literal (E'\x00') or in a parameter (CheckArgs);
//   - a prefix + or - on a value that is not a number (42883);
//   - an integer overflow (22003) or a division by zero (22012) in a
//     constant subexpression, which PostgreSQL folds while planning, so
//     that it fails even in a CASE branch no row reaches;
//   - DROP of a table or view another view reads (2BP01);
//   - a column of a grouped query neither grouped nor aggregated (42803,
//     grouping.go).

// Error codes of PostgreSQL used here.
const (
	characterNotInRepertoire = "22021"
	numericOutOfRange        = "22003"
	divisionByZero           = "22012"
	undefinedFunction        = "42883"
	ambiguousFunction        = "42725"
	invalidTextRepresent     = "22P02"
)

// checkEncoding fails, as PostgreSQL does, on text that is not valid
// UTF-8 or holds a NUL byte; the message names the offending bytes as
// PostgreSQL's does (the whole sequence the first byte announces).
func checkEncoding(s string) error {
	for i := 0; i < len(s); {
		if s[i] == 0 {
			return badSequence(s[i:], 1)
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return badSequence(s[i:], utf8Len(s[i]))
		}
		i += size
	}
	return nil
}

// utf8Len is the length PostgreSQL's pg_utf_mblen gives a sequence by its
// first byte.
func utf8Len(b byte) int {
	switch {
	case b&0xe0 == 0xc0:
		return 2
	case b&0xf0 == 0xe0:
		return 3
	case b&0xf8 == 0xf0:
		return 4
	}
	return 1
}

func badSequence(s string, n int) error {
	n = min(n, len(s))
	var hex []string
	for i := 0; i < n; i++ {
		hex = append(hex, fmt.Sprintf("0x%02x", s[i]))
	}
	return pgerr.New(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", strings.Join(hex, " "))
}

// CheckArgs refuses, as PostgreSQL refuses at Bind, a parameter value
// that is not valid UTF-8 or holds a NUL byte (binary values reach here
// as text). A bytea parameter is carried as its raw bytes, which may be
// anything.
func CheckArgs(args []driver.Arg) error {
	for _, a := range args {
		if a.Null || a.Type == answer.Bytes {
			continue
		}
		if err := checkEncoding(a.Text); err != nil {
			return err
		}
	}
	return nil
}

// pgTypeNames are PostgreSQL's names for the types of the catalog, as its
// messages print them.
var pgTypeNames = map[string]string{
	"text": "text", "varchar": "character varying", "bpchar": "character", "bool": "boolean",
	"date": "date", "time": "time without time zone", "timestamp": "timestamp without time zone",
	"timestamptz": "timestamp with time zone", "uuid": "uuid", "bytea": "bytea", "json": "json", "jsonb": "jsonb",
	"interval": "interval",
}

// numericTypes are the types PostgreSQL's prefix + and - accept.
var numericTypes = map[string]bool{"int2": true, "int4": true, "int8": true, "numeric": true, "float4": true, "float8": true}

// checkPostgresRules applies the checks above that need the statement's
// tree (DML and queries).
func (r *rewriter) checkPostgresRules(root *pg_query.Node) error {
	if err := r.checkPrefixOps(root); err != nil {
		return err
	}
	if err := r.checkGrouping(root); err != nil {
		return err
	}
	f := &folder{}
	f.node(root)
	return f.err
}

// checkPrefixOps refuses a prefix + or - on a column or cast whose type
// PostgreSQL has no such operator for.
func (r *rewriter) checkPrefixOps(root *pg_query.Node) error {
	return r.walkScoped(root, false, func(m protoreflect.Message, sc *scope) error {
		e, ok := m.Interface().(*pg_query.A_Expr)
		if !ok || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Rexpr == nil {
			return nil
		}
		op := schema.OpName(e.Name)
		if e.Lexpr != nil {
			return r.checkArithmetic(sc, op, e.Lexpr, e.Rexpr)
		}
		if op != "+" && op != "-" {
			return nil
		}
		typ := ""
		switch x := e.Rexpr; {
		case x.GetColumnRef() != nil && sc != nil:
			if c := r.columnStrict(sc, x); c != nil {
				typ = c.Type
			}
		case x.GetTypeCast() != nil:
			typ = schema.TypeText(x.GetTypeCast().TypeName)
		case x.GetAConst() != nil && x.GetAConst().GetSval() != nil:
			// An unknown literal: + reads it as float8, - has candidates
			// it cannot choose between.
			if op == "-" {
				return pgerr.New(ambiguousFunction, "operator is not unique: - unknown").
					WithHint("Could not choose a best candidate operator. You might need to add explicit type casts.")
			}
			text := x.GetAConst().GetSval().Sval
			if _, err := strconv.ParseFloat(strings.TrimSpace(text), 64); err != nil && !isSpecialFloat(text) {
				return pgerr.New(invalidTextRepresent, "invalid input syntax for type double precision: %q", text)
			}
			return nil
		}
		if name, known := pgTypeNames[typ]; known && !numericTypes[typ] && typ != "interval" {
			return pgerr.New(undefinedFunction, "operator does not exist: %s %s", op, name).
				WithHint("No operator matches the given name and argument type. You might need to add an explicit type cast.")
		}
		return nil
	})
}

// operandType returns the PostgreSQL type of an operand where the
// schema or the text tells: a column, a cast, a number.
func (r *rewriter) operandType(sc *scope, n *pg_query.Node) string {
	switch {
	case n.GetColumnRef() != nil && sc != nil:
		if c := r.columnStrict(sc, n); c != nil {
			return c.Type
		}
	case n.GetTypeCast() != nil:
		return schema.TypeText(n.GetTypeCast().TypeName)
	case n.GetAConst() != nil:
		if v, ok := constOf(n.GetAConst()); ok {
			switch v.kind {
			case 'i':
				return v.typ
			case 'n':
				return "numeric"
			}
		}
		if n.GetAConst().GetSval() != nil {
			return "unknown"
		}
	}
	return ""
}

// numericNames are PostgreSQL's names of the number types in messages.
var numericNames = map[string]string{
	"int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric", "float4": "real", "float8": "double precision",
}

// checkArithmetic refuses, as PostgreSQL does, arithmetic on strings or
// booleans (MariaDB and SQLite read them as numbers).
func (r *rewriter) checkArithmetic(sc *scope, op string, l, rt *pg_query.Node) error {
	switch op {
	case "+", "-", "*", "/", "%":
	default:
		return nil
	}
	lt, rtyp := r.operandType(sc, l), r.operandType(sc, rt)
	name := func(t string) (string, bool) {
		switch t {
		case "text", "varchar", "bpchar", "bool":
			return pgTypeNames[t], true
		}
		n, ok := numericNames[t]
		return n, ok
	}
	stringy := func(t string) bool { return t == "text" || t == "varchar" || t == "bpchar" || t == "bool" }
	if lt == "unknown" && stringy(rtyp) || rtyp == "unknown" && stringy(lt) {
		// A literal next to a string stays unknown: no operator takes it.
		ln, _ := name(lt)
		rn, _ := name(rtyp)
		if lt == "unknown" {
			ln = "unknown"
		} else {
			rn = "unknown"
		}
		return pgerr.New(undefinedFunction, "operator does not exist: %s %s %s", ln, op, rn).
			WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
	}
	ln, lok := name(lt)
	rn, rok := name(rtyp)
	if !lok || !rok || numericTypes[lt] && numericTypes[rtyp] {
		return nil
	}
	return pgerr.New(undefinedFunction, "operator does not exist: %s %s %s", ln, op, rn).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

// isSpecialFloat reports the float8 spellings strconv does not share
// with PostgreSQL.
func isSpecialFloat(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nan", "infinity", "+infinity", "-infinity", "inf", "+inf", "-inf":
		return true
	}
	return false
}

// walkScoped calls visit on every message of the tree with the query
// level it belongs to (nil outside any: VALUES, DDL); the first error
// stops the walk. ORDER BY keys are visited only with sortKeys (they may
// name output columns, not the scope's).
func (r *rewriter) walkScoped(root *pg_query.Node, sortKeys bool, visit func(protoreflect.Message, *scope) error) error {
	var err error
	var walk func(m protoreflect.Message, sc *scope)
	walk = func(m protoreflect.Message, sc *scope) {
		if err != nil {
			return
		}
		switch x := m.Interface().(type) {
		case *pg_query.SelectStmt:
			sc = &scope{from: x.FromClause, windows: x.WindowClause}
		case *pg_query.UpdateStmt:
			sc = &scope{from: append([]*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: x.Relation}}}, x.FromClause...)}
		case *pg_query.DeleteStmt:
			sc = &scope{from: append([]*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: x.Relation}}}, x.UsingClause...)}
		case *pg_query.SortBy:
			if !sortKeys {
				return
			}
		}
		if err = visit(m, sc); err != nil {
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Kind() != protoreflect.MessageKind:
			case fd.IsList():
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message(), sc)
				}
			default:
				walk(v.Message(), sc)
			}
			return err == nil
		})
	}
	walk(root.ProtoReflect(), nil)
	return err
}

// columnStrict resolves a column reference only where PostgreSQL could
// not resolve it otherwise: every FROM item of the level is a table
// shepherd knows (or a join of such), and the name matches exactly one
// column of them. Anything else (subqueries, functions, views, an outer
// query's column) gives nil.
func (r *rewriter) columnStrict(sc *scope, n *pg_query.Node) *schema.Column {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) > 2 || cr.Fields[len(cr.Fields)-1].GetString_() == nil {
		return nil
	}
	qual, name := "", cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	if len(cr.Fields) == 2 {
		qual = cr.Fields[0].GetString_().GetSval()
	}
	var found *schema.Column
	matches, unknown := 0, false
	var visit func(f *pg_query.Node)
	visit = func(f *pg_query.Node) {
		if j := f.GetJoinExpr(); j != nil {
			if j.Alias != nil {
				unknown = true
			}
			visit(j.Larg)
			visit(j.Rarg)
			return
		}
		rv := f.GetRangeVar()
		if rv == nil {
			unknown = true
			return
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
			if len(rv.Alias.Colnames) > 0 {
				unknown = true
			}
		}
		t := r.schema.Table(rv.Relname)
		if t == nil || t.View {
			if qual == "" || qual == alias {
				unknown = true
			}
			return
		}
		if qual != "" && qual != alias {
			return
		}
		if c := t.Column(name); c != nil {
			found = c
			matches++
		}
	}
	for _, f := range sc.from {
		visit(f)
	}
	if unknown || matches != 1 {
		return nil
	}
	return found
}

// konst is the value of a constant subexpression as far as the folder
// follows it.
type konst struct {
	kind byte // 'i' integer (typ says which), 'n' numeric, 'b' boolean, 'u' NULL
	typ  string
	i    int64
	zero bool // numeric: the value is zero
	b    bool
}

// intRange are the bounds and the names in messages of the integer types.
var intRange = map[string]struct {
	lo, hi int64
	name   string
}{
	"int2": {math.MinInt16, math.MaxInt16, "smallint"},
	"int4": {math.MinInt32, math.MaxInt32, "integer"},
	"int8": {math.MinInt64, math.MaxInt64, "bigint"},
}

// folder evaluates constant subexpressions as PostgreSQL's planner does
// (eval_const_expressions), to fail where it fails. It follows integer
// and numeric arithmetic, casts to the integer types and abs(); it
// honours the planner's short cuts (a CASE arm after a constant-true
// condition, or under a constant-false one, COALESCE after a non-NULL
// constant, AND after false, OR after true are never folded) and stops
// at any conditional it cannot evaluate. Each node is visited once.
type folder struct {
	err    error
	varies map[*pg_query.Node]bool // see mayBeConstant
}

var intLiteral = regexp.MustCompile(`^\s*[+-]?[0-9]+\s*$`)

// node folds n's subtree; it returns n's value when n is constant.
func (f *folder) node(n *pg_query.Node) (konst, bool) {
	if n == nil || f.err != nil {
		return konst{}, false
	}
	switch {
	case n.GetAConst() != nil:
		return constOf(n.GetAConst())
	case n.GetAExpr() != nil:
		return f.aexpr(n.GetAExpr())
	case n.GetTypeCast() != nil:
		return f.cast(n.GetTypeCast())
	case n.GetCaseExpr() != nil:
		f.caseExpr(n.GetCaseExpr())
		return konst{}, false
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			v, ok := f.node(a)
			if ok && v.kind != 'u' {
				break
			}
			if !ok && f.mayBeConstant(a) {
				break // PostgreSQL may find it constant and stop here
			}
		}
		return konst{}, false
	case n.GetBoolExpr() != nil:
		return f.boolExpr(n.GetBoolExpr())
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		var args []konst
		all := true
		for _, a := range fc.Args {
			v, ok := f.node(a)
			args = append(args, v)
			all = all && ok
		}
		f.node(fc.AggFilter)
		for _, o := range fc.AggOrder {
			f.node(o)
		}
		if fc.Over != nil {
			f.walk(fc.Over.ProtoReflect())
		}
		if all && len(args) == 1 && schema.FuncName(fc) == "abs" && args[0].kind == 'i' {
			if args[0].i == intRange[args[0].typ].lo {
				f.err = outOfRange(args[0].typ)
				return konst{}, false
			}
			v := args[0]
			v.i = max(v.i, -v.i)
			return v, true
		}
		return konst{}, false
	case n.GetCommonTableExpr() != nil:
		// A WITH query nobody reads is not planned: leave it alone
		// unless it writes (then it always runs, and is walked).
		if n.GetCommonTableExpr().GetCtequery().GetSelectStmt() != nil {
			return konst{}, false
		}
	}
	f.walk(n.ProtoReflect())
	return konst{}, false
}

// walk folds the Node children of a message that is not itself folded.
func (f *folder) walk(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		visit := func(x protoreflect.Message) {
			if n, ok := x.Interface().(*pg_query.Node); ok {
				f.node(n)
			} else {
				f.walk(x)
			}
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				visit(l.Get(i).Message())
			}
		} else {
			visit(v.Message())
		}
		return f.err == nil
	})
}

// mayBeConstant reports whether an expression names nothing that varies
// (columns, parameters, subqueries, aggregates; volatile calls are
// parameters by now): PostgreSQL may fold it. Answers are kept, so that nested
// conditionals cost one visit of each node in all.
func (f *folder) mayBeConstant(n *pg_query.Node) bool {
	if n == nil {
		return true
	}
	if v, ok := f.varies[n]; ok {
		return !v
	}
	// An aggregate or a window function varies with the rows even over
	// constants (count(DISTINCT 2) is 0 or 1).
	fc := n.GetFuncCall()
	varies := n.GetColumnRef() != nil || n.GetParamRef() != nil || n.GetSubLink() != nil ||
		fc != nil && (isAggregate(fc) || fc.Over != nil)
	if !varies {
		var visit func(m protoreflect.Message)
		visit = func(m protoreflect.Message) {
			m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
				if fd.Kind() != protoreflect.MessageKind {
					return true
				}
				one := func(x protoreflect.Message) {
					if c, ok := x.Interface().(*pg_query.Node); ok {
						varies = varies || !f.mayBeConstant(c)
					} else {
						visit(x)
					}
				}
				if fd.IsList() {
					l := v.List()
					for i := 0; i < l.Len() && !varies; i++ {
						one(l.Get(i).Message())
					}
				} else {
					one(v.Message())
				}
				return !varies
			})
		}
		visit(n.ProtoReflect())
	}
	if f.varies == nil {
		f.varies = map[*pg_query.Node]bool{}
	}
	f.varies[n] = varies
	return !varies
}

func constOf(c *pg_query.A_Const) (konst, bool) {
	switch {
	case c.Isnull:
		return konst{kind: 'u'}, true
	case c.GetIval() != nil:
		return konst{kind: 'i', typ: "int4", i: int64(c.GetIval().Ival)}, true
	case c.GetFval() != nil:
		s := c.GetFval().Fval
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return konst{kind: 'i', typ: "int4", i: v}, true
			}
			return konst{kind: 'i', typ: "int8", i: v}, true
		}
		zero := strings.Trim(strings.TrimLeft(s, "+-"), "0.") == ""
		if strings.ContainsAny(s, "eE") {
			zero = false // not worth parsing: never called zero
		}
		return konst{kind: 'n', zero: zero}, true
	case c.GetBoolval() != nil:
		return konst{kind: 'b', b: c.GetBoolval().Boolval}, true
	}
	return konst{}, false
}

func outOfRange(typ string) error {
	return pgerr.New(numericOutOfRange, "%s out of range", intRange[typ].name)
}

// wider returns the result type of integer arithmetic on a and b.
func wider(a, b string) string {
	rank := map[string]int{"int2": 0, "int4": 1, "int8": 2}
	if rank[a] >= rank[b] {
		return a
	}
	return b
}

func (f *folder) aexpr(e *pg_query.A_Expr) (konst, bool) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		f.node(e.Lexpr)
		f.node(e.Rexpr)
		return konst{}, false
	}
	l, lok := f.node(e.Lexpr)
	rv, rok := f.node(e.Rexpr)
	if f.err != nil || !rok || e.Lexpr != nil && !lok {
		return konst{}, false
	}
	op := schema.OpName(e.Name)
	if e.Lexpr == nil {
		switch {
		case op == "+" && (rv.kind == 'i' || rv.kind == 'n'):
			return rv, true
		case op == "-" && rv.kind == 'i':
			if rv.i == intRange[rv.typ].lo {
				f.err = outOfRange(rv.typ)
				return konst{}, false
			}
			rv.i = -rv.i
			return rv, true
		case op == "-" && rv.kind == 'n':
			return rv, true
		}
		return konst{}, false
	}
	if l.kind == 'u' || rv.kind == 'u' {
		return konst{}, false // NULL: strict operators give NULL
	}
	if (op == "/" || op == "%") && (rv.kind == 'i' && rv.i == 0 || rv.kind == 'n' && rv.zero) && (l.kind == 'i' || l.kind == 'n') {
		f.err = pgerr.New(divisionByZero, "division by zero")
		return konst{}, false
	}
	if l.kind != 'i' || rv.kind != 'i' {
		if (l.kind == 'i' || l.kind == 'n') && (rv.kind == 'i' || rv.kind == 'n') && (op == "+" || op == "-" || op == "*") {
			return konst{kind: 'n'}, true // exact; its value is not followed
		}
		return konst{}, false
	}
	typ := wider(l.typ, rv.typ)
	bounds := intRange[typ]
	var res int64
	overflow := false
	switch op {
	case "+":
		res = l.i + rv.i
		overflow = (rv.i > 0 && res < l.i) || (rv.i < 0 && res > l.i)
	case "-":
		res = l.i - rv.i
		overflow = (rv.i < 0 && res < l.i) || (rv.i > 0 && res > l.i)
	case "*":
		res = l.i * rv.i
		overflow = l.i != 0 && (res/l.i != rv.i || l.i == -1 && rv.i == math.MinInt64)
	case "/":
		if l.i == bounds.lo && rv.i == -1 {
			overflow = true
		} else {
			res = l.i / rv.i
		}
	case "%":
		if rv.i == -1 {
			res = 0
		} else {
			res = l.i % rv.i
		}
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		return konst{kind: 'b', b: compare(op, l.i, rv.i)}, true
	default:
		return konst{}, false
	}
	if overflow || res < bounds.lo || res > bounds.hi {
		f.err = outOfRange(typ)
		return konst{}, false
	}
	return konst{kind: 'i', typ: typ, i: res}, true
}

func compare(op string, a, b int64) bool {
	switch op {
	case "=":
		return a == b
	case "<>", "!=":
		return a != b
	case "<":
		return a < b
	case ">":
		return a > b
	case "<=":
		return a <= b
	}
	return a >= b
}

func (f *folder) cast(tc *pg_query.TypeCast) (konst, bool) {
	typ := schema.TypeText(tc.TypeName)
	if a := tc.Arg.GetAConst(); a != nil && a.GetSval() != nil {
		bounds, isInt := intRange[typ]
		s := a.GetSval().Sval
		if !isInt || !intLiteral.MatchString(s) {
			return konst{}, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v < bounds.lo || v > bounds.hi {
			f.err = pgerr.New(numericOutOfRange, "value %q is out of range for type %s", s, bounds.name)
			return konst{}, false
		}
		return konst{kind: 'i', typ: typ, i: v}, true
	}
	v, ok := f.node(tc.Arg)
	if !ok || f.err != nil {
		return konst{}, false
	}
	switch {
	case v.kind == 'u':
		return v, true
	case v.kind == 'i':
		if bounds, isInt := intRange[typ]; isInt {
			if v.i < bounds.lo || v.i > bounds.hi {
				f.err = outOfRange(typ)
				return konst{}, false
			}
			return konst{kind: 'i', typ: typ, i: v.i}, true
		}
		if typ == "numeric" {
			return konst{kind: 'n', zero: v.i == 0}, true
		}
	case v.kind == 'n' && typ == "numeric":
		return v, true
	}
	return konst{}, false
}

// caseExpr folds a CASE as PostgreSQL's planner simplifies it.
func (f *folder) caseExpr(c *pg_query.CaseExpr) {
	f.node(c.Arg)
	if c.Arg != nil && f.mayBeConstant(c.Arg) {
		return // which arm PostgreSQL keeps depends on a value not followed
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			continue
		}
		cond, ok := f.node(cw.Expr)
		if f.err != nil {
			return
		}
		switch {
		case ok && c.Arg == nil && (cond.kind == 'u' || cond.kind == 'b' && !cond.b):
			continue // the arm is dropped unfolded
		case ok && c.Arg == nil && cond.kind == 'b' && cond.b:
			f.node(cw.Result)
			return // the rest is dropped
		case c.Arg == nil && !ok && f.mayBeConstant(cw.Expr):
			return // what PostgreSQL does next depends on a value not followed
		}
		f.node(cw.Result)
	}
	f.node(c.Defresult)
}

// boolExpr folds AND, OR and NOT, stopping where the planner stops.
func (f *folder) boolExpr(b *pg_query.BoolExpr) (konst, bool) {
	all := true
	var vals []bool
	for _, a := range b.Args {
		v, ok := f.node(a)
		if f.err != nil {
			return konst{}, false
		}
		switch {
		case ok && v.kind == 'b' && b.Boolop == pg_query.BoolExprType_AND_EXPR && !v.b:
			return konst{kind: 'b'}, true
		case ok && v.kind == 'b' && b.Boolop == pg_query.BoolExprType_OR_EXPR && v.b:
			return konst{kind: 'b', b: true}, true
		case ok && v.kind == 'b':
			vals = append(vals, v.b)
		case !ok && f.mayBeConstant(a):
			return konst{}, false // its value decides what comes next
		default:
			all = false
		}
	}
	if !all || len(vals) == 0 {
		return konst{}, false
	}
	switch b.Boolop {
	case pg_query.BoolExprType_NOT_EXPR:
		return konst{kind: 'b', b: !vals[0]}, true
	case pg_query.BoolExprType_AND_EXPR:
		return konst{kind: 'b', b: true}, true
	}
	return konst{kind: 'b', b: false}, true
}

// checkDropObjects fails, as PostgreSQL does, a DROP TABLE or DROP VIEW
// naming a relation that does not exist (42P01, naming the first in the
// statement's order; none with IF EXISTS) or one of the other kind
// (42809), before any replica runs it.
func checkDropObjects(snap *schema.Snapshot, d *pg_query.DropStmt) error {
	kind, other, otherKind := "table", "VIEW", "view"
	switch d.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
	case pg_query.ObjectType_OBJECT_VIEW:
		kind, other, otherKind = "view", "TABLE", "table"
	default:
		return nil
	}
	for _, o := range d.Objects {
		name := lastName(o)
		t := snap.Table(name)
		switch {
		case t == nil && d.MissingOk:
		case t == nil:
			return pgerr.New(pgerr.UndefinedTable, "%s %q does not exist", kind, name)
		case t.View != (kind == "view"):
			return pgerr.New(wrongObjectType, "%q is not a %s", name, kind).
				WithHint("Use DROP %s to remove a %s.", other, otherKind)
		}
	}
	return nil
}

// checkTruncate fails, as PostgreSQL does, a TRUNCATE naming a relation
// that does not exist (42P01) or is not a table (42809), or one that
// another table's foreign key references unless that table is truncated
// too (0A000, even when no row references it: PostgreSQL does not look
// at the rows). The other engines get DELETE, which would go ahead or
// fail otherwise, and PostgreSQL would be outvoted.
func checkTruncate(snap *schema.Snapshot, tr *pg_query.TruncateStmt) error {
	listed := map[string]bool{}
	for _, r := range tr.Relations {
		name := r.GetRangeVar().GetRelname()
		t := snap.Table(name)
		switch {
		case t == nil:
			return pgerr.New(pgerr.UndefinedTable, "relation %q does not exist", name)
		case t.View:
			return pgerr.New(wrongObjectType, "%q is not a table", name)
		}
		listed[name] = true
	}
	if tr.Behavior == pg_query.DropBehavior_DROP_CASCADE {
		return nil // the writers refuse it
	}
	others := make([]string, 0, len(snap.Tables))
	for n := range snap.Tables {
		others = append(others, n)
	}
	slices.Sort(others) // one answer where several tables reference it
	for _, r := range tr.Relations {
		name := r.GetRangeVar().GetRelname()
		for _, on := range others {
			o := snap.Tables[on]
			if listed[o.Name] || !slices.Contains(o.Parents(), name) {
				continue
			}
			return pgerr.New(pgerr.FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint").
				WithDetail("Table %q references %q.", o.Name, name).
				WithHint("Truncate table %q at the same time, or use TRUNCATE ... CASCADE.", o.Name)
		}
	}
	return nil
}

// wrongObjectType is SQLSTATE 42809.
const wrongObjectType = "42809"

// checkDrop refuses, as PostgreSQL does, to drop a table or view that a
// view reads, unless the views go in the same statement; with CASCADE
// (PostgreSQL would drop the views, MariaDB and SQLite would keep them)
// it is refused as unsupported.
func checkDrop(snap *schema.Snapshot, d *pg_query.DropStmt) error {
	kind := "table"
	switch d.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
	case pg_query.ObjectType_OBJECT_VIEW:
		kind = "view"
	default:
		return nil
	}
	dropped := map[string]bool{}
	for _, o := range d.Objects {
		dropped[lastName(o)] = true
	}
	for _, o := range d.Objects {
		name := lastName(o)
		var deps []string
		for _, v := range snap.Dependents(name) {
			if !dropped[v] {
				deps = append(deps, v)
			}
		}
		if len(deps) == 0 {
			continue
		}
		if d.Behavior == pg_query.DropBehavior_DROP_CASCADE {
			return unsupported("DROP %s ... CASCADE of %s, which views read (%s): PostgreSQL would drop them too, the other engines would not; drop the views first",
				strings.ToUpper(kind), name, strings.Join(deps, ", "))
		}
		var detail []string
		for _, v := range deps {
			detail = append(detail, fmt.Sprintf("view %s depends on %s %s", v, kind, name))
		}
		msg := fmt.Sprintf("cannot drop %s %s because other objects depend on it", kind, name)
		if len(d.Objects) > 1 {
			msg = "cannot drop desired object(s) because other objects depend on them"
		}
		return pgerr.New(dependentObjects, "%s", msg).
			WithDetail("%s", strings.Join(detail, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	return nil
}

// checkAlter refuses, as PostgreSQL does, to drop or change the type of
// a column a view may read (MariaDB and SQLite let the view break). A
// view is taken to read column c of table t when it reads t and mentions
// c or *; where another relation the view reads has a column c too, it
// cannot be told, and the change is refused as unsupported.
func checkAlter(snap *schema.Snapshot, at *pg_query.AlterTableStmt) error {
	if at.Relation == nil {
		return nil
	}
	table := at.Relation.Relname
	for _, cn := range at.Cmds {
		cmd := cn.GetAlterTableCmd()
		if cmd == nil || cmd.Subtype != pg_query.AlterTableType_AT_DropColumn && cmd.Subtype != pg_query.AlterTableType_AT_AlterColumnType {
			continue
		}
		for _, v := range snap.Dependents(table) {
			view := snap.Table(v)
			if !slices.Contains(view.UsesColumns, cmd.Name) && !slices.Contains(view.UsesColumns, "*") {
				continue
			}
			for _, other := range view.Uses {
				if o := snap.Table(other); other != table && (o == nil || o.View || o.Column(cmd.Name) != nil) {
					return unsupported("changing column %s of %s, which view %s may read (shepherd cannot tell from which of its relations); drop the view first", cmd.Name, table, v)
				}
			}
			if cmd.Subtype == pg_query.AlterTableType_AT_AlterColumnType {
				return pgerr.New(pgerr.FeatureNotSupported, "cannot alter type of a column used by a view or rule").
					WithDetail("rule _RETURN on view %s depends on column %q", v, cmd.Name)
			}
			if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				return unsupported("ALTER TABLE ... DROP COLUMN ... CASCADE of a column view %s reads: PostgreSQL would drop the view too, the other engines would not; drop the view first", v)
			}
			return pgerr.New(dependentObjects, "cannot drop column %s of table %s because other objects depend on it", cmd.Name, table).
				WithDetail("view %s depends on column %s of table %s", v, cmd.Name, table).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
	}
	return nil
}

// checkUpsert refuses, as PostgreSQL does, an INSERT ... VALUES ... ON
// CONFLICT DO UPDATE whose rows propose the same key twice: PostgreSQL
// fails (it would update a row twice), MariaDB and SQLite update it once
// per row, the last winning. Keys of constants are compared now; keys
// with parameters are returned, to be compared with the values at
// execution (Stmt.CheckArgs). Values are compared as written, so that
// only keys that are certainly equal count ('1' and '01' are not).
func checkUpsert(snap *schema.Snapshot, ins *pg_query.InsertStmt) ([][]keyPart, error) {
	oc := ins.OnConflictClause
	sel := ins.SelectStmt.GetSelectStmt()
	if oc == nil || oc.Action != pg_query.OnConflictAction_ONCONFLICT_UPDATE || oc.Infer == nil || sel == nil || len(sel.ValuesLists) < 2 {
		return nil, nil
	}
	var cols []string
	for _, c := range ins.Cols {
		cols = append(cols, c.GetResTarget().GetName())
	}
	if len(cols) == 0 {
		t := snap.Table(ins.Relation.Relname)
		if t == nil {
			return nil, nil
		}
		for _, c := range t.Columns {
			cols = append(cols, c.Name)
		}
	}
	var at []int
	for _, e := range oc.Infer.IndexElems {
		ie := e.GetIndexElem()
		i := slices.Index(cols, ie.GetName())
		if ie == nil || ie.Name == "" || i < 0 {
			return nil, nil // an expression, or a column the rows do not give
		}
		at = append(at, i)
	}
	var keys [][]keyPart
	params := false
	for _, row := range sel.ValuesLists {
		items := row.GetList().GetItems()
		var key []keyPart
		for _, i := range at {
			if i >= len(items) {
				return nil, nil
			}
			part, ok := keyPartOf(items[i])
			if !ok {
				key = nil
				break
			}
			params = params || part.param > 0
			key = append(key, part)
		}
		if key != nil {
			keys = append(keys, key)
		}
	}
	if params {
		return keys, nil
	}
	return nil, duplicateKeys(keys, nil)
}

// keyPart is one value of a proposed key: a constant's text (with its
// kind) or parameter param (1-based).
type keyPart struct {
	text  string
	param int
}

// keyPartOf reads one proposed key value: an integer or string constant,
// or a parameter (possibly cast); NULL and other expressions never
// match.
func keyPartOf(n *pg_query.Node) (keyPart, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	if p := n.GetParamRef(); p != nil {
		return keyPart{param: int(p.Number)}, true
	}
	c := n.GetAConst()
	if c == nil {
		return keyPart{}, false
	}
	if v, ok := constOf(c); ok && v.kind == 'i' {
		return keyPart{text: strconv.FormatInt(v.i, 10)}, true
	}
	if c.GetSval() != nil {
		return keyPart{text: c.GetSval().Sval}, true
	}
	return keyPart{}, false
}

// duplicateKeys fails when two keys are equal, parameters read from args
// (a NULL parameter never matches).
func duplicateKeys(keys [][]keyPart, args []driver.Arg) error {
	seen := map[string]bool{}
	for _, key := range keys {
		var b strings.Builder
		for _, p := range key {
			text := p.text
			if p.param > 0 {
				if p.param > len(args) || args[p.param-1].Null {
					b.Reset()
					break
				}
				text = args[p.param-1].Text
			}
			b.WriteString(strconv.Itoa(len(text)))
			b.WriteByte(':')
			b.WriteString(text)
		}
		if b.Len() == 0 {
			continue
		}
		if seen[b.String()] {
			return pgerr.New(cardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
				WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
		}
		seen[b.String()] = true
	}
	return nil
}

// CheckArgs is the package's CheckArgs, and the checks of s that need the
// parameters' values (an upsert's keys).
func (s *Stmt) CheckArgs(args []driver.Arg) error {
	if err := CheckArgs(args); err != nil {
		return err
	}
	if err := s.canonicalArrayArgs(args); err != nil {
		return err
	}
	if err := s.canonicalJSONBArgs(args); err != nil {
		return err
	}
	if err := checkLimits(s.limitParams, args); err != nil {
		return err
	}
	return duplicateKeys(s.upsertKeys, args)
}

// limitParam is a parameter that gives a LIMIT or OFFSET: PostgreSQL
// reads it as an integer of type typ (int8, or the type it is cast to)
// and fails a negative one; SQLite would read -1 as no limit at all, and
// MariaDB fails any other than a plain integer.
type limitParam struct {
	n      int // $n
	clause string
	typ    string
}

// limitParams finds the parameters of root's LIMIT and OFFSET clauses.
func limitParams(root *pg_query.Node) []limitParam {
	var out []limitParam
	walkNodes(root, func(n *pg_query.Node) {
		sel := n.GetSelectStmt()
		if sel == nil {
			return
		}
		for _, c := range []struct {
			clause string
			n      *pg_query.Node
		}{{"LIMIT", sel.LimitCount}, {"OFFSET", sel.LimitOffset}} {
			v, typ := c.n, "int8"
			if tc := v.GetTypeCast(); tc != nil {
				t, _, serial, ok := schema.TypeOf(tc.TypeName)
				if !ok || serial || t != "int2" && t != "int4" && t != "int8" {
					continue
				}
				v, typ = tc.Arg, t
			}
			if p := v.GetParamRef(); p != nil {
				out = append(out, limitParam{n: int(p.Number), clause: c.clause, typ: typ})
			}
		}
	})
	return out
}

// checkLimits reads the values of LIMIT and OFFSET parameters as
// PostgreSQL does; a NULL one (no limit in PostgreSQL) is refused, since
// neither MariaDB nor SQLite reads it so.
func checkLimits(params []limitParam, args []driver.Arg) error {
	for _, p := range params {
		if p.n < 1 || p.n > len(args) {
			continue
		}
		a := args[p.n-1]
		if a.Null {
			return unsupported("a NULL %s parameter (for no limit, leave the clause out)", p.clause)
		}
		if _, err := dialect.LimitInput(a.Text, p.typ, p.clause); err != nil {
			return err
		}
	}
	return nil
}

// cardinalityViolation is PostgreSQL's SQLSTATE for a row affected twice.
const cardinalityViolation = "21000"

// checkRename refuses to rename a table, view or column that a view
// reads: PostgreSQL's views follow the rename, MariaDB's and SQLite's
// keep the old name and break.
func checkRename(snap *schema.Snapshot, r *pg_query.RenameStmt) error {
	if r.Relation == nil {
		return nil
	}
	switch r.RenameType {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_COLUMN:
	default:
		return nil
	}
	if deps := snap.Dependents(r.Relation.Relname); len(deps) > 0 {
		return unsupported("renaming %s or its columns while views read it (%s): MariaDB's and SQLite's views would keep the old name; drop and recreate the views",
			r.Relation.Relname, strings.Join(deps, ", "))
	}
	return nil
}

// lastName returns the last element of a qualified name list node.
func lastName(o *pg_query.Node) string {
	if l := o.GetList(); l != nil && len(l.Items) > 0 {
		return l.Items[len(l.Items)-1].GetString_().GetSval()
	}
	return o.GetString_().GetSval()
}
