package server

import (
	"context"
	"errors"
	"strings"
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
	addr, srv, stop := startServer(t, cfg)
	defer stop()
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

	// The catalog recorded the CREATE TABLE with its log barrier: the
	// next start has nothing to apply from the log (it applied it a
	// second time, and logged that it could not, when the catalog took
	// the change at the client's cancel, with no barrier).
	stop()
	_, _, log, _ := startLogged(t, cfg)
	if l := log.String(); strings.Contains(l, "schema change") {
		t.Errorf("the start after the cancelled CREATE TABLE applied schema changes from the log:\n%s", l)
	}
}

// TestRetiredStaysOutAcrossRestart: MariaDB, the primary, commits CREATE
// TABLE as it runs it; PostgreSQL and SQLite refuse it (a table of that
// name was made on them behind shepherd's back), so the transaction
// rolls back there and MariaDB, which keeps the table, is retired. A
// restart of shepherd must keep it out (it was taken back unchecked,
// with a table the others lack): SHOW REPLICAS shows it retired with
// the reason, and writes go on without it. Once rebuilt (the table
// dropped on it), REJOIN REPLICA on the admin console brings it back:
// it catches up from the log with what it missed, and is up.
func TestRetiredStaysOutAcrossRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	ctx := context.Background()
	addr, srv, stop := startServer(t, cfg)
	app := connect(t, addr, "app")
	mustExec(t, app, "CREATE TABLE t (a int PRIMARY KEY)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	// A table the secondaries already have, behind shepherd's back.
	behind := func(i int, sql string) {
		t.Helper()
		r := cfg.Replicas[i]
		open, _ := driver.Lookup(r.Driver)
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Exec(ctx, driver.Query{SQL: sql}); err != nil {
			t.Fatalf("%s on %s: %v", sql, r.Name, err)
		}
	}
	behind(1, "CREATE TABLE child (a int)")
	behind(2, "CREATE TABLE child (a int)")
	if _, err := app.Exec(ctx, "CREATE TABLE child (a int)"); sqlstate(err) != "40001" {
		t.Fatalf("CREATE TABLE the secondaries refused: %v, want 40001", err)
	}
	// The client may hear of the refusal before the retirement is
	// carried out.
	waitFor(t, "maria retired", func() bool { return replicaState(srv, "maria") == "retired" })
	stop()

	addr, srv, stop = startServer(t, cfg)
	defer stop()
	admin := connect(t, addr, "shepherd")
	var state, reason string
	found := false
	rows, err := admin.Query(ctx, "SHOW REPLICAS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vals[0] == "maria" {
			state, reason, found = vals[4].(string), vals[len(vals)-1].(string), true
		}
	}
	rows.Close()
	if !found || state != "retired" || !strings.Contains(reason, "DDL") {
		t.Fatalf("maria after a restart: %q (%q); want retired, with the reason", state, reason)
	}
	app = connect(t, addr, "app")
	mustExec(t, app, "INSERT INTO t VALUES (1)")

	// The operator rebuilds it, then brings it back.
	behind(0, "DROP TABLE child")
	if _, err := admin.Exec(ctx, "REJOIN REPLICA pg", pgx.QueryExecModeSimpleProtocol); sqlstate(err) != "55000" {
		t.Fatalf("REJOIN REPLICA of a replica in use: %v, want 55000", err)
	}
	if _, err := admin.Exec(ctx, "REJOIN REPLICA maria", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("REJOIN REPLICA maria: %v", err)
	}
	waitFor(t, "maria back", func() bool { return replicaState(srv, "maria") == "up" })
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT a FROM t ORDER BY a")
}
