package dialect

import (
	"fmt"
	"maps"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// joinLimits are the most tables an engine joins in one statement:
// MariaDB's MAX_TABLES ("Too many tables; MariaDB can only use 61 tables
// in a join", an error PostgreSQL, which has no such limit, never gives)
// and SQLite's bitmask of 64 ("at most 64 tables in a join").
var joinLimits = map[driver.Dialect]int{driver.MySQL: 61, driver.SQLite: 64}

// maxViewDepth bounds the expansion of views of views.
const maxViewDepth = 16

// countTable counts a table reference the writer writes (tableName), a
// view as the tables its query names, as both engines merge views into
// the statement.
func (w *writer) countTable(rv *pg_query.RangeVar) {
	w.tables++
	if t := w.schema.Table(rv.Relname); t != nil && t.View && t.Query != "" {
		w.tables += viewTableRefs(t.Query, w.schema, 1) - 1
	}
}

// checkJoinLimit refuses a statement that names more tables than the
// writer's engine joins. The count is of every table reference written,
// subqueries included (MariaDB merges semi-join subqueries and derived
// tables into the outer join, SQLite flattens them): never fewer than the
// engine counts, at the price of refusing some statements whose
// subqueries the engine would have kept apart.
func (w *writer) checkJoinLimit() {
	if limit, ok := joinLimits[w.d]; ok && w.tables-w.splitTables > limit {
		w.refuse("a statement naming %d tables (the engine joins at most %d)", w.tables, limit)
	}
}

// viewTableRefs counts the table references of a view's query, views in
// it expanded (1 when it does not parse: the view itself).
func viewTableRefs(query string, s *schema.Snapshot, depth int) int {
	tree, err := pg_query.Parse(query)
	if err != nil || len(tree.Stmts) != 1 {
		return 1
	}
	count := 0
	walk(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) bool {
		rv, ok := m.Interface().(*pg_query.RangeVar)
		if !ok {
			return true
		}
		count++
		if t := s.Table(rv.Relname); t != nil && t.View && t.Query != "" && depth < maxViewDepth {
			count += viewTableRefs(t.Query, s, depth+1) - 1
		}
		return true
	})
	return count
}

// splitJoin writes, for MariaDB, a query joining more tables than it can
// (select5 of sqllogictest joins 62 to 64 tables in a comma list, the
// join's conditions in WHERE) as a join of at most 61 items: some of the
// tables stay, and each connected group of the others, joined by the
// conditions that name only its tables, becomes a derived table. It
// answers as the statement does: the derived tables are the join of
// their tables filtered by their own conditions, and the conditions left
// are applied to the whole, as PostgreSQL applies them all. MariaDB
// merges a derived table into the query only while the join stays
// within its 61 tables (mysql_derived_merge falls back to materializing
// it otherwise), so either way each join it runs is within the limit.
//
// It applies only where moving a table into a derived table changes no
// name: the FROM list is of tables shepherd knows (no views), their
// column names are all distinct, every column reference is one bare name
// and there is no * and no subquery; and where the conditions naming
// more than one table are equalities of two columns (a group joined
// otherwise might be far larger than the statement's whole join). It returns nil where it does not
// apply, or when no split keeps every join within the limit; the
// statement is then refused as before. Half the tables (those nearest a
// table a condition names alone, in the order of the join's conditions)
// stay, so that both MariaDB's join-order searches are small.
func (w *writer) splitJoin(s *pg_query.SelectStmt) (split *pg_query.SelectStmt, levelTables int) {
	limit := joinLimits[driver.MySQL]
	n := len(s.FromClause)
	if !w.my() || n <= limit || w.schema == nil || s.Op != pg_query.SetOperation_SETOP_NONE || s.WithClause != nil {
		return nil, 0
	}
	owner := map[string]int{} // column name → FROM item
	tables := make([]*schema.Table, n)
	for i, f := range s.FromClause {
		rv := f.GetRangeVar()
		if rv == nil || rv.Schemaname != "" || rv.Catalogname != "" {
			return nil, 0
		}
		t := w.schema.Table(rv.Relname)
		if t == nil || t.View || w.cteTables[rv.Relname] != nil {
			return nil, 0
		}
		tables[i] = t
		for _, c := range t.Columns {
			if _, dup := owner[c.Name]; dup {
				return nil, 0
			}
			owner[c.Name] = i
		}
	}
	simple := true
	walk(s.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.ColumnRef:
			if len(x.Fields) != 1 || x.Fields[0].GetString_() == nil {
				simple = false
			}
		case *pg_query.A_Star, *pg_query.SubLink, *pg_query.RangeSubselect, *pg_query.JoinExpr, *pg_query.RangeFunction:
			simple = false
		}
		return simple
	})
	if !simple {
		return nil, 0
	}
	// The WHERE clause's conjuncts, each with the FROM items it names.
	var conjuncts []*pg_query.Node
	var flatten func(n *pg_query.Node)
	flatten = func(n *pg_query.Node) {
		if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
			for _, a := range b.Args {
				flatten(a)
			}
			return
		}
		conjuncts = append(conjuncts, n)
	}
	if s.WhereClause != nil {
		flatten(s.WhereClause)
	}
	names := make([][]int, len(conjuncts))
	adjacent := make([][]int, n)
	start := -1
	for i, c := range conjuncts {
		seen := map[int]bool{}
		walk(c.ProtoReflect(), func(m protoreflect.Message) bool {
			if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
				if t, ok := owner[cr.Fields[0].GetString_().Sval]; ok && !seen[t] {
					seen[t] = true
					names[i] = append(names[i], t)
				}
			}
			return true
		})
		slices.Sort(names[i])
		if len(names[i]) > 1 && !columnEquality(c) {
			// Only equalities join the groups: a derived table of
			// tables joined otherwise may be far larger than the
			// statement's join, which MariaDB would materialize.
			return nil, 0
		}
		if len(names[i]) == 1 && start < 0 {
			start = names[i][0]
		}
		for _, a := range names[i] {
			for _, b := range names[i] {
				if a != b {
					adjacent[a] = append(adjacent[a], b)
				}
			}
		}
	}
	// The tables in breadth-first order along the conditions.
	order := make([]int, 0, n)
	placed := make([]bool, n)
	for _, root := range append([]int{max(start, 0)}, seq(n)...) {
		if placed[root] {
			continue
		}
		placed[root] = true
		for queue := []int{root}; len(queue) > 0; {
			t := queue[0]
			queue = queue[1:]
			order = append(order, t)
			for _, u := range adjacent[t] {
				if !placed[u] {
					placed[u] = true
					queue = append(queue, u)
				}
			}
		}
	}
	for keep := min(limit-1, (n+1)/2); keep > 0; keep-- {
		groups := restGroups(order[keep:], adjacent)
		largest := keep + len(groups)
		for _, g := range groups {
			largest = max(largest, len(g))
		}
		if largest > limit {
			continue
		}
		return w.joinOfGroups(s, order[:keep], groups, conjuncts, names, tables), largest
	}
	return nil, 0
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// restGroups splits rest, FROM items, into the groups the conditions
// connect, each in FROM order, the groups in the order of their first
// items.
func restGroups(rest []int, adjacent [][]int) [][]int {
	in := map[int]bool{}
	for _, t := range rest {
		in[t] = true
	}
	var groups [][]int
	for _, t := range slices.Sorted(maps.Keys(in)) {
		if !in[t] {
			continue
		}
		delete(in, t)
		g := []int{t}
		for i := 0; i < len(g); i++ {
			for _, u := range adjacent[g[i]] {
				if in[u] {
					delete(in, u)
					g = append(g, u)
				}
			}
		}
		slices.Sort(g)
		groups = append(groups, g)
	}
	return groups
}

// joinOfGroups builds s with the tables of keep in its FROM list and each
// group as a derived table of its tables and conditions (see splitJoin).
func (w *writer) joinOfGroups(s *pg_query.SelectStmt, keep []int, groups [][]int, conjuncts []*pg_query.Node,
	names [][]int, tables []*schema.Table) *pg_query.SelectStmt {
	and := func(list []*pg_query.Node) *pg_query.Node {
		switch len(list) {
		case 0:
			return nil
		case 1:
			return list[0]
		}
		return pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, list, -1)
	}
	kept := slices.Clone(keep)
	slices.Sort(kept)
	var from []*pg_query.Node
	for _, t := range kept {
		from = append(from, s.FromClause[t])
	}
	used := make([]bool, len(conjuncts))
	if w.derivedTables == nil {
		w.derivedTables = map[string]*schema.Table{}
	}
	for gi, g := range groups {
		in := map[int]bool{}
		derived := &schema.Table{Name: fmt.Sprintf("shepherd_join_%d", gi+1)}
		var items []*pg_query.Node
		for _, t := range g {
			in[t] = true
			items = append(items, s.FromClause[t])
			derived.Columns = append(derived.Columns, tables[t].Columns...)
		}
		var own []*pg_query.Node
		for i, c := range conjuncts {
			if len(names[i]) > 0 && !used[i] && allIn(names[i], in) {
				used[i] = true
				own = append(own, c)
			}
		}
		star := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{
			Fields: []*pg_query.Node{{Node: &pg_query.Node_AStar{AStar: &pg_query.A_Star{}}}}}}}
		sub := &pg_query.SelectStmt{
			TargetList:  []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: star}}}},
			FromClause:  items,
			WhereClause: and(own),
			LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
			Op:          pg_query.SetOperation_SETOP_NONE,
		}
		from = append(from, &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sub}},
			Alias:    &pg_query.Alias{Aliasname: derived.Name},
		}}})
		w.derivedTables[derived.Name] = derived
	}
	var rest []*pg_query.Node
	for i, c := range conjuncts {
		if !used[i] {
			rest = append(rest, c)
		}
	}
	return &pg_query.SelectStmt{
		DistinctClause: s.DistinctClause,
		TargetList:     s.TargetList,
		FromClause:     from,
		WhereClause:    and(rest),
		GroupClause:    s.GroupClause,
		GroupDistinct:  s.GroupDistinct,
		HavingClause:   s.HavingClause,
		WindowClause:   s.WindowClause,
		SortClause:     s.SortClause,
		LimitOffset:    s.LimitOffset,
		LimitCount:     s.LimitCount,
		LimitOption:    s.LimitOption,
		LockingClause:  s.LockingClause,
		Op:             s.Op,
	}
}

// allIn reports whether every item of list is in set.
func allIn(list []int, set map[int]bool) bool {
	for _, t := range list {
		if !set[t] {
			return false
		}
	}
	return true
}

// columnEquality reports whether n is a = b of two column references.
func columnEquality(n *pg_query.Node) bool {
	e := n.GetAExpr()
	return e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && schema.OpName(e.Name) == "=" &&
		e.Lexpr.GetColumnRef() != nil && e.Rexpr.GetColumnRef() != nil
}
