package dialect

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// duckRewrites rewrites, for DuckDB, constructs PostgreSQL defines in
// terms of others DuckDB reads as PostgreSQL does (part of
// PrepareDuckDB, after the SQL writer's check):
//
//   - x op ANY (ARRAY[a, b, ...]) is x op a OR x op b ..., and ALL the
//     AND of them, as PostgreSQL defines them for an array constructor,
//     NULLs included (DuckDB's lists are another thing);
//   - (a, b) IN (SELECT x, y ...) where only its truth counts (a WHERE,
//     HAVING or ON condition, under AND and OR) is EXISTS (SELECT 1
//     FROM (SELECT x, y ...) AS s (c1, c2) WHERE s.c1 = a AND s.c2 = b):
//     DuckDB compares rows as structs, whose NULLs compare otherwise,
//     but both are true on the same rows;
//   - sum, avg, min or max of a NULL constant is max of it (NULL, and
//     still an aggregate): DuckDB has no avg of PostgreSQL's digits,
//     which no NULL shows;
//   - a NULL cast to numeric without a precision is cast to
//     numeric(38,0) (DuckDB's bare DECIMAL is DECIMAL(18,3), which
//     DuckDB refuses to pass off as PostgreSQL's numeric; a NULL has no
//     digits to lose).
func duckRewrites(tree *pg_query.Node) {
	ins := 0
	walkNodes(tree.ProtoReflect(), func(n *pg_query.Node) {
		switch {
		case n.GetAExpr() != nil:
			anyArray(n, n.GetAExpr())
		case n.GetSelectStmt() != nil:
			s := n.GetSelectStmt()
			truths(s.WhereClause, &ins)
			truths(s.HavingClause, &ins)
		case n.GetJoinExpr() != nil:
			truths(n.GetJoinExpr().Quals, &ins)
		case n.GetUpdateStmt() != nil:
			truths(n.GetUpdateStmt().WhereClause, &ins)
		case n.GetDeleteStmt() != nil:
			truths(n.GetDeleteStmt().WhereClause, &ins)
		case n.GetFuncCall() != nil:
			fc := n.GetFuncCall()
			if nullAggregate(fc) && fc.Over == nil && fc.AggFilter == nil && !fc.AggDistinct && len(fc.AggOrder) == 0 {
				fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("max")}
			}
		case n.GetTypeCast() != nil:
			tc := n.GetTypeCast()
			if t, _, _, ok := schema.TypeOf(tc.TypeName); ok && t == "numeric" && len(tc.TypeName.Typmods) == 0 &&
				len(tc.TypeName.ArrayBounds) == 0 && tc.Arg.GetAConst().GetIsnull() {
				tc.TypeName.Typmods = []*pg_query.Node{pg_query.MakeAConstIntNode(38, -1), pg_query.MakeAConstIntNode(0, -1)}
			}
		}
	})
}

// anyArray writes x op ANY/ALL (ARRAY[...]) as an OR/AND of comparisons
// (see duckRewrites).
func anyArray(n *pg_query.Node, e *pg_query.A_Expr) {
	all := e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP_ANY && !all || len(e.Name) != 1 || e.Lexpr == nil {
		return
	}
	op := schema.OpName(e.Name)
	arr := e.Rexpr.GetAArrayExpr()
	if !duckComparisons[op] || arr == nil || len(arr.Elements) == 0 {
		return
	}
	var parts []*pg_query.Node
	for _, el := range arr.Elements {
		if el.GetAArrayExpr() != nil {
			return // several dimensions
		}
		parts = append(parts, pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)},
			proto.Clone(e.Lexpr).(*pg_query.Node), el, -1))
	}
	if len(parts) == 1 {
		n.Node = parts[0].Node
		return
	}
	kind := pg_query.BoolExprType_OR_EXPR
	if all {
		kind = pg_query.BoolExprType_AND_EXPR
	}
	n.Node = pg_query.MakeBoolExprNode(kind, parts, -1).Node
}

// truths rewrites the row IN subquery tests of condition c whose truth
// alone counts: c itself, and the operands of its ANDs and ORs (see
// duckRewrites). ins numbers the derived tables introduced.
func truths(c *pg_query.Node, ins *int) {
	if c == nil {
		return
	}
	if b := c.GetBoolExpr(); b != nil {
		if b.Boolop == pg_query.BoolExprType_AND_EXPR || b.Boolop == pg_query.BoolExprType_OR_EXPR {
			for _, a := range b.Args {
				truths(a, ins)
			}
		}
		return
	}
	sl := c.GetSubLink()
	if sl == nil || sl.SubLinkType != pg_query.SubLinkType_ANY_SUBLINK {
		return
	}
	if op := opName(sl.OperName); len(sl.OperName) > 1 || op != "" && op != "=" {
		return
	}
	row := sl.Testexpr.GetRowExpr()
	sub := sl.Subselect.GetSelectStmt()
	if row == nil || sub == nil || len(row.Args) == 0 || outputCount(sub) != len(row.Args) {
		return
	}
	*ins++
	alias := "shepherd_in" + strconv.Itoa(*ins)
	a := &pg_query.Alias{Aliasname: alias}
	var conds []*pg_query.Node
	for i, l := range row.Args {
		col := alias + "_" + strconv.Itoa(i+1)
		a.Colnames = append(a.Colnames, pg_query.MakeStrNode(col))
		conds = append(conds, pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("=")},
			pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode(col)}, -1), l, -1))
	}
	where := conds[0]
	if len(conds) > 1 {
		where = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, conds, -1)
	}
	exists := &pg_query.SelectStmt{
		TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)},
		FromClause: []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: sl.Subselect, Alias: a}}}},
		WhereClause: where,
	}
	c.Node = &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{
		SubLinkType: pg_query.SubLinkType_EXISTS_SUBLINK,
		Subselect:   &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: exists}},
		Location:    -1,
	}}
}

// outputCount returns the number of columns query s answers, or -1 when
// a star leaves it unknown here.
func outputCount(s *pg_query.SelectStmt) int {
	for s.Op != pg_query.SetOperation_SETOP_NONE && s.Larg != nil {
		s = s.Larg
	}
	if len(s.ValuesLists) > 0 {
		return len(s.ValuesLists[0].GetList().GetItems())
	}
	for _, t := range s.TargetList {
		if hasStar(t.ProtoReflect()) {
			return -1
		}
	}
	return len(s.TargetList)
}

// hasStar reports whether a target is or holds a * (t.*).
func hasStar(m protoreflect.Message) bool {
	if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
		for _, f := range cr.Fields {
			if f.GetAStar() != nil {
				return true
			}
		}
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil && !fd.IsList() && !fd.IsMap() && hasStar(v.Message()) {
			found = true
		}
		return !found
	})
	return found
}
