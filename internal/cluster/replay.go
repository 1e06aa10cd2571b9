package cluster

import (
	"context"
	"fmt"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// Replay applies to one replica, over connection c, the logged
// transactions it lacks (have holds the barriers its log table has), in
// barrier order: the state-changing statements of each, and its
// log-table row, in one engine transaction, so that a crash during replay
// leaves whole transactions. It returns how many it applied.
func Replay(ctx context.Context, c driver.Conn, d driver.Dialect, cache *sqlan.Cache, records []wal.Record, have map[uint64]bool) (int, error) {
	n := 0
	for _, rec := range records {
		if have[rec.Barrier] {
			continue
		}
		if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
			return n, err
		}
		for _, st := range rec.Statements {
			if !st.Writes {
				continue
			}
			q, ddl, err := replayQuery(cache, d, st)
			if err == nil {
				_, err = c.Exec(ctx, q)
			}
			if err != nil && ddl && alreadyDone(err) {
				// MariaDB commits DDL at once: a crash between the DDL
				// and its log-table row leaves the change in place
				// without the row.
				err = nil
			}
			if err != nil {
				c.Rollback(ctx)
				return n, &ReplayError{Barrier: rec.Barrier, SQL: st.SQL, Err: err}
			}
		}
		if _, err := c.Exec(ctx, replica.LogInsert(d, rec.Barrier)); err != nil {
			c.Rollback(ctx)
			return n, err
		}
		if err := c.Commit(ctx); err != nil {
			return n, err
		}
		have[rec.Barrier] = true
		n++
	}
	return n, nil
}

// replayQuery writes a logged statement for dialect d, with the values it
// was run with (the client's and the pinned ones) in the dialect's order,
// and says whether it is DDL.
func replayQuery(cache *sqlan.Cache, d driver.Dialect, st wal.Statement) (driver.Query, bool, error) {
	sts, err := cache.Parse(st.SQL)
	if err != nil {
		return driver.Query{}, false, err
	}
	if len(sts) != 1 {
		return driver.Query{}, false, fmt.Errorf("%d statements in one log entry", len(sts))
	}
	args := make([]driver.Arg, len(st.Args))
	for i, v := range st.Args {
		args[i] = driver.Arg{Null: v.Null, Type: answer.Type(v.Type), Text: v.Text}
	}
	return sqlan.Query(sts[0], d, args), sts[0].Kind == sqlan.DDL, nil
}

// alreadyDone reports whether a DDL statement failed because its effect
// is there already (replayed after a crash that came between the change
// and its log-table row).
func alreadyDone(err error) bool {
	switch pgerr.Code(err) {
	case pgerr.DuplicateTable, pgerr.DuplicateColumn, pgerr.DuplicateObject,
		pgerr.UndefinedTable, pgerr.UndefinedColumn, pgerr.UndefinedObject:
		return true
	}
	return false
}
