package server

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// recoverReplicas brings every replica up to the write-ahead log before
// clients are let in: each logged transaction a replica's log table lacks
// (it crashed, or shepherd did, between the log and its COMMIT there) is
// replayed to it, in barrier order, state-changing statements only, each
// in one engine transaction that also writes its log-table row. It
// returns the barrier this run's first commit takes: above everything in
// the log and in every replica's log table.
func recoverReplicas(ctx context.Context, engines []driver.Engine, names []string, cache *sqlan.Cache, records []wal.Record, log *slog.Logger) (uint64, error) {
	var from, next uint64 = 0, 1
	if len(records) > 0 {
		from = records[0].Barrier
		next = records[len(records)-1].Barrier + 1
	}
	for i, e := range engines {
		c, err := e.Connect(ctx)
		if err != nil {
			return 0, fmt.Errorf("replica %s: %w", names[i], err)
		}
		n, top, err := replay(ctx, c, e.Dialect(), cache, records, from)
		c.Close()
		if err != nil {
			return 0, fmt.Errorf("replica %s: replaying the write-ahead log: %w", names[i], err)
		}
		if n > 0 {
			log.Warn("replica caught up from the write-ahead log", "replica", names[i], "transactions", n)
		}
		next = max(next, top+1)
	}
	return next, nil
}

// replay applies to one replica the records its log table lacks and
// reports how many it applied and the highest barrier it holds.
func replay(ctx context.Context, c driver.Conn, d driver.Dialect, cache *sqlan.Cache, records []wal.Record, from uint64) (int, uint64, error) {
	have, top, err := replica.LogRead(ctx, c, from)
	if err != nil {
		return 0, 0, err
	}
	n, err := cluster.Replay(ctx, c, d, records, have)
	if err != nil {
		return n, 0, err
	}
	if len(records) > 0 {
		top = max(top, records[len(records)-1].Barrier)
	}
	return n, top, nil
}
