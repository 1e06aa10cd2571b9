package cluster

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// newPassthrough is a passthrough cluster over one fake engine of class.
func newPassthrough(t *testing.T, class driver.Class) *fakeCluster {
	t.Helper()
	fc := &fakeCluster{cache: sqlan.NewCache(64, map[driver.Dialect][]string{driver.Postgres: {"p"}}, nil)}
	e := fakeengine.New("p", class, driver.Postgres)
	fc.engines = []*fakeengine.Engine{e}
	fc.Cluster = New(Options{Mode: coord.Passthrough, DigestRows: -1, Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		[]Replica{{Name: "p", Engine: e}})
	return fc
}

// autocommitOn runs st as the session runs a statement in autocommit:
// BeginSingle, ExecSingle, then Commit, or Rollback after an error.
func autocommitOn(ctx context.Context, c *Cluster, st *sqlan.Stmt) error {
	txn, err := c.BeginSingle(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	if _, err := txn.ExecSingle(ctx, st, nil); err != nil {
		txn.Rollback()
		return err
	}
	return txn.Commit(ctx)
}

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := bytes.Cut(bytes.TrimPrefix(buf, []byte("goroutine ")), []byte(" "))
	return string(id)
}

// TestPassthroughInline: in passthrough, a statement in autocommit runs
// on the engine from the session's own goroutine (replica.Manager.Run),
// with no hand-off to a worker goroutine and back; the engine runs it in
// its own autocommit (no BEGIN, no COMMIT) on one pooled connection. A
// serial engine, whose transaction slot a worker waits for, still gets
// a worker.
func TestPassthroughInline(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		class  driver.Class
		inline bool
	}{{driver.MVCC, true}, {driver.Locking, true}, {driver.Serial, false}} {
		fc := newPassthrough(t, tc.class)
		var mu sync.Mutex
		var ran []string
		fc.engines[0].On(fakeengine.Exec, "SELECT v FROM t").Do(func(fakeengine.Call) {
			mu.Lock()
			ran = append(ran, goroutineID())
			mu.Unlock()
		}).Rows([]string{"v"}, []string{"1"})
		ctx := context.Background()
		st := fc.stmt(t, "SELECT v FROM t")
		for range 3 {
			if err := autocommitOn(ctx, fc.Cluster, st); err != nil {
				t.Fatalf("%s: %v", tc.class, err)
			}
		}
		me := goroutineID()
		for i, g := range ran {
			if (g == me) != tc.inline {
				t.Errorf("%s: statement %d ran on goroutine %s, the session's is %s (inline: %v)", tc.class, i, g, me, tc.inline)
			}
		}
		if n := len(ran); n != 3 {
			t.Errorf("%s: the engine ran %d statements, want 3", tc.class, n)
		}
		fc.idle(t)
		e := fc.engines[0]
		if n := e.Count(fakeengine.Begin, "") + e.Count(fakeengine.Commit, ""); n != 0 {
			t.Errorf("%s: %d BEGIN or COMMIT calls, want none (the engine's own autocommit)", tc.class, n)
		}
		if n := e.Count(fakeengine.Connect, ""); n != 1 {
			t.Errorf("%s: %d connections made for three statements one after another, want 1 (pooled)", tc.class, n)
		}
		fc.Close()
	}
}

// TestPassthroughInlineCancel: a statement the session's goroutine runs
// itself is cancelled as one a worker runs: by the session's context
// (the client's cancel, statement_timeout), and by the manager (the
// replica taken out). Its connection goes back to the pool after a
// cancel; none is left open after Close.
func TestPassthroughInlineCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newPassthrough(t, driver.MVCC)
	defer func() {
		fc.Close()
		if n := fc.engines[0].Open(); n != 0 {
			t.Errorf("%d connections open after Close", n)
		}
	}()
	e := fc.engines[0]
	st := fc.stmt(t, "SELECT v FROM t")

	latch := fakeengine.NewLatch()
	e.On(fakeengine.Exec, "SELECT v FROM t").Block(latch).Times(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- autocommitOn(ctx, fc.Cluster, st) }()
	<-latch.Reached()
	cancel()
	if err := <-done; sqlState(err) != pgerr.QueryCanceled {
		t.Fatalf("cancelled statement: %v, want 57014", err)
	}
	<-latch.Cancelled()
	if err := autocommitOn(context.Background(), fc.Cluster, st); err != nil {
		t.Fatalf("statement after the cancel: %v", err)
	}
	if n := e.Count(fakeengine.Connect, ""); n != 1 {
		t.Errorf("%d connections made, want 1: the cancelled statement's goes back to the pool", n)
	}

	// Taken out while the statement runs: the manager stops it.
	latch = fakeengine.NewLatch()
	e.On(fakeengine.Exec, "SELECT v FROM t").Block(latch).Times(1)
	go func() { done <- autocommitOn(context.Background(), fc.Cluster, st) }()
	<-latch.Reached()
	if err := fc.TakeDown("p"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-latch.Cancelled():
	case <-time.After(10 * time.Second):
		latch.Release()
		t.Fatalf("the statement running on the session's goroutine was not stopped when its replica was taken out")
	}
	if err := <-done; err == nil {
		t.Errorf("statement on a replica taken out succeeded")
	}
}

// TestPassthroughInlineCancelConnect: a statement the session's goroutine
// runs itself may have to open the engine connection first (none pooled);
// a cancel or statement_timeout that ends its context then stops the
// connect, and the client gets 57014 as when a worker runs it, not the
// 08006 of an engine that cannot be reached.
func TestPassthroughInlineCancelConnect(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newPassthrough(t, driver.MVCC)
	defer fc.Close()
	e := fc.engines[0]
	st := fc.stmt(t, "SELECT v FROM t")
	latch := fakeengine.NewLatch()
	e.On(fakeengine.Connect, "").Block(latch).Times(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- autocommitOn(ctx, fc.Cluster, st) }()
	<-latch.Reached()
	cancel()
	if err := <-done; sqlState(err) != pgerr.QueryCanceled {
		t.Fatalf("statement cancelled while its connection was opened: %v (SQLSTATE %s), want 57014", err, sqlState(err))
	}
	if n := e.Count(fakeengine.Exec, "SELECT v FROM t"); n != 0 {
		t.Errorf("the cancelled statement ran %d times", n)
	}
	if err := autocommitOn(context.Background(), fc.Cluster, st); err != nil {
		t.Fatalf("statement after the cancel: %v", err)
	}
}

// TestPassthroughInlineTakenOut: a replica taken out after the core sent
// it a statement that the session's goroutine runs itself, but before
// that goroutine started it, does not run it: the client was told the
// statement failed (no replica is up), so a write must not commit there,
// as it does not when a worker would have run it (the manager stops the
// attempts it knows of when the replica is taken out).
func TestPassthroughInlineTakenOut(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newPassthrough(t, driver.MVCC)
	defer fc.Close()
	e := fc.engines[0]
	st := fc.stmt(t, "UPDATE t SET v = 1")
	fc.beforeInline = func() {
		fc.beforeInline = nil
		if err := fc.TakeDown("p"); err != nil {
			t.Error(err)
		}
	}
	err := autocommitOn(context.Background(), fc.Cluster, st)
	if err == nil {
		t.Fatalf("statement on a replica taken out succeeded")
	}
	if n := e.Count(fakeengine.Exec, "UPDATE t"); n != 0 {
		t.Errorf("the client was told %q, but the replica taken out ran the write %d times", err, n)
	}
}

// TestPassthroughCommitTakenOut: a COMMIT that no replica can be sent (its
// one replica was taken out after the statement ran) fails, and the
// transaction still ends: it leaves the cluster (Idle) and gives its
// admission slot back, as a ROLLBACK does. Found by a stress run of
// inline statements with a TakeDown.
func TestPassthroughCommitTakenOut(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newPassthrough(t, driver.MVCC)
	defer fc.Close()
	st := fc.stmt(t, "UPDATE t SET v = 1")
	ctx := context.Background()
	txn, err := fc.BeginSingle(ctx, driver.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := txn.ExecSingle(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	if err := fc.TakeDown("p"); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(ctx); err == nil {
		t.Fatalf("COMMIT with no replica up succeeded")
	}
	fc.idle(t)
}
