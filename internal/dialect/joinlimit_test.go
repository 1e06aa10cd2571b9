package dialect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// joinOf selects from t1 ... tn joined on a.
func joinOf(n int) string {
	var from, where []string
	for i := 1; i <= n; i++ {
		from = append(from, fmt.Sprintf("t%d", i))
		if i > 1 {
			where = append(where, fmt.Sprintf("t%d.a = t1.a", i))
		}
	}
	return "SELECT t1.a FROM " + strings.Join(from, ", ") + " WHERE " + strings.Join(where, " AND ")
}

// TestJoinLimit: a statement naming more tables than MariaDB (61) or
// SQLite (64) joins is refused with 0A000 for that engine, views counted
// as their tables; up to the limit it is written (select5.test of
// sqllogictest; TestJoinLimitAsPostgres runs the boundary on the engines).
func TestJoinLimit(t *testing.T) {
	var s *schema.Snapshot
	ddl := []string{"CREATE VIEW v31 AS " + joinOf(31), "CREATE VIEW vv AS SELECT v31.a FROM v31, v31 AS w"}
	for i := 65; i >= 1; i-- {
		ddl = append([]string{fmt.Sprintf("CREATE TABLE t%d (a int)", i)}, ddl...)
	}
	for _, q := range ddl {
		next, err := s.Apply(parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	cases := []struct {
		sql          string
		myOK, liteOK bool
		why          string
	}{
		{joinOf(61), true, true, "61 tables"},
		{joinOf(62), false, true, "62 tables"},
		{joinOf(64), false, true, "64 tables"},
		{joinOf(65), false, false, "65 tables"},
		{"SELECT a FROM t1 WHERE a IN (" + joinOf(61) + ")", false, true, "a subquery's tables count"},
		{"SELECT v31.a FROM v31, " + strings.TrimPrefix(joinOf(30), "SELECT t1.a FROM "), true, true, "a view of 31 and 30 tables"},
		{"SELECT v31.a FROM v31, " + strings.TrimPrefix(joinOf(31), "SELECT t1.a FROM "), false, true, "a view of 31 and 31 tables"},
		{"SELECT a FROM vv, t1, t2, t3", false, false, "a view of views of 62, and 3 tables"},
	}
	for _, c := range cases {
		for _, d := range []struct {
			d  driver.Dialect
			ok bool
		}{{driver.MySQL, c.myOK}, {driver.SQLite, c.liteOK}} {
			_, err := Write(parse(t, c.sql), d.d, s)
			switch {
			case d.ok && err != nil:
				t.Errorf("%s on %s: %v", c.why, dialectName(d.d), err)
			case !d.ok && err == nil:
				t.Errorf("%s on %s: written, want 0A000", c.why, dialectName(d.d))
			case !d.ok && (pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "tables (the engine joins at most")):
				t.Errorf("%s on %s: %v, want 0A000 naming the limit", c.why, dialectName(d.d), err)
			}
		}
	}
}
