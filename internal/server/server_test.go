package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgcatalog"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) {
	// The catalog tests compare answers, not the limit (pgcatalog's
	// TestQueryLimits does): under make test's -race run of every
	// package at once, TypeORM's column query passed 10 s.
	pgcatalog.QueryTimeout = time.Minute
	testenv.Main(m)
}

// start runs a shepherd for cfg on a free loopback port until the test
// ends, and returns its address.
func start(t testing.TB, cfg *config.Config) (string, *Server) {
	t.Helper()
	addr, srv, stop := startServer(t, cfg)
	t.Cleanup(stop)
	return addr, srv
}

// startServer opens cfg and serves it on a free port until stop.
func startServer(t testing.TB, cfg *config.Config) (addr string, srv *Server, stop func()) {
	t.Helper()
	if err := cfg.Check(driver.Names()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return startServerLog(t, cfg, log)
}

// startServerLog is startServer with shepherd's log going to log.
func startServerLog(t testing.TB, cfg *config.Config, log *slog.Logger) (addr string, srv *Server, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Open(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	return ln.Addr().String(), srv, stop
}

func embedded(t *testing.T) *config.Config {
	cfg := config.Embedded()
	cfg.DataDir = t.TempDir()
	return cfg
}

func connect(t testing.TB, addr, db string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://app@%s/%s?sslmode=disable", addr, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func sqlstate(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestEmbeddedCRUD drives the embedded default (three SQLite replicas,
// serial mode) with pgx in every query mode: create, insert, update,
// select, delete, with parameters.
func TestEmbeddedCRUD(t *testing.T) {
	addr, _ := start(t, embedded(t))
	ctx := context.Background()
	c := connect(t, addr, "app")
	if _, err := c.Exec(ctx, "CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, qty bigint)"); err != nil {
		t.Fatal(err)
	}
	modes := []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec,
		pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec}
	for i, mode := range modes {
		id := int64(i + 1)
		if _, err := c.Exec(ctx, "INSERT INTO items (id, name, qty) VALUES ($1, $2, $3)", mode, id, "item", int64(10)); err != nil {
			t.Fatalf("mode %v insert: %v", mode, err)
		}
		tag, err := c.Exec(ctx, "UPDATE items SET qty = qty + $1 WHERE id = $2", mode, int64(5), id)
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("mode %v update: %v %v", mode, tag, err)
		}
		var name string
		var qty int64
		if err := c.QueryRow(ctx, "SELECT name, qty FROM items WHERE id = $1", mode, id).Scan(&name, &qty); err != nil {
			t.Fatalf("mode %v select: %v", mode, err)
		}
		if name != "item" || qty != 15 {
			t.Errorf("mode %v: got %q %d", mode, name, qty)
		}
	}
	tag, err := c.Exec(ctx, "DELETE FROM items WHERE id > 2")
	if err != nil || tag.RowsAffected() != int64(len(modes)-2) {
		t.Fatalf("delete: %v %v", tag, err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count: %d %v", n, err)
	}
	assertReplicas(t, addr, 3)
}

// assertReplicas checks SHOW REPLICAS on the admin console: n replicas,
// all up, none with a mismatch.
func assertReplicas(t *testing.T, addr string, n int) {
	t.Helper()
	a := connect(t, addr, "shepherd")
	rows, err := a.Query(context.Background(), "SHOW REPLICAS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for rows.Next() {
		var name, drv, class, role, state, reason string
		var mism, reruns, digests, differences, repaired int64
		if err := rows.Scan(&name, &drv, &class, &role, &state, &mism, &reruns, &digests, &differences, &repaired, &reason); err != nil {
			t.Fatal(err)
		}
		got++
		if state != "up" || mism != 0 {
			t.Errorf("replica %s: state %s, %d mismatches %s", name, state, mism, reason)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Errorf("SHOW REPLICAS: %d rows, want %d", got, n)
	}
}

// TestTransactionRules checks the PostgreSQL transaction semantics the
// session promises: failed blocks, rollback, and a client that vanishes
// inside a transaction leaving nothing behind.
func TestTransactionRules(t *testing.T) {
	addr, _ := start(t, embedded(t))
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE kv (k int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO kv VALUES (1, 'one')")

	// An error inside a block fails it until ROLLBACK; COMMIT then rolls back.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO kv VALUES (2, 'two')")
	if _, err := c.Exec(ctx, "INSERT INTO kv VALUES (1, 'dup')"); sqlstate(err) != "23505" {
		t.Fatalf("duplicate key: got %v", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); sqlstate(err) != "25P02" {
		t.Fatalf("in failed block: got %v", err)
	}
	if tag, err := c.Exec(ctx, "COMMIT"); err != nil || tag.String() != "ROLLBACK" {
		t.Fatalf("COMMIT of failed block: %v %v", tag, err)
	}
	assertCount(t, c, "SELECT count(*) FROM kv", 1)

	// Several statements in one Query are one implicit transaction.
	if _, err := c.Exec(ctx, "INSERT INTO kv VALUES (3, 'three'); INSERT INTO kv VALUES (1, 'dup')"); sqlstate(err) != "23505" {
		t.Fatalf("multi-statement: %v", err)
	}
	assertCount(t, c, "SELECT count(*) FROM kv", 1)

	// A client that disconnects mid-transaction leaves nothing behind: no
	// row, and no lock (the next writer is not blocked).
	d := connect(t, addr, "app")
	mustExec(t, d, "BEGIN")
	mustExec(t, d, "INSERT INTO kv VALUES (4, 'four')")
	d.Close(ctx)
	mustExec(t, c, "INSERT INTO kv VALUES (5, 'five')")
	assertCount(t, c, "SELECT count(*) FROM kv WHERE k = 4", 0)
	assertCount(t, c, "SELECT count(*) FROM kv", 2)
	assertReplicas(t, addr, 3)
}

// TestRefusedAtOnce: what shepherd cannot replicate fails before any
// replica runs it, with a precise SQLSTATE, and the session goes on.
func TestRefusedAtOnce(t *testing.T) {
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	ctx := context.Background()
	for sql, code := range map[string]string{
		"COPY t FROM STDIN WHERE a > 1": "0A000",
		"COPY t TO '/tmp/t'":            "42501",
		"SAVEPOINT a":                   "25P01",
		"SELEC 1":                       "42601",
		"SELECT * FROM no_such_table":   "42P01",
		"SET TimeZone = 'Europe/Oslo'":  "0A000",
	} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != code {
			t.Errorf("%s: got %v, want SQLSTATE %s", sql, err, code)
		}
	}
	assertCount(t, c, "SELECT 1", 1)
}

func mustExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func assertCount(t testing.TB, c *pgx.Conn, sql string, want int64) {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if n != want {
		t.Errorf("%s = %d, want %d", sql, n, want)
	}
}

// TestUnknownColumnEmbedded checks that a misspelt column fails with
// 42703 and PostgreSQL's message on the embedded default, where SQLite's
// double-quoted-string fallback read it as a string (the SQL writer
// double-quotes identifiers): the SELECT answered 'nope' for each row and
// the UPDATE changed every row, all three replicas agreeing.
func TestUnknownColumnEmbedded(t *testing.T) {
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE t (a text)")
	mustExec(t, c, "INSERT INTO t (a) VALUES ('x'), ('y')")
	for _, sql := range []string{
		"SELECT nope FROM t",
		"UPDATE t SET a = 'z' WHERE nope = 'nope'",
		"DELETE FROM t WHERE nope = 'nope'",
	} {
		_, err := c.Exec(ctx, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42703" || pe.Message != `column "nope" does not exist` {
			t.Errorf("%s: got %v, want 42703 column \"nope\" does not exist", sql, err)
		}
	}
	assertCount(t, c, "SELECT count(*) FROM t WHERE a IN ('x', 'y')", 2)
	assertReplicas(t, addr, 3)
}
