package dialect

import (
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// A comparison of an integer with the average of integers,
// e op avg(x) or e op (SELECT avg(x) FROM ...) (either way round, under
// any signs: - avg(x) is written with - sum(x)), is
// written for MariaDB and SQLite without an average, whose digits only
// PostgreSQL has (see funcCall):
//
//	e * count(x) op sum(x)
//
// with count(x) and sum(x) in place of avg(x) (in two copies of the
// subquery for the second form). It answers as PostgreSQL, NULL
// included, when e is an int2 or int4 value, x one of int2 or int4
// values, and count(x) < avgCountLimit:
//
//   - PostgreSQL's avg is q = S/N (S the sum, N > 0 the count) rounded,
//     half away from zero, to s decimals (numeric_div, select_div_scale:
//     s = max(0, 16 - 4*qweight), where 10000^qweight < |q|). With |q| <=
//     2^31 < 10000^3, qweight <= 2 and s >= 8.
//   - Rounding to s decimals is monotone and keeps e, an integer, as it
//     is: q < e gives r <= e, q > e gives r >= e, q = e gives r = e.
//     And r = e only when q = e: else |q - e| <= 10^-s / 2, so
//     0 < |S - e*N| <= N / (2 * 10^s) < 1 for N < 2*10^8, which no
//     integer is. So e op r holds exactly when e op q, which is
//     e*N op S, N being positive.
//   - With no non-NULL x, N = 0 and S is NULL: the comparison is NULL
//     on every engine, as e op NULL is in PostgreSQL; a NULL e makes it
//     NULL alike.
//   - |e*N| < 2^31 * 2*10^8 and |S| as well: no engine overflows.
//
// Beyond avgCountLimit values the engines fail with 0A000 rather than
// answer (MariaDB through an unsigned overflow the driver recognises,
// mysql.AvgCountMark; SQLite through sqlite.AvgCountFunction). The
// PostgreSQL replica computes the average itself.

// avgCountLimit bounds the count of values under which the comparison is
// exact (see above).
const avgCountLimit = 200000000

// avgCountMark opens MariaDB's check of the count: 2^64 - avgCountLimit,
// to which a count of avgCountLimit or more adds beyond the unsigned
// range. It is the text of mysql.AvgCountMark, which the driver looks
// for in the overflow's message (the writer does not import drivers).
const avgCountMark = "18446744073509551616 + "

// avgCountFunction is sqlite.AvgCountFunction.
const avgCountFunction = "shepherd_avg_count"

// avgRefusal is the refusal of avg() of exact values where the writer
// cannot make it exact.
const avgRefusal = "avg() of integer or numeric values inside an expression, a condition, a window or a subquery (exact only as a result column, round(avg(x), n), + - * with integers and constants, / by a constant, an ORDER BY item or compared with an int2/int4 value when of int2/int4 values)"

// avgCompare writes l op r, op a comparison, as above when one side is
// such an average and the other an int2 or int4 value, and reports
// whether it did.
func (w *writer) avgCompare(op string, l, r *pg_query.Node) bool {
	if w.pg() || !comparison[op] {
		return false
	}
	e, avg, flipped := l, r, false
	neg, avg := unsigned(avg)
	if !averageForm(avg) {
		e, flipped = r, true
		neg, avg = unsigned(l)
		if !averageForm(avg) {
			return false
		}
	}
	if t := w.typeOf(e); t != "int4" && t != "int2" {
		return false // the writer refuses the average (funcCall)
	}
	count, sum := avgParts(avg)
	if w.avgCounts == nil {
		w.avgCounts = map[*pg_query.FuncCall]bool{}
	}
	for _, n := range []*pg_query.Node{count, sum} {
		fc := n.GetFuncCall()
		if sl := n.GetSubLink(); sl != nil {
			fc = sl.Subselect.GetSelectStmt().TargetList[0].GetResTarget().Val.GetFuncCall()
		}
		w.avgCounts[fc] = true // checked, and count() guarded, in funcCall
	}
	w.notes.avgCompare(op, l, r, e, count, sum, neg, flipped)
	product := func() {
		w.str("(")
		w.expr(e)
		w.str(" * ")
		w.expr(count)
		w.str(")")
	}
	total := func() {
		// - avg(x) is PostgreSQL's average of - x, rounded alike (half
		// away from zero): its sum is - sum(x).
		if neg {
			w.str("(-")
		}
		w.expr(sum)
		if neg {
			w.str(")")
		}
	}
	w.str("(")
	if flipped {
		total()
		w.str(" " + op + " ")
		product()
	} else {
		product()
		w.str(" " + op + " ")
		total()
	}
	w.str(")")
	return true
}

// unsigned returns n without the signs before it, and whether they
// negate it.
func unsigned(n *pg_query.Node) (neg bool, inner *pg_query.Node) {
	for {
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr != nil {
			return neg, n
		}
		switch schema.OpName(e.Name) {
		case "-":
			neg = !neg
		case "+":
		default:
			return neg, n
		}
		n = e.Rexpr
	}
}

// averageForm reports whether n is avg(x), an aggregate (no window,
// ORDER BY or WITHIN GROUP), or a scalar subquery whose one result is
// such an average over all its rows: no GROUP BY, HAVING, DISTINCT,
// LIMIT, OFFSET or set operation, so that it answers exactly one row.
func averageForm(n *pg_query.Node) bool {
	if sl := n.GetSubLink(); sl != nil {
		sub := sl.Subselect.GetSelectStmt()
		if sl.SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK || sub == nil ||
			sub.Op != pg_query.SetOperation_SETOP_NONE || len(sub.TargetList) != 1 ||
			len(sub.GroupClause) > 0 || sub.HavingClause != nil || len(sub.WindowClause) > 0 ||
			len(sub.DistinctClause) > 0 || sub.LimitCount != nil || sub.LimitOffset != nil ||
			len(sub.ValuesLists) > 0 || sub.IntoClause != nil || len(sub.LockingClause) > 0 ||
			sub.WithClause != nil || len(sub.SortClause) > 0 {
			return false
		}
		rt := sub.TargetList[0].GetResTarget()
		return rt != nil && averageForm(rt.Val) && rt.Val.GetFuncCall() != nil
	}
	fc := n.GetFuncCall()
	return fc != nil && schema.FuncName(fc) == "avg" && len(fc.Args) == 1 && fc.Over == nil &&
		!fc.AggStar && !fc.AggWithinGroup && !fc.FuncVariadic && len(fc.AggOrder) == 0
}

// avgParts returns count(x) and sum(x) in place of avg(x) in n, an
// averageForm: copies of n, with the same DISTINCT and FILTER.
func avgParts(n *pg_query.Node) (count, sum *pg_query.Node) {
	part := func(name string) *pg_query.Node {
		c := proto.Clone(n).(*pg_query.Node)
		fc := c.GetFuncCall()
		if sl := c.GetSubLink(); sl != nil {
			fc = sl.Subselect.GetSelectStmt().TargetList[0].GetResTarget().Val.GetFuncCall()
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
		return c
	}
	return part("count"), part("sum")
}

// avgPart writes fc, the count() or sum() avgCompare put in place of an
// average, and reports whether fc is one: x must be int2 or int4 values
// (typed here, in the scope of x), and count() is checked against
// avgCountLimit.
func (w *writer) avgPart(fc *pg_query.FuncCall) bool {
	if !w.avgCounts[fc] {
		return false
	}
	if t := w.typeOf(fc.Args[0]); t != "int4" && t != "int2" {
		w.refuse(avgRefusal)
	}
	if schema.FuncName(fc) != "count" {
		w.call("SUM", fc)
		return true
	}
	if w.lite() {
		w.str(avgCountFunction + "(")
		w.call("COUNT", fc)
		w.str(")")
		return true
	}
	// The sum overflows MariaDB's unsigned arithmetic exactly when the
	// count reaches avgCountLimit; what is left is the count.
	w.str("CAST(" + avgCountMark)
	w.call("COUNT", fc)
	w.str(" - 18446744073509551616 AS SIGNED)")
	return true
}

// mootAverages marks the avg() calls whose value cannot matter: those
// reached from l and r, operands of a strict operator (arithmetic or
// comparison) one of which is NULL whatever the values (nullValued),
// through arithmetic and signs only, so that the operator's value, and
// each operator's between it and the call, is NULL on every engine
// whatever the average. funcCall writes the engine's own AVG there. No
// CASE, function or subquery is looked into: there an engine's average
// could choose another branch, one that fails.
func (w *writer) mootAverages(l, r *pg_query.Node) {
	if !nullValued(l) && !nullValued(r) {
		return
	}
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		switch {
		case n == nil:
		case n.GetFuncCall() != nil:
			if fc := n.GetFuncCall(); schema.FuncName(fc) == "avg" && fc.Over == nil {
				if w.mootAvgs == nil {
					w.mootAvgs = map[*pg_query.FuncCall]bool{}
				}
				w.mootAvgs[fc] = true
			}
		case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP:
			switch schema.OpName(n.GetAExpr().Name) {
			case "+", "-", "*":
				walk(n.GetAExpr().Lexpr)
				walk(n.GetAExpr().Rexpr)
			}
		}
	}
	walk(l)
	walk(r)
}

// constantAverages marks the averages of an integer constant in n, n
// being where only its value matters, not its digits: an operand of a
// comparison, the operand or a WHEN value of CASE x WHEN ..., NULLIF's
// second argument, a cast to an integer type. avg(c) is exactly c over
// one row or more and NULL over none, FILTER and DISTINCT alike;
// funcCall writes it so (constAverage), an integer. The averages are
// looked for through signs, + - and * only, and only where the
// arithmetic's magnitude stays below 2^60 (valueBound), whatever the
// values: each engine then computes it exactly in 64-bit integers, as
// PostgreSQL does in numeric.
func (w *writer) constantAverages(n *pg_query.Node) {
	if w.duck {
		return // DuckDB replicas are written otherwise (duckdb.go)
	}
	var avgs []*pg_query.FuncCall
	if b, ok := w.valueBound(n, &avgs); !ok || b >= 1<<60 {
		return
	}
	for _, fc := range avgs {
		if w.constAvgs == nil {
			w.constAvgs = map[*pg_query.FuncCall]bool{}
		}
		w.constAvgs[fc] = true
	}
}

// valueBound bounds the magnitude of n, arithmetic (signs, + - *) on
// averages of integer constants, integer constants and int2/int4
// values, and adds the averages to avgs; ok is false for anything else.
func (w *writer) valueBound(n *pg_query.Node, avgs *[]*pg_query.FuncCall) (bound float64, ok bool) {
	if e := n.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP {
		op := schema.OpName(e.Name)
		if e.Lexpr == nil && (op == "-" || op == "+") {
			return w.valueBound(e.Rexpr, avgs)
		}
		if e.Lexpr != nil && (op == "-" || op == "+" || op == "*") {
			l, okl := w.valueBound(e.Lexpr, avgs)
			r, okr := w.valueBound(e.Rexpr, avgs)
			if !okl || !okr {
				return 0, false
			}
			if op == "*" {
				return l * r, true
			}
			return l + r, true
		}
	}
	if fc := n.GetFuncCall(); fc != nil && averageForm(n) && smallConstant(fc.Args[0]) {
		*avgs = append(*avgs, fc)
		return 1 << 31, true
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return max(1, math.Abs(float64(c.GetIval().Ival))), true
	}
	if t := w.typeOf(n); t == "int4" || t == "int2" {
		return 1 << 31, true
	}
	return 0, false
}

// smallConstant reports whether n is an integer constant (int4) under
// any number of signs.
func smallConstant(n *pg_query.Node) bool {
	for {
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr != nil {
			break
		}
		if op := schema.OpName(e.Name); op != "-" && op != "+" {
			return false
		}
		n = e.Rexpr
	}
	c := n.GetAConst()
	return c != nil && c.GetIval() != nil
}

// constAverage writes fc, an average constantAverages marked, as
// CASE WHEN count(c) > 0 THEN c END, and reports whether it did.
func (w *writer) constAverage(fc *pg_query.FuncCall) bool {
	if !w.constAvgs[fc] {
		return false
	}
	w.str("(CASE WHEN ")
	w.call("COUNT", fc)
	w.str(" > 0 THEN ")
	w.expr(fc.Args[0])
	w.str(" END)")
	return true
}

// roundedAverage writes CAST(avg(x) AS t), t an integer type, of int2 or
// int4 values x (the average under any signs), and reports whether it
// did. PostgreSQL rounds the average q = S/N to s decimals (s >= 8, see
// avgCompare) and that, half away from zero, to an integer; below 10^8
// values this is S/N rounded half away from zero at once (a q within
// 10^-s / 2 of a half, and not on it, needs |2S - (2k+1)N| <= N * 10^-s,
// and that integer is not 0), which the engines compute exactly in
// integers:
//
//	sign(S) * ((2 * |S| + N) DIV (2 * N))
//
// NULL for no values (S is NULL). The count is checked as avgCompare's,
// doubled: from avgCountLimit / 2 values the engines fail with 0A000. A
// sign is the rounded value's (rounding half away from zero is
// symmetric), and the result gets t's range check, which PostgreSQL's
// cast of - avg(x) fails where the negation leaves int4's range.
func (w *writer) roundedAverage(arg *pg_query.Node, t string) bool {
	if w.pg() || w.duck || !isInt(t) {
		return false
	}
	neg, avg := unsigned(arg)
	fc := avg.GetFuncCall()
	if fc == nil || !averageForm(avg) || w.constAvgs[fc] || w.mootAvgs[fc] {
		return false
	}
	if xt := w.typeOf(fc.Args[0]); xt != "int4" && xt != "int2" {
		return false
	}
	count, sum := avgParts(avg)
	w.inRange(t, func() {
		w.repeated(fc.Args[0], 4, func() {
			if neg {
				w.str("(-")
			}
			if w.my() {
				w.str("CAST(")
			}
			w.str("((CASE WHEN ")
			w.expr(sum)
			w.str(" < 0 THEN -1 ELSE 1 END) * ((2 * ABS(")
			w.expr(sum)
			w.str(") + ")
			w.expr(count)
			if w.my() {
				w.str(") DIV NULLIF(CAST(" + avgCountMark + "2 * ")
				w.expr(count)
				w.str(" - 18446744073509551616 AS SIGNED), 0)))")
				w.str(" AS SIGNED)")
			} else {
				w.str(") / NULLIF(" + avgCountFunction + "(2 * ")
				w.expr(count)
				w.str("), 0)))")
			}
			if neg {
				w.str(")")
			}
		})
	})
	return true
}
