package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestBigintSumsAsPostgreSQL (issue 14): sum() of bigint is numeric in
// PostgreSQL, exact beyond the int64 range; SQLite failed with "integer
// overflow" (MariaDB answers a DECIMAL), even when only a partial sum
// left the range. sum() of int and smallint and count() stay bigint.
// Beyond the range in an expression or a condition SQLite cannot carry
// the value: shepherd_sum fails there with 0A000 (TestSumFunctions).
func TestBigintSumsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE big (k int PRIMARY KEY, g text, b bigint, i int, s smallint)",
		"INSERT INTO big VALUES (1, 'a', 9223372036854775807, 2147483647, 32767), (2, 'a', 9223372036854775807, 2147483647, 32767), " +
			"(3, 'b', -9223372036854775808, -2147483648, -32768), (4, 'b', -9223372036854775808, 1, 1), (5, 'b', -5, NULL, NULL), " +
			"(6, 'c', NULL, NULL, NULL), (7, 'd', 1, 2, 3), (8, 'd', 2, 3, 4)",
	}, []string{
		"SELECT sum(b), sum(i), sum(s), count(b) FROM big",
		"SELECT g, sum(b) FROM big GROUP BY g ORDER BY g",
		"SELECT sum(b) FROM big WHERE k IN (1, 2)",
		"SELECT sum(DISTINCT b) FROM big WHERE k IN (1, 2)",
		"SELECT sum(b) FROM big WHERE k IN (3, 4, 5)",
		"SELECT sum(b) FROM big WHERE k IN (1, 2, 3, 4)",
		"SELECT sum(b) FROM big WHERE k > 100",
		"SELECT sum(b) FROM big WHERE k <> 5 HAVING sum(b) < 100",
		"SELECT sum(b) + 1 FROM big WHERE k IN (1, 2, 3, 4)",
		"SELECT avg(b), sum(b)::text FROM big WHERE k IN (1, 2)",
		"SELECT g, avg(b) FROM big GROUP BY g ORDER BY g",
		"SELECT sum(b) OVER (ORDER BY k) FROM big WHERE k > 6 ORDER BY k",
	}, 20*time.Second)
}

// TestWindowBigintSumsAsPostgreSQL: sum(bigint) over a window is exact on
// SQLite too. SQLite's SUM failed with 22003 as soon as a partial sum
// left the 64-bit range, also where the total was back in it; a total
// beyond the range is answered (as a result column nothing sorts by) with
// PostgreSQL's digits.
func TestWindowBigintSumsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE big (k int PRIMARY KEY, g text, b bigint)",
		"INSERT INTO big VALUES (1, 'a', 9223372036854775807), (2, 'a', 9223372036854775807), " +
			"(3, 'b', -9223372036854775808), (4, 'b', -9223372036854775808), (5, 'b', -5), (6, 'c', NULL), (7, 'd', 1), " +
			"(8, 'e', 9223372036854775807), (9, 'e', 9223372036854775807), (10, 'e', -9223372036854775808)",
	}
	asPostgres(t, setup, []string{
		"SELECT k, sum(b) OVER () FROM big WHERE k < 5 ORDER BY k",
		"SELECT k, sum(b) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM big WHERE k IN (2, 3, 6, 7) ORDER BY k",
		"SELECT k, sum(b) OVER (PARTITION BY g) FROM big WHERE g IN ('c', 'd', 'e') ORDER BY k",
	}, 20*time.Second)

	// Beyond the range, unsorted: compared as sets of rows.
	ctx := context.Background()
	queries := []string{
		"SELECT k, sum(b) OVER (PARTITION BY g ORDER BY k) FROM big",
		"SELECT k, sum(b) OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM big",
	}
	pg := postgresAlone(t)
	for _, s := range setup {
		runText(ctx, pg, s)
	}
	sorted := func(o textOutcome) string {
		rows := make([]string, len(o.rows))
		for i, r := range o.rows {
			rows[i] = strings.Join(r, "|")
		}
		slices.Sort(rows)
		return fmt.Sprint(o.code, o.oids, rows)
	}
	for _, cfg := range []*config.Config{embedded(t), realCluster(t, "cbs")} {
		addr, _ := start(t, cfg)
		sh := shepherdConn(t, addr)
		for _, s := range setup {
			if o := runText(ctx, sh, s); o.code != "" {
				t.Fatalf("%s: %v", s, o)
			}
		}
		for _, q := range queries {
			got, want := runText(ctx, sh, q), runText(ctx, pg, q)
			if sorted(got) != sorted(want) {
				t.Errorf("%s\n shepherd:   %v\n PostgreSQL: %v", q, got, want)
			}
		}
	}
}
