package mysql

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// lockWaitsGap is how long after one read of InnoDB's lock waits the next
// may go to the server. InnoDB fills information_schema.innodb_trx,
// innodb_locks and innodb_lock_waits from a cache that it refreshes only
// when nobody read it in the last 100 ms (trx0i_s.cc,
// CACHE_MIN_IDLE_TIME_US): asked more often, as a lock_timeout watcher and
// the deadlock check of each waiting session do, the server answers the
// same old picture for as long as the questions keep coming, and a wait
// that began after it was taken is never seen (TestBlockersUnderPolling).
// The cache is the server's, so the gap is kept between all the reads of
// this process on one server (every engine on it shares one lockWaits:
// TestBlockersEnginesShareServer).
const lockWaitsGap = 125 * time.Millisecond

// lockWaits is the latest read of every InnoDB lock wait on one server
// (the query is server-wide; Blockers picks its session's). sem, a
// one-slot semaphore that a ctx can stop waiting for, serializes the
// reads; start, end and blockers are guarded by it.
type lockWaits struct {
	key  string // the server's network and address (lockWaitsOf)
	refs int    // engines using it; guarded by serverWaits.mu

	sem      chan struct{}
	start    time.Time         // when the latest read began; zero before the first
	end      time.Time         // when it ended
	blockers map[int64][]int64 // waiting session -> sessions holding what it waits for
}

// serverWaits is the lockWaits of each server some open engine uses.
var serverWaits struct {
	mu sync.Mutex
	m  map[string]*lockWaits
}

// lockWaitsOf returns the lockWaits of the server at network and addr,
// for one more engine (release it with releaseLockWaits).
func lockWaitsOf(network, addr string) *lockWaits {
	key := network + "\x00" + addr
	serverWaits.mu.Lock()
	defer serverWaits.mu.Unlock()
	w := serverWaits.m[key]
	if w == nil {
		if serverWaits.m == nil {
			serverWaits.m = map[string]*lockWaits{}
		}
		w = &lockWaits{key: key, sem: make(chan struct{}, 1)}
		serverWaits.m[key] = w
	}
	w.refs++
	return w
}

// releaseLockWaits ends one engine's use of w: the last one forgets it.
func releaseLockWaits(w *lockWaits) {
	serverWaits.mu.Lock()
	defer serverWaits.mu.Unlock()
	if w.refs--; w.refs == 0 {
		delete(serverWaits.m, w.key)
	}
}

// Blockers implements driver.LockWaits with InnoDB's lock waits (row and
// table locks; metadata lock waits are not there), from a read that began
// at or after the call (or driver.NotBefore's time): a wait it shows was
// under way then, never one that ended before. A read that began earlier
// is not used; the next is made no sooner than lockWaitsGap after the
// latest ended, and serves everyone who asked before it began.
func (e *Engine) Blockers(ctx context.Context, backend int64) ([]int64, error) {
	notBefore := driver.NotBefore(ctx)
	if notBefore.IsZero() {
		notBefore = time.Now()
	}
	w := e.waits
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-w.sem }()
	if w.start.IsZero() || w.start.Before(notBefore) {
		if wait := lockWaitsGap - time.Since(w.end); !w.end.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
		start := time.Now()
		got, err := readLockWaits(ctx, e.db)
		if err != nil {
			return nil, err
		}
		w.blockers, w.start, w.end = got, start, time.Now()
	}
	return append([]int64(nil), w.blockers[backend]...), nil
}

// readLockWaits reads every InnoDB lock wait on db's server.
func readLockWaits(ctx context.Context, db *sql.DB) (map[int64][]int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id
		FROM information_schema.innodb_lock_waits w
		JOIN information_schema.innodb_trx b ON b.trx_id = w.blocking_trx_id
		JOIN information_schema.innodb_trx r ON r.trx_id = w.requesting_trx_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][]int64{}
	for rows.Next() {
		var waiter, holder int64
		if err := rows.Scan(&waiter, &holder); err != nil {
			return nil, err
		}
		out[waiter] = append(out[waiter], holder)
	}
	return out, rows.Err()
}
