package session

import (
	"context"
	"strconv"
	"unsafe"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// cursor is a DECLAREd cursor. Its query runs, voted like any other
// statement, at DECLARE, and the answer is kept: a cursor sees the data as
// of its DECLARE (PostgreSQL's snapshot), and FETCH and MOVE move over the
// kept rows. The price is memory: a cursor over many rows holds them all.
type cursor struct {
	cols []answer.Column
	rows [][]answer.Value
	size int64 // rowsSize(rows), counted against the session's CursorMemory
	// pos is the position: 0 before the first row, 1..len(rows) on a
	// row, len(rows)+1 after the last.
	pos      int64
	hold     bool // WITH HOLD: outlives its transaction's COMMIT
	noScroll bool // NO SCROLL: forward only
	binary   bool // BINARY: FETCH answers in binary format (simple protocol)
	inBlock  bool // declared in the open block: gone if it rolls back
	failed   bool // a FETCH or MOVE failed: it can only be closed
}

// CursorMemory is how many bytes of rows the cursors of one session may
// keep together (see rowsSize) unless Shared.CursorMemory says otherwise:
// a DECLARE whose answer would go beyond it fails with 54000 and keeps
// nothing.
const CursorMemory = 256 << 20

// rowsSize is what rows take in memory, near enough: each value's text
// and its header, each row's slice header.
func rowsSize(rows [][]answer.Value) int64 {
	n := int64(len(rows)) * int64(unsafe.Sizeof([]answer.Value(nil)))
	for _, r := range rows {
		n += int64(len(r)) * int64(unsafe.Sizeof(answer.Value{}))
		for _, v := range r {
			n += int64(len(v.Text))
		}
	}
	return n
}

// duplicateCursor is SQLSTATE 42P03.
const duplicateCursor = "42P03"

func noCursor(name string) error {
	return pgerr.New(pgerr.InvalidCursorName, "cursor %q does not exist", name)
}

// declare runs DECLARE: the query now, its answer kept under the name.
func (s *Session) declare(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	op := st.Session
	block := s.inBlock || s.implicit
	if !block && !op.Cursor.Hold {
		return nil, pgerr.New(pgerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, ok := s.cursors[op.Name]; ok || op.Name == "" {
		return nil, pgerr.New(duplicateCursor, "cursor %q already exists", op.Name)
	}
	// The answer may come partly spilled (past the answer memory bound):
	// the cursor's own bound, CursorMemory, is the one that applies to
	// what it keeps, read back until it is passed.
	a, err := s.exec(cluster.WithSpill(ctx), st.Inner, args)
	if err != nil {
		return nil, err
	}
	defer a.More.Close()
	size := rowsSize(a.Rows)
	limit := s.cursorLimit
	if limit <= 0 {
		limit = s.shared.cursorMemoryLimit()
	}
	if limit <= 0 {
		limit = CursorMemory
	}
	var kept int64
	for _, c := range s.cursors {
		kept += c.size
	}
	for kept+size <= limit && a.More.Len() > 0 {
		row, err := a.More.Next()
		if err != nil {
			return nil, pgerr.Wrap(pgerr.IOError, err, "")
		}
		a.Rows = append(a.Rows, row)
		size += rowsSize(a.Rows[len(a.Rows)-1:])
	}
	if kept+size > limit {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded,
			"cursor %q would keep %d bytes of rows in shepherd, beyond the %d bytes a session's cursors may keep (%d kept by its other cursors)",
			op.Name, size, limit, kept).
			WithDetail("shepherd runs a cursor's query once, at DECLARE, and keeps its answer until the cursor is closed.").
			WithHint("Narrow the cursor's query (a WHERE clause or a LIMIT), or close other cursors.")
	}
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	s.cursors[op.Name] = &cursor{cols: a.Columns, rows: a.Rows, size: size, hold: op.Cursor.Hold, noScroll: op.Cursor.NoScroll, binary: op.Cursor.Binary, inBlock: block}
	return &answer.Answer{Tag: st.Verb}, nil
}

// DescribeCursor implements pgwire.CursorDescriber: the columns of a
// DECLAREd cursor, for a Describe of the portal of that name (psycopg 3
// asks so after DECLARE).
func (s *Session) DescribeCursor(name string) ([]answer.Column, bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, false
	}
	return c.cols, true
}

// cursorColumns are the columns FETCH from the named cursor answers.
func (s *Session) cursorColumns(name string) ([]answer.Column, error) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, noCursor(name)
	}
	return c.cols, nil
}

// fetch runs FETCH or MOVE, with PostgreSQL's rules for each direction
// (DoPortalRunFetch).
func (s *Session) fetch(st *sqlan.Stmt) (*answer.Answer, error) {
	f, name := st.Session.Fetch, st.Session.Name
	c, ok := s.cursors[name]
	if !ok {
		return nil, noCursor(name)
	}
	if c.failed {
		return nil, pgerr.New(objectNotInPrerequisiteState, "portal %q cannot be run", name)
	}
	var out [][]answer.Value
	keep := !f.Move
	n := int64(len(c.rows))
	// forward moves over up to count rows after pos; backward before it.
	forward := func(count int64, keep bool) int64 {
		if c.pos > n || count <= 0 {
			return 0
		}
		end := n
		if count < n-c.pos {
			end = c.pos + count
		}
		if keep {
			out = append(out, c.rows[c.pos:end]...)
		}
		got := end - c.pos
		c.pos = end
		if got < count {
			c.pos = n + 1
		}
		return got
	}
	var err error
	backward := func(count int64, keep bool) int64 {
		if c.noScroll && err == nil {
			err = pgerr.New(objectNotInPrerequisiteState, "cursor can only scan forward").
				WithHint("Declare it with SCROLL option to enable backward scan.")
		}
		if err != nil || c.pos == 0 || count <= 0 {
			return 0
		}
		start := int64(1)
		if count < c.pos-1 {
			start = c.pos - count
		}
		if keep {
			for i := c.pos - 1; i >= start; i-- {
				out = append(out, c.rows[i-1])
			}
		}
		got := c.pos - start
		c.pos = start
		if got < count {
			c.pos = 0
		}
		return got
	}
	rewind := func() {
		if c.pos != 0 && c.noScroll && err == nil {
			err = pgerr.New(objectNotInPrerequisiteState, "cursor can only scan forward").
				WithHint("Declare it with SCROLL option to enable backward scan.")
		}
		if err == nil {
			c.pos = 0
		}
	}
	dir, count := f.Direction, f.Count
	var moved int64
	switch {
	case dir == sqlan.FetchAbsolute && count > 0:
		// Rewind only when the row is behind (PostgreSQL's way, which
		// a NO SCROLL cursor can follow forward).
		if min(c.pos, n) >= count {
			rewind()
			if count > 1 {
				forward(count-1, false)
			}
		} else if count <= c.pos {
			backward(c.pos-count+1, false)
		} else if count > c.pos+1 {
			forward(count-c.pos-1, false)
		}
		moved = forward(1, keep)
	case dir == sqlan.FetchAbsolute && count < 0:
		if c.pos <= n {
			forward(sqlan.FetchAll, false)
		}
		if count < -1 {
			backward(-count-1, false)
		}
		moved = backward(1, keep)
	case dir == sqlan.FetchAbsolute:
		rewind()
	case dir == sqlan.FetchRelative && count > 0:
		if count > 1 {
			forward(count-1, false)
		}
		moved = forward(1, keep)
	case dir == sqlan.FetchRelative && count < 0:
		if count < -1 {
			backward(-count-1, false)
		}
		moved = backward(1, keep)
	default:
		if dir == sqlan.FetchForward && count < 0 || dir == sqlan.FetchBackward && count < 0 {
			count = -count
			dir ^= 1 // forward <-> backward
		}
		if dir == sqlan.FetchRelative {
			dir = sqlan.FetchForward // RELATIVE 0: the current row
		}
		onRow := c.pos >= 1 && c.pos <= n
		switch {
		case count == 0 && f.Move:
			if onRow {
				moved = 1
			}
		case count == 0:
			// PostgreSQL re-fetches the current row by stepping back
			// one row and then forward; off a row, it still runs
			// the executor in the direction asked, for no row.
			// Either backward step is refused on a NO SCROLL cursor.
			if onRow {
				backward(1, false)
				if err == nil {
					moved = forward(1, keep)
				}
			} else if dir == sqlan.FetchBackward {
				backward(0, false)
			}
		case dir == sqlan.FetchBackward && count == sqlan.FetchAll && f.Move:
			moved = c.pos - 1
			if c.pos > n {
				moved = n
			}
			moved = max(moved, 0)
			rewind()
		case dir == sqlan.FetchForward:
			moved = forward(count, keep)
		default:
			moved = backward(count, keep)
		}
	}
	if err != nil {
		// PostgreSQL marks a portal whose run failed: a cursor that
		// outlives the error (WITH HOLD, outside a block) cannot be
		// used again, only closed.
		c.failed = true
		return nil, err
	}
	if f.Move {
		return &answer.Answer{Tag: "MOVE " + strconv.FormatInt(moved, 10)}, nil
	}
	return &answer.Answer{Columns: c.cols, Rows: out, Tag: "FETCH " + strconv.Itoa(len(out)), RowsAffected: int64(len(out)), Binary: c.binary}, nil
}

// closeCursor runs CLOSE name: a cursor, else a portal of the protocol.
func (s *Session) closeCursor(name string) error {
	if _, ok := s.cursors[name]; ok {
		delete(s.cursors, name)
		return nil
	}
	if s.conn != nil && s.conn.DropPortal(name) {
		return nil
	}
	return noCursor(name)
}

// endCursors ends the cursors of a transaction: those without HOLD go,
// and on rollback those declared in it too; the others outlive it.
func (s *Session) endCursors(commit bool) {
	for name, c := range s.cursors {
		if !c.hold || !commit && c.inBlock {
			delete(s.cursors, name)
			continue
		}
		c.inBlock = false
	}
}
