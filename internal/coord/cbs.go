package coord

import (
	"errors"
	"fmt"
	"slices"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/quorum"
)

// cbs is the coordinator and the secondary managers' scheduling rules of
// commit barrier scheduling (HRDB paper, section 3.3; DESIGN.md), and of
// SS, which is CBS with every secondary run sequentially.
//
// The primary runs every statement at once and its answer is the client's
// reply. On that answer the statement gets the current barrier and joins
// every secondary's pool. Secondaries take statements from their pool by
// the ordering rules below; a COMMIT waits until f+1 replicas are ready to
// commit and is allowed only when f ready secondaries gave every answer the
// client saw.
//
// Invariants:
//
//  1. Barriers of committed transactions are 0, 1, 2, … in decision order;
//     a statement's barrier is the number of commits decided before the
//     primary answered it.
//  2. A secondary runs the statements of a transaction in order, in one
//     engine transaction per attempt; an attempt that was aborted never
//     votes again (its late answers carry an old try).
//  3. A replica commits transaction T only after it finished every query
//     of every transaction committed before T.
//  4. The client's COMMIT succeeds only if f secondaries that are ready to
//     commit gave, as their latest answers, the primary's answer to every
//     statement of the transaction.
//  5. An error the primary gives for a statement's own reasons (votable)
//     reaches the client only once f secondaries gave it too, after the
//     same answers to the earlier statements (voteError); a primary that
//     f+1 secondaries contradict is taken out.
//  6. A transaction failed by an error goes on only after a ROLLBACK TO
//     SAVEPOINT, and only if that error was voted (cstmt.voted): every
//     secondary then runs the failed statement too, in order, and the
//     error stays one of the answers invariant 4 asks for (recover).
type cbs struct {
	c       *Coordinator
	primary ReplicaID
	// replicas holds each replica's state and schedule, by ReplicaID.
	replicas []replica
	// ddlOrdered: some replica commits DDL as it runs it, so commits are
	// ordered around DDL (ddlBlocked); pclock counts the statements sent
	// to, and the answers from, the primary.
	ddlOrdered bool
	pclock     int
	// ddlQueue holds DDL statements for a primary that commits DDL as it
	// runs it while another one runs there: one at a time, so that the
	// order of their answers is the order they took effect.
	ddlQueue []Op
	// excl is the transaction whose DDL inside its block made it
	// exclusive (deferred.go), nil if none; exclHeld are the first
	// statements of other transactions, waiting until it is over.
	excl     *ctxn
	exclHeld []Op

	// view numbers the primaries so far; while changing, candidate (or -1
	// when no live replica may be primary) takes over once it committed
	// every decided transaction, and statements of new transactions wait
	// in held.
	view     int
	changing bool
	// heard is the tick of the primary's latest answer or answered
	// probe (Alive, liveness.go); timeout is the
	// current limit of its silence (see Config.PrimaryTimeout); calm
	// counts commits decided since the last view change.
	heard     int
	timeout   int
	calm      int
	candidate ReplicaID
	held      []Op
	// heldErrs counts the statements whose error waits for a vote
	// (cstmt.held).
	heldErrs int
	// opsFrom is the latest tick at which statements on the primary may
	// have waited for others' locks (see watchOps).
	opsFrom int

	// aclock counts the primary's answers; ctxn.advanced is its value at
	// a transaction's latest one (see nextAhead).
	aclock int

	barrier int // B: the number of commits decided so far
	// logged is the number of barriers the write-ahead log holds: a
	// COMMIT with a barrier at or above it waits (Config.Log).
	logged int
	// logFail, once the log failed (LogFailed), is what every COMMIT
	// fails with: nothing commits any more.
	logFail   *pgerr.Error
	now       int // ticks seen
	commitSeq int // numbers COMMIT requests in arrival order
	stall     int // ticks before an outstanding secondary op counts as blocked

	txns map[TxnID]*ctxn
	// live lists transactions not yet finished, in Begin order, so that
	// every scan is deterministic.
	live []*ctxn
	// waiting lists the transactions whose COMMIT waits for a decision,
	// in request order.
	waiting []*ctxn
}

// replica is what CBS knows of one replica: whether it takes part
// (state), how it runs transactions (kind), and the data of its
// schedule.
//
// Invariants: kind is schedPrimary for the primary (cbs.primary) from
// when it is made primary; running is 0 unless kind is sequential or
// pipelined and the replica is up; a replica out (down or retired) or
// joining has no pending transactions and is sent nothing; a retired
// replica never comes back.
type replica struct {
	class driver.Class
	// state says whether the replica takes part: up, joining (catching
	// up from the log, sent nothing), down or retired.
	state replicaState
	// kind is how the replica runs the transactions it is sent now; as
	// a secondary it is asSecondary, except from its Rejoin until it
	// caught up (then one at a time: it ran none of the open
	// transactions, so it cannot vouch for them in parallel with the
	// primary).
	kind schedule
	// asSecondary is the configured schedule of the replica as a
	// secondary (by the mode, its class and Config.Concurrent).
	asSecondary schedule
	// running is the transaction a sequential or pipelined secondary
	// runs now (0: none).
	running TxnID
	// pending lists the decided transactions not yet finished here, in
	// barrier order: what the ordering rules of this replica look at.
	pending []*ctxn
	// stallLimit is the current stall limit of a concurrent secondary
	// (see unblock and limit); 0 until the rule first fired here.
	stallLimit int
	// downAt is, for a replica taken out, the barrier below which it had
	// committed everything when it went (what it lacks starts there).
	downAt int
}

// replicaState says whether a replica takes part in the work.
type replicaState uint8

const (
	// replicaUp: it runs and votes.
	replicaUp replicaState = iota
	// replicaJoining: back after being taken out, it is applying from
	// the log what was decided before it rejoined (Rejoin): it is sent
	// nothing until Caught.
	replicaJoining
	// replicaDown: taken out (Down, MarkDown); it may rejoin.
	replicaDown
	// replicaRetired: taken out for good (Retire).
	replicaRetired
)

// schedule is how a replica runs the transactions it is sent.
type schedule uint8

const (
	// schedPrimary runs every statement as the client sends it; its
	// answers are the replies.
	schedPrimary schedule = iota
	// schedConcurrent is a secondary that runs many transactions at once
	// under the ordering rules (a locking engine: its blocking mirrors
	// the primary's).
	schedConcurrent
	// schedConcurrentMVCC is a concurrent secondary whose reads do not
	// wait for writers: its answers count only when fresh (see fresh),
	// and a statement ordered after a commit waits for that COMMIT to
	// finish there.
	schedConcurrentMVCC
	// schedSequential is a secondary that runs one transaction at a
	// time, the next once the previous one's COMMIT was answered.
	schedSequential
	// schedPipelined is a sequential secondary of the serial class: the
	// engine (with the manager's one-transaction slot) runs the next
	// transaction only after the previous one ended, so it is sent once
	// the previous COMMIT was sent.
	schedPipelined
)

// out reports whether r is taken out (down or retired): it runs and
// votes on nothing, and nothing waits for it.
func (r *replica) out() bool { return r.state == replicaDown || r.state == replicaRetired }

// joining reports whether r is catching up from the log (see
// replicaJoining).
func (r *replica) joining() bool { return r.state == replicaJoining }

// sequential reports whether r runs one transaction at a time.
func (r *replica) sequential() bool { return r.kind == schedSequential || r.kind == schedPipelined }

// pipelined reports whether r is sent its next transaction once the
// previous COMMIT was sent (see schedPipelined).
func (r *replica) pipelined() bool { return r.kind == schedPipelined }

// mvcc reports whether r is a concurrent secondary whose reads do not
// wait for writers (see schedConcurrentMVCC).
func (r *replica) mvcc() bool { return r.kind == schedConcurrentMVCC }

type txnPhase uint8

const (
	phaseOpen      txnPhase = iota // running, COMMIT not decided
	phaseCommitted                 // commit decided (barrier assigned)
	phaseEnded                     // rolled back or refused
)

type ctxn struct {
	id    TxnID
	phase txnPhase
	// stmts are the statements submitted, with the primary's answers.
	stmts []cstmt
	// commitSeq > 0 once the client asked to COMMIT.
	commitSeq int
	b         int // barrier, once committed
	failed    bool
	// recoverable: t failed on a statement's error that the replicas
	// agreed on (cstmt.voted), and nothing since made its attempts on
	// the replicas unusable: a ROLLBACK TO SAVEPOINT (Submit.Recovers)
	// ends the failure (see recover).
	recoverable bool
	// doom, when set, is why the transaction can no longer commit (its
	// primary was lost): later statements and COMMIT fail with it.
	doom *pgerr.Error
	// commitOK counts replicas that committed; replied marks the COMMIT
	// answered to the client.
	commitOK int
	replied  bool
	at       []rtx // per replica
	// survey: see Begin. A survey commits only when every live replica
	// is ready and agrees (evaluateSurvey); askedAt is the tick its
	// COMMIT came.
	survey  bool
	askedAt int
	// heldSeq, when the primary's error is held (see voteError), is the
	// commitSeq count then: held and committing transactions wait in one
	// order (see waitSeq).
	heldSeq int
	// ddlSentAt (with Config.DDLCommits) is the primary clock (cbs.pclock)
	// when t's first DDL statement went to the primary, 0 if none;
	// ddlDoneAt when the primary answered it successfully; answeredAt is
	// the clock at the primary's latest answer to t. They order commits
	// around DDL (see ddlBlocked).
	ddlSentAt, ddlDoneAt, answeredAt int
	// advanced is cbs.aclock at the primary's latest answer to t: the
	// transaction that advanced last is the one a sequential secondary
	// runs ahead of its COMMIT (nextAhead).
	advanced int
	// ddlRan marks the replicas that commit DDL as they run it
	// (Config.DDLCommits) and ran a DDL statement of t successfully:
	// rolling t back does not undo it there (see pinned).
	ddlRan []bool
	// deferAt (-1: none) is the index of t's first deferred statement,
	// its first DDL inside its block with DDLCommits replicas
	// (Submit.Defer, deferred.go); deferSince the tick it came; drained
	// once every other transaction that ran something had ended, so the
	// deferred statements may run on the participants.
	deferAt, deferSince int
	drained             bool
}

// ddlBlocked reports whether t must wait for the decision of an
// undecided transaction P whose DDL the primary has run, because t may
// have seen it: on a replica that commits DDL as it runs it, the engine's
// locks no longer order the two by their commits, only by when the DDL
// ran. A transaction with DDL waits for those whose DDL the primary ran
// before its own; one without waits for those whose DDL went to the
// primary before the primary's latest answer to it. (One answered
// entirely before P's DDL was sent did not see it.) P's DDL must have
// run: while it waits on the primary, perhaps for t's locks, t goes
// first, as the primary's locks say. Secondaries that commit DDL as they
// run it get DDL in the order the primary ran it (ddlInOrder), which
// this makes the commit order.
func (s *cbs) ddlBlocked(t *ctxn) bool {
	if !s.ddlOrdered {
		return false
	}
	for _, p := range s.live {
		if s.ddlAfter(p, t) {
			return true
		}
	}
	return false
}

// ddlAfter reports whether t must wait for p's decision (see ddlBlocked).
func (s *cbs) ddlAfter(p, t *ctxn) bool {
	if !s.ddlOrdered || p == t || p.ddlDoneAt == 0 || p.phase != phaseOpen {
		return false
	}
	if t.ddlSentAt > 0 {
		return t.ddlDoneAt == 0 || p.ddlDoneAt < t.ddlDoneAt
	}
	return t.answeredAt > p.ddlSentAt
}

// ddlRunning reports whether a DDL statement is outstanding on the
// primary.
func (s *cbs) ddlRunning() bool {
	for _, t := range s.live {
		if t.ddlSentAt > 0 && t.ddlDoneAt == 0 && t.phase == phaseOpen && t.at[s.primary].outstanding() {
			return true
		}
	}
	return false
}

// cancelQueued fails with 57014 t's statement that waits in the core, not
// yet sent to the primary: a DDL statement queued behind another one
// (ddlQueue) or one held for the next primary (held). The shell cancels
// a statement the primary runs itself; one still here it cannot reach,
// and its client would wait for as long as the DDL before it (a metadata
// lock wait on MariaDB lasts up to a day).
func (s *cbs) cancelQueued(t *ctxn) {
	s.cancelDrain(t)
	match := func(op Op) bool { return op.Txn == t.id && op.Kind == OpStmt }
	n := len(s.ddlQueue) + len(s.held) + len(s.exclHeld)
	s.ddlQueue = slices.DeleteFunc(s.ddlQueue, match)
	s.held = slices.DeleteFunc(s.held, match)
	s.exclHeld = slices.DeleteFunc(s.exclHeld, match)
	if len(s.ddlQueue)+len(s.held)+len(s.exclHeld) == n || len(t.stmts) == 0 {
		return
	}
	t.fail()
	s.emit(Reply{Op: Op{Txn: t.id, Kind: OpStmt, Seq: len(t.stmts) - 1}, From: -1,
		Fail: pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")})
}

// sendQueuedDDL sends the next queued DDL statement to the primary once
// none runs there.
func (s *cbs) sendQueuedDDL() {
	for len(s.ddlQueue) > 0 && !s.changing && !s.ddlRunning() {
		op := s.ddlQueue[0]
		s.ddlQueue = s.ddlQueue[1:]
		if t := s.txns[op.Txn]; t != nil && t.phase == phaseOpen && !t.failed && t.doom == nil {
			s.sendPrimary(t, op)
		}
	}
}

// ddlInOrder reports whether the DDL statement i of t may go to secondary
// r, which commits DDL as it runs it: every DDL statement the primary ran
// before it has been answered on r (or will never run there).
func (s *cbs) ddlInOrder(r ReplicaID, t *ctxn, i int) bool {
	if !t.stmts[i].ddl || !s.ddlCommits(r) {
		return true
	}
	for _, d := range s.live {
		if d == t || d.ddlDoneAt == 0 || d.ddlDoneAt >= t.ddlDoneAt || d.phase == phaseEnded || d.at[r].finished {
			continue
		}
		first := slices.IndexFunc(d.stmts, func(c cstmt) bool { return c.ddl })
		if d.at[r].done() <= first {
			return false
		}
	}
	return true
}

// ErrCommitsAnyway is the cause of the 57014 a client gets when it
// cancels the COMMIT of a pinned transaction (see pinned): the client is
// let go, and the transaction commits nevertheless (the shell records
// its DDL as committed).
var ErrCommitsAnyway = errors.New("canceling statement due to user request")

// pinned reports whether t can no longer be undone everywhere: a replica
// that commits DDL as it runs it (MariaDB) has run a DDL statement of t.
//
// Such a transaction is driven to commit rather than rolled back where
// the choice is shepherd's: a client's cancel during its COMMIT no longer
// aborts it (the client gets 57014 at once, with a detail saying the
// transaction commits nevertheless). Where the rules leave no choice —
// the other replicas refuse it, its primary is lost, the log refuses it —
// it rolls back on every other replica, and the replicas where the DDL
// stays are retired (Retire): taken out until repaired, never brought
// back from the log, so that every replica still in use holds the same
// schema. The other design, running DDL on the transactional replicas
// first and on such a primary last, still leaves the window between the
// primary's DDL and the decision, and costs a round trip per DDL.
func (t *ctxn) pinned() bool { return slices.Contains(t.ddlRan, true) }

// ddlCommits reports whether replica r commits DDL as it runs it.
func (s *cbs) ddlCommits(r ReplicaID) bool {
	d := s.c.cfg.DDLCommits
	return d != nil && d[r]
}

// sentDDL notes that statement i of t goes to replica r: a DDL
// statement sent to a replica that commits it as it runs it pins t, from
// then on, since it may have run there before its answer comes.
func (s *cbs) sentDDL(r ReplicaID, t *ctxn, i int) {
	if t.stmts[i].ddl && s.ddlCommits(r) {
		t.ddlRan[r] = true
	}
}

// ranDDL notes replica r's answer to statement i of t: a DDL statement
// that failed did not run (MariaDB's DDL is atomic), and unpins t there.
func (s *cbs) ranDDL(r ReplicaID, t *ctxn, i int, v Vote) {
	if i < len(t.stmts) && t.stmts[i].ddl && s.ddlCommits(r) {
		t.ddlRan[r] = v.OK()
	}
}

type cstmt struct {
	writes   bool // may change state (Submit.Writes, or DDL)
	ddl      bool // changes the schema (Submit.DDL)
	answered bool // by the primary
	b        int  // barrier when the primary answered
	vote     Vote // the primary's answer
	// held: the primary's answer is an error that waits for f
	// secondaries to give it too before it is the reply (see
	// voteError). Only the last statement of a transaction is ever held.
	held bool
	// voted: the primary's answer is an error f secondaries gave too
	// (or one that needs no vote, F = 0): the secondaries run the
	// statement like any other, so that a transaction recovered from it
	// by ROLLBACK TO SAVEPOINT (recover) goes on in order everywhere,
	// and the error stays one of the answers its COMMIT needs endorsed.
	voted bool
	// deferReq: the statement asked to be deferred (Submit.Defer);
	// deferred: it runs on the participants, its answer is theirs
	// (voteDeferred), and it reaches the DDLCommits replicas only after
	// the decision (see deferred.go).
	deferReq, deferred bool
	// heardAt is 1 + the tick a participant first answered deferred
	// statement (0: none yet): from then on it waits at most DrainTicks
	// for f+1 participants to agree (see deferredWaited).
	heardAt int
}

// rtx is a transaction's progress on one replica.
type rtx struct {
	try   int
	sent  int    // statements sent in this try
	votes []Vote // answers of this try, in statement order
	// snap[i] (MVCC secondaries) is how many decided transactions had
	// surely committed here when statement i was sent: its snapshot
	// includes at least those with barriers below snap[i].
	snap    []int
	started bool // an engine transaction is open for this try
	// commitSent, finished: COMMIT or ROLLBACK sent / answered (finished
	// is also set when nothing ever needs to run here).
	commitSent bool
	finished   bool
	// since is the tick of the last op sent or answered here.
	since int
	// hold >= 0 delays a re-run until every transaction committed before
	// barrier hold has finished here, so the re-run cannot take the locks
	// those transactions wait for again.
	hold int
	// holdFor, when set, also delays the re-run until that transaction
	// (the one it was aborted for) has finished here, so two re-runs
	// cannot catch each other again and again.
	holdFor *ctxn
	// heldB is the barrier when this replica answered a held statement
	// (see cstmt.held): its answer is evidence against the primary's
	// error only if no commit was decided since the primary answered.
	heldB int
	// deferredTries counts this replica's attempts of a deferred
	// transaction that its engine aborted (see deferredGivesUp).
	deferredTries int
	// diverged counts this replica's attempts of the transaction, once
	// committed, whose answer to a write differed from the primary's
	// (see writeDiverged); kept across tries.
	diverged int
}

func (r *rtx) done() int { return len(r.votes) }

// runnable reports whether the secondaries may run q: the primary
// answered it, with success, or with an error held for their vote or
// voted already.
func (q *cstmt) runnable() bool { return q.answered && (q.vote.OK() || q.held || q.voted) }

// fail marks t failed for good: it can only roll back (see recoverable).
func (t *ctxn) fail() { t.failed, t.recoverable = true, false }

// holds reports whether t's last statement is an error of the primary's
// that waits for a vote (see voteError).
func (t *ctxn) holds() bool { return len(t.stmts) > 0 && t.stmts[len(t.stmts)-1].held }

// waitSeq orders the transactions whose client waits for the
// secondaries: for a COMMIT decision, or for the vote on an error (see
// voteError); 0 for the others.
func (t *ctxn) waitSeq() int {
	if t.commitSeq > 0 {
		return t.commitSeq
	}
	if t.holds() {
		return t.heldSeq
	}
	return 0
}

// outstanding reports whether an op of this try is still running.
func (r *rtx) outstanding() bool {
	return r.sent > r.done() || (r.commitSent && !r.finished)
}

func newCBS(c *Coordinator) *cbs {
	n := c.cfg.N
	s := &cbs{c: c, primary: -1, replicas: make([]replica, n), txns: map[TxnID]*ctxn{}, stall: c.cfg.StallTicks}
	if s.stall <= 0 {
		s.stall = DefaultStallTicks
	}
	s.timeout = s.baseTimeout()
	s.ddlOrdered = slices.Contains(c.cfg.DDLCommits, true)
	class := func(r int) driver.Class {
		if c.cfg.Classes == nil {
			return driver.Locking
		}
		return c.cfg.Classes[r]
	}
	for r := range n {
		if s.primary < 0 && class(r).MayBePrimary() {
			s.primary = ReplicaID(r)
		}
	}
	if s.primary < 0 {
		panic(fmt.Sprintf("coord: no replica may be primary among %v", c.cfg.Classes))
	}
	for r := range n {
		concurrent := DefaultConcurrent(class(r))
		if c.cfg.Concurrent != nil {
			concurrent = c.cfg.Concurrent[r]
		}
		rp := &s.replicas[r]
		rp.class = class(r)
		rp.asSecondary = secondarySchedule(c.cfg.Mode, rp.class, concurrent)
		if ReplicaID(r) != s.primary {
			rp.kind = rp.asSecondary
		}
	}
	return s
}

// secondarySchedule is how a secondary of class runs transactions in
// mode, configured concurrent or not (see Config.Concurrent): pipelined
// on a serial-class engine; one at a time in SS mode and when not
// configured concurrent; otherwise concurrently, as MVCC if its reads do
// not wait for writers.
func secondarySchedule(mode Mode, class driver.Class, concurrent bool) schedule {
	switch {
	case class == driver.Serial:
		return schedPipelined
	case mode == SS || !concurrent:
		return schedSequential
	case class == driver.MVCC:
		return schedConcurrentMVCC
	}
	return schedConcurrent
}

func (s *cbs) emit(a Action) { s.c.emit(a) }

func (s *cbs) isDown(r ReplicaID) bool   { return s.replicas[r].out() }
func (s *cbs) joining(r ReplicaID) bool  { return s.replicas[r].joining() }
func (s *cbs) decided() int              { return s.barrier }
func (s *cbs) currentPrimary() ReplicaID { return s.primary }

func (s *cbs) applied(r ReplicaID) int {
	if rp := &s.replicas[r]; rp.out() || rp.joining() {
		return rp.downAt
	}
	return s.committedPrefix(r)
}
func (s *cbs) quorum() int { return quorum.Size(s.c.cfg.F) }

// step is the CBS and SS modes' Step: it applies the event, then the
// rules (progress).
func (s *cbs) step(ev Event) {
	switch e := ev.(type) {
	case Begin:
		s.begin(e.Txn, e.Survey)
	case Submit:
		s.submit(e.Op, e.Writes || e.DDL, e.DDL, e.Recovers, e.Defer)
	case Answered:
		s.answered(e)
	case Down:
		s.markDown(e.R, "reported down")
	case Alive:
		if e.R == s.primary && !s.replicas[e.R].out() {
			s.heard = s.now // (see watchPrimary)
		}
		return // nothing else changed
	case Unresponsive:
		s.markDown(e.R, e.why())
	case Tick:
		s.now++
		s.unblock()
		s.watchPrimary()
	case Logged:
		s.logged = max(s.logged, e.Barrier+1)
	case LogRefused:
		if t := s.txns[e.Txn]; t != nil && t.phase == phaseCommitted && !s.isLogged(t) {
			s.unlogged(t, e.Fail)
		}
	case LogFailed:
		if s.logFail == nil {
			s.logFail = e.Fail
			for _, t := range slices.Clone(s.live) {
				switch {
				case t.phase == phaseCommitted && !s.isLogged(t):
					s.unlogged(t, e.Fail)
				case t.phase == phaseOpen && t.commitSeq > 0:
					s.failCommit(t, e.Fail)
					s.end(t)
				}
			}
		}
	case Rejoin:
		s.rejoin(e.R)
	case Caught:
		// Caught up, r goes back to its configured schedule: it runs
		// one transaction at a time only while rejoining.
		if rp := &s.replicas[e.R]; rp.joining() {
			rp.state = replicaUp
			if e.R != s.primary {
				rp.running = 0
				rp.kind = rp.asSecondary
			}
		}
	case Cancel:
		if t := s.txns[e.Txn]; t != nil && t.phase == phaseOpen && t.commitSeq == 0 {
			s.cancelQueued(t)
		}
		if t := s.txns[e.Txn]; t != nil && t.phase == phaseOpen && t.commitSeq > 0 && !t.replied {
			if t.pinned() {
				// Its DDL is committed on some replica already: the
				// client is let go, the transaction goes on to commit.
				t.replied = true
				s.emit(Reply{Op: Op{Txn: t.id, Kind: OpCommit}, From: -1,
					Fail: pgerr.Wrap(pgerr.QueryCanceled, ErrCommitsAnyway, "").
						WithDetail("The transaction ran DDL that a replica commits as it runs it, so it cannot simply be rolled back: shepherd goes on committing it on every replica. Only if the replicas then disagree is it rolled back, and the replicas holding the DDL are taken out.")})
				break
			}
			s.emit(Reply{Op: Op{Txn: t.id, Kind: OpCommit}, From: -1,
				Fail: pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request").
					WithDetail("the transaction was rolled back before its COMMIT was decided")})
			s.end(t)
		}
	default:
		panic(fmt.Sprintf("coord: unknown event %T", ev))
	}
	s.progress()
}

func (s *cbs) begin(id TxnID, survey bool) {
	if _, dup := s.txns[id]; dup || id == 0 {
		panic(fmt.Sprintf("coord: Begin of t%d twice", id))
	}
	t := &ctxn{id: id, at: make([]rtx, s.c.cfg.N), survey: survey, ddlRan: make([]bool, s.c.cfg.N), deferAt: -1}
	for r := range t.at {
		t.at[r].hold = -1
	}
	s.txns[id] = t
	s.live = append(s.live, t)
}

func (s *cbs) submit(op Op, writes, ddl, recovers, deferReq bool) {
	t := s.txns[op.Txn]
	if t == nil || t.phase != phaseOpen || t.commitSeq > 0 {
		panic(fmt.Sprintf("coord: %v submitted outside a live transaction", op))
	}
	switch op.Kind {
	case OpStmt:
		if op.Seq != len(t.stmts) {
			panic(fmt.Sprintf("coord: %v submitted out of order", op))
		}
		t.stmts = append(t.stmts, cstmt{writes: writes, ddl: ddl, deferReq: deferReq})
		switch {
		case t.doom != nil:
			s.emit(Reply{Op: op, From: -1, Fail: t.doom})
			t.fail()
		case recovers && t.deferAt >= 0:
			// The replicas that commit DDL as they run it ended the
			// savepoint with the DDL (the session refuses it first).
			s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.FeatureNotSupported,
				"ROLLBACK TO SAVEPOINT after DDL inside a transaction block is not supported with MariaDB/MySQL replicas")})
			t.fail()
		case recovers && t.failed && !t.recoverable:
			// Its error was not agreed on: the replicas may be in
			// different states inside the savepoint, and nothing of it
			// may commit.
			s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.SerializationFailure,
				"the transaction cannot go on after its error: the replicas did not agree on it").
				WithHint("roll the transaction back and retry it")})
		case recovers && t.failed:
			s.recover(t)
			s.dispatch(t, op)
		default:
			s.dispatch(t, op)
		}
	case OpCommit:
		s.commitSeq++
		t.commitSeq, t.askedAt = s.commitSeq, s.now
		s.waiting = append(s.waiting, t)
		switch {
		case t.doom != nil:
			s.emit(Reply{Op: op, From: -1, Fail: t.doom})
			s.end(t)
		case s.logFail != nil:
			s.emit(Reply{Op: op, From: -1, Fail: s.logFail})
			s.end(t)
		case t.failed:
			// The session rolls back failed transactions; a COMMIT of one
			// is refused rather than trusted.
			s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.InFailedSQLTransaction,
				"current transaction is aborted, commands ignored until end of transaction block")})
			s.end(t)
		}
	case OpRollback:
		s.emit(Reply{Op: op, From: -1})
		s.end(t)
	}
}

// sendOrHold sends statement op of t to the primary, or keeps it for
// later (a view change, a DDL queue), or fails it when it cannot run.
func (s *cbs) sendOrHold(t *ctxn, op Op, ddl bool) {
	switch {
	case s.c.up() < s.quorum():
		// It could never commit: say so now (see tooFewUp).
		s.emit(Reply{Op: op, From: -1, Fail: s.c.tooFewUp()})
		t.fail()
	case s.changing && s.candidate >= 0:
		s.held = append(s.held, op) // runs on the new primary
	case s.changing:
		s.emit(Reply{Op: op, From: -1, Fail: s.primaryDownErr()})
		t.fail()
	case ddl && s.ddlCommits(s.primary) && s.ddlRunning():
		s.ddlQueue = append(s.ddlQueue, op)
	default:
		s.sendPrimary(t, op)
	}
}

// sendPrimary sends statement op of t to the primary.
func (s *cbs) sendPrimary(t *ctxn, op Op) {
	p := &t.at[s.primary]
	s.sentDDL(s.primary, t, op.Seq)
	if s.ddlOrdered {
		s.pclock++
		if t.stmts[op.Seq].ddl && t.ddlSentAt == 0 {
			t.ddlSentAt = s.pclock
		}
	}
	p.sent++
	p.started = true
	p.since = s.now // (see watchOps)
	// A primary promoted from a drained secondary goes on with the
	// attempt it ran the earlier statements in.
	s.emit(Send{R: s.primary, Op: op, Try: p.try})
}

func (s *cbs) primaryDownErr() *pgerr.Error {
	return pgerr.New(pgerr.ConnectionFailure, "the primary replica is down and no replica fit to be primary is up").
		WithHint("a replica of class locking or serial (MariaDB, SQLite) takes the role as soon as one is back; shepherd brings replicas back by itself")
}

func (s *cbs) answered(a Answered) {
	t := s.txns[a.Op.Txn]
	if t == nil || s.replicas[a.R].out() {
		return
	}
	rt := &t.at[a.R]
	if a.Try != rt.try {
		return // an aborted attempt
	}
	rt.since = s.now
	if a.R == s.primary {
		s.heard = s.now
	}
	if !a.V.OK() && pgerr.IsConnection(&pgerr.Error{Code: a.V.Code}) {
		// The replica lost its session mid-transaction: what it ran is
		// unknown, so it stops voting until recovered.
		s.markDown(a.R, "connection lost during "+a.Op.String())
		return
	}
	switch a.Op.Kind {
	case OpStmt:
		if a.Op.Seq != rt.done() || a.Op.Seq >= rt.sent || rt.finished {
			return // not the answer this attempt is waiting for
		}
		rt.votes = append(rt.votes, a.V)
		if t.stmts[a.Op.Seq].held {
			rt.heldB = s.barrier
		}
		s.ranDDL(a.R, t, a.Op.Seq, a.V)
		if t.phase == phaseEnded && t.ddlRan[a.R] {
			// Too late: t rolled back everywhere else.
			s.retire(a.R, fmt.Sprintf("it committed DDL of t%d as it ran it, after t%d rolled back", t.id, t.id))
			return
		}
		if a.R == s.primary {
			s.primaryAnswered(t, a)
			return
		}
		if t.phase == phaseEnded {
			return
		}
		if retryable(a.V) && !s.deferredGivesUp(a.R, t) {
			// The secondary aborted the attempt itself (deadlock,
			// serialization failure, lock timeout): run it again. If a
			// committed transaction was the victim, the undecided ones in
			// its way go too, or they could catch it again.
			s.abortAt(a.R, t)
			if t.phase == phaseCommitted {
				s.abortVictims(a.R, t)
			}
		} else if (t.holds() || t.failed) && rt.done() == len(t.stmts) && !t.ddlRan[a.R] {
			s.releaseVoted(a.R, t)
		} else if t.stmts[a.Op.Seq].deferred {
			s.voteDeferred(t, a.Op.Seq)
		}
	case OpCommit:
		if !rt.commitSent || rt.finished {
			return
		}
		rt.finished = true
		s.committedAt(a.R, t, a.V)
	case OpRollback:
		if !rt.commitSent {
			return
		}
		rt.finished = true
	}
	s.checkFinished(t)
}

// releaseVoted rolls back secondary r's attempt of t, which has answered
// the statement whose error is held (see voteError), or was voted
// already: t can only roll back, and r's answers, which stay, are all
// the vote needs. Its locks would only hold others up, and a sequential
// secondary goes on with the next transaction (two sequential
// secondaries each running another held transaction would otherwise wait
// for each other's vote).
func (s *cbs) releaseVoted(r ReplicaID, t *ctxn) {
	rt := &t.at[r]
	if rt.started {
		s.emit(Abort{R: r, Txn: t.id, Try: rt.try})
	}
	rt.started, rt.finished = false, true
	if s.replicas[r].sequential() && s.replicas[r].running == t.id {
		s.replicas[r].running = 0
	}
}

// retryable reports whether a secondary's error means its engine gave up
// on the attempt for reasons of concurrency, so a re-run may succeed.
func retryable(v Vote) bool {
	return v.Code == pgerr.SerializationFailure || v.Code == pgerr.DeadlockDetected || v.Code == pgerr.LockNotAvailable
}

// primaryAnswered is the coordinator's rule for the primary's answer: it
// goes to the client at once, and the statement joins the secondaries'
// pools with the current barrier. An error the secondaries can vote on
// (votable) is held instead: the secondaries run the statement too, and
// the error reaches the client only once f of them gave it (voteError).
// Other errors go to the client at once and stay on the primary: the
// transaction can only roll back now.
func (s *cbs) primaryAnswered(t *ctxn, a Answered) {
	if t.phase != phaseOpen {
		return
	}
	st := &t.stmts[a.Op.Seq]
	if st.answered {
		return // a deferred statement the participants answered (voteDeferred)
	}
	st.answered, st.b, st.vote = true, s.barrier, a.V
	s.aclock++
	t.advanced = s.aclock
	if s.ddlOrdered {
		s.pclock++
		t.answeredAt = s.pclock
		if st.ddl && a.V.OK() && t.ddlDoneAt == 0 {
			t.ddlDoneAt = s.pclock
		}
	}
	if !a.V.OK() && s.c.cfg.F > 0 && !t.survey && votable(a.V.Code) && !(st.ddl && s.ddlOrdered) {
		st.held = true
		s.heldErrs++
		s.commitSeq++
		t.heldSeq = s.commitSeq
		return
	}
	if !a.V.OK() {
		t.fail()
		if s.c.cfg.F == 0 && !t.survey && votable(a.V.Code) && !(st.ddl && s.ddlOrdered) {
			// Nobody else's answer is needed: as if voted.
			st.voted, t.recoverable = true, true
		}
	}
	s.emit(Reply{Op: a.Op, From: s.primary})
}

// votable reports whether a primary's error with SQLSTATE code is voted
// before the client sees it (see voteError): an error the statement
// itself causes on the state it ran in (a constraint, a missing table, a
// division by zero). Not: a lost connection (the replica is taken out),
// a cancel or other operator intervention (57), a concurrency failure
// the engine may not repeat (class 40, 55P03), a lack of resources (53),
// a limit of the engine (54), a system or internal error (58, XX): those
// depend on the replica and the moment, not on the statement, and other
// replicas would not give them.
func votable(code string) bool {
	if len(code) != 5 || code == pgerr.LockNotAvailable {
		return false
	}
	switch code[:2] {
	case "08", "40", "53", "54", "57", "58", "XX":
		return false
	}
	return true
}

// voteError decides the held error of statement i of t (see cstmt.held)
// once the secondaries' answers allow it:
//
//   - f secondaries gave the same answers as the primary up to and
//     including the error: the error is the reply (the shell sends the
//     primary's, with its message);
//   - f+1 secondaries agree on another answer, each computed on the
//     state the primary's answer was (no commit decided since it, and on
//     an MVCC secondary a fresh snapshot): the primary is proven wrong,
//     accused (Mismatch), and taken out, which changes the view; the
//     client gets 40001;
//   - f confirmations can no longer come: the client gets 40001, and
//     nobody is accused (the answers may differ because commits went on).
//
// Inside a transaction block the error is held as in autocommit: an error
// changes what the client does next, so it is voted before it is given.
// The transaction is failed either way; the secondaries' attempts roll
// back (releaseVoted), unless a ROLLBACK TO SAVEPOINT recovers it from
// an error that was confirmed (recover): then they run it again.
//
// A correct primary's error may hold no lock (PostgreSQL's unique check
// against a committed row takes none), so a transaction committed after
// it can change what a secondary answers; hence the condition on the
// barrier for an accusation.
func (s *cbs) voteError(t *ctxn, i int) {
	q := &t.stmts[i]
	// support: the primary and the secondaries that gave its answers;
	// against: the answers of the others, where they are evidence.
	support := quorum.Support{For: 1}
	against := make(quorum.Votes[Vote], s.c.cfg.N)
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		rt := &t.at[r]
		if rid == s.primary || s.replicas[r].out() || s.replicas[r].joining() {
			continue
		}
		if q.deferred && !s.participant(rid) {
			continue // it runs the statement only after the decision (deferred.go)
		}
		if rt.done() <= i {
			if !rt.finished {
				support.Open++
			}
			continue
		}
		if !slices.Equal(rt.votes[:i], voteList(t.stmts[:i])) {
			continue // its attempt went another way before
		}
		v := rt.votes[i]
		switch {
		case v == q.vote:
			support.For++
		case rt.heldB == q.b && (!s.replicas[r].mvcc() || s.fresh(rid, t, q.b)):
			against[r] = &v
		}
	}
	op := Op{Txn: t.id, Kind: OpStmt, Seq: i}
	settle := func() {
		q.held = false
		s.heldErrs--
		t.fail()
	}
	want, _, outvoted := against.Agreed(s.c.cfg.F)
	switch {
	case support.Won(s.c.cfg.F):
		settle()
		q.voted, t.recoverable = true, true
		s.emit(Reply{Op: op, From: s.primary})
	case outvoted:
		settle()
		s.emit(Mismatch{R: s.primary, Op: op, Got: q.vote, Want: want})
		s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.SerializationFailure,
			"replicas disagreed on %s: the primary's error %s was contradicted by %d other replicas", describe(op), q.vote.Code, s.quorum()).
			WithHint("the transaction was rolled back on every replica; retry it")})
		s.markDown(s.primary, fmt.Sprintf("its error on statement %d of t%d was outvoted: f+1 replicas answered otherwise", i+1, t.id))
	case !support.Reachable(s.c.cfg.F):
		settle()
		if e := s.c.tooFewUp(); e != nil {
			s.emit(Reply{Op: op, From: -1, Fail: e})
			return
		}
		s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.SerializationFailure,
			"replicas disagreed on %s: the primary's error %s was not confirmed by %d other replicas", describe(op), q.vote.Code, s.c.cfg.F).
			WithHint("the transaction was rolled back on every replica; retry it")})
	}
}

// recover ends t's failure at a ROLLBACK TO SAVEPOINT (Submit.Recovers;
// t.recoverable): the statements since go on in order on every replica,
// the failed one included (its answer was voted, and the engines keep
// their transaction open across it, PostgreSQL until the ROLLBACK TO).
// A secondary whose attempt was let go once it had answered the error
// (releaseVoted, or a sequential secondary that gave it up) has no
// engine transaction any more: it runs t again from the start, which
// repeats the savepoint statements and the error in order.
func (s *cbs) recover(t *ctxn) {
	t.failed, t.recoverable = false, false
	for r := range t.at {
		rt := &t.at[r]
		if ReplicaID(r) == s.primary || s.replicas[r].out() || s.replicas[r].joining() || !rt.finished {
			continue
		}
		rt.finished = false
		s.abortAt(ReplicaID(r), t)
	}
}

// voteList returns the primary's answers to stmts.
func voteList(stmts []cstmt) []Vote {
	vs := make([]Vote, len(stmts))
	for i, q := range stmts {
		vs[i] = q.vote
	}
	return vs
}

// voteErrors decides the held errors that can be decided (voteError).
func (s *cbs) voteErrors() {
	if s.heldErrs == 0 {
		return
	}
	for _, t := range slices.Clone(s.live) {
		if n := len(t.stmts); t.phase == phaseOpen && n > 0 && t.stmts[n-1].held {
			s.voteError(t, n-1)
		}
	}
}

// committedAt records replica r's answer to COMMIT of t: the client hears
// of the commit once f+1 replicas committed, and a replica whose answers
// differed from the primary's is reported now that they are final.
func (s *cbs) committedAt(r ReplicaID, t *ctxn, v Vote) {
	if s.replicas[r].sequential() && s.replicas[r].running == t.id {
		s.replicas[r].running = 0
	}
	commit := Op{Txn: t.id, Kind: OpCommit}
	if !v.OK() {
		// A replica that ran every statement of a committed transaction
		// must be able to commit it (it holds what it needs). One that
		// cannot now misses a committed transaction, and later ones may
		// already have committed after it: its state can no longer be
		// trusted, so it stops voting until recovered. Its answers
		// that differed come first: the likely cause (a statement
		// that failed there alone, and made its engine abort the
		// transaction, as DuckDB does), which the COMMIT's error
		// does not name.
		s.reportAnswers(r, t)
		s.emit(Mismatch{R: r, Op: commit, Got: v})
		if t.deferAt >= 0 && s.ddlCommits(r) {
			// It ran the deferred DDL, which committed what came before
			// it: catch-up could not tell what it holds.
			s.retire(r, fmt.Sprintf("COMMIT of t%d, whose DDL inside its block it ran after the decision, failed with %s", t.id, v.Code))
			s.replyCommit(t, r)
			return
		}
		//
		// t is still pending at r when it is taken out, so that Applied
		// does not count it and the log keeps it for r's catch-up.
		s.markDown(r, "COMMIT of a committed transaction failed with "+v.Code)
		s.replyCommit(t, r)
		return
	}
	s.replicas[r].pending = remove(s.replicas[r].pending, t)
	t.commitOK++
	s.replicas[r].stallLimit = max(s.replicas[r].stallLimit-1, s.stall)
	s.reportAnswers(r, t)
	s.replyCommit(t, r)
}

// reportAnswers reports the answers of secondary r to t's statements that
// differ from the primary's. A stale MVCC answer is no evidence against
// the replica (see fresh); a fresh one must be the primary's. A survey's
// differences are its findings, not faults.
func (s *cbs) reportAnswers(r ReplicaID, t *ctxn) {
	if r == s.primary || t.survey || s.replicas[r].mvcc() && !s.fresh(r, t, t.b) {
		return
	}
	for i, got := range t.at[r].votes {
		if i >= len(t.stmts) {
			break
		}
		if want := t.stmts[i].vote; got != want {
			s.emit(Mismatch{R: r, Op: Op{Txn: t.id, Kind: OpStmt, Seq: i}, Got: got, Want: want})
		}
	}
}

// replyCommit answers the client's COMMIT once f+1 replicas committed, or
// fails it once that can no longer happen.
func (s *cbs) replyCommit(t *ctxn, from ReplicaID) {
	if t.replied || t.phase != phaseCommitted {
		return
	}
	commit := Op{Txn: t.id, Kind: OpCommit}
	committed := quorum.Support{For: t.commitOK}
	if committed.Won(s.c.cfg.F) {
		t.replied = true
		s.emit(Reply{Op: commit, From: from})
		return
	}
	for r := range t.at {
		if !s.replicas[r].out() && !t.at[r].finished {
			committed.Open++
		}
	}
	if !committed.Reachable(s.c.cfg.F) {
		t.replied = true
		s.emit(Reply{Op: commit, From: -1, Fail: pgerr.New(pgerr.TransactionResolutionUnknown,
			"COMMIT reached fewer than %d replicas; the transaction may be committed on some of them", s.quorum())})
	}
}

// progress applies the rules after every event: first the pending COMMIT
// decisions, in the order the COMMITs arrived, then what each secondary
// may run next.
func (s *cbs) progress() {
	s.voteErrors()
	if s.changing {
		if s.candidate < 0 {
			// No replica fit to be primary was up: the first one back
			// and caught up takes the role (its silence counts from now).
			if s.candidate = s.nextCandidate(s.primary); s.candidate >= 0 {
				s.heard = s.now
			}
		}
		s.promote()
	}
	s.sendQueuedDDL()
	s.exclusive()
	if t := s.excl; t != nil && t.drained {
		s.deferredToPrimary(t)
		if n := len(t.stmts); n > 0 {
			s.voteDeferred(t, n-1)
		}
		if t.failed {
			s.exclusive() // it waited too long (deferredWaited): the held go on
		}
	}
	for again := true; again; {
		again = false
		for _, t := range s.pendingCommits() {
			s.evaluate(t)
			// A decision may let a COMMIT evaluated before it go (see
			// ddlBlocked): once more, then.
			again = again || (s.ddlOrdered && t.phase == phaseCommitted)
		}
	}
	if t := s.excl; t != nil && t.phase == phaseEnded {
		s.exclusive() // its COMMIT waited too long (deferredWaited): the held go on
	}
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		switch {
		case s.replicas[r].out(), s.replicas[r].joining():
		case rid == s.primary:
			if !s.changing {
				s.schedulePrimary()
			}
		case s.replicas[r].sequential():
			s.scheduleSequential(rid)
		default:
			s.scheduleConcurrent(rid)
		}
	}
}

// pendingCommits returns the transactions whose COMMIT waits for a
// decision, oldest request first. The slice is a copy: deciding may
// change the list.
func (s *cbs) pendingCommits() []*ctxn { return slices.Clone(s.waiting) }

// unwait takes t off the list of COMMITs waiting for a decision.
func (s *cbs) unwait(t *ctxn) {
	if t.commitSeq > 0 {
		s.waiting = remove(s.waiting, t)
	}
}

// readyToCommit: replica r has processed every query of t and of every
// transaction committed so far (paper 3.3). The primary is ready by
// construction once it answered t's statements: it ran everything first.
func (s *cbs) readyToCommit(r ReplicaID, t *ctxn) bool {
	rt := &t.at[r]
	if s.replicas[r].out() || rt.hold >= 0 || rt.done() != len(t.stmts) {
		return false
	}
	for _, d := range s.replicas[r].pending {
		if d.at[r].done() != len(d.stmts) && !d.at[r].finished {
			return false
		}
	}
	return true
}

// endorses reports whether r's latest answers are the primary's answers
// to every statement of t.
func (s *cbs) endorses(r ReplicaID, t *ctxn) bool {
	for i, v := range t.at[r].votes {
		if v != t.stmts[i].vote {
			return false
		}
	}
	return true
}

// evaluate is the coordinator's COMMIT rule: commit once f secondaries
// ready to commit endorse every answer the client got; refuse once too
// few secondaries are left that could still do so.
//
// An MVCC secondary endorses only answers computed on fresh snapshots
// (see fresh). If stale answers are all it has and it is needed, it runs
// the transaction again.
func (s *cbs) evaluate(t *ctxn) {
	if t.phase != phaseOpen {
		return
	}
	if s.changing {
		return // nothing undecided survives a view change (see changeView)
	}
	if t.deferAt >= 0 {
		s.evaluateDeferred(t)
		return
	}
	if !s.readyToCommit(s.primary, t) {
		return
	}
	if s.ddlBlocked(t) {
		// A sequential secondary running t ahead of its decision gives
		// it up, for the transaction t waits for.
		for r := range s.replicas {
			id := s.replicas[r].running
			if id == t.id && s.replicas[r].sequential() && !t.at[r].commitSent {
				s.abortAt(ReplicaID(r), t)
			}
		}
		return
	}
	if t.survey {
		s.evaluateSurvey(t)
		return
	}
	endorsing, open := 0, 0
	var stale []ReplicaID
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		if rid == s.primary || s.replicas[r].out() {
			continue
		}
		switch {
		case !s.readyToCommit(rid, t):
			open++
		case s.replicas[r].mvcc() && !s.fresh(rid, t, s.barrier):
			stale = append(stale, rid)
		case s.endorses(rid, t):
			endorsing++
		}
	}
	// The primary and the endorsing secondaries agree on every answer.
	f := s.c.cfg.F
	switch support := (quorum.Support{For: 1 + endorsing, Open: open + len(stale)}); {
	case support.Won(f):
		s.decide(t)
	case !support.Reachable(f):
		s.refuseCommit(t)
	default:
		// Re-run stale MVCC secondaries when the others cannot make up
		// the f endorsements, or have not for a while (they may be
		// faulty).
		withoutStale := quorum.Support{For: 1 + endorsing, Open: open}
		for _, r := range stale {
			if !withoutStale.Reachable(f) || s.now-t.at[r].since >= s.limit(r) {
				s.abortAt(r, t)
			}
		}
	}
}

// evaluateSurvey is the COMMIT rule of a survey (see Begin): wait until
// every live replica is ready to commit it, with answers computed on a
// fresh state (a stale MVCC secondary runs it again), then commit if they
// all gave the primary's answers, and roll back everywhere otherwise.
//
// Every replica's reads then saw the same logical state: the primary
// holds the survey's locks until the decision, which comes after every
// replica answered, so no transaction ordered after the survey can have
// written what it read anywhere; and the ordering rules made each
// replica apply every earlier transaction first.
func (s *cbs) evaluateSurvey(t *ctxn) {
	took := make([]bool, s.c.cfg.N)
	unanimous := true
	// A replica that cannot get ready (it hangs, or fails every try) is
	// waited for only so long; the survey then goes on without it, and
	// Took says so.
	patient := s.now-t.askedAt < s.c.surveyTicks()
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		if s.replicas[r].out() || s.replicas[r].joining() {
			continue
		}
		if rid != s.primary {
			if !s.readyToCommit(rid, t) {
				if patient {
					return
				}
				continue
			}
			if s.replicas[r].mvcc() && !s.fresh(rid, t, s.barrier) {
				if patient {
					s.abortAt(rid, t)
					return
				}
				continue
			}
			unanimous = unanimous && s.endorses(rid, t)
		}
		took[r] = true
	}
	// As with client work, a commit needs f secondaries besides the
	// primary: a survey taken on the primary alone proves nothing.
	if !(quorum.Support{For: countTrue(took)}).Won(s.c.cfg.F) {
		unanimous = false
	}
	s.emit(Surveyed{Txn: t.id, Took: took, Unanimous: unanimous})
	if unanimous {
		s.decide(t)
		return
	}
	s.emit(Reply{Op: Op{Txn: t.id, Kind: OpCommit}, From: -1, Fail: surveyDiffers()})
	s.end(t)
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// fresh reports whether every statement of t ran on MVCC secondary r
// after each transaction with a barrier below m had committed there.
//
// This is where MVCC secondaries differ from the paper's two-phase locking
// ones. A read at READ COMMITTED does not wait for a writer, so a
// statement that ran before an earlier-ordered transaction committed on r
// may have missed its writes. With a correct primary that cannot matter:
// the primary let both run at once, so they do not conflict. But a primary
// whose concurrency control lets conflicting work through (the paper's
// figure 5) would get its wrong answer endorsed by such a stale read,
// where a locking secondary would have blocked. So an MVCC secondary's
// answers count only when computed after every transaction ordered before
// t committed there; testdata/cbs-mvcc-fresh shows the schedule.
func (s *cbs) fresh(r ReplicaID, t *ctxn, m int) bool {
	for _, v := range t.at[r].snap {
		if v < m {
			return false
		}
	}
	return true
}

// committedPrefix is the number of decided transactions that surely
// committed on r: all of those with barriers below it have.
func (s *cbs) committedPrefix(r ReplicaID) int {
	if p := s.replicas[r].pending; len(p) > 0 {
		return p[0].b
	}
	return s.barrier
}

// decide commits t: it takes the next barrier, and sequential secondaries
// running another undecided transaction ahead of its COMMIT give it up,
// since t now comes first.
func (s *cbs) decide(t *ctxn) {
	s.unwait(t)
	t.phase, t.b = phaseCommitted, s.barrier
	s.barrier++
	if s.calm++; s.calm >= stableCommits && s.timeout > s.baseTimeout() {
		s.timeout, s.calm = max(s.timeout/2, s.baseTimeout()), 0
	}
	if s.c.cfg.Log {
		s.emit(Log{Txn: t.id, Barrier: t.b})
	}
	for r := range s.replicas {
		if !t.at[r].finished && !s.replicas[r].out() {
			s.replicas[r].pending = append(s.replicas[r].pending, t)
		}
	}
	for r := range s.replicas {
		id := s.replicas[r].running
		if id != 0 && id != t.id && s.replicas[r].sequential() && s.txns[id].phase == phaseOpen {
			s.abortAt(ReplicaID(r), s.txns[id])
		}
	}
}

// refuse aborts t everywhere and tells the client the replicas disagreed.
// Replicas whose answers differ from one that f+1 replicas gave are
// reported.
func (s *cbs) refuse(t *ctxn) {
	voters := []ReplicaID{s.primary}
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		if rid != s.primary && !s.replicas[r].out() && s.readyToCommit(rid, t) && (!s.replicas[r].mvcc() || s.fresh(rid, t, s.barrier)) {
			voters = append(voters, rid)
		}
	}
	bad, outvoted := -1, -1
	for i := range t.stmts {
		votes := make(quorum.Votes[Vote], s.c.cfg.N)
		for _, r := range voters {
			v := t.at[r].votes[i]
			votes[r] = &v
		}
		want, _, ok := votes.Agreed(s.c.cfg.F)
		for _, r := range voters {
			if got := *votes[r]; got != want && ok {
				s.emit(Mismatch{R: r, Op: Op{Txn: t.id, Kind: OpStmt, Seq: i}, Got: got, Want: want})
			}
		}
		if bad < 0 && (!ok || want != t.stmts[i].vote) {
			bad = i
		}
		if outvoted < 0 && ok && want != t.stmts[i].vote {
			outvoted = i
		}
	}
	what := "the transaction"
	if bad >= 0 {
		what = fmt.Sprintf("statement %d of the transaction", bad+1)
	}
	s.failCommit(t, pgerr.New(pgerr.SerializationFailure,
		"replicas disagreed on %s: the answer given was not confirmed by %d other replicas", what, s.c.cfg.F).
		WithHint("the transaction was rolled back on every replica; retry it"))
	s.end(t)
	if outvoted >= 0 && !s.replicas[s.primary].out() {
		// f+1 replicas agree on another answer than the primary gave:
		// it is proven wrong, and another replica takes the role.
		s.markDown(s.primary, fmt.Sprintf("its answer to statement %d of t%d was outvoted", outvoted+1, t.id))
	}
}

// unlogged undoes the decision to commit t, which the write-ahead log
// will never hold: no replica was sent its COMMIT (that waits for the
// log), so it rolls back everywhere, and the client's COMMIT fails with
// fail. Its barrier stays a hole in the log: transactions ordered after
// it only waited for it, and now run without it on every replica, as
// they do on the primary once it rolled t back there.
func (s *cbs) unlogged(t *ctxn, fail *pgerr.Error) {
	for r := range s.replicas {
		s.replicas[r].pending = remove(s.replicas[r].pending, t)
	}
	s.failCommit(t, fail)
	s.end(t)
}

// failCommit fails the client's COMMIT of t with fail, unless the client
// was answered already (a pinned transaction's cancel).
func (s *cbs) failCommit(t *ctxn, fail *pgerr.Error) {
	if t.replied {
		return
	}
	t.replied = true
	s.emit(Reply{Op: Op{Txn: t.id, Kind: OpCommit}, From: -1, Fail: fail})
}

// end rolls t back wherever it started and forgets its pool entries.
func (s *cbs) end(t *ctxn) {
	s.unwait(t)
	t.phase = phaseEnded
	for r := range t.at {
		rt := &t.at[r]
		if s.replicas[r].sequential() && s.replicas[r].running == t.id {
			s.replicas[r].running = 0
		}
		switch {
		case rt.finished || s.replicas[r].out():
		case rt.started:
			rt.commitSent = true
			s.emit(Send{R: ReplicaID(r), Op: Op{Txn: t.id, Kind: OpRollback}, Try: rt.try})
		default:
			rt.finished = true
		}
	}
	s.checkFinished(t)
	for r, ran := range t.ddlRan {
		if ran {
			s.retire(ReplicaID(r), fmt.Sprintf("it committed DDL of t%d as it ran it, and t%d rolled back on the other replicas", t.id, t.id))
		}
	}
}

// retire takes replica r out for good (see Retire).
func (s *cbs) retire(r ReplicaID, why string) {
	switch s.replicas[r].state {
	case replicaRetired:
		return
	case replicaDown:
		// Out already: it only stays out for good.
		s.replicas[r].state = replicaRetired
		s.emit(Retire{R: r, Why: why})
		return
	}
	s.emit(Retire{R: r, Why: why})
	s.takeOut(r, why, replicaRetired)
}

// abortAt gives up t's current attempt on secondary r; its statements go
// back to the pool and its answers there no longer count.
func (s *cbs) abortAt(r ReplicaID, t *ctxn) { s.abortFor(r, t, nil) }

// abortFor is abortAt for a victim aborted to let blocked transaction
// forT progress on r: its re-run also waits for forT to finish there.
func (s *cbs) abortFor(r ReplicaID, t, forT *ctxn) {
	if t.ddlRan[r] {
		// Its DDL is committed there (or may be): a re-run would run it
		// again, out of order, and it holds no lock to give up. It ends
		// with its transaction (see pinned).
		return
	}
	rt := &t.at[r]
	if rt.started {
		s.emit(Abort{R: r, Txn: t.id, Try: rt.try})
	}
	rt.try++
	rt.sent, rt.votes, rt.snap, rt.started, rt.commitSent = 0, nil, nil, false, false
	rt.hold = s.barrier
	if t.phase == phaseCommitted {
		rt.hold = t.b // it waits for those before it, not for itself
	}
	rt.holdFor = forT
	rt.since = s.now
	if s.replicas[r].sequential() && s.replicas[r].running == t.id {
		s.replicas[r].running = 0
	}
}

// schedulePrimary sends COMMIT of decided transactions to the primary: it
// ran all their statements already.
func (s *cbs) schedulePrimary() {
	p := s.primary
	for _, t := range s.replicas[p].pending {
		if rt := &t.at[p]; !rt.commitSent && !rt.finished {
			if !s.isLogged(t) {
				return // later ones are not logged either
			}
			if t.deferAt >= 0 && s.ddlCommits(p) {
				// Its deferred statements first, then COMMIT; nothing
				// after it goes before (it ran exclusively).
				if !s.sendDeferred(p, t) {
					return
				}
				continue
			}
			s.sendCommit(p, t)
		}
	}
}

// scheduleConcurrent is the secondary manager of a locking or MVCC
// secondary (paper figure 3): it sends every pooled statement and COMMIT
// the ordering rules allow, many transactions at once.
func (s *cbs) scheduleConcurrent(r ReplicaID) {
	// A copy: a replica taken out on the way (writeDiverged) finishes
	// transactions, which leave s.live.
	for _, t := range slices.Clone(s.live) {
		if s.replicas[r].out() {
			return
		}
		if s.scheduleOne(r, t) {
			s.scheduleOne(r, t) // the re-run may start at once
		}
	}
}

// scheduleOne sends what t may run on concurrent secondary r now. It
// reports whether it aborted t there to run it again.
func (s *cbs) scheduleOne(r ReplicaID, t *ctxn) (rerun bool) {
	rt := &t.at[r]
	if t.phase == phaseEnded || t.doom != nil || rt.finished || rt.commitSent {
		return false
	}
	if rt.hold >= 0 {
		if !s.rerunMayStart(r, t) {
			return false
		}
		rt.hold, rt.holdFor = -1, nil
	}
	if t.deferAt >= 0 && s.ddlCommits(r) && t.phase == phaseCommitted {
		s.sendDeferred(r, t)
		return false
	}
	for rt.sent < len(t.stmts) && s.queryMaySend(r, t, rt.sent) {
		s.sendStmt(r, t)
	}
	if t.phase != phaseCommitted || !s.isLogged(t) || !s.commitMaySend(r, t) {
		return false
	}
	if s.replicas[r].mvcc() && !s.fresh(r, t, t.b) {
		// Stale: run it again on a fresh snapshot before committing, so
		// that r's state follows the commit order and a wrong answer of
		// r's own shows as one. Stale answers equal to the primary's are
		// no exception: a write's answer is only a row count, so an
		// attempt that read an old state (INSERT ... SELECT, UPDATE ...
		// SET v = (SELECT ...)) can answer alike and write differently.
		s.abortAt(r, t)
		return true
	}
	if s.writeDiverged(r, t) {
		return !s.replicas[r].out()
	}
	s.sendCommit(r, t)
	return false
}

// writeDiverged checks, before committed t's COMMIT goes to secondary r,
// that r answered every statement of t that may change state as the
// primary did (the answers f secondaries endorsed). A write's answer is
// a row count or an error, and an engine keeps its transaction open after
// a failed statement (MariaDB, SQLite): committing an attempt that
// answered otherwise would leave r's state silently different from the
// others'. The attempt is aborted and run again, which a transient cause
// (a deadlock victim, a lock timeout) survives; an attempt that differs
// again takes r out, so its catch-up replays the logged transaction and
// an engine that cannot apply it shows as failed rather than diverging.
// Reads that differ change nothing here; they are reported when r
// commits (committedAt).
func (s *cbs) writeDiverged(r ReplicaID, t *ctxn) bool {
	if t.survey {
		return false // a survey's differences are its findings
	}
	rt := &t.at[r]
	for i, q := range t.stmts {
		if !q.writes || rt.votes[i] == q.vote {
			continue
		}
		s.emit(Mismatch{R: r, Op: Op{Txn: t.id, Kind: OpStmt, Seq: i}, Got: rt.votes[i], Want: q.vote})
		// An attempt whose DDL the engine committed as it ran it cannot be
		// run again (see ranDDL): it is taken out at once, and catch-up
		// replays the transaction over the DDL already there.
		if rt.diverged++; rt.diverged > 1 || t.ddlRan[r] {
			s.markDown(r, fmt.Sprintf("its answer to %s (committed), which may change state, differs from the agreed one (%s, agreed %s), also when run again", describe(Op{Txn: t.id, Kind: OpStmt, Seq: i}), rt.votes[i], q.vote))
			return true
		}
		s.abortAt(r, t)
		return true
	}
	return false
}

// queryMaySend is the query-ordering and transaction-ordering rule for
// statement i of t on secondary r.
//
// Query ordering: the statements of one attempt go out in order and the
// replica runs them in order on one engine transaction, so sending
// statement i after i-1 is enough.
//
// Transaction ordering: a statement the primary answered after T's COMMIT
// was decided (T.b < Q.b) waits until r processed all of T's queries —
// or, on an MVCC secondary, until T's COMMIT finished there, since an
// MVCC read does not wait for an uncommitted writer and would miss T's
// writes. A statement the primary answered before T's COMMIT (Q.b <=
// T.b) does not wait for T: two-phase locking at the primary let both run
// at once, so they do not conflict. (The paper's figure 3 writes
// T.b <= Q.b with barriers read after the increment; with Q.b = B at the
// answer and T.b = B before the increment, the strict comparison is the
// one that keeps that concurrency; testdata/figure4 checks it.)
func (s *cbs) queryMaySend(r ReplicaID, t *ctxn, i int) bool {
	q := t.stmts[i]
	if !s.stmtReady(r, t, i) || !s.ddlInOrder(r, t, i) {
		return false
	}
	for _, d := range s.replicas[r].pending {
		if d.b >= q.b {
			break
		}
		if d == t {
			continue
		}
		da := &d.at[r]
		if da.finished {
			continue
		}
		if s.replicas[r].mvcc() || da.done() != len(d.stmts) {
			return false
		}
	}
	return true
}

// commitMaySend is the commit-ordering rule: COMMIT of t goes to r once r
// answered every statement of t and processed every query of every
// transaction committed before t.
func (s *cbs) commitMaySend(r ReplicaID, t *ctxn) bool {
	rt := &t.at[r]
	if rt.done() != len(t.stmts) {
		return false
	}
	for _, d := range s.replicas[r].pending {
		if d.b >= t.b {
			break
		}
		if da := &d.at[r]; !da.finished && da.done() != len(d.stmts) {
			return false
		}
	}
	return true
}

// rerunMayStart: an attempt aborted when the barrier was rt.hold starts
// again on r only once every transaction committed before then finished
// there, and the transaction it was aborted for, if any, too.
//
// The wait for that transaction lapses once it is no longer ordered before
// this one (this one committed first, or it did not commit): waiting then
// could only deadlock the two.
func (s *cbs) rerunMayStart(r ReplicaID, t *ctxn) bool {
	rt := &t.at[r]
	// A failed transaction, or one whose error is being voted, never
	// commits: nothing to wait for.
	if f := rt.holdFor; f != nil && !f.at[r].finished && f.phase != phaseEnded && !f.failed && !f.holds() && !s.ddlAfter(t, f) {
		before := t.phase != phaseCommitted || (f.phase == phaseCommitted && f.b < t.b)
		if before {
			return false
		}
	}
	for _, d := range s.replicas[r].pending {
		if d.b >= rt.hold {
			break
		}
		if !d.at[r].finished {
			return false
		}
	}
	return true
}

// scheduleSequential runs one transaction at a time on a sequential
// secondary: the oldest committed transaction it has not finished, else,
// ahead of its COMMIT decision, the oldest transaction whose COMMIT the
// client asked for, so the replica can be one of the f+1 ready ones (it
// gives that one up if another commits first, see decide), else, with
// Config.Ahead, an open transaction before its COMMIT (nextAhead), which
// it gives up for any of the others.
//
// On a serial-class engine the next transaction starts as soon as the
// COMMIT of the previous one is sent rather than answered: the manager
// admits one engine transaction at a time, so the next one waits there
// for the commit, and a round trip through the coordinator is saved.
// Other engines (SS mode) wait for the answer: an MVCC read sent earlier
// could miss the previous transaction's writes.
func (s *cbs) scheduleSequential(r ReplicaID) {
	for {
		if s.replicas[r].running == 0 {
			s.replicas[r].running = s.nextSequential(r)
		}
		if s.replicas[r].running == 0 {
			return
		}
		t := s.txns[s.replicas[r].running]
		rt := &t.at[r]
		if rt.commitSent {
			return // committing; the answer moves r on
		}
		if t.runsAhead() {
			if due, _ := s.nextDue(r); due != 0 && due != t.id {
				// Run ahead of its COMMIT (nextAhead): it gives way to
				// a transaction the system waits for.
				s.abortAt(r, t)
				continue
			}
		}
		if t.phase == phaseOpen && t.failed && !t.holds() {
			// Its error was voted (voteError): it can only roll back,
			// whenever its client says so; r goes on with others.
			s.abortAt(r, t)
			continue
		}
		rt.hold, rt.holdFor = -1, nil
		if t.deferAt >= 0 && s.ddlCommits(r) && t.phase == phaseCommitted {
			if !s.sendDeferred(r, t) {
				return
			}
			if !s.replicas[r].pipelined() {
				return
			}
			s.replicas[r].running = 0
			continue
		}
		for rt.sent < len(t.stmts) && s.stmtReady(r, t, rt.sent) {
			s.sendStmt(r, t)
		}
		if t.phase != phaseCommitted || !s.isLogged(t) || rt.done() != len(t.stmts) {
			return
		}
		if s.writeDiverged(r, t) {
			if s.replicas[r].out() {
				return
			}
			continue // run it again at once
		}
		s.sendCommit(r, t)
		if !s.replicas[r].pipelined() {
			return // the next one starts when this COMMIT is answered
		}
		s.replicas[r].running = 0
	}
}

// nextSequential picks what sequential secondary r runs next: what the
// system waits for (nextDue), else a transaction ahead of its COMMIT
// (nextAhead).
func (s *cbs) nextSequential(r ReplicaID) TxnID {
	id, committing := s.nextDue(r)
	if id != 0 || committing {
		return id
	}
	return s.nextAhead(r)
}

// nextDue picks what the system waits for on sequential secondary r: the
// oldest decided transaction not finished there, the exclusive block, the
// oldest transaction whose COMMIT waits for a decision, or one whose
// error waits for a vote. committing reports that r must first finish a
// COMMIT it was sent (a sequential, not pipelined, replica).
func (s *cbs) nextDue(r ReplicaID) (id TxnID, committing bool) {
	for _, d := range s.replicas[r].pending {
		if d.at[r].finished {
			continue
		}
		if d.at[r].commitSent && !s.replicas[r].pipelined() {
			return 0, true // still committing
		}
		if !d.at[r].commitSent {
			return d.id, false
		}
	}
	if t := s.excl; t != nil && t.drained && t.phase == phaseOpen && !t.at[r].finished && !s.ddlCommits(r) &&
		(!t.failed || t.holds()) {
		// It runs alone: nothing else is waited for. (Once failed, it
		// can only roll back: scheduleSequential would abort it here
		// and pick it again, for ever.)
		return t.id, false
	}
	for _, t := range s.waiting {
		if !t.at[r].finished && !s.ddlBlocked(t) {
			return t.id, false
		}
	}
	// A client waits for the vote on its error (see voteError).
	for _, t := range s.live {
		if t.phase == phaseOpen && t.holds() && !t.at[r].finished {
			return t.id, false
		}
	}
	return 0, false
}

// nextAhead picks the transaction idle sequential secondary r runs ahead
// of its COMMIT (Config.Ahead): of the open transactions it may run
// (mayRunAhead), the one the primary answered most recently, which on a
// hot row is the one holding the lock there. It runs each statement once
// the primary answered it, so that by the COMMIT request r is ready and
// the decision waits for no replay while the primary holds the locks.
//
// This is the run ahead of the decision that a transaction waiting for
// its COMMIT gets, begun earlier, and it is safe for the same reasons: r
// starts it only once every decided transaction committed there (or, on
// a pipelined replica, was sent its COMMIT, which the engine finishes
// first: nextDue found none left), and any other decision while it runs
// aborts it (decide), so the answers it gives when t is decided were
// computed on the state every transaction decided before t leaves,
// whatever the primary's concurrency control let through (Figure 5).
// It gives way to any transaction the system waits for
// (scheduleSequential), so a wrong guess costs r a rollback, never a
// COMMIT's wait. Not in SS mode (secondaries run a transaction once its
// COMMIT is asked for), not during a view change, not on a replica that
// commits DDL as it runs it (a rollback would not undo it), not while a
// block runs exclusively.
func (s *cbs) nextAhead(r ReplicaID) TxnID {
	if !s.c.cfg.Ahead || s.c.cfg.Mode != CBS || s.changing || s.excl != nil || s.ddlCommits(r) {
		return 0
	}
	var best *ctxn
	for _, t := range s.live {
		if s.mayRunAhead(r, t) && (best == nil || t.advanced > best.advanced) {
			best = t
		}
	}
	if best == nil {
		return 0
	}
	return best.id
}

// mayRunAhead reports whether open t may run on sequential secondary r
// ahead of its COMMIT: its client is still at work in it, it has a
// statement the primary answered, and nothing keeps it from committing
// or from running there (an error, a doomed primary, a deferral, a wait
// on DDL ordering; a survey waits for its COMMIT).
func (s *cbs) mayRunAhead(r ReplicaID, t *ctxn) bool {
	return t.runsAhead() && !t.failed && t.doom == nil && !t.survey && t.deferAt < 0 &&
		!t.at[r].finished && t.advanced > 0 && t.stmts[0].runnable() && !s.ddlBlocked(t)
}

// runsAhead reports whether sequential secondaries would run open t
// ahead of its COMMIT: nobody waits for it yet (no COMMIT asked, no error
// held for a vote).
func (t *ctxn) runsAhead() bool {
	return t.phase == phaseOpen && t.commitSeq == 0 && !t.holds()
}

func (s *cbs) sendStmt(r ReplicaID, t *ctxn) {
	rt := &t.at[r]
	op := Op{Txn: t.id, Kind: OpStmt, Seq: rt.sent}
	s.sentDDL(r, t, op.Seq)
	rt.sent++
	if s.replicas[r].mvcc() {
		rt.snap = append(rt.snap, s.committedPrefix(r))
	}
	rt.started = true
	rt.since = s.now
	s.emit(Send{R: r, Op: op, Try: rt.try})
}

// isLogged reports whether t's COMMIT may be sent: the write-ahead log
// holds it (or there is no log).
func (s *cbs) isLogged(t *ctxn) bool { return !s.c.cfg.Log || t.b < s.logged }

func (s *cbs) sendCommit(r ReplicaID, t *ctxn) {
	rt := &t.at[r]
	rt.commitSent = true
	rt.since = s.now
	s.emit(Send{R: r, Op: Op{Txn: t.id, Kind: OpCommit}, Try: rt.try})
}

// unblock is the progress rule at secondaries (paper 3.3.2): an op of a
// transaction the system waits for — committed, or whose client waits in
// COMMIT — that has been outstanding on a secondary for the stall limit
// is taken to be blocked by the transactions in its way there, which are
// aborted on that secondary and later re-run (see abortVictims).
//
// A slow replica looks like a blocked one, so each time the rule fires on
// a replica its limit there doubles (up to maxStallFactor times StallTicks), and each
// transaction it then commits brings the limit one tick back down.
func (s *cbs) unblock() {
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		if rid == s.primary || s.replicas[r].out() || s.replicas[r].sequential() {
			continue
		}
		for _, t := range s.live {
			rt := &t.at[r]
			waitedFor := t.phase == phaseCommitted || (t.phase == phaseOpen && (t.commitSeq > 0 || t.holds()))
			if !waitedFor || !rt.outstanding() || s.now-rt.since < s.limit(rid) {
				continue
			}
			s.abortVictims(rid, t)
			rt.since = s.now
			s.replicas[r].stallLimit = min(2*s.limit(rid), maxStallFactor*s.stall)
			break
		}
	}
}

// limit is the stall limit of replica r, in ticks.
func (s *cbs) limit(r ReplicaID) int { return max(s.replicas[r].stallLimit, s.stall) }

// abortVictims aborts on r the attempts that may block t there: the
// undecided ones (sparing those whose client waited first, for a COMMIT
// or an error's vote, when t is undecided itself: see waitSeq), and,
// when t is committed, the committed ones ordered after it whose COMMIT
// r has not received (paper 3.3.2: any transaction in progress there).
func (s *cbs) abortVictims(r ReplicaID, t *ctxn) {
	for _, v := range s.live {
		va := &v.at[r]
		if v == t || !va.started || va.finished || va.commitSent || s.ddlAfter(v, t) {
			continue // (t cannot commit before v anyway)
		}
		switch v.phase {
		case phaseOpen:
			if t.phase == phaseOpen && v.waitSeq() > 0 && v.waitSeq() < t.waitSeq() && !s.ddlAfter(t, v) {
				continue
			}
		case phaseCommitted:
			if t.phase != phaseCommitted || v.b < t.b {
				continue
			}
		default:
			continue
		}
		s.abortFor(r, v, t)
	}
}

// checkFinished forgets t once every live replica is done with it and the
// client has its answer.
func (s *cbs) checkFinished(t *ctxn) {
	if s.txns[t.id] != t {
		return // finished already (taking a replica down can finish it)
	}
	if t.phase == phaseOpen || (t.phase == phaseCommitted && !t.replied) {
		return
	}
	for r := range t.at {
		if !t.at[r].finished && !s.replicas[r].out() {
			return
		}
	}
	s.emit(Finished{Txn: t.id})
	delete(s.txns, t.id)
	s.live = remove(s.live, t)
}

// markDown takes replica r out: it no longer runs or votes, and nothing
// waits for it.
func (s *cbs) markDown(r ReplicaID, why string) { s.takeOut(r, why, replicaDown) }

// takeOut takes replica r out (markDown), into state to: down or
// retired.
func (s *cbs) takeOut(r ReplicaID, why string, to replicaState) {
	if s.replicas[r].out() {
		return
	}
	if id, held := s.deferredHeld(r); held && to == replicaDown {
		s.retire(r, fmt.Sprintf("%s, after it was sent DDL of t%d's block, run after the decision: what it committed of it is unknown", why, id))
		return
	}
	if !s.replicas[r].joining() {
		// A replica taken out again while it catches up keeps the
		// barrier it was taken out at: what was decided since is not
		// known to be there (the log brings it, and may not have).
		s.replicas[r].downAt = s.committedPrefix(ReplicaID(r))
	}
	rp := &s.replicas[r]
	rp.state, rp.running, rp.pending = to, 0, nil
	s.emit(MarkDown{R: r, Why: why})
	if r == s.primary && !s.changing {
		s.changeView()
	} else if r == s.candidate && s.changing {
		s.candidate = s.nextCandidate(r)
	}
	for _, t := range slices.Clone(s.live) {
		s.replyCommit(t, -1)
		s.checkFinished(t)
	}
}

// rejoin brings back replica r, which was taken out: it takes part in
// every transaction decided from now on, as a sequential secondary (it
// has run none of the open ones, so it cannot vouch for them in parallel
// with the primary), once it has caught up from the log with those
// decided before (Caught). Those are finished as far as r is concerned:
// the log brings them.
func (s *cbs) rejoin(r ReplicaID) {
	rp := &s.replicas[r]
	if rp.state != replicaDown {
		return // up, joining already, or retired for good
	}
	rp.state, rp.running, rp.pending = replicaJoining, 0, nil
	if !rp.sequential() {
		rp.kind = schedSequential
	}
	for _, t := range s.live {
		// A new try: answers of runs cut off when r went are stale.
		t.at[r] = rtx{hold: -1, try: t.at[r].try + 1}
		if t.phase != phaseOpen {
			// Decided before r came back: the log brings a commit; a
			// rollback has nothing to undo there.
			t.at[r].finished = true
		}
	}
}

// stableCommits is how many commits in a view count as stable progress;
// maxTimeoutFactor bounds the primary timeout's growth.
const (
	stableCommits    = 100
	maxTimeoutFactor = 64
)

func (s *cbs) baseTimeout() int {
	switch t := s.c.cfg.PrimaryTimeout; {
	case t < 0:
		return -1
	case t == 0:
		return DefaultPrimaryTimeout
	default:
		return t
	}
}

// watchPrimary suspects a primary that has left operations unanswered,
// and answered nothing at all, for the timeout while no COMMIT waited for
// the secondaries: it is taken out and the view changes. A primary busy
// answering other work is not suspected, however long one statement waits
// for a lock, unless Config.OpTicks says otherwise (watchOps).
func (s *cbs) watchPrimary() {
	if s.watchOps() {
		return
	}
	if s.timeout < 0 || s.changing || s.primary < 0 {
		return
	}
	if len(s.waiting) > 0 {
		// COMMITs wait for secondaries: the primary may well be blocked
		// behind them (locks, or a serial engine's one transaction), and
		// they do not need it to be decided. Its silence counts only from
		// the last of them: checked before the limit, not once it is
		// reached, or a correct primary is taken out a few ticks after
		// the COMMIT it was sent last (sim cbs seed 566).
		s.heard = s.now
		return
	}
	if s.now-s.heard < s.timeout {
		return
	}
	p := s.primary
	for _, t := range s.live {
		if t.at[p].outstanding() {
			s.markDown(p, fmt.Sprintf("no answer for %d ticks", s.now-s.heard))
			return
		}
	}
}

// watchOps suspects a primary that leaves one statement unanswered for
// Config.OpTicks while it may be answering everything else (selective
// silence, which the silence rule of watchPrimary cannot see). Not while
// COMMITs or held errors wait for the secondaries, or decided commits
// for the primary: those transactions hold locks on the primary that
// the statement may wait for until they end; the count starts again
// after (opsFrom). It reports whether the primary was taken out.
func (s *cbs) watchOps() bool {
	limit := s.c.cfg.OpTicks
	if limit <= 0 || s.changing || s.primary < 0 {
		return false
	}
	p := s.primary
	if len(s.waiting) > 0 || s.heldErrs > 0 || len(s.replicas[p].pending) > 0 {
		s.opsFrom = s.now
		return false
	}
	for _, t := range s.live {
		rt := &t.at[p]
		if waited := s.now - max(rt.since, s.opsFrom); t.phase == phaseOpen && rt.sent > rt.done() && waited >= limit {
			s.markDown(p, fmt.Sprintf("no answer to statement %d of t%d for %d ticks, over the limit of one statement", rt.done()+1, t.id, waited))
			return true
		}
	}
	return false
}

// maxStallFactor bounds how far a secondary's stall limit grows.
const maxStallFactor = 8

// remove deletes t from list, keeping the order. Transactions mostly leave
// these lists near their front (they are the oldest), so the search stops
// early.
func remove(list []*ctxn, t *ctxn) []*ctxn {
	if i := slices.Index(list, t); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// changeView starts a view change after the primary was lost (paper 3.4,
// in its simple form): every transaction not yet decided is aborted — its
// answers came from the lost primary and nobody else may vouch for them —
// and the next replica fit to be primary takes over once it has committed
// every decided transaction, so it starts from the state all clients saw.
// Statements of new transactions wait for it. Decided transactions go on
// committing on the secondaries.
func (s *cbs) changeView() {
	s.changing = true
	// Queued DDL statements are unanswered last statements of their
	// transactions: doomed below, or held for the new primary.
	s.ddlQueue = nil
	s.view++
	if s.timeout > 0 {
		// The next primary gets longer: back-to-back view changes mean
		// a slow system more likely than one faulty primary after
		// another. Stable progress brings the limit back (decide).
		s.timeout = min(2*s.timeout, maxTimeoutFactor*s.baseTimeout())
	}
	s.calm = 0
	s.heard = s.now
	if t := s.excl; t != nil && t.phase == phaseOpen && t.doom == nil {
		// Its answers after the deferral came from the participants,
		// not from the lost primary, but it ran exclusively under that
		// primary: it rolls back like any undecided transaction.
		s.doomTxn(t, pgerr.New(pgerr.SerializationFailure, "the primary replica failed; the transaction was rolled back").
			WithHint("retry the transaction"))
	}
	if c := s.drainedCandidate(); c >= 0 {
		// c ran every statement the lost primary answered, with the same
		// answers, in transactions of its own that are still open: it
		// takes over with no transaction aborted. A statement the lost
		// primary left unanswered runs on c once it is promoted.
		s.candidate = c
		for _, t := range s.live {
			if n := len(t.stmts); t.phase == phaseOpen && t.doom == nil && n > 0 && !t.stmts[n-1].answered && !s.exclWaits(t) {
				s.held = append(s.held, Op{Txn: t.id, Kind: OpStmt, Seq: n - 1})
			}
		}
		return
	}
	s.candidate = s.nextCandidate(s.primary)
	doom := pgerr.New(pgerr.SerializationFailure, "the primary replica failed; the transaction was rolled back").
		WithHint("retry the transaction")
	for _, t := range slices.Clone(s.live) {
		if t.phase == phaseOpen && t.doom == nil {
			s.doomTxn(t, doom)
		}
	}
	if s.candidate < 0 {
		for _, op := range s.held {
			s.emit(Reply{Op: op, From: -1, Fail: s.primaryDownErr()})
			s.txns[op.Txn].fail()
		}
		s.held = nil
	}
}

// doomTxn rolls back undecided t, whose primary was lost, on every
// replica, and fails what its client waits for.
func (s *cbs) doomTxn(t *ctxn, doom *pgerr.Error) {
	t.doom = doom
	for r := range t.at {
		if rid := ReplicaID(r); rid != s.primary && !s.replicas[r].out() {
			s.abortAt(rid, t)
		}
	}
	switch n := len(t.stmts); {
	case t.commitSeq > 0:
		s.failCommit(t, doom)
		s.end(t)
	case t.holds():
		t.stmts[n-1].held = false
		s.heldErrs--
		fallthrough
	case n > 0 && !t.stmts[n-1].answered && !t.failed:
		s.emit(Reply{Op: Op{Txn: t.id, Kind: OpStmt, Seq: n - 1}, From: -1, Fail: doom})
		t.fail()
	}
}

// nextCandidate picks the live replica after from, in configuration
// order and wrapping around, that may be primary; -1 if there is none.
// Rotating keeps a faulty replica from holding the role.
func (s *cbs) nextCandidate(from ReplicaID) ReplicaID {
	n := len(s.replicas)
	for i := 1; i <= n; i++ {
		r := (int(from) + i) % n
		if !s.replicas[r].out() && !s.replicas[r].joining() && s.replicas[r].class.MayBePrimary() {
			return ReplicaID(r)
		}
	}
	return -1
}

// drainedCandidate returns the first replica fit to be primary, after the
// lost one, that has answered every statement the lost primary answered
// of every open transaction, with the same answers, and holds no
// statement unanswered: its pool is drained, so it can take over
// without aborts (paper 3.4). -1 if there is none.
func (s *cbs) drainedCandidate() ReplicaID {
	n := len(s.replicas)
	for i := 1; i <= n; i++ {
		c := ReplicaID((int(s.primary) + i) % n)
		if c == s.primary || s.replicas[c].out() || s.replicas[c].joining() || !s.replicas[c].class.MayBePrimary() {
			continue
		}
		if s.drained(c) {
			return c
		}
	}
	return -1
}

func (s *cbs) drained(c ReplicaID) bool {
	for _, t := range s.live {
		// A failed transaction goes on nowhere: its client can only roll
		// it back.
		if t.phase == phaseOpen && t.doom == nil && !t.failed && !s.carries(c, t) {
			return false
		}
	}
	return true
}

// carries reports whether c's current attempt of open t holds every
// statement the lost primary answered, with the same answers, and nothing
// else: c can go on with it as primary.
func (s *cbs) carries(c ReplicaID, t *ctxn) bool {
	rt := &t.at[c]
	answered := 0
	for answered < len(t.stmts) && t.stmts[answered].answered {
		answered++
	}
	if rt.hold >= 0 || rt.finished || rt.sent != rt.done() || rt.done() != answered {
		// (An attempt let go after a voted error has no engine
		// transaction left to go on with.)
		return false
	}
	for i := range answered {
		if rt.votes[i] != t.stmts[i].vote {
			return false
		}
	}
	return true
}

// promote makes the candidate primary once it has committed every
// decided transaction, and sends it the statements that waited.
func (s *cbs) promote() {
	c := s.candidate
	if c < 0 || len(s.replicas[c].pending) > 0 {
		return
	}
	// While c finished the decided transactions, one of its attempts may
	// have been aborted (to unblock a committed one): that transaction
	// cannot go on on c, and is rolled back like any undecided one of a
	// view change without a drained candidate.
	doom := pgerr.New(pgerr.SerializationFailure, "the primary replica failed; the transaction was rolled back").
		WithHint("retry the transaction")
	for _, t := range slices.Clone(s.live) {
		if t.phase == phaseOpen && t.doom == nil && !s.carries(c, t) {
			s.doomTxn(t, doom)
		}
	}
	s.changing, s.primary = false, c
	s.replicas[c].kind, s.replicas[c].running = schedPrimary, 0
	s.emit(NewPrimary{R: c, View: s.view})
	held := s.held
	s.held = nil
	for _, op := range held {
		t := s.txns[op.Txn]
		if t == nil || t.phase != phaseOpen || t.failed {
			continue
		}
		if t.stmts[op.Seq].deferReq {
			s.dispatch(t, op) // DDL in a block: deferred (deferred.go)
			continue
		}
		s.sendPrimary(t, op)
	}
}
