package dialect

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// maxGroupingSets bounds the grouping sets one query may expand to: each
// is a copy of the query's FROM and WHERE.
const maxGroupingSets = 16

// groupingSets writes SELECT ... GROUP BY with GROUPING SETS, ROLLUP or
// CUBE for MariaDB and SQLite, which have neither (MariaDB's WITH ROLLUP
// orders and names its rows otherwise), as PostgreSQL defines them: the
// UNION ALL of one grouped query per grouping set, in which the grouping
// expressions outside the set are NULL and GROUPING() is the constant
// bit mask of the arguments outside it:
//
//	SELECT g1 AS name1, ... FROM (
//	    SELECT a AS g1, count(*) AS g2 FROM t GROUP BY a
//	    UNION ALL SELECT NULL, count(*) FROM t) AS gs
//	ORDER BY ...
//
// A result column must be a grouping expression itself, GROUPING(), or
// an expression whose columns are all inside aggregates (an aggregate of
// an empty set gives one row, as PostgreSQL's () set does); the ORDER BY
// keys must be result columns. Anything else — HAVING, DISTINCT, windows,
// a subquery in the select list — is refused.
func (w *writer) groupingSets(s *pg_query.SelectStmt, top bool) {
	if s.HavingClause != nil || len(s.DistinctClause) > 0 || len(s.WindowClause) > 0 || len(s.LockingClause) > 0 ||
		s.GroupDistinct {
		w.refuse("GROUPING SETS, ROLLUP or CUBE with HAVING, DISTINCT, WINDOW, GROUP BY DISTINCT or FOR UPDATE")
	}
	for _, n := range s.SortClause {
		w.checkPosition("ORDER BY", n.GetSortBy().GetNode(), s) // PostgreSQL's 42P10
	}
	sets := [][]*pg_query.Node{nil}
	for _, g := range s.GroupClause {
		var next [][]*pg_query.Node
		for _, a := range sets {
			for _, b := range w.expandGrouping(g) {
				next = append(next, append(append([]*pg_query.Node(nil), a...), b...))
				if len(next) > maxGroupingSets {
					w.refuse("more than %d grouping sets", maxGroupingSets)
				}
			}
		}
		sets = next
	}
	var all []*pg_query.Node
	for _, set := range sets {
		all = append(all, set...)
	}
	in := func(e *pg_query.Node, set []*pg_query.Node) bool {
		for _, x := range set {
			if sameText(x, e) {
				return true
			}
		}
		return false
	}
	for _, t := range s.TargetList {
		v := t.GetResTarget().GetVal()
		switch {
		case v == nil, v.GetColumnRef() != nil && starRef(v.GetColumnRef()):
			w.refuse("GROUPING SETS, ROLLUP or CUBE with * in the select list")
		case in(v, all), v.GetGroupingFunc() != nil:
		case !onlyInAggregates(v):
			w.refuse("GROUPING SETS, ROLLUP or CUBE with a result column that computes with grouping columns (use the column itself)")
		}
	}
	const table = "_shepherd_gs"
	col := func(i int) *pg_query.Node {
		return pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(table), pg_query.MakeStrNode("_shepherd_g" + strconv.Itoa(i+1))}, -1)
	}
	// values are what each member computes: the result columns, then
	// the ORDER BY keys that are none of them.
	var values []*pg_query.Node
	for _, t := range s.TargetList {
		values = append(values, t.GetResTarget().Val)
	}
	outer := &pg_query.SelectStmt{
		WithClause: s.WithClause, LimitCount: s.LimitCount, LimitOffset: s.LimitOffset, LimitOption: s.LimitOption,
		Op: pg_query.SetOperation_SETOP_NONE,
	}
	for i, t := range s.TargetList {
		rt := t.GetResTarget()
		name := rt.Name
		if name == "" {
			name, _ = outputName(rt.Val)
		}
		outer.TargetList = append(outer.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(name, col(i), -1))
	}
	for _, n := range s.SortClause {
		sb := n.GetSortBy()
		if sb.SortbyDir == pg_query.SortByDir_SORTBY_USING || len(sb.UseOp) > 0 {
			w.refuse("ORDER BY ... USING")
		}
		k := -1
		if i, ok := ordinal(sb.Node); ok {
			if i < 1 || i > len(s.TargetList) {
				w.refuse("ORDER BY position %d of a query with GROUPING SETS, ROLLUP or CUBE", i)
			}
			k = i - 1
		} else if sb.Node.GetAConst() != nil {
			w.refuse("ORDER BY a constant") // PostgreSQL fails (42601)
		} else if name, ok := bareName(sb.Node); ok {
			for i, o := range outer.TargetList {
				if o.GetResTarget().Name == name {
					if k >= 0 {
						k = -2 // two result columns of the name
						break
					}
					k = i
				}
			}
		}
		if k == -1 {
			for i, t := range s.TargetList {
				if sameText(t.GetResTarget().Val, sb.Node) {
					k = i
					break
				}
			}
		}
		if k == -1 && (in(sb.Node, all) || sb.Node.GetGroupingFunc() != nil || onlyInAggregates(sb.Node)) {
			k = len(values) // a key that is no result column
			values = append(values, sb.Node)
		}
		if k < 0 {
			w.refuse("GROUPING SETS, ROLLUP or CUBE ordered by other than its result columns, grouping expressions or aggregates")
		}
		outer.SortClause = append(outer.SortClause, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
			Node: col(k), SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, Location: -1}}})
	}
	var union *pg_query.SelectStmt
	for _, set := range sets {
		m := &pg_query.SelectStmt{FromClause: s.FromClause, WhereClause: s.WhereClause, GroupClause: set,
			Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
		for i, v := range values {
			switch {
			case v.GetGroupingFunc() != nil:
				mask := int64(0)
				for _, a := range v.GetGroupingFunc().Args {
					mask <<= 1
					if !in(a, set) {
						mask |= 1
					}
				}
				v = pg_query.MakeAConstIntNode(mask, -1)
			case in(v, all) && !in(v, set):
				v = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
			}
			m.TargetList = append(m.TargetList, pg_query.MakeResTargetNodeWithNameAndVal("_shepherd_g"+strconv.Itoa(i+1), v, -1))
		}
		if union == nil {
			union = m
			continue
		}
		union = &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_UNION, All: true, Larg: union, Rarg: m,
			LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
	}
	outer.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: union}},
		Alias:    &pg_query.Alias{Aliasname: table},
	}}}}
	w.selectStmt(outer, top)
}

// expandGrouping lists the grouping sets one GROUP BY item stands for.
func (w *writer) expandGrouping(n *pg_query.Node) [][]*pg_query.Node {
	elems := func(n *pg_query.Node) []*pg_query.Node {
		if r := n.GetRowExpr(); r != nil {
			return r.Args
		}
		return []*pg_query.Node{n}
	}
	gs := n.GetGroupingSet()
	if gs == nil {
		return [][]*pg_query.Node{elems(n)}
	}
	switch gs.Kind {
	case pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]*pg_query.Node{nil}
	case pg_query.GroupingSetKind_GROUPING_SET_SIMPLE:
		var set []*pg_query.Node
		for _, c := range gs.Content {
			set = append(set, elems(c)...)
		}
		return [][]*pg_query.Node{set}
	case pg_query.GroupingSetKind_GROUPING_SET_ROLLUP:
		var out [][]*pg_query.Node
		for j := len(gs.Content); j >= 0; j-- {
			var set []*pg_query.Node
			for _, c := range gs.Content[:j] {
				set = append(set, elems(c)...)
			}
			out = append(out, set)
		}
		return out
	case pg_query.GroupingSetKind_GROUPING_SET_CUBE:
		if len(gs.Content) > 4 {
			w.refuse("more than %d grouping sets", maxGroupingSets)
		}
		var out [][]*pg_query.Node
		for mask := (1 << len(gs.Content)) - 1; mask >= 0; mask-- {
			var set []*pg_query.Node
			for i, c := range gs.Content {
				if mask&(1<<(len(gs.Content)-1-i)) != 0 {
					set = append(set, elems(c)...)
				}
			}
			out = append(out, set)
		}
		return out
	case pg_query.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]*pg_query.Node
		for _, c := range gs.Content {
			out = append(out, w.expandGrouping(c)...)
			if len(out) > maxGroupingSets {
				w.refuse("more than %d grouping sets", maxGroupingSets)
			}
		}
		return out
	}
	w.refuse("this kind of grouping set")
	return nil
}

// aggregates are the aggregate functions whose arguments may name any
// column of a grouped query.
var aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"string_agg": true, "bool_and": true, "bool_or": true, "every": true}

// onlyInAggregates reports whether every column n names is inside an
// aggregate call (and n has no subquery, which could name others).
func onlyInAggregates(n *pg_query.Node) bool {
	ok := true
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		switch v := m.Interface().(type) {
		case *pg_query.ColumnRef, *pg_query.SubLink:
			ok = false
			return
		case *pg_query.FuncCall:
			if aggregates[schema.FuncName(v)] && v.Over == nil {
				return
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Kind() != protoreflect.MessageKind {
				return true
			}
			if fd.IsList() {
				for i := 0; i < v.List().Len(); i++ {
					visit(v.List().Get(i).Message())
				}
			} else {
				visit(v.Message())
			}
			return ok
		})
	}
	visit(n.ProtoReflect())
	return ok
}

// hasGroupingSets reports whether s groups by GROUPING SETS, ROLLUP or
// CUBE.
func hasGroupingSets(s *pg_query.SelectStmt) bool {
	for _, g := range s.GroupClause {
		if g.GetGroupingSet() != nil {
			return true
		}
	}
	return false
}
