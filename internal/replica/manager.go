// Package replica runs operations on one replica database on behalf of the
// coordinator: the I/O shell around a driver.Engine.
//
// A Manager keeps a pool of idle engine connections and, for every
// transaction that has operations on the replica, one worker goroutine
// that owns one connection and runs that transaction's operations in the
// order they were submitted. Ordering between transactions is not the
// manager's business: the coordinator sends a transaction's operations
// only when the scheduling rules allow them to run.
package replica

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Task is one operation for the replica.
type Task struct {
	Op coord.Op
	// Try numbers the attempts of a transaction on this replica: each runs
	// on its own engine transaction (see coord.Send).
	Try int
	// Query is the statement in the replica's dialect (OpStmt only).
	Query driver.Query
	// Ordered says the statement's rows are compared in order.
	Ordered bool
	// SortKeys, when not Ordered, are the columns the rows are sorted by
	// (answer.DigestSorted).
	SortKeys []int
	// Hints are the PostgreSQL types of the result columns, the same for
	// every replica, for reading their answers alike (answer.DigestWith).
	Hints []answer.Column
	// Barrier, for a COMMIT, is the transaction's commit barrier in the
	// write-ahead log: the commit also records it in the replica's log
	// table. 0 when there is no write-ahead log.
	Barrier uint64
	// DigestRows: an answer of more rows than this is reported as its
	// digest only (Result.Digested); -1 keeps it whole.
	DigestRows int
	// Memory bounds the bytes of an answer's rows kept in memory
	// (answer.RowSize); past it the rows are spilled to a file in
	// SpillDir when Spill says so, else dropped (Result.Overflow). Either
	// way every row still goes into the vote's digest. 0 or less: no
	// bound.
	Memory   int64
	Spill    bool
	SpillDir string
	// CountRows, when positive, replaces the row count the engine reports
	// (the dialect counts otherwise; see dialect.Form).
	CountRows int64
	// TxOptions start the transaction, when this is its first task here.
	TxOptions driver.TxOptions
	// NoVote says nothing is voted on (one replica, passthrough): the
	// answer's digest is not computed.
	NoVote bool
	// Autocommit runs the transaction's single statement in the engine's
	// own autocommit: no BEGIN, and its COMMIT or ROLLBACK costs nothing.
	// Only for transactions whose statement needs no undo (see
	// cluster.Txn.Exec).
	Autocommit bool

	// silent marks the rollback of an aborted attempt: nobody waits for
	// its result.
	silent bool
}

// Result is the outcome of a task.
type Result struct {
	R      coord.ReplicaID
	Op     coord.Op
	Try    int
	Answer *answer.Answer // nil on error, and for COMMIT/ROLLBACK
	Err    *pgerr.Error
	Vote   coord.Vote
	// Digested says Answer's rows were dropped once Vote held their
	// digest (Task.DigestRows): it must not be sent to a client.
	Digested bool
	// Overflow, when set, says Answer's rows could not be kept (past
	// Task.Memory without Spill, or the spill failed) and were dropped
	// once Vote held their digest: it must not be sent to a client,
	// who gets this error instead.
	Overflow *pgerr.Error
}

// Manager runs tasks on one replica. Submit and Cancel are safe for
// concurrent use and never block on the replica.
type Manager struct {
	id     coord.ReplicaID
	name   string
	engine driver.Engine
	log    *slog.Logger
	report func(Result)

	mu struct {
		sync.Mutex
		workers map[attempt]*worker
		idle    []driver.Conn
		closed  bool
		// slotHolder holds slot while slotHeld (see Blockers).
		slotHolder attempt
		slotHeld   bool
		// runners are goroutines parked after their worker ended, each
		// waiting on its channel for the next worker to run: a
		// transaction's worker then runs on a goroutine whose stack
		// has grown already, with no goroutine made per transaction
		// (autocommit statements are each a transaction).
		runners []chan *worker
	}
	// wg counts the runner goroutines, parked or running a worker.
	wg sync.WaitGroup
	// aborts counts AbortAll's calls (changed with m.mu held; see Run).
	aborts atomic.Uint64
	// slot, for engines of the serial class, admits one engine
	// transaction at a time (see worker.open).
	slot chan struct{}
	// epoch is the term of the cluster node this manager commits for; 0
	// (a single-node shepherd) writes LogInsert, unfenced, as always.
	// Above 0 each commit writes LogInsertFenced, the fence's check.
	epoch atomic.Uint64
}

// SetEpoch sets the term whose commits this manager writes from now on
// (docs/DESIGN.md, section 9). The node raises the replica's fence to
// epoch (FenceRaise) before its first commit with it.
func (m *Manager) SetEpoch(epoch uint64) { m.epoch.Store(epoch) }

// logInsert is the commit's row in LogTable: fenced when the manager
// commits for a term of a cluster.
func (m *Manager) logInsert(b uint64) driver.Query {
	if e := m.epoch.Load(); e > 0 {
		return LogInsertFenced(m.engine.Dialect(), b, e)
	}
	return LogInsert(m.engine.Dialect(), b)
}

// lostTermMessage starts the error of a commit the replica's fence
// refused (IsLostTerm tells it from a replica's fault).
const lostTermMessage = "this shepherd node lost its term"

// lostTerm turns the fence's refusal of a commit at epoch into the error
// that says the node is deposed: the replica did nothing wrong, and the
// transaction did not commit there.
func lostTerm(err error, epoch uint64, replica string) error {
	if !IsFenced(err) {
		return err
	}
	return &pgerr.Error{
		Code:     pgerr.AdminShutdown,
		Severity: pgerr.SeverityError,
		Message:  lostTermMessage + " (epoch " + strconv.FormatUint(epoch, 10) + "): a newer leader fenced replica " + replica + "; the transaction did not commit",
		Replica:  replica,
	}
}

// IsLostTerm reports whether err is a commit refused by a replica's
// fence: the node lost its term. It is never a fault of the replica, so
// it must not count against it nor take it out.
func IsLostTerm(err error) bool {
	if err == nil {
		return false
	}
	e := pgerr.From(err)
	return e.Code == pgerr.AdminShutdown && strings.HasPrefix(e.Message, lostTermMessage)
}

// attempt names one engine transaction: a try of a shepherd transaction.
type attempt struct {
	txn coord.TxnID
	try int
}

// maxIdle bounds the pool of idle connections kept per replica.
const maxIdle = 64

// maxRunners bounds the parked runner goroutines kept per replica.
const maxRunners = 64

// New returns a manager for engine. report receives every task's result,
// from the manager's goroutines; it must not block for long.
func New(id coord.ReplicaID, name string, engine driver.Engine, log *slog.Logger, report func(Result)) *Manager {
	m := &Manager{id: id, name: name, engine: engine, log: log.With("replica", name), report: report}
	m.mu.workers = map[attempt]*worker{}
	if engine.Class() == driver.Serial {
		m.slot = make(chan struct{}, 1)
	}
	return m
}

// Name returns the replica's name.
func (m *Manager) Name() string { return m.name }

// Engine returns the replica's engine.
func (m *Manager) Engine() driver.Engine { return m.engine }

// Submit queues a task. Tasks of one transaction run in submission order;
// COMMIT and ROLLBACK end the transaction's worker.
func (m *Manager) Submit(t Task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		go m.report(Result{R: m.id, Op: t.Op, Try: t.Try, Err: closedErr(m.name), Vote: coord.Vote{Code: pgerr.ConnectionFailure}})
		return
	}
	key := attempt{t.Op.Txn, t.Try}
	w := m.mu.workers[key]
	if w == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w = &worker{m: m, key: key, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), gone: make(chan struct{})}
		m.mu.workers[key] = w
		m.startLocked(w)
	}
	if t.Op.Kind == coord.OpRollback {
		// The client gave up on the transaction: stop whatever of it is
		// running rather than let the rollback wait behind it.
		w.cancelRunning(true)
	}
	w.push(t)
}

func closedErr(name string) *pgerr.Error {
	return pgerr.New(pgerr.ConnectionFailure, "replica %s is shut down", name)
}

// Inline reports whether Run may be used: not on a serial engine, whose
// one transaction slot a worker waits for.
func (m *Manager) Inline() bool { return m.slot == nil }

// Aborts returns how many times AbortAll gave up the attempts running
// here so far: taken when Run's task is decided on (Run's since).
func (m *Manager) Aborts() uint64 { return m.aborts.Load() }

// Run runs t on the calling goroutine and returns its result instead of
// reporting it. It is for a transaction the engine runs in its own
// autocommit (Task.Autocommit) whose caller waits for the answer anyway
// (passthrough): handing the statement to a worker goroutine and its
// answer back, twice per statement with the COMMIT, cost more CPU than
// the rest of the proxy's hop (BenchmarkPassthroughHop). A statement
// takes a pooled connection and gives it back once it ran (the engine
// committed it or rolled it back by itself); the COMMIT and ROLLBACK that
// follow have nothing to do on the engine. While the statement runs it is
// registered as a worker is, so Cancel, CancelOp, Abort, AbortAll, Close
// and Blockers reach it; ctx ending stops it too. Only where Inline
// says so, and only for the first task of an attempt: no worker may run
// the attempt. since is Aborts when t was decided on: Run registers the
// statement only later, so an AbortAll in between (the replica taken
// out) would not reach it; then it does not run (as a worker's
// statement is stopped: whoever sent it may have been told of a failure
// already).
func (m *Manager) Run(ctx context.Context, t *Task, since uint64) Result {
	res := Result{R: m.id, Op: t.Op, Try: t.Try}
	if t.Op.Kind != coord.OpStmt {
		// The engine committed the statement by itself, or rolled it
		// back (as a worker's autocommit transaction ends).
		return res
	}
	key := attempt{t.Op.Txn, t.Try}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &worker{m: m, key: key, ctx: tctx, cancel: cancel, task: tctx, taskCancel: cancel, inline: true}
	w.mu.current = t.Op
	m.mu.Lock()
	switch {
	case m.mu.closed:
		res.Err = closedErr(m.name)
	case m.aborts.Load() != since:
		res.Err = withReplica(pgerr.New(pgerr.ConnectionFailure, "replica %s was taken out before the statement started", m.name), m.name)
	case m.mu.workers[key] != nil:
		res.Err = withReplica(pgerr.New(pgerr.InternalError, "attempt %d of transaction %d already runs here", t.Try, uint64(t.Op.Txn)), m.name)
	}
	if res.Err != nil {
		m.mu.Unlock()
		res.Vote.Code = res.Err.Code
		return res
	}
	m.mu.workers[key] = w
	m.mu.Unlock()
	defer m.removeWorker(key)
	conn, err := m.conn(tctx)
	if err != nil {
		res.Err = withReplica(pgerr.Wrap(pgerr.ConnectionFailure, err, "cannot connect"), m.name)
		if ctx.Err() != nil {
			// The caller's cancel (the client's, statement_timeout)
			// stopped the connect: the statement was cancelled, as a
			// worker's is once its connect (under the worker's own
			// context) is done, not failed by an engine out of reach.
			res.Err = withReplica(pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request"), m.name)
		}
		res.Vote.Code = res.Err.Code
		return res
	}
	w.setBackend(conn)
	col := newCollector(t)
	res.Answer, res.Err = w.exec(conn, *t, col)
	var broken *pgerr.Error
	w.settle(t, &res, col, &conn, &broken) // closes a broken connection
	w.setBackend(nil)
	if conn != nil {
		m.putConn(conn)
	}
	return res
}

// Cancel stops the statement transaction txn is running here, or the one
// it is about to run: the cancel may overtake the statement on its way to
// the worker. Later statements of txn are cancelled too; a cancelled
// transaction only ever rolls back (the client got 57014 for it).
func (m *Manager) Cancel(txn coord.TxnID) {
	for _, w := range m.workersOf(txn) {
		w.cancelRunning(true)
	}
}

// workersOf returns the workers of every attempt of txn.
func (m *Manager) workersOf(txn coord.TxnID) []*worker {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ws []*worker
	for k, w := range m.mu.workers {
		if k.txn == txn {
			ws = append(ws, w)
		}
	}
	return ws
}

// Blockers returns the transactions holding, in this replica's engine, a
// lock that an attempt of txn waits for (driver.LockWaits), or the
// transaction slot of a serial engine; none when it waits for none, or
// the engine cannot tell.
func (m *Manager) Blockers(ctx context.Context, txn coord.TxnID) ([]coord.TxnID, error) {
	var mine []int64
	var out []coord.TxnID
	owner := map[int64]coord.TxnID{}
	m.mu.Lock()
	for k, w := range m.mu.workers {
		w.mu.Lock()
		b, slotWait := w.mu.backend, w.mu.slotWait
		w.mu.Unlock()
		if k.txn == txn && slotWait && m.mu.slotHeld && m.mu.slotHolder.txn != txn {
			// A serial engine's one transaction slot is held until
			// that transaction ends.
			out = append(out, m.mu.slotHolder.txn)
		}
		if b == 0 {
			continue
		}
		owner[b] = k.txn
		if k.txn == txn {
			mine = append(mine, b)
		}
	}
	m.mu.Unlock()
	lw, ok := m.engine.(driver.LockWaits)
	if !ok {
		return out, nil
	}
	for _, b := range mine {
		ids, err := lw.Blockers(ctx, b)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if t, ok := owner[id]; ok && t != txn {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// CancelOp stops op of a transaction if it is running or waiting here; if
// it already finished, nothing happens (unlike Cancel, nothing sticks).
func (m *Manager) CancelOp(op coord.Op) {
	for _, w := range m.workersOf(op.Txn) {
		w.cancelOp(op)
	}
}

// Abort gives up attempt try of txn: its running statement is stopped,
// its queued ones fail, and it rolls back without reporting anything.
func (m *Manager) Abort(txn coord.TxnID, try int) {
	m.mu.Lock()
	w := m.mu.workers[attempt{txn, try}]
	m.mu.Unlock()
	if w == nil {
		return
	}
	w.cancelRunning(true)
	if w.inline {
		return // Run's statement ends with the cancel: nothing to roll back
	}
	w.push(Task{Op: coord.Op{Txn: txn, Kind: coord.OpRollback}, Try: try, silent: true})
}

// AbortAll gives up every attempt running here (the replica was taken
// out): running statements stop, open transactions roll back, and no
// result is reported.
func (m *Manager) AbortAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.aborts.Add(1)
	for _, w := range m.mu.workers {
		w.cancel()
	}
}

// DropIdle closes the pooled connections: after the replica was taken
// out they may lead to a server that is gone.
func (m *Manager) DropIdle() {
	m.mu.Lock()
	idle := m.mu.idle
	m.mu.idle = nil
	m.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// startLocked runs w on a parked runner, or on a new one. m.mu is held.
func (m *Manager) startLocked(w *worker) {
	if n := len(m.mu.runners); n > 0 {
		ch := m.mu.runners[n-1]
		m.mu.runners = m.mu.runners[:n-1]
		ch <- w // buffered, and only the runner popped here sends
		return
	}
	m.wg.Add(1)
	go m.runner(w)
}

// runner runs w, then parks for the next worker until the manager
// closes (a nil worker) or enough runners are parked.
func (m *Manager) runner(w *worker) {
	defer m.wg.Done()
	var next chan *worker
	for w != nil {
		w.run()
		m.mu.Lock()
		if m.mu.closed || len(m.mu.runners) >= maxRunners {
			m.mu.Unlock()
			return
		}
		if next == nil {
			next = make(chan *worker, 1)
		}
		m.mu.runners = append(m.mu.runners, next)
		m.mu.Unlock()
		w = <-next
	}
}

// Close stops accepting tasks, cancels running ones, waits for the
// workers and closes the pooled connections.
func (m *Manager) Close() {
	m.mu.Lock()
	m.mu.closed = true
	for _, w := range m.mu.workers {
		w.cancel()
	}
	for _, ch := range m.mu.runners {
		ch <- nil
	}
	m.mu.runners = nil
	m.mu.Unlock()
	m.wg.Wait()
	m.mu.Lock()
	idle := m.mu.idle
	m.mu.idle = nil
	m.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// conn takes an idle connection or opens one.
func (m *Manager) conn(ctx context.Context) (driver.Conn, error) {
	m.mu.Lock()
	if n := len(m.mu.idle); n > 0 {
		c := m.mu.idle[n-1]
		m.mu.idle = m.mu.idle[:n-1]
		m.mu.Unlock()
		return c, nil
	}
	m.mu.Unlock()
	return m.engine.Connect(ctx)
}

// putConn returns a healthy connection to the pool.
func (m *Manager) putConn(c driver.Conn) {
	m.mu.Lock()
	if m.mu.closed || len(m.mu.idle) >= maxIdle {
		m.mu.Unlock()
		c.Close()
		return
	}
	m.mu.idle = append(m.mu.idle, c)
	m.mu.Unlock()
}

func withReplica(err error, name string) *pgerr.Error {
	if err == nil {
		return nil
	}
	e := *pgerr.From(err)
	if e.Replica == "" {
		e.Replica = name
	}
	return &e
}

func (m *Manager) removeWorker(key attempt) {
	m.mu.Lock()
	delete(m.mu.workers, key)
	m.mu.Unlock()
}
