package coord

import (
	"fmt"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/quorum"
)

// TxnID names a transaction; the shell allocates them, never zero.
type TxnID uint64

// ReplicaID is a replica's index in the configuration.
type ReplicaID int

// OpKind is the kind of an operation a replica runs.
type OpKind uint8

// Operation kinds.
const (
	OpStmt OpKind = iota + 1
	OpCommit
	OpRollback
)

// Op is one operation of a transaction. Seq numbers the statements of a
// transaction from 0; it is unused for COMMIT and ROLLBACK.
type Op struct {
	Txn  TxnID
	Kind OpKind
	Seq  int
}

// String renders an op as the scenario scripts write it: t1/0, t1/commit.
func (o Op) String() string {
	switch o.Kind {
	case OpCommit:
		return fmt.Sprintf("t%d/commit", o.Txn)
	case OpRollback:
		return fmt.Sprintf("t%d/rollback", o.Txn)
	}
	return fmt.Sprintf("t%d/%d", o.Txn, o.Seq)
}

// Vote is one replica's answer to an operation, reduced to what voting
// compares: the digest of a successful answer, or an error's SQLSTATE.
type Vote struct {
	Digest answer.Digest
	Code   string // "" for success
}

// OK reports whether the vote is a successful answer.
func (v Vote) OK() bool { return v.Code == "" }

// String renders the vote for logs and scripts.
func (v Vote) String() string {
	if v.OK() {
		return v.Digest.String()
	}
	return "error " + v.Code
}

// Mode selects the scheduling rules.
type Mode uint8

// Modes.
const (
	Passthrough Mode = iota + 1
	Serial
	// CBS is commit barrier scheduling (HRDB paper, section 3.3).
	CBS
	// SS runs every secondary sequentially: a transaction reaches the
	// secondaries once its COMMIT arrived, one transaction at a time
	// (the paper's Pronto-like baseline, section 7).
	SS
)

// String names the mode as the configuration does.
func (m Mode) String() string {
	switch m {
	case Passthrough:
		return "passthrough"
	case Serial:
		return "serial"
	case CBS:
		return "cbs"
	case SS:
		return "ss"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Config is the coordinator's fixed configuration.
type Config struct {
	Mode Mode
	// N is the number of replicas, F the number of faulty ones tolerated:
	// N >= 2F+1 (passthrough: N = 1, F = 0).
	N, F int
	// Classes are the replicas' concurrency classes (CBS and SS; nil
	// means all Locking). The primary is the first replica whose class
	// may be primary.
	Classes []driver.Class
	// Concurrent lists, per replica, whether a CBS secondary runs
	// transactions concurrently under the ordering rules (true) or one at
	// a time in commit order (false); nil means DefaultConcurrent for each
	// class. Serial-class replicas and SS mode are always one at a time.
	Concurrent []bool
	// Ahead lets a CBS secondary that runs one transaction at a time
	// (sequential or pipelined) start an undecided transaction before its
	// client asks to COMMIT it, when nothing decided or waiting for a
	// decision is there to run: the transaction the primary answered
	// most recently, statement by statement as the primary answers them.
	// Its replay then overlaps the client's own work, and the decision
	// needs no replay after the COMMIT, while the primary holds the
	// transaction's locks. The attempt gives way to any COMMIT asked for
	// and is aborted by any other decision, as a run ahead of the
	// decision is (see cbs.nextAhead). Never in SS mode, never on a
	// replica that commits DDL as it runs it.
	Ahead bool
	// PrimaryTimeout is how many ticks the primary may leave operations
	// unanswered without answering anything before it is suspected and
	// replaced (CBS and SS; 0 means DefaultPrimaryTimeout, -1 never). It
	// doubles with each view change that follows another within
	// stableCommits commits, up to maxTimeoutFactor times, and halves back
	// after stable progress.
	PrimaryTimeout int
	// OpTicks is how many ticks the primary may leave one statement
	// unanswered while it answers other work (probes, other statements)
	// before it is suspected of selective silence and replaced (CBS and
	// SS; paper 3.4). 0, the default, means never: a statement may
	// legitimately run, or wait for a lock an idle client holds, longer
	// than any fixed limit. Set it above the engines' statement and lock
	// timeouts. It does not run while COMMITs or errors wait for the
	// secondaries (the statement may wait for their locks).
	OpTicks int
	// Log makes commits wait for the shell's write-ahead log (CBS and
	// SS): a decided transaction is announced with a Log action, and no
	// replica is sent its COMMIT until a Logged event covers its barrier.
	Log bool
	// StallTicks is how many Tick events an operation may run on a
	// secondary before the secondary counts as blocked and aborts the
	// undecided transactions in its way (CBS). 0 means DefaultStallTicks.
	StallTicks int
	// SurveyTicks is how many ticks a survey (Begin.Survey) waits for a
	// replica that is not ready before it goes on without it. 0 means
	// DefaultSurveyTicks.
	SurveyTicks int
	// DDLCommits marks the replicas that commit DDL as they run it
	// (MariaDB, MySQL), so that rolling the transaction back does not
	// undo it (CBS and SS; nil: none). See pinned in cbs.go.
	DDLCommits []bool
	// DrainTicks is how long a transaction block's first DDL statement
	// waits, with DDLCommits replicas, for every other transaction to end
	// before it fails with 55P03, and how long each deferred statement
	// (and its COMMIT) waits for f+1 participants to agree once one
	// answered before it fails with 57014 (see deferred.go). 0 means
	// DefaultDrainTicks.
	DrainTicks int
}

// DefaultSurveyTicks is Config.SurveyTicks when left 0: 10 s at the
// shell's default 10 ms tick. A comparison step may take a slow replica
// seconds; one that takes longer is reported as not compared.
const DefaultSurveyTicks = 1000

// surveyTicks returns Config.SurveyTicks with its default applied.
func (c *Coordinator) surveyTicks() int {
	if c.cfg.SurveyTicks > 0 {
		return c.cfg.SurveyTicks
	}
	return DefaultSurveyTicks
}

// DefaultConcurrent is how a CBS secondary of class c runs when the
// configuration does not say. Locking secondaries run concurrently: their
// blocking mirrors the primary's, so they can vouch for a concurrent order.
// MVCC secondaries run one at a time: a READ COMMITTED read never blocks,
// so an MVCC secondary can only vouch for answers computed after every
// earlier commit (see fresh in cbs.go); run concurrently under load its
// answers are mostly stale, and it does the work without being able to
// endorse it (measured in BenchmarkBankModes).
func DefaultConcurrent(c driver.Class) bool { return c == driver.Locking }

// DefaultPrimaryTimeout is Config.PrimaryTimeout when left 0: 5 s at
// the shell's default 10 ms tick.
const DefaultPrimaryTimeout = 500

// DefaultStallTicks is Config.StallTicks when left 0.
const DefaultStallTicks = 10

// Event is an input to Step.
type Event interface{ event() }

// Begin: the client started transaction Txn (explicitly or implicitly).
//
// A Survey transaction is the shell's own (compare and repair): it is
// scheduled like client work, so that every replica runs it on the same
// logical state, but it is never voted on. Its statements are answered by
// the primary as usual; its COMMIT waits until every live replica is ready
// to commit (has answered every statement, on a fresh state), then
// commits only if all of them gave the same answers, and rolls back
// everywhere otherwise (Surveyed tells which). Differing answers are the
// point of a survey: they are never reported as mismatches and never take
// a replica out.
type Begin struct {
	Txn    TxnID
	Survey bool
}

// Submit: the client submitted an operation of a begun transaction.
type Submit struct {
	Op Op
	// Writes says the statement may change state (a write or DDL): a
	// replica whose answer to it differs from the agreed one must not
	// commit its transaction, since its state would differ from the
	// others' with nothing left to show it (see writeDiverged).
	Writes bool
	// DDL marks a statement that changes the schema (see
	// Config.DDLCommits); it counts as a write too.
	DDL bool
	// Recovers marks a ROLLBACK TO SAVEPOINT: in a transaction failed by
	// a statement's error it ends the failure (PostgreSQL's rule), but
	// only where the replicas agreed on that error and it is one the
	// statement itself causes (votable); otherwise (an error no vote
	// confirmed, a cancel or a concurrency failure even if every replica
	// gave it, a ballot without agreement, a transaction whose primary
	// changed) the statement fails with 40001 and the transaction stays
	// failed. Elsewhere it is an ordinary
	// statement, run in order with the others.
	Recovers bool
	// Defer marks a DDL statement inside a transaction block: with
	// replicas that commit DDL as they run it (Config.DDLCommits), the
	// transaction is deferred on them from this statement on, and runs
	// exclusively (CBS and SS; see deferred.go). Without such replicas it
	// changes nothing.
	Defer bool
}

// Answered: replica R finished operation Op of attempt Try with vote V.
// Answers of an attempt that was aborted since are ignored.
type Answered struct {
	R   ReplicaID
	Op  Op
	Try int
	V   Vote
}

// Down: replica R is unusable (its connection broke, it answered with a
// connection error, or the operator took it out). It gets no operations
// and no longer votes until recovered.
type Down struct{ R ReplicaID }

// Cancel: the client gave up waiting on transaction Txn's COMMIT (CBS and
// SS). If the commit is not decided yet the transaction aborts and the
// COMMIT fails with 57014; a decided commit goes on. Cancelling a
// statement the primary runs is the shell's business (it stops it
// there); one the core still holds (a DDL statement queued behind
// another, one held for the next primary) fails here with 57014.
type Cancel struct{ Txn TxnID }

// Tick: time passed (the shell's clock; the core has none). A secondary
// operation outstanding for Config.StallTicks ticks counts as blocked.
type Tick struct{}

// Logged: the write-ahead log holds every transaction with a barrier up
// to and including Barrier (the log is written in barrier order, so one
// event covers all before it). Only with Config.Log.
type Logged struct{ Barrier int }

func (Logged) event() {}

// LogRefused: the write-ahead log refused the record of transaction Txn,
// announced by a Log action (it is too large, say), and will never hold
// it; Fail says why. Only with Config.Log, and before any Logged event
// that covers Txn's barrier. The transaction was decided but no replica
// was sent its COMMIT: it rolls back everywhere and its COMMIT fails with
// Fail. Later transactions go on: their barriers pass over the hole.
type LogRefused struct {
	Txn  TxnID
	Fail *pgerr.Error
}

// LogFailed: the write-ahead log failed (a write or an fsync) and holds
// nothing beyond the barriers Logged events covered so far. Only with
// Config.Log. Every decided transaction it does not hold rolls back
// everywhere, every COMMIT waiting or asked from now on fails with Fail,
// and no transaction commits any more: what was decided but not logged
// cannot be acknowledged, and what may still be on disk is settled when
// shepherd restarts from the log.
type LogFailed struct{ Fail *pgerr.Error }

func (LogRefused) event() {}
func (LogFailed) event()  {}

// Rejoin: replica R, taken out, is reachable again (CBS and SS). It runs
// every transaction decided from now on, but is sent nothing until
// Caught: it first applies, from the log, what was decided before
// (Decided tells up to where). Then it runs as configured again
// (Config.Concurrent).
type Rejoin struct{ R ReplicaID }

// Caught: replica R, rejoining, has applied every transaction decided
// before its Rejoin.
type Caught struct{ R ReplicaID }

func (Rejoin) event()   {}
func (Caught) event()   {}
func (Begin) event()    {}
func (Submit) event()   {}
func (Answered) event() {}
func (Down) event()     {}
func (Tick) event()     {}
func (Cancel) event()   {}

// Action is an output of Ready.
type Action interface{ action() }

// Send: run Op on replica R as part of attempt Try of its transaction
// there. A replica runs the ops of one attempt in the order sent, on one
// engine transaction; the first op of an attempt begins it, COMMIT or
// ROLLBACK ends it. Tries start at 0; a higher try is a re-run after an
// Abort.
type Send struct {
	R   ReplicaID
	Op  Op
	Try int
}

// Abort: roll back attempt Try of transaction Txn on replica R (stop its
// running statement first). No answer is expected; late answers of that
// attempt are ignored. The transaction may be sent again with a higher
// Try.
type Abort struct {
	R   ReplicaID
	Txn TxnID
	Try int
}

// Reply: the client's operation Op is decided. When Fail is nil the reply
// is replica From's answer (which may itself be an error the replicas
// agreed on); otherwise Fail is the reply and the transaction must roll
// back.
type Reply struct {
	Op   Op
	From ReplicaID
	Fail *pgerr.Error
}

// Mismatch: replica R's vote on Op differs from the decided one (Want is
// the decided vote; for an undecidable op, Want is zero and R is one of
// the replicas in disagreement).
type Mismatch struct {
	R         ReplicaID
	Op        Op
	Got, Want Vote
}

// MarkDown: the coordinator stopped using replica R (see Down).
type MarkDown struct {
	R   ReplicaID
	Why string
}

// Retire: replica R holds a change the other replicas do not have and
// the write-ahead log cannot undo (DDL it committed as it ran, of a
// transaction that rolled back everywhere else). It is taken out (a
// MarkDown follows) and must stay out until an operator repaired it:
// bringing it back from the log would leave it different.
type Retire struct {
	R   ReplicaID
	Why string
}

// Finished: every live replica is done with transaction Txn; the shell may
// forget it.
type Finished struct{ Txn TxnID }

// NewPrimary: replica R became the primary of view View (CBS and SS),
// after the previous primary was taken out.
type NewPrimary struct {
	R    ReplicaID
	View int
}

// Log: transaction Txn is decided with commit barrier Barrier; append it
// to the write-ahead log and step Logged once it is durable. Emitted in
// barrier order, only with Config.Log.
type Log struct {
	Txn     TxnID
	Barrier int
}

// Surveyed: survey transaction Txn (see Begin) is ready on every live
// replica. Took marks the replicas whose answers to every statement are in
// (their latest attempt's); Unanimous says they all agreed, in which case
// the transaction commits, and otherwise it rolls back everywhere and its
// COMMIT fails with 40001.
type Surveyed struct {
	Txn       TxnID
	Took      []bool
	Unanimous bool
}

func (Surveyed) action()   {}
func (Retire) action()     {}
func (Log) action()        {}
func (Send) action()       {}
func (Abort) action()      {}
func (Reply) action()      {}
func (Mismatch) action()   {}
func (MarkDown) action()   {}
func (Finished) action()   {}
func (NewPrimary) action() {}

// Coordinator is the pure coordinator state machine. It is not safe for
// concurrent use: the shell serialises Step and Ready.
type Coordinator struct {
	cfg Config
	out []Action
	// spare is a slice of actions the shell gave back (Recycle), which
	// the next actions are gathered in: no new slice per step.
	spare []Action
	// rules are the mode's: voting (passthrough, serial) or cbs (CBS,
	// SS). Step hands them every event.
	rules rules
}

// rules are the scheduling rules of a mode: its own state, its Step, and
// what the Coordinator's accessors report of it.
type rules interface {
	// step applies one event; unknown events panic.
	step(Event)
	// isDown, joining, decided, applied and currentPrimary answer IsDown,
	// Joining, Decided, Applied and Primary.
	isDown(ReplicaID) bool
	joining(ReplicaID) bool
	decided() int
	applied(ReplicaID) int
	currentPrimary() ReplicaID
	// heldBy answers HeldBy.
	heldBy(TxnID) TxnID
}

// New returns a coordinator for cfg. It panics on an impossible config
// (the config package validates user input before this).
func New(cfg Config) *Coordinator {
	if cfg.N < 2*cfg.F+1 || cfg.N < 1 || (cfg.Mode == Passthrough && cfg.N != 1) {
		panic(fmt.Sprintf("coord: impossible config %+v", cfg))
	}
	if cfg.Classes != nil && len(cfg.Classes) != cfg.N {
		panic(fmt.Sprintf("coord: %d classes for %d replicas", len(cfg.Classes), cfg.N))
	}
	if cfg.Concurrent != nil && len(cfg.Concurrent) != cfg.N {
		panic(fmt.Sprintf("coord: %d schedules for %d replicas", len(cfg.Concurrent), cfg.N))
	}
	c := &Coordinator{cfg: cfg}
	if cfg.Mode == CBS || cfg.Mode == SS {
		c.rules = newCBS(c)
	} else {
		c.rules = newVoting(c)
	}
	return c
}

// Ready returns the actions produced since the last call, in the order the
// shell must carry them out, and forgets them.
func (c *Coordinator) Ready() []Action {
	out := c.out
	c.out, c.spare = c.spare, nil
	return out
}

// Recycle gives back a slice Ready returned, once the shell is done with
// it (it must not use it afterwards): the coordinator gathers later
// actions in it.
func (c *Coordinator) Recycle(actions []Action) {
	if cap(actions) > cap(c.spare) {
		clear(actions) // the actions it held go unreferenced
		c.spare = actions[:0]
	}
}

// HasReady reports whether Ready would return actions.
func (c *Coordinator) HasReady() bool { return len(c.out) > 0 }

// Step applies one event.
func (c *Coordinator) Step(ev Event) { c.rules.step(ev) }

// quorum is the number of matching votes that decide an op.
func (c *Coordinator) quorum() int { return quorum.Size(c.cfg.F) }

// surveyDiffers is the COMMIT failure of a survey whose replicas
// disagreed.
func surveyDiffers() *pgerr.Error {
	return pgerr.New(pgerr.SerializationFailure, "the replicas' answers to the survey differ; it was rolled back everywhere")
}

func describe(op Op) string {
	switch op.Kind {
	case OpCommit:
		return "COMMIT"
	case OpStmt:
		return fmt.Sprintf("statement %d of the transaction", op.Seq+1)
	}
	return op.String()
}

func (c *Coordinator) emit(a Action) { c.out = append(c.out, a) }

// IsDown reports whether replica r has been taken out.
func (c *Coordinator) IsDown(r ReplicaID) bool { return c.rules.isDown(r) }

// Decided returns how many transactions have been decided (CBS and SS):
// the barrier the next one takes; 0 in other modes.
func (c *Coordinator) Decided() int { return c.rules.decided() }

// Applied returns the barrier below which replica r has committed every
// decided transaction (CBS and SS; for a replica taken out, as of when it
// went); -1 in other modes. The write-ahead log may forget what every
// replica applied.
func (c *Coordinator) Applied(r ReplicaID) int { return c.rules.applied(r) }

// Primary returns the replica whose answers go to clients first (CBS and
// SS), or -1 in the other modes.
func (c *Coordinator) Primary() ReplicaID { return c.rules.currentPrimary() }

// HeldBy returns the transaction whose exclusive run (DDL inside a
// transaction block deferred on the replicas that commit DDL as they run
// it) holds transaction id's first statement back, or 0 when none does:
// a wait the shell's deadlock check must see, since the exclusive
// transaction may wait for a lock id holds in shepherd.
func (c *Coordinator) HeldBy(id TxnID) TxnID { return c.rules.heldBy(id) }

// Joining reports whether replica r is back but still catching up from
// the log (CBS and SS): it is sent no new work until Caught.
func (c *Coordinator) Joining(r ReplicaID) bool { return c.rules.joining(r) }
