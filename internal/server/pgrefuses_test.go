package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/driver"
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
		{"ALTER TABLE t DROP COLUMN s", nil},
		{"ALTER TABLE t ALTER COLUMN s TYPE varchar(10)", nil},
		{"SELECT +s FROM t", nil},
		{"UPDATE t SET a = s + 1", nil},
		{"SELECT 1 FROM t WHERE b * 2 = 2", nil},
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
		{"INSERT INTO t (id, s) VALUES (7, 'a'), (7, 'b') ON CONFLICT (id) DO UPDATE SET s = excluded.s", nil},
		{"INSERT INTO t (id, s) VALUES ($1, 'a'), ($2, 'b') ON CONFLICT (id) DO UPDATE SET s = excluded.s", []any{8, 8}},
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

// errorLog is a slog handler that keeps ERROR records and signals each.
type errorLog struct {
	mu      sync.Mutex
	records []slog.Record
	more    chan struct{}
}

func (h *errorLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *errorLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	select {
	case h.more <- struct{}{}:
	default:
	}
	return nil
}
func (h *errorLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorLog) WithGroup(string) slog.Handler      { return h }

// find returns the attributes of the first record whose message starts
// with prefix.
func (h *errorLog) find(prefix string) map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if strings.HasPrefix(r.Message, prefix) {
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool {
				attrs[a.Key] = a.Value.String()
				return true
			})
			return attrs
		}
	}
	return nil
}

// TestReplicaThatCannotCatchUpAlarms: a write PostgreSQL refuses and the
// others accept, of a kind shepherd does not mirror yet (PostgreSQL folds
// a parameter's value into its plan and overflows in a CASE arm no row
// reaches), takes the PostgreSQL replica out, and its catch-up fails on
// the same statement every time. That must not go unseen: an ERROR log
// line names the replica and the statement, and SHOW REPLICAS shows it
// "failed" with the reason (before, it said "down", as for a replica on
// its way back, and logged warnings only; issue 14, item 17).
func TestReplicaThatCannotCatchUpAlarms(t *testing.T) {
	cfg := realCluster(t, "cbs")
	if err := cfg.Check(driver.Names()); err != nil {
		t.Fatal(err)
	}
	logs := &errorLog{more: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Open(ctx, cfg, slog.New(logs))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE t (id int PRIMARY KEY, a int)")
	mustExec(t, c, "INSERT INTO t VALUES (1, 1)")
	const refused = "UPDATE t SET a = CASE WHEN a > 0 THEN 2 ELSE $1 + 1 END"
	if _, err := c.Exec(ctx, refused, 2147483647); err != nil {
		t.Fatalf("the majority's answer: %v", err)
	}

	wait, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	const msg = "replica cannot catch up"
	for logs.find(msg) == nil {
		select {
		case <-logs.more:
		case <-wait.Done():
			t.Fatalf("no ERROR %q logged; replicas: %+v", msg, srv.Cluster().Replicas())
		}
	}
	if attrs := logs.find(msg); attrs["replica"] != "pg" || attrs["statement"] != refused {
		t.Errorf("ERROR names %v, want replica pg and the statement", attrs)
	}
	a := connect(t, addr, "shepherd")
	var state, reason string
	rows, err := a.Query(ctx, "SHOW REPLICAS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vals[0] == "pg" {
			state, reason = vals[4].(string), vals[len(vals)-1].(string)
		}
	}
	if state != "failed" || !strings.Contains(reason, refused) || !strings.Contains(reason, "22003") {
		t.Errorf("SHOW REPLICAS: pg %q (%s), want failed naming the statement and its error", state, reason)
	}
}
