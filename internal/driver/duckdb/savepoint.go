package duckdb

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// DuckDB has no savepoints, and a failed statement aborts its whole
// transaction. The driver gives them PostgreSQL's meaning all the same,
// from what it knows of the transaction: every statement that succeeded
// in it is logged (its text, parameters and a digest of its answer), a
// SAVEPOINT notes how far the log had come, RELEASE forgets the notes,
// and ROLLBACK TO SAVEPOINT rolls the DuckDB transaction back, begins
// another, and runs the logged statements up to the savepoint again. The
// replica runs one transaction at a time (class Serial) and shepherd
// writes its statements deterministic (nondeterminism pinned), so the
// run again must answer as the first: a statement that answers otherwise
// or fails fails ROLLBACK TO with XX000, this replica's error, never
// silently, and the transaction stays failed. A statement failed in the
// transaction (DuckDB aborted it) is not logged: ROLLBACK TO a savepoint
// made before it recovers the transaction, as PostgreSQL's does.
//
// The statements are those shepherd writes for every engine
// (sqlan.NewSavepoint): SAVEPOINT "name", RELEASE SAVEPOINT "name" and
// ROLLBACK TO SAVEPOINT "name".

// txLog is what the open transaction ran (see above).
type txLog struct {
	stmts  []logged
	points []savepointMark
}

// logged is one statement that succeeded, and its answer's digest.
type logged struct {
	q   driver.Query
	sum [sha256.Size]byte
}

// savepointMark is a savepoint: its name and how many statements of the
// log came before it.
type savepointMark struct {
	name string
	at   int
}

func (l *txLog) reset() {
	clear(l.stmts) // no query is kept alive past its transaction
	l.stmts, l.points = l.stmts[:0], l.points[:0]
}

// record logs q, which answered a.
func (l *txLog) record(q driver.Query, a *answer.Answer) {
	q.Sink = nil
	l.stmts = append(l.stmts, logged{q: q, sum: digest(a)})
}

// find returns the index of the latest savepoint named name, or -1.
func (l *txLog) find(name string) int {
	for i := len(l.points) - 1; i >= 0; i-- {
		if l.points[i].name == name {
			return i
		}
	}
	return -1
}

// digest sums what a replica's answer says: its tag, columns' names and
// types, and rows.
func digest(a *answer.Answer) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	str := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	str(a.Tag)
	binary.LittleEndian.PutUint64(n[:], uint64(a.RowsAffected))
	h.Write(n[:])
	for _, c := range a.Columns {
		str(c.Name)
		str(c.Type.String())
	}
	for _, row := range a.Rows {
		str("row")
		for _, v := range row {
			if v.Null {
				str("\x00null")
				continue
			}
			str(v.Type.String())
			str(v.Text)
		}
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// savepointOp is a savepoint statement's kind.
type savepointOp int

const (
	spDefine savepointOp = iota + 1
	spRelease
	spRollbackTo
)

// savepointOf recognises the savepoint statements shepherd writes (see
// above) and returns their kind and savepoint name.
func savepointOf(q driver.Query) (savepointOp, string, bool) {
	for _, p := range []struct {
		prefix string
		op     savepointOp
	}{{"SAVEPOINT ", spDefine}, {"RELEASE SAVEPOINT ", spRelease}, {"ROLLBACK TO SAVEPOINT ", spRollbackTo}} {
		rest, ok := strings.CutPrefix(q.SQL, p.prefix)
		if !ok {
			continue
		}
		if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
			return 0, "", false
		}
		name := rest[1 : len(rest)-1]
		if strings.Contains(strings.ReplaceAll(name, `""`, ""), `"`) {
			return 0, "", false
		}
		return p.op, strings.ReplaceAll(name, `""`, `"`), true
	}
	return 0, "", false
}

// savepoint runs a savepoint statement (see above).
func (c *Conn) savepoint(ctx context.Context, q driver.Query, op savepointOp, name string) (*answer.Answer, error) {
	what := map[savepointOp]string{spDefine: "SAVEPOINT", spRelease: "RELEASE SAVEPOINT", spRollbackTo: "ROLLBACK TO SAVEPOINT"}[op]
	if !c.inTx {
		return nil, c.engine.tagged(pgerr.New(pgerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what))
	}
	ok := &answer.Answer{Tag: answer.Tag(q.Command(), 0)}
	if op != spRollbackTo && c.failed {
		return nil, c.aborted()
	}
	i := -1
	if op != spDefine {
		if i = c.log.find(name); i < 0 {
			return nil, c.engine.tagged(pgerr.New("3B001", "savepoint \"%s\" does not exist", name))
		}
	}
	switch op {
	case spDefine:
		c.log.points = append(c.log.points, savepointMark{name: name, at: len(c.log.stmts)})
		return ok, nil
	case spRelease:
		c.log.points = c.log.points[:i]
		return ok, nil
	}
	mark := c.log.points[i]
	c.log.points = c.log.points[:i+1]
	if err := c.replay(ctx, mark); err != nil {
		c.failed = true
		return nil, err
	}
	c.failed = false
	return ok, nil
}

// replay rolls the DuckDB transaction back and runs the logged statements
// before savepoint mark again in a new one, which must answer each as
// before (see above). The log keeps those statements only.
func (c *Conn) replay(ctx context.Context, mark savepointMark) error {
	if err := c.run(ctx, "ROLLBACK"); err != nil {
		return err
	}
	if err := c.run(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	for i := range c.log.stmts[:mark.at] {
		st := &c.log.stmts[i]
		a, err := c.exec(ctx, st.q)
		if err == nil && digest(a) == st.sum {
			continue
		}
		if pgerr.Code(err) == pgerr.QueryCanceled {
			return err
		}
		e := pgerr.New(pgerr.InternalError,
			"DuckDB answered a statement otherwise when it ran the transaction again to roll back to savepoint \"%s\"", mark.name)
		if err != nil {
			e = pgerr.Wrap(pgerr.InternalError, err,
				"DuckDB failed a statement when it ran the transaction again to roll back to savepoint \""+mark.name+"\"")
		}
		return c.engine.tagged(e.WithDetail("statement: %s", st.q.SQL))
	}
	clear(c.log.stmts[mark.at:])
	c.log.stmts = c.log.stmts[:mark.at]
	return nil
}

// aborted is the error of a statement of a transaction DuckDB aborted
// after one of its statements failed (see Exec).
func (c *Conn) aborted() error {
	return c.engine.tagged(pgerr.New(pgerr.SerializationFailure,
		"DuckDB aborted the whole transaction after a failed statement").
		WithHint("roll the transaction back (or back to a savepoint before the failure) and retry it"))
}
