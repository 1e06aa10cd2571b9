package pgcatalog

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// viewDef is a view's query as PostgreSQL 15's pg_get_viewdef prints it
// (plain, and pretty: pg_get_viewdef(oid, true)), with its relation
// unqualified; qualified and prettyQualified have it qualified by public
// (what pg_get_viewdef prints when public is not on the search path, as
// under pg_dump). It knows a SELECT from one relation with WHERE, GROUP BY,
// HAVING, ORDER BY and LIMIT; for another form ok is false.
func viewDef(snap *schema.Snapshot, query string) (plain, pretty, qualified, prettyQualified string, ok bool) {
	tree, err := pg_query.Parse(query)
	if err != nil || len(tree.Stmts) != 1 {
		return "", "", "", "", false
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil || len(sel.FromClause) != 1 ||
		len(sel.DistinctClause) > 0 || sel.LimitOffset != nil || len(sel.WindowClause) > 0 || len(sel.LockingClause) > 0 {
		return "", "", "", "", false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Schemaname != "" && rv.Schemaname != "public" || !rv.Inh {
		return "", "", "", "", false
	}
	rel := snap.Table(rv.Relname)
	if rel == nil || rel.View {
		return "", "", "", "", false
	}
	name := rv.Relname
	if rv.Alias != nil {
		if len(rv.Alias.Colnames) > 0 {
			return "", "", "", "", false
		}
		name = rv.Alias.Aliasname
	}
	// Every column reference names the relation, as ruleutils writes
	// them in PostgreSQL 15 (the view's OLD and NEW make two range
	// table entries).
	bad := false
	qualify := func(n *pg_query.Node) *pg_query.Node {
		return mapNodes(n, func(x *pg_query.Node) (*pg_query.Node, bool) {
			if x.GetSubLink() != nil {
				bad = true
				return x, true
			}
			cr := x.GetColumnRef()
			if cr == nil {
				return x, false
			}
			f := strs(cr.Fields)
			if len(f) != len(cr.Fields) || len(f) == 0 || len(f) > 2 || len(f) == 2 && f[0] != name || rel.Column(f[len(f)-1]) == nil {
				bad = true
				return x, true
			}
			cr.Fields = []*pg_query.Node{pg_query.MakeStrNode(name), pg_query.MakeStrNode(f[len(f)-1])}
			return x, true
		})
	}
	colType := func(f []string) string {
		if c := rel.Column(f[len(f)-1]); c != nil {
			return c.Type
		}
		return ""
	}
	var targets []*pg_query.Node // value, then its name
	var names []string
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if cr := rt.GetVal().GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			for _, c := range rel.Columns {
				targets = append(targets, pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(c.Name)}, -1))
				names = append(names, c.Name)
			}
			continue
		}
		n := rt.Name
		if n == "" {
			switch {
			case rt.Val.GetColumnRef() != nil:
				f := strs(rt.Val.GetColumnRef().Fields)
				n = f[len(f)-1]
			case rt.Val.GetFuncCall() != nil:
				n = funcName(rt.Val.GetFuncCall().Funcname)
			default:
				return "", "", "", "", false // PostgreSQL's ?column?
			}
		}
		targets = append(targets, rt.Val)
		names = append(names, n)
	}
	write := func(pretty bool, from string) (string, bool) {
		expr := func(n *pg_query.Node) (string, bool) {
			n = qualify(proto.Clone(n).(*pg_query.Node))
			implicitCasts(n, colType)
			return ruleExpr(n, pretty)
		}
		var b strings.Builder
		b.WriteString(" SELECT ")
		for i, t := range targets {
			s, ok := expr(t)
			if !ok {
				return "", false
			}
			if i > 0 {
				b.WriteString(",\n    ")
			}
			b.WriteString(s)
			if cr := t.GetColumnRef(); cr == nil || strs(cr.Fields)[len(cr.Fields)-1] != names[i] {
				b.WriteString(" AS " + quoteIfNeeded(names[i]))
			}
		}
		b.WriteString("\n   FROM " + from)
		if rv.Alias != nil {
			b.WriteString(" " + quoteIfNeeded(name))
		}
		if sel.WhereClause != nil {
			s, ok := expr(sel.WhereClause)
			if !ok {
				return "", false
			}
			b.WriteString("\n  WHERE " + s)
		}
		if len(sel.GroupClause) > 0 {
			var parts []string
			for _, g := range sel.GroupClause {
				if g.GetAConst() != nil {
					return "", false
				}
				s, ok := expr(g)
				if !ok {
					return "", false
				}
				parts = append(parts, s)
			}
			b.WriteString("\n  GROUP BY " + strings.Join(parts, ", "))
		}
		if sel.HavingClause != nil {
			s, ok := expr(sel.HavingClause)
			if !ok {
				return "", false
			}
			b.WriteString("\n HAVING " + s)
		}
		if len(sel.SortClause) > 0 {
			var parts []string
			for _, o := range sel.SortClause {
				sb := o.GetSortBy()
				// ORDER BY n (the analyser's own, for determinism, or
				// the user's) is not written back as PostgreSQL would.
				if sb == nil || sb.SortbyNulls != pg_query.SortByNulls_SORTBY_NULLS_DEFAULT || len(sb.UseOp) > 0 || sb.Node.GetAConst() != nil {
					return "", false
				}
				s, ok := expr(sb.Node)
				if !ok {
					return "", false
				}
				if sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC {
					s += " DESC"
				}
				parts = append(parts, s)
			}
			b.WriteString("\n  ORDER BY " + strings.Join(parts, ", "))
		}
		if sel.LimitCount != nil {
			c := sel.LimitCount.GetAConst()
			if c == nil || c.GetIval() == nil {
				return "", false
			}
			s, _ := ruleExpr(sel.LimitCount, pretty)
			b.WriteString("\n LIMIT " + s)
		}
		b.WriteString(";")
		return b.String(), !bad
	}
	var ok1, ok2, ok3, ok4 bool
	plain, ok1 = write(false, quoteIfNeeded(rv.Relname))
	pretty, ok2 = write(true, quoteIfNeeded(rv.Relname))
	qualified, ok3 = write(false, "public."+quoteIfNeeded(rv.Relname))
	prettyQualified, ok4 = write(true, "public."+quoteIfNeeded(rv.Relname))
	return plain, pretty, qualified, prettyQualified, ok1 && ok2 && ok3 && ok4
}
