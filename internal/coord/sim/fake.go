package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// faults are the ways one fake replica misbehaves; the zero value is a
// correct replica.
type faults struct {
	lie      float64 // chance a successful statement answer is wrong
	stall    float64 // chance an answer is held back
	stallMax int     // ticks an answer is held back at most
	deadlock float64 // chance a statement fails with a spurious 40P01
	noLocks  bool    // broken concurrency control: never blocks, loses updates
	crashAt  int     // simulation step at which the replica crashes; 0 never
	// errs: chance a statement that would succeed fails with a unique
	// violation (23505) instead, as a primary that fails chosen
	// statements would.
	errs float64
	// corrupt: chance a COMMIT writes, to one key the transaction wrote,
	// another value than the one its statements answered with (silent
	// corruption: the answers were right, the stored data is not).
	corrupt float64
	// claims: the replica's log table holds a barrier this far beyond the
	// write-ahead log's last, as a replica lying about what it committed
	// (or restored from another cluster's backup) does; 0 never.
	claims int
	// mute: chance a statement's answer is never sent, while the replica
	// goes on answering everything else and its probes (selective
	// silence, paper 3.4): only coord.Config.OpTicks notices it.
	mute float64
}

func (f faults) faulty() bool { return f != faults{} }

func (f faults) String() string {
	s := ""
	add := func(format string, args ...any) {
		if s != "" {
			s += "+"
		}
		s += fmt.Sprintf(format, args...)
	}
	if f.lie > 0 {
		add("liar(%.2f)", f.lie)
	}
	if f.stall > 0 {
		add("staller(%.2f,%dt)", f.stall, f.stallMax)
	}
	if f.mute > 0 {
		add("mute(%.2f)", f.mute)
	}
	if f.deadlock > 0 {
		add("deadlocker(%.2f)", f.deadlock)
	}
	if f.noLocks {
		add("nolocks")
	}
	if f.crashAt > 0 {
		add("crash@%d", f.crashAt)
	}
	if f.errs > 0 {
		add("erring(%.2f)", f.errs)
	}
	if f.corrupt > 0 {
		add("corrupt(%.2f)", f.corrupt)
	}
	if f.claims > 0 {
		add("claims(+%d)", f.claims)
	}
	if s == "" {
		return "correct"
	}
	return s
}

// attemptState is where an attempt of a transaction stands at a fake.
type attemptState uint8

const (
	// open: the engine transaction is running.
	open attemptState = iota
	// failed: an error rolled the engine transaction back; later
	// statements fail with 25P02 until COMMIT or ROLLBACK ends it.
	failed
	committed
	rolledBack
	// aborted: the coordinator's Abort rolled it back.
	aborted
)

func (s attemptState) String() string {
	return [...]string{"open", "failed", "committed", "rolled back", "aborted"}[s]
}

// attempt is one try of one transaction at one fake: one engine
// transaction on one connection, running its ops in the order sent.
type attempt struct {
	txn   coord.TxnID
	try   int
	state attemptState
	queue []coord.Op // sent, not yet run
	// nextSeq is the Seq the next statement sent must have; endSent is set
	// once COMMIT or ROLLBACK was sent, commitSent once COMMIT was.
	nextSeq             int
	endSent, commitSent bool
	// cancelled: a ROLLBACK was sent; statements still queued are
	// cancelled (57014), as the shell's worker does.
	cancelled bool
	busy      bool // an answer of this attempt is on its way
	// blocked: the head statement waits for waitFor (lock holders, or the
	// transaction owning a serial engine). Cleared whenever the fake
	// releases something, so that the statement tries again.
	blocked bool
	waitFor []*attempt
	writes  []kv // uncommitted writes, in order
	held    []int
	// marks are the savepoints set: len(writes) then, by number.
	// inError: an mvcc attempt failed a statement (stmtAddCheck) and,
	// as PostgreSQL does, answers 25P02 until a ROLLBACK TO.
	marks   map[int]int
	inError bool
}

type kv struct{ k, v int }

func (a *attempt) ended() bool { return a.state >= committed }

func (a *attempt) String() string { return fmt.Sprintf("t%d try%d", a.txn, a.try) }

// keyLock is the lock state of one key at a locking (or MVCC) fake.
type keyLock struct {
	x *attempt   // exclusive holder
	s []*attempt // shared holders
}

// answerMsg is an answer on its way from a fake to the coordinator.
type answerMsg struct {
	a    *attempt
	op   coord.Op
	vote coord.Vote
	val  int
	due  int // first tick at which it may arrive
}

// answerRec is the newest answer a fake gave to an op, kept so that a
// Reply naming the fake can be turned into what the client sees.
type answerRec struct {
	try  int
	vote coord.Vote
	val  int
}

// fake is a simulated SQL engine replica: committed state, attempts of
// transactions, and concurrency control according to its class.
type fake struct {
	id        coord.ReplicaID
	class     driver.Class
	faults    faults
	rng       *rand.Rand
	committed store
	locks     []keyLock
	// token is the transaction a serial engine is running.
	token *attempt
	// open holds the attempts not ended, in the order they began.
	open []*attempt
	// latest is the newest attempt of each transaction, ended or not.
	latest   map[coord.TxnID]*attempt
	inflight []answerMsg
	answers  map[coord.Op]answerRec
	down     bool
	note     func(format string, args ...any) // verbose trace; may be nil
	// ddlCommits: DDL statements commit here as they run (MariaDB).
	ddlCommits bool
	// retired: the core retired it (coord.Retire); it never comes back.
	retired bool
	// done records the transactions committed here (what a replica's
	// log table tells shepherd's recovery).
	done map[coord.TxnID]bool
	// A crashed replica comes back (runs with a write-ahead log) at step
	// rejoinAt; joining while it catches up to barrier catchTo; rejoined
	// once it has.
	rejoinAt          int
	joining, rejoined bool
	catchTo           int
}

func newFake(id coord.ReplicaID, class driver.Class, fl faults, initial store, rng *rand.Rand) *fake {
	return &fake{
		id: id, class: class, faults: fl, rng: rng,
		committed: slices.Clone(initial),
		locks:     make([]keyLock, len(initial)),
		latest:    map[coord.TxnID]*attempt{},
		answers:   map[coord.Op]answerRec{},
		done:      map[coord.TxnID]bool{},
	}
}

func (f *fake) logf(format string, args ...any) {
	if f.note != nil {
		f.note("r%d "+format, append([]any{f.id}, args...)...)
	}
}

// send queues op of attempt try. nstmts is the number of statements the
// client submitted in the transaction. It returns a description of the
// coordinator's mistake when the Send breaks the contract of coord.Send.
func (f *fake) send(op coord.Op, try, nstmts int) string {
	if f.down {
		return ""
	}
	a := f.latest[op.Txn]
	if a == nil || try > a.try {
		if bad := f.checkNewTry(a, op, try, nstmts); bad != "" {
			return bad
		}
		a = &attempt{txn: op.Txn, try: try}
		f.latest[op.Txn] = a
		f.open = append(f.open, a)
	} else if try < a.try {
		return fmt.Sprintf("send r%d %v try %d after try %d began there", f.id, op, try, a.try)
	}
	if a.state == aborted {
		if op.Kind != coord.OpRollback {
			return fmt.Sprintf("send r%d %v try %d after that try was aborted", f.id, op, try)
		}
		// Nothing is left to roll back: a fresh connection answers the
		// ROLLBACK at once, as the shell's worker would.
		f.open = append(f.open, &attempt{txn: op.Txn, try: try, endSent: true, queue: []coord.Op{op}})
		return ""
	}
	if a.endSent {
		return fmt.Sprintf("send r%d %v try %d after its COMMIT/ROLLBACK", f.id, op, try)
	}
	switch op.Kind {
	case coord.OpStmt:
		if op.Seq != a.nextSeq {
			return fmt.Sprintf("send r%d %v try %d out of order: statement %d expected", f.id, op, try, a.nextSeq)
		}
		a.nextSeq++
	case coord.OpCommit:
		if a.nextSeq != nstmts {
			return fmt.Sprintf("send r%d %v try %d after %d of its %d statements", f.id, op, try, a.nextSeq, nstmts)
		}
		a.endSent, a.commitSent = true, true
	case coord.OpRollback:
		a.endSent, a.cancelled, a.blocked = true, true, false
	}
	a.queue = append(a.queue, op)
	return ""
}

func (f *fake) checkNewTry(old *attempt, op coord.Op, try, nstmts int) string {
	switch {
	case old != nil && old.state == committed:
		return fmt.Sprintf("send r%d %v try %d: try %d already committed there", f.id, op, try, old.try)
	case old != nil && !old.ended():
		return fmt.Sprintf("send r%d %v try %d while try %d is still open there (no Abort)", f.id, op, try, old.try)
	case op.Kind == coord.OpStmt && op.Seq != 0:
		return fmt.Sprintf("send r%d %v try %d: a try must start at statement 0", f.id, op, try)
	case op.Kind == coord.OpCommit && nstmts > 0:
		return fmt.Sprintf("send r%d %v try %d: COMMIT of a try that ran no statement", f.id, op, try)
	}
	return ""
}

// abort rolls back attempt try of txn, as the shell does for coord.Abort.
func (f *fake) abort(txn coord.TxnID, try int) string {
	a := f.latest[txn]
	if f.down || a == nil || a.try != try || a.state == aborted || a.state == rolledBack {
		return ""
	}
	if a.state == committed {
		return fmt.Sprintf("abort r%d t%d try %d after it committed there", f.id, txn, try)
	}
	if a.commitSent {
		return fmt.Sprintf("abort r%d t%d try %d after its COMMIT was sent (the outcome would be unknown)", f.id, txn, try)
	}
	f.logf("aborts %v", a)
	f.end(a, aborted)
	return ""
}

// end finishes attempt a in state st: its locks and uncommitted writes
// go, and whatever waited for them tries again.
func (f *fake) end(a *attempt, st attemptState) {
	f.release(a)
	a.state, a.queue, a.blocked = st, nil, false
	f.open = slices.DeleteFunc(f.open, func(b *attempt) bool { return b == a })
}

// release rolls back a's engine transaction (its writes are dropped unless
// committed first) and wakes every waiter.
func (f *fake) release(a *attempt) {
	for _, k := range a.held {
		l := &f.locks[k]
		if l.x == a {
			l.x = nil
		}
		l.s = slices.DeleteFunc(l.s, func(b *attempt) bool { return b == a })
	}
	a.held, a.writes = nil, nil
	if f.token == a {
		f.token = nil
	}
	for _, b := range f.open {
		b.blocked = false
	}
}

// runnable reports whether a's next op can be tried now.
func (f *fake) runnable(a *attempt) bool {
	return !f.down && !a.busy && !a.blocked && len(a.queue) > 0
}

// step runs a's next op; q is the statement when the op is one. The op
// either blocks (no answer yet) or produces an answer on its way.
func (f *fake) step(a *attempt, q stmt, tick int) {
	op := a.queue[0]
	switch op.Kind {
	case coord.OpRollback:
		f.end(a, rolledBack)
		f.answer(a, op, coord.Vote{}, 0, tick)
	case coord.OpCommit:
		f.commit(a, op, tick)
	default:
		f.statement(a, op, q, tick)
	}
}

func (f *fake) commit(a *attempt, op coord.Op, tick int) {
	if a.state == failed {
		f.end(a, rolledBack)
		f.answer(a, op, coord.Vote{Code: pgerr.InFailedSQLTransaction}, 0, tick)
		return
	}
	bad := -1
	if len(a.writes) > 0 && f.faults.corrupt > 0 && f.rng.Float64() < f.faults.corrupt {
		bad = f.rng.IntN(len(a.writes))
	}
	for i, w := range a.writes {
		f.committed[w.k] = w.v
		if i == bad {
			f.committed[w.k] = w.v + 1 + f.rng.IntN(5)
			f.logf("%v commits k%d=%d, not the %d it answered with", a, w.k, f.committed[w.k], w.v)
		}
	}
	a.writes = nil
	f.done[a.txn] = true
	f.end(a, committed)
	f.logf("commits %v", a)
	f.answer(a, op, coord.Vote{}, 0, tick)
}

func (f *fake) statement(a *attempt, op coord.Op, q stmt, tick int) {
	switch {
	case a.cancelled:
		f.answer(a, op, coord.Vote{Code: pgerr.QueryCanceled}, 0, tick)
		return
	case a.state == failed, a.inError && q.kind != stmtRollbackTo:
		f.answer(a, op, coord.Vote{Code: pgerr.InFailedSQLTransaction}, 0, tick)
		return
	}
	switch q.kind {
	case stmtSavepoint:
		if a.marks == nil {
			a.marks = map[int]int{}
		}
		a.marks[q.k] = len(a.writes)
		f.answer(a, op, voteFor(0), 0, tick)
		return
	case stmtRollbackTo:
		m, ok := a.marks[q.k]
		if !ok {
			// An engine's answer to a savepoint it does not have.
			f.answer(a, op, coord.Vote{Code: "3B001"}, 0, tick)
			return
		}
		a.writes = a.writes[:m]
		a.inError = false
		f.answer(a, op, voteFor(0), 0, tick)
		return
	}
	if holders := f.acquire(a, q); len(holders) > 0 {
		a.blocked, a.waitFor = true, holders
		if !f.deadlocked(a) {
			f.logf("%v %v waits for %v", a, q, holders)
			return
		}
		f.logf("%v %v deadlocks with %v", a, q, holders)
		f.fail(a, op, tick)
		return
	}
	if f.faults.deadlock > 0 && f.rng.Float64() < f.faults.deadlock {
		f.logf("%v %v: spurious deadlock", a, q)
		f.fail(a, op, tick)
		return
	}
	if q.kind == stmtDDL && f.ddlCommits {
		// Committed as it runs, with whatever the attempt held before
		// (an implicit commit): its rollback cannot undo it, and it holds
		// no lock afterwards.
		for _, w := range a.writes {
			f.committed[w.k] = w.v
		}
		f.committed[q.k] = q.d
		f.logf("%v %v commits at once", a, q)
		f.release(a)
		f.answer(a, op, voteFor(1), 1, tick)
		return
	}
	if f.faults.errs > 0 && f.rng.Float64() < f.faults.errs {
		f.logf("%v %v: spurious unique violation", a, q)
		f.failWith(a, op, pgerr.UniqueViolation, tick)
		return
	}
	if q.fails(a.get(f.committed)) {
		// The statement alone fails (its lock stays); PostgreSQL fails
		// the transaction until ROLLBACK TO.
		a.inError = f.class == driver.MVCC
		f.answer(a, op, coord.Vote{Code: pgerr.CheckViolation}, 0, tick)
		return
	}
	v := q.run(a.get(f.committed), a.put)
	if f.faults.lie > 0 && f.rng.Float64() < f.faults.lie {
		v += 1 + f.rng.IntN(3)
	}
	f.answer(a, op, voteFor(v), v, tick)
}

// fail ends a's engine transaction with a deadlock error, as an engine
// does to the victim it picks.
func (f *fake) fail(a *attempt, op coord.Op, tick int) {
	f.failWith(a, op, pgerr.DeadlockDetected, tick)
}

// failWith ends a's engine transaction with an error of code, as
// PostgreSQL does on any error (the attempt answers 25P02 from then on).
func (f *fake) failWith(a *attempt, op coord.Op, code string, tick int) {
	f.release(a)
	a.state, a.blocked = failed, false
	f.answer(a, op, coord.Vote{Code: code}, 0, tick)
}

func (a *attempt) get(committed store) func(k int) int {
	return func(k int) int {
		for i := len(a.writes) - 1; i >= 0; i-- {
			if a.writes[i].k == k {
				return a.writes[i].v
			}
		}
		return committed[k]
	}
}

func (a *attempt) put(k, v int) { a.writes = append(a.writes, kv{k, v}) }

// answer puts a's answer to op on its way; a runs nothing more until it
// arrived.
func (f *fake) answer(a *attempt, op coord.Op, v coord.Vote, val, tick int) {
	if len(a.queue) > 0 && a.queue[0] == op {
		a.queue = a.queue[1:] // an ended attempt's queue is gone already
	}
	due := tick
	if f.faults.stall > 0 && f.rng.Float64() < f.faults.stall {
		due += 1 + f.rng.IntN(f.faults.stallMax)
	}
	if f.faults.mute > 0 && op.Kind == coord.OpStmt && f.rng.Float64() < f.faults.mute {
		due = math.MaxInt // never: the answer stays on the wire
	}
	a.busy = true
	f.inflight = append(f.inflight, answerMsg{a: a, op: op, vote: v, val: val, due: due})
}

// deliver takes answer i off the wire and records it.
func (f *fake) deliver(i int) answerMsg {
	m := f.inflight[i]
	f.inflight = slices.Delete(f.inflight, i, i+1)
	m.a.busy = false
	if old, ok := f.answers[m.op]; !ok || m.a.try >= old.try {
		f.answers[m.op] = answerRec{try: m.a.try, vote: m.vote, val: m.val}
	}
	return m
}

// acquire takes the locks statement q of a needs, all or none. It returns
// the attempts in the way, or nil when a may run q now.
func (f *fake) acquire(a *attempt, q stmt) []*attempt {
	switch {
	case f.faults.noLocks:
		return nil
	case f.class == driver.Serial:
		if f.token != nil && f.token != a {
			return []*attempt{f.token}
		}
		f.token = a
		return nil
	}
	ls := q.locks()
	if f.class == driver.MVCC {
		// READ COMMITTED reads take no locks: only what it writes.
		ls = slices.DeleteFunc(ls, func(l lockReq) bool { return !l.exclusive })
	}
	var in []*attempt
	for _, l := range ls {
		in = f.conflicts(in, a, l.k, l.exclusive)
	}
	if len(in) > 0 {
		return in
	}
	for _, l := range ls {
		f.lock(a, l.k, l.exclusive)
	}
	return nil
}

// conflicts appends to in the holders of key k that keep a from locking it.
func (f *fake) conflicts(in []*attempt, a *attempt, k int, exclusive bool) []*attempt {
	l := &f.locks[k]
	add := func(b *attempt) {
		if b != a && !slices.Contains(in, b) {
			in = append(in, b)
		}
	}
	if l.x != nil {
		add(l.x)
	}
	if exclusive {
		for _, b := range l.s {
			add(b)
		}
	}
	return in
}

func (f *fake) lock(a *attempt, k int, exclusive bool) {
	l := &f.locks[k]
	switch {
	case exclusive:
		l.x = a
	case l.x == a || slices.Contains(l.s, a):
		return
	default:
		l.s = append(l.s, a)
	}
	if !slices.Contains(a.held, k) {
		a.held = append(a.held, k)
	}
}

// deadlocked reports whether blocked attempt a waits, through other
// blocked attempts, for itself.
func (f *fake) deadlocked(a *attempt) bool {
	stack := slices.Clone(a.waitFor)
	var seen []*attempt
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b == a {
			return true
		}
		if slices.Contains(seen, b) {
			continue
		}
		seen = append(seen, b)
		if b.blocked {
			stack = append(stack, b.waitFor...)
		}
	}
	return false
}

// crash takes the fake out: its connections are gone, and with them every
// open attempt and every answer on its way.
// crashOnly reports whether the fake's only fault is a crash.
func (f *fake) crashOnly() bool {
	return f.faults.crashAt > 0 && f.faults == faults{crashAt: f.faults.crashAt}
}

func (f *fake) crash() {
	f.disconnect()
	f.down = true
}

// disconnect drops every connection to the fake, as when shepherd
// itself goes away: every open attempt rolls back, and answers on their
// way are lost.
func (f *fake) disconnect() {
	for len(f.open) > 0 {
		f.end(f.open[0], aborted)
	}
	f.inflight = nil
}

// dialect is the tag of the fake's dialect in the write-ahead log's
// forms (wal.Form.Dialect, never 0): one per class, as each engine speaks
// its own.
func (f *fake) dialect() uint8 { return uint8(f.class) + 1 }

// describe lists what the fake is doing, for failure reports; status
// says where a transaction stands at the client and the core.
func (f *fake) describe(status func(coord.TxnID) string) string {
	s := fmt.Sprintf("r%d %v %v down=%v committed=%v", f.id, f.class, f.faults, f.down, f.committed)
	for _, a := range f.open {
		s += fmt.Sprintf("\n    %v (%s) %v queue=%v busy=%v blocked=%v", a, status(a.txn), a.state, a.queue, a.busy, a.blocked)
		if a.blocked {
			s += fmt.Sprintf(" on %v", a.waitFor)
		}
	}
	for _, m := range f.inflight {
		s += fmt.Sprintf("\n    answer %v try%d %v due at tick %d", m.op, m.a.try, m.vote, m.due)
	}
	return s
}
