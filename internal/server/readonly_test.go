package server

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestReadOnlyTransactionCBS: a transaction begun READ ONLY commits in
// cbs over MariaDB, PostgreSQL and SQLite (no replica is taken out for
// it), and a write in one is refused with 25006, as in PostgreSQL.
func TestReadOnlyTransactionCBS(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE ro (id int PRIMARY KEY, v int NOT NULL)")
	mustExec(t, c, "INSERT INTO ro VALUES (1, 10), (2, 20)")
	for range 5 {
		retry40(t, func() error {
			tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			var sum int
			if err := tx.QueryRow(ctx, "SELECT sum(v) FROM ro").Scan(&sum); err != nil {
				return err
			}
			if sum != 30 {
				t.Errorf("sum %d", sum)
			}
			return tx.Commit(ctx)
		})
	}
	tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "UPDATE ro SET v = v + 1")
	if got := sqlstate(err); got != "25006" {
		t.Errorf("write in a READ ONLY transaction: %v, want 25006", err)
	}
	tx.Rollback(ctx)
	mustExec(t, c, "UPDATE ro SET v = v + 1 WHERE id = 1")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Cluster().Replicas() {
		if r.State != "up" || r.Mismatches > 0 {
			t.Errorf("replica %s: %s, %d mismatches", r.Name, r.State, r.Mismatches)
		}
	}
	assertIdentical(t, cfg, "SELECT id, v FROM ro ORDER BY id")
}
