package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// walStatement is a statement of a decided transaction as the log keeps
// it: the client's text and arguments, and for each dialect the replicas
// speak, the text and arguments those replicas were sent. Replay sends
// the latter, so that it never depends on the schema catalog of its own
// day (a table dropped and created again, columns renamed, would give
// another translation). c.mu is held.
func (c *Cluster) walStatement(call stmtCall) wal.Statement {
	st := wal.Statement{
		SQL: call.st.SQL, Args: walArgs(call.args),
		Writes: call.st.Kind != sqlan.Read, DDL: call.st.Kind == sqlan.DDL, Verb: call.st.Verb,
	}
	if !st.Writes {
		return st // replay skips it: its forms would only take room
	}
	for _, d := range c.dialects {
		q := call.queries[d]
		if !call.written[d] {
			q = query(call, d)
		}
		st.Forms = append(st.Forms, wal.Form{Dialect: uint8(d), SQL: q.SQL, Args: walArgs(q.Args), Rows: q.ReturnsRows})
	}
	return st
}

// Barrier returns the transaction's barrier in the write-ahead log once
// it committed there, 0 for a transaction that was not logged (no
// writes, no log, or a mode without one).
func (t *Txn) Barrier() uint64 {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.barrier
}

// ID is the transaction's id, as its write-ahead log record names it
// (wal.Record.Txn).
func (t *Txn) ID() uint64 { return uint64(t.id) }

// ErrUnreplayable is wrapped by the error of a replay that found a
// logged statement without the form its replica's dialect ran: a record
// of an older shepherd (log format 1 kept the client's text only), or a
// dialect added to the configuration since. Analysing the client's text
// again against today's schema could write something else than the
// other replicas wrote, so the replica stays out instead.
var ErrUnreplayable = errors.New("the write-ahead log does not hold this statement as the replica's dialect ran it")

// Replay applies to one replica, over connection c, the logged
// transactions it lacks (have holds the barriers its log table has), in
// barrier order: the state-changing statements of each, exactly as the
// replicas of its dialect ran them, and its log-table row, in one engine
// transaction, so that a crash during replay leaves whole transactions.
// It returns how many it applied.
func Replay(ctx context.Context, c driver.Conn, d driver.Dialect, records []wal.Record, have map[uint64]bool) (int, error) {
	n := 0
	for _, rec := range records {
		if have[rec.Barrier] {
			continue
		}
		// Check the whole record before anything reaches the replica.
		var qs []driver.Query
		var ddl []bool
		for _, st := range rec.Statements {
			if !st.Writes {
				continue
			}
			q, ok := replayQuery(d, st)
			if !ok {
				return n, fmt.Errorf("barrier %d: %s: %w (dialect %s)", rec.Barrier, st.SQL, ErrUnreplayable, d)
			}
			qs, ddl = append(qs, q), append(ddl, st.DDL)
		}
		if d == driver.MySQL && writesBeforeDDL(ddl) {
			return n, fmt.Errorf("barrier %d: %w", rec.Barrier, ErrWritesBeforeDDL)
		}
		if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
			return n, err
		}
		for i, q := range qs {
			_, err := c.Exec(ctx, q)
			if err != nil && ddl[i] && alreadyDone(d, err) {
				// MariaDB commits DDL at once: a crash between the DDL
				// and its log-table row leaves the change in place
				// without the row.
				err = nil
			}
			if err != nil {
				c.Rollback(ctx)
				return n, &ReplayError{Barrier: rec.Barrier, SQL: q.SQL, Err: err}
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

// ErrWritesBeforeDDL is wrapped by the error of a replay to a replica
// that commits DDL as it runs it (MariaDB) of a logged transaction block
// with writes before a DDL statement: the DDL commits those writes, so a
// replay cut short after it (a lost connection, a crash, a later
// statement failing) would leave them without the log-table row, and the
// next replay would apply them again. Such a replica stays out of the
// cluster until an operator rebuilds it from another.
var ErrWritesBeforeDDL = errors.New("the transaction writes before its DDL, which MariaDB commits with the DDL, so a replay cut short could apply the writes twice; rebuild the replica from another")

// writesBeforeDDL reports whether a write that is not DDL comes before a
// DDL statement (ddl[i] tells statement i's kind).
func writesBeforeDDL(ddl []bool) bool {
	write := false
	for _, isDDL := range ddl {
		if isDDL && write {
			return true
		}
		write = write || !isDDL
	}
	return false
}

// replayQuery returns the logged statement as dialect d ran it, and false
// if the log does not hold that form.
func replayQuery(d driver.Dialect, st wal.Statement) (driver.Query, bool) {
	f, ok := st.FormFor(uint8(d))
	if !ok {
		return driver.Query{}, false
	}
	args := make([]driver.Arg, len(f.Args))
	for i, v := range f.Args {
		args[i] = driver.Arg{Null: v.Null, Type: answer.Type(v.Type), Text: v.Text}
	}
	return driver.Query{SQL: f.SQL, Args: args, ReturnsRows: f.Rows, Verb: st.Verb}, true
}

// alreadyDone reports whether a DDL statement failed on a replica of
// dialect d because its effect is there already (replayed after a crash
// that came between the change and its log-table row). Only a replica
// that commits DDL as it runs it (MariaDB, whose forms are one statement
// each) can hold a change without its row. Elsewhere the change commits
// with its row, so such an error says the replica differs, and must stop
// the replay: on SQLite an ALTER TABLE may be a rebuild of several
// statements in one text (package dialect), and taking a failed step of
// it for done would commit the table half rebuilt, or skip the change.
func alreadyDone(d driver.Dialect, err error) bool {
	if d != driver.MySQL {
		return false
	}
	switch pgerr.Code(err) {
	case pgerr.DuplicateTable, pgerr.DuplicateColumn, pgerr.DuplicateObject,
		pgerr.UndefinedTable, pgerr.UndefinedColumn, pgerr.UndefinedObject:
		return true
	}
	return false
}
