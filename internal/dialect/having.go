package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// havingLevel is the query whose HAVING clause the MariaDB writer is
// writing (see having).
type havingLevel struct {
	depth   int             // len(w.scopes) at that query
	grouped map[string]bool // the names of its plain GROUP BY columns
	// refs are its plain GROUP BY columns as written: {qualifier, name},
	// the qualifier "" when there is none.
	refs map[[2]string]bool
	// exprs are its grouping expressions that are not plain columns.
	exprs []*pg_query.Node
}

// having writes the HAVING clause of s. MariaDB resolves a column outside
// an aggregate in HAVING only if it is a plain GROUP BY column (or a
// result column's alias): GROUP BY lower(b) HAVING lower(b) > 'a', or a
// column the primary key groups, fails there with 1054, where PostgreSQL
// takes a subexpression equal to a grouping expression, or a column the
// grouped primary key fixes (sqlan checks 42803 first). Each has one
// value on every row of the group, so MIN() of it stands for it exactly
// (NULL only if all are): such a subexpression is written MIN(expr), and
// such a column MIN(col). A column of a grouping expression is not fixed
// by it — GROUP BY a + b groups rows with different a — so MIN(a) +
// MIN(b) would be wrong; any other column outside an aggregate (one
// PostgreSQL matched to a grouping expression written otherwise, say) is
// refused. Plain GROUP BY columns are left as they are.
func (w *writer) having(s *pg_query.SelectStmt) {
	if !w.my() {
		w.expr(s.HavingClause)
		return
	}
	h := &havingLevel{depth: len(w.scopes), grouped: map[string]bool{}, refs: map[[2]string]bool{}}
	for _, g := range s.GroupClause {
		g = w.byOutputName("GROUP BY", g, s.TargetList, true)
		if v, ok := intConst(g); ok && v >= 1 && int(v) <= len(s.TargetList) {
			g = s.TargetList[v-1].GetResTarget().GetVal()
		}
		if cr := g.GetColumnRef(); cr != nil && len(refFields(cr)) > 0 {
			f := refFields(cr)
			h.grouped[f[len(f)-1]] = true
			if len(f) == 1 {
				h.refs[[2]string{"", f[0]}] = true
			} else {
				h.refs[[2]string{f[len(f)-2], f[len(f)-1]}] = true
			}
		} else if g != nil && g.GetAConst() == nil {
			h.exprs = append(h.exprs, g)
		}
	}
	saved := w.havingAt
	w.havingAt = h
	defer func() { w.havingAt = saved }()
	w.expr(s.HavingClause)
}

// havingGroupExpr writes n as MIN(n) and reports true if n, in the HAVING
// clause being written (or a subquery of it), is one of that query's
// grouping expressions that are not plain columns, all of whose columns
// are that query's (see having).
func (w *writer) havingGroupExpr(n *pg_query.Node) bool {
	h := w.havingAt
	if h == nil || len(h.exprs) == 0 || len(w.scopes) < h.depth || n == nil || n.GetColumnRef() != nil || n.GetAConst() != nil {
		return false
	}
	match := false
	for _, g := range h.exprs {
		if sameText(n, g) {
			match = true
			break
		}
	}
	if !match {
		return false
	}
	walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.SubLink:
			match = false // its own columns may have the names
		case *pg_query.ColumnRef:
			if !w.atHavingLevel(refFields(x)) {
				match = false
			}
		}
		return match
	})
	if !match {
		return false
	}
	w.str("MIN(")
	w.outsideHaving(func() { w.expr(n) })
	w.str(")")
	return true
}

// outsideHaving runs write with no HAVING rewrite: inside an aggregate's
// arguments (of the query or of a subquery) columns are written as they
// are.
func (w *writer) outsideHaving(write func()) {
	saved := w.havingAt
	w.havingAt = nil
	defer func() { w.havingAt = saved }()
	write()
}

// havingMin reports whether the column reference f, being written, is
// one of the HAVING query's own columns that is no plain GROUP BY column
// (see having), there or in a subquery of the clause (MIN() of only an
// outer query's column is that query's aggregate, in MariaDB as in SQL).
// Such a column that the grouped primary key does not fix is refused.
func (w *writer) havingMin(f []string) bool {
	h := w.havingAt
	if h == nil || len(w.scopes) < h.depth || len(f) == 0 || len(f) > 2 || h.grouped[f[len(f)-1]] ||
		!w.atHavingLevel(f) {
		return false
	}
	for _, it := range w.scopes[h.depth-1].items {
		if len(f) == 2 && it.alias != f[0] || len(f) == 1 && (it.table == nil || it.table.Column(f[0]) == nil) {
			continue
		}
		if fixedByKey(it, h.refs) {
			return true
		}
		break
	}
	w.refuse("a column in HAVING outside an aggregate that is neither grouped, nor fixed by a grouped primary key, nor inside an expression written as a GROUP BY expression is (MariaDB)")
	return false
}

// fixedByKey reports whether it has a primary key all of whose columns
// are plain GROUP BY columns (refs, see havingLevel): then each of its
// columns has one value in a group.
func fixedByKey(it scopeItem, refs map[[2]string]bool) bool {
	if it.table == nil || len(it.table.Key) == 0 {
		return false
	}
	for _, k := range it.table.Key {
		if !refs[[2]string{it.alias, k}] && !refs[[2]string{"", k}] {
			return false
		}
	}
	return true
}

// atHavingLevel reports whether the column reference f, being written,
// is one of the HAVING query's own columns, there or in a subquery of the
// clause.
func (w *writer) atHavingLevel(f []string) bool {
	h := w.havingAt
	if h == nil || len(w.scopes) < h.depth || len(f) == 0 || len(f) > 2 {
		return false
	}
	level := h.depth - 1
	for _, sc := range w.scopes[level+1:] {
		if own, maybe := scopeHas(sc, f); own || maybe {
			return false // a subquery's own column, or may be
		}
	}
	own, maybe := scopeHas(w.scopes[level], f)
	if own || !maybe {
		return own
	}
	// Only a FROM item whose columns shepherd does not know may have
	// the name: it is the query's own unless a query around it might
	// have it too (then it may be an outer reference, left as it is).
	for _, sc := range w.scopes[:level] {
		if own, maybe := scopeHas(sc, f); own || maybe {
			return false
		}
	}
	return true
}

// scopeHas reports whether a FROM item of sc has the column f (own), or
// may have it (maybe: an item whose columns shepherd does not know).
func scopeHas(sc scope, f []string) (own, maybe bool) {
	for _, it := range sc.items {
		switch {
		case len(f) == 2 && it.alias == f[0]:
			return true, false
		case len(f) == 1 && it.table == nil:
			maybe = true
		case len(f) == 1 && it.table.Column(f[0]) != nil:
			own = true
		}
	}
	return own, maybe
}

// isAggregateCall reports whether fc is an aggregate of the query it is
// written in.
func isAggregateCall(fc *pg_query.FuncCall) bool {
	return fc.Over == nil && (fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 ||
		aggregates[schema.FuncName(fc)])
}
