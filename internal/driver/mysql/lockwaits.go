package mysql

import (
	"context"
	"time"
)

// lockWaitsGap is how long after one read of InnoDB's lock waits the next
// may go to the server. InnoDB fills information_schema.innodb_trx,
// innodb_locks and innodb_lock_waits from a cache that it refreshes only
// when nobody read it in the last 100 ms (trx0i_s.cc,
// CACHE_MIN_IDLE_TIME_US): asked more often, as a lock_timeout watcher and
// the deadlock check of each waiting session do, the server answers the
// same old picture for as long as the questions keep coming, and a wait
// that began after it was taken is never seen (TestBlockersUnderPolling).
// Reads at least this far apart each see a fresh picture; questions in
// between get the latest one, at most this old.
const lockWaitsGap = 125 * time.Millisecond

// lockWaits is the engine's latest read of every InnoDB lock wait. sem,
// a one-slot semaphore that a ctx can stop waiting for, serializes the
// reads; at and blockers are guarded by it.
type lockWaits struct {
	sem      chan struct{}
	at       time.Time         // when the latest read ended; zero before the first
	blockers map[int64][]int64 // waiting session -> sessions holding what it waits for
}

// Blockers implements driver.LockWaits with InnoDB's lock waits (row and
// table locks; metadata lock waits are not there), as read at most
// lockWaitsGap ago.
func (e *Engine) Blockers(ctx context.Context, backend int64) ([]int64, error) {
	w := &e.waits
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-w.sem }()
	if w.at.IsZero() || time.Since(w.at) >= lockWaitsGap {
		got, err := e.readLockWaits(ctx)
		if err != nil {
			return nil, err
		}
		w.blockers, w.at = got, time.Now()
	}
	return append([]int64(nil), w.blockers[backend]...), nil
}

// readLockWaits reads every InnoDB lock wait from the server.
func (e *Engine) readLockWaits(ctx context.Context) (map[int64][]int64, error) {
	rows, err := e.db.QueryContext(ctx, `SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id
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
