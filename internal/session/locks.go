package session

import (
	"context"
	"sync"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Shared is the state sessions of one server share: the advisory locks.
// shepherd is the only way to the data, so it holds advisory locks itself
// rather than on some replica (where each would be one engine's, and
// MariaDB's and SQLite's differ or do not exist).
type Shared struct {
	locks  lockTable
	tables tableLocks // LOCK TABLE's (tablelocks.go)
	notify notifyHub  // LISTEN's (notify.go)
	// CursorMemory is how many bytes of rows one session's cursors may
	// keep together; 0 means the default, CursorMemory. Set before the
	// first session starts.
	CursorMemory int64
}

// NewShared returns the shared state of a server's sessions.
func NewShared() *Shared { return &Shared{} }

// lockKey is an advisory lock's key: PostgreSQL keeps the one-bigint and
// the two-int4 forms apart.
type lockKey struct {
	a, b int64
	two  bool
}

// lockHold is how one session holds one lock: counts per mode and level
// (session locks are reentrant and counted; transaction locks go at the
// block's end).
type lockHold struct {
	excl, shared         int // session level
	xactExcl, xactShared int // transaction level
}

func (h *lockHold) empty() bool { return *h == lockHold{} }

func (h *lockHold) exclusive() bool { return h.excl > 0 || h.xactExcl > 0 }

// lockState is one lock's holders and the channel its waiters wait on,
// closed (and replaced) whenever a holder lets go.
type lockState struct {
	holders map[*lockOwner]*lockHold
	changed chan struct{}
}

// lockOwner is one session in the lock table.
type lockOwner struct {
	held    map[lockKey]bool
	waiting *lockKey // the lock it waits for, for deadlock detection
}

// lockTable is the advisory locks of one server.
type lockTable struct {
	mu    sync.Mutex
	locks map[lockKey]*lockState
}

// conflicts reports whether o may not take k in the mode asked: another
// session holds it exclusively, or holds it at all when exclusive is
// asked (a session never conflicts with itself, as in PostgreSQL).
func (t *lockTable) conflicts(o *lockOwner, st *lockState, exclusive bool) []*lockOwner {
	var out []*lockOwner
	for other, h := range st.holders {
		if other != o && (exclusive || h.exclusive()) {
			out = append(out, other)
		}
	}
	return out
}

// deadlocked reports whether o waiting for one of holders closes a cycle
// of sessions waiting for each other.
func (t *lockTable) deadlocked(o *lockOwner, holders []*lockOwner) bool {
	seen := map[*lockOwner]bool{}
	var reaches func(w *lockOwner) bool
	reaches = func(w *lockOwner) bool {
		if w == o {
			return true
		}
		if seen[w] || w.waiting == nil {
			return false
		}
		seen[w] = true
		st := t.locks[*w.waiting]
		if st == nil {
			return false
		}
		for h := range st.holders {
			if h != w && reaches(h) {
				return true
			}
		}
		return false
	}
	for _, h := range holders {
		if reaches(h) {
			return true
		}
	}
	return false
}

// lock takes k for o; with wait false it gives up at once (false) when
// another session holds it. Waiting ends with ctx (a cancel) or a
// deadlock, as errors.
func (t *lockTable) lock(ctx context.Context, o *lockOwner, k lockKey, exclusive, xact, wait bool) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locks == nil {
		t.locks = map[lockKey]*lockState{}
	}
	for {
		st := t.locks[k]
		if st == nil {
			st = &lockState{holders: map[*lockOwner]*lockHold{}, changed: make(chan struct{})}
			t.locks[k] = st
		}
		holders := t.conflicts(o, st, exclusive)
		if len(holders) == 0 {
			h := st.holders[o]
			if h == nil {
				h = &lockHold{}
				st.holders[o] = h
			}
			switch {
			case exclusive && xact:
				h.xactExcl++
			case exclusive:
				h.excl++
			case xact:
				h.xactShared++
			default:
				h.shared++
			}
			if o.held == nil {
				o.held = map[lockKey]bool{}
			}
			o.held[k] = true
			return true, nil
		}
		if !wait {
			return false, nil
		}
		if t.deadlocked(o, holders) {
			return false, pgerr.New(pgerr.DeadlockDetected, "deadlock detected").
				WithDetail("Process waits for an advisory lock held by a process that waits for one this process holds.").
				WithHint("See server log for query details.")
		}
		o.waiting = &k
		changed := st.changed
		t.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		t.mu.Lock()
		o.waiting = nil
		if ctx.Err() != nil {
			return false, pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
		}
	}
}

// unlock lets go of one session-level hold of k; false when o held none.
func (t *lockTable) unlock(o *lockOwner, k lockKey, exclusive bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.locks[k]
	if st == nil || st.holders[o] == nil {
		return false
	}
	h := st.holders[o]
	n := &h.shared
	if exclusive {
		n = &h.excl
	}
	if *n == 0 {
		return false
	}
	*n--
	t.settle(o, k, st, h)
	return true
}

// release lets go of o's transaction-level locks, and with all its
// session-level ones too.
func (t *lockTable) release(o *lockOwner, all bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range o.held {
		st := t.locks[k]
		h := st.holders[o]
		h.xactExcl, h.xactShared = 0, 0
		if all {
			h.excl, h.shared = 0, 0
		}
		t.settle(o, k, st, h)
	}
}

// settle forgets an empty hold and wakes the lock's waiters.
func (t *lockTable) settle(o *lockOwner, k lockKey, st *lockState, h *lockHold) {
	if h.empty() {
		delete(st.holders, o)
		delete(o.held, k)
	}
	close(st.changed)
	st.changed = make(chan struct{})
	if len(st.holders) == 0 {
		delete(t.locks, k)
	}
}
