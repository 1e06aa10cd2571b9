package sqlan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// groupingError is PostgreSQL's SQLSTATE for a column of a grouped query
// that is neither grouped nor aggregated.
const groupingError = "42803"

// checkGrouping fails, as PostgreSQL's parser does (parse_agg.c,
// check_ungrouped_columns), a grouped query level that names a column
// neither in its GROUP BY nor inside an aggregate, in its select list,
// ORDER BY or HAVING. MariaDB and SQLite answer such a query with a value
// of some row of the group, and when they agree they outvote PostgreSQL:
// its replica was taken out (sqllogictest random/groupby, where
// COALESCE(-86, col1) never even reads the column).
//
// As PostgreSQL, an expression equal to a GROUP BY expression (parse
// trees compared without locations, column references by the column
// they resolve to) is grouped, a column inside one is not, and a column
// of the level named in a subquery at any depth is checked too (outside
// an aggregate of the level; PostgreSQL's message is then "subquery uses
// ungrouped column"). Inner levels' columns shadow the level's.
//
// Where a level's FROM items cannot all be named (a view, a function,
// LATERAL, a USING or NATURAL join), a reference is grouped only when it
// is written as a GROUP BY item is; otherwise, as for a subquery's
// reference that may be the level's or an unnamed item's, the statement
// is refused with 0A000 on a cluster with replicas of other engines
// (undecided) and left to PostgreSQL otherwise. Grouping sets and window
// clauses are not checked, and a column that resolves to no FROM item
// (an outer query's, a typo) passes.
func (r *rewriter) checkGrouping(root *pg_query.Node) error {
	var err error
	walk := func(m protoreflect.Message) bool {
		if s, ok := m.Interface().(*pg_query.SelectStmt); ok && err == nil {
			err = r.groupingLevel(s)
		}
		return err == nil
	}
	walkMessages(root.ProtoReflect(), walk)
	return err
}

// walkMessages visits every message under m, depth first, while visit
// says so.
func walkMessages(m protoreflect.Message, visit func(protoreflect.Message) bool) bool {
	if !visit(m) {
		return false
	}
	cont := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && cont; i++ {
				cont = walkMessages(l.Get(i).Message(), visit)
			}
			return cont
		}
		cont = walkMessages(v.Message(), visit)
		return cont
	})
	return cont
}

// groupItem is a FROM item of a level the grouping check can read: a
// table, or a subquery whose output columns it can name.
type groupItem struct {
	alias string
	cols  map[string]bool
	key   []string // the table's primary key
}

// groupCol is a column of a FROM item.
type groupCol struct{ alias, name string }

// isAggregate reports whether a call is an aggregate (of the level it is
// written in: its arguments name this level's columns).
func isAggregate(fc *pg_query.FuncCall) bool {
	if fc.Over != nil {
		return false
	}
	if fc.AggStar || fc.AggDistinct || fc.AggWithinGroup || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return true
	}
	name := schema.FuncName(fc)
	return cursorAggregates[name] || floatAggs[name] || orderedAggs[name] || otherAggs[name]
}

// otherAggs are PostgreSQL 15's built-in aggregates the other lists lack.
var otherAggs = map[string]bool{"regr_count": true, "range_agg": true, "range_intersect_agg": true}

// groupLevel is the FROM items of one query level as the grouping check
// reads them; known is false when some item's columns cannot be named (a
// view, a function, LATERAL, a USING or NATURAL join).
type groupLevel struct {
	items []groupItem
	known bool
	// merged says a USING or NATURAL join (or an aliased join, which
	// may hold one) merges columns: an
	// unqualified name may not be the column a qualified one names.
	merged bool
	// aliases are the names every FROM item goes by (also those whose
	// columns are unknown), nil when some cannot be told: a reference
	// qualified by another name is not this level's.
	aliases map[string]bool
}

// levelItems reads the FROM items of a query level.
func (r *rewriter) levelItems(s *pg_query.SelectStmt) groupLevel {
	lv := groupLevel{known: true, aliases: map[string]bool{}}
	var from func(n *pg_query.Node)
	from = func(n *pg_query.Node) {
		if j := n.GetJoinExpr(); j != nil {
			if j.Alias != nil || j.IsNatural || len(j.UsingClause) > 0 {
				lv.known = false
				lv.merged = true // (an aliased join may hide one)
				if j.Alias != nil {
					lv.aliases[j.Alias.Aliasname] = true
				}
			}
			from(j.Larg)
			from(j.Rarg)
			return
		}
		if rf := n.GetRangeFunction(); rf != nil && rf.Alias != nil && lv.aliases != nil {
			lv.aliases[rf.Alias.Aliasname] = true
		} else if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil && lv.aliases != nil {
			lv.aliases[rs.Alias.Aliasname] = true
		} else if rv := n.GetRangeVar(); rv != nil && lv.aliases != nil {
			if rv.Alias != nil {
				lv.aliases[rv.Alias.Aliasname] = true
			} else {
				lv.aliases[rv.Relname] = true
			}
		} else {
			lv.aliases = nil
		}
		if rs := n.GetRangeSubselect(); rs != nil {
			cols := subqueryColumns(rs.GetSubquery().GetSelectStmt())
			if rs.Lateral || rs.Alias == nil || len(rs.Alias.Colnames) > 0 || cols == nil {
				lv.known = false
				return
			}
			lv.items = append(lv.items, groupItem{alias: rs.Alias.Aliasname, cols: cols})
			return
		}
		rv := n.GetRangeVar()
		if rv == nil || rv.Schemaname != "" && rv.Schemaname != "public" || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
			lv.known = false
			return
		}
		t := r.schema.Table(rv.Relname)
		if t == nil || t.View {
			lv.known = false
			return
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		cols := map[string]bool{}
		for _, c := range t.Columns {
			cols[c.Name] = true
		}
		lv.items = append(lv.items, groupItem{alias: alias, cols: cols, key: t.Key})
	}
	for _, n := range s.FromClause {
		from(n)
	}
	return lv
}

// resolve finds the FROM item column a reference names and how many
// items have it (0: none, an outer query's column or a typo; 2 or more:
// ambiguous); star is true for a star.
func (lv groupLevel) resolve(cr *pg_query.ColumnRef) (c groupCol, n int, star bool) {
	var names []string
	for _, f := range cr.Fields {
		sv := f.GetString_()
		if sv == nil {
			return groupCol{}, 0, true
		}
		names = append(names, sv.Sval)
	}
	var qual, name string
	switch len(names) {
	case 1:
		name = names[0]
	case 2:
		qual, name = names[0], names[1]
	default:
		return groupCol{}, 0, false
	}
	for _, it := range lv.items {
		if qual != "" && it.alias != qual {
			continue
		}
		if it.cols[name] {
			c = groupCol{it.alias, name}
			n++
		}
	}
	return c, n, false
}

// walkSkip visits every message under m, depth first, leaving out the
// messages under one that visit returns false for.
func walkSkip(m protoreflect.Message, visit func(protoreflect.Message) bool) {
	if !visit(m) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkSkip(l.Get(i).Message(), visit)
			}
			return true
		}
		walkSkip(v.Message(), visit)
		return true
	})
}

// sameTree reports whether two parse trees are equal as PostgreSQL's
// equal() compares a grouped expression with a GROUP BY one: locations
// aside, and column references compared by cols.
func sameTree(a, b protoreflect.Message, cols func(x, y *pg_query.ColumnRef) bool) bool {
	if a.Descriptor() != b.Descriptor() {
		return false
	}
	if x, ok := a.Interface().(*pg_query.ColumnRef); ok {
		return cols(x, b.Interface().(*pg_query.ColumnRef))
	}
	fields := a.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Name() == "location" {
			continue
		}
		if a.Has(fd) != b.Has(fd) {
			return false
		}
		if !a.Has(fd) {
			continue
		}
		va, vb := a.Get(fd), b.Get(fd)
		switch {
		case fd.IsMap():
			return false
		case fd.IsList():
			la, lb := va.List(), vb.List()
			if la.Len() != lb.Len() {
				return false
			}
			for j := 0; j < la.Len(); j++ {
				if fd.Kind() == protoreflect.MessageKind {
					if !sameTree(la.Get(j).Message(), lb.Get(j).Message(), cols) {
						return false
					}
				} else if !la.Get(j).Equal(lb.Get(j)) {
					return false
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if !sameTree(va.Message(), vb.Message(), cols) {
				return false
			}
		default:
			if !va.Equal(vb) {
				return false
			}
		}
	}
	return true
}

// undecided is the refusal, on a cluster with replicas of other engines,
// of a grouped query whose columns shepherd cannot tell grouped or not:
// MariaDB and SQLite accept an ungrouped column, and would outvote
// PostgreSQL's 42803.
func undecided() error {
	return pgerr.New(pgerr.FeatureNotSupported, "shepherd cannot tell whether every column of this grouped query is grouped (a view, a USING or NATURAL join, or an outer column in a subquery): name columns as GROUP BY does, or aggregate them")
}

// groupingLevel checks one query level (see checkGrouping).
func (r *rewriter) groupingLevel(s *pg_query.SelectStmt) error {
	if s.Op != pg_query.SetOperation_SETOP_NONE || len(s.ValuesLists) > 0 || len(s.FromClause) == 0 {
		return nil
	}
	lv := r.levelItems(s)
	// Is the level grouped? An aggregate belongs to the level of the
	// columns it reads (PostgreSQL's agglevelsup): one that reads no
	// column of this level but names some belongs to an outer query,
	// and a level with one whose columns do not resolve is passed.
	grouped := len(s.GroupClause) > 0 || s.HavingClause != nil
	unsure := false
	levelAggregate := func(n *pg_query.Node) {
		if n == nil {
			return
		}
		walkSkip(n.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.FuncCall:
				if !isAggregate(x) {
					return true
				}
				here, named := false, false
				walkSkip(x.ProtoReflect(), func(m protoreflect.Message) bool {
					if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
						named = true
						if _, n, _ := lv.resolve(cr); n == 1 {
							here = true
						}
					}
					return !here
				})
				switch {
				case here || !named || !lv.known:
					grouped = true
				default:
					unsure = true
				}
				return false
			}
			return true
		})
	}
	for _, rt := range s.TargetList {
		levelAggregate(rt.GetResTarget().GetVal())
	}
	for _, sb := range s.SortClause {
		levelAggregate(sb.GetSortBy().GetNode())
	}
	if !grouped || unsure {
		return nil
	}
	// What is grouped: columns, and expressions (compared as trees).
	groupedCols := map[groupCol]bool{}
	var groupExprs []*pg_query.Node
	outputs := map[string]*pg_query.Node{}
	for _, rt := range s.TargetList {
		res := rt.GetResTarget()
		if res == nil {
			return nil
		}
		if res.Name != "" {
			outputs[res.Name] = res.Val
		} else if cr := res.Val.GetColumnRef(); cr != nil {
			if sv := cr.Fields[len(cr.Fields)-1].GetString_(); sv != nil {
				outputs[sv.Sval] = res.Val
			}
		}
	}
	for _, g := range s.GroupClause {
		if v, ok := position(g); ok {
			if v < 1 || v > len(s.TargetList) {
				return nil
			}
			g = s.TargetList[v-1].GetResTarget().GetVal()
		}
		if g.GetGroupingSet() != nil {
			return nil
		}
		if cr := g.GetColumnRef(); cr != nil && lv.known {
			if _, n, _ := lv.resolve(cr); n == 0 && len(cr.Fields) == 1 {
				// Not an input column: an output column's name.
				if out := outputs[cr.Fields[0].GetString_().GetSval()]; out != nil {
					g = out
				}
			}
		} else if cr != nil && len(cr.Fields) == 1 {
			// Either an input column or an output expression: both are
			// taken as grouped (the check is then only looser). An
			// output column is compared by name (sameCol).
			if out := outputs[cr.Fields[0].GetString_().GetSval()]; out != nil && out.GetColumnRef() == nil {
				groupExprs = append(groupExprs, out)
			}
		}
		if cr := g.GetColumnRef(); cr != nil && lv.known {
			c, n, _ := lv.resolve(cr)
			if n != 1 {
				return nil
			}
			groupedCols[c] = true
			continue
		}
		groupExprs = append(groupExprs, g)
	}
	// A table whose primary key is grouped has all its columns grouped.
	keyed := map[string]bool{}
	for _, it := range lv.items {
		if len(it.key) == 0 {
			continue
		}
		all := true
		for _, k := range it.key {
			all = all && groupedCols[groupCol{it.alias, k}]
		}
		keyed[it.alias] = all
	}
	sameCol := func(x, y *pg_query.ColumnRef) bool {
		if lv.known {
			cx, nx, _ := lv.resolve(x)
			cy, ny, _ := lv.resolve(y)
			if nx == 1 && ny == 1 {
				return cx == cy
			}
		}
		if len(x.Fields) == len(y.Fields) {
			return sameFields(x, y)
		}
		// x.k and k: unless k is ambiguous (PostgreSQL's 42702) or
		// merged by a join, the same column.
		if lv.merged || len(x.Fields) != 1 && len(y.Fields) != 1 {
			return false
		}
		a, b := x.Fields[len(x.Fields)-1].GetString_(), y.Fields[len(y.Fields)-1].GetString_()
		return a != nil && b != nil && a.Sval == b.Sval
	}
	isGroupExpr := func(n *pg_query.Node) bool {
		for _, g := range groupExprs {
			if sameTree(n.ProtoReflect(), g.ProtoReflect(), sameCol) {
				return true
			}
		}
		return false
	}
	// The first ungrouped column, in PostgreSQL's order: the select
	// list, ORDER BY, HAVING. inner are the levels of the subqueries
	// the walk is in, innermost last: a column they name is theirs.
	var bad *groupCol
	badInner := false // bad is named in a subquery
	undecidable := false
	var check func(n protoreflect.Message, inner []groupLevel)
	// ours reports whether a reference is to this level's column (c
	// then), or undecidable.
	ours := func(cr *pg_query.ColumnRef, inner []groupLevel) (c groupCol, here bool) {
		for i := len(inner) - 1; i >= 0; i-- {
			_, n, star := inner[i].resolve(cr)
			if star || n > 0 {
				return groupCol{}, false
			}
			if !inner[i].known && inner[i].aliases != nil && len(cr.Fields) == 2 && !inner[i].aliases[cr.Fields[0].GetString_().GetSval()] {
				continue // qualified by a name the level does not have
			}
			if !inner[i].known {
				// Perhaps the unknown item's column, perhaps ours.
				if _, n, _ := lv.resolve(cr); n > 0 || !lv.known {
					undecidable = true
				}
				return groupCol{}, false
			}
		}
		c, n, star := lv.resolve(cr)
		if !lv.known {
			if !star {
				undecidable = true
			}
			return groupCol{}, false
		}
		return c, n == 1
	}
	check = func(root protoreflect.Message, inner []groupLevel) {
		walkSkip(root, func(m protoreflect.Message) bool {
			if bad != nil {
				return false
			}
			switch x := m.Interface().(type) {
			case *pg_query.Node:
				if len(inner) == 0 && isGroupExpr(x) {
					return false
				}
			case *pg_query.SelectStmt:
				// A subquery: its own columns shadow ours.
				deeper := append(append([]groupLevel(nil), inner...), r.levelItems(x))
				x.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
					if fd.Kind() != protoreflect.MessageKind {
						return true
					}
					if fd.IsList() {
						l := v.List()
						for i := 0; i < l.Len(); i++ {
							check(l.Get(i).Message(), deeper)
						}
						return true
					}
					check(v.Message(), deeper)
					return true
				})
				return false
			case *pg_query.FuncCall:
				if !isAggregate(x) {
					return true
				}
				if len(inner) == 0 {
					return false
				}
				// A subquery's aggregate reading only this level's
				// columns is this level's.
				mine, theirs := false, false
				walkSkip(x.ProtoReflect(), func(m protoreflect.Message) bool {
					if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
						if _, here := ours(cr, inner); here {
							mine = true
						} else {
							theirs = true
						}
					}
					return true
				})
				return theirs || !mine
			case *pg_query.ColumnRef:
				c, here := ours(x, inner)
				if here && !groupedCols[c] && !keyed[c.alias] {
					bad, badInner = &c, len(inner) > 0
				}
				return false
			}
			return true
		})
	}
	for _, rt := range s.TargetList {
		check(rt.GetResTarget().GetVal().ProtoReflect(), nil)
	}
	for _, sb := range s.SortClause {
		n := sb.GetSortBy().GetNode()
		if _, ok := position(n); ok {
			continue
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && outputs[cr.Fields[0].GetString_().GetSval()] != nil {
			continue // an output column
		}
		check(n.ProtoReflect(), nil)
	}
	if s.HavingClause != nil {
		check(s.HavingClause.ProtoReflect(), nil)
	}
	if bad != nil && badInner {
		return pgerr.New(groupingError, "subquery uses ungrouped column \"%s.%s\" from outer query", bad.alias, bad.name)
	}
	if bad != nil {
		return pgerr.New(groupingError, "column \"%s.%s\" must appear in the GROUP BY clause or be used in an aggregate function", bad.alias, bad.name)
	}
	if undecidable && r.mixedEngines {
		return undecided()
	}
	return nil
}

// sameFields reports whether two column references spell the same names.
func sameFields(x, y *pg_query.ColumnRef) bool {
	for i := range x.Fields {
		a, b := x.Fields[i].GetString_(), y.Fields[i].GetString_()
		if a == nil || b == nil || a.Sval != b.Sval {
			return false
		}
	}
	return true
}

// position reads an integer constant of GROUP BY or ORDER BY: a position
// in the select list.
func position(n *pg_query.Node) (int, bool) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return int(c.GetIval().Ival), true
	}
	return 0, false
}

// subqueryColumns are the names of a subquery's output columns, nil when
// shepherd cannot tell them all (a star, a set operation). An unnamed
// expression's name ("?column?", a function's) is left out: naming it
// outside is rare, and an unresolved name is passed.
func subqueryColumns(s *pg_query.SelectStmt) map[string]bool {
	if s == nil || s.Op != pg_query.SetOperation_SETOP_NONE || len(s.ValuesLists) > 0 {
		return nil
	}
	names := map[string]bool{}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil
		}
		if rt.Name != "" {
			names[rt.Name] = true
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			last := cr.Fields[len(cr.Fields)-1]
			if last.GetAStar() != nil {
				return nil
			}
			names[last.GetString_().GetSval()] = true
		}
	}
	return names
}
