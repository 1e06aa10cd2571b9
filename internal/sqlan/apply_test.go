package sqlan

import "testing"

// TestApplySetval: SELECT setval(...) whose arguments a query computes is
// answered by running that query on the replicas (Inner) and calling
// setval per row; with constant arguments it stays a plain call, and
// pg_get_serial_sequence() is left to shepherd's catalog.
func TestApplySetval(t *testing.T) {
	for _, c := range []struct{ sql, op, inner string }{
		{`SELECT setval(pg_get_serial_sequence('"t"','id'), coalesce(max("id"), 1), max("id") IS NOT null) FROM "t"`, "apply",
			"SELECT COALESCE(max(id), 1), max(id) IS NOT NULL FROM t"},
		{"SELECT setval('s', (SELECT max(id) FROM t))", "apply", "SELECT (SELECT max(id) FROM t)"},
		{"SELECT setval('s', max(v)) AS x FROM t WHERE v < $2", "apply", "SELECT max(v) FROM t WHERE v < $1"},
		{"SELECT setval(pg_get_serial_sequence('t', 'id'), 5)", "apply", "SELECT 1"},
		{"SELECT setval('s', 5, false)", "select", ""},
	} {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if st.Kind != Local || st.Session.Op != c.op {
			t.Errorf("%s: kind %s op %+v, want local %s", c.sql, st.Kind, st.Session, c.op)
			continue
		}
		if c.inner != "" && (st.Inner == nil || st.Inner.SQL != c.inner) {
			t.Errorf("%s: inner %v, want %s", c.sql, st.Inner, c.inner)
		}
	}
	st, err := ParseOne("SELECT setval('s', max(v)) AS x FROM t WHERE v < $2")
	if err == nil && (len(st.Session.ApplyParams) != 1 || st.Session.ApplyParams[0] != 2 || st.Session.Calls[0].Column.Name != "x") {
		t.Errorf("params %v, column %q", st.Session.ApplyParams, st.Session.Calls[0].Column.Name)
	}
}
