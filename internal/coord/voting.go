package coord

import (
	"fmt"
	"slices"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/quorum"
)

// voting runs the modes in which every replica runs every operation and
// a reply is the answer f+1 replicas gave (quorum's rule): serial, and
// passthrough, its case of one replica (f = 0), whose answer is the reply.
//
// In serial mode (ordered) one transaction at a time holds the admission
// token, and each replica runs the transactions in admission order, the
// next only once it finished the previous one (its queue); see the
// invariants in doc.go. Passthrough orders nothing: every operation goes
// out at once.
type voting struct {
	c *Coordinator
	// ordered: serial mode's admission token and per-replica order.
	ordered  bool
	replicas []votingReplica
	txns     map[TxnID]*txnState
	// active holds the admission token (serial mode); waiting are the
	// begun transactions queued for it, in arrival order.
	active  TxnID
	waiting []TxnID
	// now counts Ticks (how long a survey waits).
	now int
}

func newVoting(c *Coordinator) *voting {
	return &voting{c: c, ordered: c.cfg.Mode == Serial, replicas: make([]votingReplica, c.cfg.N), txns: map[TxnID]*txnState{}}
}

// step is the voting modes' Step.
func (m *voting) step(ev Event) {
	switch e := ev.(type) {
	case Begin:
		m.begin(e.Txn, e.Survey)
	case Submit:
		m.submit(e.Op, e.Writes || e.DDL, e.DDL, e.Recovers)
	case Answered:
		m.answered(e)
	case Down:
		m.markDown(e.R, "reported down")
	case Tick:
		m.now++
		for _, id := range m.txnIDs() {
			if t := m.txns[id]; t != nil && t.survey {
				for _, op := range t.ballotOps() {
					m.decide(op)
				}
			}
		}
	case Cancel:
	case Alive:
		// No primary whose silence is watched.
	case Unresponsive:
		if m.c.cfg.N > 1 {
			m.markDown(e.R, e.why())
		}
	default:
		panic(fmt.Sprintf("coord: unknown event %T", ev))
	}
}

func (m *voting) isDown(r ReplicaID) bool   { return m.replicas[r].down }
func (m *voting) joining(ReplicaID) bool    { return false }
func (m *voting) decided() int              { return 0 }
func (m *voting) applied(ReplicaID) int     { return -1 }
func (m *voting) currentPrimary() ReplicaID { return -1 }

// votingReplica is what the voting modes know of one replica.
// Invariant: a replica down has nothing running or queued.
type votingReplica struct {
	// down: taken out (Down, MarkDown, Retire); the voting modes bring
	// no replica back.
	down bool
	// cur is the transaction the replica is running (serial mode), 0 when
	// idle; queue holds ops of later transactions, in order.
	cur   TxnID
	queue []Op
}

// txnState is a transaction of the voting modes, with a ballot per
// operation sent.
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
	// unrecoverable: a ROLLBACK TO SAVEPOINT (Submit.Recovers) cannot
	// make up for what happened: it fails with 40001. Set when a
	// statement's ballot found no agreement (the replicas may have run it
	// differently) and, in serial mode, when the replicas agreed on an
	// error that is not votable (a cancel, a concurrency failure, a lack
	// of resources): such an error depends on the replica and the moment,
	// and engines leave their transaction in different states after it
	// (MariaDB rolls the whole transaction back after a deadlock,
	// PostgreSQL keeps it until ROLLBACK TO; a cancel may stop one
	// replica's write after another finished it). CBS refuses alike
	// (ctxn.recoverable).
	unrecoverable bool
}

func (m *voting) begin(id TxnID, survey bool) {
	if _, dup := m.txns[id]; dup || id == 0 {
		panic(fmt.Sprintf("coord: Begin of t%d twice", id))
	}
	m.txns[id] = &txnState{ballots: map[Op]*ballot{}, doneAt: make([]bool, m.c.cfg.N), survey: survey}
	if !m.ordered {
		return
	}
	if m.active == 0 {
		m.active = id
		return
	}
	m.waiting = append(m.waiting, id)
}

// admitted reports whether a transaction's ops may go out.
func (m *voting) admitted(id TxnID) bool {
	return !m.ordered || m.active == id
}

func (m *voting) submit(op Op, writes, ddl, recovers bool) {
	t := m.txns[op.Txn]
	if t == nil || t.finished {
		panic(fmt.Sprintf("coord: %v submitted outside a live transaction", op))
	}
	if recovers && t.unrecoverable && !t.survey {
		// Not sent: the transaction can only roll back now.
		m.c.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.SerializationFailure,
			"the transaction cannot go on after its error: the replicas did not agree on it").
			WithHint("roll the transaction back and retry it")})
		return
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
	if !m.admitted(op.Txn) {
		if op.Kind == OpRollback && m.ordered {
			// Never admitted: nothing ran anywhere, drop it from the
			// queue. It is finished too: the shell keeps a transaction
			// (Cluster.Idle, its AfterEnd, its DDL intent) until told so.
			m.waiting = slices.DeleteFunc(m.waiting, func(w TxnID) bool { return w == op.Txn })
			m.c.emit(Reply{Op: op, From: -1})
			m.c.emit(Finished{Txn: op.Txn})
			m.forget(op.Txn)
			return
		}
		t.pending = append(t.pending, op)
		return
	}
	m.dispatch(t, op)
}

// dispatch sends op to every live replica (through their queues in serial
// mode) and opens its ballot.
func (m *voting) dispatch(t *txnState, op Op) {
	if t.survey && op.Kind == OpCommit && !m.surveyed(op.Txn, t) {
		// Not unanimous: roll back everywhere instead.
		t.abandoned = true
		rb := Op{Txn: op.Txn, Kind: OpRollback}
		for r := range m.replicas {
			if !m.replicas[r].down {
				m.sendTo(ReplicaID(r), rb)
			}
		}
		m.c.emit(Reply{Op: op, From: -1, Fail: surveyDiffers()})
		m.release(op.Txn)
		m.checkFinished(op.Txn)
		return
	}
	if op.Kind != OpRollback {
		t.ballots[op] = &ballot{votes: make(quorum.Votes[Vote], m.c.cfg.N), openedAt: m.now}
	}
	for r := range m.replicas {
		switch {
		case m.replicas[r].down:
		case op.Kind == OpCommit && !t.survey:
			m.commitAt(t, ReplicaID(r), op)
		default:
			m.sendTo(ReplicaID(r), op)
		}
	}
	if op.Kind == OpRollback {
		// A rollback needs no vote: the client is told at once, and the
		// token passes on.
		m.c.emit(Reply{Op: op, From: -1})
		m.release(op.Txn)
		m.checkFinished(op.Txn)
		return
	}
	m.decide(op) // no live replica left: fails at once
	if op.Kind == OpCommit {
		// A COMMIT no replica was sent (every one is down) is done
		// with: the transaction is finished, as no answer will come.
		m.checkFinished(op.Txn)
	}
}

func (m *voting) sendTo(r ReplicaID, op Op) {
	rs := &m.replicas[r]
	if m.ordered {
		if rs.cur != 0 && rs.cur != op.Txn {
			rs.queue = append(rs.queue, op)
			return
		}
		rs.cur = op.Txn
	}
	m.c.emit(Send{R: r, Op: op})
}

// surveyed reports, for the COMMIT of survey t, whether every live
// replica gave the same answers to every statement (their answers are all
// in: a survey statement is decided only then), and emits Surveyed.
func (m *voting) surveyed(id TxnID, t *txnState) bool {
	took := m.live()
	for _, op := range t.ballotOps() {
		for r, v := range t.ballots[op].votes {
			if v == nil {
				took[r] = false // left out: it took too long
			}
		}
	}
	unanimous := quorum.Support{For: countTrue(took)}.Won(m.c.cfg.F)
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
	m.c.emit(Surveyed{Txn: id, Took: took, Unanimous: unanimous})
	return unanimous
}

// release passes the admission token to the next waiting transaction.
func (m *voting) release(id TxnID) {
	if !m.ordered || m.active != id {
		return
	}
	m.active = 0
	if len(m.waiting) == 0 {
		return
	}
	next := m.waiting[0]
	m.waiting = m.waiting[1:]
	m.active = next
	t := m.txns[next]
	pending := t.pending
	t.pending = nil
	for _, op := range pending {
		m.dispatch(t, op)
	}
}

func (m *voting) answered(a Answered) {
	t := m.txns[a.Op.Txn]
	if t == nil {
		return // transaction already forgotten
	}
	if m.replicas[a.R].down {
		return
	}
	last := a.Op.Kind == OpCommit || a.Op.Kind == OpRollback
	if !a.V.OK() && pgerr.IsConnection(&pgerr.Error{Code: a.V.Code}) && m.c.cfg.N > 1 {
		// The replica lost its session mid-transaction: what it ran is
		// unknown, so it stops voting until recovered.
		m.markDown(a.R, "connection lost during "+a.Op.String())
		return
	}
	if b := t.ballots[a.Op]; b != nil {
		b.votes[a.R] = &a.V
		if b.decided {
			if v := a.V; v != b.outcome && !b.failed && !t.abandoned && !t.survey {
				m.c.emit(Mismatch{R: a.R, Op: a.Op, Got: v, Want: b.outcome})
			}
			m.retireSplitDDL(t, a.Op, b, a.R)
		} else {
			m.decide(a.Op)
		}
	}
	if a.Op.Kind == OpStmt && t.held != nil && t.held[a.R] {
		t.held[a.R] = false
		m.commitAt(t, a.R, Op{Txn: a.Op.Txn, Kind: OpCommit})
	}
	if last {
		t.doneAt[a.R] = true
		m.replicaDone(a.R, a.Op.Txn)
		m.checkFinished(a.Op.Txn)
	}
}

// retireSplitDDL takes out, for good, a replica that commits DDL as it
// runs it (Config.DDLCommits: MariaDB) and ran DDL statement op of t
// where the agreed answer is otherwise (a cancel the others honoured, an
// error they gave, no agreement): the transaction rolls back on the
// others, but the replica keeps the schema change, and no log can undo
// it. Serial mode's counterpart of the CBS pinning (cbs.go, Retire).
func (m *voting) retireSplitDDL(t *txnState, op Op, b *ballot, r ReplicaID) {
	v := b.votes[r]
	if !t.ddl[op] || m.c.cfg.DDLCommits == nil || !m.c.cfg.DDLCommits[r] || v == nil || !v.OK() ||
		(!b.failed && *v == b.outcome) || m.replicas[r].down {
		return
	}
	why := fmt.Sprintf("it committed the DDL of %s as it ran it, and the replicas agreed otherwise", describe(op))
	m.c.emit(Retire{R: r, Why: why})
	m.markDown(r, why)
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
func (m *voting) commitAt(t *txnState, r ReplicaID, op Op) {
	for _, sop := range t.ballotOps() {
		if sop.Kind != OpStmt || !t.writes[sop] {
			continue
		}
		b := t.ballots[sop]
		v := b.votes[r]
		if v == nil || !b.decided {
			if t.held == nil {
				t.held = make([]bool, m.c.cfg.N)
			}
			t.held[r] = true
			return
		}
		if *v != b.outcome {
			m.markDown(r, fmt.Sprintf("its answer to %s, which may change state, differs from the agreed one (%s, agreed %s): its transaction is rolled back there", describe(sop), v, b.outcome))
			return
		}
	}
	m.sendTo(r, op)
}

// replicaDone moves replica r on to the next transaction in its queue.
func (m *voting) replicaDone(r ReplicaID, id TxnID) {
	rs := &m.replicas[r]
	if !m.ordered || rs.cur != id {
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
		m.c.emit(Send{R: r, Op: rs.queue[i]})
	}
	rs.queue = rs.queue[i:]
}

// decide settles op's ballot if its votes allow it.
func (m *voting) decide(op Op) {
	t := m.txns[op.Txn]
	b := t.ballots[op]
	if b == nil || b.decided {
		return
	}
	if t.survey && op.Kind == OpStmt {
		// Decided once every live replica answered, no vote; a replica
		// that takes too long is left out once f+1 answered.
		from, n, missing := ReplicaID(-1), 0, false
		for r, v := range b.votes {
			if m.replicas[r].down {
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
		if missing && (m.now-b.openedAt < m.c.surveyTicks() || n < m.c.quorum()) {
			return
		}
		b.decided = true
		if from < 0 {
			b.failed = true
			m.c.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.ConnectionFailure, "no replica is up")})
			return
		}
		b.outcome = *b.votes[from]
		m.c.emit(Reply{Op: op, From: from})
		return
	}
	if v, from, ok := b.votes.Agreed(m.c.cfg.F); ok {
		b.decided, b.outcome = true, v
		if op.Kind == OpStmt && !v.OK() && !votable(v.Code) && m.ordered {
			t.unrecoverable = true
		}
		m.c.emit(Reply{Op: op, From: ReplicaID(from)})
		for r, got := range b.votes {
			if got != nil && *got != v {
				m.c.emit(Mismatch{R: ReplicaID(r), Op: op, Got: *got, Want: v})
			}
		}
		for r := range b.votes {
			m.retireSplitDDL(t, op, b, ReplicaID(r))
		}
		if op.Kind == OpCommit {
			m.release(op.Txn)
		}
		return
	}
	if b.votes.Reachable(m.c.cfg.F, b.pending(m.live())) {
		return
	}
	b.decided, b.failed = true, true
	if op.Kind == OpStmt {
		t.unrecoverable = true
	}
	for r, got := range b.votes {
		if got != nil {
			m.c.emit(Mismatch{R: ReplicaID(r), Op: op, Got: *got})
		}
	}
	for r := range b.votes {
		m.retireSplitDDL(t, op, b, ReplicaID(r))
	}
	fail := pgerr.New(pgerr.SerializationFailure,
		"replicas disagreed on %s: no answer was given by %d replicas", describe(op), m.c.quorum()).
		WithHint("the transaction was rolled back on every replica; retry it")
	if e := m.c.tooFewUp(); e != nil {
		fail = e // none disagreed: too few were left to agree
	}
	m.c.emit(Reply{Op: op, From: -1, Fail: fail})
	if op.Kind == OpCommit {
		// The client is told the commit failed; replicas that did commit
		// are out of step and are reported by the Mismatch actions.
		m.release(op.Txn)
	}
}

// live returns which replicas still vote.
func (m *voting) live() []bool {
	l := make([]bool, len(m.replicas))
	for i, r := range m.replicas {
		l[i] = !r.down
	}
	return l
}

func (m *voting) checkFinished(id TxnID) {
	t := m.txns[id]
	if t == nil || !t.finished || len(t.pending) > 0 {
		return
	}
	for r, done := range t.doneAt {
		if !done && !m.replicas[r].down {
			return
		}
	}
	m.c.emit(Finished{Txn: id})
	m.forget(id)
}

func (m *voting) forget(id TxnID) { delete(m.txns, id) }

func (m *voting) markDown(r ReplicaID, why string) {
	rs := &m.replicas[r]
	if rs.down {
		return
	}
	rs.down, rs.queue, rs.cur = true, nil, 0
	m.c.emit(MarkDown{R: r, Why: why})
	// Ballots that were waiting for r may now be decided (or be known to
	// be undecidable), and transactions waiting for r to finish are done.
	for _, id := range m.txnIDs() {
		t := m.txns[id]
		if t == nil {
			continue
		}
		for _, op := range t.ballotOps() {
			m.decide(op)
		}
		m.checkFinished(id)
	}
}

// txnIDs returns the live transaction ids in increasing order, so that
// actions come out in a deterministic order.
func (m *voting) txnIDs() []TxnID {
	ids := make([]TxnID, 0, len(m.txns))
	for id := range m.txns {
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

// heldBy: serial and passthrough hold no transaction for another's
// exclusive run.
func (m *voting) heldBy(TxnID) TxnID { return 0 }
