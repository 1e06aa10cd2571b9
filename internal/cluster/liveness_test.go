package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// waitUntil polls cond (a state the cluster reaches on its own, by its
// probes) until it holds, failing the test after a generous bound.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShellSlowPrimary: a statement the primary takes far longer than the
// primary timeout to answer (a long analytic query, or a lock wait behind
// another session) does not make it suspect while its engine answers the
// liveness probes: no view change, and the transaction commits once the
// statement is answered.
func TestShellSlowPrimary(t *testing.T) {
	defer goleak.VerifyNone(t)
	const timeout = 300 * time.Millisecond
	fc := newFakeCluster(t, Options{DigestRows: -1, PrimaryTimeout: timeout, ProbeTimeout: 5 * time.Second})
	defer fc.Close()
	latch := fakeengine.NewLatch()
	defer latch.Release()
	fc.engines[0].On(fakeengine.Exec, "UPDATE t").Block(latch).Times(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := begin(t, fc)
	done := make(chan error, 1)
	go func() {
		_, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 5"), nil)
		done <- err
	}()
	<-latch.Reached()
	// Ten probes answered while the statement runs: over three primary
	// timeouts (the probe interval is a third of it at most).
	probes := fc.engines[0].Count(fakeengine.Exec, "shepherd_probe")
	start := time.Now()
	waitUntil(t, "ten probes of the primary, or a view change", func() bool {
		return fc.engines[0].Count(fakeengine.Exec, "shepherd_probe") >= probes+10 || len(fc.Views()) > 1
	})
	if v := fc.Views(); len(v) != 1 {
		t.Fatalf("views %+v: a slow primary answering probes was replaced", v)
	}
	if waited := time.Since(start); waited < 3*timeout {
		t.Fatalf("ten probes in %v, under three primary timeouts", waited)
	}
	latch.Release()
	if err := <-done; err != nil {
		t.Fatalf("the slow statement: %v", err)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	fc.idle(t)
	if v := fc.Views(); len(v) != 1 {
		t.Errorf("views %+v, want the first only", v)
	}
	for _, st := range fc.Replicas() {
		if st.State != "up" {
			t.Errorf("replica %s is %s, want up", st.Name, st.State)
		}
	}
}

// TestShellHungSecondary: a secondary whose engine stops answering probes
// (SIGSTOP, a partition) is shown unresponsive and taken out within the
// probe deadline, though it was given no work; commits go on with the
// other f+1. When a second one hangs, a COMMIT waiting for them and new
// statements fail plainly with 57P03 "too few replicas are up", not with
// 40001 "replicas disagreed".
func TestShellHungSecondary(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, ProbeInterval: 5 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond})
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hang2, hang1 := fakeengine.NewLatch(), fakeengine.NewLatch()
	defer hang2.Release()
	defer hang1.Release()
	fc.engines[2].On(fakeengine.Exec, "shepherd_probe").Block(hang2)
	waitUntil(t, "s2 shown unresponsive", func() bool { return fc.Replicas()[2].State == "unresponsive" })

	commit := func(sql string) error {
		txn := begin(t, fc)
		if _, err := txn.Exec(ctx, fc.stmt(t, sql), nil); err != nil {
			txn.Rollback()
			return err
		}
		return txn.Commit(ctx)
	}
	if err := commit("UPDATE t SET v = 6"); err != nil {
		t.Fatalf("commit with s2 hung: %v", err)
	}
	fc.idle(t)
	if n := fc.engines[2].Count(fakeengine.Exec, "UPDATE t"); n != 0 {
		t.Errorf("the hung secondary was sent %d statements", n)
	}

	// s1 hangs while a COMMIT waits for it.
	latch := fakeengine.NewLatch()
	defer latch.Release()
	fc.engines[1].On(fakeengine.Exec, "v = 7").Block(latch)
	txn := begin(t, fc)
	if _, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 7"), nil); err != nil {
		t.Fatalf("update: %v", err)
	}
	<-latch.Reached()
	fc.engines[1].On(fakeengine.Exec, "shepherd_probe").Block(hang1)
	err := txn.Commit(ctx)
	if sqlState(err) != pgerr.CannotConnectNow || !strings.Contains(err.Error(), "too few replicas are up: 1 of 3, need 2") {
		t.Fatalf("commit with two secondaries hung: %v, want 57P03 too few replicas are up", err)
	}
	if err := commit("UPDATE t SET v = 8"); sqlState(err) != pgerr.CannotConnectNow {
		t.Fatalf("a new transaction with one replica up: %v, want 57P03", err)
	}
	if n := fc.engines[0].Count(fakeengine.Commit, ""); n != 1 {
		t.Errorf("the primary committed %d transactions, want 1", n)
	}
	st := fc.Replicas()
	if st[0].State != "up" || st[1].State != "unresponsive" || st[2].State != "unresponsive" {
		t.Errorf("states %s %s %s, want up unresponsive unresponsive", st[0].State, st[1].State, st[2].State)
	}
	if want := "no answer to a probe within 100ms"; st[2].Reason != want {
		t.Errorf("s2's reason %q, want %q", st[2].Reason, want)
	}
	latch.Release()
	hang1.Release()
	hang2.Release()
	fc.idle(t)
}

// TestShellProbeHiccups: probes the engine answers with an error that
// is not a broken connection (too many connections) do not take a replica
// out; a probe that misses its deadline does.
func TestShellProbeHiccups(t *testing.T) {
	defer goleak.VerifyNone(t)
	fc := newFakeCluster(t, Options{DigestRows: -1, ProbeInterval: 5 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond})
	defer fc.Close()
	refused := make(chan struct{}, 1)
	fc.engines[1].On(fakeengine.Exec, "shepherd_probe").Fail("53300", "sorry, too many clients already").
		Do(func(fakeengine.Call) {
			select {
			case refused <- struct{}{}:
			default:
			}
		}).Times(5)
	for range 5 {
		<-refused
	}
	n := fc.engines[1].Count(fakeengine.Exec, "shepherd_probe")
	waitUntil(t, "s1 probed again", func() bool { return fc.engines[1].Count(fakeengine.Exec, "shepherd_probe") > n+2 })
	for i, st := range fc.Replicas() {
		if st.State != "up" {
			t.Errorf("replica %d is %s after probes refused with 53300, want up", i, st.State)
		}
	}
	hang := fakeengine.NewLatch()
	defer hang.Release()
	fc.engines[2].On(fakeengine.Exec, "shepherd_probe").Block(hang)
	waitUntil(t, "s2 shown unresponsive", func() bool { return fc.Replicas()[2].State == "unresponsive" })
}

// TestShellSelectiveSilence (issue 14, item 11): with Options.OpTimeout,
// a primary that answers its probes but leaves one statement unanswered
// past the limit is replaced; the new primary, which ran everything the
// old one answered, runs the statement, and the transaction commits.
// (Without the option a statement may wait as long as it takes:
// TestShellSlowPrimary.)
func TestShellSelectiveSilence(t *testing.T) {
	defer goleak.VerifyNone(t)
	const limit = 200 * time.Millisecond
	fc := newFakeCluster(t, Options{DigestRows: -1, PrimaryTimeout: 300 * time.Millisecond, OpTimeout: limit, ProbeTimeout: 5 * time.Second})
	defer fc.Close()
	latch := fakeengine.NewLatch()
	defer latch.Release()
	fc.engines[0].On(fakeengine.Exec, "UPDATE t").Block(latch).Times(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := begin(t, fc)
	done := make(chan error, 1)
	go func() {
		_, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 5"), nil)
		done <- err
	}()
	<-latch.Reached()
	start := time.Now()
	if err := <-done; err != nil {
		t.Fatalf("the statement the primary kept: %v, want the new primary's answer", err)
	}
	if waited := time.Since(start); waited < limit {
		t.Errorf("answered after %v, under the limit", waited)
	}
	v := fc.Views()
	if len(v) != 2 || !strings.Contains(v[1].Why, "over the limit of one statement") {
		t.Fatalf("views %+v, want a second one for the kept statement", v)
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatalf("commit under the new primary: %v", err)
	}
	fc.idle(t)
}
