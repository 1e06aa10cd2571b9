package coord

import (
	"fmt"
	"slices"

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
	cfg      Config
	replicas []serialReplica
	txns     map[TxnID]*txnState
	// active holds the admission token (serial mode); waiting are the
	// begun transactions queued for it, in arrival order.
	active  TxnID
	waiting []TxnID
	out     []Action
	// cbs runs the CBS and SS modes; nil in the others.
	cbs *cbs
	// now counts Ticks (serial mode: how long a survey waits).
	now int
}

type serialReplica struct {
	down bool
	// cur is the transaction the replica is running (serial mode), 0 when
	// idle; queue holds ops of later transactions, in order.
	cur   TxnID
	queue []Op
}

type txnState struct {
	// pending holds ops submitted before the transaction was admitted.
	pending  []Op
	ballots  map[Op]*ballot
	finished bool // client's last op (COMMIT/ROLLBACK) submitted
	// abandoned marks a transaction being rolled back: replicas still
	// finishing its statements are cancelled, so their late answers are
	// no evidence against them.
	abandoned bool
	// doneAt marks replicas that finished the transaction's last op.
	doneAt []bool
	// survey: see Begin.
	survey bool
	// writes marks the statements that may change state (Submit.Writes);
	// ddl those that change the schema (Submit.DDL).
	writes map[Op]bool
	ddl    map[Op]bool
	// held marks replicas whose COMMIT waits for their answers to the
	// transaction's writes (see commitAt).
	held []bool
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
	c := &Coordinator{cfg: cfg, replicas: make([]serialReplica, cfg.N), txns: map[TxnID]*txnState{}}
	if cfg.Mode == CBS || cfg.Mode == SS {
		c.cbs = newCBS(c)
	}
	return c
}

// Ready returns the actions produced since the last call, in the order the
// shell must carry them out, and forgets them.
func (c *Coordinator) Ready() []Action {
	out := c.out
	c.out = nil
	return out
}

// HasReady reports whether Ready would return actions.
func (c *Coordinator) HasReady() bool { return len(c.out) > 0 }

// Step applies one event.
func (c *Coordinator) Step(ev Event) {
	if c.stepLiveness(ev) {
		return
	}
	if c.cbs != nil {
		c.cbs.step(ev)
		return
	}
	switch e := ev.(type) {
	case Begin:
		c.begin(e.Txn, e.Survey)
	case Submit:
		c.submit(e.Op, e.Writes || e.DDL, e.DDL)
	case Answered:
		c.answered(e)
	case Down:
		c.markDown(e.R, "reported down")
	case Tick:
		c.now++
		for _, id := range c.txnIDs() {
			if t := c.txns[id]; t != nil && t.survey {
				for _, op := range t.ballotOps() {
					c.decide(op)
				}
			}
		}
	case Cancel:
	default:
		panic(fmt.Sprintf("coord: unknown event %T", ev))
	}
}

// quorum is the number of matching votes that decide an op.
func (c *Coordinator) quorum() int { return quorum.Size(c.cfg.F) }

func (c *Coordinator) begin(id TxnID, survey bool) {
	if _, dup := c.txns[id]; dup || id == 0 {
		panic(fmt.Sprintf("coord: Begin of t%d twice", id))
	}
	c.txns[id] = &txnState{ballots: map[Op]*ballot{}, doneAt: make([]bool, c.cfg.N), survey: survey}
	if c.cfg.Mode != Serial {
		return
	}
	if c.active == 0 {
		c.active = id
		return
	}
	c.waiting = append(c.waiting, id)
}

// admitted reports whether a transaction's ops may go out.
func (c *Coordinator) admitted(id TxnID) bool {
	return c.cfg.Mode != Serial || c.active == id
}

func (c *Coordinator) submit(op Op, writes, ddl bool) {
	t := c.txns[op.Txn]
	if t == nil || t.finished {
		panic(fmt.Sprintf("coord: %v submitted outside a live transaction", op))
	}
	if writes {
		if t.writes == nil {
			t.writes = map[Op]bool{}
		}
		t.writes[op] = true
	}
	if ddl {
		if t.ddl == nil {
			t.ddl = map[Op]bool{}
		}
		t.ddl[op] = true
	}
	if op.Kind != OpStmt {
		t.finished = true
	}
	if op.Kind == OpRollback {
		t.abandoned = true
	}
	if !c.admitted(op.Txn) {
		if op.Kind == OpRollback && c.cfg.Mode == Serial {
			// Never admitted: nothing ran anywhere, drop it from the queue.
			c.waiting = slices.DeleteFunc(c.waiting, func(w TxnID) bool { return w == op.Txn })
			c.emit(Reply{Op: op, From: -1})
			c.forget(op.Txn)
			return
		}
		t.pending = append(t.pending, op)
		return
	}
	c.dispatch(t, op)
}

// dispatch sends op to every live replica (through their queues in serial
// mode) and opens its ballot.
func (c *Coordinator) dispatch(t *txnState, op Op) {
	if t.survey && op.Kind == OpCommit && !c.surveyed(op.Txn, t) {
		// Not unanimous: roll back everywhere instead.
		t.abandoned = true
		rb := Op{Txn: op.Txn, Kind: OpRollback}
		for r := range c.replicas {
			if !c.replicas[r].down {
				c.sendTo(ReplicaID(r), rb)
			}
		}
		c.emit(Reply{Op: op, From: -1, Fail: surveyDiffers()})
		c.release(op.Txn)
		c.checkFinished(op.Txn)
		return
	}
	if op.Kind != OpRollback {
		t.ballots[op] = &ballot{votes: make(quorum.Votes[Vote], c.cfg.N), openedAt: c.now}
	}
	for r := range c.replicas {
		switch {
		case c.replicas[r].down:
		case op.Kind == OpCommit && !t.survey:
			c.commitAt(t, ReplicaID(r), op)
		default:
			c.sendTo(ReplicaID(r), op)
		}
	}
	if op.Kind == OpRollback {
		// A rollback needs no vote: the client is told at once, and the
		// token passes on.
		c.emit(Reply{Op: op, From: -1})
		c.release(op.Txn)
		c.checkFinished(op.Txn)
		return
	}
	c.decide(op) // no live replica left: fails at once
}

func (c *Coordinator) sendTo(r ReplicaID, op Op) {
	rs := &c.replicas[r]
	if c.cfg.Mode == Serial {
		if rs.cur != 0 && rs.cur != op.Txn {
			rs.queue = append(rs.queue, op)
			return
		}
		rs.cur = op.Txn
	}
	c.emit(Send{R: r, Op: op})
}

// surveyed reports, for the COMMIT of survey t, whether every live
// replica gave the same answers to every statement (their answers are all
// in: a survey statement is decided only then), and emits Surveyed.
func (c *Coordinator) surveyed(id TxnID, t *txnState) bool {
	took := c.live()
	for _, op := range t.ballotOps() {
		for r, v := range t.ballots[op].votes {
			if v == nil {
				took[r] = false // left out: it took too long
			}
		}
	}
	unanimous := quorum.Support{For: countTrue(took)}.Won(c.cfg.F)
	for _, op := range t.ballotOps() {
		var first *Vote
		for r, v := range t.ballots[op].votes {
			switch {
			case !took[r]:
			case first == nil:
				first = v
			case *v != *first:
				unanimous = false
			}
		}
	}
	c.emit(Surveyed{Txn: id, Took: took, Unanimous: unanimous})
	return unanimous
}

// surveyDiffers is the COMMIT failure of a survey whose replicas
// disagreed.
func surveyDiffers() *pgerr.Error {
	return pgerr.New(pgerr.SerializationFailure, "the replicas' answers to the survey differ; it was rolled back everywhere")
}

// release passes the admission token to the next waiting transaction.
func (c *Coordinator) release(id TxnID) {
	if c.cfg.Mode != Serial || c.active != id {
		return
	}
	c.active = 0
	if len(c.waiting) == 0 {
		return
	}
	next := c.waiting[0]
	c.waiting = c.waiting[1:]
	c.active = next
	t := c.txns[next]
	pending := t.pending
	t.pending = nil
	for _, op := range pending {
		c.dispatch(t, op)
	}
}

func (c *Coordinator) answered(a Answered) {
	t := c.txns[a.Op.Txn]
	if t == nil {
		return // transaction already forgotten
	}
	if c.replicas[a.R].down {
		return
	}
	last := a.Op.Kind == OpCommit || a.Op.Kind == OpRollback
	if !a.V.OK() && pgerr.IsConnection(&pgerr.Error{Code: a.V.Code}) && c.cfg.N > 1 {
		// The replica lost its session mid-transaction: what it ran is
		// unknown, so it stops voting until recovered.
		c.markDown(a.R, "connection lost during "+a.Op.String())
		return
	}
	if b := t.ballots[a.Op]; b != nil {
		b.votes[a.R] = &a.V
		if b.decided {
			if v := a.V; v != b.outcome && !b.failed && !t.abandoned && !t.survey {
				c.emit(Mismatch{R: a.R, Op: a.Op, Got: v, Want: b.outcome})
			}
			c.retireSplitDDL(t, a.Op, b, a.R)
		} else {
			c.decide(a.Op)
		}
	}
	if a.Op.Kind == OpStmt && t.held != nil && t.held[a.R] {
		t.held[a.R] = false
		c.commitAt(t, a.R, Op{Txn: a.Op.Txn, Kind: OpCommit})
	}
	if last {
		t.doneAt[a.R] = true
		c.replicaDone(a.R, a.Op.Txn)
		c.checkFinished(a.Op.Txn)
	}
}

// retireSplitDDL takes out, for good, a replica that commits DDL as it
// runs it (Config.DDLCommits: MariaDB) and ran DDL statement op of t
// where the agreed answer is otherwise (a cancel the others honoured, an
// error they gave, no agreement): the transaction rolls back on the
// others, but the replica keeps the schema change, and no log can undo
// it. Serial mode's counterpart of the CBS pinning (cbs.go, Retire).
func (c *Coordinator) retireSplitDDL(t *txnState, op Op, b *ballot, r ReplicaID) {
	v := b.votes[r]
	if !t.ddl[op] || c.cfg.DDLCommits == nil || !c.cfg.DDLCommits[r] || v == nil || !v.OK() ||
		(!b.failed && *v == b.outcome) || c.replicas[r].down {
		return
	}
	why := fmt.Sprintf("it committed the DDL of %s as it ran it, and the replicas agreed otherwise", describe(op))
	c.emit(Retire{R: r, Why: why})
	c.markDown(r, why)
}

// commitAt sends COMMIT of t to replica r once r has answered every
// statement of t that may change state as the replicas agreed; until
// then the COMMIT waits (t.held). A replica whose answer to such a
// statement differs from the agreed one is taken out instead: its
// transaction is rolled back there (MarkDown aborts it), because
// committing it would leave its state silently different from the
// others' — MariaDB and SQLite keep a transaction open after a failed
// statement, so the rest of it would commit without that write. Answers
// to reads that lost the vote are reported (Mismatch) but change nothing.
func (c *Coordinator) commitAt(t *txnState, r ReplicaID, op Op) {
	for _, sop := range t.ballotOps() {
		if sop.Kind != OpStmt || !t.writes[sop] {
			continue
		}
		b := t.ballots[sop]
		v := b.votes[r]
		if v == nil || !b.decided {
			if t.held == nil {
				t.held = make([]bool, c.cfg.N)
			}
			t.held[r] = true
			return
		}
		if *v != b.outcome {
			c.markDown(r, fmt.Sprintf("its answer to %s, which may change state, differs from the agreed one (%s, agreed %s): its transaction is rolled back there", describe(sop), v, b.outcome))
			return
		}
	}
	c.sendTo(r, op)
}

// replicaDone moves replica r on to the next transaction in its queue.
func (c *Coordinator) replicaDone(r ReplicaID, id TxnID) {
	rs := &c.replicas[r]
	if c.cfg.Mode != Serial || rs.cur != id {
		return
	}
	rs.cur = 0
	if len(rs.queue) == 0 {
		return
	}
	next := rs.queue[0].Txn
	rs.cur = next
	i := 0
	for ; i < len(rs.queue) && rs.queue[i].Txn == next; i++ {
		c.emit(Send{R: r, Op: rs.queue[i]})
	}
	rs.queue = rs.queue[i:]
}

// decide settles op's ballot if its votes allow it.
func (c *Coordinator) decide(op Op) {
	t := c.txns[op.Txn]
	b := t.ballots[op]
	if b == nil || b.decided {
		return
	}
	if t.survey && op.Kind == OpStmt {
		// Decided once every live replica answered, no vote; a replica
		// that takes too long is left out once f+1 answered.
		from, n, missing := ReplicaID(-1), 0, false
		for r, v := range b.votes {
			if c.replicas[r].down {
				continue
			}
			if v == nil {
				missing = true
				continue
			}
			n++
			if from < 0 {
				from = ReplicaID(r)
			}
		}
		if missing && (c.now-b.openedAt < c.surveyTicks() || n < c.quorum()) {
			return
		}
		b.decided = true
		if from < 0 {
			b.failed = true
			c.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.ConnectionFailure, "no replica is up")})
			return
		}
		b.outcome = *b.votes[from]
		c.emit(Reply{Op: op, From: from})
		return
	}
	if v, from, ok := b.votes.Agreed(c.cfg.F); ok {
		b.decided, b.outcome = true, v
		c.emit(Reply{Op: op, From: ReplicaID(from)})
		for r, got := range b.votes {
			if got != nil && *got != v {
				c.emit(Mismatch{R: ReplicaID(r), Op: op, Got: *got, Want: v})
			}
		}
		for r := range b.votes {
			c.retireSplitDDL(t, op, b, ReplicaID(r))
		}
		if op.Kind == OpCommit {
			c.release(op.Txn)
		}
		return
	}
	if b.votes.Reachable(c.cfg.F, b.pending(c.live())) {
		return
	}
	b.decided, b.failed = true, true
	for r, got := range b.votes {
		if got != nil {
			c.emit(Mismatch{R: ReplicaID(r), Op: op, Got: *got})
		}
	}
	for r := range b.votes {
		c.retireSplitDDL(t, op, b, ReplicaID(r))
	}
	fail := pgerr.New(pgerr.SerializationFailure,
		"replicas disagreed on %s: no answer was given by %d replicas", describe(op), c.quorum()).
		WithHint("the transaction was rolled back on every replica; retry it")
	if e := c.tooFewUp(); e != nil {
		fail = e // none disagreed: too few were left to agree
	}
	c.emit(Reply{Op: op, From: -1, Fail: fail})
	if op.Kind == OpCommit {
		// The client is told the commit failed; replicas that did commit
		// are out of step and are reported by the Mismatch actions.
		c.release(op.Txn)
	}
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

// live returns which replicas still vote.
func (c *Coordinator) live() []bool {
	l := make([]bool, len(c.replicas))
	for i, r := range c.replicas {
		l[i] = !r.down
	}
	return l
}

func (c *Coordinator) checkFinished(id TxnID) {
	t := c.txns[id]
	if t == nil || !t.finished || len(t.pending) > 0 {
		return
	}
	for r, done := range t.doneAt {
		if !done && !c.replicas[r].down {
			return
		}
	}
	c.emit(Finished{Txn: id})
	c.forget(id)
}

func (c *Coordinator) forget(id TxnID) { delete(c.txns, id) }

func (c *Coordinator) markDown(r ReplicaID, why string) {
	rs := &c.replicas[r]
	if rs.down {
		return
	}
	rs.down, rs.queue, rs.cur = true, nil, 0
	c.emit(MarkDown{R: r, Why: why})
	// Ballots that were waiting for r may now be decided (or be known to
	// be undecidable), and transactions waiting for r to finish are done.
	for _, id := range c.txnIDs() {
		t := c.txns[id]
		if t == nil {
			continue
		}
		for _, op := range t.ballotOps() {
			c.decide(op)
		}
		c.checkFinished(id)
	}
}

// txnIDs returns the live transaction ids in increasing order, so that
// actions come out in a deterministic order.
func (c *Coordinator) txnIDs() []TxnID {
	ids := make([]TxnID, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (t *txnState) ballotOps() []Op {
	ops := make([]Op, 0, len(t.ballots))
	for op := range t.ballots {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b Op) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return a.Seq - b.Seq
	})
	return ops
}

func (c *Coordinator) emit(a Action) { c.out = append(c.out, a) }

// IsDown reports whether replica r has been taken out.
func (c *Coordinator) IsDown(r ReplicaID) bool {
	if c.cbs != nil {
		return c.cbs.replicas[r].out()
	}
	return c.replicas[r].down
}

// Decided returns how many transactions have been decided (CBS and SS):
// the barrier the next one takes.
func (c *Coordinator) Decided() int {
	if c.cbs == nil {
		return 0
	}
	return c.cbs.barrier
}

// Applied returns the barrier below which replica r has committed every
// decided transaction (CBS and SS; for a replica taken out, as of when it
// went); -1 in other modes. The write-ahead log may forget what every
// replica applied.
func (c *Coordinator) Applied(r ReplicaID) int {
	if c.cbs == nil {
		return -1
	}
	if c.cbs.replicas[r].out() || c.cbs.replicas[r].joining() {
		return c.cbs.replicas[r].downAt
	}
	return c.cbs.committedPrefix(r)
}

// Primary returns the replica whose answers go to clients first (CBS and
// SS), or -1 in the other modes.
func (c *Coordinator) Primary() ReplicaID {
	if c.cbs != nil {
		return c.cbs.primary
	}
	return -1
}

// Joining reports whether replica r is back but still catching up from
// the log (CBS and SS): it is sent no new work until Caught.
func (c *Coordinator) Joining(r ReplicaID) bool {
	return c.cbs != nil && c.cbs.replicas[r].joining()
}
