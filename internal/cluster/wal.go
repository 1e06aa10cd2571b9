package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// WAL is the log of decided transactions the cluster writes: the local
// write-ahead log (*wal.Log, the single-node default) or the log a
// leader replicates in etcd (*ha.Log). The cluster does not know which it
// has; what it relies on is what both promise:
//   - Enqueue never waits (it is called under the cluster's lock), takes
//     records in barrier order, and its Ticket is done once the record
//     is durable (on disk; on a majority of the store's members) or
//     failed. An error wrapping wal.ErrFailed or wal.ErrClosed means the
//     log takes nothing more; any other refuses that record alone.
//   - ReadFrom returns the records from a barrier on, for catch-up; it
//     may include records whose Ticket is not done yet.
//   - TruncateBefore drops records below a barrier every replica
//     applied, and First is the oldest record still kept (ok false when
//     it does not know).
type WAL interface {
	Enqueue(r wal.Record) (wal.Ticket, error)
	ReadFrom(from uint64) ([]wal.Record, error)
	TruncateBefore(barrier uint64) error
	First() (barrier uint64, ok bool)
}

var _ WAL = (*wal.Log)(nil)

// logQueue hands the records the coordinator asked to log to the one
// goroutine that waits for them to be durable, in barrier order. It has
// no cap of its own, so that queueing under c.mu never waits; its bound
// is the clients' back-pressure: an item is a transaction deciding to
// commit, whose session waits for the COMMIT's answer (after the record
// is durable) before it sends anything more, so the queue holds at most
// one item per session (max_connections, plus the admin console's
// surveys), each at most the log's MaxRecordBytes. Once the log failed,
// the core decides nothing more.
type logQueue struct {
	mu    sync.Mutex
	items []logItem
	more  chan struct{} // poked when items grows
}

type logItem struct {
	p       wal.Ticket // nil: a transaction without writes, not logged
	barrier int        // the core's barrier
	txn     coord.TxnID
	// err is why the log would not take the record: Enqueue's error.
	err error
}

func (q *logQueue) push(it logItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.more <- struct{}{}:
	default:
	}
}

func (q *logQueue) pop(stop <-chan struct{}) (logItem, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			it := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return it, true
		}
		q.mu.Unlock()
		select {
		case <-q.more:
		case <-stop:
			return logItem{}, false
		}
	}
}

// logLocked appends a decided transaction to the write-ahead log. The
// coordinator holds its COMMITs back until the record is durable (see
// awaitLog). c.mu is held.
func (c *Cluster) logLocked(a coord.Log) {
	t := c.mu.txns[a.Txn]
	if t == nil {
		return
	}
	rec := wal.Record{Txn: uint64(a.Txn), Barrier: c.opts.Base + uint64(a.Barrier)}
	if t.survey {
		// A survey's writes are repairs written for each replica's own
		// state: nothing to replay to another one. A replica that misses
		// one is found out by the next comparison.
		c.logq.push(logItem{barrier: a.Barrier})
		return
	}
	writes := false
	for _, call := range survivors(t.stmts) {
		w := call.st.Kind != sqlan.Read
		writes = writes || w
		rec.Statements = append(rec.Statements, c.walStatement(call))
	}
	if !writes {
		// Nothing to replay, and no log-table row (a READ ONLY
		// transaction could not write it): the record is left out, and
		// the COMMITs wait only for the records before it.
		c.logq.push(logItem{barrier: a.Barrier})
		return
	}
	t.barrier = rec.Barrier
	p, err := c.opts.WAL.Enqueue(rec)
	if err != nil {
		// The core hears of it in barrier order, from awaitLog, like of
		// every other record: a Logged event for a later barrier must
		// not come first, since it would cover this one.
		c.logq.push(logItem{barrier: a.Barrier, txn: a.Txn, err: err})
		return
	}
	c.logq.push(logItem{p: p, barrier: a.Barrier, txn: a.Txn})
}

// survivors returns the statements of a committed transaction whose
// effects it kept: those a ROLLBACK TO SAVEPOINT undid are left out (a
// statement that failed, which only a ROLLBACK TO lets a transaction
// commit after, among them), and so are the savepoint statements, which
// change nothing once the rest is settled. Replay runs the survivors in
// one engine transaction and reaches the state the replicas committed.
func survivors(stmts []stmtCall) []stmtCall {
	type mark struct {
		name string
		at   int // len(out) when it was made
	}
	var out []stmtCall
	var marks []mark
	find := func(name string) int {
		for i := len(marks) - 1; i >= 0; i-- {
			if marks[i].name == name {
				return i
			}
		}
		return -1
	}
	for _, call := range stmts {
		st := call.st
		if st == nil || st.Kind != sqlan.Savepoint {
			out = append(out, call)
			continue
		}
		switch st.SavepointOp {
		case sqlan.SavepointDefine:
			marks = append(marks, mark{name: st.SavepointName, at: len(out)})
		case sqlan.SavepointRelease:
			if i := find(st.SavepointName); i >= 0 {
				marks = marks[:i]
			}
		case sqlan.SavepointRollbackTo:
			if i := find(st.SavepointName); i >= 0 {
				out = out[:marks[i].at]
				marks = marks[:i+1]
			}
		}
	}
	return out
}

// AfterCommit arranges for fn to run once the transaction is known to
// have committed for good: its log record is durable (without a log:
// some replica committed it and the coordinator is done with it), with
// its log barrier (0 without a log). If it ends rolled back, fn never
// runs. It is for a COMMIT the client was let go from before the
// outcome (coord.ErrCommitsAnyway): what depends on the commit, the
// schema catalog's record of its DDL, must follow its real outcome and
// barrier. fn runs under the cluster's lock, before the transaction is
// reported finished (Idle); it must be short and must not call the
// cluster. Its error is logged.
func (t *Txn) AfterCommit(fn func(barrier uint64) error) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	t.afterCommit = fn
	switch {
	case t.durable:
		c.runAfterCommitLocked(t)
	case t.finished:
		if c.opts.WAL == nil && t.commits > 0 {
			c.runAfterCommitLocked(t)
		}
		t.afterCommit = nil
	}
}

// AfterEnd has fn run once the coordinator is done with t (committed or
// not; after AfterCommit's function when that runs), at once when it is
// already. fn runs with the cluster's lock held and must not call into
// the cluster. The session holds a DDL statement's table locks until
// then when its outcome is not known at COMMIT (AfterCommit).
func (t *Txn) AfterEnd(fn func()) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.finished {
		fn()
		return
	}
	t.afterEnd = fn
}

// runAfterCommitLocked runs t's AfterCommit function once. c.mu is held.
func (c *Cluster) runAfterCommitLocked(t *Txn) {
	fn := t.afterCommit
	t.afterCommit = nil
	if err := fn(t.barrier); err != nil {
		c.log.Error("a transaction the client was let go from committed, but what follows its commit failed",
			"txn", uint64(t.id), "barrier", t.barrier, "err", err)
	}
}

// logFatal reports whether an error of Enqueue means the log takes no
// more records at all, rather than refusing one.
func logFatal(err error) bool {
	return errors.Is(err, wal.ErrFailed) || errors.Is(err, wal.ErrClosed)
}

// logRefusal is what a client whose transaction's record the log
// refused is told.
func logRefusal(err error) *pgerr.Error {
	code := pgerr.InternalError
	if errors.Is(err, wal.ErrTooLarge) {
		code = pgerr.ProgramLimitExceeded
	}
	return pgerr.Wrap(code, err, "the write-ahead log refused the transaction").
		WithDetail("The transaction was rolled back on every replica.")
}

// logFailure is what every client waiting for a COMMIT, or asking for
// one, is told once the log failed.
func logFailure(err error) *pgerr.Error {
	return pgerr.Wrap(pgerr.IOError, err, "the write-ahead log failed; shepherd commits nothing until it is restarted").
		WithDetail("The transaction was rolled back on every replica; if its log record reached the disk after all, " +
			"it is committed when shepherd restarts from the log.")
}

// awaitLog tells the coordinator, in barrier order, which records are
// durable, which were refused, and whether the log failed. After a
// failure it only drains the queue: the core has failed every COMMIT
// the log did not hold, and decides no more.
func (c *Cluster) awaitLog() {
	defer c.ticker.Done()
	failed := false
	for {
		it, ok := c.logq.pop(c.stop)
		if !ok {
			return
		}
		if failed {
			continue
		}
		err := it.err
		if it.p != nil {
			select {
			case <-it.p.Done():
			case <-c.stop:
				return
			}
			err = it.p.Wait(context.Background())
		}
		var ev coord.Event
		switch {
		case err == nil:
			ev = coord.Logged{Barrier: it.barrier}
		case it.p == nil && !logFatal(err):
			// This record only: its barrier stays a hole in the log.
			c.log.Error("write-ahead log refused a transaction; it is rolled back", "txn", uint64(it.txn), "err", err)
			ev = coord.LogRefused{Txn: it.txn, Fail: logRefusal(err)}
		default:
			c.log.Error("write-ahead log failed: commits stop until shepherd restarts", "err", err)
			failed = true
			ev = coord.LogFailed{Fail: logFailure(err)}
		}
		if !failed {
			c.durable.advance(c.opts.Base + uint64(it.barrier) + 1)
		}
		c.mu.Lock()
		c.mu.core.Step(ev)
		c.applyLocked()
		var committed coord.TxnID
		if t := c.mu.txns[it.txn]; err == nil && it.txn != 0 && t != nil {
			t.durable = true
			if t.deferAt < 0 {
				// A deferred block keeps its intent until the replicas
				// that commit DDL as they run it have it (Finished).
				committed = t.id
			}
			if t.afterCommit != nil {
				c.runAfterCommitLocked(t)
			}
		}
		var applied int
		if !failed && it.barrier%truncateEvery == 0 {
			applied = c.appliedLocked()
		}
		c.mu.Unlock()
		if committed != 0 {
			c.dropIntent(committed, "committed") // its record resolves it
		}
		if applied > 0 {
			if err := c.opts.WAL.TruncateBefore(c.opts.Base + uint64(applied)); err != nil {
				c.log.Warn("truncating the write-ahead log", "err", err)
			} else if first, ok := c.opts.WAL.First(); ok {
				c.trimLogTables(first)
			}
		}
	}
}

// trimLogTables deletes from the replicas' log tables the rows below
// first, the oldest barrier the write-ahead log still keeps: nothing
// below it can be replayed, so nobody asks for those rows any more. It
// works in the background, on replicas that are up, one trim at a time:
// the log waiter must never wait for a replica.
func (c *Cluster) trimLogTables(first uint64) {
	if first <= c.trimmed || !c.trimming.TryLock() {
		return
	}
	c.trimmed = first
	c.ticker.Add(1)
	go func() {
		defer c.ticker.Done()
		defer c.trimming.Unlock()
		for i, m := range c.managers {
			if c.status[i].down.Load() {
				continue // its rows are trimmed once it is back
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			conn, err := m.Engine().Connect(ctx)
			if err == nil {
				_, err = conn.Exec(ctx, replica.LogTrim(m.Engine().Dialect(), first))
				conn.Close()
			}
			cancel()
			if err != nil {
				c.log.Warn("trimming the log table", "replica", m.Name(), "err", err)
			}
		}
	}()
}

// truncateEvery is how many logged barriers pass between attempts to
// drop log segments every replica has applied.
const truncateEvery = 1024

// appliedLocked returns the barrier below which every replica, up or
// down, has committed every transaction: the log must keep the rest for
// replay. c.mu is held.
func (c *Cluster) appliedLocked() int {
	low := -1
	for r := range c.managers {
		a := c.mu.core.Applied(coord.ReplicaID(r))
		if low < 0 || a < low {
			low = a
		}
	}
	return low
}

// walArgs converts statement arguments for the log; Type keeps the
// family.
func walArgs(args []driver.Arg) []wal.Value {
	out := make([]wal.Value, len(args))
	for i, a := range args {
		out[i] = wal.Value{Null: a.Null, Type: uint8(a.Type), Text: a.Text}
	}
	return out
}
