package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// The tests in this file drive the shell (cluster and replica managers)
// over scripted fake engines (package fakeengine): no database, so each
// runs in milliseconds and every interleaving is forced by latches, not
// by timing. Each checks that it leaves no goroutine behind.

// fakeCluster is a cluster of three fake engines, f = 1, in CBS mode
// unless opts say otherwise: a locking primary and two concurrent locking
// secondaries, all speaking PostgreSQL's dialect so that statements reach
// them as written.
type fakeCluster struct {
	*Cluster
	engines []*fakeengine.Engine
	cache   *sqlan.Cache
}

func newFakeCluster(t *testing.T, opts Options) *fakeCluster {
	t.Helper()
	names := []string{"p", "s1", "s2"}
	fc := &fakeCluster{cache: sqlan.NewCache(64, map[driver.Dialect][]string{driver.Postgres: names}, nil)}
	var reps []Replica
	for _, n := range names {
		e := fakeengine.New(n, driver.Locking, driver.Postgres)
		fc.engines = append(fc.engines, e)
		reps = append(reps, Replica{Name: n, Engine: e})
	}
	if opts.Mode == 0 {
		opts.Mode = coord.CBS
	}
	opts.F = 1
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Tick == 0 {
		opts.Tick = time.Millisecond
	}
	fc.Cluster = New(opts, reps)
	return fc
}

// stmt parses one statement.
func (fc *fakeCluster) stmt(t *testing.T, sql string) *sqlan.Stmt {
	t.Helper()
	sts, err := fc.cache.Parse(sql)
	if err != nil || len(sts) != 1 {
		t.Fatalf("parse %q: %v", sql, err)
	}
	return sts[0]
}

// idle waits until every replica finished every transaction.
func (fc *fakeCluster) idle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fc.Idle(ctx); err != nil {
		t.Fatalf("replicas not idle: %v", err)
	}
}

func sqlState(err error) string {
	var pe *pgerr.Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestShellVote: the answers of the secondaries decide a COMMIT. One
// secondary answering otherwise is out-voted and counted; both answering
// otherwise fail the COMMIT with 40001 and nothing is committed anywhere.
// Secondaries send digests only (DigestRows 0), which the vote compares.
func TestShellVote(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: 0, PrimaryTimeout: 0})
	defer fc.Close()
	ctx := context.Background()
	for _, e := range fc.engines {
		e.On(fakeengine.Exec, "SELECT v FROM t").Rows([]string{"v"}, []string{"1"}, []string{"2"})
	}
	run := func() error {
		txn := begin(t, fc)
		a, err := txn.Exec(ctx, fc.stmt(t, "SELECT v FROM t"), nil)
		if err != nil {
			t.Fatalf("select: %v", err)
		}
		if len(a.Rows) != 2 {
			t.Fatalf("the client got %d rows, want the primary's 2", len(a.Rows))
		}
		return txn.Commit(ctx)
	}
	if err := run(); err != nil {
		t.Fatalf("all agree: commit %v", err)
	}
	fc.idle(t)

	fc.engines[1].On(fakeengine.Exec, "SELECT v FROM t").Rows([]string{"v"}, []string{"1"}, []string{"3"})
	if err := run(); err != nil {
		t.Fatalf("one secondary differs: commit %v, want success (p and s2 agree)", err)
	}
	fc.idle(t)
	if st := fc.Replicas(); st[1].Mismatches != 1 || st[2].Mismatches != 0 || st[0].Mismatches != 0 {
		t.Errorf("mismatches %d %d %d, want 0 1 0", st[0].Mismatches, st[1].Mismatches, st[2].Mismatches)
	}

	fc.engines[2].On(fakeengine.Exec, "SELECT v FROM t").Rows([]string{"v"}, []string{"1"})
	commits := fc.engines[0].Count(fakeengine.Commit, "")
	if err := run(); sqlState(err) != pgerr.SerializationFailure {
		t.Fatalf("both secondaries differ: commit %v, want 40001", err)
	}
	fc.idle(t)
	if n := fc.engines[0].Count(fakeengine.Commit, ""); n != commits {
		t.Errorf("the primary committed a transaction the vote refused")
	}
}

// TestShellCancelCommit: a client that gives up while its COMMIT waits
// for a held-back secondary is answered at once; the transaction then
// ends the same way on every replica (committed everywhere or nowhere)
// and nothing is left running.
func TestShellCancelCommit(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1})
	defer fc.Close()
	latch := fakeengine.NewLatch()
	for _, e := range fc.engines[1:] {
		e.On(fakeengine.Exec, "UPDATE t").Block(latch).Times(1)
	}
	txn := begin(t, fc)
	if _, err := txn.Exec(context.Background(), fc.stmt(t, "UPDATE t SET v = 1"), nil); err != nil {
		t.Fatalf("update: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- txn.Commit(ctx) }()
	<-latch.Reached()
	cancel()
	err := <-done
	if err == nil {
		t.Fatalf("commit after cancel succeeded before any secondary was ready")
	}
	latch.Release()
	fc.idle(t)
	var committed []bool
	for _, e := range fc.engines {
		committed = append(committed, e.Count(fakeengine.Commit, "") > 0)
	}
	if committed[0] != committed[1] || committed[1] != committed[2] {
		t.Errorf("replicas ended the transaction differently: committed %v (client got %v)", committed, err)
	}
	if committed[0] {
		t.Errorf("a cancelled COMMIT (%v) was committed", err)
	}
}

// TestShellRerun: a secondary on which a committing transaction waits
// behind an undecided one (a lock the shell cannot see) aborts the
// undecided one once it counts as blocked, and re-runs it later; both
// commit everywhere, the re-run's answer endorsing the second COMMIT.
func TestShellRerun(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	started := make(chan struct{}, 2)
	for _, e := range fc.engines[1:] {
		// On each secondary, B's update waits for A's lock: until A's
		// attempt there is rolled back.
		lock := fakeengine.NewLatch()
		e.On(fakeengine.Exec, "v = 10").Do(func(fakeengine.Call) { started <- struct{}{} }).Times(1)
		e.On(fakeengine.Exec, "v = 20").Block(lock).Times(1)
		e.On(fakeengine.Rollback, "").Do(func(fakeengine.Call) { lock.Release() })
	}
	a := begin(t, fc)
	if _, err := a.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 10"), nil); err != nil {
		t.Fatalf("A: %v", err)
	}
	<-started
	<-started // A holds its "lock" on both secondaries
	b := begin(t, fc)
	if _, err := b.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 20"), nil); err != nil {
		t.Fatalf("B: %v", err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("B's commit: %v", err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatalf("A's commit after its re-run: %v", err)
	}
	fc.idle(t)
	for i, e := range fc.engines[1:] {
		if n := e.Count(fakeengine.Exec, "v = 10"); n != 2 {
			t.Errorf("secondary %d ran A's update %d times, want 2 (a re-run)", i+1, n)
		}
		if n := e.Count(fakeengine.Commit, ""); n != 2 {
			t.Errorf("secondary %d committed %d times, want 2", i+1, n)
		}
	}
	if st := fc.Replicas(); st[1].Reruns != 1 || st[2].Reruns != 1 {
		t.Errorf("re-runs %d %d, want 1 1", st[1].Reruns, st[2].Reruns)
	}
}

// TestShellSilentPrimary: a primary whose engine hangs (a statement and
// its liveness probes go unanswered) is replaced; its client's
// transaction fails with a retryable error (or goes on, when a secondary
// ran everything), and new transactions run on the new primary. (A
// primary that answers probes is only slow: TestShellSlowPrimary.)
func TestShellSilentPrimary(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, PrimaryTimeout: 50 * time.Millisecond, ProbeTimeout: time.Second})
	defer fc.Close()
	latch := fakeengine.NewLatch()
	defer latch.Release()
	fc.engines[0].On(fakeengine.Exec, "UPDATE t").Block(latch)
	fc.engines[0].On(fakeengine.Exec, "shepherd_probe").Block(latch)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := begin(t, fc)
	_, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 3"), nil)
	if err == nil {
		err = txn.Commit(ctx)
	} else {
		txn.Rollback()
	}
	if err != nil && sqlState(err) != pgerr.SerializationFailure {
		t.Fatalf("the silent primary's transaction: %v, want success or 40001", err)
	}
	views := fc.Views()
	if len(views) != 2 || views[1].Primary == "p" {
		t.Fatalf("views %+v, want a second view without p", views)
	}
	txn = begin(t, fc)
	if _, err := txn.Exec(ctx, fc.stmt(t, "SELECT 1"), nil); err != nil {
		t.Fatalf("select on the new primary: %v", err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatalf("commit on the new primary: %v", err)
	}
	latch.Release()
	fc.idle(t)
	if st := fc.Replicas(); st[0].State != "down" && st[0].State != "unresponsive" {
		t.Errorf("the silent primary is not shown out: %+v", st[0])
	}
}

// TestShellBrokenSecondary: a secondary whose connection breaks at
// COMMIT is taken out; the client's COMMIT succeeds on the other f+1, the
// cluster goes on without it, and Close leaves no connection open.
func TestShellBrokenSecondary(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fc.engines[2].On(fakeengine.Commit, "").Fail(pgerr.ConnectionFailure, "server closed the connection").Times(1)
	for i := range 3 {
		txn := begin(t, fc)
		if _, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 4"), nil); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if err := txn.Commit(ctx); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	fc.idle(t)
	if st := fc.Replicas(); st[2].State != "down" || st[0].State == "down" || st[1].State == "down" {
		t.Errorf("states %s %s %s, want only s2 down", st[0].State, st[1].State, st[2].State)
	}
	fc.Close()
	for i, e := range fc.engines {
		if n := e.Open(); n != 0 {
			t.Errorf("replica %d has %d connections open after Close", i, n)
		}
	}
}

// begin starts a transaction of c, which admits it at once.
func begin(t testing.TB, c interface {
	Begin(context.Context, driver.TxOptions) (*Txn, error)
}) *Txn {
	t.Helper()
	txn, err := c.Begin(context.Background(), driver.TxOptions{})
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	return txn
}
