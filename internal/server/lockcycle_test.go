package server

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// lockCycleClusters are the clusters the lock cycle tests run on: the
// primary's engine tells whose lock a transaction waits for in three
// ways.
var lockCycleClusters = []struct {
	name string
	cfg  func(t *testing.T) *config.Config
}{
	{"sqlite primary", pgSQLiteCluster}, // its serial transaction slot
	{"mariadb primary", func(t *testing.T) *config.Config { return realCluster(t, "cbs") }},
	{"postgres alone", func(t *testing.T) *config.Config {
		return &config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "passthrough",
			Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)}}}
	}},
}

// TestAdvisoryRowLockCycle: transaction A holds an advisory lock (which
// shepherd holds) and waits for a row lock B holds in the primary's
// engine; B then asks for A's advisory lock. Neither the engine nor
// shepherd's lock table alone sees the cycle. PostgreSQL finds it after
// deadlock_timeout and fails one of them with 40P01; through shepherd B
// gets 40P01, and A goes on once B rolled back. Before, both waited
// until cancelled (here: B's 20 s bound ran out), with an SQLite primary
// (its one transaction at a time), a MariaDB one (InnoDB's lock waits)
// and PostgreSQL (pg_blocking_pids).
func TestAdvisoryRowLockCycle(t *testing.T) {
	for _, tc := range lockCycleClusters {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := start(t, tc.cfg(t))
			ctx := context.Background()
			a, b := connect(t, addr, "app"), connect(t, addr, "app")
			mustExec(t, a, "CREATE TABLE r (id int PRIMARY KEY, v int)")
			mustExec(t, a, "INSERT INTO r VALUES (1, 0)")
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "SELECT pg_advisory_xact_lock(1)")
			mustExec(t, b, "BEGIN")
			mustExec(t, b, "UPDATE r SET v = 1 WHERE id = 1")
			done := make(chan error, 1)
			go func() {
				_, err := a.Exec(ctx, "UPDATE r SET v = 2 WHERE id = 1")
				done <- err
			}()
			bctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := b.Exec(bctx, "SELECT pg_advisory_xact_lock(1)")
			if sqlstate(err) != "40P01" {
				t.Fatalf("B asking for A's advisory lock after %v: %v, want 40P01", time.Since(start).Round(time.Millisecond), err)
			}
			mustExec(t, b, "ROLLBACK")
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("A's UPDATE: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("A's UPDATE did not go on once B rolled back")
			}
			mustExec(t, a, "COMMIT")
			var v int
			if err := b.QueryRow(ctx, "SELECT v FROM r WHERE id = 1").Scan(&v); err != nil || v != 2 {
				t.Errorf("v = %d %v, want 2", v, err)
			}
		})
	}
}

// TestAdvisoryWaitNotADeadlock: B waits for A's advisory lock while A
// waits for a row lock of C, which waits for nothing: no cycle, so B's
// wait lasts past deadlock_timeout (1 s; checked twice here) without
// 40P01, as on PostgreSQL, and ends once C and then A committed.
func TestAdvisoryWaitNotADeadlock(t *testing.T) {
	for _, tc := range lockCycleClusters {
		t.Run(tc.name, func(t *testing.T) {
			addr, srv := start(t, tc.cfg(t))
			ctx := context.Background()
			a, b, c := connect(t, addr, "app"), connect(t, addr, "app"), connect(t, addr, "app")
			mustExec(t, a, "CREATE TABLE r (id int PRIMARY KEY, v int)")
			mustExec(t, a, "INSERT INTO r VALUES (1, 0)")
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "SELECT pg_advisory_xact_lock(1)")
			mustExec(t, c, "BEGIN")
			mustExec(t, c, "UPDATE r SET v = 1 WHERE id = 1")
			aDone, bDone := make(chan error, 1), make(chan error, 1)
			go func() {
				_, err := a.Exec(ctx, "UPDATE r SET v = v + 10 WHERE id = 1")
				if err == nil {
					_, err = a.Exec(ctx, "COMMIT")
				}
				aDone <- err
			}()
			go func() {
				_, err := b.Exec(ctx, "BEGIN")
				if err == nil {
					_, err = b.Exec(ctx, "SELECT pg_advisory_xact_lock(1)")
				}
				bDone <- err
			}()
			deadline := time.Now().Add(20 * time.Second)
			for srv.shared.Waiting() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // polling, not synchronisation
			}
			// Past deadlock_timeout twice: the checks find no cycle.
			select {
			case err := <-bDone:
				t.Fatalf("B's wait for A's advisory lock ended while A waits for C: %v", err)
			case <-time.After(2500 * time.Millisecond):
			}
			mustExec(t, c, "COMMIT")
			for _, ch := range []chan error{aDone, bDone} {
				select {
				case err := <-ch:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("a wait did not end once C committed")
				}
			}
			mustExec(t, b, "COMMIT")
			var v int
			if err := b.QueryRow(ctx, "SELECT v FROM r WHERE id = 1").Scan(&v); err != nil || v != 11 {
				t.Errorf("v = %d %v, want 11", v, err)
			}
		})
	}
}

// TestExclusiveBlockLockCycle: a DDL block deferred on MariaDB runs alone,
// so another transaction's first statement waits for it in the
// coordinator; when the block then waits for a lock that other
// transaction holds in shepherd (an advisory lock), neither could go on.
// The deadlock check sees the coordinator's wait (coord.HeldBy) and
// fails the block's wait with 40P01, as PostgreSQL fails one member of a
// cycle; the other transaction then goes on. Before, both hung (found by
// the review of the DDL-in-blocks change).
func TestExclusiveBlockLockCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	addr, _ := start(t, realCluster(t, "cbs"))
	ctx := context.Background()
	a, c := connect(t, addr, "app"), connect(t, addr, "app")
	mustExec(t, a, "CREATE TABLE xr (id int PRIMARY KEY)")
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "SELECT pg_advisory_xact_lock(7)")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE xnew (id int PRIMARY KEY)")
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "INSERT INTO xr VALUES (1)") // waits for a's block
		done <- err
	}()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := a.Exec(actx, "SELECT pg_advisory_xact_lock(7)")
	if sqlstate(err) != "40P01" {
		t.Fatalf("the block asking for c's advisory lock after %v: %v, want 40P01", time.Since(start).Round(time.Millisecond), err)
	}
	mustExec(t, a, "ROLLBACK")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("c's INSERT: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("c's INSERT did not go on once the block rolled back")
	}
	mustExec(t, c, "COMMIT")
	var n int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM xr").Scan(&n); err != nil || n != 1 {
		t.Errorf("count = %d %v, want 1", n, err)
	}
}
