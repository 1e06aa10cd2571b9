package coord

import (
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Liveness: what the shell learns by probing each replica's engine on a
// connection of its own (package cluster, liveness.go), apart from the
// work it runs there.
//
// Silence on client work alone cannot tell a slow primary from a hung one:
// an 8 s analytic query, or a statement waiting for a lock that an idle
// session holds, leaves the primary silent exactly like a stopped engine.
// A cheap probe can: an engine that answers it within its deadline is
// running, and whatever its sessions wait for is theirs to wait for (a
// lock wait ends as the engine's own rules say, as it would on the engine
// alone). So
//
//   - Alive from the primary counts as hearing from it: the silence rule
//     (Config.PrimaryTimeout, watchPrimary) does not fire while probes
//     answer, however long one statement runs or waits. The shell probes
//     more often than the timeout, which stays as a backstop should probes
//     stop coming at all;
//   - Unresponsive takes the replica out at once, primary or secondary: a
//     hung engine is found within the probe's deadline instead of the
//     silence timeout (and a hung secondary, which no silence rule
//     covered, stops counting as up).
//
// Whether a session waits on a lock is not asked of the engines: a probe
// that answers already says the engine is not hung, which is all the
// decision needs.

// Alive: the shell's probe of replica R's engine answered in time.
type Alive struct{ R ReplicaID }

// Unresponsive: replica R's engine did not answer the shell's probe in
// time (it is stopped, partitioned away, or too overloaded to be of use).
// R is taken out as with Down; Why says what was seen ("no answer to a
// probe within 2s") and is reported with MarkDown.
type Unresponsive struct {
	R   ReplicaID
	Why string
}

func (Alive) event()        {}
func (Unresponsive) event() {}

// why is what Unresponsive reports with MarkDown.
func (e Unresponsive) why() string {
	if e.Why == "" {
		return "no answer to a probe"
	}
	return e.Why
}

// up returns how many replicas are not taken out.
func (c *Coordinator) up() int {
	n := 0
	for r := range c.cfg.N {
		if !c.IsDown(ReplicaID(r)) {
			n++
		}
	}
	return n
}

// tooFewUp returns the failure of work that needs f+1 replicas while fewer
// than f+1 are up, or nil. It says so plainly rather than that the
// replicas disagreed: none did, too few were there to agree.
//
// SQLSTATE 57P03 (cannot_connect_now), as PostgreSQL says it is not ready
// to serve: the client's connection is fine (08006 would make drivers drop
// it), and the work may succeed once replicas are back.
func (c *Coordinator) tooFewUp() *pgerr.Error {
	up := c.up()
	if up >= c.quorum() || c.cfg.N == 1 {
		return nil
	}
	return pgerr.New(pgerr.CannotConnectNow, "too few replicas are up: %d of %d, need %d", up, c.cfg.N, c.quorum()).
		WithHint("the transaction was rolled back; retry it once replicas are back (SHOW REPLICAS)")
}

// refuseCommit fails t's COMMIT, which f secondaries cannot endorse: with
// a plain "too few replicas are up" when that is why, or as refuse does
// (the replicas disagreed) otherwise.
//
// A pinned transaction (its DDL committed where it ran, see pinned) is
// not refused for too few replicas up: rolling it back would retire the
// replicas holding the DDL for good, when the others may well come back
// and commit it. It waits for them instead.
func (s *cbs) refuseCommit(t *ctxn) {
	if e := s.c.tooFewUp(); e != nil {
		if t.pinned() {
			return
		}
		s.failCommit(t, e)
		s.end(t)
		return
	}
	s.refuse(t)
}
