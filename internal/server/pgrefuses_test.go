package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestRefusedAsPostgres runs statements that MariaDB and SQLite accept and
// PostgreSQL refuses, through a cluster of the three (CBS) and on
// PostgreSQL 15 alone: each must fail through shepherd with PostgreSQL's
// SQLSTATE and message, and the PostgreSQL replica must stay up. Before,
// shepherd answered with the majority, took PostgreSQL out, and its
// catch-up failed on the same statement for ever (issue 14, item 17).
func TestRefusedAsPostgres(t *testing.T) {
	ctx := context.Background()
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	alone, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)

	setup := []string{
		"CREATE TABLE t (id int PRIMARY KEY, a int, s text, vc varchar(5), b bool, d date)",
		"INSERT INTO t VALUES (1, 1, 'x', 'y', true, '2020-01-01')",
		"CREATE VIEW v1 AS SELECT id, s FROM t",
		"CREATE VIEW v2 AS SELECT id FROM v1",
	}
	for _, q := range setup {
		mustExec(t, c, q)
		if _, err := alone.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL alone: %s: %v", q, err)
		}
	}
	type call struct {
		sql  string
		args []any
	}
	for _, tc := range []call{
		{"DROP VIEW v1", nil},
		{"DROP TABLE t", nil},
		{"DROP VIEW v2", nil},
		{"DROP VIEW v1", nil}, // fine now
		{"CREATE VIEW v1 AS SELECT id, s FROM t", nil},
		{"CREATE VIEW v2 AS SELECT x.id FROM v1 x JOIN t USING (id)", nil},
		{"DROP TABLE t", nil},
		{"SELECT +s FROM t", nil},
		{"SELECT -vc FROM t", nil},
		{"UPDATE t SET a = 2 WHERE +b", nil},
		{"SELECT +d FROM t", nil},
		{"SELECT id, +(s) FROM t x WHERE +x.s = 'x'", nil},
		{"SELECT +a FROM t", nil}, // numeric: fine
		{"SELECT CASE WHEN a > 0 THEN 1 ELSE 2147483647 + 1 END FROM t", nil},
		{"UPDATE t SET a = CASE WHEN a > 0 THEN 1 ELSE 9223372036854775807 * 2 END", nil},
		{"INSERT INTO t (id, a) SELECT 2, CASE WHEN a < 0 THEN 1/0 ELSE 1 END FROM t", nil},
		{"SELECT CASE WHEN a > 0 THEN 1 ELSE '99999999999'::int END FROM t", nil},
		{"SELECT CASE WHEN a > 0 THEN 1 ELSE abs(-2147483648) END FROM t", nil},
		{"SELECT CASE WHEN a > 0 THEN 1 ELSE 32767::int2 + 1::int2 END FROM t", nil},
		{"SELECT CASE WHEN a > 0 THEN 1 ELSE 2147483647::bigint + 1 END FROM t", nil}, // fine: bigint
		{"INSERT INTO t (id, s) VALUES (3, $1)", []any{"a\x00b"}},
		{"INSERT INTO t (id, s) VALUES (4, $1)", []any{"a\xffb"}},
		{"UPDATE t SET s = $1 WHERE id = 1", []any{"\xc3\x28"}},
		{"SELECT E'\\x00'", nil},
		{"INSERT INTO t (id, s) VALUES (5, E'a\\xffb')", nil},
		{"INSERT INTO t (id, s) VALUES (6, 'ok')", nil},
	} {
		_, want := alone.Exec(ctx, tc.sql, tc.args...)
		_, got := c.Exec(ctx, tc.sql, tc.args...)
		w, g := pgError(want), pgError(got)
		switch {
		case (want == nil) != (got == nil):
			t.Errorf("%s: PostgreSQL: %v; shepherd: %v", tc.sql, want, got)
		case want != nil && (w == nil || g == nil || w.Code != g.Code || w.Message != g.Message):
			t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", tc.sql, want, got)
		}
	}
	idle, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatalf("cluster not idle: %v", err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

func pgError(err error) *pgconn.PgError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}
