package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgnumeric"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// A numeric division or an avg() of exact values whose digits cannot
// reach the answer may be written as each engine computes it (see
// divide, funcCall): PostgreSQL's digits (select_div_scale) matter only
// where the value is seen. The writer marks (hide) those it can prove
// unseen before writing the expression around them:
//
//   - every one in an operator strict in its operands (+ - * / %, a
//     comparison) one of whose operands is NULL whatever the values
//     (nullValued), and in x BETWEEN a AND b where x is such a NULL or
//     both bounds are: the value is NULL;
//   - in x IS [NOT] NULL and count(x) (not DISTINCT, without FILTER or
//     a window), which see only whether x is NULL: those whose value
//     reaches x's through operators that keep a NULL a NULL and a value
//     a value (arithmetic, signs, casts, COALESCE, sum/avg/min/max), not
//     one in a condition (CASE, NULLIF) that decides it.
//
// Subqueries are never entered: which rows they give may depend on the
// digits. Errors are not changed: the divisor's zero check is written
// as everywhere (see divisor). Divisions of constants, whose digits
// shepherd computes, sqlan folds to PostgreSQL's quotient beforehand.

// hide marks the divisions and averages in n whose digits are unseen:
// all of them when n is NULL whatever they are (every), else those on
// n's value paths.
func (w *writer) hide(n *pg_query.Node, every bool) {
	if n == nil {
		return
	}
	if w.hidden == nil {
		w.hidden = map[protoreflect.ProtoMessage]bool{}
	}
	if every {
		pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.A_Expr:
				if x.Kind == pg_query.A_Expr_Kind_AEXPR_OP && schema.OpName(x.Name) == "/" {
					w.hidden[x] = true
				}
			case *pg_query.FuncCall:
				if schema.FuncName(x) == "avg" {
					w.hidden[x] = true
				}
			}
			return true
		})
		return
	}
	switch {
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP:
		e := n.GetAExpr()
		switch schema.OpName(e.Name) {
		case "/":
			w.hidden[e] = true
			fallthrough
		case "+", "-", "*", "%":
			w.hide(e.Lexpr, false)
			w.hide(e.Rexpr, false)
		}
	case n.GetTypeCast() != nil:
		w.hide(n.GetTypeCast().Arg, false)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			w.hide(a, false)
		}
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		switch schema.FuncName(fc) {
		case "avg":
			w.hidden[fc] = true
			fallthrough
		case "sum", "min", "max":
			if len(fc.Args) == 1 {
				w.hide(fc.Args[0], false)
			}
		}
	}
}

// nullOperands reports whether the operator expression e, one of the
// arithmetic and comparison operators, is NULL because an operand is.
func nullOperands(e *pg_query.A_Expr) bool {
	return e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && nullValued(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: e}})
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

// constantsDiffer reports whether x and y are integer or numeric
// constants (as pgnumeric.Fold evaluates them) of different values:
// CASE x WHEN y never takes that WHEN.
func constantsDiffer(x, y *pg_query.Node) bool {
	a, ok1 := pgnumeric.Fold(x)
	b, ok2 := pgnumeric.Fold(y)
	return ok1 && ok2 && !pgnumeric.Equal(a, b)
}

// valueScale is the number of decimals x's exact value can have, for
// rounding SQLite's float arithmetic back to it (see rounded): its scale
// (scaleOf), but a numeric constant counts the decimals of its value,
// trailing zeros left out, and + - * count those of their operands. A
// quotient sqlan folds (20000.000000000000) keeps the display scale
// PostgreSQL gives it, far more decimals than x * 20000 can have; ROUND
// to those would leave the float's error in a product such as
// 1.005 * 20000 (20099.999999999996).
func (w *writer) valueScale(x *pg_query.Node) (int, bool) {
	if d, ok := pgnumeric.Fold(x); ok {
		return d.Scale - trailingZeros(d), true
	}
	if e := x.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr != nil {
		switch schema.OpName(e.Name) {
		case "+", "-", "*":
			ls, lok := w.valueScale(e.Lexpr)
			rs, rok := w.valueScale(e.Rexpr)
			if !lok || !rok {
				break
			}
			if schema.OpName(e.Name) == "*" {
				return ls + rs, true
			}
			return max(ls, rs), true
		}
	}
	return w.scaleOf(x)
}

// trailingZeros counts the zeros d's decimals end in.
func trailingZeros(d pgnumeric.Decimal) int {
	text := d.Digits.String()
	n := 0
	for n < d.Scale && n < len(text)-1 && text[len(text)-1-n] == '0' {
		n++
	}
	if d.Digits.Sign() == 0 {
		return d.Scale
	}
	return n
}
