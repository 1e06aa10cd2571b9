package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// stmtOutcome is what a client sees of one query string, in full: each
// result's command tag and rows, then the error's SQLSTATE, message,
// DETAIL and HINT, and the transaction status.
func stmtOutcome(ctx context.Context, conn *pgconn.PgConn, sql string) string {
	rs, err := conn.Exec(ctx, sql).ReadAll()
	var parts []string
	for _, r := range rs {
		if r.Err != nil {
			continue
		}
		s := r.CommandTag.String()
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, b := range row {
				vals[i] = string(b)
			}
			s += " (" + strings.Join(vals, ",") + ")"
		}
		parts = append(parts, s)
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		parts = append(parts, fmt.Sprintf("ERROR %s: %s", pe.Code, pe.Message))
		if pe.Detail != "" {
			parts = append(parts, "DETAIL: "+pe.Detail)
		}
		if pe.Hint != "" {
			parts = append(parts, "HINT: "+pe.Hint)
		}
	case err != nil:
		parts = append(parts, "connection: "+err.Error())
	}
	return fmt.Sprintf("%s [%c]", strings.Join(parts, "; "), conn.TxStatus())
}

// stepsAsPostgres runs setup, then steps, on PostgreSQL 15 alone and
// through shepherd over the embedded default and over MariaDB +
// PostgreSQL + SQLite in cbs: every step must give what PostgreSQL gives
// (tags, rows, SQLSTATE, message, DETAIL, HINT, status). It returns the
// configurations' servers' addresses and configurations, by name, for
// checks after.
func stepsAsPostgres(t *testing.T, setup, steps []string) {
	t.Helper()
	ctx := context.Background()
	pg := postgresAlone(t)
	for _, s := range setup {
		if o := stmtOutcome(ctx, pg, s); strings.Contains(o, "ERROR") {
			t.Fatalf("PostgreSQL: %s: %s", s, o)
		}
	}
	want := make([]string, len(steps))
	for i, s := range steps {
		want[i] = stmtOutcome(ctx, pg, s)
		if testing.Verbose() {
			t.Logf("PostgreSQL: %s: %s", s, want[i])
		}
	}
	for _, name := range []string{"embedded", "cbs"} {
		t.Run(name, func(t *testing.T) {
			cfg := embedded(t)
			if name == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			sh := shepherdConn(t, addr)
			for _, s := range setup {
				if o := stmtOutcome(ctx, sh, s); strings.Contains(o, "ERROR") {
					t.Fatalf("%s: %s", s, o)
				}
			}
			for i, s := range steps {
				qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				got := stmtOutcome(qctx, sh, s)
				cancel()
				if got != want[i] {
					t.Errorf("%s\n shepherd:   %s\n PostgreSQL: %s", s, got, want[i])
				}
			}
			if err := srv.Cluster().Idle(ctx); err != nil {
				t.Fatal(err)
			}
			assertReplicas(t, addr, len(cfg.Replicas))
		})
	}
}

// TestDropSeveralTablesAsPostgres (issue 15): DROP TABLE of several
// tables in one statement (pgbench -i, Django's flush, test teardown),
// with IF EXISTS and CASCADE, runs on every engine (SQLite's DROP takes
// one name) and fails as PostgreSQL does, all or nothing: 42P01 naming
// the first missing table, 42809 for a view, 2BP01 for a table another
// one's foreign key references. The catalog follows.
func TestDropSeveralTablesAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"CREATE TABLE d3 (id int PRIMARY KEY)",
		"CREATE VIEW dv AS SELECT id FROM d3",
		"INSERT INTO d1 VALUES (1)",
		"INSERT INTO d2 VALUES (1, 1)",
		"INSERT INTO d3 VALUES (1)",
	}
	steps := []string{
		"DROP TABLE d3, nosuch1, d1, nosuch2",
		"SELECT count(*) FROM d3",
		"DROP TABLE d1",
		"DROP TABLE d2, dv",
		"DROP VIEW d3",
		"DROP VIEW dv",
		"DROP TABLE d3, d1",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
		"DROP TABLE d1, d2, d3",
		"SELECT count(*) FROM d1",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"INSERT INTO d1 VALUES (1)",
		"INSERT INTO d2 VALUES (1, 1)",
		// pgbench -i's form: IF EXISTS, some missing.
		"DROP TABLE IF EXISTS d1, pgbench_nosuch, d2",
		"SELECT count(*) FROM d2",
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"DROP TABLE d2, d1 CASCADE",
		"CREATE TABLE d1 (id int)",
		"INSERT INTO d1 VALUES (7)",
		"SELECT id FROM d1",
		"DROP TABLE d1 CASCADE",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
	}
	stepsAsPostgres(t, setup, steps)
}
