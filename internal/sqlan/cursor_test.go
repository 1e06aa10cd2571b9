package sqlan

import "testing"

// TestCursorScroll: a cursor declared with neither SCROLL nor NO SCROLL
// is forward only where PostgreSQL 15's plan for its query cannot run
// backward whatever plan it picks, and scrolls elsewhere; SCROLL and NO
// SCROLL decide for themselves. TestCursorsAsPostgres checks the same
// shapes against PostgreSQL 15.
func TestCursorScroll(t *testing.T) {
	for _, c := range []struct {
		sql      string
		noScroll bool
	}{
		{"DECLARE c CURSOR FOR SELECT 1", true},
		{"DECLARE c CURSOR FOR SELECT count(*) FROM t", true},
		{"DECLARE c CURSOR FOR SELECT a, sum(b) FROM t GROUP BY a", true},
		{"DECLARE c CURSOR FOR SELECT DISTINCT a FROM t", true},
		{"DECLARE c CURSOR FOR SELECT a, rank() OVER (ORDER BY a) FROM t", true},
		{"DECLARE c CURSOR FOR SELECT a FROM t UNION ALL SELECT a FROM u", true},
		{"DECLARE c CURSOR FOR SELECT t.a FROM t JOIN u ON t.a = u.a", true},
		{"DECLARE c CURSOR FOR SELECT t.a FROM t, u", true},
		{"DECLARE c CURSOR FOR VALUES (1)", true},
		{"DECLARE c CURSOR FOR SELECT a FROM t FOR UPDATE", true},
		{"DECLARE c SCROLL CURSOR FOR SELECT count(*) FROM t", false},
		{"DECLARE c NO SCROLL CURSOR FOR SELECT a FROM t", true},
		{"DECLARE c CURSOR FOR SELECT a FROM t WHERE a > (SELECT count(*) FROM u)", false},
		{"DECLARE c CURSOR FOR SELECT a, (SELECT max(b) FROM u) FROM t", false},
		{"DECLARE c CURSOR FOR SELECT a FROM t", false},
		{"DECLARE c CURSOR FOR SELECT count(*) FROM t ORDER BY 1", false},
		{"DECLARE c CURSOR FOR SELECT t.a FROM t LEFT JOIN u ON t.a = u.a", false},
		{"DECLARE c CURSOR FOR SELECT a FROM (SELECT a FROM t) s", false},
		{"DECLARE c CURSOR FOR VALUES (1), (2)", false},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT a FROM t LIMIT 3", false},
	} {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if got := st.Session.Cursor.NoScroll; got != c.noScroll {
			t.Errorf("%s: NO SCROLL %v, want %v", c.sql, got, c.noScroll)
		}
	}
}
