package dialect

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgfunc"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// mathAlike reports whether MariaDB and SQLite's math functions write
// the call as PostgreSQL does (see pgfunc.MathAlike), and MariaDB's name
// for it ("" when the same).
func (w *writer) mathAlike(name string, fc *pg_query.FuncCall) (mariaDB string, ok bool) {
	return pgfunc.MathAlike(name, w.argTypes(fc.Args))
}

// refuseNumericMath refuses a math function's numeric overload: the
// engines compute it in double precision, PostgreSQL in numeric with
// digits of its own (exp(1.0) is 2.7182818284590452, sqrt of numeric 1
// is 1.000000000000000).
func (w *writer) refuseNumericMath(name string) {
	engine := "SQLite"
	if w.my() {
		engine = "MariaDB"
	}
	w.refuse("%s() of numeric values (%s computes it in double precision, PostgreSQL in numeric with more digits; cast the argument to float8)", name, engine)
}

// pgMathFails reports whether PostgreSQL's float8 function name of n
// arguments fails (2201E, 2201F, 22003) on operands where SQLite's math
// function answers NULL or an infinity (sqrt(-1), ln(0), power(0, -1),
// exp(1000)).
func pgMathFails(name string, n int) bool {
	switch name {
	case "sqrt", "ln", "log", "log10", "exp":
		return n == 1
	case "power", "pow":
		return n == 2
	}
	return false
}

// checkedMath writes SQLite's math function name of fc's arguments inside
// shepherd_math_check, which fails where PostgreSQL does and otherwise
// passes the engine's result on: each argument is written twice.
func (w *writer) checkedMath(name string, fc *pg_query.FuncCall) {
	var write func(i int)
	write = func(i int) {
		if i < len(fc.Args) {
			w.repeated(fc.Args[i], 2, func() { write(i + 1) })
			return
		}
		w.str(mathCheckFunction + "('" + name + "', ")
		if name == "log" {
			w.call("LOG10", fc) // PostgreSQL's log of one argument is base 10
		} else {
			w.call(strings.ToUpper(name), fc)
		}
		for _, a := range fc.Args {
			w.str(", ")
			w.expr(a)
		}
		w.str(")")
	}
	write(0)
}

// mariaMath writes MariaDB's math function for PostgreSQL's float8
// function name (pgMathFails) of fc's arguments, failing where
// PostgreSQL does: MariaDB answers NULL for sqrt(-1), ln(0) and log10(-1)
// and 0 for exp(-1000) and power(10, -400), and fails with its own
// message for power(0, -1) and power(-8, 0.5). Each failure is a marked
// overflow of MariaDB's unsigned arithmetic (mathFailure), evaluated
// only in its CASE branch, that the driver reports with PostgreSQL's
// SQLSTATE and message; an overflowing exp or pow is MariaDB's own
// "DOUBLE value is out of range in 'exp(...)'", which the driver reports
// as PostgreSQL's overflow. Conditions on NULL are not true, so NULL in
// is NULL out. The operands are written up to eight times.
func (w *writer) mariaMath(name string, fc *pg_query.FuncCall) {
	a := fc.Args
	x := func() { w.expr(a[0]) }
	fn := map[string]string{"sqrt": "SQRT", "ln": "LN", "log": "LOG10", "log10": "LOG10", "exp": "EXP", "power": "POW", "pow": "POW"}[name]
	result := func() { w.call(fn, fc) }
	switch name {
	case "sqrt":
		w.repeated(a[0], 3, func() {
			w.str("(CASE WHEN ")
			x()
			w.str(" < 0 THEN ")
			w.mathFailure(sqrtNegativeMark, a[0])
			w.str(" ELSE ")
			result()
			w.str(" END)")
		})
	case "ln", "log", "log10":
		w.repeated(a[0], 5, func() {
			w.str("(CASE WHEN ")
			x()
			w.str(" = 0 THEN ")
			w.mathFailure(logZeroMark, a[0])
			w.str(" WHEN ")
			x()
			w.str(" < 0 THEN ")
			w.mathFailure(logNegativeMark, a[0])
			w.str(" ELSE ")
			result()
			w.str(" END)")
		})
	case "exp":
		w.repeated(a[0], 3, func() {
			w.str("(CASE WHEN ")
			result()
			w.str(" = 0 THEN ")
			w.mathFailure(underflowMark, a[0])
			w.str(" ELSE ")
			result()
			w.str(" END)")
		})
	default: // power, pow
		y := func() { w.expr(a[1]) }
		w.repeated(a[0], 8, func() {
			w.repeated(a[1], 5, func() {
				w.str("(CASE WHEN ")
				x()
				w.str(" = 0 AND ")
				y()
				w.str(" < 0 THEN ")
				w.mathFailure(powerZeroNegativeMark, a[0])
				w.str(" WHEN ")
				x()
				w.str(" < 0 AND ")
				y()
				w.str(" <> FLOOR(")
				y()
				w.str(") THEN ")
				w.mathFailure(powerComplexMark, a[0])
				w.str(" WHEN ")
				result()
				w.str(" = 0 AND ")
				x()
				w.str(" <> 0 THEN ")
				w.mathFailure(underflowMark, a[0])
				w.str(" ELSE ")
				result()
				w.str(" END)")
			})
		})
	}
}

// mathFailure writes an expression that overflows MariaDB's unsigned
// arithmetic whenever it is evaluated, its text opening with mark. It
// names x so that MariaDB does not evaluate it as a constant before the
// CASE chose it.
func (w *writer) mathFailure(mark string, x *pg_query.Node) {
	w.str(mark + "(")
	w.expr(x)
	w.str(" IS NULL) + 2000)")
}

// The marks of MariaDB's math failures (mariaMath), the text of the
// MariaDB driver's mysql.SqrtNegativeMark and the rest, which it reports
// as PostgreSQL's errors. Each is 2^64 - 1 less a little: adding 2000
// overflows.
const (
	sqrtNegativeMark      = "18446744073709551614 + ("
	logZeroMark           = "18446744073709551613 + ("
	logNegativeMark       = "18446744073709551612 + ("
	powerZeroNegativeMark = "18446744073709551611 + ("
	powerComplexMark      = "18446744073709551610 + ("
	underflowMark         = "18446744073709551609 + ("
)

// mathCheckFunction is the SQLite driver's shepherd_math_check
// (sqlite.MathCheckFunction).
const mathCheckFunction = "shepherd_math_check"

// funcCall writes a function call, aggregate or window function.
func (w *writer) funcCall(fc *pg_query.FuncCall) {
	w.note(fc.Location, fc.Args...)
	if w.havingAt != nil && isAggregateCall(fc) {
		w.outsideHaving(func() { w.funcCall(fc) })
		return
	}
	name := schema.FuncName(fc)
	if name == "" {
		w.refuse("user-defined or schema-qualified functions")
	}
	if fc.AggWithinGroup {
		w.refuse("WITHIN GROUP")
	}
	if fc.FuncVariadic {
		w.refuse("VARIADIC arguments")
	}
	if countsNulls(fc) {
		w.hide(fc.Args[0], false) // only whether it is NULL counts
	}
	if len(fc.AggOrder) > 0 && name != "string_agg" && name != "array_agg" {
		w.refuse("ORDER BY inside %s()", name)
	}
	if w.avgPart(fc) || w.constAverage(fc) {
		return
	}
	n := len(fc.Args)
	if n == 1 && (name == "min" || name == "max" || name == "sum" || name == "avg") && w.typeOf(fc.Args[0]) == "interval" {
		w.refuse("%s() of intervals (the replicas hold them as text)", name)
	}
	if n == 1 && (name == "min" || name == "max") && schema.IsArray(w.typeOf(fc.Args[0])) {
		w.arrayMinMax(name, fc, w.typeOf(fc.Args[0]))
		return
	}
	switch {
	case name == "now" || name == "random" || name == "gen_random_uuid" || name == "clock_timestamp" ||
		name == "statement_timestamp" || name == "transaction_timestamp" || name == "nextval" ||
		name == "currval" || name == "lastval" || name == "setval" || name == "uuid_generate_v4":
		// Pinned to parameters before writing; left here only when the
		// form was not one shepherd pins.
		w.refuse("%s() in this form", name)
	case name == "avg" && n == 1 && fc != w.sortKey && !w.mootAvgs[fc] && (w.exact(fc.Args[0]) || isInt(w.typeOf(fc.Args[0]))) && !nullAggregate(fc) && !w.hidden[fc]:
		// avg() of exact values has digits only PostgreSQL writes
		// (select_div_scale); MariaDB answers four decimals more than
		// its operand, SQLite a double. sqlan asks for a result column
		// avg(x) or round(avg(x), n) as sum and count and divides
		// itself; anywhere else the engines' averages would differ.
		// An ORDER BY item that is avg() itself sorts by the engine's
		// average: the order is PostgreSQL's but for averages closer
		// than the engine's digits tell apart.
		// A comparison with an integer is written without it
		// (avgCompare).
		w.refuse(avgRefusal)
	case name == "sum" && n == 1 && w.lite() && fc.Over == nil && w.typeOf(fc.Args[0]) == "int8":
		// PostgreSQL sums bigints exactly (numeric); SQLite's SUM fails
		// once a partial sum leaves the 64-bit range. shepherd_sum adds
		// exactly and, beyond the range, answers the digits as text in
		// a result column and fails (0A000) elsewhere.
		if w.answerSums[fc] || fc == w.textSum {
			w.call("shepherd_sum", fc)
		} else {
			w.call("shepherd_sum_expr", fc)
		}
	case name == "sum" && n == 1 && w.lite() && fc.Over != nil && w.typeOf(fc.Args[0]) == "int8":
		// Over a window, where SQLite's SUM fails as soon as a partial
		// sum leaves the 64-bit range and go-sqlite3 has no window
		// aggregate of shepherd's: SUM of the high and of the low 32
		// bits of each value (neither can overflow), put together
		// exactly by shepherd_sum_parts.
		fname := "shepherd_sum_parts_expr"
		if w.answerSums[fc] || fc == w.textSum {
			fname = "shepherd_sum_parts"
		}
		w.str(fname + "(")
		for i, part := range []string{" >> 32)", " & 4294967295)"} {
			if i > 0 {
				w.str(", ")
			}
			w.str("SUM((")
			w.repeated(fc.Args[0], 2, func() { w.expr(fc.Args[0]) })
			w.str(")" + part)
			if fc.AggFilter != nil {
				w.str(" FILTER (WHERE ")
				w.repeated(fc.AggFilter, 2, func() { w.expr(fc.AggFilter) })
				w.str(")")
			}
			w.str(" OVER ")
			w.over(fc)
		}
		w.str(")")
		return
	case name == "sum" && n == 1 && w.lite() && w.exact(fc.Args[0]) && !nullAggregate(fc):
		// SQLite sums numeric values as floats: round back to the
		// decimals PostgreSQL's exact sum can have (valueScale).
		scale, ok := w.valueScale(fc.Args[0])
		if !ok {
			w.refuse("sum() of numeric values of unknown scale (SQLite adds them as floats)")
		}
		w.str("ROUND(")
		w.call("SUM", fc)
		if fc.Over != nil {
			// The window belongs to SUM, inside the rounding.
			w.str(" OVER ")
			w.over(fc)
			w.str(", " + strconv.Itoa(scale) + ")")
			return
		}
		w.str(", " + strconv.Itoa(scale) + ")")
	case name == "abs" && n == 1:
		// PostgreSQL's abs() keeps x's type: abs of its minimum is out
		// of range (22003).
		w.inRange(w.typeOf(fc.Args[0]), func() { w.call("ABS", fc) })
	case pgfunc.Alike(name, n):
		w.call(strings.ToUpper(name), fc)
	case name == "pi" && n == 0 && w.my():
		// MariaDB's PI() shows six decimals.
		w.str("3.141592653589793E0")
	case pgfunc.MathOf(name, n):
		my, ok := w.mathAlike(name, fc)
		switch {
		case !ok && !w.pg():
			w.refuseNumericMath(name)
		case w.my() && pgMathFails(name, n):
			w.mariaMath(name, fc)
			return
		case my != "" && w.my():
			w.call(my, fc)
			return
		case w.lite() && pgMathFails(name, n):
			w.checkedMath(name, fc)
			return
		}
		w.call(strings.ToUpper(name), fc)
	case (name == "lag" || name == "lead") && n == 3 && w.my():
		w.lagLeadDefault(name, fc) // writes its own OVER
		return
	case (name == "percent_rank" || name == "cume_dist") && n == 0 && fc.Over != nil:
		w.distribution(name, fc) // writes its own OVER
		return
	default:
		w.special(name, fc)
	}
	if fc.Over != nil {
		w.str(" OVER ")
		w.over(fc)
	}
}

// over writes the window of fc: a name, or its definition.
func (w *writer) over(fc *pg_query.FuncCall) {
	if fc.Over.Name != "" && len(fc.Over.PartitionClause) == 0 && len(fc.Over.OrderClause) == 0 {
		w.ident(fc.Over.Name)
	} else {
		w.windowDef(fc.Over)
	}
}

// call writes NAME(args) with the aggregate decorations PostgreSQL and
// the dialect share: *, DISTINCT and (SQLite only) FILTER.
func (w *writer) call(name string, fc *pg_query.FuncCall) {
	w.str(name + "(")
	if fc.AggDistinct {
		w.str("DISTINCT ")
	}
	for _, a := range fc.Args {
		if a.GetRowExpr() != nil {
			// count(DISTINCT (a, b)) counts rows with NULL fields too;
			// MariaDB's count(DISTINCT a, b) skips them.
			w.refuse("a row value as a function argument")
		}
	}
	if fc.AggFilter != nil && w.my() {
		w.filteredArg(name, fc)
		w.str(")")
		return
	}
	if fc.AggStar {
		w.str("*")
	}
	list(w, fc.Args, func(a *pg_query.Node) { w.expr(a) })
	w.str(")")
	if fc.AggFilter != nil {
		w.str(" FILTER (WHERE ")
		w.expr(fc.AggFilter)
		w.str(")")
	}
}

// special writes the functions whose name or meaning differs.
func (w *writer) special(name string, fc *pg_query.FuncCall) {
	a := fc.Args
	n := len(a)
	arg := func(i int) { w.expr(a[i]) }
	if w.stringFunc(name, fc) || w.arrayFunc(name, fc) {
		return
	}
	switch {
	case (name == "length" || name == "char_length" || name == "character_length") && n == 1:
		if w.typeOf(a[0]) == "bytea" {
			if name != "length" {
				w.refuse("%s() of bytea", name)
			}
			// The number of bytes, as octet_length() counts them.
			if w.my() {
				w.call("LENGTH", fc)
			} else {
				w.call("OCTET_LENGTH", fc)
			}
			return
		}
		if w.my() {
			w.call("CHAR_LENGTH", fc)
		} else {
			w.call("LENGTH", fc)
		}
	case name == "octet_length" && n == 1 && w.typeOf(a[0]) == "bpchar":
		w.refuse("octet_length() of char(n) (PostgreSQL counts the padding)")
	case name == "octet_length" && n == 1:
		if w.my() {
			w.call("LENGTH", fc)
		} else {
			w.call("OCTET_LENGTH", fc)
		}
	case (name == "substr" || name == "substring") && (n == 2 || n == 3):
		if w.typeOf(a[1]) == "text" || a[1].GetAConst() != nil && a[1].GetAConst().GetSval() != nil {
			w.refuse("substring with a regular expression")
		}
		// PostgreSQL counts a start before 1 toward the length; the
		// others count from the end for negative starts. Equal for
		// starts of 1 or more.
		if c, ok := intConst(a[1]); !ok || c < 1 {
			if !ok && w.lite() {
				w.refuse("substring with a start that is not a positive constant")
			}
			if ok {
				w.refuse("substring with a start below 1")
			}
		}
		w.call("SUBSTR", fc)
	case (name == "strpos" && n == 2) || (name == "position" && n == 2):
		// POSITION(x IN s) parses as position(s, x).
		if w.my() {
			w.str("LOCATE(")
			arg(1)
			w.str(", ")
			arg(0)
			w.str(")")
		} else {
			w.str("INSTR(")
			arg(0)
			w.str(", ")
			arg(1)
			w.str(")")
		}
	case (name == "btrim" || name == "ltrim" || name == "rtrim") && (n == 1 || n == 2):
		fn := map[string]string{"btrim": "TRIM", "ltrim": "LTRIM", "rtrim": "RTRIM"}[name]
		if n == 1 {
			w.str(fn + "(")
			arg(0)
			w.str(")")
			return
		}
		if w.lite() {
			w.str(fn + "(")
			arg(0)
			w.str(", ")
			arg(1)
			w.str(")")
			return
		}
		// MariaDB strips a string, PostgreSQL a set of characters: the
		// same for one character.
		c, ok := strConst(a[1])
		if !ok || len([]rune(c)) != 1 {
			w.refuse("%s with more than one character to strip", name)
		}
		where := map[string]string{"btrim": "BOTH", "ltrim": "LEADING", "rtrim": "TRAILING"}[name]
		w.str("TRIM(" + where + " ")
		arg(1)
		w.str(" FROM ")
		arg(0)
		w.str(")")
	case name == "mod" && n == 2:
		if lt, rt := w.typeOf(a[0]), w.typeOf(a[1]); !isInt(lt) || !isInt(rt) {
			w.numericMod(a[0], a[1], lt, rt, "mod()")
			return
		}
		w.str("(")
		w.expr(a[0])
		w.str(" % ")
		w.divisor(a[0], a[1])
		w.str(")")
	case name == "trunc" && (n == 1 || n == 2):
		if w.my() {
			w.str("TRUNCATE(")
			arg(0)
			w.str(", ")
			if n == 2 {
				arg(1)
			} else {
				w.str("0")
			}
			w.str(")")
			return
		}
		if n == 2 {
			w.exactTrunc(a[0], a[1])
			return
		}
		w.call("TRUNC", fc)
	case name == "log" && n == 1:
		if pgfunc.Result(name, w.argTypes(a)) != "float8" && !w.pg() {
			w.refuseNumericMath(name)
		}
		if w.lite() {
			w.checkedMath("log", fc)
			return
		}
		if w.my() {
			w.mariaMath("log", fc)
			return
		}
		w.call("LOG10", fc) // PostgreSQL's log is base 10
	case name == "string_agg" && n == 2:
		w.stringAgg(fc)
	case (name == "bool_and" || name == "every" || name == "bool_or") && n == 1:
		fn := "MIN"
		if name == "bool_or" {
			fn = "MAX"
		}
		// DISTINCT changes neither the minimum nor the maximum; FILTER
		// is written as for the other aggregates (see filteredArg).
		w.str(fn + "(")
		switch {
		case fc.AggFilter != nil && w.my():
			w.caseFilter(fc.AggFilter, func() { arg(0) })
			w.str(")")
		case fc.AggFilter != nil:
			arg(0)
			w.str(") FILTER (WHERE ")
			w.expr(fc.AggFilter)
			w.str(")")
		default:
			arg(0)
			w.str(")")
		}
	case (name == "extract" || name == "date_part") && n == 2:
		w.extract(a)
	case name == "date_trunc" && n == 2:
		w.dateTrunc(a)
	case (name == "lag" || name == "lead") && n == 3:
		if w.my() {
			w.refuse("%s() with a default value", name)
		}
		w.call(strings.ToUpper(name), fc)
	case (name == "lower" || name == "upper") && n == 1:
		w.caseMap(name == "upper", a[0])
	case name == "round" && (n == 1 || n == 2):
		w.round(fc)
	case n == 1 && (name == "stddev" || name == "stddev_samp" || name == "stddev_pop" ||
		name == "variance" || name == "var_samp" || name == "var_pop"):
		// sqlan asks for a result column of int2, int4 or narrow
		// numeric values as
		// count, sum and sum of squares and computes PostgreSQL's
		// numeric itself; no engine writes its digits, and of floats
		// the summation order shows in the last ones.
		w.refuse("%s() other than of smallint, integer or numeric(p,s) (p <= 9) values as a result column (or round() of one) no ORDER BY names, without DISTINCT", name)
	default:
		if !w.temporalFunc(name, fc) {
			w.refuse("function %s() with %d arguments", name, n)
		}
	}
}

func intConst(n *pg_query.Node) (int64, bool) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return int64(c.GetIval().Ival), true
	}
	if c := n.GetAConst(); c != nil && !c.Isnull && c.GetSval() == nil && c.GetFval() == nil && c.GetBoolval() == nil && c.GetBsval() == nil {
		return 0, true
	}
	return 0, false
}

func strConst(n *pg_query.Node) (string, bool) {
	if c := n.GetAConst(); c != nil && c.GetSval() != nil {
		return c.GetSval().Sval, true
	}
	return "", false
}

// distribution writes percent_rank() and cume_dist() over an inline
// window. MariaDB computes them with ten decimals; written as ratios of
// counts they are exact doubles everywhere. It writes OVER itself.
func (w *writer) distribution(name string, fc *pg_query.FuncCall) {
	if !w.my() {
		w.call(strings.ToUpper(name), fc)
		w.str(" OVER ")
		w.windowDef(fc.Over)
		return
	}
	wd := fc.Over
	if wd == nil || wd.Name != "" || wd.Refname != "" || wd.FrameOptions&frameNonDefault != 0 {
		w.refuse("%s() over a named window or a frame", name)
	}
	partition := func() {
		w.str("(")
		if len(wd.PartitionClause) > 0 {
			w.str("PARTITION BY ")
			list(w, wd.PartitionClause, func(n *pg_query.Node) { w.expr(n) })
		}
		w.str(")")
	}
	if name == "percent_rank" {
		// (rank - 1) / (rows - 1), and 0 for a partition of one row.
		w.str("COALESCE(CAST(RANK() OVER ")
		w.windowDef(wd)
		w.str(" - 1 AS DOUBLE) / NULLIF(COUNT(*) OVER ")
		partition()
		w.str(" - 1, 0), 0E0)")
		return
	}
	// Rows up to and including the current row's peers, over all rows.
	w.str("(CAST(COUNT(*) OVER ")
	w.windowDef(wd)
	w.str(" AS DOUBLE) / COUNT(*) OVER ")
	partition()
	w.str(")")
}

// caseMap writes lower() or upper(). PostgreSQL replicas run with the C
// collation, where case mapping touches ASCII letters only, as SQLite's
// does; MariaDB maps all of Unicode, so there each ASCII letter is
// replaced on its own (byte-exact under utf8mb4_nopad_bin).
func (w *writer) caseMap(upper bool, x *pg_query.Node) {
	if w.lite() {
		if upper {
			w.str("UPPER(")
		} else {
			w.str("LOWER(")
		}
		w.expr(x)
		w.str(")")
		return
	}
	from, to := 'A', 'a'
	if upper {
		from, to = 'a', 'A'
	}
	for range 26 {
		w.str("REPLACE(")
	}
	w.expr(x)
	for i := range 26 {
		w.str(", '" + string(from+rune(i)) + "', '" + string(to+rune(i)) + "')")
	}
}

// round writes round(x) and round(x, n). On numeric values PostgreSQL
// rounds the exact value half away from zero; SQLite holds floats, so a
// value of known scale is rounded in integers (see exactRound). Rounding
// a float is half-to-even in PostgreSQL, which SQLite does not do.
func (w *writer) round(fc *pg_query.FuncCall) {
	x := fc.Args[0]
	digits := int64(0)
	if len(fc.Args) == 2 {
		d, ok := intConst(fc.Args[1])
		if !ok {
			w.refuse("round() to a number of places that is not a constant")
		}
		digits = d
	}
	w.rounding++
	defer func() { w.rounding-- }()
	if w.my() {
		w.call("ROUND", fc)
		return
	}
	t := w.typeOf(x)
	if strings.HasPrefix(t, "float") {
		if len(fc.Args) == 1 {
			// Half to even, as PostgreSQL's rint().
			w.str(roundEvenFunction + "(")
			w.expr(x)
			w.str(")")
			return
		}
		w.refuse("round() of a float to a number of places")
	}
	if from, ok := w.scaleOf(x); ok && int64(from) > digits && from <= 15 {
		w.exactRound(x, from, int(digits))
		return
	}
	if digits < 0 {
		w.refuse("round() to negative places")
	}
	w.call("ROUND", fc)
}

// stringAgg writes string_agg(x, sep [ORDER BY ...]).
func (w *writer) stringAgg(fc *pg_query.FuncCall) {
	if len(fc.AggOrder) == 0 {
		// Without ORDER BY the concatenation order is whatever each
		// engine's plan gives.
		w.refuse("string_agg() without ORDER BY (its result order is not fixed)")
	}
	if w.my() {
		w.str("GROUP_CONCAT(")
		if fc.AggDistinct {
			w.str("DISTINCT ")
		}
		if fc.AggFilter != nil {
			// GROUP_CONCAT skips NULLs, as string_agg does.
			w.caseFilter(fc.AggFilter, func() { w.expr(fc.Args[0]) })
		} else {
			w.expr(fc.Args[0])
		}
		w.str(" ORDER BY ")
		list(w, fc.AggOrder, func(n *pg_query.Node) { w.sortBy(n.GetSortBy(), nil) })
		w.str(" SEPARATOR ")
		w.expr(fc.Args[1])
		w.str(")")
		return
	}
	w.str("GROUP_CONCAT(")
	if fc.AggDistinct {
		// SQLite's DISTINCT aggregates take one argument, joined
		// with ','; PostgreSQL sorts a DISTINCT aggregate only by its
		// arguments.
		sep, ok := strConst(fc.Args[1])
		if !ok || sep != "," || slices.ContainsFunc(fc.AggOrder, func(n *pg_query.Node) bool {
			return !sameColumn(n.GetSortBy().GetNode(), fc.Args[0])
		}) {
			w.refuse("string_agg(DISTINCT ...) other than of a column, with the separator ',' and ORDER BY the column")
		}
		w.str("DISTINCT ")
		w.expr(fc.Args[0])
	} else {
		w.expr(fc.Args[0])
		w.str(", ")
		w.expr(fc.Args[1])
	}
	w.str(" ORDER BY ")
	list(w, fc.AggOrder, func(n *pg_query.Node) { w.sortBy(n.GetSortBy(), nil) })
	w.str(")")
	if fc.AggFilter != nil {
		w.str(" FILTER (WHERE ")
		w.expr(fc.AggFilter)
		w.str(")")
	}
}

// dateTrunc writes date_trunc('unit', ts) for whole units.
func (w *writer) dateTrunc(a []*pg_query.Node) {
	unit, ok := strConst(a[0])
	if !ok {
		w.refuse("date_trunc() of a unit that is not a constant")
	}
	formats := map[string]string{
		"year":   "%Y-01-01 00:00:00",
		"month":  "%Y-%m-01 00:00:00",
		"day":    "%Y-%m-%d 00:00:00",
		"hour":   "%Y-%m-%d %H:00:00",
		"minute": "%Y-%m-%d %H:%i:00",
		"second": "%Y-%m-%d %H:%i:%s",
	}
	if w.dateTruncWeekQuarter(strings.ToLower(unit), a[1]) {
		return
	}
	f, ok := formats[strings.ToLower(unit)]
	if !ok {
		w.refuse("date_trunc('%s', ...)", unit)
	}
	if w.my() {
		w.str("CAST(DATE_FORMAT(")
		w.expr(a[1])
		w.str(", '" + f + "') AS DATETIME(6))")
		return
	}
	f = strings.ReplaceAll(strings.ReplaceAll(f, "%i", "%M"), "%s", "%S")
	w.str("strftime('" + f + "', ")
	w.expr(a[1])
	w.str(")")
}

// windowDef writes a window specification (PARTITION BY, ORDER BY, frame).
func (w *writer) windowDef(wd *pg_query.WindowDef) {
	w.str("(")
	sep := ""
	if wd.Refname != "" {
		w.ident(wd.Refname)
		sep = " "
	}
	if len(wd.PartitionClause) > 0 {
		w.str(sep + "PARTITION BY ")
		list(w, wd.PartitionClause, func(n *pg_query.Node) { w.expr(n) })
		sep = " "
	}
	if len(wd.OrderClause) > 0 {
		w.str(sep + "ORDER BY ")
		list(w, wd.OrderClause, func(n *pg_query.Node) { w.sortBy(n.GetSortBy(), nil) })
		sep = " "
	}
	if frame := w.frame(wd); frame != "" {
		w.str(sep + frame)
	}
	w.str(")")
}

// Frame option bits (PostgreSQL's FRAMEOPTION_*).
const (
	frameNonDefault        = 0x1
	frameRange             = 0x2
	frameRows              = 0x4
	frameGroups            = 0x8
	frameBetween           = 0x10
	frameStartUnbPreceding = 0x20
	frameEndUnbFollowing   = 0x100
	frameStartCurrent      = 0x200
	frameEndCurrent        = 0x400
	frameStartOffPreceding = 0x800
	frameEndOffPreceding   = 0x1000
	frameStartOffFollowing = 0x2000
	frameEndOffFollowing   = 0x4000
	frameExclusions        = 0x8000 | 0x10000 | 0x20000
)

func (w *writer) frame(wd *pg_query.WindowDef) string {
	o := wd.FrameOptions
	if o&frameNonDefault == 0 {
		return ""
	}
	if o&(frameGroups|frameExclusions) != 0 {
		w.refuse("GROUPS frames and frame exclusions")
	}
	if o&(frameStartOffPreceding|frameEndOffPreceding|frameStartOffFollowing|frameEndOffFollowing) != 0 {
		if o&frameRows == 0 {
			w.refuse("RANGE frames with offsets")
		}
	}
	kind := "RANGE"
	if o&frameRows != 0 {
		kind = "ROWS"
	}
	bound := func(unb, cur, offPre, offFol int32, off *pg_query.Node, unbWord string) string {
		switch {
		case o&unb != 0:
			return "UNBOUNDED " + unbWord
		case o&cur != 0:
			return "CURRENT ROW"
		case o&(offPre|offFol) != 0:
			v, ok := intConst(off)
			if !ok {
				w.refuse("frame offsets that are not integer constants")
			}
			if o&offPre != 0 {
				return strconv.FormatInt(v, 10) + " PRECEDING"
			}
			return strconv.FormatInt(v, 10) + " FOLLOWING"
		}
		w.refuse("this window frame")
		return ""
	}
	start := bound(frameStartUnbPreceding, frameStartCurrent, frameStartOffPreceding, frameStartOffFollowing, wd.StartOffset, "PRECEDING")
	if o&frameBetween == 0 {
		return kind + " " + start
	}
	end := bound(frameEndUnbFollowing, frameEndCurrent, frameEndOffPreceding, frameEndOffFollowing, wd.EndOffset, "FOLLOWING")
	return kind + " BETWEEN " + start + " AND " + end
}
