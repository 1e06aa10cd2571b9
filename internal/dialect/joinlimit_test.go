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

// chainOf selects from s1 ... sn, whose columns are all named apart
// (ai, bi), joined in a chain bi = a(i+1), as select5.test of
// sqllogictest joins them.
func chainOf(n int) string {
	var cols, from, where []string
	for i := 1; i <= n; i++ {
		cols = append(cols, fmt.Sprintf("b%d", i))
		from = append(from, fmt.Sprintf("s%d", i))
		if i < n {
			where = append(where, fmt.Sprintf("b%d = a%d", i, i+1))
		}
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + strings.Join(from, ", ") + " WHERE a1 = 3 AND " + strings.Join(where, " AND ")
}

// TestSplitJoin: a comma join of more tables than MariaDB joins, whose
// columns are named apart and referenced by bare names, is written for
// MariaDB as a join of derived tables with at most 61 items in each join
// (it was refused with 0A000); where moving a table into a derived table
// could change what a name means (a qualified name, *, a subquery), it is
// refused still. TestSQLLogicSample's join-limit.slt compares the answers
// with PostgreSQL's.
func TestSplitJoin(t *testing.T) {
	var s *schema.Snapshot
	for i := 1; i <= 130; i++ {
		next, err := s.Apply(parse(t, fmt.Sprintf("CREATE TABLE s%d (a%d int PRIMARY KEY, b%d int, x%d text)", i, i, i, i)))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	for _, c := range []struct {
		sql     string
		derived int // derived tables written; -1: refused
	}{
		{chainOf(61), 0},
		{chainOf(62), 1},
		{chainOf(64), 1},
		{chainOf(120), 1},
		{strings.Replace(chainOf(62), "WHERE a1 = 3 AND", "WHERE", 1), 1},
		{strings.Replace(chainOf(62), " AND b5 = a6", "", 1), 1},
		{chainOf(62) + " ORDER BY b1 LIMIT 3", 1},
		{strings.Replace(chainOf(62), "SELECT b1", "SELECT s1.b1", 1), -1},
		{strings.Replace(chainOf(62), "SELECT b1", "SELECT *, b1", 1), -1},
		{strings.Replace(chainOf(62), "a1 = 3", "a1 IN (SELECT a2 FROM s2)", 1), -1},
		{strings.Replace(chainOf(62), "b5 = a6", "b5 < a6", 1), -1},
	} {
		form, err := Write(parse(t, c.sql), driver.MySQL, s)
		switch {
		case c.derived < 0 && err == nil:
			t.Errorf("%.80s...: written, want 0A000", c.sql)
		case c.derived < 0 && pgerr.Code(err) != pgerr.FeatureNotSupported:
			t.Errorf("%.80s...: %v, want 0A000", c.sql, err)
		case c.derived >= 0 && err != nil:
			t.Errorf("%.80s...: %v", c.sql, err)
		case c.derived >= 0 && strings.Count(form.SQL, "AS `shepherd_join_") < c.derived:
			t.Errorf("%.80s...: %d derived tables, want %d: %s", c.sql, strings.Count(form.SQL, "AS `shepherd_join_"), c.derived, form.SQL)
		}
		if err == nil {
			// Every SELECT joins at most 61 tables.
			for i, part := range strings.Split(form.SQL, "SELECT ")[1:] {
				if n := strings.Count(strings.SplitN(part, " WHERE ", 2)[0], "FROM `s") + strings.Count(strings.SplitN(part, " WHERE ", 2)[0], ", `s"); n > 61 {
					t.Errorf("%.80s...: SELECT %d joins %d tables", c.sql, i, n)
				}
			}
		}
	}
}
