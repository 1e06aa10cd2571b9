package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// durable tracks how far the write-ahead log is on disk, for replicas
// catching up, which may replay only what is.
type durable struct {
	mu   sync.Mutex
	next uint64        // every log barrier below is durable
	more chan struct{} // closed and replaced when next grows
}

func (d *durable) advance(next uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if next > d.next {
		d.next = next
		close(d.more)
		d.more = make(chan struct{})
	}
}

// wait returns once every log barrier below upTo is durable, or ctx ends.
func (d *durable) wait(ctx context.Context, upTo uint64) error {
	for {
		d.mu.Lock()
		next, more := d.next, d.more
		d.mu.Unlock()
		if next >= upTo {
			return nil
		}
		select {
		case <-more:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (d *durable) get() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next
}

// errRetired stops the recovery of a replica retired meanwhile (see
// coord.Retire): it stays out.
var errRetired = errors.New("replica retired")

// Retry bounds for a replica that was taken out.
const (
	firstRetry = 100 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// startRecovery starts trying to bring replica r back, with the log's
// help (without a log, a replica taken out stays out until restart).
// c.mu is held.
func (c *Cluster) startRecovery(r coord.ReplicaID) {
	if c.opts.WAL == nil || c.opts.Cache == nil || c.mu.recovering[r] || c.mu.retired[r] {
		return
	}
	select {
	case <-c.stop:
		return
	default:
	}
	c.mu.recovering[r] = true
	c.ticker.Add(1)
	go c.recoverReplica(r)
}

// StartOut takes replica r out before the cluster serves: start-up found
// it unreachable, or refused what it reported. It is tried again, and
// brought back by catching up from the log, as a replica taken out while
// the cluster runs.
func (c *Cluster) StartOut(r int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.core.Step(coord.Down{R: coord.ReplicaID(r)})
	c.applyLocked()
}

// recoverReplica retries, with growing pauses, to reconnect replica r
// and catch it up, until it is back or the cluster closes.
func (c *Cluster) recoverReplica(r coord.ReplicaID) {
	defer c.ticker.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	name := c.managers[r].Name()
	pause := firstRetry
	var refused uint64 // barrier of the statement the last attempt failed on
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, maxRetry)
		start := time.Now()
		n, err := c.catchUp(ctx, r)
		if errors.Is(err, errRetired) {
			return
		}
		if err == nil {
			c.status[r].failure.Store(nil)
			c.log.Warn("replica back", "replica", name, "replayed", n, "catch-up", time.Since(start).Round(time.Millisecond), "attempts", attempt)
			return
		}
		if ctx.Err() != nil {
			return
		}
		refused = c.catchUpFailed(int(r), err, refused, attempt)
		if attempt == 1 || attempt%10 == 0 {
			c.log.Warn("replica still away", "replica", name, "attempts", attempt, "err", err)
		}
	}
}

// catchUp reconnects replica r, replays from the log what its log table
// lacks (while the others go on), then rejoins it: from the rejoin on the
// coordinator queues new commits for it, and what was decided before is
// replayed from the log before it is sent anything. It returns how many
// transactions it replayed.
func (c *Cluster) catchUp(ctx context.Context, r coord.ReplicaID) (int, error) {
	m := c.managers[r]
	e := m.Engine()
	conn, err := e.Connect(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	records, err := c.opts.WAL.ReadFrom(0)
	if err != nil {
		return 0, err
	}
	var from uint64
	if len(records) > 0 {
		from = records[0].Barrier
	}
	have, top, err := replica.LogRead(ctx, conn, from)
	if err != nil {
		return 0, err
	}
	// A replica is sent a COMMIT only once its record is durable: one
	// whose log table claims more claims transactions never decided,
	// and must not come back (its rows would collide with new ones).
	// (coord.CheckBarrier, start-up's rule, against the last durable
	// barrier.)
	if next := c.durable.get(); next > 0 {
		if err := coord.CheckBarrier(replica.LogTable, top, next-1, true); err != nil {
			return 0, err
		}
	}
	c.mu.Lock()
	applied := c.opts.Base + uint64(max(0, c.mu.core.Applied(r)))
	c.mu.Unlock()
	lost, err := lostCommits(records, have, c.opts.Base, applied)
	if err != nil {
		return 0, err
	}
	if lost > 0 {
		c.log.Error("replica lost transactions it had committed; the log still holds them and replays them", "replica", m.Name(), "lost", lost)
	}
	total := 0
	// While clients go on, replay what is durable until little is left.
	for range 8 {
		n, err := c.replayDurable(ctx, conn, r, have, ^uint64(0))
		total += n
		if err != nil {
			return total, err
		}
		if n < 64 {
			break
		}
	}
	c.mu.Lock()
	if c.mu.retired[r] {
		// The loop ends here: Reinstate starts a new one.
		delete(c.mu.recovering, r)
		c.mu.Unlock()
		return total, errRetired
	}
	c.mu.core.Step(coord.Rejoin{R: r})
	upTo := c.opts.Base + uint64(c.mu.core.Decided())
	c.applyLocked()
	c.mu.Unlock()
	// Everything decided before the rejoin is logged (the coordinator
	// logs at decision); replay it once durable, then let r run.
	err = c.durable.wait(ctx, upTo)
	if err == nil {
		var n int
		n, err = c.replayDurable(ctx, conn, r, have, upTo)
		total += n
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.mu.core.IsDown(r) {
		// Taken out again while catching up (its probe went unanswered,
		// or an operator): Caught would be ignored, and r must not be
		// shown up. The retry loop goes on.
		err = errTakenOutAgain
	}
	if err != nil {
		c.mu.core.Step(coord.Down{R: r})
		c.applyLocked()
		c.mu.recovering[r] = true // stays set: the retry loop goes on
		return total, err
	}
	c.mu.core.Step(coord.Caught{R: r})
	delete(c.mu.recovering, r)
	c.status[r].down.Store(false)
	c.status[r].suspect.Store(false)
	c.applyLocked()
	return total, nil
}

// lostCommits checks that a replica coming back still holds the
// transactions of this run that it was seen to commit: those below
// applied, the log barrier below which it had committed every decided
// transaction when it was taken out. An engine that acknowledged a
// COMMIT and then lost it (PostgreSQL with synchronous_commit=off killed,
// a disk that lied about a flush) lacks some. The log may already have
// dropped records every replica had committed, so a lost transaction may
// be beyond replay: when the replica lacks even the log's first record,
// earlier ones it lost could be gone, and it must stay out rather than
// come back silently without them. Otherwise the lost ones are replayed
// with the rest; lostCommits counts them. Barriers below base (an earlier
// run's) are not checked: this run's coordinator never saw them commit.
func lostCommits(records []wal.Record, have map[uint64]bool, base, applied uint64) (int, error) {
	lost := 0
	for i, rec := range records {
		if rec.Barrier < base || rec.Barrier >= applied || have[rec.Barrier] {
			continue
		}
		if i == 0 {
			return 0, fmt.Errorf("the replica lacks barrier %d, which it committed, and the log no longer holds what came before it: it may have lost more, and stays out (rebuild it)", rec.Barrier)
		}
		lost++
	}
	return lost, nil
}

// errTakenOutAgain: a replica was taken out while it caught up.
var errTakenOutAgain = errors.New("taken out again while catching up")

// replayDurable replays the durable log records below upTo that r lacks.
func (c *Cluster) replayDurable(ctx context.Context, conn driver.Conn, r coord.ReplicaID, have map[uint64]bool, upTo uint64) (int, error) {
	limit := min(upTo, c.durable.get())
	records, err := c.opts.WAL.ReadFrom(0)
	if err != nil {
		return 0, err
	}
	var todo []wal.Record
	for _, rec := range records {
		if rec.Barrier < limit && !have[rec.Barrier] {
			todo = append(todo, rec)
		}
	}
	return Replay(ctx, conn, c.managers[r].Engine().Dialect(), todo, have)
}
