package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// havingLevel is the query whose HAVING clause the MariaDB writer is
// writing (see having).
type havingLevel struct {
	depth   int             // len(w.scopes) at that query
	grouped map[string]bool // the names of its plain GROUP BY columns
}

// having writes the HAVING clause of s. MariaDB resolves a column outside
// an aggregate in HAVING only if it is a plain GROUP BY column (or a
// result column's alias): GROUP BY lower(b) HAVING lower(b) > 'a', or a
// column the primary key groups, fails there with 1054, where PostgreSQL
// takes any column of a grouping expression or grouped by the key. Since
// PostgreSQL accepts such a column only where its value, or that of the
// expression around it, is the same on every row of the group (sqlan
// checks 42803 first), MIN(col) stands for it exactly: it is one of the
// group's values (NULL only if all are). Plain GROUP BY columns are left
// as they are.
func (w *writer) having(s *pg_query.SelectStmt) {
	if !w.my() {
		w.expr(s.HavingClause)
		return
	}
	h := &havingLevel{depth: len(w.scopes), grouped: map[string]bool{}}
	for _, g := range s.GroupClause {
		if v, ok := intConst(g); ok && v >= 1 && int(v) <= len(s.TargetList) {
			g = s.TargetList[v-1].GetResTarget().GetVal()
		}
		if cr := g.GetColumnRef(); cr != nil && len(refFields(cr)) > 0 {
			f := refFields(cr)
			h.grouped[f[len(f)-1]] = true
		}
	}
	saved := w.havingAt
	w.havingAt = h
	defer func() { w.havingAt = saved }()
	w.expr(s.HavingClause)
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
func (w *writer) havingMin(f []string) bool {
	h := w.havingAt
	if h == nil || len(w.scopes) < h.depth || len(f) == 0 || len(f) > 2 || h.grouped[f[len(f)-1]] {
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
