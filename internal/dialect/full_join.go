package dialect

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// fullJoinTable names the derived table a FULL JOIN becomes on MariaDB.
const fullJoinTable = "_shepherd_fj"

// fullJoin rewrites, for MariaDB, which has no FULL JOIN, a query whose
// FROM is one FULL JOIN of two tables shepherd knows, ON a condition:
//
//	SELECT ... FROM l FULL JOIN r ON c ...
//
// becomes the same query over the derived table
//
//	(SELECT l.*, r.* FROM l LEFT JOIN r ON c
//	 UNION ALL
//	 SELECT NULL, ..., r.* FROM r WHERE NOT EXISTS (SELECT 1 FROM l WHERE c))
//
// with every column renamed and every reference to l or r rewritten to
// its column there. The first member is every row of l with its matches
// in r (or NULLs); the second every row of r that matches no row of l,
// with NULLs for l: together, the rows of the FULL JOIN (in NOT EXISTS, l
// names the inner table again, so c compares that row with r's). It
// returns nil, and the caller refuses as before, unless the query is that
// simple: no subquery, *, WITH or other FROM item, so that every column
// reference is one of l's or r's. The result needs no other change: the
// derived table's columns keep their tables' types (nullable).
func (w *writer) fullJoin(s *pg_query.SelectStmt) *pg_query.SelectStmt {
	if len(s.FromClause) != 1 || s.WithClause != nil || s.Op != pg_query.SetOperation_SETOP_NONE || len(s.LockingClause) > 0 {
		return nil
	}
	j := s.FromClause[0].GetJoinExpr()
	if j == nil || j.Jointype != pg_query.JoinType_JOIN_FULL || j.Quals == nil || j.IsNatural ||
		len(j.UsingClause) > 0 || j.Alias != nil {
		return nil
	}
	type side struct {
		rv    *pg_query.RangeVar
		alias string
		table *schema.Table
	}
	var sides [2]side
	for i, n := range []*pg_query.Node{j.Larg, j.Rarg} {
		rv := n.GetRangeVar()
		if rv == nil || rv.Schemaname != "" || rv.Catalogname != "" || w.cteTables[rv.Relname] != nil || w.ctes[rv.Relname] {
			return nil
		}
		t := w.schema.Table(rv.Relname)
		if t == nil || t.View || rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
			return nil
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		sides[i] = side{rv, alias, t}
	}
	if sides[0].alias == sides[1].alias {
		return nil
	}
	// Nothing but column references of l and r may name columns.
	simple := true
	walk(s.ProtoReflect(), func(m protoreflect.Message) bool {
		switch v := m.Interface().(type) {
		case *pg_query.SubLink, *pg_query.RangeSubselect, *pg_query.RangeFunction:
			simple = false
		case *pg_query.ColumnRef:
			simple = simple && !starRef(v)
		}
		return simple
	})
	if !simple {
		return nil
	}
	// The derived table's columns: _shepherd_f1... for l's, then r's.
	names := map[[2]string]string{}
	derived := &schema.Table{Name: fullJoinTable}
	member := func(nullLeft bool) *pg_query.SelectStmt {
		m := &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
		k := 0
		for i, sd := range sides {
			for _, c := range sd.table.Columns {
				k++
				name := "_shepherd_f" + strconv.Itoa(k)
				var v *pg_query.Node
				if i == 0 && nullLeft {
					v = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
				} else {
					v = pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(sd.alias), pg_query.MakeStrNode(c.Name)}, -1)
				}
				m.TargetList = append(m.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(name, v, -1))
				if !nullLeft {
					names[[2]string{sd.alias, c.Name}] = name
					derived.Columns = append(derived.Columns, schema.Column{Name: name, Type: c.Type, Mods: c.Mods})
				}
			}
		}
		return m
	}
	left := member(false)
	left.FromClause = []*pg_query.Node{{Node: &pg_query.Node_JoinExpr{JoinExpr: &pg_query.JoinExpr{
		Jointype: pg_query.JoinType_JOIN_LEFT, Larg: j.Larg, Rarg: j.Rarg, Quals: j.Quals}}}}
	right := member(true)
	right.FromClause = []*pg_query.Node{j.Rarg}
	unmatched := &pg_query.SelectStmt{
		TargetList:  []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)},
		FromClause:  []*pg_query.Node{j.Larg},
		WhereClause: j.Quals,
		Op:          pg_query.SetOperation_SETOP_NONE,
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
	}
	exists := &pg_query.Node{Node: &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{
		SubLinkType: pg_query.SubLinkType_EXISTS_SUBLINK,
		Subselect:   &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: unmatched}},
	}}}
	right.WhereClause = pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{exists}, -1)
	union := &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_UNION, All: true, Larg: left, Rarg: right,
		LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
	// The query itself, over the derived table. An unaliased result
	// column keeps the name PostgreSQL gives it; an ORDER BY key that is
	// a result column's name stays that name.
	out := proto.Clone(s).(*pg_query.SelectStmt)
	out.FromClause = nil
	outputs := map[string]bool{}
	for _, t := range out.TargetList {
		if rt := t.GetResTarget(); rt != nil {
			if rt.Name == "" {
				rt.Name, _ = outputName(rt.Val)
			}
			outputs[rt.Name] = true
		}
	}
	keep := map[*pg_query.ColumnRef]bool{}
	for _, n := range out.SortClause {
		if name, ok := bareName(n.GetSortBy().Node); ok && outputs[name] {
			keep[n.GetSortBy().Node.GetColumnRef()] = true
		}
	}
	resolved := true
	walk(out.ProtoReflect(), func(m protoreflect.Message) bool {
		cr, ok := m.Interface().(*pg_query.ColumnRef)
		if !ok || keep[cr] {
			return true
		}
		f := refFields(cr)
		var name string
		switch len(f) {
		case 1:
			for _, sd := range sides {
				if sd.table.Column(f[0]) == nil {
					continue
				}
				if name != "" {
					resolved = false // ambiguous: PostgreSQL fails
				}
				name = names[[2]string{sd.alias, f[0]}]
			}
		case 2:
			name = names[[2]string{f[0], f[1]}]
		}
		if name == "" {
			resolved = false
			return false
		}
		cr.Fields = []*pg_query.Node{pg_query.MakeStrNode(fullJoinTable), pg_query.MakeStrNode(name)}
		return true
	})
	out.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: union}},
		Alias:    &pg_query.Alias{Aliasname: fullJoinTable},
	}}}}
	if !resolved {
		return nil
	}
	if w.derivedTables == nil {
		w.derivedTables = map[string]*schema.Table{}
	}
	w.derivedTables[fullJoinTable] = derived
	return out
}
