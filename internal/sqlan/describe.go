package sqlan

import (
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// describeForm is the lazily built statement Describe returns.
type describeForm struct {
	once sync.Once
	st   *Stmt
}

// Describe returns a read-only statement with the same result columns as s
// that returns no rows, for learning the columns before s runs (the
// extended protocol's Describe): a SELECT becomes
// SELECT * FROM (s) AS shepherd_describe LIMIT 0 without row locks, and
// INSERT/UPDATE/DELETE ... RETURNING list becomes
// SELECT list FROM table LIMIT 0. It returns nil for statements without
// rows, and for those it cannot rewrite.
func (s *Stmt) Describe() *Stmt {
	if !s.ReturnsRows || s.Kind == Show {
		return nil
	}
	s.describe.once.Do(func() { s.describe.st = buildDescribe(s.SQL, s.env) })
	return s.describe.st
}

func buildDescribe(sql string, env *Env) *Stmt {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	n := tree.Stmts[0].Stmt
	var sel *pg_query.SelectStmt
	switch {
	case n.GetSelectStmt() != nil:
		inner := n.GetSelectStmt()
		inner.LockingClause = nil
		sub := &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}},
			Alias:    &pg_query.Alias{Aliasname: "shepherd_describe"},
		}}}
		star := pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)
		sel = &pg_query.SelectStmt{TargetList: []*pg_query.Node{star}, FromClause: []*pg_query.Node{sub}}
	case n.GetInsertStmt() != nil:
		i := n.GetInsertStmt()
		sel = returningSelect(i.Relation, i.ReturningList)
	case n.GetUpdateStmt() != nil:
		u := n.GetUpdateStmt()
		sel = returningSelect(u.Relation, u.ReturningList)
	case n.GetDeleteStmt() != nil:
		d := n.GetDeleteStmt()
		sel = returningSelect(d.Relation, d.ReturningList)
	default:
		return nil
	}
	sel.LimitCount = pg_query.MakeAConstIntNode(0, -1)
	sel.LimitOption = pg_query.LimitOption_LIMIT_OPTION_COUNT
	out, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{
		Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}},
	}}})
	if err != nil {
		return nil
	}
	st, err := ParseOneIn(out, env)
	if err != nil || st == nil {
		return nil
	}
	return st
}

func returningSelect(rel *pg_query.RangeVar, list []*pg_query.Node) *pg_query.SelectStmt {
	return &pg_query.SelectStmt{
		TargetList: list,
		FromClause: []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: rel}}},
	}
}
