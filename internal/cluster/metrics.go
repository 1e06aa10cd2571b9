package cluster

import (
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/metrics"
)

// decisionClock remembers when each recent transaction was decided (CBS
// and SS: the core's barrier count grew), so that a replica's lag can be
// told in seconds: how long ago the oldest transaction it has yet to
// commit was decided. Kept under c.mu.
type decisionClock struct {
	// first is the barrier of at[0]; at[i] is when barrier first+i was
	// decided.
	first int
	at    []time.Time
}

// maxDecisionTimes bounds the clock: a replica further behind than this
// is reported as behind by at least the oldest time kept.
const maxDecisionTimes = 1 << 16

// note records that barriers below decided have been decided, those not
// seen before now.
func (d *decisionClock) note(decided int, now func() time.Time) {
	next := d.first + len(d.at)
	if decided <= next {
		return
	}
	t := now()
	for ; next < decided; next++ {
		d.at = append(d.at, t)
	}
	if len(d.at) > maxDecisionTimes {
		// Cut to half rather than by one: a copy per decision would
		// cost the commit path.
		d.drop(len(d.at) - maxDecisionTimes/2)
	}
}

// trim forgets the times of barriers below low (every replica committed
// them).
func (d *decisionClock) trim(low int) {
	if n := min(low-d.first, len(d.at)); n > 0 {
		d.drop(n)
	}
}

func (d *decisionClock) drop(n int) {
	d.first += n
	d.at = append(d.at[:0], d.at[n:]...)
}

// since returns how long ago barrier b was decided (the oldest time kept
// for a barrier already forgotten); 0 if b is not decided yet.
func (d *decisionClock) since(b int, now time.Time) time.Duration {
	if len(d.at) == 0 || b >= d.first+len(d.at) {
		return 0
	}
	return now.Sub(d.at[max(0, b-d.first)])
}

// Lags returns, for each replica in config order, how many decided
// transactions it has yet to commit and how long the oldest of them has
// been decided (CBS and SS; zeros in the other modes). For a replica taken
// out, it is as of when it went, growing with every decision since.
func (c *Cluster) Lags() (txns []int, behind []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	txns = make([]int, len(c.managers))
	behind = make([]time.Duration, len(c.managers))
	decided, now := c.mu.core.Decided(), time.Now()
	low := decided
	for r := range c.managers {
		a := c.mu.core.Applied(coord.ReplicaID(r))
		if a < 0 {
			continue
		}
		low = min(low, a)
		if a < decided {
			txns[r] = decided - a
			behind[r] = c.decisions.since(a, now)
		}
	}
	c.decisions.trim(low)
	return txns, behind
}

// Metrics returns the replicas' part of a metrics snapshot, in config
// order, and the view changes so far.
func (c *Cluster) Metrics() (reps []metrics.Replica, viewChanges int) {
	txns, behind := c.Lags()
	for i, r := range c.Replicas() {
		st := &c.status[i]
		reps = append(reps, metrics.Replica{
			Name: r.Name, Role: r.Role, State: r.State,
			VotesWon: st.commits.Load(), VotesLost: r.Mismatches, Reruns: r.Reruns, Digests: r.Digests,
			LagTxns: txns[i], LagSeconds: behind[i].Seconds(),
		})
	}
	return reps, int(c.viewChanges.Load())
}
