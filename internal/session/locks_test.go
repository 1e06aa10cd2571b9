package session

import (
	"context"
	"runtime"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestLockTable: session locks are counted per session and never
// conflict with the same session's; shared locks share; transaction
// locks go with release(false), everything with release(true); a wait
// that would close a cycle of three is a deadlock (40P01), and the
// waits of the others are granted as the locks are let go.
func TestLockTable(t *testing.T) {
	ctx := context.Background()
	var tab lockTable
	a, b, c := &lockOwner{}, &lockOwner{}, &lockOwner{}
	k1, k2, k3 := lockKey{a: 1}, lockKey{a: 2}, lockKey{a: 1, b: 0, two: true}
	try := func(o *lockOwner, k lockKey, excl, xact bool) bool {
		t.Helper()
		got, err := tab.lock(ctx, o, k, excl, xact, false)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if !try(a, k1, true, false) || !try(a, k1, true, false) || !try(a, k1, false, false) {
		t.Fatal("a session's own locks conflict")
	}
	if try(b, k1, false, false) || !try(b, k3, true, false) {
		t.Fatal("(1) and (1, 0) must be different keys, and a's (1) exclusive")
	}
	if !tab.unlock(a, k1, true) || !tab.unlock(a, k1, true) || tab.unlock(a, k1, true) {
		t.Fatal("unlock must count a's two exclusive holds")
	}
	if try(b, k1, true, false) || !try(b, k1, false, false) {
		t.Fatal("a's shared hold must block b's exclusive and admit b's shared")
	}
	tab.release(a, true)
	tab.release(b, true)
	if !try(a, k2, true, true) || try(b, k2, true, false) {
		t.Fatal("a's transaction lock")
	}
	tab.release(a, false)
	if !try(b, k2, true, false) {
		t.Fatal("a's transaction lock outlived release(false)")
	}
	tab.release(b, true)

	// a holds 1, b holds 2, c holds 3; a waits for 2, b for 3: c asking
	// for 1 closes the cycle.
	try(a, k1, true, false)
	try(b, k2, true, false)
	try(c, k3, true, false)
	done := make(chan error, 2)
	waiting := func(o *lockOwner) bool {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		return o.waiting != nil
	}
	go func() { _, err := tab.lock(ctx, a, k2, true, false, true); done <- err }()
	go func() { _, err := tab.lock(ctx, b, k3, true, false, true); done <- err }()
	for !waiting(a) || !waiting(b) {
		// Both goroutines register their wait before they block: spin
		// on the table's state until they have.
		runtime.Gosched()
	}
	if _, err := tab.lock(ctx, c, k1, true, false, true); pgerr.Code(err) != pgerr.DeadlockDetected {
		t.Fatalf("closing the cycle: %v, want 40P01", err)
	}
	tab.release(c, true) // b gets 3, lets go of everything, a gets 2
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tab.release(b, true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tab.release(a, true)
	if len(tab.locks) != 0 {
		t.Errorf("locks left: %v", tab.locks)
	}
}

// TestDDLLockDeadlock: two blocks altering t1 and t2 in opposite order
// close a cycle of DDL locks: the second to wait gets 40P01, as on
// PostgreSQL, and the first gets its lock once the other lets go. A cycle
// through an advisory lock and a DDL lock is found too. DDL locks stay
// through release (pg_advisory_unlock_all, the end of the transaction's
// advisory locks) until releaseTables.
func TestDDLLockDeadlock(t *testing.T) {
	ctx := context.Background()
	var tab lockTable
	a, b := &lockOwner{}, &lockOwner{}
	t1, t2, adv := lockKey{rel: "t1"}, lockKey{rel: "t2"}, lockKey{a: 1}
	waiting := func(o *lockOwner) bool {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		return o.waiting != nil
	}
	for _, second := range []lockKey{t2, adv} {
		if _, err := tab.lock(ctx, a, t1, true, true, true); err != nil {
			t.Fatal(err)
		}
		if _, err := tab.lock(ctx, b, second, true, second.rel != "", true); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := tab.lock(ctx, a, second, true, true, true); done <- err }()
		for !waiting(a) {
			runtime.Gosched()
		}
		if _, err := tab.lock(ctx, b, t1, true, true, true); pgerr.Code(err) != pgerr.DeadlockDetected {
			t.Fatalf("closing the cycle: %v, want 40P01", err)
		}
		// b's block fails and rolls back.
		tab.release(b, true)
		tab.releaseTables(b)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		tab.release(a, true)
		if got, _ := tab.lock(ctx, b, t1, true, true, false); got {
			t.Fatal("release let go of a DDL lock")
		}
		tab.releaseTables(a)
		if got, _ := tab.lock(ctx, b, t1, true, true, false); !got {
			t.Fatal("releaseTables kept a DDL lock")
		}
		tab.releaseTables(b)
		if len(tab.locks) != 0 {
			t.Fatalf("locks left: %v", tab.locks)
		}
	}
}

// TestDDLLockHandOff: a transaction whose outcome COMMIT did not learn
// keeps its DDL locks under an owner of their own after its session went
// on (a DDL lock the session takes afterwards is its own), until that
// owner lets go.
func TestDDLLockHandOff(t *testing.T) {
	ctx := context.Background()
	var tab lockTable
	s, other := &lockOwner{}, &lockOwner{}
	t1, t2 := lockKey{rel: "t1"}, lockKey{rel: "t2"}
	if got, _ := tab.lock(ctx, s, t1, true, true, false); !got {
		t.Fatal("t1")
	}
	held := tab.handOff(s)
	if got, _ := tab.lock(ctx, s, t1, true, true, false); got {
		t.Fatal("the session took t1 while the handed-off owner holds it")
	}
	if got, _ := tab.lock(ctx, s, t2, true, true, false); !got {
		t.Fatal("t2")
	}
	tab.releaseTables(held)
	if got, _ := tab.lock(ctx, other, t1, true, true, false); !got {
		t.Fatal("t1 still held after the handed-off owner let go")
	}
	if got, _ := tab.lock(ctx, other, t2, true, true, false); got {
		t.Fatal("the handed-off owner's release let go of the session's later lock")
	}
	tab.releaseTables(s)
	tab.releaseTables(other)
	if len(tab.locks) != 0 {
		t.Fatalf("locks left: %v", tab.locks)
	}
}
