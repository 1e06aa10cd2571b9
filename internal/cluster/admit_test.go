package cluster

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// waitAdmitted waits until c has held slots and waiting transactions,
// failing after 10 s.
func waitAdmitted(t *testing.T, c *Cluster, held, waiting int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, w := c.Admitted()
		if h == held && w == waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("admitted %d, waiting %d; want %d, %d", h, w, held, waiting)
		}
		time.Sleep(time.Millisecond) // polls a condition; nothing to be woken by
	}
}

// TestAdmissionOrder: with max_transactions 2, a third and fourth Begin
// wait; they are admitted in the order they came as slots are given back
// (a commit, a rollback with nothing run); a waiter whose ctx ends gets
// 57014 (or statement_timeout's cause) and leaves the queue; a
// transaction that failed, or whose primary was taken out under it,
// gives its slot back; at the end nothing is held.
func TestAdmissionOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, MaxTransactions: 2, ProbeInterval: -1})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := begin(t, fc), begin(t, fc)
	waitAdmitted(t, fc.Cluster, 2, 0)

	admitted := make(chan string, 2)
	txns := map[string]*Txn{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wait := func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			txn, err := fc.Begin(ctx, driver.TxOptions{})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			txns[name] = txn
			mu.Unlock()
			admitted <- name
		}()
	}
	wait("c")
	waitAdmitted(t, fc.Cluster, 2, 1)
	wait("d")
	waitAdmitted(t, fc.Cluster, 2, 2)

	// A waiter that gives up: 57014, and its place is gone.
	gone, giveUp := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := fc.Begin(gone, driver.TxOptions{})
		errc <- err
	}()
	waitAdmitted(t, fc.Cluster, 2, 3)
	giveUp()
	if err := <-errc; sqlState(err) != pgerr.QueryCanceled {
		t.Fatalf("a cancelled waiter: %v, want 57014", err)
	}
	waitAdmitted(t, fc.Cluster, 2, 2)
	// statement_timeout: the ctx's cause is the client's error.
	timeout := pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout")
	tctx, stop := context.WithTimeoutCause(ctx, time.Millisecond, timeout)
	if _, err := fc.Begin(tctx, driver.TxOptions{}); err != timeout {
		t.Fatalf("a waiter past statement_timeout: %v, want %v", err, timeout)
	}
	stop()
	waitAdmitted(t, fc.Cluster, 2, 2)

	// A commits: its slot goes to c, the first in line.
	if _, err := a.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 1"), nil); err != nil {
		t.Fatalf("a: %v", err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatalf("a's commit: %v", err)
	}
	if first := <-admitted; first != "c" {
		t.Fatalf("%s admitted first, want c", first)
	}
	waitAdmitted(t, fc.Cluster, 2, 1)
	// B rolls back having run nothing: d.
	b.Rollback()
	if next := <-admitted; next != "d" {
		t.Fatalf("%s admitted, want d", next)
	}
	wg.Wait()
	waitAdmitted(t, fc.Cluster, 2, 0)

	// C fails a statement and rolls back; d's primary is taken out
	// under it (a view change): both give their slots back.
	for _, e := range fc.engines {
		e.On(fakeengine.Exec, "UPDATE t SET v = 2").Fail(pgerr.UniqueViolation, "duplicate key").Times(1)
	}
	if _, err := txns["c"].Exec(ctx, fc.stmt(t, "UPDATE t SET v = 2"), nil); sqlState(err) != pgerr.UniqueViolation {
		t.Fatalf("c: %v, want 23505", err)
	}
	txns["c"].Rollback()
	if _, err := txns["d"].Exec(ctx, fc.stmt(t, "UPDATE t SET v = 3"), nil); err != nil {
		t.Fatalf("d: %v", err)
	}
	if err := fc.TakeDown("p"); err != nil {
		t.Fatal(err)
	}
	if err := txns["d"].Commit(ctx); err != nil && sqlState(err) != pgerr.SerializationFailure {
		t.Fatalf("d's commit after its primary went: %v, want success or 40001", err)
	}
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
	// And new transactions still get in, up to the cap, on the new view.
	e, f := begin(t, fc), begin(t, fc)
	waitAdmitted(t, fc.Cluster, 2, 0)
	e.Rollback()
	f.Rollback()
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
}

// TestAdmissionCap: 40 clients at once, each running a transaction of a
// read and an update, over a cluster with max_transactions 3: every one
// commits, and no replica's engine ever has more than 3 connections open
// (probes are off; the managers' idle pools are drawn from the same 3).
// Raising the cap live lets more in.
func TestAdmissionCap(t *testing.T) {
	defer goleak.VerifyNone(t)
	const limit, clients = 3, 40
	fc := newFakeCluster(t, Options{DigestRows: -1, MaxTransactions: limit, ProbeInterval: -1})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	peak := make([]int, len(fc.engines))
	for i, e := range fc.engines {
		e.On(fakeengine.Exec, "").Do(func(fakeengine.Call) {
			mu.Lock()
			peak[i] = max(peak[i], e.Open())
			mu.Unlock()
		})
	}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			txn, err := fc.Begin(ctx, driver.TxOptions{})
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if _, err := txn.Exec(ctx, fc.stmt(t, "SELECT v FROM t"), nil); err != nil {
				t.Errorf("client %d: %v", i, err)
				txn.Rollback()
				return
			}
			if _, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = v + 1"), nil); err != nil {
				t.Errorf("client %d: %v", i, err)
				txn.Rollback()
				return
			}
			if err := txn.Commit(ctx); err != nil {
				t.Errorf("client %d: commit %v", i, err)
			}
		}()
	}
	wg.Wait()
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
	for i, p := range peak {
		if p > limit {
			t.Errorf("replica %d had %d engine connections open, want at most %d", i, p, limit)
		}
		if n := fc.engines[i].Count(fakeengine.Commit, ""); n != clients {
			t.Errorf("replica %d committed %d, want %d", i, n, clients)
		}
	}
	// Live: a fourth waits at 3, and gets in when the cap is raised.
	held := []*Txn{begin(t, fc), begin(t, fc), begin(t, fc)}
	got := make(chan *Txn)
	go func() {
		txn, err := fc.Begin(ctx, driver.TxOptions{})
		if err != nil {
			t.Error(err)
		}
		got <- txn
	}()
	waitAdmitted(t, fc.Cluster, 3, 1)
	fc.SetMaxTransactions(4)
	held = append(held, <-got)
	waitAdmitted(t, fc.Cluster, 4, 0)
	for _, txn := range held {
		if txn != nil {
			txn.Rollback()
		}
	}
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
}

// TestAdmissionClose: a transaction waiting for a slot when the cluster
// shuts down gets 57P01 rather than waiting for good.
func TestAdmissionClose(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, MaxTransactions: 1, ProbeInterval: -1})
	begin(t, fc)
	errc := make(chan error, 1)
	go func() {
		_, err := fc.Begin(context.Background(), driver.TxOptions{})
		errc <- err
	}()
	waitAdmitted(t, fc.Cluster, 1, 1)
	fc.Close()
	if err := <-errc; sqlState(err) != pgerr.AdminShutdown {
		t.Fatalf("waiting as the cluster closed: %v, want 57P01", err)
	}
}

// TestAdmissionSingleStatements: with max_transactions 8, one slot is kept
// for statements in autocommit. Seven transaction blocks whose clients
// sit idle hold the others, and an eighth block waits; a single
// statement still gets in at once (a SELECT 1 does not wait behind idle
// blocks), and a second one waits for it, not for the blocks. A single
// statement never takes the blocks' shared slots while a block waits,
// and the cap on engine connections stays 8.
func TestAdmissionSingleStatements(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, MaxTransactions: 8, ProbeInterval: -1})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var blocks []*Txn
	for range 7 {
		blocks = append(blocks, begin(t, fc))
	}
	waitAdmitted(t, fc.Cluster, 7, 0)
	eighth := make(chan *Txn, 1)
	go func() {
		txn, err := fc.Begin(ctx, driver.TxOptions{})
		if err != nil {
			t.Error(err)
		}
		eighth <- txn
	}()
	waitAdmitted(t, fc.Cluster, 7, 1)

	one, err := fc.BeginSingle(ctx, driver.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, fc.Cluster, 8, 1)
	if _, err := one.ExecSingle(ctx, fc.stmt(t, "SELECT v FROM t"), nil); err != nil {
		t.Fatal(err)
	}
	// The cap holds: a second single statement waits, for the first.
	second := make(chan *Txn, 1)
	go func() {
		txn, err := fc.BeginSingle(ctx, driver.TxOptions{})
		if err != nil {
			t.Error(err)
		}
		second <- txn
	}()
	waitAdmitted(t, fc.Cluster, 8, 2)
	if err := one.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	two := <-second
	waitAdmitted(t, fc.Cluster, 8, 1)
	if err := two.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The reserved slot is free again, the shared ones are full: the
	// waiting block still waits.
	waitAdmitted(t, fc.Cluster, 7, 1)
	// A block ends: its slot goes to the block in line, and single
	// statements get the reserved one.
	blocks[0].Rollback()
	blocks[0] = <-eighth
	waitAdmitted(t, fc.Cluster, 7, 0)
	three, err := fc.BeginSingle(ctx, driver.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, fc.Cluster, 8, 0)
	three.Rollback()
	for _, b := range blocks {
		b.Rollback()
	}
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
}

// TestAdmissionBlocksNotStarved: single statements fill every slot of
// max_transactions 8 while a transaction block waits: as they end, the
// shared slots go to the block, and new single statements get only the
// reserved one meanwhile.
func TestAdmissionBlocksNotStarved(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, MaxTransactions: 8, ProbeInterval: -1})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var singles []*Txn
	for range 8 {
		s, err := fc.BeginSingle(ctx, driver.TxOptions{})
		if err != nil {
			t.Fatal(err)
		}
		singles = append(singles, s)
	}
	waitAdmitted(t, fc.Cluster, 8, 0)
	block := make(chan *Txn, 1)
	go func() {
		txn, err := fc.Begin(ctx, driver.TxOptions{})
		if err != nil {
			t.Error(err)
		}
		block <- txn
	}()
	waitAdmitted(t, fc.Cluster, 8, 1)
	// One ends: 7 held, 1 of them in the reserved slot, 6 shared of 7:
	// the block fits and goes first; a newcomer waits.
	singles[0].Rollback()
	b := <-block
	waitAdmitted(t, fc.Cluster, 8, 0)
	late := make(chan *Txn, 1)
	go func() {
		txn, err := fc.BeginSingle(ctx, driver.TxOptions{})
		if err != nil {
			t.Error(err)
		}
		late <- txn
	}()
	waitAdmitted(t, fc.Cluster, 8, 1)
	singles[1].Rollback()
	singles[1] = <-late
	for _, s := range singles[1:] {
		s.Rollback()
	}
	b.Rollback()
	fc.idle(t)
	waitAdmitted(t, fc.Cluster, 0, 0)
}
