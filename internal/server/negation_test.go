package server

import (
	"context"
	"testing"
	"time"
)

// TestNegationRangeAsPostgreSQL: PostgreSQL computes - x, abs(x) and @ x
// in x's own type, so the minimum of int2, int4 or int8 has no negation
// there (22003 "smallint/integer/bigint out of range"); MariaDB and
// SQLite compute in 64 bits and answered 2147483648 for - i with i an
// int4 -2147483648. The result keeps x's type; the check holds inside
// larger expressions, in WHERE and in writes.
func TestNegationRangeAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE neg (k int PRIMARY KEY, i int, s smallint, b bigint)",
		"INSERT INTO neg VALUES (1, -2147483648, -32768, -9223372036854775808), (2, 5, -7, 9), (3, NULL, NULL, NULL)",
	}
	asPostgres(t, setup, []string{
		"SELECT - i FROM neg WHERE k = 1",
		"SELECT -i FROM neg WHERE k = 1",
		"SELECT - s FROM neg WHERE k = 1",
		"SELECT - b FROM neg WHERE k = 1",
		"SELECT - CAST(s AS smallint) FROM neg WHERE k = 1",
		"SELECT - CAST(i AS bigint) FROM neg WHERE k = 1",
		"SELECT abs(i) FROM neg WHERE k = 1",
		"SELECT abs(s) FROM neg WHERE k = 1",
		"SELECT abs(b) FROM neg WHERE k = 1",
		"SELECT @ i FROM neg WHERE k = 1",
		"SELECT 1 + - i FROM neg WHERE k = 1",
		"SELECT - i - 1 FROM neg WHERE k = 1",
		"SELECT - i + 0 FROM neg WHERE k = 1",
		"SELECT - - i FROM neg WHERE k = 1",
		"SELECT -(-2147483648)",
		"SELECT - (-2147483647 - 1)",
		"SELECT - (-9223372036854775807 - 1)",
		"SELECT abs(-9223372036854775807 - 1)",
		"SELECT - CAST(-32768 AS smallint)",
		"SELECT - (-9223372036854775807), - CAST(-32767 AS smallint), abs(CAST(-5 AS bigint))",
		"SELECT k FROM neg WHERE - i > 0",
		"SELECT k FROM neg WHERE - i < 0 AND k = 2",
		"SELECT k, - i, - s, - b, abs(i), abs(s), abs(b), @ i FROM neg WHERE k > 1 ORDER BY k",
		"SELECT - i * 1 FROM neg WHERE k = 2",
		// The siblings: int2 arithmetic stays int2, int8's in 64 bits.
		"SELECT s + s, s * s, s - s FROM neg WHERE k = 2",
		"SELECT s + s FROM neg WHERE k = 1",
		"SELECT s * 2 FROM neg WHERE k = 1",
		"SELECT b - 1 FROM neg WHERE k = 1",
		"SELECT b * -1 FROM neg WHERE k = 1",
		"SELECT b + b FROM neg WHERE k = 2",
		"UPDATE neg SET i = - i WHERE k = 1",
		"UPDATE neg SET s = - s WHERE k = 1",
		"UPDATE neg SET b = - b WHERE k = 1",
		"UPDATE neg SET i = - i, s = - s, b = - b WHERE k = 2",
		"SELECT k, i, s, b FROM neg ORDER BY k",
	}, 20*time.Second)

	// The messages too: the type PostgreSQL names is the operand's.
	failing := map[string]string{
		"SELECT - i FROM neg WHERE k = 1":                       "integer out of range",
		"SELECT - s FROM neg WHERE k = 1":                       "smallint out of range",
		"SELECT - b FROM neg WHERE k = 1":                       "bigint out of range",
		"SELECT abs(s) FROM neg WHERE k = 1":                    "smallint out of range",
		"SELECT abs(b) FROM neg WHERE k = 1":                    "bigint out of range",
		"SELECT @ s FROM neg WHERE k = 1":                       "smallint out of range",
		"SELECT k FROM neg WHERE - s > 0":                       "smallint out of range",
		"UPDATE neg SET b = - b WHERE k = 1":                    "bigint out of range",
		"SELECT - (-9223372036854775807 - 1)":                   "bigint out of range",
		"SELECT s + s FROM neg WHERE k = 1":                     "smallint out of range",
		"SELECT b - 1 FROM neg WHERE k = 1":                     "bigint out of range",
		"SELECT - CAST(s AS smallint) + 1 FROM neg WHERE k = 1": "smallint out of range",
	}
	outOfRangeEverywhere(t, setup, failing)
}

// TestDivisionRangeAsPostgreSQL: PostgreSQL divides integers in the
// operands' type too, so the minimum of int2, int4 or int8 divided by -1
// is out of range there (22003), where MariaDB and SQLite, computing in
// 64 bits, answered 2147483648 (or, for int8, a real on SQLite). x % -1
// is 0 for every x, the minimum too.
func TestDivisionRangeAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE dvr (k int PRIMARY KEY, i int, s smallint, b bigint, m int)",
		"INSERT INTO dvr VALUES (1, -2147483648, -32768, -9223372036854775808, -1), (2, 7, -7, 9, 2), (3, NULL, NULL, NULL, NULL)",
	}
	asPostgres(t, setup, []string{
		"SELECT i / -1 FROM dvr WHERE k = 1",
		"SELECT s / -1 FROM dvr WHERE k = 1",
		"SELECT b / -1 FROM dvr WHERE k = 1",
		"SELECT i / m FROM dvr WHERE k = 1",
		"SELECT s / CAST(m AS smallint) FROM dvr WHERE k = 1",
		"SELECT b / m FROM dvr WHERE k = 1",
		"SELECT CAST(i AS bigint) / -1, i / CAST(-1 AS bigint), s / m FROM dvr WHERE k = 1",
		"SELECT (-2147483647 - 1) / -1",
		"SELECT (-9223372036854775807 - 1) / -1",
		"SELECT CAST(-32768 AS smallint) / CAST(-1 AS smallint)",
		"SELECT k FROM dvr WHERE i / -1 > 0",
		"SELECT k, i / m, s / m, b / m, i / -1, b / -1, i / 2, b / 3 FROM dvr WHERE k > 1 ORDER BY k",
		"SELECT i % -1, s % -1, b % -1, i % m, b % m FROM dvr WHERE k = 1",
		"SELECT (-2147483647 - 1) % -1, CAST(-9223372036854775808 AS bigint) % -1",
		"SELECT i / 1 / m FROM dvr WHERE k = 1",
		"SELECT b / 1 / m FROM dvr WHERE k = 1",
		"SELECT i / 1 / m, b / 3 / m, s / 2 / m FROM dvr WHERE k = 2",
		"UPDATE dvr SET i = i / m WHERE k = 1",
		"UPDATE dvr SET b = b / m WHERE k = 1",
		"UPDATE dvr SET i = i / m, s = s / m, b = b / m WHERE k = 2",
		"SELECT k, i, s, b FROM dvr ORDER BY k",
	}, 20*time.Second)

	failing := map[string]string{
		"SELECT i / -1 FROM dvr WHERE k = 1":                     "integer out of range",
		"SELECT i / m FROM dvr WHERE k = 1":                      "integer out of range",
		"SELECT s / CAST(m AS smallint) FROM dvr WHERE k = 1":    "smallint out of range",
		"SELECT b / -1 FROM dvr WHERE k = 1":                     "bigint out of range",
		"SELECT b / m FROM dvr WHERE k = 1":                      "bigint out of range",
		"SELECT (-9223372036854775807 - 1) / -1":                 "bigint out of range",
		"SELECT CAST(-32768 AS smallint) / CAST(-1 AS smallint)": "smallint out of range",
		"UPDATE dvr SET i = i / m WHERE k = 1":                   "integer out of range",
		"SELECT i / 1 / m FROM dvr WHERE k = 1":                  "integer out of range",
		"SELECT b / 1 / m FROM dvr WHERE k = 1":                  "bigint out of range",
	}
	outOfRangeEverywhere(t, setup, failing)
}

// outOfRangeEverywhere checks that each statement of failing fails with
// 22003 and the message it maps to, after setup, on PostgreSQL alone, on
// a MariaDB+PostgreSQL+SQLite cluster and on the embedded setup: the
// messages name the operand's type as PostgreSQL's do.
func outOfRangeEverywhere(t *testing.T, setup []string, failing map[string]string) {
	t.Helper()
	ctx := context.Background()
	for name, addr := range map[string]func() string{
		"postgres":                func() string { return "" },
		"mariadb+postgres+sqlite": func() string { a, _ := start(t, realCluster(t, "cbs")); return a },
		"embedded":                func() string { a, _ := start(t, embedded(t)); return a },
	} {
		c := postgresAlone(t)
		if a := addr(); a != "" {
			c = shepherdConn(t, a)
		}
		for _, s := range setup {
			runText(ctx, c, s)
		}
		for q, msg := range failing {
			if o := runText(ctx, c, q); o.code != "22003" || o.text != msg {
				t.Errorf("%s: %s: %v; want 22003 %q", name, q, o, msg)
			}
		}
	}
}
