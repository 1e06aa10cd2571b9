package session

import (
	"context"
	"runtime"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestTableLocks: LOCK TABLE's modes conflict as PostgreSQL's lock
// table says (and never with the same session's); a conflicting request
// waits until the holder releases, NOWAIT fails with 55P03, a wait that
// closes a cycle is 40P01, a cancel ends a wait with 57014.
func TestTableLocks(t *testing.T) {
	ctx := context.Background()
	var tab tableLocks
	a, b, c := &tableOwner{}, &tableOwner{}, &tableOwner{}
	try := func(o *tableOwner, key string, mode int) bool {
		t.Helper()
		err := tab.lock(ctx, o, key, key, mode, true)
		if err != nil && pgerr.Code(err) != pgerr.LockNotAvailable {
			t.Fatal(err)
		}
		return err == nil
	}
	// PostgreSQL's conflict table, by mode: which of 1..8 each conflicts with.
	want := map[int][]int{1: {8}, 2: {7, 8}, 3: {5, 6, 7, 8}, 4: {4, 5, 6, 7, 8}, 5: {3, 4, 6, 7, 8},
		6: {3, 4, 5, 6, 7, 8}, 7: {2, 3, 4, 5, 6, 7, 8}, 8: {1, 2, 3, 4, 5, 6, 7, 8}}
	for held := 1; held <= 8; held++ {
		for asked := 1; asked <= 8; asked++ {
			if !try(a, "t", held) || !try(a, "t", asked) {
				t.Fatal("a session's own locks conflict")
			}
			conflict := false
			for _, m := range want[held] {
				conflict = conflict || m == asked
			}
			tab.release(a)
			try(a, "t", held)
			if got := try(b, "t", asked); got == conflict {
				t.Errorf("%s held, %s asked: granted %v", lockModeNames[held], lockModeNames[asked], got)
			}
			tab.release(a)
			tab.release(b)
		}
	}

	waiting := func(o *tableOwner) bool {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		return o.waiting != ""
	}
	waitUntil := func(o *tableOwner) {
		for !waiting(o) {
			runtime.Gosched()
		}
	}
	// a holds t1, b holds t2; b waits for t1; a asking for t2 closes the
	// cycle.
	try(a, "t1", 7)
	try(b, "t2", 8)
	done := make(chan error, 1)
	go func() { done <- tab.lock(ctx, b, "t1", "t1", 5, false) }()
	waitUntil(b)
	if err := tab.lock(ctx, a, "t2", "t2", 1, false); pgerr.Code(err) != pgerr.DeadlockDetected {
		t.Fatalf("a cycle of waits: %v", err)
	}
	tab.release(a) // b's wait is granted
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if try(c, "t1", 3) || !try(c, "t1", 1) {
		t.Fatal("b's SHARE lock must block ROW EXCLUSIVE and admit ACCESS SHARE")
	}
	// A cancel ends a wait.
	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- tab.lock(cctx, a, "t2", "t2", 1, false) }()
	waitUntil(a)
	cancel()
	if err := <-done; pgerr.Code(err) != pgerr.QueryCanceled {
		t.Fatalf("cancelled wait: %v", err)
	}
	tab.release(b)
	tab.release(c)
	if len(tab.locks) != 0 {
		t.Fatalf("locks left: %v", tab.locks)
	}
}
