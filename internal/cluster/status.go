package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
)

// ReplicaStatus is one row of SHOW REPLICAS.
type ReplicaStatus struct {
	Name   string
	Driver string
	Class  string
	// Role is "primary" (passthrough's only replica; in CBS and SS the
	// replica whose answers clients get first), "secondary" (CBS and SS)
	// or "voter" (serial mode: every replica votes on every answer).
	Role string
	// State is "up", "suspect" (an answer of it lost a vote), "down"
	// (taken out, catching up), "unresponsive" (its engine does not
	// answer probes: it hangs; CBS and SS; out, as when down; Reason
	// says what was seen) or
	// "failed" (taken out, and its engine refuses a statement the others
	// committed: it will not come back by itself; Reason says which) or
	// "retired" (it holds a change the others rolled back: out, also
	// across restarts, until an operator rebuilds it and runs REJOIN
	// REPLICA; Reason says why).
	State      string
	Reason     string
	Mismatches int64
	// Reruns counts transaction attempts aborted on the replica to be run
	// again (CBS and SS: deadlocks, lock waits, stale MVCC snapshots, a
	// serial replica's run overtaken by another commit).
	Reruns int64
	// Digests counts answers the replica kept as digests only (see
	// Options.DigestRows).
	Digests int64
}

// Replicas reports the state of every replica, in config order.
func (c *Cluster) Replicas() []ReplicaStatus {
	out := make([]ReplicaStatus, len(c.managers))
	for i, m := range c.managers {
		st := &c.status[i]
		s := ReplicaStatus{
			Name:       m.Name(),
			Driver:     m.Engine().Driver(),
			Class:      m.Engine().Class().String(),
			Role:       "voter",
			State:      "up",
			Mismatches: st.mismatches.Load(),
			Reruns:     st.reruns.Load(),
			Digests:    st.digested.Load(),
		}
		switch {
		case c.opts.Mode == coord.Passthrough || int32(i) == c.primary.Load():
			s.Role = "primary"
		case c.primary.Load() >= 0:
			s.Role = "secondary"
		}
		hung, why := c.unresponsive(i)
		switch {
		case st.retired.Load() != nil:
			s.State, s.Reason = "retired", *st.retired.Load()
		case st.down.Load() && st.failure.Load() != nil:
			s.State, s.Reason = "failed", *st.failure.Load()
		case hung:
			s.State, s.Reason = "unresponsive", why
		case st.down.Load():
			s.State = "down"
		case st.suspect.Load():
			s.State = "suspect"
		}
		out[i] = s
	}
	return out
}

// Mode returns the cluster's mode name.
func (c *Cluster) Mode() string { return c.opts.Mode.String() }

// View is one view: which replica was primary from when, and why the
// view began.
type View struct {
	Number  int
	Primary string
	Since   time.Time
	Why     string
}

// views is the history of views (CBS and SS).
type views struct {
	mu   sync.Mutex
	list []View
	// lastDown says why the latest primary was taken out; c.mu.
	lastDown string
}

// MaxViews bounds the history of views kept for SHOW VIEW: a primary
// that keeps failing (a flapping engine over weeks) must not grow
// shepherd's memory without end. The oldest views are forgotten first;
// their numbers tell how many were.
const MaxViews = 1000

func (v *views) add(x View) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.list) >= MaxViews {
		// Copy rather than reslice, so the dropped views' memory goes.
		v.list = append(make([]View, 0, MaxViews), v.list[len(v.list)-MaxViews+1:]...)
	}
	v.list = append(v.list, x)
}

// Views returns the views so far, oldest first, at most MaxViews of them
// (empty in modes without a primary).
func (c *Cluster) Views() []View {
	c.views.mu.Lock()
	defer c.views.mu.Unlock()
	return append([]View(nil), c.views.list...)
}

// Blockers returns the live transactions holding, in an engine, a lock t
// waits for there: on the primary (CBS and SS; the coordinator ends a
// secondary's waits itself, see coord's unblock), on every replica in
// the other modes. Engines that cannot tell (driver.LockWaits) add
// nothing. shepherd's deadlock check (session's lock table) joins these
// waits to the waits for the locks it holds itself.
func (c *Cluster) Blockers(ctx context.Context, t *Txn) ([]*Txn, error) {
	c.mu.Lock()
	ms := c.managers
	if p := c.mu.core.Primary(); p >= 0 {
		ms = c.managers[p : p+1]
	}
	c.mu.Unlock()
	var ids []coord.TxnID
	for _, m := range ms {
		got, err := m.Blockers(ctx, t.id)
		if err != nil {
			return nil, err
		}
		ids = append(ids, got...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if x := c.mu.core.HeldBy(t.id); x != 0 {
		// Its first statement waits in the coordinator for an
		// exclusive block (DDL deferred on MariaDB).
		ids = append(ids, x)
	}
	var out []*Txn
	for _, id := range ids {
		if b := c.mu.txns[id]; b != nil {
			out = append(out, b)
		}
	}
	return out, nil
}
