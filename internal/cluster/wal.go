package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// logQueue hands the records the coordinator asked to log to the one
// goroutine that waits for them to be durable, in barrier order. It is
// unbounded, so that queueing under c.mu never waits.
type logQueue struct {
	mu    sync.Mutex
	items []logItem
	more  chan struct{} // poked when items grows
}

type logItem struct {
	p       *wal.Pending // nil: a transaction without writes, not logged
	barrier int          // the core's barrier
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
	for _, call := range t.stmts {
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
		// Without the log nothing may commit: the transaction waits,
		// like every later one (PostgreSQL stops on a failed fsync too).
		c.log.Error("write-ahead log failed: commits stop", "err", err)
		return
	}
	c.logq.push(logItem{p: p, barrier: a.Barrier})
}

// awaitLog tells the coordinator, in barrier order, which records are
// durable.
func (c *Cluster) awaitLog() {
	defer c.ticker.Done()
	for {
		it, ok := c.logq.pop(c.stop)
		if !ok {
			return
		}
		if it.p != nil {
			select {
			case <-it.p.Done():
			case <-c.stop:
				return
			}
			if err := it.p.Wait(context.Background()); err != nil {
				c.log.Error("write-ahead log failed: commits stop", "err", err)
				return
			}
		}
		c.durable.advance(c.opts.Base + uint64(it.barrier) + 1)
		c.mu.Lock()
		c.mu.core.Step(coord.Logged{Barrier: it.barrier})
		c.applyLocked()
		var applied int
		if it.barrier%truncateEvery == 0 {
			applied = c.appliedLocked()
		}
		c.mu.Unlock()
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
