package cluster

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// ddlCluster is a CBS cluster of fake engines over a write-ahead log: p,
// the primary, speaks MariaDB's dialect and so commits DDL as it runs it;
// s1 and s2 speak PostgreSQL's. Each run (start) opens the log and the
// retirement file in dir anew, as a restart of shepherd does.
type ddlCluster struct {
	engines []*fakeengine.Engine
	cache   *sqlan.Cache
	dir     string
}

func newDDLCluster(t *testing.T) *ddlCluster {
	dc := &ddlCluster{dir: t.TempDir()}
	dc.engines = []*fakeengine.Engine{
		fakeengine.New("p", driver.Locking, driver.MySQL),
		fakeengine.New("s1", driver.Locking, driver.Postgres),
		fakeengine.New("s2", driver.Locking, driver.Postgres),
	}
	dc.cache = sqlan.NewCache(64, map[driver.Dialect][]string{driver.MySQL: {"p"}, driver.Postgres: {"s1", "s2"}}, nil)
	return dc
}

// start opens the log and the retirement file and starts a cluster over
// the engines; stop closes both.
func (dc *ddlCluster) start(t *testing.T) (c *Cluster, stop func()) {
	t.Helper()
	w, records, err := wal.Open(filepath.Join(dc.dir, "wal"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := uint64(1)
	if len(records) > 0 {
		base = records[len(records)-1].Barrier + 1
	}
	path := filepath.Join(dc.dir, "retired.json")
	retired, err := LoadRetired(path)
	if err != nil {
		t.Fatal(err)
	}
	var reps []Replica
	for i, e := range dc.engines {
		reps = append(reps, Replica{Name: []string{"p", "s1", "s2"}[i], Engine: e})
	}
	c = New(Options{Mode: coord.CBS, F: 1, WAL: w, Base: base, Cache: dc.cache, Tick: time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), RetiredFile: path, Retired: retired,
		IntentFile: filepath.Join(dc.dir, "ddl-intents.json")}, reps)
	return c, func() {
		c.Close()
		w.Close()
	}
}

func (dc *ddlCluster) stmt(t *testing.T, sql string) *sqlan.Stmt {
	t.Helper()
	sts, err := dc.cache.Parse(sql)
	if err != nil || len(sts) != 1 {
		t.Fatalf("parse %q: %v", sql, err)
	}
	return sts[0]
}

// autocommit runs one statement and commits it.
func autocommit(ctx context.Context, c *Cluster, st *sqlan.Stmt) error {
	txn, err := c.Begin(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	if _, err := txn.ExecSingle(ctx, st, nil); err != nil {
		txn.Rollback()
		return err
	}
	return txn.Commit(ctx)
}

// TestShellRetiredStaysOutAfterRestart: the primary, which commits DDL as
// it runs it, ran CREATE TABLE that both secondaries refused; the
// transaction rolled back on them and the primary was retired. A restart
// must not take it back (it holds a table the others lack): it starts
// retired, SHOW REPLICAS says so and why, and it is sent nothing. Once
// an operator rebuilt it, Reinstate brings it back: it catches up from
// the log and is up again, also after the next restart.
func TestShellRetiredStaysOutAfterRestart(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dc := newDDLCluster(t)
	for _, e := range dc.engines[1:] {
		e.On(fakeengine.Exec, "CREATE TABLE x").Fail("42P07", `relation "x" already exists`)
	}
	c, stop := dc.start(t)
	if err := autocommit(ctx, c, dc.stmt(t, "CREATE TABLE x (a int)")); sqlState(err) != "40001" {
		t.Fatalf("CREATE TABLE the secondaries refused: %v, want 40001", err)
	}
	// The client may hear of the refusal before the retirement is
	// carried out.
	waitUntil(t, "p retired", func() bool { return c.Replicas()[0].State == "retired" })
	if st := c.Replicas()[0]; !strings.Contains(st.Reason, "DDL") {
		t.Fatalf("p retired for %q, want the DDL named", st.Reason)
	}
	stop()

	// Restart: p stays out.
	c, stop = dc.start(t)
	st := c.Replicas()[0]
	if st.State != "retired" || !strings.Contains(st.Reason, "DDL") {
		t.Fatalf("p after a restart: %s (%s), want retired with the reason", st.State, st.Reason)
	}
	before := dc.engines[0].Count(fakeengine.Exec, "INSERT")
	if err := autocommit(ctx, c, dc.stmt(t, "INSERT INTO y VALUES (1)")); err != nil {
		t.Fatalf("insert with p retired: %v", err)
	}
	if n := dc.engines[0].Count(fakeengine.Exec, "INSERT"); n != before {
		t.Fatalf("retired p was sent the insert (%d times)", n-before)
	}
	if err := c.Reinstate("s1"); sqlState(err) != "55000" {
		t.Fatalf("Reinstate of a replica in use: %v, want 55000", err)
	}

	// The operator rebuilt p: Reinstate brings it back from the log.
	if err := c.Reinstate("p"); err != nil {
		t.Fatalf("Reinstate: %v", err)
	}
	waitUntil(t, "p back after Reinstate", func() bool { return c.Replicas()[0].State == "up" })
	stop()
	c, stop = dc.start(t)
	defer stop()
	if st := c.Replicas()[0]; st.State != "up" {
		t.Fatalf("p after Reinstate and a restart: %s (%s), want up", st.State, st.Reason)
	}
}
