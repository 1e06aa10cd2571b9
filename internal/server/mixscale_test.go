package server

import (
	"context"
	"strings"
	"testing"
)

// TestMixedScalesAsPostgreSQL (issue 16): in PostgreSQL every numeric
// value keeps its own display scale, so a UNION, VALUES, CASE,
// COALESCE or GREATEST column of an integer and a numeric(8,2) shows 1
// beside 2.50. SQLite answered 2.5, a MariaDB primary 1.00, and on cbs
// a UNION of the two ended in 40001 and took the MariaDB primary out.
// Each such column is answered as PostgreSQL answers it or refused
// (0A000, naming the construct), at top level and through subqueries in
// FROM and WITH queries; a column whose inputs share one scale is
// answered; and the cluster keeps answering afterwards (no replica taken
// out).
func TestMixedScalesAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE ms (k int PRIMARY KEY, i int, n numeric(8,2), m numeric(10,2))",
		"INSERT INTO ms VALUES (1, 1, 2.50, 3.10), (2, 3, NULL, 4.00)",
	}
	mixed := []string{
		"SELECT 1 UNION ALL SELECT 2.50 ORDER BY 1",
		"SELECT i FROM ms UNION SELECT n FROM ms ORDER BY 1",
		"SELECT n FROM ms INTERSECT SELECT i FROM ms",
		"SELECT i FROM ms EXCEPT SELECT n FROM ms ORDER BY 1",
		"SELECT column1 FROM (VALUES (1), (2.50)) v ORDER BY 1",
		"SELECT COALESCE(n, i) FROM ms ORDER BY k",
		"SELECT CASE WHEN k = 1 THEN i ELSE n END FROM ms ORDER BY k",
		"SELECT GREATEST(n, i) FROM ms ORDER BY k",
		"SELECT x FROM (SELECT i AS x FROM ms UNION ALL SELECT n FROM ms) d ORDER BY 1",
		"WITH c AS (SELECT COALESCE(n, i) AS x FROM ms) SELECT x FROM c ORDER BY 1",
		"SELECT - COALESCE(n, i) FROM ms ORDER BY k",
	}
	exact := []string{
		"SELECT n FROM ms WHERE n IS NOT NULL UNION ALL SELECT m FROM ms ORDER BY 1",
		"SELECT COALESCE(n, m) FROM ms ORDER BY k",
		"SELECT i FROM ms UNION SELECT k FROM ms ORDER BY 1",
		"SELECT k FROM ms WHERE COALESCE(n, i) > 2 ORDER BY k",
	}
	ctx := context.Background()
	pg := postgresAlone(t)
	for _, s := range setup {
		if o := runText(ctx, pg, s); o.code != "" {
			t.Fatalf("PostgreSQL: %s: %v", s, o)
		}
	}
	for name, open := range map[string]func() string{
		"mariadb+postgres+sqlite": func() string { addr, _ := start(t, realCluster(t, "cbs")); return addr },
		"embedded":                func() string { addr, _ := start(t, embedded(t)); return addr },
	} {
		sh := shepherdConn(t, open())
		for _, s := range setup {
			if o := runText(ctx, sh, s); o.code != "" {
				t.Fatalf("%s: %s: %v", name, s, o)
			}
		}
		check := func(q string, refusable bool) {
			want, got := runText(ctx, pg, q), runText(ctx, sh, q)
			switch {
			case got.same(want):
			case refusable && got.code == "0A000" && strings.Contains(got.text, "numeric"):
			default:
				t.Errorf("%s: %s\n shepherd:   %v\n PostgreSQL: %v", name, q, got, want)
			}
		}
		for _, q := range mixed {
			check(q, true)
		}
		for _, q := range exact {
			check(q, false)
		}
		// Nothing was taken out: a write and a read still answer.
		if o := runText(ctx, sh, "INSERT INTO ms VALUES (3, 5, 6.25, 7.00)"); o.code != "" {
			t.Errorf("%s: insert after the statements: %v", name, o)
		}
		runText(ctx, pg, "INSERT INTO ms VALUES (3, 5, 6.25, 7.00)")
		check("SELECT k, i, n FROM ms ORDER BY k", false)
		runText(ctx, pg, "DELETE FROM ms WHERE k = 3")
	}
}
