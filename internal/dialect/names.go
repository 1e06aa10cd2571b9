package dialect

import (
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// PostgreSQL reads a bare name in ORDER BY first as the name of a result
// column, implicit names included (id::text is named id, lower(x) is
// named lower), and only then as an input column; in GROUP BY it prefers
// the input column and falls back to a result column's name
// (findTargetlistEntrySQL92 in parse_clause.c). MariaDB and SQLite know
// only the names given with AS, and name other columns by their text,
// so `SELECT id::text FROM t ORDER BY id` sorted by the integer there and
// by the text in PostgreSQL. A bare name PostgreSQL reads as a result
// column that is not that very input column is written as the column's
// position, which every engine reads alike.

// ambiguousColumn is PostgreSQL's SQLSTATE for a name that matches two
// different result columns.
const ambiguousColumn = "42702"

// output is one result column of a SELECT.
type output struct {
	name string
	// expr is the column's expression; a * column is a reference
	// alias.name.
	expr *pg_query.Node
	// plain marks a column that is the input column of the same name.
	plain bool
}

// outputsOf lists the result columns of a SELECT list in the innermost
// scope, * expanded from the schema. known is false when a * cannot be
// expanded (a subquery, a view, a USING join, no scope); the list then
// stops before it.
func (w *writer) outputsOf(targets []*pg_query.Node, scoped bool) (outs []output, known bool) {
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil {
			return outs, false
		}
		cr := rt.Val.GetColumnRef()
		if cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			qual := ""
			if len(cr.Fields) == 2 {
				qual = cr.Fields[0].GetString_().GetSval()
			}
			cols, ok := w.starRefs(qual, scoped)
			if !ok {
				return outs, false
			}
			outs = append(outs, cols...)
			continue
		}
		name, _ := outputName(rt.Val)
		o := output{name: name, expr: rt.Val}
		if rt.Name != "" {
			o.name = rt.Name
		}
		if cr != nil {
			last := cr.Fields[len(cr.Fields)-1].GetString_()
			o.plain = last != nil && last.Sval == o.name
		}
		outs = append(outs, o)
	}
	return outs, true
}

// starRefs lists the columns of * (or qual.*) over the innermost scope as
// qualified references.
func (w *writer) starRefs(qual string, scoped bool) ([]output, bool) {
	if !scoped || len(w.scopes) == 0 {
		return nil, false
	}
	sc := w.scopes[len(w.scopes)-1]
	if sc.merged {
		return nil, false
	}
	var out []output
	for _, it := range sc.items {
		if qual != "" && it.alias != qual {
			continue
		}
		if it.table == nil || it.table.View {
			return nil, false
		}
		for _, c := range it.table.Columns {
			ref := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(it.alias), pg_query.MakeStrNode(c.Name)}, -1)
			out = append(out, output{name: c.Name, expr: ref, plain: true})
		}
	}
	return out, len(out) > 0
}

// outputAt is the expression of result column i (from 1) of a SELECT
// list, nil when it cannot be told.
func (w *writer) outputAt(targets []*pg_query.Node, i int) *pg_query.Node {
	outs, _ := w.outputsOf(targets, true)
	if i < 1 || i > len(outs) {
		return nil
	}
	return outs[i-1].expr
}

// bareName returns the name of an unqualified column reference.
func bareName(n *pg_query.Node) (string, bool) {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
		return "", false
	}
	return cr.Fields[0].GetString_().Sval, true
}

// byOutputName returns the ORDER BY or GROUP BY item n to write: n itself,
// or the position of the result column PostgreSQL reads a bare name as
// when that column is not simply the input column of that name. targets
// is the SELECT list (of a compound's first member when scoped is false).
// Two different result columns of the name fail as in PostgreSQL.
func (w *writer) byOutputName(clause string, n *pg_query.Node, targets []*pg_query.Node, scoped bool) *pg_query.Node {
	name, ok := bareName(n)
	if !ok || targets == nil {
		return n
	}
	if clause == "GROUP BY" {
		if has, known := w.inputColumn(name); has || !known {
			// An input column of the name wins in GROUP BY, as it does
			// in the engines; where shepherd cannot tell, the engines
			// either find it or fail.
			return n
		}
	}
	outs, known := w.outputsOf(targets, scoped)
	match := -1
	for i, o := range outs {
		if o.name != name {
			continue
		}
		if match < 0 {
			match = i
			continue
		}
		m := outs[match]
		if m.plain && o.plain {
			continue // the engines tell whether these are one column
		}
		if !sameText(m.expr, o.expr) {
			w.fail(ambiguousColumn, "%s %q is ambiguous", clause, name)
		}
	}
	if match < 0 || outs[match].plain {
		return n
	}
	if !known {
		w.refuse("%s %s, the name of an unaliased result column, beside a * shepherd cannot expand", clause, name)
	}
	return pg_query.MakeAConstIntNode(int64(match+1), -1)
}

// inputColumn reports whether the innermost scope has an input column of
// the name; known is false when a FROM item's columns are not known.
func (w *writer) inputColumn(name string) (has, known bool) {
	if len(w.scopes) == 0 {
		return false, false
	}
	for _, it := range w.scopes[len(w.scopes)-1].items {
		if it.table == nil || it.table.View {
			return false, false
		}
		if it.table.Column(name) != nil {
			return true, true
		}
	}
	return false, true
}

// sameText compares two expressions ignoring source locations.
func sameText(a, b *pg_query.Node) bool {
	wrap := func(n *pg_query.Node) (string, error) {
		sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(n, -1)}}
		return pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion(), Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	}
	ta, err1 := wrap(a)
	tb, err2 := wrap(b)
	return err1 == nil && err2 == nil && ta == tb
}

// parseVersion is the parse tree version of the linked parser, which
// Deparse wants.
var parseVersion = sync.OnceValue(func() int32 {
	t, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0
	}
	return t.Version
})

// outputName is OutputName read from the tree alone.
func outputName(n *pg_query.Node) (string, int) { return OutputName(n, nil) }

// OutputName is PostgreSQL's FigureColname: the name of an unaliased
// result column, with its strength (2: a column or function name, 1: a
// type name or "case", 0: none, "?column?"). A cast is named by what it
// casts when that has a strong name, else by its type. A scalar subquery
// is named by its only column: subquery, when given, names it (the
// analyser knows the columns of a * or a view), else the tree does.
func OutputName(n *pg_query.Node, subquery func(*pg_query.Node) (string, bool)) (string, int) {
	switch {
	case n == nil:
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		for i := len(f) - 1; i >= 0; i-- {
			if s := f[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		for i := len(ind.Indirection) - 1; i >= 0; i-- {
			if s := ind.Indirection[i].GetString_(); s != nil {
				return s.Sval, 2
			}
		}
		return OutputName(ind.Arg, subquery)
	case n.GetFuncCall() != nil:
		f := n.GetFuncCall().Funcname
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval, 2
		}
	case n.GetAExpr() != nil:
		if n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		name, strength := OutputName(tc.Arg, subquery)
		if strength <= 1 && tc.TypeName != nil && len(tc.TypeName.Names) > 0 {
			if s := tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_(); s != nil {
				return s.Sval, 1
			}
		}
		return name, strength
	case n.GetCollateClause() != nil:
		return OutputName(n.GetCollateClause().Arg, subquery)
	case n.GetGroupingFunc() != nil:
		return "grouping", 2
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg_query.SubLinkType_EXPR_SUBLINK:
			// The subquery's only column's name, whatever it is.
			if subquery != nil {
				if name, ok := subquery(sl.Subselect); ok {
					return name, 2
				}
				return "?column?", 2
			}
			sub := sl.Subselect.GetSelectStmt()
			for sub != nil && sub.Op != pg_query.SetOperation_SETOP_NONE {
				sub = sub.Larg
			}
			if sub != nil && len(sub.TargetList) > 0 {
				if rt := sub.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name, 2
					}
					name, _ := OutputName(rt.Val, nil)
					return name, 2
				}
			}
			return "?column?", 2
		}
	case n.GetCaseExpr() != nil:
		name, strength := OutputName(n.GetCaseExpr().Defresult, subquery)
		if strength <= 1 {
			return "case", 1
		}
		return name, strength
	case n.GetAArrayExpr() != nil:
		return "array", 2
	case n.GetRowExpr() != nil:
		return "row", 2
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_GREATEST {
			return "greatest", 2
		}
		return "least", 2
	case n.GetSqlvalueFunction() != nil:
		if name := sqlValueName(n.GetSqlvalueFunction().Op); name != "" {
			return name, 2
		}
	}
	return "?column?", 0
}

// resultSums lists the sum() calls that are whole result columns of sel
// (a plain SELECT) that no ORDER BY item names, by position or name.
func resultSums(sel *pg_query.SelectStmt) map[*pg_query.FuncCall]bool {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.DistinctClause) > 0 {
		return nil
	}
	var out map[*pg_query.FuncCall]bool
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || len(fc.Funcname) != 1 || fc.Funcname[0].GetString_().GetSval() != "sum" {
			continue
		}
		name := rt.Name
		if name == "" {
			name = "sum"
		}
		sorted := false
		for j, sn := range sel.SortClause {
			n := sn.GetSortBy().GetNode()
			p, ok := ordinal(n)
			b, named := bareName(n)
			// A window's sum differs from row to row: no ORDER BY item
			// before it decides the order for it.
			if (ok && p == i+1 || named && b == name || sameText(n, rt.Val)) && (fc.Over != nil || !decided(sel, j)) {
				sorted = true
			}
		}
		if sorted {
			continue
		}
		if out == nil {
			out = map[*pg_query.FuncCall]bool{}
		}
		out[fc] = true
	}
	return out
}

// decided reports whether the ORDER BY items of sel before the j-th
// leave no ties for it to order: an aggregate query without GROUP BY has
// one row, and rows that agree on every GROUP BY item are one group.
func decided(sel *pg_query.SelectStmt, j int) bool {
	if len(sel.GroupClause) == 0 {
		return true
	}
	for _, g := range sel.GroupClause {
		found := false
		for _, sn := range sel.SortClause[:j] {
			n := sn.GetSortBy().GetNode()
			if p, ok := ordinal(n); ok && p >= 1 && p <= len(sel.TargetList) {
				n = sel.TargetList[p-1].GetResTarget().GetVal()
			}
			if sameText(n, g) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
