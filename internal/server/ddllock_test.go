package server

import (
	"context"
	"testing"
	"time"

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
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if srv.shared.Waiting() > 0 || srv.cluster.Active() >= 2 {
				return
			}
			time.Sleep(10 * time.Millisecond) // polling, not synchronisation
		}
		t.Fatal("the second ALTER TABLE never waited")
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
