package sim

import (
	"slices"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// scenarios are named clusters that replace the one a seed draws; the
// workload and the schedule still come from the seed. Each pins down a
// kind of cluster the random draw meets rarely, or a failure worth
// replaying by name.
var scenarios = map[string]func(*setup){
	// The seed's cluster, with clients that set a savepoint now and then
	// and roll back to it: the writes between are undone everywhere, and
	// neither committed nor logged (restart and catch-up replay the log).
	// Shepherd restarts once from its log (CBS, SS), which must hold
	// only what survived.
	"savepoints": func(s *setup) {
		s.savepoints = true
		restartAt(s, 2500)
	},
	// The paper's figure 5 primary: it never blocks, so conflicting
	// transactions run at once there and the secondaries must sort them
	// out by aborting and re-running.
	"broken-primary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.Locking}, faults{noLocks: true})
	},
	// The same primary with shepherd's default secondaries, which run
	// one transaction at a time (PostgreSQL- and SQLite-like): they run
	// a transaction ahead of its COMMIT (coord.Config.Ahead), so an
	// attempt begun before another transaction is decided must not
	// endorse a commit computed without that one's writes.
	"ahead-broken-primary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{noLocks: true})
		s.concurrent[1] = false
		s.ddlSet = true // no DDL: the run is about the schedule
	},
	// The same with a correct primary and lone DDL, which the primary
	// and a sequential MariaDB-like secondary commit as they run it:
	// transactions ahead of their COMMIT on the sequential secondaries
	// meet the ordering of commits around DDL, and the one whose
	// rollback would not undo DDL runs nothing ahead.
	"ahead-ddl": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.Locking, driver.Serial}, faults{})
		s.concurrent[1] = false
		ddlOn(s, 0)
		s.ddlCommits[1] = true
	},
	// The same primary with a concurrent MVCC secondary: a write whose
	// answer is only a row count (copy) gives the same answer on a stale
	// snapshot as on a fresh one, and writes differently; the stale
	// attempt must be run again before it commits.
	"mvcc-broken-primary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{noLocks: true})
		s.tickEvery = 30
		s.ddlSet = true // no DDL: the seeds replay as they were found
	},
	// DDL that the primary (MariaDB-like) commits as it runs it, with
	// PostgreSQL- and SQLite-like secondaries, clients that cancel their
	// COMMIT, and secondaries often slow to get to it.
	"ddl-primary": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{})
		ddlOn(s, 0)
	},
	// The same primary crashes: a view change after it ran DDL.
	"ddl-primary-crash": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.Serial}, faults{crashAt: 1500})
		ddlOn(s, 0)
	},
	// Many DDL transactions on the same object, on a MariaDB-like
	// primary and secondary: their commits must follow the order the
	// DDL took effect there.
	"ddl-order": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.Locking, driver.MVCC}, faults{})
		ddlOn(s, 0)
		s.ddlCommits[1] = true
		s.ddlEvery = 2
		s.tickEvery = 0.3
	},
	// DDL inside transaction blocks, with a MariaDB-like primary that
	// commits DDL (and what its transaction ran before) as it runs it:
	// deferred there until the commit is decided, run exclusively;
	// clients roll blocks back, and shepherd crashes again and again.
	"ddl-block": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{})
		ddlOn(s, 0)
		s.blockDDL, s.blockSet = true, true
		s.ddlEvery = 3
		restartAt(s, 700, 1500, 2200, 3100, 3900, 4600, 5500)
	},
	// The same with the primary crashing, and a lying secondary.
	"ddl-block-crash": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Serial, driver.MVCC, driver.Serial, driver.Locking}, faults{crashAt: 1500})
		s.f = 2
		ddlOn(s, 0)
		s.ddlCommits[4] = true
		s.blockDDL, s.blockSet = true, true
		s.ddlEvery = 3
	},
	// A MariaDB-like secondary, next to a primary that lies now and then.
	"ddl-secondary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.MVCC}, faults{lie: 0.05})
		ddlOn(s, 1)
	},
	// An MVCC secondary (its answers are often stale, so it must re-run
	// to endorse) next to a secondary that fails every statement with a
	// deadlock error.
	"mvcc-failing-secondary": func(s *setup) {
		cluster(s, 2, []driver.Class{driver.Locking, driver.MVCC, driver.Locking}, faults{deadlock: 1})
	},
	// The same next to a secondary that answers up to 1000 ticks late.
	"mvcc-hung-secondary": func(s *setup) {
		cluster(s, 2, []driver.Class{driver.Locking, driver.MVCC, driver.Locking}, faults{stall: 1, stallMax: 1000})
	},
	// A concurrent secondary crashes and, in runs with a write-ahead
	// log, comes back, catches up from it and rejoins.
	"secondary-rejoins": func(s *setup) {
		cluster(s, 1, []driver.Class{driver.Locking, driver.Locking, driver.Serial}, faults{crashAt: 2000})
	},
	// The same with the primary: a view change, then the old primary
	// rejoins as a secondary.
	"primary-rejoins": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.MVCC}, faults{crashAt: 3000})
	},
	// A primary that fails chosen statements with a unique violation the
	// other replicas do not give (issue 14, item 11): the error must not
	// reach a client unless f+1 replicas gave it. A concurrent MVCC and a
	// sequential serial secondary, so both schedules run the failed
	// statement.
	"erring-primary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{errs: 0.05})
	},
	// The same with two concurrent locking secondaries.
	"erring-primary-locking": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.Locking}, faults{errs: 0.05})
	},
	// Correct replicas whose operations take longer than StallTicks: the
	// core cannot tell them from blocked ones.
	"slow-correct": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{})
		s.tickEvery, s.stallTicks = 0.1, 3
	},
	// Shepherd itself crashes twice and starts again from its
	// write-ahead log (issue 14, the simulator's gaps): transactions in
	// flight are lost, those whose record was durable commit all the
	// same, and the replicas, which lag the log by different amounts,
	// are replayed what each lacks before service goes on.
	"restart": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{})
		restartAt(s, 2500, 6000)
	},
	// The same with a secondary that answers up to 40 ticks late, so
	// that it lags far behind when shepherd goes.
	"restart-lagging": func(s *setup) {
		cluster(s, 1, []driver.Class{driver.Locking, driver.Locking, driver.MVCC}, faults{stall: 0.5, stallMax: 40})
		restartAt(s, 3000)
	},
	// A replica whose log table claims a barrier beyond the log's last
	// (issue 14, item 9): start-up must leave it out and start on the
	// f+1 others.
	"restart-liar": func(s *setup) {
		cluster(s, 2, []driver.Class{driver.Locking, driver.MVCC, driver.Locking}, faults{claims: 3})
		restartAt(s, 2500)
	},
	// Five replicas, f = 2: one down when shepherd restarts (it comes
	// back later and catches up), one lying about its highest barrier:
	// start-up must go on with the three others.
	"restart-down": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial, driver.Locking, driver.MVCC}, faults{})
		s.f = 2
		s.faults[1] = faults{crashAt: 1500}
		s.faults[4] = faults{claims: 1000}
		restartAt(s, 4000)
	},
	// Schema changes (two names swapped) while a secondary is down: it
	// comes back and is replayed, from the log, transactions submitted
	// before later swaps (issue 14, item 2). Replay must send what ran,
	// not the client's names resolved against today's catalog.
	"schema-swap": func(s *setup) {
		cluster(s, 1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{crashAt: 1200})
		s.walOn, s.swapEvery = true, 5
		s.ddlSet = true
	},
	// The same through restarts of shepherd: the secondary crashed
	// before the first and comes back after it, the others lagging the
	// log by different amounts when shepherd goes.
	"schema-swap-restart": func(s *setup) {
		cluster(s, 1, []driver.Class{driver.Locking, driver.Locking, driver.Serial}, faults{crashAt: 1000})
		s.swapEvery = 4
		restartAt(s, 2000, 5000)
	},
	// The same with a primary that commits DDL as it runs it, whose
	// clients give up during COMMIT now and then: a swap the core pins
	// (coord.ErrCommitsAnyway) reaches the catalog only once its record
	// is durable (Txn.AfterCommit), and start-up recovers what a crash
	// left out.
	"schema-swap-pinned": func(s *setup) {
		cluster(s, -1, []driver.Class{driver.Locking, driver.MVCC, driver.Locking}, faults{})
		ddlOn(s, 0)
		s.swapEvery, s.ddlEvery = 3, 16
		restartAt(s, 1500, 4000)
	},
	// A secondary that now and then commits another value than the one
	// it answered with (silent corruption): answers must stay backed by
	// correct replicas, and surveys must see it, never blaming a correct
	// replica.
	"corrupt-secondary": func(s *setup) {
		cluster(s, 1, []driver.Class{driver.Locking, driver.MVCC, driver.Serial}, faults{corrupt: 0.05})
	},
	// The same on the primary, whose later answers come from the
	// corrupted data.
	"corrupt-primary": func(s *setup) {
		cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.MVCC}, faults{corrupt: 0.05})
	},
}

// restartAt makes s a run with a write-ahead log in which shepherd
// crashes and starts again at the given steps. DDL a replica commits as
// it runs it is drawn as in other runs: start-up resolves the intents a
// crash left open (see doc.go).
func restartAt(s *setup, steps ...int) {
	s.walOn, s.restartSet, s.restarts = true, true, steps
}

// cluster makes s three replicas of the given classes, f = 1, with replica
// bad (if any) misbehaving as fl.
func cluster(s *setup, bad int, classes []driver.Class, fl faults) {
	s.n, s.f, s.classes = len(classes), 1, classes
	// Scenarios exercise the concurrent schedules wherever a class has one.
	s.concurrent = make([]bool, s.n)
	for r, c := range classes {
		s.concurrent[r] = c != driver.Serial
	}
	s.faults = make([]faults, s.n)
	if bad >= 0 {
		s.faults[bad] = fl
	}
	if s.tickEvery < 1 {
		s.tickEvery = 3 // operations usually well within StallTicks
	}
	s.stallTicks = 0
}

// ddlOn makes s a run with DDL transactions, which replica r commits
// as it runs them.
func ddlOn(s *setup, r int) {
	s.ddl, s.ddlSet = true, true
	s.ddlCommits = make([]bool, s.n)
	s.ddlCommits[r] = true
}

// Scenarios returns the scenario names, sorted.
func Scenarios() []string {
	var names []string
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
