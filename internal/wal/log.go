package wal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// DefaultSegmentBytes is the segment size used when Options leaves it 0.
const DefaultSegmentBytes = 64 << 20

// maxKeptBufferBytes bounds the write buffer the flusher keeps between
// batches; a larger one, grown by a batch of big records, is let go.
const maxKeptBufferBytes = 4 << 20

var (
	// ErrClosed is returned by calls made after Close.
	ErrClosed = errors.New("wal: log closed")
	// ErrBarrierOrder is returned by Append and Enqueue for a record whose
	// barrier does not exceed the last one accepted. It is the caller's
	// bug: records must be handed over in commit order.
	ErrBarrierOrder = errors.New("wal: barriers out of order")
	// ErrLocked is returned by Open when another Log, in this process or
	// another, has the directory open.
	ErrLocked = errors.New("wal: directory in use")
	// ErrTooLarge is returned by Append and Enqueue for a record whose
	// payload is larger than the limit (Options.MaxRecordBytes). Only
	// that record is refused; the log goes on.
	ErrTooLarge = errors.New("wal: record too large")
	// ErrFailed is returned by Append and Enqueue once a write or an
	// fsync has failed (wrapping that failure too): the log takes no
	// more records until it is opened again.
	ErrFailed = errors.New("wal: log failed")
)

// Options tune a Log. The zero value is ready to use.
type Options struct {
	// SegmentBytes is the size past which the log starts a new segment;
	// 0 means DefaultSegmentBytes. A record larger than this gets a
	// segment of its own.
	SegmentBytes int64
	// Sync makes durable what was written to f: a segment after a write,
	// the directory after segments come or go. Nil means f.Sync (fsync).
	// Tests count or fail syncs through it. It is called from one
	// goroutine at a time per file, but Open, the flusher and
	// TruncateBefore may call it concurrently for different files.
	Sync func(f *os.File) error
	// MaxRecordBytes lowers the limit on one record's payload below
	// MaxRecordBytes (tests refuse records with it); 0 or more than
	// MaxRecordBytes means MaxRecordBytes.
	MaxRecordBytes int
	// Batch, when set, is told of each batch made durable: how many
	// records and bytes one write and fsync carried (metrics). It is
	// called from the flusher, after the fsync.
	Batch func(records, bytes int)
}

// Repair says what Open cut from a torn tail of the last segment.
type Repair struct {
	// File is the segment that was cut.
	File string
	// Offset is the new length of File: the end of its last intact record.
	Offset int64
	// DroppedBytes is how much was cut.
	DroppedBytes int64
	// Reason is the damage found at Offset.
	Reason string
	// Removed says no intact record was left and the file was deleted.
	Removed bool
}

func (r Repair) String() string {
	s := fmt.Sprintf("wal: dropped %d bytes at offset %d of %s (%s)", r.DroppedBytes, r.Offset, r.File, r.Reason)
	if r.Removed {
		s += "; the segment held no intact record and was removed"
	}
	return s
}

// Stats counts a Log's work since Open.
type Stats struct {
	// Records is the number of records made durable.
	Records uint64
	// Batches is the number of write-and-fsync rounds that made them
	// durable; Records/Batches is the group commit factor.
	Batches uint64
	// Bytes is the number of bytes written to segments.
	Bytes uint64
}

// Log is an open write-ahead log. Its methods are safe for concurrent use.
type Log struct {
	dir      string
	opts     Options
	lock     *os.File
	repaired *Repair

	// wake (capacity 1) tells the flusher there is work: a record queued
	// or Close called. stopped is closed when the flusher returns.
	wake    chan struct{}
	stopped chan struct{}

	mu struct {
		sync.Mutex
		queue  []*Pending   // accepted, not yet taken by the flusher
		order  barrierOrder // barrier of the last record accepted
		closed bool         // Close was called
		err    error        // sticky: a write or sync failed
	}

	// The flusher goroutine owns these while it runs; Open sets them up
	// before it starts and Close tears them down after it stopped.
	cur     *os.File // the last segment, open for appending; nil if none
	curSize int64
	buf     []byte // frames of the current batch not yet written

	segs struct {
		sync.Mutex
		list []segment // on disk, oldest first; the last one is cur
	}
	// truncating serialises TruncateBefore, so that segments are always
	// removed oldest first and a crash cannot leave a gap.
	truncating sync.Mutex

	records, batches, bytes atomic.Uint64

	closeOnce sync.Once
	closeErr  error
}

// Ticket is a record accepted for logging, on its way to being durable:
// what Enqueue returns, here (a *Pending) and in a replicated log
// (package ha), so that a writer may hold either log behind one
// interface.
type Ticket interface {
	// Done is closed once the record is durable or failed.
	Done() <-chan struct{}
	// Wait returns nil once the record is durable, or why it is not.
	Wait(ctx context.Context) error
}

// Pending is a record accepted by Enqueue on its way to disk.
type Pending struct {
	frame   []byte
	barrier uint64
	done    chan struct{}
	err     error // set before done is closed
}

// Done is closed once the record is durable or the log failed.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait returns nil once the record is durable, or the error that kept it
// from disk. If ctx ends first it returns ctx's error, and the record may
// still become durable afterwards.
func (p *Pending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Open opens the log in dir, creating dir if needed, and returns every
// intact record, oldest first. A torn tail of the last segment is cut
// away (see Repaired); damage anywhere else is an error wrapping
// ErrCorrupt, and then nothing on disk has been changed. The Log holds a
// lock on dir until Close.
func Open(dir string, opts Options) (*Log, []Record, error) {
	if opts.SegmentBytes < 0 {
		return nil, nil, fmt.Errorf("wal: SegmentBytes %d is negative", opts.SegmentBytes)
	}
	if opts.SegmentBytes == 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.Sync == nil {
		opts.Sync = (*os.File).Sync
	}
	if opts.MaxRecordBytes <= 0 || opts.MaxRecordBytes > MaxRecordBytes {
		opts.MaxRecordBytes = MaxRecordBytes
	}
	if err := makeDir(dir, opts.Sync); err != nil {
		return nil, nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	l := &Log{
		dir:     dir,
		opts:    opts,
		lock:    lock,
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
	records, err := l.recover()
	if err != nil {
		if l.cur != nil {
			l.cur.Close()
		}
		unlockDir(lock)
		return nil, nil, err
	}
	go l.run()
	return l, records, nil
}

// makeDir creates dir if it is missing and makes its entry durable.
func makeDir(dir string, sync func(*os.File) error) error {
	_, err := os.Stat(dir)
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("wal: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return syncDir(filepath.Dir(filepath.Clean(dir)), sync)
}

// recover reads every segment, then repairs the tail of the last one and
// opens it for appending. It changes nothing on disk unless every
// segment but the last was intact.
func (l *Log) recover() ([]Record, error) {
	segs, err := listSegments(l.dir)
	if err != nil {
		return nil, err
	}
	var (
		records []Record
		order   barrierOrder
		tail    scanned
		size    int64
	)
	for i, seg := range segs {
		data, err := os.ReadFile(seg.path)
		if err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		s, err := scanSegment(data, seg, &order)
		if err != nil {
			return nil, err
		}
		if i < len(segs)-1 {
			switch {
			case s.damage != "":
				return nil, &CorruptError{File: seg.path, Offset: s.end, Reason: string(s.damage)}
			case len(s.records) == 0:
				return nil, &CorruptError{File: seg.path, Reason: "empty segment before the last"}
			}
		}
		records = append(records, s.records...)
		tail, size = s, int64(len(data))
	}
	if len(segs) > 0 {
		if segs, err = l.repairTail(segs, tail, size); err != nil {
			return nil, err
		}
	}
	if len(segs) > 0 {
		if err := l.openLast(segs[len(segs)-1]); err != nil {
			return nil, err
		}
	}
	l.mu.order = order
	l.segs.list = segs
	return records, nil
}

// repairTail cuts the damage found at the end of the last segment, or
// removes the segment if it holds no intact record, and says so in
// l.repaired. It returns the segments left.
func (l *Log) repairTail(segs []segment, tail scanned, size int64) ([]segment, error) {
	last := segs[len(segs)-1]
	if tail.damage != "" {
		l.repaired = &Repair{File: last.path, Offset: tail.end, DroppedBytes: size - tail.end, Reason: string(tail.damage)}
	}
	if len(tail.records) == 0 {
		if l.repaired == nil {
			l.repaired = &Repair{File: last.path, Reason: "empty segment"}
		}
		l.repaired.Removed = true
		if err := os.Remove(last.path); err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		if err := syncDir(l.dir, l.opts.Sync); err != nil {
			return nil, err
		}
		return segs[:len(segs)-1], nil
	}
	if tail.damage == "" {
		return segs, nil
	}
	f, err := os.OpenFile(last.path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	err = f.Truncate(tail.end)
	if err == nil {
		err = l.opts.Sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("wal: cut torn tail of %s: %w", last.path, err)
	}
	return segs, nil
}

// openLast opens seg, the last segment, for appending.
func (l *Log) openLast(seg segment) error {
	f, err := os.OpenFile(seg.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("wal: %w", err)
	}
	l.cur, l.curSize = f, fi.Size()
	return nil
}

// Repaired reports what Open cut from a torn tail; ok is false when the
// log was intact. A caller should log it: it is the trace of a crash.
func (l *Log) Repaired() (r Repair, ok bool) {
	if l.repaired == nil {
		return Repair{}, false
	}
	return *l.repaired, true
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	return Stats{Records: l.records.Load(), Batches: l.batches.Load(), Bytes: l.bytes.Load()}
}

// Append adds r to the log and returns once r is durable. It is Enqueue
// followed by Wait: if ctx ends first Append returns ctx's error, but r
// was accepted and may still reach the disk; the caller cannot take it
// back and must treat the transaction as possibly logged.
func (l *Log) Append(ctx context.Context, r Record) error {
	p, err := l.Enqueue(r)
	if err != nil {
		return err
	}
	return p.Wait(ctx)
}

// Enqueue accepts r for writing and returns at once; the Ticket (a
// *Pending) says when r is durable. Records are written in the order Enqueue accepted
// them, so a caller that decides the commit order under its own lock can
// enqueue under that lock and wait outside it. Enqueue refuses a record
// whose barrier is not above every barrier accepted before
// (ErrBarrierOrder), a statement barrier above the record's, a record
// larger than Options.MaxRecordBytes (ErrTooLarge), and everything after
// Close (ErrClosed) or after a failed write (ErrFailed). The first three
// concern r alone; after the last two the log takes nothing more.
func (l *Log) Enqueue(r Record) (Ticket, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	frame := appendFrame(nil, &r)
	if n := len(frame) - frameHeaderBytes; n > l.opts.MaxRecordBytes {
		return nil, fmt.Errorf("%w: the record of txn %d is %d bytes, more than %d", ErrTooLarge, r.Txn, n, l.opts.MaxRecordBytes)
	}
	p := &Pending{frame: frame, barrier: r.Barrier, done: make(chan struct{})}

	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.mu.closed:
		return nil, ErrClosed
	case l.mu.err != nil:
		return nil, fmt.Errorf("%w: %w", ErrFailed, l.mu.err)
	case !l.mu.order.accepts(r.Barrier):
		return nil, fmt.Errorf("%w: barrier %d of txn %d after %d", ErrBarrierOrder, r.Barrier, r.Txn, l.mu.order.last)
	}
	l.mu.order.add(r.Barrier)
	l.mu.queue = append(l.mu.queue, p)
	l.poke()
	return p, nil
}

// poke wakes the flusher without blocking.
func (l *Log) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the flusher: it takes everything queued, writes it with one
// write and one fsync per segment touched, and completes those records.
// Records queued while it writes form the next batch; that is the whole
// of group commit, and it needs no timer.
func (l *Log) run() {
	defer close(l.stopped)
	for {
		l.mu.Lock()
		batch, closed, failed := l.mu.queue, l.mu.closed, l.mu.err
		l.mu.queue = nil
		l.mu.Unlock()
		if len(batch) == 0 {
			if closed {
				return
			}
			<-l.wake
			continue
		}
		err := failed
		if err == nil {
			if err = l.write(batch); err != nil {
				l.mu.Lock()
				l.mu.err = err
				l.mu.Unlock()
			}
		}
		for _, p := range batch {
			p.err = err
			close(p.done)
		}
	}
}

// write makes batch durable, starting new segments where the size limit
// says so.
func (l *Log) write(batch []*Pending) error {
	l.buf = l.buf[:0]
	before := l.bytes.Load()
	for _, p := range batch {
		size := l.curSize + int64(len(l.buf))
		if l.cur == nil || (size > 0 && size+int64(len(p.frame)) > l.opts.SegmentBytes) {
			if err := l.rotate(p.barrier); err != nil {
				return err
			}
		}
		l.buf = append(l.buf, p.frame...)
	}
	if err := l.flushBuf(); err != nil {
		return err
	}
	if cap(l.buf) > maxKeptBufferBytes {
		l.buf = nil
	}
	l.records.Add(uint64(len(batch)))
	l.batches.Add(1)
	if l.opts.Batch != nil {
		l.opts.Batch(len(batch), int(l.bytes.Load()-before))
	}
	return nil
}

// flushBuf writes the buffered frames to the current segment and syncs it.
func (l *Log) flushBuf() error {
	if len(l.buf) == 0 {
		return nil
	}
	n, err := l.cur.Write(l.buf)
	l.curSize += int64(n)
	l.bytes.Add(uint64(n))
	if err != nil {
		return fmt.Errorf("wal: write %s: %w", l.cur.Name(), err)
	}
	l.buf = l.buf[:0]
	if err := l.opts.Sync(l.cur); err != nil {
		return fmt.Errorf("wal: sync %s: %w", l.cur.Name(), err)
	}
	return nil
}

// rotate seals the current segment, if any, and starts a new one whose
// first record has barrier first. The new file's directory entry is made
// durable before any record in it is reported durable.
func (l *Log) rotate(first uint64) error {
	if l.cur != nil {
		if err := l.flushBuf(); err != nil {
			return err
		}
		err := l.cur.Close()
		l.cur = nil
		if err != nil {
			return fmt.Errorf("wal: %w", err)
		}
	}
	path := segmentPath(l.dir, first)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	l.cur, l.curSize = f, 0
	l.segs.Lock()
	l.segs.list = append(l.segs.list, segment{first: first, path: path})
	l.segs.Unlock()
	return syncDir(l.dir, l.opts.Sync)
}

// TruncateBefore removes the segments whose records all have barriers
// below barrier: call it once every replica holds those transactions. It
// removes whole segments only, oldest first, and never the last one, so
// Open may still return records below barrier; replay must skip what a
// replica already has. It keeps the segment holding barrier-1 too, even
// when barrier opens the next one: that record is durable (every replica
// applied it), while the one at barrier may not be yet, and a crash that
// tore it would otherwise leave the log empty, as if it had never held a
// record (see the package doc, Truncation).
func (l *Log) TruncateBefore(barrier uint64) error {
	l.truncating.Lock()
	defer l.truncating.Unlock()
	l.mu.Lock()
	closed := l.mu.closed
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}

	// Segment i holds barriers below segment i+1's first, so it can go
	// when that first is at most barrier; it must be below barrier for
	// segment i+1 to hold a record that is durable.
	l.segs.Lock()
	n := 0
	for n+1 < len(l.segs.list) && l.segs.list[n+1].first < barrier {
		n++
	}
	victims := l.segs.list[:n:n]
	l.segs.list = l.segs.list[n:]
	l.segs.Unlock()
	if n == 0 {
		return nil
	}

	for i, seg := range victims {
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.segs.Lock()
			l.segs.list = append(victims[i:len(victims):len(victims)], l.segs.list...)
			l.segs.Unlock()
			return errors.Join(fmt.Errorf("wal: %w", err), syncDir(l.dir, l.opts.Sync))
		}
	}
	return syncDir(l.dir, l.opts.Sync)
}

// Close writes and syncs every record accepted so far, stops the flusher
// and releases the directory. It returns the error that failed the log,
// if one did. Calls after the first return the same result.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.mu.closed = true
		l.mu.Unlock()
		l.poke()
		<-l.stopped

		l.truncating.Lock() // let a running TruncateBefore finish first
		defer l.truncating.Unlock()
		l.mu.Lock()
		err := l.mu.err
		l.mu.Unlock()
		if l.cur != nil {
			if cerr := l.cur.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("wal: %w", cerr)
			}
			l.cur = nil
		}
		if uerr := unlockDir(l.lock); err == nil {
			err = uerr
		}
		l.closeErr = err
	})
	return l.closeErr
}

// ReadFrom returns the records with a barrier at or above from that are
// in the log's files now, in barrier order, for a replica that came back
// and must catch up while the log keeps growing. It may return records
// whose Append has not returned yet (written, not yet synced): the caller
// must use only those it knows to be durable. Segments are not removed
// while it reads.
func (l *Log) ReadFrom(from uint64) ([]Record, error) {
	l.truncating.Lock()
	defer l.truncating.Unlock()
	l.segs.Lock()
	segs := append([]segment(nil), l.segs.list...)
	l.segs.Unlock()
	var out []Record
	for i, seg := range segs {
		if i+1 < len(segs) && segs[i+1].first <= from {
			continue // every record here is below from
		}
		data, err := os.ReadFile(seg.path)
		if err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		var order barrierOrder
		s, err := scanSegment(data, seg, &order)
		if err != nil {
			return nil, err
		}
		// Damage can only be the frame being written at the tail of the
		// last segment; the records before it are whole.
		if s.damage != "" && i < len(segs)-1 {
			return nil, &CorruptError{File: seg.path, Offset: s.end, Reason: string(s.damage)}
		}
		for _, r := range s.records {
			if r.Barrier >= from {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// First returns the barrier of the oldest record the log still keeps
// (the first of its oldest segment); ok is false for an empty log.
// Nothing below it will ever be replayed.
func (l *Log) First() (barrier uint64, ok bool) {
	l.segs.Lock()
	defer l.segs.Unlock()
	if len(l.segs.list) == 0 {
		return 0, false
	}
	return l.segs.list[0].first, true
}
