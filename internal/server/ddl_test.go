package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestDDLCancelledStaysEverywhere: MariaDB, the primary, commits CREATE
// TABLE as it runs it. With both secondaries held back (a lock on the
// referenced table taken directly on PostgreSQL, a write lock held
// directly on the SQLite file), the client gives up on its COMMIT after
// 3 s. The client gets 57014, but the table must end on every replica
// (it was rolled back on PostgreSQL and SQLite and stayed on MariaDB, and
// every statement on it failed through shepherd for good), and shepherd
// must keep working on it.
func TestDDLCancelledStaysEverywhere(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	app := connect(t, addr, "app")
	mustExec(t, app, "CREATE TABLE parent (id int PRIMARY KEY)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}

	// Hold PostgreSQL back: a foreign key to parent needs a lock on it.
	pg, err := pgx.Connect(ctx, cfg.Replicas[1].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	pgTx, err := pg.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pgTx.Exec(ctx, "LOCK TABLE parent IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// Hold SQLite back: its one writer is taken.
	open, _ := driver.Lookup(cfg.Replicas[2].Driver)
	lite, err := open(ctx, driver.Spec{Name: "holder", DSN: cfg.Replicas[2].DSN, DataDir: cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	liteConn, err := lite.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer liteConn.Close()
	if err := liteConn.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = app.Exec(cctx, "CREATE TABLE child (id int PRIMARY KEY, pid int, FOREIGN KEY (pid) REFERENCES parent (id))")
	cancel()
	if err == nil {
		t.Fatal("CREATE TABLE succeeded while both secondaries were held back")
	}
	if sqlstate(err) != "57014" && !errors.Is(err, context.DeadlineExceeded) {
		t.Logf("CREATE TABLE after the client gave up: %v", err)
	}

	if err := pgTx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := liteConn.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	idle, cancelIdle := context.WithTimeout(ctx, 90*time.Second)
	defer cancelIdle()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatalf("replicas never idle: %v", err)
	}

	// Every replica has the table, or none has; here all must have it,
	// since MariaDB cannot undo it.
	for _, r := range cfg.Replicas {
		open, _ := driver.Lookup(r.Driver)
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM child", ReturnsRows: true, Verb: "SELECT"})
		c.Close()
		e.Close()
		if err != nil {
			t.Errorf("replica %s has no table child: %v", r.Name, err)
		}
	}
	if t.Failed() {
		return
	}
	// shepherd keeps working on it.
	app2 := connect(t, addr, "app")
	mustExec(t, app2, "INSERT INTO parent VALUES (1)")
	mustExec(t, app2, "INSERT INTO child VALUES (10, 1)")
	assertCount(t, app2, "SELECT count(*) FROM child", 1)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, pid FROM child")
	for _, r := range srv.Cluster().Replicas() {
		if r.State != "up" {
			t.Errorf("replica %s is %s after the DDL", r.Name, r.State)
		}
	}
}
