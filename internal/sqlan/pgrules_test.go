package sqlan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// pgRulesSchema and pgRulesCases: statements PostgreSQL refuses where
// MariaDB and SQLite do not (and near misses it accepts), for
// TestPostgresRulesOnPostgres.
var pgRulesSchema = []string{
	"CREATE TABLE t (id int PRIMARY KEY, a int, s text, vc varchar(5), b bool, d date, ts timestamptz, n numeric, f float8)",
	"INSERT INTO t VALUES (1, 1, 'x', 'y', true, '2020-01-01', '2020-01-01 00:00:00+00', 1.5, 1.5)",
	"CREATE TABLE u (id int PRIMARY KEY, s text)",
	"CREATE VIEW v1 AS SELECT id, s FROM t",
	"CREATE VIEW v2 AS SELECT x.id FROM v1 x JOIN u USING (id)",
	"CREATE VIEW v3 AS WITH u AS (SELECT 1 AS id) SELECT id FROM u",
}

var pgRulesCases = []string{
	// Prefix operators.
	"SELECT +s FROM t",
	"SELECT -s FROM t",
	"SELECT +vc, 1 FROM t",
	"SELECT id FROM t WHERE +b",
	"SELECT +d FROM t",
	"SELECT +ts FROM t",
	"SELECT +t.s FROM t",
	"SELECT +x.s FROM t x",
	"SELECT +s::text FROM t",
	"SELECT -'1'::varchar",
	"SELECT +'abc'",
	"SELECT -'1'",
	"SELECT +'1', +' 2.5 '",
	"SELECT +a, -n, +f, -id FROM t",
	"SELECT (SELECT +s FROM u LIMIT 1) FROM t",
	"SELECT +s FROM t, u",                // ambiguous: PostgreSQL's own 42702
	"SELECT +s FROM t JOIN u USING (id)", // ambiguous too
	"SELECT +s FROM (SELECT 1 AS s) x",   // a subquery's integer
	"SELECT -a FROM t ORDER BY -a",
	"UPDATE t SET a = 2 WHERE -vc = 'y'",
	// Arithmetic on strings and booleans.
	"SELECT s + 1 FROM t",
	"SELECT 1 - vc FROM t",
	"SELECT s * a, 1 FROM t",
	"SELECT b + 1 FROM t",
	"SELECT s || 1, a + 1, d - 1, d + 1, d - d, ts - ts FROM t",
	"SELECT s::text % 2.5 FROM t",
	"SELECT s + s FROM t",
	"UPDATE t SET a = s / 2",
	"SELECT n + 9223372036854775807, f * 2, a / 2.0 FROM t",
	"SELECT s + '1' FROM t",
	"SELECT '1' - b FROM t",
	"SELECT a + '1' FROM t",
	// Constants PostgreSQL folds while planning.
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 2147483647 + 1 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 9223372036854775807 + 1 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 1/0 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 2147483647 * 2 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE -2147483648 - 1 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 5 % 0 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE '99999999999'::int END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE ' 40000 '::smallint END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 99999999999::int END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 32767::int2 + 1::int2 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE abs(-2147483648) END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE -(-2147483648) END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE (2147483647 + 1)::bigint END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE 2147483647::bigint + 1 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1.0 ELSE 1.0/0 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1.0 ELSE 1/0.0 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE -2147483648 / -1 END FROM t",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE -2147483648 % -1 END FROM t",
	"SELECT 1 FROM t WHERE a = 2147483647 + 1",
	"SELECT 1 FROM t WHERE false AND a = 1/0",
	"SELECT id FROM t WHERE a > 5 AND 1/0 = 1",
	"INSERT INTO t (id, a) VALUES (2, 2147483647 + 1)",
	"UPDATE t SET a = CASE WHEN a > 0 THEN 1 ELSE 9223372036854775807 * 2 END",
	// Where the planner stops folding, nothing fails.
	"SELECT CASE WHEN true THEN 1 ELSE 1/0 END FROM t",
	"SELECT CASE WHEN false THEN 1/0 ELSE 1 END FROM t",
	"SELECT CASE WHEN 1 = 0 THEN 1/0 ELSE 1 END FROM t",
	"SELECT CASE WHEN 1 = 1 THEN 1 ELSE 1/0 END FROM t",
	"SELECT CASE WHEN NULL THEN 1/0 ELSE 1 END FROM t",
	"SELECT CASE 1 WHEN 1 THEN 1 ELSE 1/0 END FROM t",
	"SELECT CASE WHEN abs(-1) = 1 THEN 1 ELSE 1/0 END FROM t",
	"SELECT coalesce(1, 1/0)",
	"SELECT coalesce(a, 1, 1/0) FROM t",
	"SELECT 1 WHERE false AND 1/0 = 1",
	"SELECT 1 WHERE true OR 1/0 = 1",
	"WITH q AS (SELECT 1/0) SELECT 1",
	"SELECT CASE WHEN a > 0 THEN 1 ELSE $1 + 1 END FROM t",
	"SELECT 2147483647 + 0, -2147483648, 9223372036854775807",
	// Encoding.
	`SELECT E'\x00'`,
	`SELECT E'a\xffb'`,
	`SELECT E'\xc3\x28'`,
	`SELECT E'\x00'::bytea`,
	`SELECT '\x00'::bytea`,
	"SELECT 'é'",
	// Upserts that would update a row twice.
	"INSERT INTO u VALUES (5, 'a'), (5, 'b') ON CONFLICT (id) DO UPDATE SET s = excluded.s",
	"INSERT INTO u VALUES (5, 'a'), (6, 'b') ON CONFLICT (id) DO UPDATE SET s = excluded.s",
	"INSERT INTO u VALUES (5, 'a'), (5, 'b') ON CONFLICT (id) DO NOTHING",
	"INSERT INTO u (s, id) VALUES ('a', 7), ('b', 8), ('c', 7) ON CONFLICT (id) DO UPDATE SET s = 'z'",
	"INSERT INTO u (s, id) VALUES ('a', NULL), ('b', NULL) ON CONFLICT (s) DO UPDATE SET s = 'z'",
	// Dependencies of views.
	"DROP VIEW v1",
	"DROP TABLE t",
	"DROP TABLE u",
	"DROP VIEW IF EXISTS v1",
	"ALTER TABLE t DROP COLUMN s",
	"ALTER TABLE t DROP COLUMN vc",
	"ALTER TABLE u DROP COLUMN s",
	"ALTER TABLE t ALTER COLUMN s TYPE varchar(10)",
	"ALTER TABLE t ALTER COLUMN id TYPE bigint",
	"ALTER TABLE t ALTER COLUMN a TYPE bigint",
	"DROP VIEW v2",
}

// TestPostgresRulesOnPostgres runs each case on PostgreSQL 15 (in a
// transaction rolled back after it) and through the analysis: where
// PostgreSQL refuses with one of the codes shepherd mirrors, shepherd
// must refuse with the same code and message; where PostgreSQL accepts,
// shepherd must not refuse with them (issue 14, item 17).
func TestPostgresRulesOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var snap *schema.Snapshot
	for _, ddl := range pgRulesSchema {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		tree, err := pg_query.Parse(ddl)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err = snap.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatal(err)
		}
	}
	mirrored := map[string]bool{"21000": true, "22021": true, "22003": true, "22012": true, "42883": true, "42725": true, "22P02": true, "2BP01": true}
	env := &Env{Replicas: DefaultEnv.Replicas, Schema: snap}
	for _, sql := range pgRulesCases {
		var pgErr *pgconn.PgError
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		var args []any
		if strings.Contains(sql, "$1") {
			// A value that does not overflow: PostgreSQL's custom plans
			// fold parameters too, which shepherd does not mirror yet.
			args = []any{pgx.QueryExecModeExec, 1}
		}
		_, err := conn.Exec(ctx, sql, args...)
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil && !errors.As(err, &pgErr) {
			t.Fatalf("%s: %v", sql, err)
		}
		_, got := ParseOneIn(sql, env)
		var pe *pgerr.Error
		errors.As(got, &pe)
		switch {
		case pgErr != nil && pgErr.Code == pgerr.FeatureNotSupported && strings.HasPrefix(pgErr.Message, "cannot alter type"):
			if pe == nil || pe.Code != pgErr.Code || pe.Message != pgErr.Message {
				t.Errorf("%s:\n  PostgreSQL: %s %s\n  shepherd:   %v", sql, pgErr.Code, pgErr.Message, got)
			}
		case pgErr != nil && mirrored[pgErr.Code]:
			if pe == nil || pe.Code != pgErr.Code || pe.Message != pgErr.Message {
				t.Errorf("%s:\n  PostgreSQL: %s %s\n  shepherd:   %v", sql, pgErr.Code, pgErr.Message, got)
			}
		case pe != nil && mirrored[pe.Code]:
			t.Errorf("%s: PostgreSQL: %v; shepherd refuses: %v", sql, err, got)
		}
	}
}

// TestPostgresRulesUnsupported: what PostgreSQL would do differently
// from the other engines and shepherd cannot mirror is refused with
// 0A000 naming it.
func TestPostgresRulesUnsupported(t *testing.T) {
	env := envWith(t,
		"CREATE TABLE t (id int PRIMARY KEY, s text)",
		"CREATE VIEW v1 AS SELECT id, s FROM t",
	)
	for sql, want := range map[string]string{
		"DROP TABLE t CASCADE":           "DROP TABLE ... CASCADE of t, which views read (v1)",
		"ALTER TABLE t RENAME TO t2":     "renaming t or its columns while views read it (v1)",
		"ALTER TABLE t RENAME s TO s2":   "renaming t or its columns while views read it (v1)",
		"ALTER TABLE v1 RENAME TO v1new": "",
	} {
		_, err := ParseOneIn(sql, env)
		var pe *pgerr.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", sql, err)
		case want != "" && (!errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported || !contains(pe.Message, want)):
			t.Errorf("%s: %v, want 0A000 naming %q", sql, err, want)
		}
	}
	// An upsert's keys given by parameters are compared at execution.
	up, err := ParseOneIn("INSERT INTO t (id, s) VALUES ($1, 'a'), ($2::int, 'b'), (3, $3) ON CONFLICT (id) DO UPDATE SET s = excluded.s", env)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string // "" for NULL
		dup  bool
	}{
		{[]string{"1", "2", "x"}, false},
		{[]string{"1", "1", "x"}, true},
		{[]string{"3", "2", "x"}, true},
		{[]string{"", "", "x"}, false},
		{[]string{"1", "01", "x"}, false}, // equal as integers: not caught, never a false refusal
	} {
		var args []driver.Arg
		for _, a := range tc.args {
			args = append(args, driver.Arg{Null: a == "", Text: a})
		}
		err := up.CheckArgs(args)
		var pe *pgerr.Error
		if tc.dup != (errors.As(err, &pe) && pe.Code == "21000") || !tc.dup && err != nil {
			t.Errorf("upsert keys %v: %v", tc.args, err)
		}
	}
	// Parameters: PostgreSQL refuses them at Bind.
	for text, want := range map[string]string{
		"a\x00b":   `invalid byte sequence for encoding "UTF8": 0x00`,
		"a\xffb":   `invalid byte sequence for encoding "UTF8": 0xff`,
		"\xe2\x82": `invalid byte sequence for encoding "UTF8": 0xe2 0x82`,
		"é€😀":      "",
	} {
		err := CheckArgs([]driver.Arg{{Null: true}, {Text: text}})
		var pe *pgerr.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", text, err)
		case want != "" && (!errors.As(err, &pe) || pe.Code != "22021" || pe.Message != want):
			t.Errorf("%q: %v, want 22021 %s", text, err, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestGroupingOnPostgres compares the ungrouped-column check with
// PostgreSQL: where PostgreSQL fails with 42803 shepherd fails alike (or,
// with replicas of other engines, refuses with 0A000 what it cannot
// decide: the cases marked), and where PostgreSQL accepts shepherd does
// not fail with 42803. A cluster of PostgreSQL replicas only is never
// refused: PostgreSQL decides.
func TestGroupingOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var snap *schema.Snapshot
	for _, ddl := range []string{
		"CREATE TABLE gt (id int PRIMARY KEY, a int, s text)",
		"CREATE TABLE gu (id int PRIMARY KEY, s text)",
		"CREATE VIEW gv AS SELECT id, s FROM gt",
	} {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		tree, err := pg_query.Parse(ddl)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err = snap.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		sql    string
		refuse bool // refused (0A000) with other engines' replicas
	}{
		{"SELECT s FROM gt GROUP BY lower(s)", false},
		{"INSERT INTO gu SELECT id, s FROM gt GROUP BY id, lower(s)", false},
		{"INSERT INTO gu SELECT a, s FROM gt GROUP BY a, lower(s)", false},
		{"SELECT lower(s) FROM gt GROUP BY lower(gt.s)", false},
		{"SELECT upper(lower(s)) FROM gt GROUP BY lower(s) HAVING lower(s) > 'a' ORDER BY upper(lower(s))", false},
		{"SELECT a + 1, (SELECT 1 FROM gu WHERE gu.id = gt.a LIMIT 1) FROM gt GROUP BY a + 1", false},
		{"SELECT a, (SELECT max(s) FROM gu WHERE gu.id = gt.a) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT max(s) FROM gu WHERE gu.id = gt.id) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT max(s) FROM gu WHERE gu.id = id) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT max(gu.s) FROM gu WHERE gu.id = gt.id) FROM gt GROUP BY id", false},
		{"SELECT a FROM gt GROUP BY a HAVING EXISTS (SELECT 1 FROM gu WHERE gu.s = gt.s)", false},
		{"SELECT a FROM gt GROUP BY a HAVING EXISTS (SELECT 1 FROM gu WHERE gu.s = max(gt.s))", false},
		{"SELECT a FROM gt GROUP BY a ORDER BY (SELECT 1 FROM gu WHERE gu.id IN (SELECT x.id FROM gu x WHERE x.s = gt.s))", false},
		{"SELECT count(*), (SELECT s FROM gu WHERE gu.id = gt.id) FROM gt", false},
		{"UPDATE gu SET s = 'z' WHERE id IN (SELECT a FROM gt GROUP BY a HAVING (SELECT count(*) FROM gu AS u2 WHERE u2.id = gt.id) > 0)", false},
		{"DELETE FROM gu WHERE id IN (SELECT a FROM gt GROUP BY a HAVING (SELECT count(*) FROM gu AS u2 WHERE u2.id = gt.a) > 0)", false},
		{"SELECT id, s FROM gv GROUP BY id, s", false},
		{"SELECT x.id, count(*) FROM gt x JOIN gu USING (id) GROUP BY x.id", false},
		{"SELECT gv.id, count(*) FROM gv GROUP BY id", false},
		{"SELECT id, count(*) FROM gv GROUP BY gv.id", false},
		{"WITH c AS (SELECT id, s FROM gt) SELECT c.s, count(*) FROM c GROUP BY s", false},
		{"SELECT gu.id, count(*) FROM gt JOIN gu USING (id) GROUP BY id", true},
		{"SELECT s FROM gv GROUP BY id", true},
		{"INSERT INTO gu SELECT id, s FROM gv GROUP BY id", true},
		{"SELECT gt.a FROM gt JOIN gu USING (id) GROUP BY id", true},
		{"SELECT a, (SELECT count(*) FROM gv WHERE gv.id = gt.id) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT count(*) FROM gv WHERE gv.id = gt.a) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT count(*) FROM gv x JOIN gu USING (id) WHERE x.s = gt.s) FROM gt GROUP BY a", false},
		{"SELECT a, (SELECT count(*) FROM gv WHERE gv.id = id) FROM gt GROUP BY a", true},
	}
	mixed := &Env{Replicas: DefaultEnv.Replicas, Schema: snap}
	pgOnly := &Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"a", "b", "c"}}, Schema: snap}
	for _, c := range cases {
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		_, err := conn.Exec(ctx, c.sql)
		if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
			t.Fatal(rerr)
		}
		var pgErr *pgconn.PgError
		if err != nil && (!errors.As(err, &pgErr) || pgErr.Code != "42803") {
			t.Fatalf("%s: %v", c.sql, err)
		}
		for _, env := range []*Env{mixed, pgOnly} {
			_, got := ParseOneIn(c.sql, env)
			var pe *pgerr.Error
			errors.As(got, &pe)
			refused := pe != nil && pe.Code == pgerr.FeatureNotSupported
			switch {
			case refused && (env == pgOnly || !c.refuse):
				t.Errorf("%s: refused: %v (PostgreSQL: %v)", c.sql, got, err)
			case !refused && env == mixed && c.refuse:
				t.Errorf("%s: not refused (%v) on a mixed cluster", c.sql, got)
			case refused:
			case env == pgOnly && c.refuse && got == nil:
				// Left to PostgreSQL.
			case pgErr != nil && (pe == nil || pe.Code != pgErr.Code || pe.Message != pgErr.Message):
				t.Errorf("%s:\n  PostgreSQL: %s %s\n  shepherd:   %v", c.sql, pgErr.Code, pgErr.Message, got)
			case pgErr == nil && got != nil:
				t.Errorf("%s: PostgreSQL accepts it, shepherd: %v", c.sql, got)
			}
		}
	}
}
