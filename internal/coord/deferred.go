package coord

import (
	"fmt"
	"slices"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/quorum"
)

// DDL inside a transaction block, with replicas that commit DDL as they
// run it (Config.DDLCommits: MariaDB). Such a replica cannot run the
// block's DDL before the block is decided: its DDL commits at once, with
// every statement the block ran before it, so a block rolled back later
// would leave it alone holding them. So the block is *deferred* on those
// replicas (Submit.Defer):
//
//  1. Its first DDL statement makes the transaction *exclusive*
//     (cbs.excl). Nothing of it goes anywhere until every other
//     transaction that ran something has ended (committed or rolled
//     back: the drain), and no other transaction starts until it is over
//     (their first statements wait in cbs.exclHeld). A drain that takes
//     longer than Config.DrainTicks fails the DDL with 55P03; a second
//     transaction that wants exclusivity while one waits for it fails
//     with 40P01 (each would wait for the other).
//  2. From that statement on (the deferred statements, ctxn.deferAt),
//     the transaction runs only on the replicas that run DDL in
//     transactions (participants: up, not joining, not DDLCommits), and
//     each answer is the one f+1 of them agree on (voteDeferred), given
//     by one of them. With fewer than f+1 participants up the statement
//     is refused (57P03) and the transaction can only roll back. Once
//     one participant answered, the statement waits at most DrainTicks
//     for f+1 to agree, then fails with 57014 (deferredWaited): a
//     participant may be faulty and never get there.
//  3. Its COMMIT is decided among the participants: f+1 of them ready to
//     commit, each having given every answer the client saw (the
//     primary's, before the deferral; the agreed ones, after). It is
//     logged, committed on them (failed with 57014 once one was ready
//     and f+1 were not within DrainTicks), and only then are the DDLCommits
//     replicas (the primary among them) sent the deferred statements, in
//     order, then COMMIT, before anything else runs there. A replica
//     whose answers differ from the decided ones, or that fails, or that
//     is taken out after it was sent the DDL, is retired: it committed
//     the DDL and whatever came before, which catch-up from the log could
//     not tell apart from what it still lacks.
//  4. A rollback (or any failure) before the decision never reached the
//     DDLCommits replicas with the DDL: they roll back as usual.
//  5. A ROLLBACK TO SAVEPOINT after the deferral is refused (0A000):
//     MariaDB's DDL ended the savepoints there. The session answers
//     SAVEPOINT and RELEASE itself after the deferral, so the DDLCommits
//     replicas are never sent savepoint commands that MariaDB's implicit
//     commit made void.
//
// Exclusivity is what makes sending the deferred statements after the
// decision equivalent: on the DDLCommits replicas nothing runs between
// the statements before the deferral, which they ran with the others,
// and those after it, and every transaction ordered before the block
// finished there first.

// DefaultDrainTicks is Config.DrainTicks when left 0: 10 s at the shell's
// default 10 ms tick.
const DefaultDrainTicks = 1000

// drainTicks returns Config.DrainTicks with its default applied.
func (s *cbs) drainTicks() int {
	if s.c.cfg.DrainTicks > 0 {
		return s.c.cfg.DrainTicks
	}
	return DefaultDrainTicks
}

// participant reports whether replica r runs deferred statements and
// votes on them: up (not joining) and running DDL in transactions.
func (s *cbs) participant(r ReplicaID) bool {
	rp := &s.replicas[r]
	return !rp.out() && !rp.joining() && !s.ddlCommits(r)
}

// participants counts the participants.
func (s *cbs) participants() int {
	n := 0
	for r := range s.c.cfg.N {
		if s.participant(ReplicaID(r)) {
			n++
		}
	}
	return n
}

// tooFewParticipants is the failure of a deferred statement or COMMIT
// while fewer than f+1 participants are up.
func (s *cbs) tooFewParticipants() *pgerr.Error {
	return pgerr.New(pgerr.CannotConnectNow,
		"too few replicas that run DDL in transactions are up: %d, need %d for DDL inside a transaction block (the replicas that commit DDL as they run it, MariaDB, run it only after the block commits)",
		s.participants(), s.quorum()).
		WithHint("the transaction can only roll back; retry it once replicas are back (SHOW REPLICAS)")
}

// dispatch routes statement op of t, just submitted: held while another
// transaction is exclusive and t has run nothing yet, deferred once t
// is, made exclusive at its first DDL asked to be deferred, and
// otherwise sent to the primary as usual (sendOrHold).
func (s *cbs) dispatch(t *ctxn, op Op) {
	q := &t.stmts[op.Seq]
	switch {
	case s.excl != nil && s.excl != t && op.Seq == 0:
		s.exclHeld = append(s.exclHeld, op)
	case t.deferAt >= 0:
		q.deferred, q.b = true, s.barrier
	case q.deferReq && s.ddlOrdered && s.excl != nil && s.excl != t:
		s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.DeadlockDetected, "deadlock detected").
			WithDetail("DDL inside a transaction block waits until every other transaction has ended (a replica commits DDL as it runs it), and transaction %d waits so for this one.", s.excl.id).
			WithHint("roll the transaction back and retry it")})
		t.fail()
	case q.deferReq && s.ddlOrdered && s.changing:
		// No primary: held for the next one (dispatched again then,
		// see promote), or failed when none is fit.
		s.sendOrHold(t, op, q.ddl)
	case q.deferReq && s.ddlOrdered && s.participants() < s.quorum():
		s.emit(Reply{Op: op, From: -1, Fail: s.tooFewParticipants()})
		t.fail()
	case q.deferReq && s.ddlOrdered:
		t.deferAt, t.deferSince = op.Seq, s.now
		q.deferred, q.b = true, s.barrier
		s.excl = t
	default:
		s.sendOrHold(t, op, q.ddl)
	}
}

// exclusive applies the rules of exclusivity after every event: it ends
// once the exclusive transaction ended, failed before its decision (its
// deferred statements then never reach the DDLCommits replicas), or
// committed where later transactions start: on the primary (if it
// commits DDL as it runs it, once it committed the transaction there;
// the secondaries' ordering rules keep later work behind it, and one that
// lags does not hold everyone up); the drain completes, or times out;
// and the held statements go on once no transaction is exclusive.
func (s *cbs) exclusive() {
	if t := s.excl; t != nil {
		p := s.primary
		onPrimary := s.changing || s.replicas[p].out() || !s.ddlCommits(p) || t.at[p].finished
		if s.txns[t.id] != t || t.phase == phaseEnded || (t.phase == phaseOpen && (t.failed || t.doom != nil)) ||
			(t.phase == phaseCommitted && onPrimary) {
			s.excl = nil
		} else if !t.drained {
			s.drain(t)
		}
	}
	if s.excl != nil || len(s.exclHeld) == 0 {
		return
	}
	held := s.exclHeld
	s.exclHeld = nil
	for i, op := range held {
		t := s.txns[op.Txn]
		if t == nil || t.phase != phaseOpen || t.failed {
			continue
		}
		s.dispatch(t, op)
		if s.excl != nil {
			// It made itself exclusive: the others wait again.
			s.exclHeld = append(s.exclHeld, held[i+1:]...)
			return
		}
	}
}

// drain completes t's drain once no other transaction that ran
// something is undecided, or fails t's DDL once that took too long.
func (s *cbs) drain(t *ctxn) {
	for _, u := range s.live {
		if u == t || u.phase != phaseOpen {
			continue
		}
		if s.exclWaits(u) {
			continue // it waits for t
		}
		if len(u.stmts) == 0 {
			continue // it ran nothing yet: its first statement will wait
		}
		if s.now-t.deferSince < s.drainTicks() {
			return
		}
		s.emit(Reply{Op: Op{Txn: t.id, Kind: OpStmt, Seq: t.deferAt}, From: -1,
			Fail: pgerr.New(pgerr.LockNotAvailable, "canceling statement due to lock timeout").
				WithDetail("DDL inside a transaction block waits until every other transaction has ended (a replica commits DDL as it runs it); transaction %d was still open after %d ticks.", u.id, s.drainTicks()).
				WithHint("end the other transactions (or run the DDL outside a transaction block), then retry")})
		t.fail()
		s.excl = nil
		return
	}
	t.drained = true
	for i := t.deferAt; i < len(t.stmts); i++ {
		t.stmts[i].b = s.barrier // after every decided transaction
	}
}

// cancelDrain fails t's DDL that waits for the drain (a client's
// cancel): it never ran anywhere.
func (s *cbs) cancelDrain(t *ctxn) {
	if s.excl != t || t.drained || t.failed {
		return
	}
	s.emit(Reply{Op: Op{Txn: t.id, Kind: OpStmt, Seq: len(t.stmts) - 1}, From: -1,
		Fail: pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")})
	t.fail()
	s.excl = nil
}

// stmtReady reports whether statement i of t may go to secondary r as
// far as its answer and the deferral go: a statement the primary answered
// (cstmt.runnable); a deferred one, to a participant once t drained, and
// to a replica that commits DDL as it runs it only once t is committed,
// logged, and every transaction decided before it finished there.
func (s *cbs) stmtReady(r ReplicaID, t *ctxn, i int) bool {
	q := &t.stmts[i]
	if !q.deferred {
		return q.runnable()
	}
	if !s.ddlCommits(r) {
		return t.drained && t.phase != phaseEnded
	}
	if t.phase != phaseCommitted || !s.isLogged(t) {
		return false
	}
	for _, d := range s.replicas[r].pending {
		if d.b >= t.b {
			break
		}
		if !d.at[r].finished {
			return false
		}
	}
	return true
}

// voteDeferred decides the answer to deferred statement i of t once f+1
// participants agree on it (a participant's answer counts if its attempt
// gave the agreed answers before). The answer is the agreed
// participant's; an agreed error fails t. Once no answer can reach f+1,
// the statement fails with 40001 (57P03 with too few participants up).
func (s *cbs) voteDeferred(t *ctxn, i int) {
	q := &t.stmts[i]
	if q.answered || !q.deferred || t.failed || t.phase != phaseOpen || s.participant(s.primary) {
		return // (a primary that is a participant answers: deferredToPrimary)
	}
	votes := make(quorum.Votes[Vote], s.c.cfg.N)
	open := 0
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		rt := &t.at[r]
		if !s.participant(rid) {
			continue
		}
		if rt.done() <= i {
			if !rt.finished {
				open++
			}
			continue
		}
		if !slices.Equal(rt.votes[:i], voteList(t.stmts[:i])) {
			continue // its attempt went another way before
		}
		v := rt.votes[i]
		votes[r] = &v
	}
	op := Op{Txn: t.id, Kind: OpStmt, Seq: i}
	if want, from, ok := votes.Agreed(s.c.cfg.F); ok {
		q.answered, q.vote = true, want
		if !want.OK() {
			t.fail()
		}
		s.emit(Reply{Op: op, From: ReplicaID(from)})
		return
	}
	if votes.Reachable(s.c.cfg.F, open) {
		if slices.ContainsFunc(votes, func(v *Vote) bool { return v != nil }) && q.heardAt == 0 {
			q.heardAt = s.now + 1
		}
		if q.heardAt > 0 && s.now-(q.heardAt-1) >= s.drainTicks() {
			t.fail()
			s.emit(Reply{Op: op, From: -1, Fail: s.deferredWaited(fmt.Sprintf("statement %d", i+1))})
		}
		return
	}
	t.fail()
	if s.participants() < s.quorum() {
		s.emit(Reply{Op: op, From: -1, Fail: s.tooFewParticipants()})
		return
	}
	for r, v := range votes {
		if v != nil {
			s.emit(Mismatch{R: ReplicaID(r), Op: op, Got: *v})
		}
	}
	s.emit(Reply{Op: op, From: -1, Fail: pgerr.New(pgerr.SerializationFailure,
		"replicas disagreed on %s, after DDL inside the transaction block: no answer was given by %d replicas", describe(op), s.quorum()).
		WithHint("the transaction can only roll back; retry it")})
}

// deferredWaited is the failure of a deferred statement or COMMIT that
// some participant answered (or is ready to commit) but that f+1 did not
// within Config.DrainTicks since: the others are behind, and may stay so
// for ever (a faulty one that re-runs an earlier decided transaction
// without end, or never answers), while every other client waits for the
// exclusive transaction. With exactly f+1 participants (N = 2f+1 and f
// replicas that commit DDL as they run it) one faulty participant would
// otherwise stop all work. The timer starts only once one participant
// answered, so a statement that is merely long everywhere is not
// failed. The client sees PostgreSQL's statement timeout (57014); the
// transaction can only roll back, which never reached the DDLCommits
// replicas with its DDL.
func (s *cbs) deferredWaited(what string) *pgerr.Error {
	return pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout").
		WithDetail("DDL inside a transaction block needs %d replicas that run DDL in transactions to agree on each answer; %s waited %d ticks after the first of them answered (a replica commits DDL as it runs it).",
			s.quorum(), what, s.drainTicks()).
		WithHint("the transaction can only roll back; retry it (SHOW REPLICAS shows which replicas are behind), or run the DDL outside a transaction block")
}

// evaluateDeferred is the COMMIT rule of a deferred transaction: commit
// once f+1 participants ready to commit gave every answer the client saw;
// refuse once too few are left that could.
func (s *cbs) evaluateDeferred(t *ctxn) {
	if !t.drained {
		return
	}
	endorsing, open := 0, 0
	for r := range s.c.cfg.N {
		rid := ReplicaID(r)
		switch {
		case !s.participant(rid):
		case !s.readyToCommit(rid, t):
			open++
		case s.replicas[r].mvcc() && !s.fresh(rid, t, s.barrier):
			open++
			s.abortAt(rid, t)
		case s.endorses(rid, t):
			endorsing++
		}
	}
	switch support := (quorum.Support{For: endorsing, Open: open}); {
	case support.Won(s.c.cfg.F):
		s.decide(t)
	case !support.Reachable(s.c.cfg.F):
		fail := s.tooFewParticipants()
		if s.participants() >= s.quorum() {
			fail = pgerr.New(pgerr.SerializationFailure,
				"replicas disagreed on the transaction, which ran DDL inside its block: its answers were not confirmed by %d replicas", s.quorum()).
				WithHint("the transaction was rolled back on every replica; retry it")
		}
		s.failCommit(t, fail)
		s.end(t)
	case endorsing > 0 && s.now-t.askedAt >= s.drainTicks():
		// Waited too long for the other participants (see
		// deferredWaited); nothing of t reached the DDLCommits replicas.
		s.failCommit(t, s.deferredWaited("COMMIT"))
		s.end(t)
	}
}

// sendDeferred sends committed, logged t's deferred statements to
// replica r, which commits DDL as it runs it, once every transaction
// decided before t finished there; once r answered them all, it checks
// them against the decided answers and sends COMMIT. It reports whether
// r may go on to later transactions (t's COMMIT went to r).
func (s *cbs) sendDeferred(r ReplicaID, t *ctxn) bool {
	rt := &t.at[r]
	for rt.sent < len(t.stmts) && s.stmtReady(r, t, rt.sent) && (rt.sent >= t.deferAt || r == s.primary || s.queryMaySend(r, t, rt.sent)) {
		s.sendStmt(r, t)
	}
	if rt.done() != len(t.stmts) {
		return false
	}
	for i := range t.stmts {
		if i < t.deferAt && !t.stmts[i].writes {
			continue // a read that differed is reported at its COMMIT
		}
		if got, want := rt.votes[i], t.stmts[i].vote; got != want {
			op := Op{Txn: t.id, Kind: OpStmt, Seq: i}
			s.emit(Mismatch{R: r, Op: op, Got: got, Want: want})
			s.retire(r, fmt.Sprintf("its answer to statement %d of t%d, run after the block committed (DDL inside a transaction block), differs from the agreed one (%s, agreed %s)", i+1, t.id, got, want))
			return false
		}
	}
	s.sendCommit(r, t)
	return true
}

// maxDeferredTries bounds the attempts of a deferred transaction that a
// participant's engine may abort (deadlock, serialization failure)
// before its error stands as its answer.
const maxDeferredTries = 5

// deferredGivesUp reports whether participant r's engine aborted its
// attempt of undecided deferred t once too often: the transaction runs
// alone, so a correct engine has no reason to, and the client waits for
// the participants' answers. The error then stands as r's answer, which
// the vote (voteDeferred) or COMMIT (evaluateDeferred) weighs like any.
func (s *cbs) deferredGivesUp(r ReplicaID, t *ctxn) bool {
	if t.deferAt < 0 || t.phase != phaseOpen || !s.participant(r) {
		return false
	}
	t.at[r].deferredTries++
	return t.at[r].deferredTries > maxDeferredTries
}

// deferredHeld reports whether r, which commits DDL as it runs it, was
// sent DDL of a deferred transaction it has not finished: taken out now,
// it may hold that DDL and what the transaction ran before it,
// committed, which catch-up from the log could not tell apart from what
// it lacks. Such a replica is retired, not just taken out.
func (s *cbs) deferredHeld(r ReplicaID) (TxnID, bool) {
	if !s.ddlCommits(r) {
		return 0, false
	}
	for _, t := range s.live {
		if t.deferAt >= 0 && !t.at[r].finished && t.at[r].sent > t.deferAt {
			return t.id, true
		}
	}
	return 0, false
}

// deferredToPrimary sends drained t's deferred statements to a primary
// that runs DDL in transactions (a participant, SQLite say): it answers
// them as it answers everything, and the other participants endorse its
// answers at COMMIT as usual; only the replicas that commit DDL as they
// run it wait for the decision.
func (s *cbs) deferredToPrimary(t *ctxn) {
	p := s.primary
	if s.changing || !s.participant(p) || t.phase != phaseOpen || t.failed {
		return
	}
	for rt := &t.at[p]; rt.sent < len(t.stmts); {
		s.sendPrimary(t, Op{Txn: t.id, Kind: OpStmt, Seq: rt.sent})
	}
}

// exclWaits reports whether u's first statement waits in exclHeld for the
// exclusive transaction to be over.
func (s *cbs) exclWaits(u *ctxn) bool {
	return slices.ContainsFunc(s.exclHeld, func(op Op) bool { return op.Txn == u.id })
}

// heldBy returns the exclusive transaction when id's first statement is
// held for it (exclHeld), else 0.
func (s *cbs) heldBy(id TxnID) TxnID {
	if s.excl == nil {
		return 0
	}
	for _, op := range s.exclHeld {
		if op.Txn == id {
			return s.excl.id
		}
	}
	return 0
}
