package sqlan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// invalidCursorDefinition is SQLSTATE 42P11.
const invalidCursorDefinition = "42P11"

// cursorInsensitive is PostgreSQL's CURSOR_OPT_INSENSITIVE.
const cursorInsensitive = 0x8

// checkDeclare refuses a DECLARE as PostgreSQL 15's parse analysis does
// (transformDeclareCursorStmt), with its codes and messages: SELECT INTO,
// a data-modifying WITH, and row locks (FOR UPDATE, FOR SHARE, ...) with
// WITH HOLD, SCROLL or INSENSITIVE.
func checkDeclare(d *pg_query.DeclareCursorStmt) error {
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return nil
	}
	if sel.IntoClause != nil {
		return pgerr.New(pgerr.SyntaxError, "SELECT ... INTO is not allowed here")
	}
	if wc := sel.WithClause; wc != nil {
		for _, c := range wc.Ctes {
			if c.GetCommonTableExpr().GetCtequery().GetSelectStmt() == nil {
				return pgerr.New(pgerr.FeatureNotSupported, "DECLARE CURSOR must not contain data-modifying statements in WITH")
			}
		}
	}
	if len(sel.LockingClause) == 0 {
		return nil
	}
	lock := map[pg_query.LockClauseStrength]string{
		pg_query.LockClauseStrength_LCS_FORKEYSHARE:    "FOR KEY SHARE",
		pg_query.LockClauseStrength_LCS_FORSHARE:       "FOR SHARE",
		pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE: "FOR NO KEY UPDATE",
	}[sel.LockingClause[0].GetLockingClause().GetStrength()]
	if lock == "" {
		lock = "FOR UPDATE"
	}
	switch {
	case d.Options&cursorHold != 0:
		return pgerr.New(pgerr.FeatureNotSupported, "DECLARE CURSOR WITH HOLD ... %s is not supported", lock).
			WithDetail("Holdable cursors must be READ ONLY.")
	case d.Options&cursorScroll != 0:
		return pgerr.New(pgerr.FeatureNotSupported, "DECLARE SCROLL CURSOR ... %s is not supported", lock).
			WithDetail("Scrollable cursors must be READ ONLY.")
	case d.Options&cursorInsensitive != 0:
		return pgerr.New(invalidCursorDefinition, "DECLARE INSENSITIVE CURSOR ... %s is not valid", lock).
			WithDetail("Insensitive cursors must be READ ONLY.")
	}
	return nil
}

// forwardOnly reports whether PostgreSQL 15 makes a cursor over q that
// is declared with neither SCROLL nor NO SCROLL a NO SCROLL cursor: it
// does so when the query has row locks (FOR UPDATE) or its plan's top
// node cannot run backward (PerformCursorOpen, ExecSupportsBackwardScan:
// a Result without input, an aggregate, a join, a window, DISTINCT,
// UNION [ALL], INTERSECT, EXCEPT). shepherd has no plan, so it decides from the
// query's shape, and says true only where every plan PostgreSQL could
// choose is of such a kind: no ORDER BY (whose Sort could be on top),
// base tables only in the joins. Elsewhere the cursor scrolls, which
// breaks no program PostgreSQL serves (none scrolls back a cursor
// PostgreSQL would refuse to).
func forwardOnly(q *pg_query.Node) bool {
	sel := q.GetSelectStmt()
	if sel == nil {
		return false
	}
	if len(sel.LockingClause) > 0 {
		return true
	}
	if len(sel.SortClause) > 0 || sel.WithClause != nil {
		return false
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		// UNION, INTERSECT, EXCEPT; UNION ALL too: its branches are
		// each projected by a node that cannot run backward, even two
		// scans of a table (as PostgreSQL 15 answers).
		return true
	}
	if len(sel.ValuesLists) > 0 {
		// A VALUES list of one row is planned as a Result.
		return len(sel.ValuesLists) == 1
	}
	if len(sel.FromClause) == 0 || len(sel.GroupClause) > 0 || sel.HavingClause != nil ||
		len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 {
		return true
	}
	if aggregatesOrWindows(sel.TargetList) {
		return true
	}
	// A join of base tables (the planner removes no inner join of
	// tables in 15).
	tables := 0
	for _, f := range sel.FromClause {
		if !baseTableJoin(f) {
			return false
		}
		tables += countTables(f)
	}
	return tables > 1
}

// baseTableJoin reports whether f is a table, or an inner or cross join
// of such.
func baseTableJoin(f *pg_query.Node) bool {
	if f.GetRangeVar() != nil {
		return true
	}
	j := f.GetJoinExpr()
	if j == nil || j.Jointype != pg_query.JoinType_JOIN_INNER {
		return false
	}
	return baseTableJoin(j.Larg) && baseTableJoin(j.Rarg)
}

func countTables(f *pg_query.Node) int {
	if j := f.GetJoinExpr(); j != nil {
		return countTables(j.Larg) + countTables(j.Rarg)
	}
	return 1
}

// cursorAggregates are the built-in aggregates whose call makes a query
// level an aggregation.
var cursorAggregates = map[string]bool{
	"count": true, "min": true, "max": true, "bool_and": true, "bool_or": true, "every": true,
	"bit_and": true, "bit_or": true, "bit_xor": true, "percentile_cont": true, "percentile_disc": true, "mode": true,
}

// aggregatesOrWindows reports whether the expressions call an aggregate
// or a window function at this query level (not in a subquery).
func aggregatesOrWindows(list []*pg_query.Node) bool {
	found := false
	visit := func(m protoreflect.Message) bool {
		if found {
			return false
		}
		switch x := m.Interface().(type) {
		case *pg_query.SubLink:
			return false
		case *pg_query.FuncCall:
			name := ""
			if n := len(x.Funcname); n > 0 {
				name = strings.ToLower(x.Funcname[n-1].GetString_().GetSval())
			}
			if x.Over != nil || x.AggStar || x.AggWithinGroup || x.AggFilter != nil || len(x.AggOrder) > 0 ||
				cursorAggregates[name] || orderedAggs[name] || floatAggs[name] {
				found = true
				return false
			}
		}
		return true
	}
	for _, n := range list {
		pgtree.Walk(n.ProtoReflect(), visit)
	}
	return found
}

// lockable returns PostgreSQL's error (0A000, its message) for a
// locking clause over a SELECT whose rows are not table rows: a set
// operation, DISTINCT, GROUP BY, HAVING, aggregates or window functions
// (CheckSelectLocking, parseCheckAggregates). The engines lock or drop
// the clause and answer; PostgreSQL refuses the statement.
func lockable(sel *pg_query.SelectStmt) error {
	strength := map[pg_query.LockClauseStrength]string{
		pg_query.LockClauseStrength_LCS_FORKEYSHARE:    "FOR KEY SHARE",
		pg_query.LockClauseStrength_LCS_FORSHARE:       "FOR SHARE",
		pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE: "FOR NO KEY UPDATE",
	}[sel.LockingClause[0].GetLockingClause().GetStrength()]
	if strength == "" {
		strength = "FOR UPDATE"
	}
	refuse := func(what string) error {
		return pgerr.New(pgerr.FeatureNotSupported, "%s is not allowed with %s", strength, what)
	}
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		return refuse("UNION/INTERSECT/EXCEPT")
	case len(sel.DistinctClause) > 0:
		return refuse("DISTINCT clause")
	case len(sel.GroupClause) > 0:
		return refuse("GROUP BY clause")
	case sel.HavingClause != nil:
		return refuse("HAVING clause")
	}
	aggregates, windows := false, false
	for _, list := range [][]*pg_query.Node{sel.TargetList, sel.SortClause} {
		for _, n := range list {
			pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
				switch x := m.Interface().(type) {
				case *pg_query.SubLink:
					return false
				case *pg_query.FuncCall:
					if x.Over != nil {
						windows = true
					} else if isAggregate(x) || averages[schema.FuncName(x)] || schema.FuncName(x) == "sum" {
						aggregates = true
					}
				}
				return true
			})
		}
	}
	switch {
	case aggregates:
		return refuse("aggregate functions")
	case windows || len(sel.WindowClause) > 0:
		return refuse("window functions")
	}
	return nil
}
