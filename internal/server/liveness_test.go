package server

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestPrimaryLiveness runs a CBS cluster (MariaDB primary, PostgreSQL,
// SQLite) with primary_timeout 5s and checks that the primary is
// suspected for what its engine does, not for how long one statement
// takes:
//
//   - a statement waiting on MariaDB for a lock that an idle transaction,
//     opened on the engine directly, holds for longer than the timeout
//     does not change the view (the engine answers the probes); it
//     commits once the lock is released;
//   - SIGSTOP of the MariaDB server (a hung engine) changes the view
//     within a few seconds, SHOW REPLICAS shows it unresponsive, and
//     clients go on; after SIGCONT it comes back and catches up.
func TestPrimaryLiveness(t *testing.T) {
	m := testenv.OwnMariaDB(t)
	cfg := realCluster(t, "cbs")
	cfg.Replicas[0].DSN = m.DSN()
	const timeout = 5 * time.Second
	cfg.PrimaryTimeout = timeout.String()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	for _, s := range []string{"CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)", "INSERT INTO t VALUES (1, 0)"} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}

	// (a) A lock wait behind an idle transaction on the engine.
	direct, err := sql.Open("mysql", m.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	holder, err := direct.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, s := range []string{"BEGIN", "UPDATE t SET v = 100 WHERE id = 1"} {
		if _, err := holder.ExecContext(ctx, s); err != nil {
			t.Fatalf("on MariaDB directly: %s: %v", s, err)
		}
	}
	waiter := connect(t, addr, "app")
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "UPDATE t SET v = v + 1 WHERE id = 1")
		done <- err
	}()
	waitFor(t, "shepherd's update waiting for the lock on MariaDB", func() bool {
		// The holder's own UPDATE is done (it sleeps), so an UPDATE
		// running on the engine is shepherd's, waiting for the row lock.
		// (innodb_trx does not always list it as LOCK WAIT: a transaction
		// waiting for its first lock may not be shown at all.)
		var n int
		err := direct.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE 'UPDATE %'").Scan(&n)
		return err == nil && n == 1
	})
	// The idle transaction holds its lock past the primary timeout: that
	// wait is the point of the test, not a synchronisation.
	time.Sleep(timeout + 1500*time.Millisecond)
	if v := srv.Cluster().Views(); len(v) != 1 {
		t.Fatalf("views %+v: a primary waiting on a lock was replaced", v)
	}
	if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the update that waited for the lock: %v", err)
	}
	if v := srv.Cluster().Views(); len(v) != 1 {
		t.Fatalf("views %+v, want the first only", v)
	}

	// (b) The MariaDB server hangs.
	m.Pause()
	paused := time.Now()
	retry40(t, func() error {
		_, err := c.Exec(ctx, "UPDATE t SET v = v + 10 WHERE id = 1")
		return err
	})
	took := time.Since(paused)
	views := srv.Cluster().Views()
	if len(views) != 2 {
		t.Fatalf("views %+v: the hung primary was not replaced", views)
	}
	if last := views[1]; last.Primary == "maria" || !strings.Contains(last.Why, "maria: no answer to a probe") {
		t.Errorf("view %+v", last)
	}
	if took > 8*time.Second {
		t.Errorf("the hung primary was replaced and the update done after %v, want under 8s", took)
	}
	// SHOW REPLICAS on the admin console says so, and why.
	admin := connect(t, addr, "shepherd")
	rows, err := admin.Query(ctx, "SHOW REPLICAS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var state, reason string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(vals[0]) == "maria" {
			state, reason = fmt.Sprint(vals[4]), fmt.Sprint(vals[len(vals)-1])
		}
	}
	rows.Close()
	if state != "unresponsive" || !strings.Contains(reason, "no answer to a probe") {
		t.Errorf("SHOW REPLICAS: maria is %q (%q) while stopped, want unresponsive", state, reason)
	}
	assertCount(t, c, "SELECT v FROM t WHERE id = 1", 11)
	m.Resume()
	waitFor(t, "maria back", func() bool { return replicaState(srv, "maria") == "up" })
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, v FROM t ORDER BY id")
	t.Logf("view change after SIGSTOP: %v", took)
}

// TestTooFewReplicasUp: with f+1 = 2 replicas needed and only the primary
// left, a client is told so plainly (57P03 "too few replicas are up"), at
// its first statement, and nothing is committed; not that the replicas
// disagreed (40001), which none did.
func TestTooFewReplicasUp(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	if _, err := c.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pg", "lite"} {
		if err := srv.Cluster().TakeDown(name); err != nil {
			t.Fatal(err)
		}
	}
	err = tx.Commit(ctx)
	if sqlstate(err) != "57P03" || !strings.Contains(err.Error(), "too few replicas are up: 1 of 3, need 2") {
		t.Fatalf("COMMIT with one replica up: %v, want 57P03 too few replicas are up", err)
	}
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (2)")
	if sqlstate(err) != "57P03" || !strings.Contains(err.Error(), "too few replicas are up: 1 of 3, need 2") {
		t.Fatalf("a statement with one replica up: %v, want 57P03 too few replicas are up", err)
	}
	direct, err := sql.Open("mysql", cfg.Replicas[0].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	var n int
	if err := direct.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Errorf("the primary holds %d rows (%v), want none committed", n, err)
	}
}
