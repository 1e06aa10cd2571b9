package pgnumeric

import (
	"math"
	"math/big"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// A SELECT without FROM, WHERE, GROUP BY or HAVING answers exactly one
// row, and its aggregates aggregate exactly one value each: count(*) is
// 1, avg(x) is x / 1 as numeric_div writes it (23.0000000000000000),
// sum, min and max are x. A result column built of constants, such
// aggregates, signs, + - * / %, casts, comparisons, AND/OR/NOT, IS NULL,
// BETWEEN, IN lists, CASE, COALESCE and NULLIF then has one value,
// which OneRow computes as PostgreSQL does, numeric's display scale
// included, where the engines would give avg()'s and numeric
// division's digits otherwise.
//
// OneRow evaluates every operand, the arms of CASE and COALESCE
// included, before choosing: an expression any part of which PostgreSQL
// could fail on (an overflow, a division by zero, a cast out of range)
// is not evaluated, so no value is given where PostgreSQL would fail,
// whichever arm it takes. Anything else (floats but NULL ones, text,
// functions, subqueries, columns, a FILTER) is not evaluated either.

// Row is the value of an expression OneRow evaluates.
type Row struct {
	// Type is PostgreSQL's type: int4, int8, numeric, bool, float4 or
	// float8 (NULL only), or unknown (an untyped NULL).
	Type string
	Null bool
	// Num is the number (int4, int8, numeric), Bool the boolean.
	Num  Decimal
	Bool bool
	// Exact reports whether the expression holds an avg() or a
	// numeric division, whose digits only PostgreSQL writes.
	Exact bool
}

// OneRow returns PostgreSQL's value of n, a result column of a SELECT
// answering one row as above; ok is false where it cannot tell it.
func OneRow(n *pg_query.Node) (Row, bool) {
	e := &rowEval{}
	v, ok := e.eval(n, 0)
	v.Exact = e.exact
	return v, ok
}

// NoRows is OneRow for a result column of a SELECT whose FROM and WHERE
// leave no row to aggregate (WHERE NULL IS NOT NULL), with aggregates
// and no GROUP BY: it answers one row, where count is 0 and sum, avg,
// min and max are NULL of their types. An aggregate's argument is not
// computed there, but it is typed: a constant by OneRow (which also
// tells that PostgreSQL, folding it when planning, does not fail on
// it), a column under signs by typeOf.
func NoRows(n *pg_query.Node, typeOf func(*pg_query.Node) string) (Row, bool) {
	e := &rowEval{empty: true, typeOf: typeOf}
	v, ok := e.eval(n, 0)
	v.Exact = e.exact
	return v, ok
}

// Condition returns PostgreSQL's value of n, a WHERE condition without
// aggregates (ok is false for one with them, and for any that is not
// a boolean or NULL OneRow tells).
func Condition(n *pg_query.Node) (Row, bool) {
	e := &rowEval{noAgg: true}
	v, ok := e.eval(n, 0)
	if !ok || v.Type != "bool" && !(v.Type == "unknown" && v.Null) {
		return Row{}, false
	}
	return v, true
}

type rowEval struct {
	exact bool // an avg() or a numeric division was evaluated
	inAgg bool // inside an aggregate's argument
	noAgg bool // no aggregate allowed (a WHERE condition)
	// empty is set where the aggregates aggregate no row; typeOf
	// types their arguments then (see NoRows).
	empty  bool
	typeOf func(*pg_query.Node) string
}

func null(t string) Row { return Row{Type: t, Null: true} }

func intRow(t string, v *big.Int) (Row, bool) {
	d := fromSigned(v, 0)
	if !fitsType(t, v) {
		return Row{}, false // PostgreSQL fails: out of range
	}
	return Row{Type: t, Num: d}, true
}

// fitsType reports whether v is in the range of the integer type t.
func fitsType(t string, v *big.Int) bool {
	switch t {
	case "int4":
		return v.IsInt64() && v.Int64() >= math.MinInt32 && v.Int64() <= math.MaxInt32
	case "int8":
		return v.IsInt64()
	}
	return true
}

func numericOrInt(t string) bool { return t == "int4" || t == "int8" || t == "numeric" }

// common is PostgreSQL's common type of number types (select_common_type:
// the widest of int4, int8 and numeric; an untyped NULL takes the
// other's), "" for anything else.
func common(types ...string) string {
	out := "unknown"
	for _, t := range types {
		switch {
		case t == "unknown":
		case !numericOrInt(t):
			return ""
		case out == "unknown" || t == "numeric" || t == "int8" && out == "int4":
			out = t
		}
	}
	return out
}

// coerce converts v, a number or NULL, to the number type t.
func coerce(v Row, t string) Row {
	v.Type = t
	return v
}

func (e *rowEval) eval(n *pg_query.Node, depth int) (Row, bool) {
	if n == nil || depth > maxFoldDepth {
		return Row{}, false
	}
	depth++
	switch {
	case n.GetAConst() != nil:
		return constRow(n.GetAConst())
	case n.GetTypeCast() != nil:
		return e.cast(n.GetTypeCast(), depth)
	case n.GetAExpr() != nil:
		return e.aExpr(n.GetAExpr(), depth)
	case n.GetBoolExpr() != nil:
		return e.boolExpr(n.GetBoolExpr(), depth)
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		v, ok := e.eval(nt.Arg, depth)
		if !ok {
			return Row{}, false
		}
		isNull := v.Null
		if nt.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			isNull = !isNull
		}
		return Row{Type: "bool", Bool: isNull}, true
	case n.GetCaseExpr() != nil:
		return e.caseExpr(n.GetCaseExpr(), depth)
	case n.GetCoalesceExpr() != nil:
		var vals []Row
		var types []string
		for _, a := range n.GetCoalesceExpr().Args {
			v, ok := e.eval(a, depth)
			if !ok {
				return Row{}, false
			}
			vals = append(vals, v)
			types = append(types, v.Type)
		}
		t := common(types...)
		if t == "" || t == "unknown" {
			return Row{}, false
		}
		for _, v := range vals {
			if !v.Null {
				return coerce(v, t), true
			}
		}
		return null(t), true
	case n.GetFuncCall() != nil:
		return e.aggregate(n.GetFuncCall(), depth)
	}
	return Row{}, false
}

// constRow is an integer, decimal, boolean or NULL constant's value.
func constRow(c *pg_query.A_Const) (Row, bool) {
	switch {
	case c.Isnull:
		return null("unknown"), true
	case c.GetIval() != nil:
		return Row{Type: "int4", Num: fromSigned(big.NewInt(int64(c.GetIval().Ival)), 0)}, true
	case c.GetBoolval() != nil:
		return Row{Type: "bool", Bool: c.GetBoolval().Boolval}, true
	case c.GetFval() != nil:
		f := c.GetFval().Fval
		if strings.ContainsAny(f, "eE") {
			return Row{}, false
		}
		d, ok := Parse(f)
		if !ok {
			return Row{}, false
		}
		if v := d.signed(); !strings.Contains(f, ".") && v.IsInt64() {
			// An integer beyond int4, or int4's minimum (the parser
			// negates the constant 2147483648): typed by its value.
			if fitsType("int4", v) {
				return Row{Type: "int4", Num: d}, true
			}
			return Row{Type: "int8", Num: d}, true
		}
		return Row{Type: "numeric", Num: d}, true
	case c.Val == nil:
		return Row{Type: "int4", Num: fromSigned(big.NewInt(0), 0)}, true
	}
	return Row{}, false
}

func (e *rowEval) cast(tc *pg_query.TypeCast, depth int) (Row, bool) {
	t, mods, _, ok := schema.TypeOf(tc.TypeName)
	if !ok || len(mods) > 0 {
		return Row{}, false
	}
	v, ok := e.eval(tc.Arg, depth)
	if !ok {
		return Row{}, false
	}
	if v.Null {
		switch t {
		case "int4", "int8", "numeric", "float4", "float8", "bool":
			if v.Type == "unknown" || v.Type == t || numericOrInt(v.Type) && numericOrInt(t) {
				return null(t), true
			}
		}
		return Row{}, false
	}
	if !numericOrInt(v.Type) {
		return Row{}, false
	}
	switch t {
	case "numeric":
		v.Type = t
		return v, true
	case "int4", "int8":
		// numeric to an integer rounds half away from zero.
		x := roundTo(v.Num, 0)
		return intRow(t, x.signed())
	}
	return Row{}, false
}

// roundTo is d rounded half away from zero to scale decimals (scale <=
// d.Scale), as numeric's round and its casts to integers do.
func roundTo(d Decimal, scale int) Decimal {
	if scale >= d.Scale {
		return d
	}
	div := pow10(d.Scale - scale)
	q, rem := new(big.Int).QuoRem(d.Digits, div, new(big.Int))
	if rem.Mul(rem, big.NewInt(2)).Cmp(div) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return Decimal{Neg: d.Neg && q.Sign() != 0, Digits: q, Scale: scale}
}

func (e *rowEval) aExpr(x *pg_query.A_Expr, depth int) (Row, bool) {
	switch x.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		op := schema.OpName(x.Name)
		if x.Lexpr == nil {
			v, ok := e.eval(x.Rexpr, depth)
			if !ok || op != "-" && op != "+" {
				return Row{}, false
			}
			if v.Null && (v.Type == "float4" || v.Type == "float8") {
				return v, true // a signed NULL float
			}
			if !numericOrInt(v.Type) {
				return Row{}, false
			}
			if v.Null || op == "+" {
				return v, true
			}
			if v.Type == "numeric" {
				v.Num.Neg = !v.Num.Neg && v.Num.Digits.Sign() != 0
				return v, true
			}
			return intRow(v.Type, new(big.Int).Neg(v.Num.signed()))
		}
		l, ok1 := e.eval(x.Lexpr, depth)
		r, ok2 := e.eval(x.Rexpr, depth)
		if !ok1 || !ok2 {
			return Row{}, false
		}
		switch op {
		case "+", "-", "*", "/", "%":
			return e.arith(op, l, r)
		case "=", "<>", "!=", "<", ">", "<=", ">=":
			return compare(op, l, r)
		}
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, ok1 := e.eval(x.Lexpr, depth)
		r, ok2 := e.eval(x.Rexpr, depth)
		if !ok1 || !ok2 {
			return Row{}, false
		}
		// The type of the implied l = r's left operand: integers keep
		// theirs (PostgreSQL has = for any two), else the common type.
		t := common(l.Type, r.Type)
		if t == "" || t == "unknown" {
			return Row{}, false
		}
		if l.Type != "unknown" && l.Type != "numeric" && r.Type != "numeric" {
			t = l.Type
		}
		eq, ok := compare("=", l, r)
		if !ok {
			return Row{}, false
		}
		if l.Null || !eq.Null && eq.Bool {
			return null(t), true
		}
		return coerce(l, t), true
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		v, ok := e.eval(x.Lexpr, depth)
		items := x.Rexpr.GetList().GetItems()
		if !ok || len(items) != 2 {
			return Row{}, false
		}
		lo, ok1 := e.eval(items[0], depth)
		hi, ok2 := e.eval(items[1], depth)
		if !ok1 || !ok2 {
			return Row{}, false
		}
		if x.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN {
			a, ok1 := compare(">=", v, lo)
			b, ok2 := compare("<=", v, hi)
			return and(a, b), ok1 && ok2
		}
		a, ok1 := compare("<", v, lo)
		b, ok2 := compare(">", v, hi)
		return or(a, b), ok1 && ok2
	case pg_query.A_Expr_Kind_AEXPR_IN:
		op := schema.OpName(x.Name)
		v, ok := e.eval(x.Lexpr, depth)
		if !ok || op != "=" && op != "<>" {
			return Row{}, false
		}
		out := Row{Type: "bool", Bool: op == "<>"}
		for _, item := range x.Rexpr.GetList().GetItems() {
			w, ok := e.eval(item, depth)
			if !ok {
				return Row{}, false
			}
			c, ok := compare(op, v, w)
			if !ok {
				return Row{}, false
			}
			if op == "=" {
				out = or(out, c)
			} else {
				out = and(out, c)
			}
		}
		return out, true
	}
	return Row{}, false
}

// arith is l op r as PostgreSQL computes it, in the operands' common
// type; ok is false where PostgreSQL fails (an overflow, a zero divisor)
// or for operands that are not numbers.
func (e *rowEval) arith(op string, l, r Row) (Row, bool) {
	t := common(l.Type, r.Type)
	if t == "" || t == "unknown" {
		return Row{}, false
	}
	if t == "numeric" && op == "%" {
		return Row{}, false
	}
	if t == "numeric" && op == "/" {
		e.exact = true
	}
	if l.Null || r.Null {
		return null(t), true
	}
	if t == "numeric" {
		v, ok := arith(op, value{d: l.Num, numeric: true}, value{d: r.Num, numeric: true})
		if !ok {
			return Row{}, false
		}
		return Row{Type: t, Num: v.d}, true
	}
	x, y := l.Num.signed(), r.Num.signed()
	var v *big.Int
	switch op {
	case "+":
		v = new(big.Int).Add(x, y)
	case "-":
		v = new(big.Int).Sub(x, y)
	case "*":
		v = new(big.Int).Mul(x, y)
	case "/", "%":
		if y.Sign() == 0 {
			return Row{}, false
		}
		if op == "/" {
			v = new(big.Int).Quo(x, y) // truncates toward zero
		} else {
			v = new(big.Int).Rem(x, y) // the dividend's sign
		}
	}
	return intRow(t, v)
}

// compare is l op r, a comparison of numbers (NULL if either is).
func compare(op string, l, r Row) (Row, bool) {
	t := common(l.Type, r.Type)
	if t == "" || t == "unknown" {
		return Row{}, false
	}
	if l.Null || r.Null {
		return null("bool"), true
	}
	scale := max(l.Num.Scale, r.Num.Scale)
	c := new(big.Int).Mul(l.Num.signed(), pow10(scale-l.Num.Scale)).Cmp(
		new(big.Int).Mul(r.Num.signed(), pow10(scale-r.Num.Scale)))
	var b bool
	switch op {
	case "=":
		b = c == 0
	case "<>", "!=":
		b = c != 0
	case "<":
		b = c < 0
	case ">":
		b = c > 0
	case "<=":
		b = c <= 0
	case ">=":
		b = c >= 0
	}
	return Row{Type: "bool", Bool: b}, true
}

// and and or are SQL's three-valued AND and OR of booleans.
func and(a, b Row) Row {
	switch {
	case !a.Null && !a.Bool || !b.Null && !b.Bool:
		return Row{Type: "bool"}
	case a.Null || b.Null:
		return null("bool")
	}
	return Row{Type: "bool", Bool: true}
}

func or(a, b Row) Row {
	switch {
	case !a.Null && a.Bool || !b.Null && b.Bool:
		return Row{Type: "bool", Bool: true}
	case a.Null || b.Null:
		return null("bool")
	}
	return Row{Type: "bool"}
}

func (e *rowEval) boolExpr(b *pg_query.BoolExpr, depth int) (Row, bool) {
	var vals []Row
	for _, a := range b.Args {
		v, ok := e.eval(a, depth)
		if !ok || v.Type != "bool" && !(v.Type == "unknown" && v.Null) {
			return Row{}, false
		}
		v.Type = "bool"
		vals = append(vals, v)
	}
	switch b.Boolop {
	case pg_query.BoolExprType_NOT_EXPR:
		if len(vals) != 1 {
			return Row{}, false
		}
		v := vals[0]
		v.Bool = !v.Bool
		return v, true
	case pg_query.BoolExprType_AND_EXPR, pg_query.BoolExprType_OR_EXPR:
		if len(vals) == 0 {
			return Row{}, false
		}
		out := vals[0]
		for _, v := range vals[1:] {
			if b.Boolop == pg_query.BoolExprType_AND_EXPR {
				out = and(out, v)
			} else {
				out = or(out, v)
			}
		}
		return out, true
	}
	return Row{}, false
}

func (e *rowEval) caseExpr(c *pg_query.CaseExpr, depth int) (Row, bool) {
	var arg Row
	if c.Arg != nil {
		v, ok := e.eval(c.Arg, depth)
		if !ok || v.Type == "unknown" {
			return Row{}, false // CASE NULL WHEN compares text
		}
		arg = v
	}
	var results []Row
	var types []string
	chosen := -1
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return Row{}, false
		}
		cond, ok := e.eval(cw.Expr, depth)
		if !ok {
			return Row{}, false
		}
		if c.Arg != nil {
			// CASE x WHEN v is x = v.
			if cond, ok = compare("=", arg, cond); !ok {
				return Row{}, false
			}
		} else if cond.Type != "bool" && !(cond.Type == "unknown" && cond.Null) {
			return Row{}, false
		}
		res, ok := e.eval(cw.Result, depth)
		if !ok {
			return Row{}, false
		}
		if chosen < 0 && !cond.Null && cond.Bool {
			chosen = len(results)
		}
		results = append(results, res)
		types = append(types, res.Type)
	}
	def := null("unknown")
	if c.Defresult != nil {
		v, ok := e.eval(c.Defresult, depth)
		if !ok {
			return Row{}, false
		}
		def = v
	}
	types = append(types, def.Type)
	t := common(types...)
	if t == "" || t == "unknown" {
		return Row{}, false // all NULL: text, not a number
	}
	if chosen >= 0 {
		return coerce(results[chosen], t), true
	}
	return coerce(def, t), true
}

// aggregate is count, sum, avg, min or max of one row's value.
func (e *rowEval) aggregate(fc *pg_query.FuncCall, depth int) (Row, bool) {
	if e.inAgg || e.noAgg || fc.Over != nil || fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggWithinGroup || fc.FuncVariadic {
		return Row{}, false // an aggregate inside one fails in PostgreSQL
	}
	name := schema.FuncName(fc)
	rows := int64(1)
	if e.empty {
		rows = 0
	}
	if fc.AggStar {
		if name != "count" || len(fc.Args) > 0 {
			return Row{}, false
		}
		return Row{Type: "int8", Num: fromSigned(big.NewInt(rows), 0)}, true
	}
	if len(fc.Args) != 1 {
		return Row{}, false
	}
	e.inAgg = true
	v, ok := e.eval(fc.Args[0], depth)
	e.inAgg = false
	if !ok && e.empty && e.typeOf != nil && signedColumn(fc.Args[0]) {
		v, ok = null(e.typeOf(fc.Args[0])), true
		// A column the typer cannot tell may name no table or
		// column: folded away, PostgreSQL's error (42P01, 42703)
		// would become an answer.
		if v.Type == "" || v.Type == "unknown" || name != "count" && !numericOrInt(v.Type) {
			return Row{}, false
		}
	}
	if !ok {
		return Row{}, false
	}
	if e.empty && name != "count" {
		v.Null = true // no value to sum, average, take the least of
	}
	switch name {
	case "count":
		if v.Null || e.empty {
			return Row{Type: "int8", Num: fromSigned(big.NewInt(0), 0)}, true
		}
		return Row{Type: "int8", Num: fromSigned(big.NewInt(1), 0)}, true
	case "sum", "avg", "min", "max":
		if !numericOrInt(v.Type) {
			return Row{}, false
		}
	default:
		return Row{}, false
	}
	t := v.Type
	switch {
	case name == "sum" && t == "int4":
		t = "int8"
	case name == "sum" && t == "int8", name == "avg":
		t = "numeric"
	}
	if name == "avg" {
		e.exact = true
	}
	if v.Null {
		return null(t), true
	}
	if name == "avg" {
		// numeric_div of the sum by the count, 1.
		q, ok := Quotient(v.Num, fromSigned(big.NewInt(1), 0))
		return Row{Type: t, Num: q}, ok
	}
	v.Type = t
	return v, true
}

// signedColumn reports whether n is a column under any number of signs.
func signedColumn(n *pg_query.Node) bool {
	for {
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr != nil {
			return n.GetColumnRef() != nil
		}
		if op := schema.OpName(e.Name); op != "-" && op != "+" {
			return false
		}
		n = e.Rexpr
	}
}
