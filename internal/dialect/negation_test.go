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
