package cluster

import (
	"context"
	"errors"
	"sync"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Admission bounds the client transactions live at once
// (Options.MaxTransactions): each holds an engine connection (and a
// manager goroutine) on every replica from its first statement until the
// coordinator is done with it, so the bound is the bound on the engines'
// connections, as PgBouncer's pool_size is. A transaction past it waits
// in Begin, first come first served, before it touches any replica.
//
// The cap is at admission, not per replica: under CBS a secondary commits
// in the primary's order, so a transaction holding a secondary's
// connection may wait for one that commits before it; were that one
// queued for a connection the first holds, neither would go on. A
// transaction admitted here has all it needs on every replica, and waits
// only for transactions admitted before it or beside it, never for one
// still queued.
//
// The cluster's own transactions (surveys: compare and repair) and its
// own connections (probes, catch-up, intents, log tables) are not
// counted: they are few and bounded by their own loops, and must go on
// while clients wait.
//
// A statement in autocommit (one statement that is its own transaction:
// SELECT 1, a health check) ends as soon as the engines answer it, while
// a transaction block keeps its slot for as long as its client takes,
// idle ones too. So reserve(limit) slots are kept for single statements:
// blocks share the other limit - reserve with the single statements
// beyond the reserved ones, and idle blocks never hold a reserved slot:
// a single statement waits only for other single statements. Those may
// themselves wait, holding their reserved slots, for a lock an idle block
// holds: enough of them fill the reserve, and a SELECT 1 then waits too
// (lock_timeout or statement_timeout bounds them). The reserve protects
// against idle blocks, not against statements blocked on locks.
// The cap on engine connections stays limit. Order is first come first
// served, except that a single statement may go ahead of blocks waiting
// in line into a reserved slot (never into a shared one: the blocks
// would wait for ever under a stream of single statements).
type admission struct {
	mu      sync.Mutex
	limit   int // 0: no bound
	held    int // slots held, singles among them
	singles int
	queue   []*admitWaiter // FIFO
}

type admitWaiter struct {
	ready   chan struct{}
	single  bool // a statement in autocommit
	granted bool // guarded by admission.mu
}

// reserve returns how many of limit slots are kept for single
// statements: an eighth (8 of the default 64); none below 8.
func reserve(limit int) int { return max(limit/8, 0) }

// fitsLocked reports whether a transaction block, or a single statement
// when single, may take a slot now; blockWaits says a block waits in line
// before it.
func (a *admission) fitsLocked(single, blockWaits bool) bool {
	if a.limit <= 0 {
		return true
	}
	r := reserve(a.limit)
	if single && a.singles < r {
		return true // a reserved slot
	}
	if single && blockWaits {
		return false // the shared slots go to the block first
	}
	// The shared slots: blocks and the single statements beyond the
	// reserved slots.
	return a.held-min(a.singles, r) < a.limit-r
}

// blockWaitsLocked reports whether a transaction block waits in line.
func (a *admission) blockWaitsLocked() bool {
	for _, w := range a.queue {
		if !w.single {
			return true
		}
	}
	return false
}

// takeLocked counts a slot taken.
func (a *admission) takeLocked(single bool) {
	a.held++
	if single {
		a.singles++
	}
}

// acquire takes a slot for a transaction block, or for a statement in
// autocommit when single, waiting in turn while none fits; ctx ending
// first gives up the place in the queue (or the slot, if it was granted
// meanwhile) and returns 57014, or ctx's cause when that is a
// PostgreSQL error (statement_timeout); stop closing (the cluster shuts
// down) returns 57P01.
func (a *admission) acquire(ctx context.Context, stop <-chan struct{}, single bool) error {
	a.mu.Lock()
	if len(a.queue) == 0 || (single && !a.singleWaitsLocked()) {
		if a.fitsLocked(single, a.blockWaitsLocked()) {
			a.takeLocked(single)
			a.mu.Unlock()
			return nil
		}
	}
	w := &admitWaiter{ready: make(chan struct{}), single: single}
	a.queue = append(a.queue, w)
	a.mu.Unlock()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		var pe *pgerr.Error
		if errors.As(context.Cause(ctx), &pe) {
			err = pe
		} else {
			err = pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
		}
	case <-stop:
		err = pgerr.New(pgerr.AdminShutdown, "terminating connection due to administrator command")
	}
	a.mu.Lock()
	if w.granted {
		// Granted as the wait ended: hand it on.
		a.mu.Unlock()
		a.release(single)
	} else {
		for i, q := range a.queue {
			if q == w {
				a.queue = append(a.queue[:i], a.queue[i+1:]...)
				break
			}
		}
		a.mu.Unlock()
	}
	return err
}

// force takes a slot at once, past the bound if need be (see BeginNow).
func (a *admission) force() {
	a.mu.Lock()
	a.takeLocked(false)
	a.mu.Unlock()
}

// release gives a slot back (one a single statement took, when single)
// and admits the waiters first in line that now fit.
func (a *admission) release(single bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held--
	if single {
		a.singles--
	}
	a.grantLocked()
}

// singleWaitsLocked reports whether a single statement waits in line.
func (a *admission) singleWaitsLocked() bool {
	for _, w := range a.queue {
		if w.single {
			return true
		}
	}
	return false
}

// setLimit changes the bound (0: none) and admits whoever now fits;
// slots held past a lowered bound are kept until released.
func (a *admission) setLimit(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limit = max(n, 0)
	a.grantLocked()
}

// grantLocked admits the waiters that now fit, in order: a block that
// does not fit keeps the blocks behind it waiting, and the single
// statements behind it to the reserved slots.
func (a *admission) grantLocked() {
	blockWaits := false
	kept := a.queue[:0]
	for _, w := range a.queue {
		if (w.single || !blockWaits) && a.fitsLocked(w.single, blockWaits) {
			a.takeLocked(w.single)
			w.granted = true
			close(w.ready)
			continue
		}
		if !w.single {
			blockWaits = true
		}
		kept = append(kept, w)
	}
	clear(a.queue[len(kept):])
	a.queue = kept
}

// counts returns the slots held and the transactions waiting for one.
func (a *admission) counts() (held, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held, len(a.queue)
}

// SetMaxTransactions changes Options.MaxTransactions live (config
// reload): waiters that now fit are admitted at once; a lower bound lets
// the transactions already admitted finish.
func (c *Cluster) SetMaxTransactions(n int) { c.admit.setLimit(n) }

// Admitted returns the client transactions holding a slot of
// Options.MaxTransactions and those waiting in Begin for one.
func (c *Cluster) Admitted() (held, waiting int) { return c.admit.counts() }
