package dialect

import (
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// json, jsonb and bytea on DuckDB replicas. DuckDB keeps a json or jsonb
// value as text (varchar), the text SQLite keeps: a json value as
// written, a jsonb value in jsonb's output form (CanonicalJSONB), which
// DuckDB receives written so for every string constant cast to jsonb or
// stored into a jsonb column (parameters are made canonical before any
// replica sees them: sqlan). A bytea constant is written as the bytes
// PostgreSQL reads in it (DuckDB reads '\xdeadbeef' as a byte \xde and
// six letters). The json operators call the SQLite driver's functions,
// which the DuckDB driver registers too (driver/sqlite's
// SharedFunctions): one implementation answers for both, given the same
// arguments as the SQL writer gives SQLite's (jsonOp, jsonbCompare,
// jsonbOrder). What depends on the operands' types takes them from the
// SQL writer's typing of the statement (operandTypes).

// note records, when w.operandTypes is set, the types of the operands of the
// function call or operator at loc.
func (w *writer) note(loc int32, operands ...*pg_query.Node) {
	if w.operandTypes == nil || loc < 0 {
		return
	}
	types := make([]string, len(operands))
	for i, o := range operands {
		if o != nil && o.GetList() == nil {
			types[i] = w.typeOf(o)
		}
		// An operator the writer writes as a whole without its own
		// note (extract(epoch FROM a - b)): its operands' types too.
		if e := o.GetAExpr(); e != nil && e.Location >= 0 && w.operandTypes[e.Location] == nil && e.Lexpr != nil && e.Rexpr != nil &&
			e.Lexpr.GetList() == nil && e.Rexpr.GetList() == nil {
			w.operandTypes[e.Location] = []string{w.typeOf(e.Lexpr), w.typeOf(e.Rexpr)}
		}
	}
	w.operandTypes[loc] = types
}

// operandTypes returns the PostgreSQL types of the operands of the
// function call or operator at loc in the statement, as the SQL writer
// for SQLite types them ("" where it does not know). The writer runs
// once per statement, on the first call: only statements that need
// types pay for it. Its refusals were given by CheckDuckDB already.
func (d *duck) operandTypes(loc int32) []string {
	if d.types == nil {
		d.types = map[int32][]string{}
		if d.orig != nil && loc >= 0 {
			_, _ = write(&writer{d: driver.SQLite, schema: d.schema, duck: true, operandTypes: d.types}, d.orig)
		}
	}
	return d.types[loc]
}

func (d *duck) operandType(loc int32, i int) string {
	if t := d.operandTypes(loc); i < len(t) {
		return t[i]
	}
	return ""
}

// bytesFunction is DuckDB's function of hex digits to their bytes
// (no PostgreSQL function: bytesConstant writes it).
const bytesFunction = "unhex"

// mathFunctionPrefix is driver/sqlite's MathFunctionPrefix.
const mathFunctionPrefix = "shepherd_math_"

// valueCast rewrites a cast of a string constant to jsonb (its
// canonical text) or bytea (its bytes); false when n is left to cast.
func (d *duck) valueCast(n *pg_query.Node, tc *pg_query.TypeCast) bool {
	s, ok := strConst(tc.Arg)
	if !ok {
		return false
	}
	switch name := castTypeName(tc); name {
	case "jsonb":
		tc.Arg = pg_query.MakeAConstStrNode(d.canonicalJSONB(s), -1)
	case "bytea":
		n.Node = d.bytesConstant(s).Node
		return true
	}
	return false
}

func castTypeName(tc *pg_query.TypeCast) string {
	if tc.TypeName == nil || len(tc.TypeName.Names) == 0 || len(tc.TypeName.ArrayBounds) > 0 {
		return ""
	}
	return tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_().GetSval()
}

func (d *duck) canonicalJSONB(s string) string {
	v, err := CanonicalJSONB(s)
	if err != nil {
		// The SQL writer gave PostgreSQL's error before.
		d.refuse("the jsonb constant %q", s)
	}
	return v
}

// bytesConstant is the bytes PostgreSQL reads in s, as DuckDB's
// unhex() of their hex digits.
func (d *duck) bytesConstant(s string) *pg_query.Node {
	raw, ok := answer.ParseBytea(s)
	if !ok {
		d.refuse("the bytea constant %q", s)
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 2*len(raw))
	for i := 0; i < len(raw); i++ {
		b = append(b, hex[raw[i]>>4], hex[raw[i]&15])
	}
	return duckCall(bytesFunction, pg_query.MakeAConstStrNode(string(b), -1))
}

// storedConstants rewrites each string constant an INSERT ... VALUES, an
// UPDATE or an ON CONFLICT ... DO UPDATE stores into a jsonb column (its
// canonical text) or a bytea column (its bytes), also as an item of an
// INSERT's SELECT; DuckDB would store the text as written, or read its
// backslashes otherwise.
func (d *duck) storedConstants(n *pg_query.Node) {
	store := func(v *pg_query.Node, t string) {
		if tc := v.GetTypeCast(); tc != nil && t == "jsonb" {
			// '...'::json stored as jsonb: PostgreSQL reads the text as
			// jsonb (the SQL writer's jsonbStored).
			if s, ok := strConst(tc.Arg); ok {
				tc.Arg = pg_query.MakeAConstStrNode(d.canonicalJSONB(s), -1)
			}
			return
		}
		s, ok := strConst(v)
		if !ok {
			return
		}
		switch t {
		case "jsonb":
			v.Node = pg_query.MakeAConstStrNode(d.canonicalJSONB(s), -1).Node
		case "bytea":
			v.Node = d.bytesConstant(s).Node
		}
	}
	typeOf := func(table, col string) string {
		if t := d.schema.Table(table); t != nil {
			if c := t.Column(col); c != nil {
				return c.Type
			}
		}
		return ""
	}
	sets := func(table string, targets []*pg_query.Node) {
		for _, t := range targets {
			if rt := t.GetResTarget(); rt != nil && len(rt.Indirection) == 0 {
				store(rt.Val, typeOf(table, rt.Name))
			}
		}
	}
	if u := n.GetUpdateStmt(); u != nil {
		sets(u.Relation.GetRelname(), u.TargetList)
		return
	}
	ins := n.GetInsertStmt()
	if ins == nil || d.schema.Table(ins.Relation.GetRelname()) == nil {
		return
	}
	table := d.schema.Table(ins.Relation.GetRelname())
	if oc := ins.OnConflictClause; oc != nil {
		sets(table.Name, oc.TargetList)
	}
	var types []string
	if len(ins.Cols) > 0 {
		for _, c := range ins.Cols {
			types = append(types, typeOf(table.Name, c.GetResTarget().GetName()))
		}
	} else {
		for _, c := range table.Columns {
			types = append(types, c.Type)
		}
	}
	special := false
	for _, t := range types {
		special = special || t == "jsonb" || t == "bytea"
	}
	if !special {
		return
	}
	var selects func(sel *pg_query.SelectStmt)
	selects = func(sel *pg_query.SelectStmt) {
		switch {
		case sel == nil:
		case sel.Op != pg_query.SetOperation_SETOP_NONE:
			selects(sel.Larg)
			selects(sel.Rarg)
		case len(sel.ValuesLists) > 0:
			for _, r := range sel.ValuesLists {
				for i, v := range r.GetList().GetItems() {
					if i < len(types) {
						store(v, types[i])
					}
				}
			}
		default:
			for i, t := range sel.TargetList {
				if rt := t.GetResTarget(); rt != nil && i < len(types) {
					store(rt.Val, types[i])
				}
			}
		}
	}
	selects(ins.SelectStmt.GetSelectStmt())
}

// funcOp rewrites an operator on json or jsonb values into a call of
// the function the SQL writer calls on SQLite; false when op is none.
func (d *duck) funcOp(n *pg_query.Node, e *pg_query.A_Expr, op string) bool {
	if isJSONOp(op) {
		d.jsonOp(n, e, op)
		return true
	}
	switch op {
	case "~", "~*", "!~", "!~*":
		d.regexMatch(n, e, op)
		return true
	}
	if !duckComparisons[op] || !d.mayBeJSON(e.Lexpr) && !d.mayBeJSON(e.Rexpr) {
		return false
	}
	lt, rt := d.operandType(e.Location, 0), d.operandType(e.Location, 1)
	if lt != "jsonb" && rt != "jsonb" {
		if isJSON(lt) || isJSON(rt) {
			d.refuse("operator %s on json values", op)
		}
		return false
	}
	n.Node = d.jsonbCompare(op, e.Lexpr, e.Rexpr, lt, rt).Node
	return true
}

// mayBeJSON reports whether n may be of type json or jsonb: a cast to
// them, a json operator, or a column of that name in a table of json or
// jsonb type. Only then are the statement's types worked out.
func (d *duck) mayBeJSON(n *pg_query.Node) bool {
	switch {
	case n == nil:
		return false
	case n.GetTypeCast() != nil:
		t := castTypeName(n.GetTypeCast())
		return isJSON(t) || t == "varchar" // jsonb, already written as varchar
	case n.GetAExpr() != nil:
		return isJSONOp(opName(n.GetAExpr().Name))
	case n.GetFuncCall() != nil:
		return strings.HasPrefix(opName(n.GetFuncCall().Funcname), "shepherd_json")
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		name := f[len(f)-1].GetString_().GetSval()
		if d.schema == nil {
			return false
		}
		for _, t := range d.schema.Tables {
			if c := t.Column(name); c != nil && isJSON(c.Type) {
				return true
			}
		}
	}
	return false
}

// jsonOp is jsonOp of the SQL writer (json.go), for DuckDB.
func (d *duck) jsonOp(n *pg_query.Node, e *pg_query.A_Expr, op string) {
	l, r := e.Lexpr, e.Rexpr
	lt, rt := d.operandType(e.Location, 0), d.operandType(e.Location, 1)
	if op == "<@" {
		op, l, r, lt, rt = "@>", r, l, rt, lt
	}
	if !isJSON(lt) {
		d.refuse("operator %s on a left operand that is not json or jsonb", op)
	}
	mode := 0
	if lt == "jsonb" {
		mode |= jsonB
	}
	if op == "->>" || op == "#>>" {
		mode |= jsonAsText
	}
	switch op {
	case "->", "->>":
		if isInt(rt) {
			mode |= jsonIndex
		} else if rt != "" && !isTextual(rt) {
			d.refuse("operator %s with a %s operand", op, rt)
		}
		n.Node = duckCall(jsonGetFunction, l, r, pg_query.MakeAConstIntNode(int64(mode), -1)).Node
	case "#>", "#>>":
		path, ok := textArrayConst(r)
		if !ok {
			d.refuse("operator %s with a path that is not a constant like '{a,b}'", op)
		}
		n.Node = duckCall(jsonPathFunction, l, pg_query.MakeAConstStrNode(path.text, -1),
			pg_query.MakeAConstIntNode(int64(mode), -1)).Node
	case "@>":
		if lt != "jsonb" || rt != "" && rt != "jsonb" {
			d.refuse("operator @> on %s and %s", lt, orUnknown(rt))
		}
		n.Node = duckCall(jsonContainsFunction, l, r).Node
	case "?":
		if lt != "jsonb" {
			d.refuse("operator ? on %s", lt)
		}
		n.Node = duckCall(jsonExistsFunction, l, r).Node
	default:
		d.refuse("operator %s", op)
	}
}

// jsonbCompare is the SQL writer's jsonbCompare and jsonbOrder (json.go)
// for DuckDB: = and <> by jsonb equality, the orderings against a
// constant by jsonb's order.
func (d *duck) jsonbCompare(op string, l, r *pg_query.Node, lt, rt string) *pg_query.Node {
	if op == "=" || op == "<>" {
		if lt != "jsonb" {
			l, r, rt = r, l, lt
		}
		_, constant := strConst(castArg(r))
		if !constant && rt != "jsonb" {
			d.refuse("operator %s on jsonb and %s", op, orUnknown(rt))
		}
		eq := duckCall(jsonEqualFunction, l, r)
		if op == "<>" {
			return pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{eq}, -1)
		}
		return eq
	}
	flip := map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<="}
	_, ok := strConst(castArg(r))
	if !ok {
		if _, ok = strConst(castArg(l)); ok {
			op, l, r, lt = flip[op], r, l, rt
		}
	}
	if !ok || lt != "jsonb" {
		d.refuse("operator %s on jsonb other than with a constant", op)
	}
	return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)},
		duckCall(jsonCompareFunction, l, r), pg_query.MakeAConstIntNode(0, -1), -1)
}

// jsonbIn writes x IN (a, b) of a jsonb x as x = a OR x = b by jsonb
// equality (NOT IN: NOT of that), as the SQL writer does (in); false
// when x is not jsonb.
func (d *duck) jsonbIn(n *pg_query.Node, e *pg_query.A_Expr, op string) bool {
	if !d.mayBeJSON(e.Lexpr) {
		return false
	}
	switch d.operandType(e.Location, 0) {
	case "jsonb":
	case "json":
		d.refuse("IN on json values")
	default:
		return false
	}
	var parts []*pg_query.Node
	for _, item := range e.Rexpr.GetList().GetItems() {
		parts = append(parts, duckCall(jsonEqualFunction, e.Lexpr, item))
	}
	if len(parts) == 0 {
		d.refuse("IN an empty list")
	}
	out := parts[0]
	if len(parts) > 1 {
		out = pg_query.MakeBoolExprNode(pg_query.BoolExprType_OR_EXPR, parts, -1)
	}
	if op == "<>" {
		out = pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{out}, -1)
	}
	n.Node = out.Node
	return true
}

// sharedFuncs are PostgreSQL's functions DuckDB replicas compute with
// the SQLite driver's implementation (liteStringPrefix + the name), with
// the argument types the SQL writer lets through to SQLite's; the value
// is the number of arguments.
var sharedFuncs = map[string]int{"initcap": 1}

// sharedCall rewrites a call of a function DuckDB lacks or computes
// otherwise: decode(constant, 'hex') is the bytes, sharedFuncs call the
// SQLite driver's functions. false when f is none of them.
func (d *duck) sharedCall(n *pg_query.Node, f *pg_query.FuncCall, name string) bool {
	if opName(f.Funcname) == bytesFunction {
		return true // written by bytesConstant
	}
	switch name {
	case "length", "octet_length":
		// DuckDB's length() takes no BLOB, and its octet_length() no
		// text: the bytes of text are strlen()'s. PostgreSQL's
		// octet_length of a character(n) counts its padding, which
		// DuckDB does not keep.
		if len(f.Args) != 1 || name == "length" && !d.mayBeBytes(f.Args[0]) {
			return false
		}
		switch t := d.operandType(f.Location, 0); {
		case t == "bytea":
			f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("octet_length")}
			return true
		case name == "length":
			return false
		case t == "text" || t == "varchar":
			f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("strlen")}
			return true
		case t == "bpchar":
			// Padded to n characters, as PostgreSQL keeps it: the bytes
			// of the text without trailing spaces, and a byte for each
			// character of padding.
			width := d.charWidth(f.Args[0])
			if width < 0 {
				d.refuse("octet_length() of a character(n) value other than a column")
			}
			trimmed := func() *pg_query.Node {
				return duckCall("rtrim", proto.Clone(f.Args[0]).(*pg_query.Node), pg_query.MakeAConstStrNode(" ", -1))
			}
			plus := func(op string, l, r *pg_query.Node) *pg_query.Node {
				return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)}, l, r, -1)
			}
			n.Node = plus("-", plus("+", duckCall("strlen", trimmed()), pg_query.MakeAConstIntNode(int64(width), -1)),
				duckCall("length", trimmed())).Node
			return true
		default:
			d.refuse("octet_length() of %s", valueOf(t))
		}
	case "decode":
		if len(f.Args) != 2 {
			d.refuse("decode() of %d arguments", len(f.Args))
		}
		s, ok1 := strConst(f.Args[0])
		format, ok2 := strConst(f.Args[1])
		if !ok1 || !ok2 || format != "hex" {
			d.refuse("decode() other than of a constant in hex")
		}
		n.Node = d.bytesConstant(`\x` + s).Node
		return true
	}
	if d.rounding(n, f, name) || d.temporalCall(n, f, name) {
		return true
	}
	switch name {
	case "regexp_replace":
		for _, i := range []int{0, 2} {
			if t := d.operandType(f.Location, i); !isTextArg(t) {
				d.refuse("regexp_replace() of a %s value", t)
			}
		}
		d.regexpReplace(f)
		return true
	case "lpad", "rpad":
		// The SQLite driver's: DuckDB fails an empty fill and pads
		// otherwise for a negative length.
		if len(f.Args) == 2 {
			f.Args = append(f.Args, pg_query.MakeAConstStrNode(" ", -1))
		}
		if len(f.Args) != 3 {
			d.refuse("%s() of %d arguments", name, len(f.Args))
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(liteStringPrefix + name)}
		return true
	case "substr", "substring":
		d.substring(f, name)
		return true
	case "encode":
		if len(f.Args) != 2 || d.operandType(f.Location, 0) != "bytea" {
			d.refuse("encode() other than of a bytea value")
		}
		if format, ok := strConst(f.Args[1]); !ok || format != "hex" {
			d.refuse("encode() other than in hex")
		}
		// DuckDB's hex() writes capitals.
		n.Node = duckCall("lower", duckCall("hex", f.Args[0])).Node
		return true
	case "sqrt", "exp", "ln", "log", "log10", "power", "pow":
		// SQLite's math functions, as the SQL writer writes them where
		// PostgreSQL's double precision function is called (pgfunc.
		// MathAlike; of numeric values it refuses them): computed by
		// the same code as on SQLite.
		if name == "log" && len(f.Args) != 1 || (name == "power" || name == "pow") && len(f.Args) != 2 ||
			name != "log" && name != "power" && name != "pow" && len(f.Args) != 1 {
			d.refuse("%s() of %d arguments", name, len(f.Args))
		}
		for i := range f.Args {
			if t := d.operandType(f.Location, i); t != "" && !isInt(t) && t != "float8" {
				d.refuse("%s() of %s", name, valueOf(t))
			}
		}
		if name == "pow" {
			name = "power"
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(mathFunctionPrefix + name)}
		return true
	case "sign":
		// DuckDB's sign() is a small integer; PostgreSQL's has the
		// type of its argument, a float8 for an integer.
		if len(f.Args) != 1 {
			d.refuse("sign() of %d arguments", len(f.Args))
		}
		to := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("float8")}, Typemod: -1}
		switch t := d.operandType(f.Location, 0); {
		case isInt(t) || t == "float8":
		case t == "numeric":
			to = &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("numeric")}, Typemod: -1,
				Typmods: []*pg_query.Node{pg_query.MakeAConstIntNode(1, -1), pg_query.MakeAConstIntNode(0, -1)}}
		default:
			d.refuse("sign() of %s", valueOf(t))
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("sign")}
		n.Node = (&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: f}}, TypeName: to}}}).Node
		return true
	case "format":
		// shepherd_format() of the same arguments, of the types the
		// SQL writer lets through (text, integers); a NULL format is
		// NULL.
		if len(f.Args) == 0 {
			d.refuse("format() of no arguments")
		}
		if _, ok := strConst(f.Args[0]); !ok {
			d.refuse("format() with a format that is not a constant")
		}
		for i := 1; i < len(f.Args); i++ {
			switch t := d.operandType(f.Location, i); t {
			case "", "text", "varchar", "int2", "int4", "int8":
			default:
				d.refuse("format() of a %s value", t)
			}
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(liteStringPrefix + "format")}
		f.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
		return true
	}
	args, ok := sharedFuncs[name]
	if !ok {
		return false
	}
	if len(f.Args) != args || f.AggFilter != nil || f.Over != nil || len(f.AggOrder) > 0 || f.AggDistinct {
		d.refuse("%s() of %d arguments", name, len(f.Args))
	}
	for i := range f.Args {
		if t := d.operandType(f.Location, i); t != "" && !isTextual(t) {
			d.refuse("%s() of a %s value", name, t)
		}
	}
	f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(liteStringPrefix + name)}
	f.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	return true
}

// castArg is the argument of a cast, or n.
func castArg(n *pg_query.Node) *pg_query.Node {
	if tc := n.GetTypeCast(); tc != nil {
		return tc.Arg
	}
	return n
}

// rounding writes round(), ceil(), floor() and trunc() of one argument
// by its type, as PostgreSQL picks the overload: of an integer they are
// the double precision function (the value as a float8: an integer
// rounds to itself), of a float8 round() rounds half to even (DuckDB's
// round_even; its round() rounds half away from zero, as numeric's
// does). false when f is none of them or has another number of
// arguments.
func (d *duck) rounding(n *pg_query.Node, f *pg_query.FuncCall, name string) bool {
	switch name {
	case "round", "ceil", "ceiling", "floor", "trunc":
	default:
		return false
	}
	if len(f.Args) != 1 || f.Over != nil || f.AggFilter != nil {
		return false
	}
	switch t := d.operandType(f.Location, 0); {
	case isInt(t):
		n.Node = (&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: f.Args[0], TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("float8")}, Typemod: -1},
		}}}).Node
	case t == "float8" && name == "round":
		n.Node = duckCall("round_even", f.Args[0], pg_query.MakeAConstIntNode(0, -1)).Node
	case t == "float8" || t == "numeric":
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
	default:
		d.refuse("%s() of %s", name, valueOf(t))
	}
	return true
}

// regex is the SQL writer's translation of a constant pattern (regex,
// strings.go), for the SQLite driver's regular expression functions.
func (d *duck) regex(what string, pattern *pg_query.Node, icase bool) pgRegex {
	p, ok := strConst(castArg(pattern))
	if !ok {
		d.refuse("%s with a pattern that is not a constant", what)
	}
	re, err := translateRegex(p, icase)
	if err != nil {
		d.refuse("%s: %v", what, err)
	}
	return re
}

// regexMatch writes ~, ~*, !~ and !~* as the SQL writer does for SQLite
// (regexMatch): the SQLite driver's regexp_match of the translated
// pattern.
func (d *duck) regexMatch(n *pg_query.Node, e *pg_query.A_Expr, op string) {
	if t := d.operandType(e.Location, 0); !isTextArg(t) {
		d.refuse("%s on a %s value", op, t)
	}
	re := d.regex("operator "+op, e.Rexpr, strings.HasSuffix(op, "*"))
	call := duckCall(liteStringPrefix+"regexp_match", e.Lexpr, pg_query.MakeAConstStrNode(re.pattern, -1))
	if strings.HasPrefix(op, "!") {
		call = pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{call}, -1)
	}
	n.Node = call.Node
}

// regexpReplace writes regexp_replace() as the SQL writer does for
// SQLite (regexpReplace).
func (d *duck) regexpReplace(f *pg_query.FuncCall) {
	a := f.Args
	if len(a) != 3 && len(a) != 4 {
		d.refuse("regexp_replace() of %d arguments", len(a))
	}
	global, icase := false, false
	if len(a) == 4 {
		flags, ok := strConst(a[3])
		if !ok {
			d.refuse("regexp_replace() with flags that are not a constant")
		}
		for _, c := range flags {
			switch c {
			case 'g':
				global = true
			case 'i':
				icase = true
			case 'c':
				icase = false
			default:
				d.refuse("regexp_replace() with the flag %c", c)
			}
		}
	}
	re := d.regex("regexp_replace()", a[1], icase)
	repl, constRepl := strConst(a[2])
	if re.groups > 0 && (!constRepl || hasGroupRef(repl)) && !re.uniqueGroups {
		d.refuse("regexp_replace() with back-references to a pattern with alternation, repeated groups or more than one variable-length part")
	}
	g := int64(0)
	if global {
		g = 1
	}
	f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(liteStringPrefix + "regexp_replace")}
	f.Args = []*pg_query.Node{a[0], pg_query.MakeAConstStrNode(re.pattern, -1), a[2], pg_query.MakeAConstIntNode(g, -1)}
}

// temporalCall rewrites the date and time functions DuckDB computes
// otherwise than PostgreSQL, as the SQL writer writes them for SQLite
// (temporalFunc, extract, dateTrunc), whose checks of the arguments
// CheckDuckDB made already: date_part() (a float8 in PostgreSQL) and
// extract() of the fields with a fraction, age() and to_char() are the
// SQLite driver's functions; make_date() of constants is the date;
// AT TIME ZONE 'UTC' and date_trunc() are DuckDB's, which mean
// PostgreSQL's in a UTC session for the units the writer lets through.
// false when f is none of them.
func (d *duck) temporalCall(n *pg_query.Node, f *pg_query.FuncCall, name string) bool {
	a := f.Args
	typeOf := func(i int) string { return d.operandType(f.Location, i) }
	switch {
	case (name == "date_part" || name == "extract") && len(a) == 2:
		field, ok := strConst(a[0])
		if !ok {
			d.refuse("%s() of a field that is not a constant", name)
		}
		field = strings.ToLower(field)
		switch field {
		case "year", "month", "day", "hour", "minute", "quarter", "dow", "doy", "isodow", "week":
			if name == "extract" {
				return false // DuckDB's own (see funcCall)
			}
		case "second", "epoch", "milliseconds", "microseconds", "isoyear":
		default:
			d.refuse("%s(%s from ...)", name, field)
		}
		if e := a[1].GetAExpr(); field == "epoch" && typeOf(1) == "interval" && e != nil && opName(e.Name) == "-" && e.Lexpr != nil {
			// The SQL writer's epochOfDifference.
			lt, rt := d.operandType(e.Location, 0), d.operandType(e.Location, 1)
			if lt != rt || lt != "timestamp" && lt != "timestamptz" {
				d.refuse("extract(epoch ...) of an interval other than timestamp - timestamp")
			}
			n.Node = duckCall(epochDiffFunction, e.Lexpr, e.Rexpr).Node
			return true
		}
		if t := typeOf(1); !isTime(t) {
			d.refuse("%s(%s from ...) of %s", name, field, valueOf(t))
		}
		n.Node = duckCall(datePartFunction, pg_query.MakeAConstStrNode(field, -1), a[1]).Node
	case name == "age" && len(a) == 2:
		if typeOf(0) != "timestamp" && typeOf(0) != "timestamptz" || typeOf(1) != "timestamp" && typeOf(1) != "timestamptz" {
			d.refuse("age() of values that are not both timestamps")
		}
		n.Node = duckCall(ageFunction, a[0], a[1]).Node
	case name == "to_char" && len(a) == 2 && isTime(typeOf(0)):
		format, ok := strConst(a[1])
		if !ok {
			d.refuse("to_char() with a format that is not a constant")
		}
		if _, ok := answer.ParseToCharFormat(format); !ok {
			d.refuse("to_char() format %q", format)
		}
		n.Node = duckCall(toCharFunction, a[0], a[1]).Node
	case name == "make_date" && len(a) == 3:
		y, ok1 := intConst(a[0])
		m, ok2 := intConst(a[1])
		day, ok3 := intConst(a[2])
		if !ok1 || !ok2 || !ok3 || y < 1 || y > 9999 || m < 1 || m > 12 || day < 1 || day > 31 {
			d.refuse("make_date() of values that are not constants of years 1 to 9999")
		}
		t := time.Date(int(y), time.Month(m), int(day), 0, 0, 0, 0, time.UTC)
		if t.Day() != int(day) {
			d.refuse("make_date() of a day the month does not have")
		}
		n.Node = (&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      pg_query.MakeAConstStrNode(t.Format("2006-01-02"), -1),
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("date")}, Typemod: -1},
		}}}).Node
	case name == "timezone" && len(a) == 2:
		zone, ok := strConst(a[0])
		if !ok || !isUTCZone(zone) {
			d.refuse("AT TIME ZONE other than 'UTC'")
		}
		if t := typeOf(1); t != "timestamp" && t != "timestamptz" {
			d.refuse("AT TIME ZONE on %s", valueOf(t))
		}
		a[0] = pg_query.MakeAConstStrNode("UTC", -1)
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("timezone")}
	case name == "date_trunc" && len(a) == 2:
		unit, ok := strConst(a[0])
		if !ok {
			d.refuse("date_trunc() of a unit that is not a constant")
		}
		switch strings.ToLower(unit) {
		case "year", "quarter", "month", "week", "day", "hour", "minute", "second":
		default:
			d.refuse("date_trunc('%s', ...)", unit)
		}
		switch typeOf(1) {
		case "timestamp", "timestamptz":
		case "date":
			// PostgreSQL truncates the date as a timestamptz.
			a[1] = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
				Arg: a[1], TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("timestamptz")}, Typemod: -1},
			}}}
		default:
			d.refuse("date_trunc() of %s", valueOf(typeOf(1)))
		}
		a[0] = pg_query.MakeAConstStrNode(strings.ToLower(unit), -1)
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("date_trunc")}
	default:
		return false
	}
	return true
}

// valueOf names a value of type t in a refusal.
func valueOf(t string) string {
	if t == "" {
		return "a value of unknown type"
	}
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t + " value"
	}
	return "a " + t + " value"
}

// charWidth is n of the character(n) column n names, when every table
// of the schema that has a character column of that name agrees on n;
// -1 otherwise.
func (d *duck) charWidth(n *pg_query.Node) int {
	cr := n.GetColumnRef()
	if cr == nil || d.schema == nil {
		return -1
	}
	name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	width := -1
	for _, t := range d.schema.Tables {
		c := t.Column(name)
		if c == nil || c.Type != "bpchar" {
			continue
		}
		w := 1 // character without a length is character(1)
		if len(c.Mods) == 1 {
			w = int(c.Mods[0])
		}
		if width >= 0 && w != width {
			return -1
		}
		width = w
	}
	return width
}

// substring writes substr() and substring() as PostgreSQL counts:
// characters from the position given, which may be 0 or less (DuckDB
// counts a negative one from the end), for a number of them that must
// not be negative; both constants. substring(s FROM pattern) is the
// SQLite driver's regexp_substr (or regexp_group of a pattern with a
// group), as the SQL writer writes it (regexpSubstr).
func (d *duck) substring(f *pg_query.FuncCall, name string) {
	a := f.Args
	if t := d.operandType(f.Location, 0); !isTextArg(t) {
		d.refuse("%s() of %s", name, valueOf(t))
	}
	f.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	if _, ok := strConst(castArg(a[len(a)-1])); ok && len(a) == 2 && name == "substring" {
		re := d.regex("substring(... FROM pattern)", a[1], false)
		fn := "regexp_substr"
		if re.groups > 0 {
			if !re.uniqueGroups {
				d.refuse("substring(... FROM pattern) with a group, in a pattern with alternation, repeated groups or more than one variable-length part")
			}
			fn = "regexp_group"
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(liteStringPrefix + fn)}
		f.Args = []*pg_query.Node{a[0], pg_query.MakeAConstStrNode(re.pattern, -1)}
		return
	}
	if len(a) != 2 && len(a) != 3 {
		d.refuse("%s() of %d arguments", name, len(a))
	}
	from, ok := intConst(a[1])
	if !ok {
		d.refuse("%s() from a position that is not an integer constant", name)
	}
	start := max(from, 1)
	f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("substring")}
	f.Args = []*pg_query.Node{a[0], pg_query.MakeAConstIntNode(start, -1)}
	if len(a) == 3 {
		count, ok := intConst(a[2])
		if !ok || count < 0 {
			d.refuse("%s() of a length that is not a constant of 0 or more", name)
		}
		f.Args = append(f.Args, pg_query.MakeAConstIntNode(max(from+count-start, 0), -1))
	}
}

// mayBeBytes reports whether n may be a bytea value: not a column of no
// bytea column's name, nor a string constant (only then is length()'s
// argument typed).
func (d *duck) mayBeBytes(n *pg_query.Node) bool {
	if _, ok := strConst(n); ok {
		return false
	}
	cr := n.GetColumnRef()
	if cr == nil {
		return true
	}
	name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	if d.schema == nil {
		return false
	}
	for _, t := range d.schema.Tables {
		if c := t.Column(name); c != nil && c.Type == "bytea" {
			return true
		}
	}
	return false
}
