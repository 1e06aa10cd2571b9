package dialect

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgfunc"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// commonType is the type PostgreSQL gives CASE, COALESCE, GREATEST and
// LEAST (select_common_type, pgfunc.CommonType): of all their arguments,
// not the first one's. "" when shepherd cannot tell (types of different
// categories, or one unknown). Untyped arguments (NULL, a string
// literal) take the others' type, and are text when all are.
func (w *writer) commonType(args []*pg_query.Node) string {
	return pgfunc.CommonType(w.argTypes(args))
}

// untyped reports whether n is a NULL or a string literal, which take
// the type of the other arguments.
func untyped(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && (c.Isnull || c.GetSval() != nil)
}

// widerNumber is the common type of two number types.
func widerNumber(a, b string) string {
	switch {
	case a == b:
		return a
	case strings.HasPrefix(a, "float") || strings.HasPrefix(b, "float"):
		return "float8"
	case a == "numeric" || b == "numeric":
		return "numeric"
	case a == "int8" || b == "int8":
		return "int8"
	case a == "int4" || b == "int4":
		return "int4"
	}
	return "int2"
}

// nullifType is the type of NULLIF(l, r): l's, unless resolving the
// implied l = r converts l to another type. PostgreSQL has = for any two
// integer types and for float4 with float8, so those keep l's type; an
// integer compared with a numeric or a float, or a numeric with a float,
// is converted to the wider one (NULLIF(1, 2.5) is numeric). An untyped l
// takes r's type.
func (w *writer) nullifType(l, r *pg_query.Node) string {
	lt, rt := w.typeOf(l), w.typeOf(r)
	switch {
	case lt == "" && untyped(l):
		return rt
	case !isNumber(lt) || !isNumber(rt):
		return lt
	case isInt(lt) && isInt(rt), strings.HasPrefix(lt, "float") && strings.HasPrefix(rt, "float"):
		return lt
	}
	return widerNumber(lt, rt)
}

// roundEvenFunction is sqlite.RoundEvenFunction (the writer does not
// import drivers): round() of a double, halves to even.
const roundEvenFunction = "shepherd_round_even"

// exactTrunc writes trunc(x, n) for a constant n: MariaDB's TRUNCATE;
// on SQLite, x (of known scale, as the numeric values SQLite keeps) is
// taken to an integer at its own scale and truncated there toward zero
// by integer division, exact below 2^53. trunc of a float to places is
// not PostgreSQL's (it has none), and an x of unknown scale is refused.
func (w *writer) exactTrunc(x, places *pg_query.Node) {
	to, ok := intConst(places)
	if !ok {
		w.refuse("trunc() to a number of places that is not a constant")
	}
	w.rounding++
	defer func() { w.rounding-- }()
	from, known := w.scaleOf(x)
	if !known || from > 15 || strings.HasPrefix(w.typeOf(x), "float") {
		w.refuse("trunc(x, n) of a value whose scale shepherd cannot tell")
	}
	if int64(from) <= to {
		w.expr(x) // nothing to cut; the column's scale is n
		return
	}
	w.str("(CAST(CAST(ROUND((")
	w.expr(x)
	w.str(") * " + pow10(from) + ") AS INTEGER) / " + pow10(from-int(to)))
	if to < 0 {
		w.str(" * " + pow10(int(-to)) + " AS REAL))")
		return
	}
	w.str(" AS REAL) / " + pow10(int(to)) + ")")
}

// numericMod writes x % y (mod(x, y)) of exact values not both integers:
// PostgreSQL's remainder is exact, takes the sign of x and the larger
// scale of the two. MariaDB's % of DECIMAL values is the same. SQLite's %
// works on integers, so there both are taken to integers at the larger
// scale (known, at most 15 digits: exact below 2^53) and the remainder
// is scaled back. Floats have no % in PostgreSQL; unknown types are
// refused.
func (w *writer) numericMod(x, y *pg_query.Node, xt, yt, what string) {
	exact := func(t string) bool { return isInt(t) || t == "numeric" }
	if !exact(xt) || !exact(yt) {
		w.refuse("%s on operands that are not integers or numeric values", what)
	}
	if w.my() {
		w.str("(")
		w.expr(x)
		w.str(" % ")
		w.divisor(x, y)
		w.str(")")
		return
	}
	xs, xok := w.scaleOf(x)
	ys, yok := w.scaleOf(y)
	scale := max(xs, ys)
	if !xok || !yok || scale > 15 {
		w.refuse("%s of numeric values whose scale shepherd cannot tell", what)
	}
	scaled := func(n *pg_query.Node) {
		w.str("CAST(ROUND((")
		w.expr(n)
		w.str(") * " + pow10(scale) + ") AS INTEGER)")
	}
	w.str("(CAST((")
	scaled(x)
	if nonZeroConst(y) || w.notNull(x, nil) || !repeatable(x) {
		w.str(" % " + divisorFunction + "(")
		scaled(y)
	} else { // NULL % 0 is NULL (see divisor)
		w.str(" % " + divisorIfFunction + "(")
		scaled(y)
		w.str(", ")
		w.repeated(x, 2, func() { w.expr(x) })
		w.str(" IS NOT NULL")
	}
	w.str(")) AS REAL) / " + pow10(scale) + ")")
}

// divisorFunction is sqlite.DivisorFunction.
const divisorFunction = "shepherd_divisor"

// divisorIfFunction is sqlite.DivisorIfFunction.
const divisorIfFunction = "shepherd_divisor_if"

// widenedReal writes x::double precision for x a constant cast to real
// ('0.1'::real, 0.1::real), and reports whether it did: PostgreSQL rounds
// the constant to single precision, and widening that gives its exact
// binary value (0.10000000149011612), which shepherd computes here. A
// computed real is kept as a double by the replicas and is refused.
func (w *writer) widenedReal(x *pg_query.Node) bool {
	tc := x.GetTypeCast()
	if tc == nil {
		return false
	}
	if t, _, _, ok := schema.TypeOf(tc.TypeName); !ok || t != "float4" {
		return false
	}
	c := tc.Arg.GetAConst()
	var text string
	switch {
	case c == nil || c.Isnull:
		return false
	case c.GetSval() != nil:
		text = strings.TrimSpace(c.GetSval().Sval)
	case c.GetFval() != nil:
		text = c.GetFval().Fval
	case c.GetIval() != nil:
		text = strconv.FormatInt(int64(c.GetIval().Ival), 10)
	default:
		return false
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || strings.ContainsAny(text, "xXpP_") || math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	r := float32(f)
	if math.IsInf(float64(r), 0) || r == 0 && f != 0 {
		return false // out of range for real: PostgreSQL's error, not written here
	}
	w.numberConstant(strconv.FormatFloat(float64(r), 'g', -1, 64), "float8", nil)
	return true
}

// mixedScales refuses, on MariaDB and SQLite (and DuckDB, checked as
// SQLite), a result column of statement n whose numeric values come from
// inputs of different scales (typer's mixed: SELECT 1 UNION ALL SELECT
// 2.50, COALESCE(n, i), VALUES (1), (2.50), also through subqueries in
// FROM and WITH queries). PostgreSQL shows each value at the scale of
// the input it came from (1 and 2.50); SQLite keeps 2.50 as the double
// 2.5 and MariaDB's DECIMAL column gives every value the largest scale
// (1.00), and no column scale gives PostgreSQL's text. Where every input
// has the same scale the column has it, and is written.
func (w *writer) mixedScales(n *pg_query.Node) {
	if w.pg() {
		return
	}
	r := w.typer().stmtRel(n)
	if r == nil {
		return
	}
	engine := "SQLite"
	if w.my() {
		engine = "MariaDB"
	}
	for _, c := range r.cols {
		if c.t.mixed != "" {
			w.refuse("a %s result column of integer and numeric values (or numeric values of different scales): PostgreSQL shows each value at its own scale (1 and 2.50), %s at one; cast the values to one numeric(p,s)", c.t.mixed, engine)
		}
	}
}
