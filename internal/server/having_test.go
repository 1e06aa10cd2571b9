package server

import (
	"testing"
	"time"
)

// TestHavingGroupingExpressionAsPostgreSQL: PostgreSQL takes, in HAVING
// outside an aggregate, a subexpression equal to a grouping expression
// (its value is the group's) and a column the grouped primary key fixes.
// MariaDB's writer wrote each such column as MIN(col), which is wrong
// where the grouping expression has several columns: GROUP BY a + b
// HAVING a + b > 2 became MIN(a) + MIN(b) > 2, dropped a group MariaDB
// alone, and took MariaDB out. The whole expression is now MIN(a + b).
func TestHavingGroupingExpressionAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE hv (k int PRIMARY KEY, a int, b int, c text)",
		"INSERT INTO hv VALUES (1, 1, 2, 'X'), (2, 2, 1, 'x'), (3, 5, 5, 'y'), (4, NULL, 3, NULL)",
		"CREATE TABLE hu (v int)",
		"INSERT INTO hu VALUES (3), (10), (10)",
	}
	asPostgres(t, setup, []string{
		"SELECT a + b FROM hv GROUP BY a + b HAVING a + b > 2 ORDER BY 1",
		"SELECT a * b FROM hv GROUP BY a * b HAVING a * b > 1 ORDER BY 1",
		"SELECT count(*) FROM hv GROUP BY a + b HAVING a + b = 3",
		"SELECT count(*) FROM hv GROUP BY a + b HAVING (a + b) * 2 > 4 ORDER BY 1",
		"SELECT count(*) FROM hv GROUP BY a + b HAVING a + b IS NULL",
		"SELECT count(*) FROM hv GROUP BY 1 + a + b HAVING 1 + a + b > 4 ORDER BY 1",
		"SELECT count(*) FROM hv GROUP BY lower(c) HAVING lower(c) > 'a' ORDER BY 1",
		"SELECT count(*) FROM hv GROUP BY lower(c) HAVING lower(c) IS NULL",
		"SELECT a + b, count(*) FROM hv GROUP BY a + b, k HAVING a + b > 2 AND k > 1 ORDER BY 1",
		"SELECT k FROM hv GROUP BY k HAVING a + b > 2 ORDER BY 1",
		"SELECT upper(c) FROM hv GROUP BY k HAVING c IS NULL OR c > 'x' ORDER BY 1",
		"SELECT a + b FROM hv GROUP BY a + b HAVING EXISTS (SELECT 1 FROM hu WHERE hu.v = a + b) ORDER BY 1",
		"SELECT a + b FROM hv GROUP BY a + b HAVING (SELECT count(*) FROM hu WHERE hu.v <= a + b) > 1 ORDER BY 1",
		"SELECT a + b FROM hv GROUP BY a + b HAVING max(a) > 1 AND a + b > 2 ORDER BY 1",
	}, 20*time.Second)
}
