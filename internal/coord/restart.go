package coord

import (
	"errors"
	"fmt"
)

// Restart decisions. When shepherd starts on a write-ahead log, the shell
// reads each replica's log table (the barriers of the logged transactions
// it committed), replays what it lacks from the log, and lets clients in.
// What it may believe of a replica, which replicas it starts with and
// where the barrier counter goes on are decided here, without I/O, so
// that the simulator (internal/coord/sim) exercises the very rules the
// server runs (internal/server, recoverReplicas).

// MaxBarrier bounds the barriers shepherd accepts, from its own log or
// from a replica's log table: far more commits than a deployment makes
// (a million a second for 285 years), and far enough below 2^63 that the
// barrier counter, and the BIGINT column of the log tables, cannot wrap.
const MaxBarrier = 1 << 53

// ErrBadBarrier is wrapped by the reason a replica is left out when its
// log table claims a barrier shepherd cannot have given it.
var ErrBadBarrier = errors.New("bad barrier in the log table")

// CheckBarrier checks the highest barrier a replica's log table holds
// (high, named table in the error): with a log (logged), at most the
// log's last barrier, top, since a replica is sent a COMMIT only once its
// record is durable; without one, below MaxBarrier. A replica claiming
// more claims transactions shepherd never decided: it is not taken in,
// and its number not believed.
func CheckBarrier(table string, high, top uint64, logged bool) error {
	if logged && high > top {
		return fmt.Errorf("%w: %s holds barrier %d, beyond the write-ahead log's last, %d: the replica claims transactions the log never had", ErrBadBarrier, table, high, top)
	}
	if high >= MaxBarrier {
		return fmt.Errorf("%w: %s holds barrier %d, beyond %d", ErrBadBarrier, table, high, uint64(MaxBarrier))
	}
	return nil
}

// StartReport is what start-up found of one replica: Err when it cannot
// be used (unreachable, its log table unreadable or refused by
// CheckBarrier, the replay of what it lacked failed), else High, the
// highest barrier it holds once the log was replayed to it.
type StartReport struct {
	High uint64
	Err  error
}

// StartPlan is start-up's decision.
type StartPlan struct {
	// Base is the barrier this run's first commit takes: above the log's
	// last (top) and above every barrier a replica taken in holds.
	Base uint64
	// Out are the replicas left out, each with why; they come back later
	// by catching up from the log, as a replica taken out while shepherd
	// runs.
	Out map[int]error
}

// PlanStart decides which replicas shepherd starts with, given the log's
// last barrier (top) and one report per replica: every replica without an
// error, provided there are at least f+1 of them (ok false otherwise:
// shepherd must not start, since fewer than f+1 replicas cannot back an
// answer). Only the replicas taken in move Base: a refused one's numbers
// are not believed.
func PlanStart(f int, top uint64, reports []StartReport) (plan StartPlan, ok bool) {
	plan = StartPlan{Base: top + 1, Out: map[int]error{}}
	for i, r := range reports {
		if r.Err != nil {
			plan.Out[i] = r.Err
			continue
		}
		// With an empty log (a new data directory), the replicas' own
		// rows are all there is; CheckBarrier bounded them by MaxBarrier.
		plan.Base = max(plan.Base, r.High+1)
	}
	return plan, len(reports)-len(plan.Out) >= f+1
}
