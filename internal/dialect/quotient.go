package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// A numeric division whose digits cannot reach the answer may be
// written as each engine divides (see divide): PostgreSQL's digits
// (select_div_scale) matter only where the quotient's value is seen.
// It is not seen
//
//   - under an operator strict in its operands (+ - * / %, a
//     comparison) one of whose operands is NULL whatever the values
//     (nullValued): the operator's value is NULL;
//   - in x BETWEEN a AND b where x is such a NULL, or both bounds are;
//   - in x IS [NOT] NULL and count(x) (not DISTINCT, without FILTER or
//     a window, whose own expressions may be seen): only whether x is
//     NULL counts, which no rounding changes.
//
// Errors are not changed by this: the divisor's zero check is written
// as everywhere (see divisor). Divisions of constants, whose digits
// shepherd computes, sqlan folds to PostgreSQL's quotient beforehand.

// unseen runs write, which writes what no digit of a quotient in it
// reaches, as a rounding context.
func (w *writer) unseen(write func()) {
	w.rounding++
	defer func() { w.rounding-- }()
	write()
}

// nullOperands reports whether the operator expression e, one of the
// arithmetic and comparison operators, is NULL because an operand is.
func nullOperands(e *pg_query.A_Expr) bool {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		return false
	}
	return nullValued(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: e}})
}

// nullBetween reports whether x BETWEEN a AND b (or NOT BETWEEN) is
// NULL whatever the values: x >= a AND x <= b with x NULL, or both a
// and b NULL (one NULL bound leaves FALSE possible).
func nullBetween(e *pg_query.A_Expr) bool {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_BETWEEN && e.Kind != pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
		return false
	}
	bounds := e.Rexpr.GetList().GetItems()
	return nullValued(e.Lexpr) || len(bounds) == 2 && nullValued(bounds[0]) && nullValued(bounds[1])
}

// countsNulls reports whether fc is count(x) whose argument's value is
// unseen: all rows, no FILTER, window or ORDER BY.
func countsNulls(fc *pg_query.FuncCall) bool {
	return schema.FuncName(fc) == "count" && !fc.AggStar && !fc.AggDistinct && len(fc.Args) == 1 &&
		fc.AggFilter == nil && fc.Over == nil && len(fc.AggOrder) == 0
}

// nullAggregate reports whether fc is sum, avg, min or max of a value
// NULL whatever the rows: NULL on every engine.
func nullAggregate(fc *pg_query.FuncCall) bool {
	switch schema.FuncName(fc) {
	case "sum", "avg", "min", "max":
		return len(fc.Args) == 1 && !fc.AggStar && nullValued(fc.Args[0])
	}
	return false
}
