package server

import (
	"context"
	"strings"
	"testing"
	"time"
)

// avgSetup is TestAverages' table, with values whose averages need all of
// PostgreSQL's digits.
var avgSetup = []string{
	"CREATE TABLE ax (k int PRIMARY KEY, g text, i int, b bigint, n numeric(12,2), m numeric(10,4), f float8)",
	"INSERT INTO ax VALUES " +
		"(1, 'a', 1, 9000000000000000000, 10.25, 0.0001, 1.5), " +
		"(2, 'a', 2, 1, 20.10, 0.0002, 2.5), " +
		"(3, 'a', 4, 2, -3.33, 0.0004, NULL), " +
		"(4, 'b', NULL, NULL, NULL, NULL, NULL), " +
		"(5, 'c', -7, -3, -0.01, 123456.7891, 0.1), " +
		"(6, 'c', 2147483647, 5, 9999999999.99, 0.0001, 0.2), " +
		"(7, 'd', 3, 6, 0.05, 0.0000, 3), " +
		"(8, 'd', 4, 7, 0.06, 0.0005, 4), " +
		"(9, 'd', 4, 7, 0.06, 0.0005, 4)",
}

// TestAveragesInExpressions (issue 14): round(avg(x), n) answered each
// engine's own average rounded (MariaDB four decimals more than its
// operand, SQLite a double), so digits differed or the vote failed with
// 40001. It is now PostgreSQL's quotient rounded by shepherd as
// PostgreSQL rounds it; avg() of floats is left to the engines (floats
// are compared by the vote's float rules).
func TestAveragesInExpressions(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, avgSetup, []string{
		"SELECT g, round(avg(i), 2), round(avg(n)), round(avg(m), 3) AS r FROM ax GROUP BY g ORDER BY g",
		"SELECT round(avg(b), -2), round(avg(b), 0), round(avg(i), 20) FROM ax",
		"SELECT g, round(avg(n), 1) FROM ax GROUP BY g ORDER BY 2, g",
		"SELECT round(avg(i), 3) FROM ax WHERE k IN (1, 2)",
		"SELECT round(avg(m), 2) FROM ax WHERE k = 4",
		"SELECT round(avg(i), 5) FROM ax WHERE k IN (1, 2, 3)",
		"SELECT round(avg(i), 17), round(avg(b), 3) FROM ax WHERE k IN (1, 2, 3)",
		"SELECT round(avg(n), 2), round(avg(n), 3) FROM ax WHERE k IN (7, 8)",
		"SELECT avg(f), sum(f), round(avg(f)::numeric, 2) FROM ax",
		"SELECT g, avg(i) FROM ax GROUP BY g ORDER BY avg(i), g",
		"SELECT avg(DISTINCT i)::numeric(14,3), CAST(avg(n) AS numeric(13,1)) AS c FROM ax",
		"SELECT k, avg(i) OVER (PARTITION BY g), round(avg(i) OVER (ORDER BY k), 2) FROM ax ORDER BY k",
	}, 20*time.Second)
}

// TestAveragesInArithmeticAndVariances (issue 16): avg(x) op c (c a
// constant) and the variance family of int2/int4 values, which were
// refused (0A000), answer PostgreSQL's numeric digits on a cluster with
// MariaDB and SQLite replicas: shepherd computes them from the exact
// sum and count (and sum of squares) every replica returns.
func TestAveragesInArithmeticAndVariances(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, avgSetup, []string{
		"SELECT avg(i) * 2, round(avg(n) / 3, 4), 100 - avg(i), avg(n) + 0.5, avg(m) * 1.5, -2 * avg(b) FROM ax",
		"SELECT g, avg(i) * 2 AS d, avg(n) - 0.005 FROM ax GROUP BY g ORDER BY d DESC, g",
		"SELECT k, avg(i) OVER (PARTITION BY g) + 1 FROM ax ORDER BY k",
		"SELECT stddev(i), stddev_samp(i), stddev_pop(i), variance(i), var_samp(i), var_pop(i) FROM ax",
		"SELECT g, stddev(i), round(var_pop(i), 3), stddev_pop(i) FILTER (WHERE k > 1) FROM ax GROUP BY g ORDER BY g",
		"SELECT k, var_pop(i) OVER (PARTITION BY g) FROM ax ORDER BY k",
	}, 20*time.Second)
}

// TestAveragesInDeeperArithmetic (issue 16): avg() of exact values under
// signs, in + - * with other aggregates, integer expressions and
// constants, and divided by a constant (the sqllogictest sample's most
// common refusal, 0A000 before) answers PostgreSQL's numeric digits:
// shepherd computes the arithmetic from each average's exact sum and
// count and the integer operands' values, which every replica returns.
func TestAveragesInDeeperArithmetic(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, avgSetup, []string{
		"SELECT - avg(i), + avg(n), - (avg(m)), -avg(b) FROM ax",
		"SELECT count(*) + avg(i), 55 * avg(n) - min(i) * max(i), count(*) * - count(*) * avg(-i) FROM ax",
		"SELECT DISTINCT count(*) + avg(i) AS c, (avg(n) + 2) / 3, - avg(m) / -7.5 FROM ax",
		"SELECT k, avg(i) * k - 1 FROM ax GROUP BY k ORDER BY k",
		"SELECT g, - avg(i) * 2 AS a, avg(n) - avg(m) FROM ax GROUP BY g ORDER BY g",
		"SELECT CAST(NULL AS integer) * avg(i), avg(i) + CAST(NULL AS numeric), avg(i) - 1 + 1 FROM ax",
		"SELECT - avg(i), count(*) + avg(n) FROM ax WHERE k > 100",
		"SELECT k, avg(i) OVER (PARTITION BY g) + k, - avg(n) OVER (ORDER BY k) FROM ax ORDER BY k",
	}, 20*time.Second)
}

// TestAveragesRefusedWhereInexact: avg() of exact values anywhere but a
// result column, round(avg(x), n), avg(x) op a constant or an ORDER BY
// item is refused with
// 0A000 naming avg() on a cluster with MariaDB and SQLite replicas
// (each engine computed its own average there), and the session goes on.
func TestAveragesRefusedWhereInexact(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	addr, _ := start(t, realCluster(t, "cbs"))
	sh := shepherdConn(t, addr)
	ctx := context.Background()
	for _, s := range avgSetup {
		if o := runText(ctx, sh, s); o.code != "" {
			t.Fatalf("%s: %v", s, o)
		}
	}
	for _, q := range []string{
		"SELECT avg(i) * f FROM ax GROUP BY f",
		"SELECT coalesce(avg(n), 0) FROM ax",
		"SELECT g FROM ax GROUP BY g HAVING avg(b) > 2 ORDER BY g",
		"SELECT k FROM ax WHERE b > (SELECT avg(i) FROM ax) ORDER BY k",
		"SELECT g FROM ax GROUP BY g ORDER BY avg(n) + 1, g",
		"SELECT avg(i)::numeric(10,2) FROM ax",
		"SELECT k FROM ax WHERE n > (SELECT avg(n) FROM ax) ORDER BY k",
	} {
		o := runText(ctx, sh, q)
		if o.code != "0A000" || !strings.Contains(o.text, "avg()") {
			t.Errorf("%s: %v, want 0A000 naming avg()", q, o)
		}
	}
	if o := runText(ctx, sh, "SELECT round(avg(i), 2) FROM ax"); o.code != "" {
		t.Errorf("after the refusals: %v", o)
	}
}

// avgCompareSetup is TestAverageComparisons' table: groups whose
// averages are integers (a, b: ties with a value), of NULLs only (d),
// near the int4 and int2 limits (c), and fractions (e).
var avgCompareSetup = []string{
	"CREATE TABLE ac (k int PRIMARY KEY, g text, i int, s smallint, b bigint)",
	"INSERT INTO ac VALUES " +
		"(1, 'a', 1, 10, 1), (2, 'a', 2, 20, 2), (3, 'a', 3, 30, 3), " +
		"(4, 'b', -7, -1, 4), (5, 'b', NULL, NULL, 5), (6, 'b', 5, 2, 6), " +
		"(7, 'c', 2147483647, 32767, 7), (8, 'c', 2147483646, 32767, 8), (9, 'c', -2147483648, -32768, 9), " +
		"(10, 'd', NULL, NULL, 10), " +
		"(11, 'e', 4, 4, 11), (12, 'e', 4, 5, 12), (13, 'e', 5, 5, 13)",
}

// TestAverageComparisons (issue 16): an int2/int4 value compared with
// avg() of int2/int4 values, as an aggregate (HAVING, a result column)
// or a scalar subquery's (sqllogictest's CASE WHEN c > (SELECT avg(c)
// FROM t1) ..., 964 records of select1-3 refused with 0A000 before),
// answers as PostgreSQL compares with its rounded numeric average, ties
// (c = avg(c)) and NULLs (no values) included, on every cluster.
func TestAverageComparisons(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, avgCompareSetup, []string{
		"SELECT k, CASE WHEN i > (SELECT avg(i) FROM ac) THEN k * 2 ELSE k * 10 END FROM ac ORDER BY 2, 1",
		"SELECT k FROM ac WHERE i = (SELECT avg(x.i) FROM ac AS x WHERE x.g = ac.g) ORDER BY k",
		"SELECT k, i >= (SELECT avg(x.i) FROM ac AS x WHERE x.g = ac.g), (SELECT avg(x.s) FROM ac AS x WHERE x.g = ac.g) <> s FROM ac ORDER BY k",
		"SELECT g, avg(i) > 2, avg(i) = -1, 4 < avg(s), avg(i) <= min(i), avg(s) >= 2 FROM ac GROUP BY g ORDER BY g",
		"SELECT g FROM ac GROUP BY g HAVING avg(i) >= 2 ORDER BY g",
		"SELECT g FROM ac GROUP BY g HAVING - avg(i) >= -2 OR - + - avg(s) < -1 ORDER BY g",
		"SELECT k FROM ac WHERE - k > - (SELECT avg(i) FROM ac WHERE g IN ('a', 'b', 'e')) ORDER BY k",
		"SELECT k FROM ac WHERE i < (SELECT avg(i) FROM ac WHERE k > 100) ORDER BY k",
		"SELECT k FROM ac WHERE i >= (SELECT avg(DISTINCT i) FILTER (WHERE k < 5) FROM ac) ORDER BY k",
		"SELECT g, count(*) FROM ac GROUP BY g HAVING avg(s) FILTER (WHERE k > 1) < 10 ORDER BY g",
		"SELECT k FROM ac WHERE - i + 1 > (SELECT avg(- i) FROM ac WHERE g <> 'c') ORDER BY k",
		"SELECT CASE WHEN i > (SELECT avg(i) FROM ac WHERE g IN ('a', 'e')) THEN s * 2 ELSE k END FROM ac ORDER BY 1",
		// The average of a constant where only its value matters.
		"SELECT CASE count(*) WHEN avg(13) THEN 'yes' ELSE 'no' END, NULLIF(1, + avg(DISTINCT - - 1)), NULLIF(2, avg(1)), - CAST(avg(+ 50) AS integer), CAST(- + avg(+ + 33) AS integer) * 7, 5 > - avg(- 4) FROM ac",
		"SELECT CASE count(*) WHEN avg(13) THEN 'yes' ELSE 'no' END, NULLIF(1, + avg(DISTINCT - - 1)), - CAST(avg(+ 50) AS integer), 5 > - avg(- 4) FROM ac WHERE k > 100",
		"SELECT CASE + avg(8) FILTER (WHERE k > 12) WHEN 8 THEN 1 END, CASE + avg(8) FILTER (WHERE k > 13) WHEN 8 THEN 1 ELSE 0 END FROM ac",
		"SELECT CASE 10 WHEN avg(54) + - + 44 THEN 'y' END, NULLIF(65, + - avg(ALL + + 23) + - 9), NULLIF(7, 62 * + 48 + (+ avg(DISTINCT 58) + min(k))), CASE - 75 WHEN + avg(14) * + 18 * - + 82 THEN 1 ELSE 0 END, CAST(avg(7) * 88 - k AS integer) FROM ac GROUP BY k ORDER BY 5",
		// Aggregates where PostgreSQL refuses them (42803).
		"SELECT k FROM ac WHERE avg(i) > 2",
		"SELECT k FROM ac WHERE sum(i) > 2",
		"SELECT g FROM ac GROUP BY g HAVING avg(i) > k",
	}, 20*time.Second)
}

// TestAveragesUnderNull (issue 16): avg() of exact values in arithmetic
// with a NULL operand (sqllogictest's AVG(col0) * - CAST(NULL AS REAL)),
// whose value is NULL whatever the average, was refused with 0A000; it
// answers PostgreSQL's NULL, of PostgreSQL's type, on every cluster.
func TestAveragesUnderNull(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, avgSetup, []string{
		"SELECT avg(i) * - CAST(NULL AS real), - CAST(NULL AS numeric) + avg(n), avg(i) / - CAST(NULL AS int) * 69 FROM ax",
		"SELECT CAST(NULL AS int) - - avg(DISTINCT i) * 2, + + CAST(NULL AS numeric) + count(*) * - 78 * avg(DISTINCT b) FROM ax",
		"SELECT g, avg(m) * CAST(NULL AS int), CAST(NULL AS numeric) / avg(i) FROM ax GROUP BY g ORDER BY g",
		"SELECT k FROM ax GROUP BY k HAVING avg(i) * CAST(NULL AS int) > 0 OR k = 1",
	}, 20*time.Second)
}
