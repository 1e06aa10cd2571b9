package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// crashAfterDDL leaves cfg's data directory and replicas as a crash of
// shepherd leaves them after MariaDB (replica 0, the primary) ran the
// schema change sql and before its transaction reached the log: the
// intent shepherd recorded before handing the statement on is on disk,
// MariaDB holds the change (it commits DDL as it runs it), and neither
// the log nor the other replicas know of it. The intent is the one
// shepherd itself wrote (a test hook stops the statement right after it,
// as the crash would); MariaDB is then sent the form shepherd would have
// sent it (unless maria is false: the crash came before MariaDB ran
// it). It returns the intent.
func crashAfterDDL(t *testing.T, cfg *config.Config, setup []string, sql string, maria bool) cluster.Intent {
	t.Helper()
	ctx := context.Background()
	addr, srv, stop := startServer(t, cfg)
	app := connect(t, addr, "app")
	for _, q := range setup {
		mustExec(t, app, q)
	}
	path := filepath.Join(cfg.DataDir, "ddl-intents.json")
	var crashed []byte
	srv.Cluster().SetIntentHook(func(uint64) error {
		var err error
		if crashed, err = os.ReadFile(path); err != nil {
			return err
		}
		return errors.New("shepherd crashes here")
	})
	_, execErr := app.Exec(ctx, sql)
	if execErr == nil {
		t.Fatalf("%s went on past the crash", sql)
	}
	srv.Cluster().SetIntentHook(nil)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	if crashed == nil {
		t.Fatalf("no intent was recorded: %s failed with %v", sql, execErr)
	}
	if err := os.WriteFile(path, crashed, 0o600); err != nil {
		t.Fatal(err)
	}
	intents, err := cluster.LoadIntents(path)
	if err != nil || len(intents) != 1 || !intents[0].Lone {
		t.Fatalf("the intent file holds %+v (%v), want one lone DDL intent", intents, err)
	}
	form, ok := intents[0].Record(1).Statements[0].FormFor(uint8(driver.MySQL))
	if !ok {
		t.Fatal("the intent holds no MariaDB form")
	}
	if !maria {
		return intents[0]
	}
	replicaExec(t, cfg, "maria", driver.Query{SQL: form.SQL, Verb: "CREATE TABLE"})
	return intents[0]
}

// TestDDLIntentCompletedAtRestart: shepherd crashes after MariaDB ran a
// lone CREATE TABLE and before the transaction was logged. Start-up must
// complete it (log it and replay it to PostgreSQL and SQLite; MariaDB
// already has the table), so that the three replicas hold the same
// tables, and every one of them stays in use. Before the DDL intents,
// MariaDB kept the table alone.
func TestDDLIntentCompletedAtRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	ctx := context.Background()
	crashAfterDDL(t, cfg, []string{"CREATE TABLE t (a int PRIMARY KEY)", "INSERT INTO t VALUES (1)"},
		"CREATE TABLE u (a int PRIMARY KEY, b text NOT NULL)", true)

	addr, srv, stop := startServer(t, cfg)
	defer stop()
	for _, n := range []string{"maria", "pg", "lite"} {
		// Taken in (a replica the probes find slow under load may be
		// out a moment later, and comes back: not the point here).
		if s := replicaState(srv, n); s == "retired" || s == "failed" {
			t.Errorf("%s after the restart: %s, want it in use", n, s)
		}
	}
	if in, err := cluster.LoadIntents(filepath.Join(cfg.DataDir, "ddl-intents.json")); err != nil || len(in) != 0 {
		t.Errorf("intents after start-up: %+v (%v), want none", in, err)
	}
	app := connect(t, addr, "app")
	mustExec(t, app, "INSERT INTO u VALUES (1, 'x'), (2, 'y')")
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT a, b FROM u ORDER BY a")
	assertIdentical(t, cfg, "SELECT a FROM t ORDER BY a")

	// An intent goes once its outcome is known: committed, or failed.
	mustExec(t, app, "CREATE TABLE v (a int)")
	if _, err := app.Exec(ctx, "CREATE TABLE v (a int)"); sqlstate(err) != "42P07" {
		t.Fatalf("CREATE TABLE of an existing table: %v, want 42P07", err)
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if in, err := cluster.LoadIntents(filepath.Join(cfg.DataDir, "ddl-intents.json")); err != nil || len(in) != 0 {
		t.Errorf("intents once every DDL ended: %+v (%v), want none", in, err)
	}
}

// TestDDLIntentRetiresAtRestart: the same crash, but with an intent of a
// transaction that had other statements (as one would be recorded if
// MariaDB ran DDL inside a block, which also commits what came before):
// start-up cannot complete it, and must retire MariaDB durably instead,
// going on with PostgreSQL and SQLite, which agree.
func TestDDLIntentRetiresAtRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	ctx := context.Background()
	in := crashAfterDDL(t, cfg, []string{"CREATE TABLE t (a int PRIMARY KEY)"}, "CREATE TABLE u (a int PRIMARY KEY)", true)
	in.Lone = false
	if err := cluster.SaveIntents(filepath.Join(cfg.DataDir, "ddl-intents.json"), []cluster.Intent{in}); err != nil {
		t.Fatal(err)
	}

	addr, srv, stop := startServer(t, cfg)
	if s := replicaState(srv, "maria"); s != "retired" {
		t.Fatalf("maria after the restart: %s, want retired", s)
	}
	app := connect(t, addr, "app")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	if _, err := app.Exec(ctx, "INSERT INTO u VALUES (1)"); err == nil {
		t.Fatal("INSERT INTO u: the table exists through shepherd, want it absent")
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	// Still retired after another restart: retired.json holds it.
	_, srv, stop = startServer(t, cfg)
	defer stop()
	if s := replicaState(srv, "maria"); s != "retired" {
		t.Fatalf("maria after a second restart: %s, want retired", s)
	}
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, "retired.json"))
	if err != nil || !strings.Contains(string(b), "other statements") {
		t.Fatalf("retired.json: %s (%v), want maria with the reason", b, err)
	}
	rest := *cfg
	rest.Replicas = cfg.Replicas[1:]
	assertIdentical(t, &rest, "SELECT a FROM t ORDER BY a")
}

// TestDDLIntentRefusedRetiresAtRestart: the crash comes after the intent
// of a CREATE UNIQUE INDEX that the rows refuse (two equal values).
// Completing it would fail its replay on PostgreSQL and SQLite at every
// start; start-up tries it on them first (rolled back), and retires
// MariaDB instead (engines refuse different things: it may hold the
// index), going on with the two, which agree.
func TestDDLIntentRefusedRetiresAtRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	ctx := context.Background()
	crashAfterDDL(t, cfg, []string{
		"CREATE TABLE t (a int PRIMARY KEY, b int)",
		"INSERT INTO t VALUES (1, 5), (2, 5)",
	}, "CREATE UNIQUE INDEX t_b ON t (b)", false)

	addr, srv, stop := startServer(t, cfg)
	defer stop()
	if s := replicaState(srv, "maria"); s != "retired" {
		t.Fatalf("maria after the restart: %s, want retired", s)
	}
	app := connect(t, addr, "app")
	mustExec(t, app, "INSERT INTO t VALUES (3, 5)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	rest := *cfg
	rest.Replicas = cfg.Replicas[1:]
	assertIdentical(t, &rest, "SELECT a, b FROM t ORDER BY a")
}

// TestDeferredIntentAtRestart: DDL inside a block is deferred on MariaDB
// until its commit is logged (DESIGN.md, "DDL inside a transaction block
// with such replicas"), and its intent says so. A crash before the
// commit was logged left nothing on MariaDB (its engine transaction went
// with shepherd): start-up drops the intent and keeps MariaDB in use.
// A crash after it was logged, while MariaDB was being sent the block,
// may have left part of it committed there: start-up retires MariaDB.
func TestDeferredIntentAtRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	ctx := context.Background()
	path := filepath.Join(cfg.DataDir, "ddl-intents.json")

	// The crash comes right after the block's DDL intent was recorded.
	addr, srv, stop := startServer(t, cfg)
	app := connect(t, addr, "app")
	mustExec(t, app, "CREATE TABLE t (a int PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO t VALUES (1)")
	var crashed []byte
	srv.Cluster().SetIntentHook(func(uint64) error {
		var err error
		if crashed, err = os.ReadFile(path); err != nil {
			return err
		}
		return errors.New("shepherd crashes here")
	})
	mustExec(t, app, "BEGIN")
	mustExec(t, app, "INSERT INTO t VALUES (2)")
	if _, err := app.Exec(ctx, "CREATE TABLE u (a int PRIMARY KEY)"); err == nil {
		t.Fatal("the DDL went on past the crash")
	}
	srv.Cluster().SetIntentHook(nil)
	app.Close(ctx)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := os.WriteFile(path, crashed, 0o600); err != nil {
		t.Fatal(err)
	}
	intents, err := cluster.LoadIntents(path)
	if err != nil || len(intents) != 1 || !intents[0].Deferred {
		t.Fatalf("the intent file holds %+v (%v), want one deferred intent", intents, err)
	}

	addr, srv, stop = startServer(t, cfg)
	if s := replicaState(srv, "maria"); s == "retired" || s == "failed" {
		t.Errorf("maria after a crash before the block was logged: %s, want it in use", s)
	}
	if in, err := cluster.LoadIntents(path); err != nil || len(in) != 0 {
		t.Errorf("intents after start-up: %+v (%v), want none", in, err)
	}
	app = connect(t, addr, "app")
	mustExec(t, app, "INSERT INTO t VALUES (3)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT a FROM t ORDER BY a")
	assertCount(t, app, "SELECT count(*) FROM t", 2)

	// A block that commits: its intent, as it stood, is kept until
	// MariaDB has the whole block. Left by a crash, it retires MariaDB,
	// unless MariaDB's log table holds the block's commit.
	var held []byte
	srv.Cluster().SetIntentHook(func(uint64) error {
		var err error
		held, err = os.ReadFile(path)
		return err
	})
	mustExec(t, app, "BEGIN")
	mustExec(t, app, "INSERT INTO t VALUES (4)")
	mustExec(t, app, "CREATE TABLE v (a int PRIMARY KEY)")
	mustExec(t, app, "INSERT INTO v VALUES (1)")
	mustExec(t, app, "COMMIT")
	srv.Cluster().SetIntentHook(nil)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if in, err := cluster.LoadIntents(path); err != nil || len(in) != 0 {
		t.Errorf("intents once the block is on every replica: %+v (%v), want none", in, err)
	}
	stop()
	if err := os.WriteFile(path, held, 0o600); err != nil {
		t.Fatal(err)
	}
	_, srv, stop = startServer(t, cfg)
	if s := replicaState(srv, "maria"); s == "retired" || s == "failed" {
		t.Errorf("maria after a crash with a logged block's intent open, its commit in maria's log table: %s, want it in use", s)
	}
	stop()
	// The crash came before MariaDB's COMMIT of the block: its log
	// table lacks it.
	top := replicaQuery(t, cfg, "maria", driver.Query{SQL: "SELECT max(barrier) FROM shepherd_log", ReturnsRows: true, Verb: "SELECT"})
	replicaExec(t, cfg, "maria", driver.Query{SQL: "DELETE FROM shepherd_log WHERE barrier = " + top.Rows[0][0].Text, Verb: "DELETE"})
	if err := os.WriteFile(path, held, 0o600); err != nil {
		t.Fatal(err)
	}
	_, srv, stop = startServer(t, cfg)
	defer stop()
	if s := replicaState(srv, "maria"); s != "retired" {
		t.Errorf("maria after a crash with a logged block's intent open, its commit not in maria's log table: %s, want retired", s)
	}
}
