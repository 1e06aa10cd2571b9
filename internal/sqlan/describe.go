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
// extended protocol's Describe). It is run with every parameter NULL, so
// nothing in it may depend on their values:
//
//   - a SELECT loses its ORDER BY (but for sort keys with parameters),
//     OFFSET and row locks, gets LIMIT 0,
//     and its WHERE becomes false AND (WHERE): MariaDB evaluates
//     uncorrelated subqueries while planning, and with NULL parameters a
//     scalar subquery may find several rows where the real values find
//     one;
//   - LIMIT and OFFSET of subqueries that take parameters become
//     constants (MariaDB cannot take LIMIT NULL);
//   - parameters only LIMIT or OFFSET used stay referenced, in the
//     false branch of the WHERE clause, as bigint (their type there), so
//     every engine still infers the same parameter types;
//   - INSERT/UPDATE/DELETE ... RETURNING list becomes
//     SELECT list FROM table [, FROM/USING items] WHERE false LIMIT 0.
//
// It returns nil for statements without rows, those it cannot rewrite,
// and those whose WITH queries change data (the probe would run them).
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
	if modifiesData(n) {
		return nil
	}
	var sel *pg_query.SelectStmt
	switch {
	case n.GetSelectStmt() != nil:
		sel = n.GetSelectStmt()
	case n.GetInsertStmt() != nil:
		i := n.GetInsertStmt()
		sel = returningSelect(i.WithClause, i.Relation, nil, i.ReturningList)
	case n.GetUpdateStmt() != nil:
		u := n.GetUpdateStmt()
		sel = returningSelect(u.WithClause, u.Relation, u.FromClause, u.ReturningList)
	case n.GetDeleteStmt() != nil:
		d := n.GetDeleteStmt()
		sel = returningSelect(d.WithClause, d.Relation, d.UsingClause, d.ReturningList)
	default:
		return nil
	}
	if !neutralise(sel) {
		return nil
	}
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

func returningSelect(with *pg_query.WithClause, rel *pg_query.RangeVar, from, list []*pg_query.Node) *pg_query.SelectStmt {
	return &pg_query.SelectStmt{
		Op:         pg_query.SetOperation_SETOP_NONE,
		WithClause: with,
		TargetList: list,
		FromClause: append([]*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: rel}}}, from...),
	}
}

// modifiesData reports whether a statement has a WITH query that is not a
// SELECT (WITH d AS (DELETE ... RETURNING ...) SELECT ...).
func modifiesData(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(m *pg_query.Node) {
		cte := m.GetCommonTableExpr()
		if cte != nil && cte.Ctequery.GetSelectStmt() == nil {
			found = true
		}
	})
	return found
}

// neutralise turns sel into its describe form (see Describe), in place.
// It reports false when that cannot be done.
func neutralise(sel *pg_query.SelectStmt) bool {
	var kept []*pg_query.Node // parameter expressions only LIMIT/OFFSET used
	keep := func(n *pg_query.Node) {
		if n != nil && hasParam(n) {
			kept = append(kept, n)
		}
	}
	// Subqueries first: their LIMIT and OFFSET become constants.
	walkNodes(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}, func(m *pg_query.Node) {
		sub := m.GetSelectStmt()
		if sub == nil || sub == sel {
			return
		}
		if sub.LimitCount != nil && hasParam(sub.LimitCount) {
			keep(sub.LimitCount)
			sub.LimitCount = pg_query.MakeAConstIntNode(1, -1)
		}
		if sub.LimitOffset != nil && hasParam(sub.LimitOffset) {
			keep(sub.LimitOffset)
			sub.LimitOffset = nil
		}
	})
	keep(sel.LimitCount)
	keep(sel.LimitOffset)
	// Sort keys that take parameters stay, for the parameters' types.
	var sorts []*pg_query.Node
	for _, s := range sel.SortClause {
		if hasParam(s) {
			sorts = append(sorts, s)
		}
	}
	sel.SortClause, sel.LockingClause, sel.LimitOffset = sorts, nil, nil
	sel.LimitCount = pg_query.MakeAConstIntNode(0, -1)
	sel.LimitOption = pg_query.LimitOption_LIMIT_OPTION_COUNT

	leaves := leafSelects(sel)
	for i, leaf := range leaves {
		if len(leaf.ValuesLists) > 0 {
			if i == 0 && len(kept) > 0 {
				return false // nowhere to keep them
			}
			continue
		}
		conds := []*pg_query.Node{{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
			Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{}}, Location: -1,
		}}}}
		if leaf.WhereClause != nil {
			conds = append(conds, leaf.WhereClause)
		}
		if i == 0 {
			for _, k := range kept {
				conds = append(conds, isNullBigint(k))
			}
			kept = nil
		}
		leaf.WhereClause = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, conds, -1)
	}
	return len(kept) == 0
}

// leafSelects lists the SELECTs (and VALUES) a set operation combines,
// leftmost first; sel itself when it is not a set operation.
func leafSelects(sel *pg_query.SelectStmt) []*pg_query.SelectStmt {
	if sel.Larg == nil || sel.Rarg == nil {
		return []*pg_query.SelectStmt{sel}
	}
	return append(leafSelects(sel.Larg), leafSelects(sel.Rarg)...)
}

// hasParam reports whether an expression uses a parameter.
func hasParam(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(m *pg_query.Node) {
		if m.GetParamRef() != nil {
			found = true
		}
	})
	return found
}

// isNullBigint is (n)::bigint IS NULL: a use of n's parameters that types
// them as LIMIT and OFFSET do.
func isNullBigint(n *pg_query.Node) *pg_query.Node {
	cast := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg: n,
		TypeName: &pg_query.TypeName{
			Names:   []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("int8")},
			Typemod: -1, Location: -1,
		},
		Location: -1,
	}}}
	return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{
		Arg: cast, Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1,
	}}}
}
