package dialect

import (
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
	if limit, ok := joinLimits[w.d]; ok && w.tables > limit {
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
