package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// avgSchema has integers of each width and a numeric.
func avgSchema(t *testing.T) *schema.Snapshot {
	t.Helper()
	s, err := (*schema.Snapshot)(nil).Apply(parse(t, "CREATE TABLE t1 (a int, c int, s smallint, b bigint, x numeric(8,2))"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAverageComparisons: an int2/int4 value compared with avg() of
// int2/int4 values, an aggregate or a scalar subquery's, is written as
// e * count(x) op sum(x) with the count checked against avgCountLimit
// (sqllogictest's c > (SELECT avg(c) FROM t1), refused with 0A000
// before).
func TestAverageComparisons(t *testing.T) {
	s := avgSchema(t)
	for _, c := range []struct {
		sql, my, lite string
	}{
		{"SELECT CASE WHEN c > (SELECT avg(c) FROM t1) THEN a * 2 ELSE 0 END FROM t1",
			"SELECT CASE WHEN ((`c` * (SELECT CAST(18446744073509551616 + COUNT(`c`) - 18446744073509551616 AS SIGNED) FROM `t1`)) > (SELECT SUM(`c`) FROM `t1`)) THEN (CAST(18446744071562067968 + (`a` * 2) - 18446744069414584320 AS SIGNED) - 2147483648) ELSE 0 END FROM `t1`",
			`SELECT CASE WHEN (("c" * (SELECT shepherd_single(shepherd_avg_count(COUNT("c")), count(*) OVER ()) FROM "t1")) > (SELECT shepherd_single(SUM("c"), count(*) OVER ()) FROM "t1")) THEN shepherd_int4(("a" * 2)) ELSE 0 END FROM "t1"`},
		// The average on the left: sum(x) op e * count(x).
		{"SELECT a FROM t1 GROUP BY a HAVING avg(DISTINCT s) FILTER (WHERE c > 0) <= a",
			"SELECT `a` FROM `t1` GROUP BY `a` HAVING (SUM(DISTINCT CASE WHEN (`c` > 0) THEN `s` END) <= (`a` * CAST(18446744073509551616 + COUNT(DISTINCT CASE WHEN (`c` > 0) THEN `s` END) - 18446744073509551616 AS SIGNED)))",
			`SELECT "a" FROM "t1" GROUP BY "a" HAVING (SUM(DISTINCT "s") FILTER (WHERE ("c" > 0)) <= ("a" * shepherd_avg_count(COUNT(DISTINCT "s") FILTER (WHERE ("c" > 0)))))`},
		// Under a sign.
		{"SELECT a FROM t1 GROUP BY a HAVING - + avg(c) < - 50",
			"SELECT `a` FROM `t1` GROUP BY `a` HAVING ((-SUM(`c`)) < (-50 * CAST(18446744073509551616 + COUNT(`c`) - 18446744073509551616 AS SIGNED)))",
			`SELECT "a" FROM "t1" GROUP BY "a" HAVING ((-SUM("c")) < (-50 * shepherd_avg_count(COUNT("c"))))`},
		// The average of a constant where its value alone matters.
		{"SELECT NULLIF(1, - avg(DISTINCT - 1)), CAST(- avg(7) AS integer) FROM t1",
			"SELECT NULLIF(1, (-(CASE WHEN COUNT(DISTINCT -1) > 0 THEN -1 END))), (CAST(18446744071562067968 + CAST((-(CASE WHEN COUNT(7) > 0 THEN 7 END)) AS SIGNED) - 18446744069414584320 AS SIGNED) - 2147483648) FROM `t1`",
			`SELECT NULLIF(1, (-(CASE WHEN COUNT(DISTINCT -1) > 0 THEN -1 END))), shepherd_int4(shepherd_numeric((-(CASE WHEN COUNT(7) > 0 THEN 7 END)), 18, 0)) FROM "t1"`},
		// Under arithmetic with NULL the average cannot matter: the
		// engine's own.
		{"SELECT avg(c) * - CAST(NULL AS real), CAST(NULL AS int) / avg(s) FROM t1",
			"SELECT (AVG(`c`) * (-CAST(NULL AS DOUBLE))), (CAST(NULL AS SIGNED) / (CASE WHEN AVG(`s`) = 0 AND CAST(NULL AS SIGNED) IS NOT NULL THEN 18446744073709551615 + (AVG(`s`) + 22012) ELSE AVG(`s`) END)) FROM `t1`",
			`SELECT (AVG("c") * (CAST(NULL AS REAL) * -1)), (CAST(CAST(ROUND(NULL) AS INTEGER) AS REAL) / shepherd_divisor_if(AVG("s"), CAST(ROUND(NULL) AS INTEGER) IS NOT NULL)) FROM "t1"`},
		{"SELECT avg(c) = 3 FROM t1",
			"SELECT (SUM(`c`) = (3 * CAST(18446744073509551616 + COUNT(`c`) - 18446744073509551616 AS SIGNED))) FROM `t1`",
			`SELECT (SUM("c") = (3 * shepherd_avg_count(COUNT("c")))) FROM "t1"`},
	} {
		n := parse(t, c.sql)
		for _, want := range []struct {
			d   driver.Dialect
			sql string
		}{{driver.MySQL, c.my}, {driver.SQLite, c.lite}} {
			f, err := Write(n, want.d, s)
			if err != nil {
				t.Errorf("%s for %v: %v", c.sql, want.d, err)
				continue
			}
			if f.SQL != want.sql {
				t.Errorf("%s for %v:\n got %s\nwant %s", c.sql, want.d, f.SQL, want.sql)
			}
		}
	}
	// Where the comparison may not be PostgreSQL's: averages of bigints
	// (whose quotient may be rounded to no decimals) or numerics, a
	// bigint or numeric compared, a subquery of several rows, a window.
	for _, q := range []string{
		"SELECT 1 FROM t1 WHERE c > (SELECT avg(b) FROM t1)",
		"SELECT 1 FROM t1 WHERE c > (SELECT avg(x) FROM t1)",
		"SELECT 1 FROM t1 WHERE b > (SELECT avg(c) FROM t1)",
		"SELECT 1 FROM t1 WHERE x > (SELECT avg(c) FROM t1)",
		"SELECT 1 FROM t1 WHERE c > (SELECT avg(c) FROM t1 GROUP BY a)",
		"SELECT 1 FROM t1 WHERE c > (SELECT avg(c) FROM t1 LIMIT 1)",
		"SELECT avg(c) OVER () > 2 FROM t1",
		"SELECT avg(c) > 2.5 FROM t1",
		"SELECT avg(c) > avg(a) FROM t1",
		// Beyond 64-bit integers.
		"SELECT avg(2147483647) * 2147483647 * 2147483647 > 0 FROM t1",
		// Not NULL whatever the average: the CASE it decides is the
		// value. (Under a NULL operand, as CAST(NULL AS int) + CASE ...,
		// the whole value is NULL and the engine's own avg() is written:
		// see TestUnseenQuotients.)
		"SELECT 1 + CASE WHEN avg(c) > 2.5 THEN 1 ELSE 0 END FROM t1",
	} {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			_, err := Write(parse(t, q), d, s)
			if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "avg()") {
				t.Errorf("%s for %v: got %v, want 0A000 naming avg()", q, d, err)
			}
		}
	}
}

// TestRoundedAverage: CAST(avg(x) AS integer) of int2/int4 values is
// written as sign(S) * ((2|S| + N) DIV 2N), the count checked (doubled)
// against avgCountLimit, with the target type's range check; avg() of
// other values is refused as before.
func TestRoundedAverage(t *testing.T) {
	s := avgSchema(t) // a int, c int, s smallint, b bigint, x numeric(8,2)
	n := parse(t, "SELECT CAST(avg(c) AS bigint), CAST(- avg(DISTINCT s) AS integer) FROM t1")
	for _, c := range []struct {
		d    driver.Dialect
		want string
	}{
		{driver.MySQL, "SELECT CAST(((CASE WHEN SUM(`c`) < 0 THEN -1 ELSE 1 END) * ((2 * ABS(SUM(`c`)) + COUNT(`c`)) DIV NULLIF(CAST(18446744073509551616 + 2 * COUNT(`c`) - 18446744073509551616 AS SIGNED), 0))) AS SIGNED), " +
			"(CAST(18446744071562067968 + (-CAST(((CASE WHEN SUM(DISTINCT `s`) < 0 THEN -1 ELSE 1 END) * ((2 * ABS(SUM(DISTINCT `s`)) + COUNT(DISTINCT `s`)) DIV NULLIF(CAST(18446744073509551616 + 2 * COUNT(DISTINCT `s`) - 18446744073509551616 AS SIGNED), 0))) AS SIGNED)) - 18446744069414584320 AS SIGNED) - 2147483648) FROM `t1`"},
		{driver.SQLite, `SELECT shepherd_int8(((CASE WHEN SUM("c") < 0 THEN -1 ELSE 1 END) * ((2 * ABS(SUM("c")) + COUNT("c")) / NULLIF(shepherd_avg_count(2 * COUNT("c")), 0)))), ` +
			`shepherd_int4((-((CASE WHEN SUM(DISTINCT "s") < 0 THEN -1 ELSE 1 END) * ((2 * ABS(SUM(DISTINCT "s")) + COUNT(DISTINCT "s")) / NULLIF(shepherd_avg_count(2 * COUNT(DISTINCT "s")), 0))))) FROM "t1"`},
	} {
		f, err := Write(n, c.d, s)
		if err != nil || f.SQL != c.want {
			t.Errorf("for %v: %v\n got %s\nwant %s", c.d, err, f.SQL, c.want)
		}
	}
	for _, sql := range []string{"SELECT CAST(avg(b) AS integer) FROM t1", "SELECT CAST(avg(x) AS integer) FROM t1"} {
		if _, err := Write(parse(t, sql), driver.MySQL, s); err == nil {
			t.Errorf("%s: written, want the refusal of avg()", sql)
		}
	}
}
