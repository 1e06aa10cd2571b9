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
type admission struct {
	mu    sync.Mutex
	limit int // 0: no bound
	held  int
	queue []*admitWaiter // FIFO
}

type admitWaiter struct {
	ready   chan struct{}
	granted bool // guarded by admission.mu
}

// acquire takes a slot, waiting in turn while all are held; ctx ending
// first gives up the place in the queue (or the slot, if it was granted
// meanwhile) and returns 57014, or ctx's cause when that is a
// PostgreSQL error (statement_timeout); stop closing (the cluster shuts
// down) returns 57P01.
func (a *admission) acquire(ctx context.Context, stop <-chan struct{}) error {
	a.mu.Lock()
	if a.limit <= 0 || (a.held < a.limit && len(a.queue) == 0) {
		a.held++
		a.mu.Unlock()
		return nil
	}
	w := &admitWaiter{ready: make(chan struct{})}
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
		a.release()
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
	a.held++
	a.mu.Unlock()
}

// release gives a slot back and admits the waiters first in line that
// now fit.
func (a *admission) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held--
	a.grantLocked()
}

// setLimit changes the bound (0: none) and admits whoever now fits;
// slots held past a lowered bound are kept until released.
func (a *admission) setLimit(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limit = max(n, 0)
	a.grantLocked()
}

func (a *admission) grantLocked() {
	for len(a.queue) > 0 && (a.limit <= 0 || a.held < a.limit) {
		w := a.queue[0]
		a.queue[0] = nil
		a.queue = a.queue[1:]
		a.held++
		w.granted = true
		close(w.ready)
	}
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
