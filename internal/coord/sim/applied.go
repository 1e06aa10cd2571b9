package sim

import "github.com/shepherd-db/shepherd/internal/coord"

// checkApplied checks what the shell trusts coord.Applied for: the
// write-ahead log drops the records below the lowest Applied of all
// replicas, so Applied(r) must never count a logged transaction replica r
// has not committed (a COMMIT that failed there, a catch-up cut short),
// or r's catch-up would find the record gone and r would silently lack
// the transaction. It runs when r is taken out, where Applied is fixed
// until r is back.
func (s *sim) checkApplied(r coord.ReplicaID) {
	if !s.wal {
		return
	}
	f := s.fakes[r]
	// The shell truncates only when every replica's Applied is above 0
	// (cluster, appliedLocked): 0 claims nothing, as for a replica left
	// out at start.
	applied := s.co.Applied(r)
	if applied <= 0 {
		return
	}
	applied += s.base
	for id, b := range s.barrierOf {
		if b < applied && !f.done[id] {
			s.failf("applied: r%d taken out with Applied %d, but t%d (barrier %d) is not committed there: the log could drop it", r, applied, id, b)
			return
		}
	}
}

// catchUpFails takes a replica that came back out again before it has
// caught up, as when the shell's catch-up fails after the rejoin (the
// server went away again): it crashes, the core hears Down, and it comes
// back later. It happens once to every rejoining replica whose rejoinAt
// is odd, so that no random draw is spent and a seed's other choices
// stay as they were; the replica's next rejoinAt is even.
func (s *sim) catchUpFails() {
	for _, f := range s.fakes {
		if !f.joining || f.rejoinAt%2 == 0 {
			continue
		}
		next := s.steps + 1 + 2*(f.rejoinAt%500)
		if next%2 == 1 {
			next++
		}
		f.joining, f.rejoinAt = false, next
		s.logf("r%d goes away again while catching up; back at step %d", f.id, next)
		f.crash()
		s.stepCore(coord.Down{R: f.id})
	}
}
