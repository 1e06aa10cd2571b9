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
// The check is PostgreSQL's only where it can be sure, and passes a level
// otherwise: every FROM item must be a table shepherd knows or a
// subquery whose columns it can name (no view, function, LATERAL, USING
// or NATURAL join), GROUP BY must list columns,
// output names or positions (a column inside a grouping expression is
// never called ungrouped, as it may be part of a grouped expression),
// subqueries and window clauses are not looked into, and a column that
// does not resolve to exactly one FROM item passes.
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

// groupingLevel checks one query level (see checkGrouping).
func (r *rewriter) groupingLevel(s *pg_query.SelectStmt) error {
	if s.Op != pg_query.SetOperation_SETOP_NONE || len(s.ValuesLists) > 0 || len(s.FromClause) == 0 {
		return nil
	}
	// The FROM items.
	var items []groupItem
	known := true
	var from func(n *pg_query.Node)
	from = func(n *pg_query.Node) {
		if j := n.GetJoinExpr(); j != nil {
			if j.Alias != nil || j.IsNatural || len(j.UsingClause) > 0 {
				known = false
				return
			}
			from(j.Larg)
			from(j.Rarg)
			return
		}
		if rs := n.GetRangeSubselect(); rs != nil {
			cols := subqueryColumns(rs.GetSubquery().GetSelectStmt())
			if rs.Lateral || rs.Alias == nil || len(rs.Alias.Colnames) > 0 || cols == nil {
				known = false
				return
			}
			items = append(items, groupItem{alias: rs.Alias.Aliasname, cols: cols})
			return
		}
		rv := n.GetRangeVar()
		if rv == nil || rv.Schemaname != "" && rv.Schemaname != "public" || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
			known = false
			return
		}
		t := r.schema.Table(rv.Relname)
		if t == nil || t.View {
			known = false
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
		items = append(items, groupItem{alias: alias, cols: cols, key: t.Key})
	}
	for _, n := range s.FromClause {
		from(n)
	}
	if !known {
		return nil
	}
	// resolve finds the FROM item column a reference names; ok is false
	// when it names none or several (an outer query's column, a typo).
	resolve := func(cr *pg_query.ColumnRef) (groupCol, bool) {
		var names []string
		for _, f := range cr.Fields {
			sv := f.GetString_()
			if sv == nil {
				return groupCol{}, false // a star
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
			return groupCol{}, false
		}
		var found groupCol
		n := 0
		for _, it := range items {
			if qual != "" && it.alias != qual {
				continue
			}
			if it.cols[name] {
				found = groupCol{it.alias, name}
				n++
			}
		}
		return found, n == 1
	}
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
		walkMessages(n.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.FuncCall:
				if !isAggregate(x) {
					return true
				}
				here, named := false, false
				walkMessages(x.ProtoReflect(), func(m protoreflect.Message) bool {
					if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
						named = true
						if _, ok := resolve(cr); ok {
							here = true
						}
					}
					return !here
				})
				switch {
				case here || !named:
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
	// What is grouped.
	groupedCols := map[groupCol]bool{}
	inExprs := map[groupCol]bool{} // columns inside grouping expressions
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
	expression := func(n *pg_query.Node) bool {
		ok := true
		walkMessages(n.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				ok = false
			case *pg_query.ColumnRef:
				c, found := resolve(x)
				if !found {
					ok = false
				}
				inExprs[c] = true
			}
			return ok
		})
		return ok
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
		if cr := g.GetColumnRef(); cr != nil {
			c, ok := resolve(cr)
			if !ok && len(cr.Fields) == 1 {
				// Not an input column: an output column's name.
				out := outputs[cr.Fields[0].GetString_().GetSval()]
				if out == nil {
					return nil
				}
				if ocr := out.GetColumnRef(); ocr != nil {
					c, ok = resolve(ocr)
				} else if !expression(out) {
					return nil
				} else {
					continue
				}
			}
			if !ok {
				return nil
			}
			groupedCols[c] = true
			continue
		}
		if !expression(g) {
			return nil
		}
	}
	// A table whose primary key is grouped has all its columns grouped.
	keyed := map[string]bool{}
	for _, it := range items {
		if len(it.key) == 0 {
			continue
		}
		all := true
		for _, k := range it.key {
			all = all && groupedCols[groupCol{it.alias, k}]
		}
		keyed[it.alias] = all
	}
	// The first ungrouped column, in PostgreSQL's order: the select
	// list, ORDER BY, HAVING.
	var bad *groupCol
	check := func(n *pg_query.Node) {
		if n == nil || bad != nil {
			return
		}
		walkMessages(n.ProtoReflect(), func(m protoreflect.Message) bool {
			if bad != nil {
				return false
			}
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.FuncCall:
				if isAggregate(x) {
					return false
				}
			case *pg_query.ColumnRef:
				c, ok := resolve(x)
				if ok && !groupedCols[c] && !inExprs[c] && !keyed[c.alias] {
					bad = &c
				}
			}
			return true
		})
	}
	for _, rt := range s.TargetList {
		check(rt.GetResTarget().GetVal())
	}
	for _, sb := range s.SortClause {
		n := sb.GetSortBy().GetNode()
		if _, ok := position(n); ok {
			continue
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && outputs[cr.Fields[0].GetString_().GetSval()] != nil {
			continue // an output column
		}
		check(n)
	}
	check(s.HavingClause)
	if bad != nil {
		return pgerr.New(groupingError, "column \"%s.%s\" must appear in the GROUP BY clause or be used in an aggregate function", bad.alias, bad.name)
	}
	return nil
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
