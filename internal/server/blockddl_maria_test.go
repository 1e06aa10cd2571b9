package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestBlockDDLMariaDB runs migrations as transaction blocks (DDL among
// writes, as Alembic and Django do) through MariaDB (primary), PostgreSQL
// and SQLite, while other clients write in autocommit. MariaDB commits
// DDL, and what its transaction ran before, as it runs it, so shepherd
// defers such a block there until its COMMIT is decided (DESIGN.md,
// "DDL inside a transaction block"). A committed block is on every
// replica; a rolled-back one, or one failed after its DDL, on none; the
// writers' work is all there, on every replica alike. Before, the DDL
// was refused with 0A000 (issue 15, item 6).
func TestBlockDDLMariaDB(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	var vals []string
	for i := 1; i <= 20; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 100)", i))
	}
	mustExec(t, c, "INSERT INTO acc VALUES "+strings.Join(vals, ", "))

	// Writers in autocommit: each adds 1 to an account, and counts what
	// it was told committed.
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		added   atomic.Int64
		writeMu sync.Mutex
		errs    []error
	)
	for w := range 3 {
		conn := connect(t, addr, "app")
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				id := 1 + (w*7+i)%20
				_, err := conn.Exec(ctx, "UPDATE acc SET bal = bal + 1 WHERE id = $1", id)
				switch {
				case err == nil:
					added.Add(1)
				case strings.HasPrefix(sqlstate(err), "40"):
					// Retried by a real client; not counted.
				default:
					writeMu.Lock()
					errs = append(errs, fmt.Errorf("writer %d: %w", w, err))
					writeMu.Unlock()
					return
				}
			}
		})
	}

	// A migration that commits: a write before the DDL (MariaDB ran it
	// at once, in the block's engine transaction), tables, an index, a
	// column, writes after the DDL.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO acc VALUES (100, 0)")
	mustExec(t, c, "CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL)")
	mustExec(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	mustExec(t, c, "CREATE INDEX t_name ON t (name)")
	mustExec(t, c, "ALTER TABLE acc ADD COLUMN note text")
	mustExec(t, c, "UPDATE acc SET note = 'migrated' WHERE id = 100")
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count(*) of t inside the block: %d, %v; want 2", n, err)
	}
	mustExec(t, c, "COMMIT")

	// The same block rolled back: nothing of it anywhere.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO acc (id, bal) VALUES (101, 0)")
	mustExec(t, c, "CREATE TABLE gone (id int PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO gone VALUES (1)")
	mustExec(t, c, "CREATE INDEX gone_acc ON acc (note)")
	mustExec(t, c, "ROLLBACK")

	// An error after the DDL: the block fails (as on PostgreSQL) and its
	// ROLLBACK leaves nothing.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO acc (id, bal) VALUES (102, 0)")
	mustExec(t, c, "CREATE TABLE failed (id int PRIMARY KEY)")
	if _, err := c.Exec(ctx, "INSERT INTO failed VALUES (1), (1)"); sqlstate(err) != "23505" {
		t.Errorf("duplicate key after DDL in a block: %v, want 23505", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); sqlstate(err) != "25P02" {
		t.Errorf("statement in the failed block: %v, want 25P02", err)
	}
	mustExec(t, c, "ROLLBACK")

	// COMMIT of a block that failed after its DDL rolls back too.
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "CREATE TABLE failed2 (id int PRIMARY KEY)")
	if _, err := c.Exec(ctx, "INSERT INTO nosuch VALUES (1)"); sqlstate(err) != "42P01" {
		t.Errorf("INSERT into a missing table after DDL in a block: %v, want 42P01", err)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		t.Errorf("COMMIT of a failed block: %v (PostgreSQL answers ROLLBACK)", err)
	}

	// An implicit block (a query string of several statements).
	if _, err := c.PgConn().Exec(ctx, "CREATE TABLE m (id int PRIMARY KEY); INSERT INTO m VALUES (7); CREATE INDEX m_id ON m (id)").ReadAll(); err != nil {
		t.Errorf("implicit block with DDL: %v", err)
	}

	stop.Store(true)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	idle, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatalf("cluster not idle: %v", err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
	assertIdentical(t, cfg, "SELECT id, bal, note FROM acc ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, name FROM t ORDER BY id")
	assertIdentical(t, cfg, "SELECT id FROM m ORDER BY id")
	var sum int64
	if err := c.QueryRow(ctx, "SELECT sum(bal) FROM acc WHERE id <= 20").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if want := 20*100 + added.Load(); sum != want {
		t.Errorf("sum of the balances: %d, want %d (writes acknowledged: %d)", sum, want, added.Load())
	}
	for _, rc := range openReplicas(t, cfg) {
		names, err := rc.tables()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"acc", "m", "t"}; !slices.Equal(names, want) {
			t.Errorf("replica %s has tables %v, want %v", rc.name, names, want)
		}
	}
	var ids []int
	rows, err := c.Query(ctx, "SELECT id FROM acc WHERE id > 20 ORDER BY id")
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	if err != nil || !slices.Equal(ids, []int{100}) {
		t.Errorf("accounts the blocks added: %v (%v), want [100]", ids, err)
	}
}
