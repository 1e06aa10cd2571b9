package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// timeoutTargets returns the DSNs of shepherd (three SQLite replicas,
// cbs; MariaDB, PostgreSQL and SQLite, cbs; passthrough over PostgreSQL)
// and of PostgreSQL 15, the oracle: each timeout test runs the same
// steps on each.
func timeoutTargets(t *testing.T) map[string]string {
	addr, _ := start(t, embedded(t))
	// MariaDB primary: the waits are the engine's own row locks.
	maddr, _ := start(t, realCluster(t, "cbs"))
	// Passthrough runs a statement in autocommit on the session's own
	// goroutine (replica.Manager.Run): the timeouts must reach it there,
	// lock_timeout through the cluster's Blockers.
	paddr, _ := start(t, &config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "passthrough",
		Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)}}})
	return map[string]string{
		"shepherd":                  fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr),
		"shepherd, MariaDB primary": fmt.Sprintf("postgres://app@%s/app?sslmode=disable", maddr),
		"shepherd passthrough":      fmt.Sprintf("postgres://app@%s/app?sslmode=disable", paddr),
		"PostgreSQL 15":             testenv.Postgres(t),
	}
}

func pgCodeMsg(err error) (code, msg string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.Message
	}
	return "", fmt.Sprint(err)
}

// TestStatementTimeout: statement_timeout cancels a statement waiting on
// another transaction's lock with 57014 "canceling statement due to
// statement timeout", in the simple and the extended protocol, and the
// session goes on; as PostgreSQL 15.
func TestStatementTimeout(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range timeoutTargets(t) {
		t.Run(name, func(t *testing.T) {
			holder, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close(ctx)
			waiter, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer waiter.Close(ctx)
			mustExec(t, holder, "CREATE TABLE st (id int PRIMARY KEY, v int)")
			mustExec(t, holder, "INSERT INTO st VALUES (1, 0)")
			mustExec(t, holder, "BEGIN")
			mustExec(t, holder, "UPDATE st SET v = 1 WHERE id = 1")
			mustExec(t, waiter, "SET statement_timeout = '300ms'")
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
				start := time.Now()
				// Bounded on the client's side too: without the
				// timeout, the wait would last as long as the holder.
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := waiter.Exec(wctx, "UPDATE st SET v = 2 WHERE id = 1", mode)
				cancel()
				code, msg := pgCodeMsg(err)
				if code != "57014" || msg != "canceling statement due to statement timeout" {
					t.Errorf("mode %v: got %s %q, want 57014 canceling statement due to statement timeout", mode, code, msg)
				}
				if el := time.Since(start); el < 300*time.Millisecond {
					t.Errorf("mode %v: ended after %v, before the timeout", mode, el)
				}
			}
			mustExec(t, holder, "COMMIT")
			mustExec(t, waiter, "SET statement_timeout = 0")
			assertCount(t, waiter, "SELECT v FROM st WHERE id = 1", 1)
			mustExec(t, waiter, "UPDATE st SET v = 3 WHERE id = 1")
		})
	}
}

// TestIdleInTransactionTimeout: a session idle in a transaction longer
// than idle_in_transaction_session_timeout is ended with FATAL 25P03, its
// transaction rolled back (its lock let go), as PostgreSQL 15 does; idle
// outside a transaction, nothing happens.
func TestIdleInTransactionTimeout(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range timeoutTargets(t) {
		t.Run(name, func(t *testing.T) {
			other, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(ctx)
			mustExec(t, other, "CREATE TABLE it (id int PRIMARY KEY, v int)")
			mustExec(t, other, "INSERT INTO it VALUES (1, 0)")

			idle, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close(ctx)
			mustExec(t, idle, "SET idle_in_transaction_session_timeout = '200ms'")
			mustExec(t, idle, "BEGIN")
			mustExec(t, idle, "UPDATE it SET v = 1 WHERE id = 1")
			// The other session waits for the idle one's lock: the
			// timeout ends the idle session and lets it go.
			start := time.Now()
			octx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if _, err := other.Exec(octx, "UPDATE it SET v = 2 WHERE id = 1"); err != nil {
				t.Fatalf("the idle session's lock was not let go: %v", err)
			}
			if el := time.Since(start); el < 200*time.Millisecond {
				t.Errorf("the lock was let go after %v, before the timeout", el)
			}
			_, err = idle.Exec(ctx, "SELECT 1")
			if code, msg := pgCodeMsg(err); code != "25P03" || msg != "terminating connection due to idle-in-transaction timeout" {
				// pgx may see only the closed connection; the FATAL
				// came first, on the wire.
				if !idle.IsClosed() {
					t.Errorf("idle session: got %s %q, want 25P03 and the connection closed", code, msg)
				}
			}
			assertCount(t, other, "SELECT v FROM it WHERE id = 1", 2)
		})
	}
}

// TestLockTimeout: lock_timeout ends a statement waiting for a lock
// another transaction holds with 55P03 "canceling statement due to lock
// timeout", and the session goes on; a statement that waits less runs;
// as PostgreSQL 15.
func TestLockTimeout(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range timeoutTargets(t) {
		t.Run(name, func(t *testing.T) {
			holder, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close(ctx)
			waiter, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer waiter.Close(ctx)
			mustExec(t, holder, "CREATE TABLE lt (id int PRIMARY KEY, v int)")
			mustExec(t, holder, "INSERT INTO lt VALUES (1, 0)")
			mustExec(t, waiter, "SET lock_timeout = '300ms'")
			mustExec(t, waiter, "SELECT count(*) FROM lt") // no lock held: runs
			mustExec(t, holder, "BEGIN")
			mustExec(t, holder, "UPDATE lt SET v = 1 WHERE id = 1")
			for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
				start := time.Now()
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := waiter.Exec(wctx, "UPDATE lt SET v = 2 WHERE id = 1", mode)
				cancel()
				code, msg := pgCodeMsg(err)
				if code != "55P03" || msg != "canceling statement due to lock timeout" {
					t.Errorf("mode %v: got %s %q, want 55P03 canceling statement due to lock timeout", mode, code, msg)
				}
				if el := time.Since(start); el < 300*time.Millisecond {
					t.Errorf("mode %v: ended after %v, before the timeout", mode, el)
				}
			}
			mustExec(t, holder, "COMMIT")
			mustExec(t, waiter, "UPDATE lt SET v = 3 WHERE id = 1")
			assertCount(t, waiter, "SELECT v FROM lt WHERE id = 1", 3)
		})
	}
}
