package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// pgSQLiteCluster is PostgreSQL with two SQLite replicas: no MariaDB, so
// DDL runs inside blocks, and SQLite rebuilds tables for ALTER TABLE.
func pgSQLiteCluster(t *testing.T) *config.Config {
	return &config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "cbs", F: 1,
		Replicas: []config.Replica{
			{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
			{Name: "lite1", Driver: "sqlite", DSN: "lite1.db"},
			{Name: "lite2", Driver: "sqlite", DSN: "lite2.db"},
		},
	}
}

// TestConcurrentAltersOfOneTable runs two ALTER TABLEs of one table that
// SQLite does by rebuilding it, the second sent while the first one's
// block is open (in a block, and in autocommit), and checks the table
// ends as on PostgreSQL: with both changes on every replica. PostgreSQL
// makes the second wait for the first's transaction and then alters the
// new definition. Before, shepherd wrote the second's SQLite rebuild from
// the catalog as it was before the first committed: both SQLite replicas
// lost the first change (NOT NULL), and a NULL inserted afterwards was
// accepted by them and refused by PostgreSQL (issue 14, known open path).
func TestConcurrentAltersOfOneTable(t *testing.T) {
	cfg := pgSQLiteCluster(t)
	addr, srv := start(t, cfg)
	ctx := context.Background()
	a, b := connect(t, addr, "app"), connect(t, addr, "app")

	// waiting returns once b's statement has been sent and waits: in
	// shepherd's lock table, or in the cluster (a second transaction
	// live there, after a's).
	waiting := func() {
		t.Helper()
		waitFor(t, "the second ALTER TABLE to wait", func() bool { return srv.shared.Waiting() > 0 || srv.cluster.Active() >= 2 })
	}

	// settled returns once only a's block is live in the cluster (the
	// statements before it may still be finishing on a secondary).
	settled := func() {
		t.Helper()
		waitFor(t, "the cluster to settle", func() bool { return srv.cluster.Active() <= 1 })
	}

	for _, tc := range []struct {
		name  string
		block bool // the second ALTER in a block too
	}{{"block", true}, {"autocommit", false}} {
		t.Run(tc.name, func(t *testing.T) {
			mustExec(t, a, "DROP TABLE IF EXISTS t")
			mustExec(t, a, "CREATE TABLE t (id int PRIMARY KEY, a int, b int)")
			mustExec(t, a, "INSERT INTO t VALUES (1, 1, 1)")
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "ALTER TABLE t ALTER COLUMN a SET NOT NULL")
			settled()
			done := make(chan error, 1)
			go func() {
				if tc.block {
					if _, err := b.Exec(ctx, "BEGIN"); err != nil {
						done <- err
						return
					}
				}
				_, err := b.Exec(ctx, "ALTER TABLE t ADD CONSTRAINT t_b_check CHECK (b > 0)")
				if err == nil && tc.block {
					_, err = b.Exec(ctx, "COMMIT")
				}
				done <- err
			}()
			waiting()
			mustExec(t, a, "COMMIT")
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("second ALTER TABLE: %v", err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("second ALTER TABLE never ended")
			}
			// Both changes hold, as on PostgreSQL.
			if _, err := a.Exec(ctx, "INSERT INTO t VALUES (2, NULL, 1)"); sqlstate(err) != "23502" {
				t.Errorf("NULL into the NOT NULL column: %v, want 23502", err)
			}
			if _, err := a.Exec(ctx, "INSERT INTO t VALUES (3, 1, -1)"); sqlstate(err) != "23514" {
				t.Errorf("a row the check refuses: %v, want 23514", err)
			}
			var n int
			if err := a.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1 {
				t.Errorf("rows of t: %d %v, want 1", n, err)
			}
		})
	}
}

// TestAltersInOppositeOrder: two blocks alter t1 and t2 in opposite
// order. On PostgreSQL one of them gets 40P01 and the other commits;
// through shepherd too. Here b's ALTER TABLE t2 holds t2's DDL lock and
// waits for the SQLite primary (one transaction at a time), which a's
// block holds, and a then asks for t2's lock: a cycle through shepherd's
// lock table and the engine, which the DDL lock alone would make a wait
// for good, found after deadlock_timeout. The winner's columns are on
// every replica (both tables read through the cluster, which votes).
func TestAltersInOppositeOrder(t *testing.T) {
	addr, srv := start(t, pgSQLiteCluster(t))
	ctx := context.Background()
	a, b := connect(t, addr, "app"), connect(t, addr, "app")
	mustExec(t, a, "CREATE TABLE t1 (id int PRIMARY KEY)")
	mustExec(t, a, "CREATE TABLE t2 (id int PRIMARY KEY)")
	run := func(c *pgx.Conn, stmts ...string) error {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				c.Exec(ctx, "ROLLBACK")
				return err
			}
		}
		return nil
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER TABLE t1 ADD COLUMN a1 int")
	errs := make(chan error, 2)
	// Only a's block is live (the CREATE TABLEs may still be finishing
	// on a secondary).
	waitFor(t, "the cluster to settle", func() bool { return srv.cluster.Active() <= 1 })
	go func() {
		errs <- run(b, "BEGIN", "ALTER TABLE t2 ADD COLUMN b2 int", "ALTER TABLE t1 ADD COLUMN b1 int", "COMMIT")
	}()
	// b holds t2's DDL lock once its transaction is live in the cluster
	// (it then waits for the SQLite primary, which a's block holds).
	waitFor(t, "b's ALTER TABLE t2 to reach the cluster", func() bool { return srv.cluster.Active() >= 2 })
	go func() { errs <- run(a, "ALTER TABLE t2 ADD COLUMN a2 int", "COMMIT") }()
	var deadlocks, ok int
	for range 2 {
		select {
		case err := <-errs:
			switch {
			case err == nil:
				ok++
			case sqlstate(err) == "40P01":
				deadlocks++
			default:
				t.Fatalf("unexpected: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("the blocks waited for each other for good")
		}
	}
	if deadlocks != 1 || ok != 1 {
		t.Fatalf("%d deadlocks, %d commits; want one of each", deadlocks, ok)
	}
	var cols []string
	for _, q := range []string{"SELECT * FROM t1", "SELECT * FROM t2"} {
		rows, err := a.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range rows.FieldDescriptions() {
			cols = append(cols, fd.Name)
		}
		rows.Close()
	}
	if got := strings.Join(cols, ","); got != "id,a1,id,a2" && got != "id,b1,id,b2" {
		t.Errorf("columns %s: want one block's changes, whole", got)
	}
}

// TestAlterWaitsForColumn: an ALTER TABLE of a column another block is
// adding waits for that block, as on PostgreSQL, and then runs against
// the table with the column, through the simple and the extended
// protocol. Before, its analysis against the committed catalog failed at
// once with 42703 (column does not exist).
func TestAlterWaitsForColumn(t *testing.T) {
	addr, srv := start(t, pgSQLiteCluster(t))
	ctx := context.Background()
	a := connect(t, addr, "app")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			b := connect(t, addr, "app")
			mustExec(t, a, "DROP TABLE IF EXISTS t")
			mustExec(t, a, "CREATE TABLE t (id int PRIMARY KEY)")
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "ALTER TABLE t ADD COLUMN x int")
			done := make(chan error, 1)
			go func() {
				_, err := b.Exec(ctx, "ALTER TABLE t ALTER COLUMN x SET NOT NULL", mode)
				done <- err
			}()
			deadline := time.Now().Add(30 * time.Second)
			for srv.shared.Waiting() == 0 {
				select {
				case err := <-done:
					t.Fatalf("the ALTER TABLE did not wait for the block adding its column: %v", err)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("the ALTER TABLE never waited")
				}
				time.Sleep(10 * time.Millisecond) // polling, not synchronisation
			}
			mustExec(t, a, "COMMIT")
			if err := <-done; err != nil {
				t.Fatalf("ALTER TABLE after the block committed: %v", err)
			}
			if _, err := a.Exec(ctx, "INSERT INTO t VALUES (1, NULL)"); sqlstate(err) != "23502" {
				t.Errorf("NULL into the NOT NULL column: %v, want 23502", err)
			}
		})
	}
}
