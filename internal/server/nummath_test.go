package server

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestNumericMathAsPostgreSQL: PostgreSQL computes exp, ln, log, sqrt and
// power of numeric arguments in numeric, with digits of its own
// (exp(1.0) is 2.7182818284590452, sqrt of numeric 1 is
// 1.000000000000000); MariaDB and SQLite computed them in double
// precision and answered 2.718281828459045 and 1, two replicas outvoting
// PostgreSQL. Each statement answers as PostgreSQL does or is refused
// (0A000 naming the function); the float8 overloads and the exact
// numeric ones (ceil, floor, sign, abs) still answer.
func TestNumericMathAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE nm (k int PRIMARY KEY, n numeric(10,2), f float8, i int)",
		"INSERT INTO nm VALUES (1, 1, 2.5, 4), (2, 3.5, 100, 10)",
	}
	refused := []string{
		"SELECT exp(1.0)",
		"SELECT ln(10.0)",
		"SELECT log(100.0)",
		"SELECT sqrt(2.0)",
		"SELECT power(2, 0.5)",
		"SELECT pow(2.0, 0.5)",
		"SELECT sqrt(n) FROM nm WHERE k = 1",
		"SELECT exp(n * 10) FROM nm WHERE k = 2",
		"SELECT log(n * 10) FROM nm WHERE k = 2",
		"SELECT ln(n) FROM nm WHERE k = 2",
		"SELECT power(n, 2) FROM nm WHERE k = 2",
		"SELECT k FROM nm WHERE sqrt(n) > 1",
	}
	answered := []string{
		"SELECT exp(f), ln(f), sqrt(f), log(f), power(f, 2) FROM nm ORDER BY k",
		"SELECT sqrt(i), exp(i), power(i, 2), power(2, 3) FROM nm ORDER BY k",
		"SELECT ceil(n), floor(n), ceiling(n), sign(n), abs(n) FROM nm ORDER BY k",
		"SELECT ceil(-2.5), floor(-2.5), sign(-2.50), abs(-2.50)",
		"SELECT sqrt(CAST(2 AS float8)), exp(CAST(1 AS float8))",
	}
	pg := postgresAlone(t)
	ctx := context.Background()
	for _, s := range setup {
		if o := runText(ctx, pg, s); o.code != "" {
			t.Fatalf("PostgreSQL: %s: %v", s, o)
		}
	}
	want := map[string]textOutcome{}
	for _, q := range append(append([]string(nil), refused...), answered...) {
		want[q] = runText(ctx, pg, q)
		if want[q].code != "" {
			t.Fatalf("PostgreSQL: %s: %v", q, want[q])
		}
	}
	for name, open := range map[string]func() string{
		"mariadb+postgres+sqlite": func() string { a, _ := start(t, realCluster(t, "cbs")); return a },
		"embedded":                func() string { a, _ := start(t, embedded(t)); return a },
	} {
		sh := shepherdConn(t, open())
		for _, s := range setup {
			if o := runText(ctx, sh, s); o.code != "" {
				t.Fatalf("%s: %s: %v", name, s, o)
			}
		}
		for _, q := range refused {
			got := runText(ctx, sh, q)
			fn := q[len("SELECT "):strings.IndexByte(q, '(')]
			if strings.Contains(q, "WHERE sqrt") {
				fn = "sqrt"
			}
			if got.same(want[q]) {
				continue // exact as PostgreSQL's: fine too
			}
			if got.code != "0A000" || !strings.Contains(got.text, fn+"()") {
				t.Errorf("%s: %s\n shepherd:   %v\n PostgreSQL: %v (or 0A000 naming %s())", name, q, got, want[q], fn)
			}
		}
		for _, q := range answered {
			if got := runText(ctx, sh, q); !got.same(want[q]) {
				t.Errorf("%s: %s\n shepherd:   %v\n PostgreSQL: %v", name, q, got, want[q])
			}
		}
	}
}

// TestLongNumericConstantsAsPostgreSQL: SQLite reads a numeric constant
// as a double, so one of more than 15 significant digits lost its last
// ones (99999999999999999999999999999.9 * 1 answered
// 100000000000000000000000000000.0 on the embedded setup). Such
// constants answer as PostgreSQL does or are refused (0A000).
func TestLongNumericConstantsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	queries := []string{
		"SELECT 99999999999999999999999999999.9 * 1",
		"SELECT 99999999999999999999999999999.9",
		"SELECT 1234567890.123456789 + 1",
		"SELECT 0.1234567890123456789 * 2",
		"SELECT 12345678901234567890 - 1",
	}
	answered := []string{
		"SELECT 1.5 * 2, 0.000000000000000000000125 * 2, 9223372036854775807 - 1, 123456789012.345 + 1",
		// Stored into or cast to numeric(p,s): rounded exactly.
		"SELECT CAST(0.124999999999999999 AS numeric(10,2)), CAST(-9223372036854775807 AS numeric(19,0))",
		"SELECT CAST(0.1234567890123456789 AS float8), 99.49001287680001::float8 * 2",
		"INSERT INTO lc VALUES (1, 0.124999999999999999), (2, 99.49001287680001)",
		"SELECT k, v FROM lc ORDER BY k",
	}
	const setup = "CREATE TABLE lc (k int PRIMARY KEY, v numeric(10,2))"
	pg := postgresAlone(t)
	ctx := context.Background()
	for name, open := range map[string]func() string{
		"mariadb+postgres+sqlite": func() string { a, _ := start(t, realCluster(t, "cbs")); return a },
		"embedded":                func() string { a, _ := start(t, embedded(t)); return a },
	} {
		sh := shepherdConn(t, open())
		for _, c := range []*pgconn.PgConn{pg, sh} {
			runText(ctx, c, "DROP TABLE IF EXISTS lc")
			if o := runText(ctx, c, setup); o.code != "" {
				t.Fatalf("%s: %s: %v", name, setup, o)
			}
		}
		for _, q := range queries {
			got, want := runText(ctx, sh, q), runText(ctx, pg, q)
			if !got.same(want) && got.code != "0A000" {
				t.Errorf("%s: %s\n shepherd:   %v\n PostgreSQL: %v (or 0A000)", name, q, got, want)
			}
		}
		for _, q := range answered {
			if got, want := runText(ctx, sh, q), runText(ctx, pg, q); !got.same(want) {
				t.Errorf("%s: %s\n shepherd:   %v\n PostgreSQL: %v", name, q, got, want)
			}
		}
	}
}
