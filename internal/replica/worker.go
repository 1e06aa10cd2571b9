package replica

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// rollbackTimeout bounds a rollback; past it the connection is dropped.
const rollbackTimeout = 10 * time.Second

// worker runs the tasks of one transaction on one connection.
type worker struct {
	m      *Manager
	key    attempt
	ctx    context.Context // ends when the manager closes
	cancel context.CancelFunc
	wake   chan struct{}
	// gone is closed when the attempt is given up (cancelRunning with
	// rest): a wait for the engine's transaction slot ends then.
	gone     chan struct{}
	goneOnce sync.Once
	gated    bool // holds the manager's transaction slot (serial engines)
	// inline: a statement Manager.Run runs on its caller's goroutine;
	// nothing is queued for it, and it has no gone channel.
	inline bool
	// task and taskCancel are the context of the running task (see
	// taskContext); only the worker's goroutine uses them.
	task       context.Context
	taskCancel context.CancelFunc

	mu struct {
		sync.Mutex
		queue     []Task
		runCancel context.CancelFunc // cancels the running task
		cancelled bool               // cancel the next task as soon as it starts
		// current is the task taken from the queue and not finished yet;
		// cancelOp, when set, is an op to fail with 57014 when it starts.
		current  coord.Op
		cancelOp *coord.Op
		// batch holds the statements running together (see runBatch),
		// which a cancel of any of them stops.
		batch []coord.Op
		// backend names the attempt's engine session (driver.Backend),
		// 0 while it has none (see Manager.Blockers).
		backend int64
		// slotWait: waiting for the manager's transaction slot.
		slotWait bool
	}
}

func (w *worker) push(t Task) {
	w.mu.Lock()
	w.mu.queue = append(w.mu.queue, t)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// cancelRunning cancels the running statement; with rest, statements
// still queued behind it are cancelled too (a rollback is coming).
func (w *worker) cancelRunning(rest bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.runCancel != nil {
		w.mu.runCancel()
	}
	if rest {
		w.mu.cancelled = true
		if w.gone != nil {
			w.goneOnce.Do(func() { close(w.gone) })
		}
	}
}

// cancelOp cancels op if it is running or still waiting here. An op that
// already finished is left alone, as PostgreSQL ignores a cancel that
// arrives between statements: the next statement must not pay for it.
func (w *worker) cancelOp(op coord.Op) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.mu.batch, op) {
		w.mu.runCancel()
		return
	}
	if w.mu.current == op {
		if w.mu.runCancel != nil {
			w.mu.runCancel()
		} else {
			w.mu.cancelOp = &op // taken from the queue, not started yet
			// It may wait for a serial engine's slot (open): wake it.
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
		return
	}
	for _, t := range w.mu.queue {
		if t.Op == op {
			w.mu.cancelOp = &op
			return
		}
	}
}

// next waits for the next task.
func (w *worker) next() Task {
	for {
		w.mu.Lock()
		if len(w.mu.queue) > 0 {
			t := w.mu.queue[0]
			w.mu.queue = w.mu.queue[1:]
			w.mu.current = t.Op
			w.mu.Unlock()
			return t
		}
		w.mu.Unlock()
		select {
		case <-w.wake:
		case <-w.ctx.Done():
			// The manager is closing or gave up on the replica: roll back
			// whatever is open and stop, telling nobody.
			return Task{Op: coord.Op{Txn: w.key.txn, Kind: coord.OpRollback}, Try: w.key.try, silent: true}
		}
	}
}

func (w *worker) run() {
	defer w.cancel()
	var conn driver.Conn
	var broken *pgerr.Error // set once the transaction cannot go on here
	autocommit := false
	for {
		t := w.next()
		last := t.Op.Kind != coord.OpStmt
		if conn == nil && broken == nil {
			autocommit = t.Autocommit
			conn, broken = w.open(t)
			w.setBackend(conn)
		}
		if b, ok := conn.(driver.Batcher); ok && !last && !autocommit && broken == nil {
			if ran := w.runBatch(b, t, &conn, &broken); ran {
				continue
			}
		}
		res := Result{R: w.m.id, Op: t.Op, Try: t.Try}
		var col *collector
		switch {
		case broken != nil && t.Op.Kind == coord.OpRollback:
			// Nothing to roll back on a connection that is gone.
		case broken != nil:
			res.Err = broken
		case autocommit && last:
			// The engine committed the statement by itself.
		default:
			if t.Op.Kind == coord.OpStmt {
				col = newCollector(&t)
			}
			res.Answer, res.Err = w.exec(conn, t, col)
		}
		w.settle(&t, &res, col, &conn, &broken)
		if conn == nil {
			w.setBackend(nil)
		}
		if last {
			w.setBackend(nil)
			switch {
			case conn == nil:
			case res.Err != nil:
				conn.Close() // its session state is unknown
			default:
				w.m.putConn(conn)
			}
			w.m.removeWorker(w.key)
			if !t.silent {
				w.m.report(res)
			}
			// The slot is freed only after the coordinator heard how this
			// transaction ended: a failed COMMIT must be known before the
			// next transaction may run on the engine.
			if w.gated {
				w.m.mu.Lock()
				w.m.mu.slotHeld = false
				w.m.mu.Unlock()
				<-w.m.slot
				w.gated = false
			}
			return
		}
		w.m.report(res)
	}
}

// slotWaiting records whether the attempt waits for the manager's
// transaction slot.
func (w *worker) slotWaiting(on bool) {
	w.mu.Lock()
	w.mu.slotWait = on
	w.mu.Unlock()
}

// setBackend records which engine session the attempt runs on.
func (w *worker) setBackend(conn driver.Conn) {
	var id int64
	if b, ok := conn.(driver.Backend); ok {
		id = b.Backend()
	}
	w.mu.Lock()
	w.mu.backend = id
	w.mu.Unlock()
}

// settle completes the result of t: its vote, and the answer as the
// coordinator wants it. A connection error leaves the attempt broken
// and closes the connection.
func (w *worker) settle(t *Task, res *Result, col *collector, conn *driver.Conn, broken **pgerr.Error) {
	if res.Err != nil {
		col.discard()
		res.Vote.Code = res.Err.Code
		if pgerr.IsConnection(res.Err) && *broken == nil {
			*broken = res.Err
			(*conn).Close()
			*conn = nil
		}
		return
	}
	if res.Answer == nil {
		return
	}
	if t.CountRows > 0 {
		res.Answer.RowsAffected = t.CountRows
		res.Answer.Tag = answer.Tag(t.Query.Verb, t.CountRows)
	}
	if col == nil {
		col = newCollector(t)
	}
	col.finish(res)
}

// maxBatch bounds the statements runBatch sends together.
const maxBatch = 64

// runBatch runs first together with the statements queued right behind
// it, in one round trip to the engine, and reports each as exec would
// have. It does nothing and returns false when no statement is queued
// behind first, or a cancel is pending. A replica that replays a
// transaction the primary already answered (a sequential secondary) gets
// all its statements at once: sent one by one, each would cost a round
// trip, and those round trips are what paces the replica.
func (w *worker) runBatch(b driver.Batcher, first Task, conn *driver.Conn, broken **pgerr.Error) bool {
	w.mu.Lock()
	queued := len(w.mu.queue) > 0 && w.mu.queue[0].Op.Kind == coord.OpStmt
	w.mu.Unlock()
	if !queued {
		return false // the common case on a primary: not worth a context
	}
	ctx, cancel := w.taskContext()
	batch := w.takeBatch(first, cancel)
	if batch == nil {
		return false
	}
	qs := make([]driver.Query, len(batch))
	cols := make([]*collector, len(batch))
	for i := range batch {
		cols[i] = newCollector(&batch[i])
		qs[i] = batch[i].Query
		qs[i].Sink = cols[i].row
	}
	answers, err := b.ExecBatch(ctx, qs)
	w.mu.Lock()
	w.mu.runCancel, w.mu.batch, w.mu.current = nil, nil, coord.Op{}
	w.mu.Unlock()
	failed := len(batch) // the statement that failed, if any
	if err != nil {
		failed = min(len(answers), len(batch)-1)
	}
	for i, t := range batch[:min(failed+1, len(batch))] {
		res := Result{R: w.m.id, Op: t.Op, Try: t.Try}
		if i == failed {
			res.Err = withReplica(err, w.m.name)
		} else {
			res.Answer = answers[i]
		}
		w.settle(&batch[i], &res, cols[i], conn, broken)
		w.m.report(res)
	}
	for _, c := range cols[min(failed+1, len(batch)):] {
		c.discard()
	}
	if failed+1 < len(batch) {
		// They did not run: they go back to the queue and meet the
		// failure (a failed transaction, a broken connection, a cancel)
		// one by one, as they would have without the batch.
		w.mu.Lock()
		w.mu.queue = slices.Concat(batch[failed+1:], w.mu.queue)
		w.mu.Unlock()
	}
	return true
}

// takeBatch takes the statements queued right behind first, at most
// maxBatch in all with it, and marks them running under cancel. It
// returns nil, taking nothing, if there are none or a cancel is pending.
func (w *worker) takeBatch(first Task, cancel context.CancelFunc) []Task {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.cancelled || w.mu.cancelOp != nil {
		return nil
	}
	n := 0
	for n < len(w.mu.queue) && n < maxBatch-1 && w.mu.queue[n].Op.Kind == coord.OpStmt {
		n++
	}
	if n == 0 {
		return nil
	}
	batch := make([]Task, 0, n+1)
	batch = append(append(batch, first), w.mu.queue[:n]...)
	w.mu.queue = w.mu.queue[n:]
	w.mu.batch = make([]coord.Op, len(batch))
	for i, t := range batch {
		w.mu.batch[i] = t.Op
	}
	w.mu.runCancel = cancel
	return batch
}

// open connects and begins the transaction.
func (w *worker) open(t Task) (driver.Conn, *pgerr.Error) {
	if w.m.slot != nil {
		// A serial engine runs one transaction at a time: wait for the
		// slot here rather than in the engine's busy handler, which polls
		// with sleeps.
		w.slotWaiting(true)
	wait:
		for {
			select {
			case w.m.slot <- struct{}{}:
				w.gated = true
				w.m.mu.Lock()
				w.m.mu.slotHolder, w.m.mu.slotHeld = w.key, true
				w.m.mu.Unlock()
				w.slotWaiting(false)
				break wait
			case <-w.gone:
				w.slotWaiting(false)
				return nil, withReplica(pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request"), w.m.name)
			case <-w.ctx.Done():
				w.slotWaiting(false)
				return nil, closedErr(w.m.name)
			case <-w.wake:
				// A cancel of the statement waiting here (cancelOp; a
				// task queued meanwhile is found by next, which looks
				// at the queue before it waits). Without this, a
				// cancel or statement_timeout waited for the
				// transaction holding the slot to end.
				w.mu.Lock()
				targeted := w.mu.cancelOp != nil && *w.mu.cancelOp == t.Op && t.Op.Kind == coord.OpStmt
				if targeted {
					w.mu.cancelOp = nil
				}
				w.mu.Unlock()
				if targeted {
					w.slotWaiting(false)
					return nil, withReplica(pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request"), w.m.name)
				}
			}
		}
	}
	conn, err := w.m.conn(w.ctx)
	if err != nil {
		return nil, withReplica(pgerr.Wrap(pgerr.ConnectionFailure, err, "cannot connect"), w.m.name)
	}
	if t.Autocommit {
		return conn, nil
	}
	if err := conn.Begin(w.ctx, t.TxOptions); err != nil {
		conn.Close()
		e := withReplica(err, w.m.name)
		if !pgerr.IsConnection(e) {
			e = withReplica(pgerr.Wrap(pgerr.ConnectionFailure, err, "cannot begin a transaction"), w.m.name)
		}
		return nil, e
	}
	return conn, nil
}

// taskContext returns the context a task runs under, which cancel (and
// the worker's own context) ends. It is made anew only after a task was
// cancelled: cancel is reachable (as runCancel) only while a task runs,
// so one that was not cancelled serves the next task too, which saves a
// context per statement.
func (w *worker) taskContext() (context.Context, context.CancelFunc) {
	if w.task == nil || w.task.Err() != nil {
		w.task, w.taskCancel = context.WithCancel(w.ctx)
	}
	return w.task, w.taskCancel
}

// exec runs one task with a context the client's cancel can end.
func (w *worker) exec(conn driver.Conn, t Task, col *collector) (*answer.Answer, *pgerr.Error) {
	ctx, cancel := w.taskContext()
	w.mu.Lock()
	targeted := w.mu.cancelOp != nil && *w.mu.cancelOp == t.Op
	if targeted {
		w.mu.cancelOp = nil
	}
	if (w.mu.cancelled || targeted) && t.Op.Kind == coord.OpStmt {
		w.mu.Unlock()
		return nil, withReplica(pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request"), w.m.name)
	}
	w.mu.cancelled = false
	w.mu.runCancel = cancel
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.mu.runCancel = nil
		w.mu.current = coord.Op{}
		w.mu.Unlock()
	}()
	var err error
	var a *answer.Answer
	switch t.Op.Kind {
	case coord.OpStmt:
		q := t.Query
		if col != nil {
			q.Sink = col.row
		}
		a, err = conn.Exec(ctx, q)
	case coord.OpCommit:
		// With a barrier, the transaction's row in the replica's own log
		// of what it committed goes in first, in the same engine
		// transaction: after a crash it tells what this replica has (see
		// LogTable).
		// In a cluster the row is also the fence's check (LogInsertFenced):
		// a newer term's raise fails it, and the transaction with it.
		committer, together := conn.(driver.Committer)
		epoch := w.m.epoch.Load()
		switch {
		case t.Barrier > 0 && together:
			err = committer.ExecCommit(ctx, w.m.logInsert(t.Barrier))
		case t.Barrier > 0:
			if _, err = conn.Exec(ctx, w.m.logInsert(t.Barrier)); err == nil {
				err = conn.Commit(ctx)
			}
		default:
			err = conn.Commit(ctx)
		}
		if epoch > 0 {
			err = lostTerm(err, epoch, w.m.name)
		}
	case coord.OpRollback:
		// A rollback is never cancelled, even when the manager gives up
		// on the attempt; a replica that does not answer it in time loses
		// the connection instead.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(w.ctx), rollbackTimeout)
		err = conn.Rollback(rctx)
		rcancel()
	}
	return a, withReplica(err, w.m.name)
}
