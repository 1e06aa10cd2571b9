package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/testenv"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// schemaChurn is what clients run while a replica is away: a table
// dropped and created again with a SERIAL column in front, and two
// columns swapped by name through a temporary one, with INSERTs before
// and after each change. A replay that analysed the logged SQL against
// the catalog of its own day would write the first INSERT with an id
// column the old table lacks (42703), or the positional INSERTs into the
// swapped columns. suffix keeps the table names of two rounds apart.
func schemaChurn(suffix string) []string {
	rt, sw := "rt"+suffix, "sw"+suffix
	return []string{
		"CREATE TABLE " + rt + " (a int, b int)",
		"INSERT INTO " + rt + " (a, b) VALUES (1, 2)",
		"DROP TABLE " + rt,
		"CREATE TABLE " + rt + " (id serial PRIMARY KEY, a int, b int)",
		"INSERT INTO " + rt + " (a, b) VALUES (3, 4)",
		"CREATE TABLE " + sw + " (k int PRIMARY KEY, p int, q text)",
		"INSERT INTO " + sw + " VALUES (1, 10, 'ten')",
		"INSERT INTO " + sw + " (k, p, q) VALUES (2, 20, 'twenty')",
		"ALTER TABLE " + sw + " RENAME COLUMN p TO tmp",
		"ALTER TABLE " + sw + " RENAME COLUMN q TO p",
		"ALTER TABLE " + sw + " RENAME COLUMN tmp TO q",
		"INSERT INTO " + sw + " VALUES (3, 30, 'thirty')",
		"INSERT INTO " + sw + " (k, q, p) VALUES (4, 40, 'forty')",
		"SELECT * FROM " + sw,
	}
}

// assertChurned checks, on every replica directly, that the tables of
// schemaChurn(suffix) hold the same rows.
func assertChurned(t *testing.T, cfg *config.Config, suffix string) {
	t.Helper()
	assertIdentical(t, cfg, "SELECT id, a, b FROM rt"+suffix+" ORDER BY id")
	assertIdentical(t, cfg, "SELECT k, q, p FROM sw"+suffix+" ORDER BY k")
}

// writeUntilDown writes through c until shepherd has taken the named
// replica out (its server was killed: a backend that outlived its
// postmaster may still answer one statement).
func writeUntilDown(t *testing.T, c *pgx.Conn, srv *Server, name string) {
	t.Helper()
	waitFor(t, name+" taken out", func() bool {
		mustExec(t, c, "INSERT INTO warm VALUES (1)")
		return replicaState(srv, name) == "down"
	})
}

// TestReplayAfterSchemaChange takes the PostgreSQL replica's server down,
// changes the schema under statements that depend on it, and brings the
// server back: the replica must catch up from the write-ahead log with
// what the other replicas ran, not with the logged SQL analysed against
// today's catalog (issue 14, item 2). Then the same with shepherd
// restarted while PostgreSQL is down, so that the replay happens at
// start.
func TestReplayAfterSchemaChange(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a PostgreSQL server (not in -short)")
	}
	pg := testenv.OwnPostgres(t)
	cfg := realCluster(t, "cbs")
	cfg.Replicas[1].DSN = pg.DSN() // its own server, which the test kills
	addr, srv, stop := startServer(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE warm (a int)")
	pg.Kill()
	writeUntilDown(t, c, srv, "pg")
	for _, q := range schemaChurn("") {
		mustExec(t, c, q)
	}
	pg.Start()
	waitFor(t, "pg back", func() bool { return replicaState(srv, "pg") == "up" })
	if err := srv.Cluster().Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertChurned(t, cfg, "")

	// Round two: the replay happens when shepherd starts.
	pg.Kill()
	writeUntilDown(t, c, srv, "pg")
	for _, q := range schemaChurn("2") {
		mustExec(t, c, q)
	}
	c.Close(t.Context())
	stop()
	pg.Start()
	addr, srv = start(t, cfg)
	c = connect(t, addr, "app")
	mustExec(t, c, "INSERT INTO rt2 (a, b) VALUES (5, 6)")
	mustExec(t, c, "INSERT INTO sw2 VALUES (5, 50, 'fifty')")
	if err := srv.Cluster().Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := replicaState(srv, "pg"); s != "up" {
		t.Errorf("pg is %s after the restart", s)
	}
	assertChurned(t, cfg, "")
	assertChurned(t, cfg, "2")
}

// TestRestartWithReplicaDown restarts shepherd while the PostgreSQL
// replica's server is down: shepherd starts on the other two (f+1),
// serves, and the replica comes back by itself, caught up, once its
// server does (issue 14, item 9).
func TestRestartWithReplicaDown(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a PostgreSQL server (not in -short)")
	}
	pg := testenv.OwnPostgres(t)
	cfg := realCluster(t, "cbs")
	cfg.Replicas[1].DSN = pg.DSN() // its own server, which the test kills
	addr, _, stop := startServer(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE kv (k int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO kv VALUES (1, 'one')")
	c.Close(t.Context())
	stop()
	pg.Kill()

	addr, srv := start(t, cfg)
	if s := replicaState(srv, "pg"); s != "down" {
		t.Errorf("pg is %s at start, its server down", s)
	}
	c = connect(t, addr, "app")
	mustExec(t, c, "INSERT INTO kv VALUES (2, 'two')")
	mustExec(t, c, "UPDATE kv SET v = 'uno' WHERE k = 1")
	assertCount(t, c, "SELECT count(*) FROM kv", 2)
	pg.Start()
	waitFor(t, "pg back", func() bool { return replicaState(srv, "pg") == "up" })
	mustExec(t, c, "INSERT INTO kv VALUES (3, 'three')")
	if err := srv.Cluster().Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT k, v FROM kv ORDER BY k")
}

// syncBuffer is a log destination tests read while shepherd writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startLogged is startServer with shepherd's log written to the
// returned buffer; it is stopped when the test ends, if not before.
func startLogged(t *testing.T, cfg *config.Config) (string, *Server, *syncBuffer, func()) {
	t.Helper()
	buf := &syncBuffer{}
	addr, srv, stop := startServerLog(t, cfg, slog.New(slog.NewTextHandler(buf, nil)))
	if testing.Verbose() {
		t.Cleanup(func() { t.Logf("shepherd's log:\n%s", buf.String()) })
	}
	t.Cleanup(stop)
	return addr, srv, buf, stop
}

// TestRestartRefusesLyingBarrier restarts shepherd with a replica whose
// log table was made to claim a barrier far beyond the write-ahead log:
// shepherd does not believe it (the barrier counter would follow it, up
// to a wrap), leaves the replica out with a logged reason naming it, and
// serves on the other two (issue 14, item 9).
func TestRestartRefusesLyingBarrier(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, _, stop := startServer(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE kv (k int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO kv VALUES (1, 'one')")
	c.Close(t.Context())
	stop()
	const lie = "9223372036854775000"
	replicaExec(t, cfg, "lite", driver.Query{SQL: "INSERT INTO shepherd_log (barrier) VALUES (" + lie + ")", Verb: "INSERT"})

	addr, srv, log, _ := startLogged(t, cfg)
	if s := replicaState(srv, "lite"); s != "down" {
		t.Errorf("lite is %s at start, its log table lying", s)
	}
	if l := log.String(); !strings.Contains(l, "replica=lite") || !strings.Contains(l, lie) {
		t.Errorf("no logged reason names lite and its barrier:\n%s", l)
	}
	c = connect(t, addr, "app")
	for k := 2; k <= 5; k++ {
		mustExec(t, c, "INSERT INTO kv VALUES ($1, 'more')", k)
	}
	assertCount(t, c, "SELECT count(*) FROM kv", 5)
	if err := srv.Cluster().Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The counter did not follow the lie.
	for _, name := range []string{"maria", "pg"} {
		a := replicaQuery(t, cfg, name, driver.Query{SQL: "SELECT max(barrier) FROM shepherd_log", ReturnsRows: true, Verb: "SELECT"})
		if got := a.Rows[0][0].Text; len(got) > 6 {
			t.Errorf("%s: highest barrier %s", name, got)
		}
	}
	// Its catch-up refuses it too: it stays out.
	waitFor(t, "lite's catch-up refused", func() bool {
		return strings.Contains(log.String(), `msg="replica still away" replica=lite`)
	})
	if s := replicaState(srv, "lite"); s != "down" {
		t.Errorf("lite is %s, its log table lying", s)
	}
}

// TestCatalogRecoveredFromLog: shepherd stops after a CREATE TABLE is in
// the write-ahead log and on the replicas but before catalog.json
// records it (the file is put back as it was before the statement, which
// is what such a crash leaves). At the next start the catalog has the
// table again, from the log: a SERIAL insert is filled and SELECT *
// expands (issue 14, item 10).
func TestCatalogRecoveredFromLog(t *testing.T) {
	cfg := embedded(t)
	cfg.Listen = "127.0.0.1:0"
	addr, _, stop := startServer(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE early (a int)")
	path := filepath.Join(cfg.DataDir, "catalog.json")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "CREATE TABLE t (id serial PRIMARY KEY, v text)")
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "ALTER TABLE early ADD COLUMN b int")
	mustExec(t, c, "CREATE TABLE u (id serial PRIMARY KEY, w text)")
	mustExec(t, c, "COMMIT")
	c.Close(t.Context())
	stop()
	if err := os.WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}

	addr, srv, log, stop := startLogged(t, cfg)
	snap := srv.cache.Catalog().Snapshot()
	if snap.Table("t") == nil || snap.Table("u") == nil || snap.Table("early").Column("b") == nil {
		t.Fatal("the catalog lacks the logged schema changes after the restart")
	}
	if n := strings.Count(log.String(), "schema change recovered"); n != 3 {
		t.Errorf("%d schema changes recovered, want 3:\n%s", n, log.String())
	}
	c = connect(t, addr, "app")
	mustExec(t, c, "INSERT INTO t (v) VALUES ('one'), ('two')")
	mustExec(t, c, "INSERT INTO u (w) VALUES ('x')")
	var id int
	var v string
	if err := c.QueryRow(t.Context(), "SELECT * FROM t WHERE v = 'two'").Scan(&id, &v); err != nil || id != 2 {
		t.Errorf("SELECT * FROM t: id %d, %v; want 2", id, err)
	}
	c.Close(t.Context())
	stop()

	// The next start finds nothing to apply: the first one recorded
	// that the catalog holds the whole log.
	addr, _, log, _ = startLogged(t, cfg)
	if l := log.String(); strings.Contains(l, "schema change") {
		t.Errorf("schema changes applied a second time:\n%s", l)
	}
	c = connect(t, addr, "app")
	mustExec(t, c, "INSERT INTO t (v) VALUES ('three')")
	assertCount(t, c, "SELECT count(DISTINCT id) FROM t", 3)
}

// TestRecoverReplicasValidates drives start-up's recovery over three
// SQLite replicas whose log tables tell the truth or lie: a barrier
// beyond the log (or, with an empty log, beyond 2^53), or a row hidden
// from the read (the replay's log-table row then collides, as the issue
// saw: "UNIQUE constraint failed: shepherd_log.barrier"). A liar is left
// out with its reason; f+1 truthful replicas suffice; fewer stop the
// start with every reason named.
func TestRecoverReplicasValidates(t *testing.T) {
	ctx := t.Context()
	records := []wal.Record{
		{Txn: 1, Barrier: 3, Statements: []wal.Statement{{SQL: "CREATE TABLE t (a int)", Writes: true, DDL: true, Verb: "CREATE TABLE",
			Forms: []wal.Form{{Dialect: uint8(driver.SQLite), SQL: `CREATE TABLE "t" ("a" INTEGER)`}}}}},
		{Txn: 2, Barrier: 4, Statements: []wal.Statement{{SQL: "INSERT INTO t VALUES (1)", Writes: true, Verb: "INSERT",
			Forms: []wal.Form{{Dialect: uint8(driver.SQLite), SQL: `INSERT INTO "t" VALUES (1)`}}}}},
	}
	open, _ := driver.Lookup(sqlite.Pure)
	// replicas opens three fresh SQLite replicas and runs each one's
	// setup statements on it behind shepherd's back.
	replicas := func(setup ...[]string) []driver.Engine {
		dir := t.TempDir()
		var es []driver.Engine
		for i, stmts := range setup {
			e, err := open(ctx, driver.Spec{Name: fmt.Sprint("lite", i), DSN: fmt.Sprint("lite", i, ".db"), DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range append([]string{replica.LogCreate}, stmts...) {
				if _, err := c.Exec(ctx, driver.Query{SQL: q}); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			es = append(es, e)
		}
		return es
	}
	names := []string{"lite0", "lite1", "lite2"}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	truth := []string{}
	beyond := []string{"INSERT INTO shepherd_log VALUES (5)"}
	huge := []string{"INSERT INTO shepherd_log VALUES (9223372036854775000)"}
	// It has the table of barrier 3 but not its row, and its log table
	// refuses the row as one hidden from the read would.
	hidden := []string{`CREATE TABLE "t" ("a" INTEGER)`, "INSERT INTO shepherd_log VALUES (-3)",
		"CREATE TRIGGER hide AFTER INSERT ON shepherd_log WHEN NEW.barrier = 3 BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: shepherd_log.barrier'); END"}

	for _, c := range []struct {
		name   string
		setup  [][]string
		log    []wal.Record
		out    []int
		base   uint64
		refuse bool
		// retired are left out as retired (cluster.Retirement).
		retired []int
	}{
		{name: "all truthful", setup: [][]string{truth, truth, truth}, log: records, base: 5},
		{name: "beyond the log", setup: [][]string{truth, beyond, truth}, log: records, out: []int{1}, base: 5},
		{name: "huge", setup: [][]string{huge, truth, truth}, log: records, out: []int{0}, base: 5},
		{name: "huge, empty log", setup: [][]string{truth, truth, huge}, out: []int{2}, base: 1},
		{name: "beyond an empty log", setup: [][]string{truth, beyond, truth}, base: 6},
		{name: "replay fails", setup: [][]string{truth, truth, hidden}, log: records, out: []int{2}, base: 5},
		{name: "two liars", setup: [][]string{huge, truth, beyond}, log: records, refuse: true},
		// A retired replica is left alone, even where it would replay.
		{name: "retired", setup: [][]string{truth, truth, truth}, log: records, retired: []int{0}, out: []int{0}, base: 5},
		{name: "retired and a liar", setup: [][]string{truth, truth, beyond}, log: records, retired: []int{0}, refuse: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			retired := map[int]error{}
			for _, i := range c.retired {
				retired[i] = fmt.Errorf("retired: %s", "test")
			}
			rec, err := recoverReplicas(ctx, replicas(c.setup...), names, 1, c.log, retired, quiet)
			if c.refuse {
				if err == nil || !strings.Contains(err.Error(), "lite0") || !strings.Contains(err.Error(), "lite2") {
					t.Fatalf("err %v; want a refusal naming lite0 and lite2", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out []int
			for i := range names {
				if rec.out[i] != nil {
					out = append(out, i)
				}
			}
			for _, i := range c.retired {
				if rec.out[i] == nil || !strings.Contains(rec.out[i].Error(), "retired") {
					t.Errorf("retired %s: left out for %v", names[i], rec.out[i])
				}
			}
			if !slices.Equal(out, c.out) || rec.base != c.base {
				t.Errorf("out %v (%v), base %d; want out %v, base %d", out, rec.out, rec.base, c.out, c.base)
			}
		})
	}
}

// TestRestartWithPrimaryDown restarts shepherd while the MariaDB server
// of the replica that would be primary is down: the view starts on the
// next replica fit to be primary, clients are served, and MariaDB comes
// back as a secondary, caught up.
func TestRestartWithPrimaryDown(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a MariaDB server (not in -short)")
	}
	m := testenv.OwnMariaDB(t)
	cfg := &config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "cbs", F: 1,
		Replicas: []config.Replica{
			{Name: "maria", Driver: "mysql", DSN: m.DSN()},
			{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
			{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		},
	}
	addr, _, stop := startServer(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE kv (k int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO kv VALUES (1, 'one')")
	c.Close(t.Context())
	stop()
	m.Kill()

	addr, srv := start(t, cfg)
	if s, p := replicaState(srv, "maria"), primaryName(srv); s != "down" || p != "lite" {
		t.Errorf("at start maria is %s and %q primary; want down and lite", s, p)
	}
	c = connect(t, addr, "app")
	mustExec(t, c, "INSERT INTO kv VALUES (2, 'two')")
	m.Start()
	waitFor(t, "maria back", func() bool { return replicaState(srv, "maria") == "up" })
	mustExec(t, c, "UPDATE kv SET v = 'uno' WHERE k = 1")
	if err := srv.Cluster().Idle(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT k, v FROM kv ORDER BY k")
}

// TestRecoverPendingBlock: start-up after a crash between a block's log
// record and the catalog's write (the catalog holds the block's pending
// entry, not its changes) applies the entry for the logged transaction:
// its sequence DDL, which the log lacks, and its counters, so a table
// the block dropped and made again continues above the block's rows and
// the sequence it made above the values it drew. An entry whose
// transaction the log lacks (its COMMIT never happened) is dropped.
func TestRecoverPendingBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	cat, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cache := sqlan.NewCache(16, map[driver.Dialect][]string{driver.SQLite: {"lite"}}, cat)
	for _, q := range []string{"CREATE TABLE keep (id serial PRIMARY KEY, v int)", "CREATE TABLE other (id serial PRIMARY KEY)"} {
		sts, err := cache.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.Commit(1, []*pg_query.Node{sts[0].Tree()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cat.Settle(1); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := cat.Next("keep", "id", 1); err != nil {
			t.Fatal(err)
		}
	}
	block := []string{"DROP TABLE keep", "CREATE SEQUENCE n START 5", "CREATE TABLE keep (id serial PRIMARY KEY, v bigint DEFAULT nextval('n'))"}
	err = cat.Pending(schema.PendingBlock{Txn: 4, Statements: block,
		Named:  map[string]schema.SeqState{"n": {Last: 7, Called: true}},
		Serial: map[string]schema.SerialStart{"keep.id": {Next: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Pending(schema.PendingBlock{Txn: 5, Statements: []string{"CREATE SEQUENCE never"}}); err != nil {
		t.Fatal(err)
	}
	// The crash; the log holds transaction 4 (its replica DDL only).
	if cat, err = schema.Open(path); err != nil {
		t.Fatal(err)
	}
	cache = sqlan.NewCache(16, map[driver.Dialect][]string{driver.SQLite: {"lite"}}, cat)
	var logged []wal.Statement
	for _, q := range block {
		if !strings.Contains(q, "SEQUENCE") {
			logged = append(logged, wal.Statement{SQL: q, DDL: true, Writes: true})
		}
	}
	records := []wal.Record{{Txn: 4, Barrier: 2, Statements: logged}}
	var log bytes.Buffer
	if err := recoverCatalog(cache, records, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "ERROR") {
		t.Errorf("recovery logged errors:\n%s", log.String())
	}
	if v, err := cat.Next("keep", "id", 1); err != nil || v != 4 {
		t.Errorf("keep after recovery: next %d, %v; want 4", v, err)
	}
	if v, err := cat.SeqNext("n"); err != nil || v != 8 {
		t.Errorf("n after recovery: next %d, %v; want 8", v, err)
	}
	if cat.Snapshot().Sequence("never") != nil || len(cat.PendingBlocks()) != 0 {
		t.Errorf("a pending block the log lacks was applied or kept: %v", cat.PendingBlocks())
	}
	if !cat.Mark().Holds(2) {
		t.Errorf("the recovered transaction is not marked held")
	}
}
