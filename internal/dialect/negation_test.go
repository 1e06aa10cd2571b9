package dialect

import (
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestNegationRange: - x, abs(x) and @ x of an int2, int4 or int8 are
// written with PostgreSQL's range check for x's type (the minimum has no
// negation there, 22003), which MariaDB and SQLite, computing in 64 bits
// or turning an overflow into a real or a DECIMAL, lack; other types are
// written as they were. So is int2 and int8 arithmetic.
func TestNegationRange(t *testing.T) {
	s := avgSchema(t) // a int, c int, s smallint, b bigint, x numeric(8,2)
	for _, c := range []struct {
		sql, my, lite string
	}{
		{"SELECT - a FROM t1",
			"SELECT (CAST(18446744071562067968 + (-`a`) - 18446744069414584320 AS SIGNED) - 2147483648) FROM `t1`",
			`SELECT shepherd_int4((-"a")) FROM "t1"`},
		{"SELECT - s, abs(s), @ s FROM t1",
			"SELECT (CAST(18446744073709518848 + (-`s`) - 18446744073709486080 AS SIGNED) - 32768), (CAST(18446744073709518848 + ABS(`s`) - 18446744073709486080 AS SIGNED) - 32768), (CAST(18446744073709518848 + ABS(`s`) - 18446744073709486080 AS SIGNED) - 32768) FROM `t1`",
			`SELECT shepherd_int2((-"s")), shepherd_int2(ABS("s")), shepherd_int2(ABS("s")) FROM "t1"`},
		{"SELECT - b, abs(b) FROM t1",
			"SELECT (-1 * `b`), ABS(`b`) FROM `t1`",
			`SELECT shepherd_int8((-"b")), shepherd_int8(ABS("b")) FROM "t1"`},
		{"SELECT - - a FROM t1 WHERE - a > 0",
			"SELECT (CAST(18446744071562067968 + (-(CAST(18446744071562067968 + (-`a`) - 18446744069414584320 AS SIGNED) - 2147483648)) - 18446744069414584320 AS SIGNED) - 2147483648) FROM `t1` WHERE ((CAST(18446744071562067968 + (-`a`) - 18446744069414584320 AS SIGNED) - 2147483648) > 0)",
			`SELECT shepherd_int4((-shepherd_int4((-"a")))) FROM "t1" WHERE (shepherd_int4((-"a")) > 0)`},
		// Arithmetic: int2's stays int2, int8's is checked on SQLite
		// (MariaDB's BIGINT arithmetic fails by itself).
		{"SELECT s + s, b + 1 FROM t1",
			"SELECT (CAST(18446744073709518848 + (`s` + `s`) - 18446744073709486080 AS SIGNED) - 32768), (`b` + 1) FROM `t1`",
			`SELECT shepherd_int2(("s" + "s")), shepherd_int8(("b" + 1)) FROM "t1"`},
		{"SELECT - x, abs(x), + a FROM t1",
			"SELECT (-`x`), ABS(`x`), (+`a`) FROM `t1`",
			`SELECT (-"x"), ABS("x"), (+"a") FROM "t1"`},
	} {
		n := parse(t, c.sql)
		for _, want := range []struct {
			d   driver.Dialect
			sql string
		}{{driver.MySQL, c.my}, {driver.SQLite, c.lite}, {driver.Postgres, ""}} {
			f, err := Write(n, want.d, s)
			if err != nil {
				t.Errorf("%s for %v: %v", c.sql, want.d, err)
				continue
			}
			if want.sql != "" && f.SQL != want.sql {
				t.Errorf("%s for %v:\n got %s\nwant %s", c.sql, want.d, f.SQL, want.sql)
			}
		}
	}
}

// TestDivisionRange: an integer quotient gets PostgreSQL's range check
// for the operands' type (the minimum / -1 is out of range there, 22003),
// whichever way the division is written: MariaDB's DIV, SQLite's / and
// shepherd_divide (a dividend that may be NULL, of a divisor that may be
// 0). MariaDB's BIGINT division fails by itself; % needs no check.
func TestDivisionRange(t *testing.T) {
	s := avgSchema(t) // a int, c int, s smallint, b bigint, x numeric(8,2)
	for _, c := range []struct {
		sql, my, lite string
	}{
		{"SELECT a / -1, s / s, b / -1 FROM t1",
			"SELECT (CAST(18446744071562067968 + (`a` DIV -1) - 18446744069414584320 AS SIGNED) - 2147483648), (CAST(18446744073709518848 + (`s` DIV (CASE WHEN `s` = 0 AND `s` IS NOT NULL THEN 18446744073709551615 + (`s` + 22012) ELSE `s` END)) - 18446744073709486080 AS SIGNED) - 32768), (`b` DIV -1) FROM `t1`",
			`SELECT shepherd_int4(("a" / -1)), shepherd_int2(("s" / shepherd_divisor_if("s", "s" IS NOT NULL))), shepherd_int8(("b" / -1)) FROM "t1"`},
		{"SELECT a / c, b / a, s / a FROM t1",
			"SELECT (CAST(18446744071562067968 + (`a` DIV (CASE WHEN `c` = 0 AND `a` IS NOT NULL THEN 18446744073709551615 + (`c` + 22012) ELSE `c` END)) - 18446744069414584320 AS SIGNED) - 2147483648), (`b` DIV (CASE WHEN `a` = 0 AND `b` IS NOT NULL THEN 18446744073709551615 + (`a` + 22012) ELSE `a` END)), (CAST(18446744071562067968 + (`s` DIV (CASE WHEN `a` = 0 AND `s` IS NOT NULL THEN 18446744073709551615 + (`a` + 22012) ELSE `a` END)) - 18446744069414584320 AS SIGNED) - 2147483648) FROM `t1`",
			`SELECT shepherd_int4(("a" / shepherd_divisor_if("c", "a" IS NOT NULL))), shepherd_int8(("b" / shepherd_divisor_if("a", "b" IS NOT NULL))), shepherd_int4(("s" / shepherd_divisor_if("a", "s" IS NOT NULL))) FROM "t1"`},
		// shepherd_divide (a dividend that cannot be written twice);
		// no check where the divisor is a constant other than -1 or
		// the dividend one other than int4's minimum.
		{"SELECT a / 1 / c, b / 2 / a FROM t1",
			"SELECT (CAST(18446744071562067968 + ((`a` DIV 1) DIV (CASE WHEN `c` = 0 THEN 18446744073709551615 + (`c` + 22012) ELSE `c` END)) - 18446744069414584320 AS SIGNED) - 2147483648), ((`b` DIV 2) DIV (CASE WHEN `a` = 0 THEN 18446744073709551615 + (`a` + 22012) ELSE `a` END)) FROM `t1`",
			`SELECT shepherd_int4(shepherd_divide(("a" / 1), "c")), shepherd_int8(shepherd_divide(("b" / 2), "a")) FROM "t1"`},
		{"SELECT 7 / c FROM t1",
			"SELECT (7 DIV (CASE WHEN `c` = 0 THEN 18446744073709551615 + (`c` + 22012) ELSE `c` END)) FROM `t1`",
			`SELECT (7 / shepherd_divisor("c")) FROM "t1"`},
		{"SELECT a % -1, b % -1 FROM t1",
			"SELECT (`a` % -1), (`b` % -1) FROM `t1`",
			`SELECT ("a" % -1), ("b" % -1) FROM "t1"`},
	} {
		n := parse(t, c.sql)
		for _, want := range []struct {
			d   driver.Dialect
			sql string
		}{{driver.MySQL, c.my}, {driver.SQLite, c.lite}, {driver.Postgres, ""}} {
			f, err := Write(n, want.d, s)
			if err != nil {
				t.Errorf("%s for %v: %v", c.sql, want.d, err)
				continue
			}
			if f.SQL != want.sql && want.d != driver.Postgres {
				t.Errorf("%s for %v:\n got %s\nwant %s", c.sql, want.d, f.SQL, want.sql)
			}
		}
	}
}

// TestNegatedFloatZero: PostgreSQL's - x of a float zero is -0, which
// MariaDB computes but writes as 0 (and the vote takes for 0): the
// sqllogictest sample's - NULLIF(+ 0, <a real>) answered 0 through a
// MariaDB primary. A negation of a float that is zero whenever it is
// not NULL is refused for MariaDB; SQLite writes -0.0, and other
// negations are written as before.
func TestNegatedFloatZero(t *testing.T) {
	s, err := avgSchema(t).Apply(parse(t, "CREATE TABLE tf (f float8, r real)"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql     string
		refused bool
	}{
		{"SELECT DISTINCT - NULLIF ( + 0, + 96 + CAST ( - + 31 AS REAL ) + + 11 + NULLIF ( 79, - COUNT ( * ) ) ) col0", true},
		{"SELECT - CAST(0 AS REAL), - COALESCE(NULL, 0.0::float8)", true},
		{"SELECT - CASE WHEN f > 1 THEN 0 ELSE CAST(NULL AS float8) END FROM tf", true},
		{"SELECT - f, - r, - NULLIF(f, 0), - CAST(1 AS REAL) FROM tf", false},
		{"SELECT - NULLIF(0, 1), - CAST(0 AS numeric)", false},
		{"SELECT - CAST(NULL AS REAL), - NULLIF(CAST(NULL AS float8), 1)", false},
	} {
		n := parse(t, c.sql)
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite, driver.Postgres} {
			_, err := Write(n, d, s)
			if want := c.refused && d == driver.MySQL; want != (err != nil) {
				t.Errorf("%s for %v: refused %v, want %v (%v)", c.sql, d, err != nil, want, err)
			}
		}
	}
	// SQLite's - x is 0 - x, whose zero is 0: a float is negated as
	// x * -1, whose zero is -0.
	f, err := Write(parse(t, "SELECT - f, - a FROM tf, t1"), driver.SQLite, s)
	if want := `SELECT ("f" * -1), shepherd_int4((-"a")) FROM "tf", "t1"`; err != nil || f.SQL != want {
		t.Errorf("for SQLite: %v %v, want %s", f, err, want)
	}
}
