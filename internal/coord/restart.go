package coord

import (
	"errors"
	"fmt"
	"slices"
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

// DDLIntent is a transaction whose schema change went, or was about to
// go, to the replicas that commit DDL as they run it (Config.DDLCommits:
// MariaDB), recorded durably before it did, and whose outcome was not
// recorded when shepherd stopped: no log record of its commit, no sign
// that it ended otherwise. Those replicas may hold the change, committed
// in their engine, while the others do not hold it: start-up must not
// take them all in as they are.
type DDLIntent struct {
	// Txn is the transaction's id in the run that recorded it.
	Txn uint64
	// Lone says the transaction was that one DDL statement, with nothing
	// before it: MariaDB's DDL also commits whatever the transaction ran
	// before it, and what such a replica may hold is then more than the
	// statement.
	Lone bool
	// Deferred says the transaction's DDL was inside its block, deferred
	// on those replicas (Submit.Defer): they are sent it, and what
	// followed it, only once the commit is logged. Unlogged, such an
	// intent left nothing there (their engine transaction ended with
	// shepherd); logged, or perhaps logged (Unknown), they may hold part
	// of it committed (MariaDB commits DDL and what came before it as it
	// runs it), which replay could not tell apart.
	Deferred bool
	// Holds, for a deferred intent whose commit was logged, are the
	// replicas whose log table holds that commit (start-up read it):
	// they finished the transaction, which their COMMIT recorded there
	// after the rest of it.
	Holds []int
	// Unknown says start-up cannot tell whether the commit was logged:
	// the log no longer reaches back to where its record would be (it
	// was truncated after the intent should have gone). Completing it
	// could run an old schema change again.
	Unknown bool
	// Refused says a replica that holds every logged transaction, and
	// runs DDL in transactions, refused the change (or one completed
	// before it) in a trial start-up rolled back: completing it would
	// fail the replay there. The change most likely failed on the replicas
	// that commit DDL as they run it too, but engines refuse different
	// things.
	Refused bool
	// Replicas are the replicas that commit DDL as they run it: those
	// that may hold the change.
	Replicas []int
}

// IntentPlan is start-up's decision on the open intents.
type IntentPlan struct {
	// Complete are the transactions (DDLIntent.Txn) to log as committed,
	// after the log's last record, and to replay to every replica like
	// any logged transaction; a replica that ran the change already
	// finds its effect there, as replay after a crash between MariaDB's
	// DDL and its log-table row does (cluster.Replay).
	Complete []uint64
	// Retire are the replicas to retire, durably, before start-up goes
	// on, each with why: they may hold a change the others never get.
	Retire map[int]string
}

// PlanIntents decides what start-up does with the DDL intents the last
// run left (logged reports whether a transaction's commit is in the
// write-ahead log; those intents are resolved), given in the order they
// were recorded. Open intents of lone DDL statements are completed, in
// that order: each is logged and so replayed everywhere, which gives
// every replica the change whether or not it ran before the crash (its
// client never heard an outcome: its connection dropped). The shell
// records intents in the order it hands the statements to the core,
// which runs DDL on such a replica in that order, and decides no later
// transaction that may have seen an undecided DDL (cbs, ddlBlocked): so
// completing them after the log's last record gives the state such a
// replica reached. If an open intent is of a transaction with other
// statements, nothing is completed and the replicas that may hold the
// changes are retired instead: replay could not tell what such a
// replica committed of it. So it is with an intent of which start-up
// cannot tell whether it committed (Unknown), and with one the other
// replicas refuse (Refused): completing it would fail the replay there,
// on every start. The other replicas hold none of the open
// changes (a transactional engine commits nothing unlogged), so the
// replicas still in use agree either way. Deferred intents (DDL inside a
// block) are apart: unlogged, they reached no such replica and are
// dropped; logged (or Unknown), each such replica not in Holds is
// retired.
func PlanIntents(intents []DDLIntent, logged func(txn uint64) bool) IntentPlan {
	plan := IntentPlan{Retire: map[int]string{}}
	var open []DDLIntent
	lone := true
	for _, in := range intents {
		if in.Deferred {
			if logged(in.Txn) || in.Unknown {
				for _, r := range in.Replicas {
					if _, ok := plan.Retire[r]; !ok && !slices.Contains(in.Holds, r) {
						plan.Retire[r] = fmt.Sprintf("may hold part of transaction %d, committed: its DDL inside a transaction block "+
							"was being applied there after its commit when shepherd stopped, and replay cannot tell what it holds", in.Txn)
					}
				}
			}
			continue // unlogged, it never reached those replicas
		}
		if !logged(in.Txn) {
			open = append(open, in)
			lone = lone && in.Lone && !in.Unknown && !in.Refused
		}
	}
	if lone {
		for _, in := range open {
			plan.Complete = append(plan.Complete, in.Txn)
		}
		return plan
	}
	for _, in := range open {
		var why string
		switch {
		case in.Unknown:
			why = fmt.Sprintf("may hold the schema change of transaction %d, of which the write-ahead log no longer "+
				"tells whether it committed: it cannot be completed on the other replicas", in.Txn)
		case in.Refused:
			why = fmt.Sprintf("may hold the schema change of transaction %d, which shepherd stopped before logging "+
				"and which the other replicas refuse: it cannot be completed on them", in.Txn)
		case !in.Lone:
			why = fmt.Sprintf("may hold the schema change of transaction %d, which shepherd stopped before logging "+
				"and which had other statements: it cannot be completed on the other replicas", in.Txn)
		default:
			continue
		}
		for _, r := range in.Replicas {
			if _, ok := plan.Retire[r]; !ok {
				plan.Retire[r] = why
			}
		}
	}
	for _, in := range open {
		for _, r := range in.Replicas {
			if _, ok := plan.Retire[r]; !ok {
				plan.Retire[r] = fmt.Sprintf("may hold the schema change of transaction %d, which shepherd stopped before logging", in.Txn)
			}
		}
	}
	return plan
}

// LoggedDDL is what start-up's recovery of the schema catalog needs of
// one logged transaction: its barrier and the client's text of each of
// its schema changes, in order.
type LoggedDDL struct {
	Barrier uint64
	DDL     []string
}

// CatalogStep is one logged schema change start-up records in the schema
// catalog.
type CatalogStep struct {
	// Barrier is the logged transaction's.
	Barrier uint64
	// SQL is the change as the client wrote it, analysed again against
	// the catalog as it stands after the steps before it: as at its
	// commit.
	SQL string
	// Last says it is the transaction's last change: the catalog records
	// Barrier with it, in the same write, so that a later start does not
	// apply the transaction again (and records Barrier even if the change
	// fails, as the commit did).
	Last bool
}

// PlanCatalog decides what start-up records in the schema catalog
// (catalog.json), given which logged transactions' changes it holds
// (holds, its record written with them) and the log's transactions, in
// barrier order. shepherd writes the catalog after the commit, so a crash
// in between leaves the file without changes the replicas hold: those of
// every transaction it does not hold are applied, in barrier order, each
// transaction's barrier recorded with its last. A transaction the catalog
// holds is skipped: applied twice, a change can leave the catalog wrong
// (a rename swap swapped back) or fail. The simulator runs it too
// (internal/coord/sim, its restarts), against its model of the catalog.
func PlanCatalog(holds func(barrier uint64) bool, txns []LoggedDDL) []CatalogStep {
	var steps []CatalogStep
	for _, t := range txns {
		if holds(t.Barrier) {
			continue
		}
		for i, sql := range t.DDL {
			steps = append(steps, CatalogStep{Barrier: t.Barrier, SQL: sql, Last: i == len(t.DDL)-1})
		}
	}
	return steps
}
