package session

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Shared is the state sessions of one server share: the advisory locks
// and the tables' DDL locks. shepherd is the only way to the data, so it
// holds advisory locks itself rather than on some replica (where each
// would be one engine's, and MariaDB's and SQLite's differ or do not
// exist).
//
// A DDL lock is PostgreSQL's ACCESS EXCLUSIVE lock as far as DDL goes:
// a DDL statement takes it on each relation it names before it is
// analysed against the catalog, and holds it until its transaction's
// change reached the catalog (or it rolled back). A second ALTER TABLE
// of one table thus waits, as on PostgreSQL, and is then written from
// the new definition: SQLite's table rebuild (dialect/rebuild.go) is
// written from the catalog, and one written from the definition before
// the first ALTER committed would undo it on SQLite alone. Both kinds
// of lock share one table, so a cycle through both is a deadlock found.
type Shared struct {
	locks  lockTable
	tables tableLocks // LOCK TABLE's (tablelocks.go)
	notify notifyHub  // LISTEN's (notify.go)
	seqs   seqHolds   // sequences open blocks restarted (seqholds.go)
	// CursorMemory is how many bytes of rows one session's cursors may
	// keep together; 0 means the default, CursorMemory. Set before the
	// first session starts; SetCursorMemory changes it later.
	CursorMemory int64
	// cursorMemory, when above 0, is SetCursorMemory's.
	cursorMemory atomic.Int64
}

// SetCursorMemory changes CursorMemory while sessions run (a
// configuration reload): each cursor declared from now on is counted
// against it.
func (sh *Shared) SetCursorMemory(n int64) { sh.cursorMemory.Store(n) }

// cursorMemoryLimit returns CursorMemory, or SetCursorMemory's.
func (sh *Shared) cursorMemoryLimit() int64 {
	if n := sh.cursorMemory.Load(); n > 0 {
		return n
	}
	return sh.CursorMemory
}

// NewShared returns the shared state of a server's sessions.
func NewShared() *Shared { return &Shared{} }

// Waiting is how many sessions wait for a lock shepherd holds (an
// advisory lock, or a table's DDL lock) at this moment.
func (sh *Shared) Waiting() int {
	t := &sh.locks
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiters
}

// lockKey is an advisory lock's key: PostgreSQL keeps the one-bigint and
// the two-int4 forms apart. A relation's DDL lock has rel set, and the
// database whose relation it is (and nothing else).
type lockKey struct {
	a, b    int64
	two     bool
	rel, db string
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
	// waitExcl: the wait is for waiting in exclusive mode (only the
	// holders that conflict with the mode are waited for).
	waitExcl bool
	// cl is the session's cluster, txn its open transaction there (nil
	// between transactions; guarded by the table's mutex, see bind):
	// whose engine lock waits the deadlock check asks for (engineCycle).
	cl  *cluster.Cluster
	txn *cluster.Txn
	// checkAfter is how long a wait lasts before the check that asks
	// the engines (deadlock_timeout; 0: never). Only its session sets
	// it, before it waits.
	checkAfter time.Duration
}

// lockTable is the advisory and DDL locks of one server.
type lockTable struct {
	mu      sync.Mutex
	locks   map[lockKey]*lockState
	waiters int // sessions waiting in lock
	// byTxn finds the session of a cluster transaction (see bind).
	byTxn map[*cluster.Txn]*lockOwner
}

// bind records that o's session has txn open (nil: none).
func (t *lockTable) bind(o *lockOwner, txn *cluster.Txn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.txn != nil {
		delete(t.byTxn, o.txn)
	}
	o.txn = txn
	if txn != nil {
		if t.byTxn == nil {
			t.byTxn = map[*cluster.Txn]*lockOwner{}
		}
		t.byTxn[txn] = o
	}
}

// engineCycle reports whether o, waiting for a lock holders hold, is in
// a cycle of waits that passes through an engine's lock: from each
// holder, the waits are the holders of the lock it waits for here and
// the transactions holding an engine lock its transaction waits for
// (cluster.Blockers, which asks the engines). Every edge is a wait under
// way during the check: the table's are read as they are, the engines'
// from reads that began after the check did (driver.WithNotBefore; an
// engine may keep its latest read a while, and one from before the check
// may show a wait that has ended), one read shared by the whole check
// where the engine keeps it. So a cycle found is one no wait in it ends
// by itself (o's own wait goes on while the check runs): a deadlock, as
// PostgreSQL's detector finds one. The engines are asked without the
// table's mutex held.
func (t *lockTable) engineCycle(ctx context.Context, o *lockOwner, holders []*lockOwner) bool {
	ctx = driver.WithNotBefore(ctx, time.Now())
	seen := map[*lockOwner]bool{}
	queue := slices.Clone(holders)
	for len(queue) > 0 {
		w := queue[0]
		queue = queue[1:]
		if w == o {
			return true
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		t.mu.Lock()
		if w.waiting != nil {
			if st := t.locks[*w.waiting]; st != nil {
				queue = append(queue, t.conflicts(w, st, w.waitExcl)...)
			}
		}
		cl, txn := w.cl, w.txn
		t.mu.Unlock()
		if cl == nil || txn == nil {
			continue
		}
		blockers, err := cl.Blockers(ctx, txn)
		if err != nil {
			continue // an engine that cannot tell adds no wait
		}
		t.mu.Lock()
		for _, b := range blockers {
			if h := t.byTxn[b]; h != nil {
				queue = append(queue, h)
			}
		}
		t.mu.Unlock()
	}
	return false
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
		for _, h := range t.conflicts(w, st, w.waitExcl) {
			if reaches(h) {
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
				WithDetail("Process waits for %s held by a process that waits for one this process holds.", lockName(k)).
				WithHint("See server log for query details.")
		}
		o.waiting, o.waitExcl = &k, exclusive
		t.waiters++
		changed := st.changed
		t.mu.Unlock()
		var timer *time.Timer
		var check <-chan time.Time
		if o.checkAfter > 0 {
			timer = time.NewTimer(o.checkAfter)
			check = timer.C
		}
		deadlock := false
	wait:
		for {
			select {
			case <-changed:
				break wait
			case <-ctx.Done():
				break wait
			case <-check:
				// Waited deadlock_timeout: a cycle through an engine's
				// lock is not in this table; ask the engines (again
				// every deadlock_timeout, as waits change), for at most
				// as long (the lock may be let go meanwhile).
				cctx, cancel := context.WithTimeout(ctx, max(o.checkAfter, time.Second))
				deadlock = t.engineCycle(cctx, o, holders)
				cancel()
				if deadlock {
					break wait
				}
				timer.Reset(o.checkAfter)
			}
		}
		if timer != nil {
			timer.Stop()
		}
		t.mu.Lock()
		if deadlock {
			o.waiting = nil
			t.waiters--
			return false, pgerr.New(pgerr.DeadlockDetected, "deadlock detected").
				WithDetail("Process waits for %s held by a process whose transaction waits, in a replica, for a lock this process's transaction holds.", lockName(k)).
				WithHint("See server log for query details.")
		}
		o.waiting = nil
		t.waiters--
		if ctx.Err() != nil {
			var pe *pgerr.Error
			if errors.As(context.Cause(ctx), &pe) {
				return false, pe // lock_timeout or statement_timeout (waitContext)
			}
			return false, pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
		}
	}
}

// lockName says which lock k is, for a DETAIL.
func lockName(k lockKey) string {
	if k.rel != "" {
		return "a lock on relation " + strconv.Quote(k.rel)
	}
	return "an advisory lock"
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

// release lets go of o's transaction-level advisory locks, and with all
// its session-level ones too. DDL locks stay (releaseTables).
func (t *lockTable) release(o *lockOwner, all bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range o.held {
		if k.rel != "" {
			continue
		}
		st := t.locks[k]
		h := st.holders[o]
		h.xactExcl, h.xactShared = 0, 0
		if all {
			h.excl, h.shared = 0, 0
		}
		t.settle(o, k, st, h)
	}
}

// holdsAny reports whether o holds a lock of the table (advisory or
// DDL, at any level).
func (t *lockTable) holdsAny(o *lockOwner) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(o.held) > 0
}

// heldByOthers reports whether a session other than o holds the DDL
// lock of one of rels in database db.
func (t *lockTable) heldByOthers(o *lockOwner, rels []string, db string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rel := range rels {
		if st := t.locks[lockKey{rel: rel, db: db}]; st != nil && len(t.conflicts(o, st, true)) > 0 {
			return true
		}
	}
	return false
}

// releaseTables lets go of o's DDL locks.
func (t *lockTable) releaseTables(o *lockOwner) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range o.held {
		if k.rel != "" {
			st := t.locks[k]
			h := st.holders[o]
			h.xactExcl = 0
			t.settle(o, k, st, h)
		}
	}
}

// handOff moves o's DDL locks to a new owner, which holds them until
// released: a transaction whose outcome is not known yet keeps them
// after its session went on.
func (t *lockTable) handOff(o *lockOwner) *lockOwner {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := &lockOwner{held: map[lockKey]bool{}}
	for k := range o.held {
		if k.rel != "" {
			st := t.locks[k]
			st.holders[n] = st.holders[o]
			delete(st.holders, o)
			delete(o.held, k)
			n.held[k] = true
		}
	}
	return n
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
