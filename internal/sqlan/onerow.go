package sqlan

import (
	"math"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/pgnumeric"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// A SELECT without FROM, WHERE, GROUP BY or HAVING answers one row, in
// which every aggregate has one value (see pgnumeric.OneRow). A result
// column there that holds an avg() or a numeric division, whose digits
// only PostgreSQL writes, and that pgnumeric.OneRow evaluates, is given
// to the replicas as its value, computed as PostgreSQL computes it: an
// int4 or int8 column as a constant of its type, a numeric one as a
// constant part shepherd writes into the answer (an avgTree "const" or
// "null", as the quotients of exactAverages), since no engine but
// PostgreSQL holds every numeric's digits. Each column keeps its
// PostgreSQL name and type (the typer reads the statement's text; a
// column whose type it tells otherwise than OneRow is left alone).
// Nothing in such a column can fail in PostgreSQL (OneRow evaluates
// none that could), so the replicas answer the row PostgreSQL answers.
// So does an aggregating SELECT whose WHERE is false whatever the rows
// (WHERE NULL IS NOT NULL): its one row aggregates no value
// (pgnumeric.NoRows).

// oneRowSelect returns how sel evaluates its result columns when it
// answers one row whose aggregates aggregate one value each (no FROM,
// WHERE, GROUP BY, HAVING, window, set operation, VALUES, LIMIT,
// OFFSET, DISTINCT ON, locking, INTO or WITH; a WHERE OneRow tells true
// is as none), or no value (a WHERE OneRow tells false or NULL, with or
// without FROM, and aggregates in the result columns: see
// pgnumeric.NoRows); nil otherwise.
func oneRowSelect(snap *schema.Snapshot, sel *pg_query.SelectStmt) func(*pg_query.Node) (pgnumeric.Row, bool) {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.GroupClause) > 0 || sel.HavingClause != nil ||
		len(sel.WindowClause) > 0 || len(sel.ValuesLists) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		len(sel.LockingClause) > 0 || sel.IntoClause != nil || sel.WithClause != nil ||
		len(sel.DistinctClause) > 0 && (len(sel.DistinctClause) > 1 || sel.DistinctClause[0].GetNode() != nil) {
		return nil
	}
	if sel.WhereClause != nil {
		v, ok := pgnumeric.Condition(sel.WhereClause)
		switch {
		case !ok:
			return nil
		case (v.Null || !v.Bool) && oneRow(sel):
			return func(n *pg_query.Node) (pgnumeric.Row, bool) {
				return pgnumeric.NoRows(n, func(x *pg_query.Node) string { return typeIn(snap, sel, x).Name() })
			}
		case v.Null || !v.Bool:
			return nil // no row at all
		}
	}
	if len(sel.FromClause) > 0 {
		return nil
	}
	return pgnumeric.OneRow
}

// oneRowKeys reports whether each sort key of sel is an ordinal or a
// value eval tells: one PostgreSQL computes without failing, so that
// dropping the keys (one row needs no order) changes nothing.
func oneRowKeys(sel *pg_query.SelectStmt, eval func(*pg_query.Node) (pgnumeric.Row, bool)) bool {
	for _, sn := range sel.SortClause {
		sb := sn.GetSortBy()
		if _, ok := ordinalOf(sb.Node); ok {
			continue
		}
		if _, ok := eval(sb.Node); !ok {
			return false
		}
	}
	return true
}

// foldOneRow folds the result columns of sel, a oneRowSelect evaluating
// them with eval, as above, but for those at taken (which exactAverages
// rewrote), and returns the positions of the numeric ones (the quotients
// ShapeAnswer writes).
func (s *Stmt) foldOneRow(r *rewriter, sel *pg_query.SelectStmt, eval func(*pg_query.Node) (pgnumeric.Row, bool), taken []int) []int {
	type fold struct {
		i int
		v pgnumeric.Row
	}
	var folds []fold
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil || hasStar([]*pg_query.Node{n}) {
			return nil
		}
		if slices.Contains(taken, i) {
			continue
		}
		v, ok := eval(rt.Val)
		if !ok || !v.Exact {
			continue
		}
		if t := typeIn(r.schema, sel, rt.Val); t.Name() != v.Type || len(t.Mods()) > 0 {
			continue
		}
		switch {
		case v.Type == "numeric",
			// Not the types' minimums, whose constants read as a
			// wider type once signed.
			v.Type == "int4" && (v.Null || v.Num.Digits.IsInt64() && v.Num.Digits.Int64() <= math.MaxInt32),
			v.Type == "int8" && (v.Null || v.Num.Digits.IsInt64()):
			folds = append(folds, fold{i, v})
		}
	}
	if len(folds) == 0 {
		return nil
	}
	if !oneRowKeys(sel, eval) {
		return nil
	}
	// An aggregating SELECT answers its one row even over no rows; with
	// its aggregates folded away, it would answer none there. Each
	// folded column keeps an aggregate: CASE WHEN count(*) >= 0 THEN
	// value END.
	aggregating := oneRow(sel)
	kept := func(n *pg_query.Node) *pg_query.Node {
		if !aggregating {
			return n
		}
		count := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
			Funcname: []*pg_query.Node{pg_query.MakeStrNode("count")}, AggStar: true, Location: -1,
		}}}
		cond := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(">=")},
			count, pg_query.MakeAConstIntNode(0, -1), -1)
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
			Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
				Expr: cond, Result: n, Location: -1,
			}}}},
			Location: -1,
		}}}
	}
	sel.SortClause = nil
	var numeric []int
	for _, f := range folds {
		rt := sel.TargetList[f.i].GetResTarget()
		if rt.Name == "" {
			rt.Name, _ = dialect.ColumnName(rt.Val) // PostgreSQL's name
		}
		if f.v.Type == "numeric" {
			tree := &avgTree{op: "null"}
			if !f.v.Null {
				tree = &avgTree{op: "const", c: f.v.Num.String()}
			}
			if s.trees == nil {
				s.trees = map[int]*avgTree{}
			}
			s.trees[f.i] = tree
			rt.Val = kept(pg_query.MakeAConstStrNode("0", -1))
			numeric = append(numeric, f.i)
			continue
		}
		rt.Val = kept(intConstant(f.v))
	}
	r.changed = true
	return numeric
}

// intConstant is v, an int4 or int8 value, as a constant of its type:
// 5, - 5, CAST(5 AS bigint), - CAST(5 AS bigint), CAST(NULL AS
// integer).
func intConstant(v pgnumeric.Row) *pg_query.Node {
	typeName := "int4"
	if v.Type == "int8" {
		typeName = "int8"
	}
	cast := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      n,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode(typeName)}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	if v.Null {
		return cast(&pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}})
	}
	abs := v.Num
	abs.Neg = false
	var c *pg_query.Node
	if x := abs.Digits; x.IsInt64() && x.Int64() <= math.MaxInt32 {
		c = pg_query.MakeAConstIntNode(x.Int64(), -1)
	} else {
		c = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
			Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: abs.String()}}, Location: -1,
		}}}
	}
	if v.Type == "int8" {
		c = cast(c)
	}
	if v.Num.Neg {
		c = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("-")}, nil, c, -1)
	}
	return c
}
