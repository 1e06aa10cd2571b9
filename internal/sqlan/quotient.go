package sqlan

import (
	"math/big"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgnumeric"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// A numeric division x / y (not of two integers) has the digits
// PostgreSQL's select_div_scale chooses from the operands' magnitudes
// and scales: at least 16 significant digits, never fewer decimals than
// either operand has. MariaDB answers with four decimals more than x,
// SQLite with a double; neither can write PostgreSQL's digits. As for
// avg() (see exactAverages), a division that is a result column of the
// top-level SELECT is asked of every replica as its exact parts,
//
//	x::text || '/' || y::text
//
// (with, unless y is a non-zero constant, a third part 1 / CASE WHEN
// y = 0 AND x IS NOT NULL THEN 0 ELSE 1 END that fails with PostgreSQL's
// 22012 on each engine where PostgreSQL's division would), and shepherd
// writes the quotient as PostgreSQL does (pgDivide). Only operands whose
// digits every engine writes alike qualify: integers, and numeric values
// of a known scale (a numeric(p,s) column, a literal, a sum of them),
// made of columns, constants, NULLIF and sum/min/max. Elsewhere the SQL writer
// still refuses a numeric division that nothing rounds.

// exactQuotient rewrites result column i of sel, rt, when it is such a
// division, and reports whether it did.
func (s *Stmt) exactQuotient(r *rewriter, sel *pg_query.SelectStmt, i int, rt *pg_query.ResTarget) bool {
	e := rt.Val.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || schema.OpName(e.Name) != "/" {
		return false
	}
	if !plainOperand(e.Lexpr) || !plainOperand(e.Rexpr) {
		return false
	}
	lx, _, _ := exactArgument(r.schema, sel, e.Lexpr)
	rx, _, _ := exactArgument(r.schema, sel, e.Rexpr)
	if !lx || !rx || bothIntegers(r.schema, sel, e.Lexpr, e.Rexpr) {
		return false
	}
	if rt.Name == "" {
		rt.Name, _ = columnName(rt.Val) // PostgreSQL's name
	}
	// A sort or grouping key naming the column would name the parts.
	// One that totalOrder added (after the client's) only fixes the
	// order of rows the client's keys tie, which any order of them
	// does alike on every engine: it becomes x, y.
	user, extended := r.userSorts[sel]
	var keys []*pg_query.Node
	for k, sn := range sel.SortClause {
		sb := sn.GetSortBy()
		if p, ok := ordinalOf(sb.Node); ok && p == i+1 || isColumn(sb.Node, rt.Name) {
			if !extended || k < user {
				return false
			}
			for _, x := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
				if !constant(x) { // a constant would name a position
					keys = append(keys, sortBy(proto.Clone(x).(*pg_query.Node)))
				}
			}
			continue
		}
		keys = append(keys, sn)
	}
	for _, g := range sel.GroupClause {
		// GROUP BY x / y (or any expression) may be what makes the
		// division legal: its operands alone would not be grouped.
		if _, ok := ordinalOf(g); ok || isColumn(g, rt.Name) || g.GetColumnRef() == nil {
			return false
		}
	}
	sel.SortClause = keys
	rt.Val = divisionParts(e.Lexpr, e.Rexpr)
	return true
}

// plainOperand reports whether n is made of columns, constants, casts,
// signs and sum/min/max/count of those: cheap to write twice, the same
// value each time, with digits every engine writes alike.
func plainOperand(n *pg_query.Node) bool {
	switch {
	case n.GetColumnRef() != nil, n.GetAConst() != nil:
		return n.GetAConst() == nil || !n.GetAConst().Isnull
	case n.GetTypeCast() != nil:
		return plainOperand(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		// Its value is the first argument's, digits and all.
		return plainOperand(n.GetAExpr().Lexpr) && plainOperand(n.GetAExpr().Rexpr)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		op := schema.OpName(e.Name)
		return e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr == nil && (op == "-" || op == "+") && plainOperand(e.Rexpr)
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		switch schema.FuncName(fc) {
		case "sum", "min", "max", "count":
		default:
			return false
		}
		if fc.Over != nil || fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.AggDistinct {
			return false
		}
		if fc.AggStar {
			return true
		}
		return len(fc.Args) == 1 && plainOperand(fc.Args[0])
	}
	return false
}

// bothIntegers reports whether x and y are both integers (integer
// division, which every engine writes).
func bothIntegers(snap *schema.Snapshot, sel *pg_query.SelectStmt, x, y *pg_query.Node) bool {
	_, _, xs := exactArgument(snap, sel, x)
	_, _, ys := exactArgument(snap, sel, y)
	if xs != 0 || ys != 0 {
		return false
	}
	return isInteger(typeIn(snap, sel, x).Name()) && isInteger(typeIn(snap, sel, y).Name())
}

// divisionParts is x::text || '/' || y::text, with the zero check.
func divisionParts(x, y *pg_query.Node) *pg_query.Node {
	text := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      proto.Clone(n).(*pg_query.Node),
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	op := func(name string, l, r *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(name)}, l, r, -1)
	}
	slash := func() *pg_query.Node { return pg_query.MakeAConstStrNode("/", -1) }
	parts := op("||", op("||", text(bare(x)), slash()), text(bare(y)))
	if nonZeroConstant(y) {
		return parts
	}
	zero := &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
		Boolop: pg_query.BoolExprType_AND_EXPR,
		Args: []*pg_query.Node{
			op("=", proto.Clone(y).(*pg_query.Node), pg_query.MakeAConstIntNode(0, -1)),
			{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
				Arg: proto.Clone(x).(*pg_query.Node), Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1,
			}}},
		},
		Location: -1,
	}}}
	check := &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
			Expr: zero, Result: pg_query.MakeAConstIntNode(0, -1), Location: -1,
		}}}},
		Defresult: pg_query.MakeAConstIntNode(1, -1),
		Location:  -1,
	}}}
	return op("||", op("||", parts, slash()), text(op("/", pg_query.MakeAConstIntNode(1, -1), check)))
}

// nonZeroConstant reports whether n is a number constant other than 0.
func nonZeroConstant(n *pg_query.Node) bool {
	c := n.GetAConst()
	switch {
	case c == nil || c.Isnull:
		return false
	case c.GetIval() != nil:
		return c.GetIval().Ival != 0
	case c.GetFval() != nil:
		return strings.Trim(c.GetFval().Fval, "0.+-") != "" && !strings.ContainsAny(c.GetFval().Fval, "eE")
	}
	return false
}

// decimal is a number read from its text: |v| = digits * 10^-scale.
type decimal struct {
	neg    bool
	digits *big.Int
	scale  int
}

// parseDecimal reads a numeric's text (see pgnumeric.Parse).
func parseDecimal(s string) (decimal, bool) {
	d, ok := pgnumeric.Parse(s)
	return decimal{neg: d.Neg, digits: d.Digits, scale: d.Scale}, ok
}

// pgDivide writes x / y as PostgreSQL's numeric division does: rounded
// half away from zero to the scale select_div_scale chooses. ok is false
// for text that is not a number and for a zero y.
func pgDivide(xs, ys string) (string, bool) {
	return pgnumeric.Divide(xs, ys)
}

// constant reports whether n is a constant, possibly cast or signed.
func constant(n *pg_query.Node) bool {
	switch {
	case n.GetAConst() != nil:
		return true
	case n.GetTypeCast() != nil:
		return constant(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil && n.GetAExpr().Lexpr == nil:
		return constant(n.GetAExpr().Rexpr)
	}
	return false
}

// bare is x without a cast to numeric without modifiers, which keeps an
// exact x's digits in PostgreSQL but not in MariaDB (DECIMAL(65,30)).
// The typer only gives such a cast a scale when x is exact.
func bare(x *pg_query.Node) *pg_query.Node {
	tc := x.GetTypeCast()
	if tc == nil || tc.Arg.GetAConst().GetSval() != nil {
		return x
	}
	if name, mods, _, ok := schema.TypeOf(tc.TypeName); ok && name == "numeric" && len(mods) == 0 {
		return bare(tc.Arg)
	}
	return x
}

// foldQuotients replaces each numeric division of constants in the
// statement (CAST(6 AS DECIMAL) / - 32) by PostgreSQL's quotient, a
// constant of its digits and display scale (see pgnumeric.FoldQuotient),
// which every replica then reads as PostgreSQL computes it: the same
// value and type for a PostgreSQL replica, the digits no other engine's
// division writes for the others. A quotient some replica's engine
// cannot hold exactly is left to the SQL writer (which refuses it): a
// SQLite or DuckDB replica keeps numeric values as doubles (15
// significant digits, and at most 15 decimals, as its numeric(p,s)
// columns), MariaDB's DECIMAL 65 digits with 30 decimals.
// The statement's text, from which sqlan types the answer's columns,
// keeps the division; the typer gives it the quotient's scale
// (quotientType).
func (s *Stmt) foldQuotients(r *rewriter) {
	fits := func(q pgnumeric.Decimal) bool {
		if q.Scale == 0 {
			// Without a point the constant would read as an integer
			// (int8 in PostgreSQL), of another type.
			return false
		}
		reps := s.env.Replicas
		if len(reps[driver.SQLite])+len(reps[driver.DuckDB]) > 0 && (q.Significant() > 15 || q.Scale > 15) {
			// Beyond 15 decimals SQLite's rounding of what is
			// computed from the constant (a sum, a product) and its
			// text (printf) go through more digits than a double has.
			return false
		}
		return len(reps[driver.MySQL]) == 0 || q.Scale <= 30 && len(q.Digits.String()) <= 65
	}
	pgtree.Walk(s.tree.ProtoReflect(), func(m protoreflect.Message) bool {
		n, ok := m.Interface().(*pg_query.Node)
		if !ok {
			return true
		}
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || schema.OpName(e.Name) != "/" {
			return true
		}
		q, ok := pgnumeric.FoldQuotient(e.Lexpr, e.Rexpr)
		if !ok || !fits(q) {
			return true
		}
		abs := q
		abs.Neg = false
		c := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
			Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: abs.String()}}, Location: -1,
		}}}
		if q.Neg {
			c = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("-")}, nil, c, -1)
		}
		n.Node = c.Node
		r.changed = true
		return false
	})
}
