package cluster

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
)

// TestShellSerialCancelSplit: serial mode, where every replica votes on
// every answer and a replica taken out has no catch-up. The client
// cancels a write while all three replicas run it; the cancel reaches s2
// in time (it fails with 57014) but p and s1 finish the write anyway, so
// f+1 agree and the client gets their answer. Committing now would
// leave s2 without the write: it would be taken out for good. The cancel
// must not split the replicas: the transaction rolls back everywhere
// (the client, who cancelled, gets 57014 at COMMIT) and every replica
// stays in.
func TestShellSerialCancelSplit(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{Mode: coord.Serial, DigestRows: -1})
	defer fc.Close()
	const update = "UPDATE t SET v = 1"
	// p and s1 finish the statement whatever the cancel: it came too
	// late for them.
	gate := make(chan struct{})
	ran := make(chan struct{}, 2)
	for _, e := range fc.engines[:2] {
		e.On(fakeengine.Exec, update).Affects(1).Do(func(fakeengine.Call) {
			ran <- struct{}{}
			<-gate
		})
	}
	held := fakeengine.NewLatch()
	defer held.Release()
	fc.engines[2].On(fakeengine.Exec, update).Affects(1).Block(held)

	txn := begin(t, fc)
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		a   *answer.Answer
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := txn.Exec(ctx, fc.stmt(t, update), nil)
		done <- result{a, err}
	}()
	<-ran
	<-ran
	<-held.Reached()
	cancel()
	<-held.Cancelled() // s2 stopped the write
	close(gate)        // p and s1 finished it
	r := <-done
	var err error
	if r.err == nil {
		err = txn.Commit(context.Background())
	} else {
		txn.Rollback()
	}
	fc.idle(t)
	for i, st := range fc.Replicas() {
		if st.State != "up" {
			t.Errorf("replica %s is %s after a cancel (statement: %v, commit: %v)", st.Name, st.State, r.err, err)
		}
		if n := fc.engines[i].Count(fakeengine.Commit, ""); n != 0 && (r.err != nil || err != nil) {
			t.Errorf("replica %s committed a transaction the client was told failed", st.Name)
		}
	}
	committed := 0
	for _, e := range fc.engines {
		committed += e.Count(fakeengine.Commit, "")
	}
	if committed != 0 && committed != len(fc.engines) {
		t.Errorf("%d of %d replicas committed: split", committed, len(fc.engines))
	}
	if r.err == nil && err != nil && sqlState(err) != "57014" {
		t.Errorf("COMMIT after the cancel split the replicas: %v, want 57014", err)
	}
}

// TestShellSerialCancelCommit: serial mode; the client cancels its
// COMMIT while s1 and s2 are committing (p committed already). A COMMIT
// cancelled on some replicas after others did it would leave them
// different, and a COMMIT cannot be undone: it runs to the agreed end on
// every replica, and the client gets its outcome.
func TestShellSerialCancelCommit(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{Mode: coord.Serial, DigestRows: -1})
	defer fc.Close()
	held := []*fakeengine.Latch{fakeengine.NewLatch(), fakeengine.NewLatch()}
	for i, e := range fc.engines[1:] {
		defer held[i].Release()
		e.On(fakeengine.Commit, "").Block(held[i])
	}
	handled := make(chan struct{})
	fc.cancelHandled = func(coord.Op) { close(handled) }
	txn := begin(t, fc)
	if _, err := txn.Exec(context.Background(), fc.stmt(t, "UPDATE t SET v = 1"), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- txn.Commit(ctx) }()
	<-held[0].Reached()
	<-held[1].Reached()
	cancel()
	<-handled // whatever the cancel does to the replicas is done
	held[0].Release()
	held[1].Release()
	err := <-done
	fc.idle(t)
	committed := 0
	for i, e := range fc.engines {
		for _, call := range e.Calls() {
			if call.Kind == fakeengine.Commit && call.Err == nil {
				committed++
			}
		}
		if st := fc.Replicas()[i]; st.State != "up" {
			t.Errorf("replica %s is %s after a cancelled COMMIT", st.Name, st.State)
		}
	}
	if committed != len(fc.engines) {
		t.Errorf("%d of %d replicas committed (COMMIT: %v): split", committed, len(fc.engines), err)
	}
	if err != nil {
		t.Errorf("COMMIT that committed everywhere: %v", err)
	}
}
