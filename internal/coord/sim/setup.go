package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// setup is everything a seed decides before the run starts.
type setup struct {
	n, f    int
	classes []driver.Class
	// concurrent is coord.Config.Concurrent: which CBS secondaries run
	// concurrently rather than one at a time.
	concurrent []bool
	faults     []faults // by replica; at most f are faulty
	keys       int
	clients    int
	txns       int // transactions the clients start, in all
	// tickEvery is how many chances every possible move gets between two
	// Ticks, on average: with m moves possible, a step is a Tick with
	// chance 1/(1+tickEvery*m). Below 1, correct replicas often look
	// stalled to the core; well above, only faulty stalls do.
	tickEvery  float64
	stallTicks int // coord.Config.StallTicks (0: the core's default)
	opTicks    int // coord.Config.OpTicks (0: never)
	initial    store
	// ddl (CBS and SS runs): one transaction in eight is a lone DDL
	// statement, which the replicas marked in ddlCommits (a locking one,
	// MariaDB-like) commit as they run it, and clients sometimes cancel
	// their COMMIT. Drawn from a stream of its own in sim.start unless a
	// scenario sets it (ddlSet), so that other runs replay as before.
	ddl, ddlSet bool
	ddlCommits  []bool
	// ddlEvery: one transaction in ddlEvery is DDL (0: 8).
	ddlEvery int
	// blockDDL (with ddl): half the DDL statements stand among other
	// statements of a transaction block (coord.Submit.Defer), deferred
	// on the replicas in ddlCommits until the commit is decided. Drawn
	// from a stream of its own (half the runs with ddl) unless blockSet.
	blockDDL, blockSet bool
	// walOn: the run has a write-ahead log whatever the seed (CBS and SS;
	// otherwise half the seeds have one).
	walOn bool
	// restarts are the steps at which shepherd itself crashes and starts
	// again from its write-ahead log (runs with one; see sim.restart).
	// Drawn from a stream of their own in sim.start unless restartSet.
	restarts   []int
	restartSet bool
	// swapEvery: one transaction in swapEvery is a lone schema change
	// that swaps two names (stmtSwap); 0 none.
	swapEvery int

	// savepoints: some transactions set a savepoint and roll back to it
	// (scenario "savepoints").
	savepoints bool
}

// newSetup draws a configuration from rng.
func newSetup(rng *rand.Rand) setup {
	s := setup{f: 1}
	if rng.IntN(4) == 0 {
		s.f = 2
	}
	s.n = 2*s.f + 1
	if rng.IntN(10) == 0 {
		s.n++
	}
	s.classes = drawClasses(rng, s.n)
	s.keys = 8 + rng.IntN(13)
	s.clients = 8 + rng.IntN(9)
	s.txns = 200 + rng.IntN(601)
	s.tickEvery = math.Exp(math.Log(0.1) + (math.Log(10)-math.Log(0.1))*rng.Float64())
	if rng.IntN(2) == 0 {
		s.stallTicks = 3 + rng.IntN(18)
	}
	s.initial = make(store, s.keys)
	for k := range s.initial {
		s.initial[k] = rng.IntN(100)
	}
	s.faults = drawFaults(rng, s)
	// Drawn last, so the draws above stay what they were for each seed.
	s.concurrent = make([]bool, s.n)
	for r, c := range s.classes {
		switch c {
		case driver.Locking:
			s.concurrent[r] = rng.IntN(5) > 0
		case driver.MVCC:
			s.concurrent[r] = rng.IntN(2) == 0
		}
	}
	return s
}

// drawClasses gives each replica a concurrency class; the first replica
// fit to be primary (coord.Config.Classes) is locking most of the time.
func drawClasses(rng *rand.Rand, n int) []driver.Class {
	classes := make([]driver.Class, n)
	for r := range classes {
		switch p := rng.IntN(10); {
		case p < 4:
			classes[r] = driver.Locking
		case p < 8:
			classes[r] = driver.MVCC
		default:
			classes[r] = driver.Serial
		}
	}
	if p := primaryOf(classes); p < 0 || rng.IntN(5) > 0 {
		classes[max(p, 0)] = driver.Locking
	}
	return classes
}

// primaryOf returns the replica the core makes primary: the first whose
// class may be primary.
func primaryOf(classes []driver.Class) int {
	for r, c := range classes {
		if c.MayBePrimary() {
			return r
		}
	}
	return -1
}

// drawFaults makes up to f replicas misbehave, one or two ways each.
func drawFaults(rng *rand.Rand, s setup) []faults {
	fl := make([]faults, s.n)
	bad := 0
	if rng.IntN(5) > 0 {
		bad = 1 + rng.IntN(s.f)
	}
	primary := primaryOf(s.classes)
	for _, r := range rng.Perm(s.n)[:bad] {
		fl[r] = drawFault(rng, s, r == primary)
		if rng.IntN(3) == 0 {
			extra := drawFault(rng, s, r == primary)
			fl[r] = merge(fl[r], extra)
		}
	}
	return fl
}

func drawFault(rng *rand.Rand, s setup, primary bool) faults {
	if primary && rng.IntN(4) == 0 {
		return faults{noLocks: true}
	}
	switch rng.IntN(5) {
	case 0:
		return faults{lie: pick(rng, 0.02, 0.2, 1)}
	case 1:
		return faults{stall: pick(rng, 0.1, 0.5, 1), stallMax: 5 + rng.IntN(40)}
	case 2:
		return faults{deadlock: pick(rng, 0.02, 0.1, 0.3)}
	case 3:
		return faults{noLocks: true}
	}
	return faults{crashAt: 1 + rng.IntN(s.txns*20)}
}

func pick(rng *rand.Rand, xs ...float64) float64 { return xs[rng.IntN(len(xs))] }

func merge(a, b faults) faults {
	a.lie = max(a.lie, b.lie)
	a.stall, a.stallMax = max(a.stall, b.stall), max(a.stallMax, b.stallMax)
	a.deadlock = max(a.deadlock, b.deadlock)
	a.noLocks = a.noLocks || b.noLocks
	a.crashAt = max(a.crashAt, b.crashAt)
	a.errs = max(a.errs, b.errs)
	a.corrupt = max(a.corrupt, b.corrupt)
	a.claims = max(a.claims, b.claims)
	return a
}

func (s setup) String() string {
	var rs []string
	for r := range s.n {
		sched := "seq"
		if s.concurrent != nil && s.concurrent[r] {
			sched = "conc"
		}
		rs = append(rs, fmt.Sprintf("r%d=%v/%s/%v", r, s.classes[r], sched, s.faults[r]))
	}
	ddl := ""
	if s.ddl {
		for r, on := range s.ddlCommits {
			if on {
				ddl += fmt.Sprintf(" ddl-commits=r%d", r)
			}
		}
	}
	if len(s.restarts) > 0 {
		ddl += fmt.Sprintf(" restarts@%v", s.restarts)
	}
	if s.swapEvery > 0 {
		ddl += fmt.Sprintf(" swaps=1/%d", s.swapEvery)
	}
	return fmt.Sprintf("n=%d f=%d keys=%d clients=%d txns=%d tickEvery=%.2f stallTicks=%d%s [%s]",
		s.n, s.f, s.keys, s.clients, s.txns, s.tickEvery, s.stallTicks, ddl, strings.Join(rs, " "))
}
