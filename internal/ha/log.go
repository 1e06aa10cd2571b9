package ha

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shepherd-db/shepherd/internal/wal"
)

// The replicated log keeps one key per decided transaction,
// "<prefix>log/<barrier as 20 zero-padded digits>", whose value is the
// record's payload in the write-ahead log's own encoding (wal.Encode).
// The digits make the keys sort in barrier order.
func (n *Node) logPrefix() string { return n.prefix + "log/" }

func (n *Node) logKey(barrier uint64) string {
	return fmt.Sprintf("%s%020d", n.logPrefix(), barrier)
}

func (n *Node) barrierOf(key []byte) (uint64, error) {
	s := string(key)
	p := n.logPrefix()
	if len(s) != len(p)+20 || s[:len(p)] != p {
		return 0, fmt.Errorf("%w: key %q in the log", wal.ErrCorrupt, s)
	}
	b, err := strconv.ParseUint(s[len(p):], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: key %q in the log", wal.ErrCorrupt, s)
	}
	return b, nil
}

// ErrBarrierTaken is wrapped by an append that found a record at one of
// its barriers already: a leader never rewrites a record, whichever term
// wrote it. It is a bug of the caller (a barrier reused after takeover).
var ErrBarrierTaken = errors.New("ha: the log holds a record at that barrier already")

// LogOptions bound one etcd transaction of appends. An append of many
// records is split into transactions within these bounds; each is
// durable on a majority of the members when it returns, in order.
type LogOptions struct {
	// MaxTxnOps is the store's --max-txn-ops; 0 means etcd's default,
	// 128. A transaction carries one comparison and one put per record
	// and the leadership's guard.
	MaxTxnOps int
	// MaxRequestBytes is the store's --max-request-bytes; 0 means etcd's
	// default, 1.5 MiB (embedded members take MaxRequestBytes). A record
	// that does not fit in one request alone is refused (wal.ErrTooLarge).
	MaxRequestBytes int
	// Timeout bounds one transaction; 0 means ten seconds. A transaction
	// that times out may still have been applied, so the log stops, as
	// the local log stops after a failed fsync.
	Timeout time.Duration
}

func (o LogOptions) withDefaults() LogOptions {
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = 128
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = 3 << 19 // 1.5 MiB
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return o
}

// requestSlack is what a request carries besides the records' keys and
// payloads: the guard, framing of each operation, the header.
const (
	requestSlack   = 4 << 10
	perRecordSlack = 64
)

// entry is one record on its way to the store.
type entry struct {
	barrier uint64
	payload []byte
}

// appendEntries writes entries, in order, in guarded transactions within
// o's bounds. It returns after every transaction is durable on a majority
// of the store's members, or at the first failure: ErrDeposed wrapped when
// the term has ended (the fence: a deposed leader's append changes
// nothing), ErrBarrierTaken when a barrier has a record already. The
// transactions before a failure stay applied, as records written before a
// failed fsync may stay on disk.
func (n *Node) appendEntries(ctx context.Context, l *Leadership, o LogOptions, entries []entry) error {
	for len(entries) > 0 {
		k, size := 0, requestSlack
		for k < len(entries) && k+1 < o.MaxTxnOps {
			s := len(n.logKey(0)) + len(entries[k].payload) + perRecordSlack
			if k > 0 && size+s > o.MaxRequestBytes {
				break
			}
			size += s
			k++
		}
		if size > o.MaxRequestBytes {
			return fmt.Errorf("%w: the record at barrier %d is %d bytes, more than one request of the store takes (%d)",
				wal.ErrTooLarge, entries[0].barrier, len(entries[0].payload), o.MaxRequestBytes)
		}
		chunk := entries[:k]
		entries = entries[k:]
		if err := n.appendChunk(ctx, l, o, chunk); err != nil {
			return err
		}
	}
	return nil
}

// appendChunk writes one transaction's records. A transaction whose
// outcome is unknown because etcd's leader changed under it (the request
// timed out, the leader was lost) is sent again until o.Timeout: the
// comparisons make it idempotent, and the failure branch reads back what
// the barriers hold, so a retry that finds exactly its own records there
// knows the first attempt was applied.
func (n *Node) appendChunk(ctx context.Context, l *Leadership, o LogOptions, chunk []entry) error {
	cmps, ops, reads := n.chunkTxn(l, chunk)
	tctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	retried := false
	for {
		r, err := n.cli.Txn(tctx).If(cmps...).Then(ops...).Else(reads...).Commit()
		if err != nil {
			if retryable(err) && tctx.Err() == nil {
				retried = true
				select {
				case <-tctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			return fmt.Errorf("ha: appending %s to the log (outcome unknown): %w", chunkSpan(chunk), err)
		}
		return chunkVerdict(r, l, chunk, retried)
	}
}

// chunkTxn builds one chunk's transaction: the guard and "no record at
// each barrier" compared, the records put, and on failure the leader key
// and each barrier read back.
func (n *Node) chunkTxn(l *Leadership, chunk []entry) (cmps []clientv3.Cmp, ops, reads []clientv3.Op) {
	cmps = []clientv3.Cmp{l.guard()}
	reads = []clientv3.Op{clientv3.OpGet(l.key)}
	for _, e := range chunk {
		key := n.logKey(e.barrier)
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		ops = append(ops, clientv3.OpPut(key, string(e.payload)))
		reads = append(reads, clientv3.OpGet(key))
	}
	return cmps, ops, reads
}

func chunkSpan(chunk []entry) string {
	return fmt.Sprintf("barriers %d to %d", chunk[0].barrier, chunk[len(chunk)-1].barrier)
}

// chunkVerdict reads a chunk transaction's answer: applied, refused
// because the term ended (ErrDeposed), refused because a barrier holds a
// record (ErrBarrierTaken), unless this is a retry and the barriers hold
// exactly this chunk's records: then an earlier attempt was applied.
func chunkVerdict(r *clientv3.TxnResponse, l *Leadership, chunk []entry, retried bool) error {
	if r.Succeeded {
		return nil
	}
	kvs := r.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 || uint64(kvs[0].CreateRevision) != l.Epoch {
		return fmt.Errorf("%w: the append of %s was refused: term %d of %s ended", ErrDeposed, chunkSpan(chunk), l.Epoch, l.Node)
	}
	mine := true
	for i, e := range chunk {
		kvs := r.Responses[i+1].GetResponseRange().Kvs
		if len(kvs) != 1 || string(kvs[0].Value) != string(e.payload) {
			mine = false
			break
		}
	}
	if retried && mine {
		return nil // the attempt whose answer was lost was applied
	}
	return fmt.Errorf("%w: one of %s", ErrBarrierTaken, chunkSpan(chunk))
}

// retryable reports whether err leaves a transaction's outcome unknown
// only because etcd's leader changed or was lost meanwhile: sending it
// again is safe (appendChunk's comparisons) and likely to succeed.
func retryable(err error) bool {
	for _, e := range []error{rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost, rpctypes.ErrTimeout,
		rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrTimeoutWaitAppliedIndex} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Append writes records as one batch under term l, guarded by it (see
// appendEntries): durable on a majority when it returns nil. Barriers
// must grow strictly within the batch. It is the group-commit loop's one
// step, also usable alone (tests, a takeover's own records).
func (n *Node) Append(ctx context.Context, l *Leadership, o LogOptions, records []wal.Record) error {
	entries := make([]entry, len(records))
	for i, r := range records {
		if i > 0 && r.Barrier <= records[i-1].Barrier {
			return fmt.Errorf("%w: barrier %d after %d", wal.ErrBarrierOrder, r.Barrier, records[i-1].Barrier)
		}
		p, err := wal.Encode(r)
		if err != nil {
			return err
		}
		entries[i] = entry{barrier: r.Barrier, payload: p}
	}
	return n.appendEntries(ctx, l, o.withDefaults(), entries)
}

// ReadLog returns the records at barriers from on, in barrier order, as
// of one linearizable read: everything any leader appended before it
// began, since an append returns only once applied. A new leader reads
// it after winning its term, so it holds every record an earlier term
// could still have appended.
func (n *Node) ReadLog(ctx context.Context, from uint64) ([]wal.Record, error) {
	const page = 512
	end := clientv3.GetPrefixRangeEnd(n.logPrefix())
	start := n.logKey(from)
	var rev int64
	var out []wal.Record
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(page)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := n.cli.Get(ctx, start, opts...)
		if err != nil {
			return nil, fmt.Errorf("ha: reading the log: %w", err)
		}
		if rev == 0 {
			rev = r.Header.Revision
		}
		for _, kv := range r.Kvs {
			b, err := n.barrierOf(kv.Key)
			if err != nil {
				return nil, err
			}
			rec, err := wal.Decode(kv.Value)
			if err != nil {
				return nil, fmt.Errorf("ha: the log's record at barrier %d: %w", b, err)
			}
			if rec.Barrier != b {
				return nil, fmt.Errorf("%w: the record under barrier %d says barrier %d", wal.ErrCorrupt, b, rec.Barrier)
			}
			out = append(out, rec)
		}
		if !r.More || len(r.Kvs) == 0 {
			return out, nil
		}
		start = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

// LastBarrier returns the highest barrier in the log (ok false for an
// empty log), as a linearizable read sees it.
func (n *Node) LastBarrier(ctx context.Context) (barrier uint64, ok bool, err error) {
	r, err := n.cli.Get(ctx, n.logPrefix(), append(clientv3.WithLastKey(), clientv3.WithKeysOnly())...)
	if err != nil {
		return 0, false, fmt.Errorf("ha: reading the log: %w", err)
	}
	if len(r.Kvs) == 0 {
		return 0, false, nil
	}
	b, err := n.barrierOf(r.Kvs[0].Key)
	return b, err == nil, err
}

// TruncateBefore deletes the records below barrier, under term l (a
// deposed leader's truncation fails with ErrDeposed and deletes nothing).
// The caller passes the barrier below which every replica applied every
// record, as for the local log. The newest record is always kept, so that
// a log that held records is never empty again and the next term
// continues its barriers.
func (n *Node) TruncateBefore(ctx context.Context, l *Leadership, barrier uint64) error {
	last, ok, err := n.LastBarrier(ctx)
	if err != nil || !ok {
		return err
	}
	barrier = min(barrier, last)
	if barrier == 0 {
		return nil
	}
	r, err := n.cli.Txn(ctx).If(l.guard()).
		Then(clientv3.OpDelete(n.logKey(0), clientv3.WithRange(n.logKey(barrier)))).Commit()
	if err != nil {
		return fmt.Errorf("ha: truncating the log: %w", err)
	}
	if !r.Succeeded {
		return fmt.Errorf("%w: truncation refused: term %d of %s ended", ErrDeposed, l.Epoch, l.Node)
	}
	return nil
}

// Log is the replicated log as the leader of one term writes it: records
// are queued in barrier order (Enqueue, which never waits, so a caller
// may enqueue under its own lock) and written by one goroutine in
// batches, each batch one guarded append (Node.Append). As the local
// log's group commit, there is no timer: records that arrive while a
// batch is in flight form the next one, so the batch size follows the
// store's latency. After a failure (the term ended, a transaction's
// outcome unknown) the log stops: every pending and later record gets
// the error. A term's log is opened once and closed when the term ends.
type Log struct {
	node *Node
	lead *Leadership
	opts LogOptions

	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		queue   []*Pending
		last    uint64
		hasLast bool
		err     error
		closed  bool
		records int
		batches int
	}
}

// Pending is one enqueued record's outcome.
type Pending struct {
	entry entry
	done  chan struct{}
	err   error
}

// Done closes when the record is durable on a majority or failed.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait returns nil once the record is durable, its failure, or ctx's
// error if ctx ends first (the record may still be appended).
func (p *Pending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OpenLog starts term l's log. It reads the log's last barrier, which
// every record enqueued must exceed.
func (n *Node) OpenLog(ctx context.Context, l *Leadership, o LogOptions) (*Log, error) {
	last, ok, err := n.LastBarrier(ctx)
	if err != nil {
		return nil, err
	}
	lg := &Log{node: n, lead: l, opts: o.withDefaults(),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	lg.mu.last, lg.mu.hasLast = last, ok
	go lg.run()
	return lg, nil
}

// ErrLogClosed is returned by Enqueue after Close. It wraps
// wal.ErrClosed, which is how a writer holding either log (the local one
// or this) learns that the log takes nothing more.
var ErrLogClosed = fmt.Errorf("ha: the replicated log is closed (%w)", wal.ErrClosed)

// Enqueue accepts r for the next batch and returns at once; the Ticket
// (a *Pending) says when r is durable on a majority of the members. It
// refuses a barrier not above every one before (wal.ErrBarrierOrder), a
// record wal.Encode refuses, and everything after Close (ErrLogClosed)
// or a failure (wrapping wal.ErrFailed and the failure, ErrDeposed among
// them), as the local log does.
func (lg *Log) Enqueue(r wal.Record) (wal.Ticket, error) {
	p, err := wal.Encode(r)
	if err != nil {
		return nil, err
	}
	pd := &Pending{entry: entry{barrier: r.Barrier, payload: p}, done: make(chan struct{})}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	switch {
	case lg.mu.closed:
		return nil, ErrLogClosed
	case lg.mu.err != nil:
		return nil, fmt.Errorf("%w: %w", wal.ErrFailed, lg.mu.err)
	case lg.mu.hasLast && r.Barrier <= lg.mu.last:
		return nil, fmt.Errorf("%w: barrier %d of txn %d after %d", wal.ErrBarrierOrder, r.Barrier, r.Txn, lg.mu.last)
	}
	lg.mu.last, lg.mu.hasLast = r.Barrier, true
	lg.mu.queue = append(lg.mu.queue, pd)
	select {
	case lg.wake <- struct{}{}:
	default:
	}
	return pd, nil
}

// Append is Enqueue and Wait.
func (lg *Log) Append(ctx context.Context, r wal.Record) error {
	p, err := lg.Enqueue(r)
	if err != nil {
		return err
	}
	return p.Wait(ctx)
}

// ReadFrom returns the records at barriers from on, as Node.ReadLog does
// (bounded by the log's Timeout): the catch-up of a replica that comes
// back while this term leads.
func (lg *Log) ReadFrom(from uint64) ([]wal.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), lg.opts.Timeout)
	defer cancel()
	return lg.node.ReadLog(ctx, from)
}

// TruncateBefore deletes the records below barrier under this log's term
// (Node.TruncateBefore: the newest is kept), bounded by the log's Timeout.
func (lg *Log) TruncateBefore(barrier uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), lg.opts.Timeout)
	defer cancel()
	return lg.node.TruncateBefore(ctx, lg.lead, barrier)
}

// First returns the lowest barrier in the log; ok is false for an empty
// log and when the store could not be read (the caller then trims
// nothing).
func (lg *Log) First() (barrier uint64, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), lg.opts.Timeout)
	defer cancel()
	r, err := lg.node.cli.Get(ctx, lg.node.logPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil || len(r.Kvs) == 0 {
		return 0, false
	}
	b, err := lg.node.barrierOf(r.Kvs[0].Key)
	return b, err == nil
}

// Stats returns how many records and batches were appended.
func (lg *Log) Stats() (records, batches int) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.mu.records, lg.mu.batches
}

// run is the one writer.
func (lg *Log) run() {
	defer close(lg.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-lg.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-lg.wake:
		case <-lg.stop:
			lg.fail(ErrLogClosed)
			return
		}
		lg.mu.Lock()
		batch := lg.mu.queue
		lg.mu.queue = nil
		failed := lg.mu.err
		lg.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		err := failed
		if err == nil {
			select {
			case <-lg.lead.Lost():
				// The store may still hold the term a moment longer, but
				// the lease is not renewed: stop rather than race it.
				err = fmt.Errorf("%w: the lease of term %d is no longer renewed", ErrDeposed, lg.lead.Epoch)
			default:
				entries := make([]entry, len(batch))
				for i, p := range batch {
					entries[i] = p.entry
				}
				err = lg.node.appendEntries(ctx, lg.lead, lg.opts, entries)
			}
		}
		lg.mu.Lock()
		if err != nil && lg.mu.err == nil {
			lg.mu.err = err
		}
		if err == nil {
			lg.mu.records += len(batch)
			lg.mu.batches++
		}
		lg.mu.Unlock()
		for _, p := range batch {
			p.err = err
			close(p.done)
		}
	}
}

// fail completes everything queued with err.
func (lg *Log) fail(err error) {
	lg.mu.Lock()
	batch := lg.mu.queue
	lg.mu.queue = nil
	if lg.mu.err == nil {
		lg.mu.err = err
	}
	lg.mu.Unlock()
	for _, p := range batch {
		p.err = err
		close(p.done)
	}
}

// Close stops the writer; records still queued fail with ErrLogClosed
// (a batch in flight is cancelled: its outcome is unknown). It does not
// end the term.
func (lg *Log) Close() error {
	lg.mu.Lock()
	if lg.mu.closed {
		lg.mu.Unlock()
		return nil
	}
	lg.mu.closed = true
	lg.mu.Unlock()
	close(lg.stop)
	<-lg.done
	return nil
}
