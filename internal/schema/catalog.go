package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// seqReserve is how many sequence values are handed out per write of the
// catalog file: after a crash up to this many values are skipped, as
// PostgreSQL's own sequences skip the values they had cached.
const seqReserve = 1024

// Catalog holds the current schema snapshot and the key sequences, and
// keeps both in a file (none: in memory only). Safe for concurrent use.
type Catalog struct {
	path string
	snap atomic.Pointer[Snapshot]

	mu sync.Mutex
	// seqs is the next value of each sequence ("table.column"); saved
	// is the bound the file allows values up to (exclusive).
	seqs  map[string]int64
	saved map[string]int64
	// named is where each sequence of CREATE SEQUENCE stands; durable
	// is the state the file holds for it, and ahead how many more
	// nextval() calls the file's state covers (see SeqNext).
	named   map[string]SeqState
	durable map[string]SeqState
	ahead   map[string]int64
	// mark says which logged transactions' schema changes the catalog
	// holds (see LogMark).
	mark LogMark
	// pending are the catalog changes of blocks whose COMMIT is under
	// way, by transaction (see Pending).
	pending map[uint64]PendingBlock
}

// LogMark says which transactions of the write-ahead log have their
// schema changes in the catalog: every one with a barrier up to Floor,
// and those in Applied above it. It is written in the same file, in the
// same atomic rename, as the changes, so that a start-up can tell which
// logged DDL the file lacks (shepherd stopped between the log and the
// catalog) and apply it from the log.
type LogMark struct {
	Floor   uint64   `json:"floor"`
	Applied []uint64 `json:"applied,omitempty"`
}

// Holds reports whether the schema changes of the logged transaction at
// barrier b are in the catalog.
func (m LogMark) Holds(b uint64) bool {
	return b <= m.Floor || slices.Contains(m.Applied, b)
}

// fileForm is the catalog file's content.
type fileForm struct {
	Schema *Snapshot `json:"schema"`
	// Sequences are bounds: no value at or above was handed out.
	Sequences map[string]int64 `json:"sequences"`
	// Named are the states of the sequences of CREATE SEQUENCE, each at
	// or past every value handed out.
	Named map[string]SeqState `json:"named_sequences,omitempty"`
	// Log is absent in the files of older shepherds, which recorded the
	// changes after the commit: those are taken to hold the whole log.
	Log *LogMark `json:"log,omitempty"`
	// Pending are the catalog changes of blocks whose COMMIT was under
	// way (see Catalog.Pending).
	Pending []PendingBlock `json:"pending,omitempty"`
}

// Open reads the catalog kept in path, or starts an empty one if the file
// does not exist. An empty path keeps the catalog in memory only.
func Open(path string) (*Catalog, error) {
	c := &Catalog{path: path, seqs: map[string]int64{}, saved: map[string]int64{},
		named: map[string]SeqState{}, durable: map[string]SeqState{}, ahead: map[string]int64{},
		pending: map[uint64]PendingBlock{}}
	var f fileForm
	existed := false
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("schema: %w", err)
		default:
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, fmt.Errorf("schema: %s is damaged: %w", path, err)
			}
			existed = true
		}
	}
	if f.Schema == nil {
		f.Schema = (*Snapshot)(nil).clone()
	}
	switch {
	case f.Log != nil:
		c.mark = *f.Log
	case existed:
		// An older shepherd's file: it cannot say what it lacks.
		c.mark.Floor = math.MaxUint64
	}
	for k, v := range f.Sequences {
		// Values below the saved bound may have been handed out before
		// a crash: start above it.
		c.seqs[k], c.saved[k] = v, v
	}
	for k, v := range f.Named {
		c.named[k], c.durable[k] = v, v
	}
	for _, p := range f.Pending {
		c.pending[p.Txn] = p
	}
	c.snap.Store(f.Schema)
	return c, nil
}

// Snapshot returns the current schema.
func (c *Catalog) Snapshot() *Snapshot { return c.snap.Load() }

// Apply records a DDL statement that committed on the replicas outside
// the write-ahead log.
func (c *Catalog) Apply(n *pg_query.Node) error { return c.Commit(0, []*pg_query.Node{n}) }

// Commit records the schema changes of a transaction that committed on
// the replicas, in order (TRUNCATE ... RESTART IDENTITY restarts the
// sequences of its tables), and, when barrier is not 0, that the logged
// transaction at that barrier is in the catalog: all in one write of the
// file. On an error the statements before it stay recorded, and so does
// the barrier, so that a start-up does not apply them a second time.
func (c *Catalog) Commit(barrier uint64, stmts []*pg_query.Node) error {
	return c.CommitBlock(barrier, stmts, nil)
}

// BlockSeqs is what a transaction block kept of its sequences until its
// COMMIT, since sequence DDL is transactional in PostgreSQL (others see
// it at COMMIT, ROLLBACK undoes it, with the nextval() calls the block
// made on what it created or restarted); nextval() of what others see is
// not, and is never undone.
type BlockSeqs struct {
	// Txn is the block's transaction in the write-ahead log (0: none);
	// CommitBlock forgets what Pending recorded of it.
	Txn uint64
	// Named are the states of the sequences of CREATE SEQUENCE that the
	// block made or restarted (its nextval() calls drew from these).
	Named map[string]SeqState
	// Serial are the SERIAL and IDENTITY counters ("table.column" as the
	// block leaves them) that the block started: of tables or columns it
	// made, and those it restarted (TRUNCATE ... RESTART IDENTITY,
	// ALTER SEQUENCE t_c_seq RESTART).
	Serial map[string]SerialStart
}

// SerialStart is a SERIAL counter a block started: Next is its next
// value. A restarted committed counter names it From, with its next
// value Base when the block restarted it: if other sessions drew values
// from it since (PostgreSQL would have made them wait), the counter
// continues past theirs too, so that none is handed out again.
type SerialStart struct {
	Next int64
	From string
	Base int64
}

// Empty reports whether b holds nothing.
func (b *BlockSeqs) Empty() bool { return b == nil || len(b.Named) == 0 && len(b.Serial) == 0 }

// CommitBlock is Commit of a block that kept sequence changes of its
// own (b): after its statements, the states and counters it started
// replace the committed ones, in the same write of the file.
func (c *Catalog) CommitBlock(barrier uint64, stmts []*pg_query.Node, b *BlockSeqs) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	changed := false
	serial := map[string]int64{}
	if b != nil {
		for k, st := range b.Serial {
			next := st.Next
			if cur, ok := c.seqs[st.From]; ok && st.From != "" && cur != st.Base {
				next = max(next, cur)
			}
			serial[k] = next
		}
	}
	for _, n := range stmts {
		old := c.snap.Load()
		var next *Snapshot
		if next, err = old.Apply(n); err != nil {
			break
		}
		if next != old {
			c.resetSequences(old, next, n)
			c.resetNamed(old, next, n)
			c.snap.Store(next)
			changed = true
		}
		if tr := n.GetTruncateStmt(); tr != nil && tr.RestartSeqs {
			for _, r := range tr.Relations {
				c.restartLocked(r.GetRangeVar().GetRelname())
				// And the sequences OWNED BY its columns, as PostgreSQL.
				for name, q := range c.snap.Load().Sequences {
					if t, _ := splitSeq(q.OwnedBy); t == r.GetRangeVar().GetRelname() {
						c.setNamedLocked(name, SeqState{Last: q.Start})
					}
				}
			}
			changed = true
		}
	}
	if b != nil && err == nil {
		snap := c.snap.Load()
		for name, st := range b.Named {
			if snap.Sequence(name) != nil {
				c.setNamedLocked(name, st)
				changed = true
			}
		}
		for k, next := range serial {
			table, col := splitSeq(k)
			if t := snap.Table(table); t != nil && t.Column(col) != nil && t.Column(col).Fill == FillSerial {
				c.seqs[k] = next
				c.saved[k] = max(c.saved[k], next)
				changed = true
			}
		}
		if _, ok := c.pending[b.Txn]; ok && b.Txn != 0 {
			delete(c.pending, b.Txn)
			changed = true
		}
	}
	if barrier > 0 && !c.mark.Holds(barrier) {
		c.mark.Applied = append(c.mark.Applied, barrier)
		changed = true
	}
	if !changed {
		return err
	}
	if serr := c.saveLocked(); err == nil {
		err = serr
	}
	return err
}

// Mark returns which logged transactions' schema changes the catalog
// holds.
func (c *Catalog) Mark() LogMark {
	c.mu.Lock()
	defer c.mu.Unlock()
	return LogMark{Floor: c.mark.Floor, Applied: slices.Clone(c.mark.Applied)}
}

// Settle records that the catalog holds the schema changes of every
// logged transaction up to barrier top (start-up applied those it
// lacked), which forgets the barriers recorded one by one below it.
func (c *Catalog) Settle(top uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mark.Floor = top
	c.mark.Applied = slices.DeleteFunc(c.mark.Applied, func(b uint64) bool { return b <= top })
	return c.saveLocked()
}

// resetSequences starts, renames and drops sequences with their tables.
// c.mu is held.
func (c *Catalog) resetSequences(old, next *Snapshot, n *pg_query.Node) {
	if r := n.GetRenameStmt(); r != nil {
		for k, v := range c.seqs {
			table, col := splitSeq(k)
			switch {
			case r.RenameType == pg_query.ObjectType_OBJECT_TABLE && table == r.Relation.Relname:
				table = r.Newname
			case r.RenameType == pg_query.ObjectType_OBJECT_COLUMN && table == r.Relation.Relname && col == r.Subname:
				col = r.Newname
			default:
				continue
			}
			delete(c.seqs, k)
			nk := table + "." + col
			c.seqs[nk], c.saved[nk] = v, max(c.saved[k], v)
			delete(c.saved, k)
		}
		return
	}
	for name, t := range old.Tables {
		if nt := next.Tables[name]; nt == nil || nt != t && n.GetCreateStmt() != nil {
			for _, col := range t.Columns {
				delete(c.seqs, name+"."+col.Name)
				delete(c.saved, name+"."+col.Name)
			}
		}
	}
	for name, t := range next.Tables {
		for _, col := range t.Columns {
			k := name + "." + col.Name
			if _, ok := c.seqs[k]; col.Fill == FillSerial && !ok {
				c.seqs[k], c.saved[k] = 1, 1
			}
		}
	}
}

// PendingBlock is what a transaction block's COMMIT will record in the
// catalog: its DDL in order (the client's text, sequence DDL included,
// which no replica runs and the write-ahead log does not hold) and its
// own sequences (BlockSeqs).
type PendingBlock struct {
	Txn        uint64                 `json:"txn"`
	Statements []string               `json:"statements,omitempty"`
	Named      map[string]SeqState    `json:"named,omitempty"`
	Serial     map[string]SerialStart `json:"serial,omitempty"`
}

// Pending records p durably before the block's COMMIT reaches the
// write-ahead log. A crash after the log record and before CommitBlock's
// write would otherwise lose what the log does not hold: the block's
// sequence DDL and the counters its rows drew from (a table made in the
// block would start at 1 again over its rows). Start-up applies p in
// place of the DDL of the log record of transaction p.Txn (PendingBlocks)
// and forgets p if the log has no such record: the COMMIT did not
// happen.
func (c *Catalog) Pending(p PendingBlock) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[p.Txn] = p
	return c.saveLocked()
}

// DropPending forgets what Pending recorded of transaction txn (its
// COMMIT failed).
func (c *Catalog) DropPending(txn uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[txn]; !ok {
		return nil
	}
	delete(c.pending, txn)
	return c.saveLocked()
}

// PendingBlocks returns what Pending recorded and CommitBlock did not
// yet record, by transaction.
func (c *Catalog) PendingBlocks() map[uint64]PendingBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.pending)
}

// ClearPending forgets every pending block (start-up, once the catalog
// holds the log).
func (c *Catalog) ClearPending() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	clear(c.pending)
	return c.saveLocked()
}

// SerialNext returns the next value of the SERIAL counter of
// table.column without drawing it (1 for a counter not started).
func (c *Catalog) SerialNext(table, column string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.seqs[table+"."+column]; ok {
		return v
	}
	return 1
}

// Restart sets the sequences of a table back to 1 (TRUNCATE ... RESTART
// IDENTITY).
func (c *Catalog) Restart(table string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restartLocked(table)
	return c.saveLocked()
}

func (c *Catalog) restartLocked(table string) {
	for k := range c.seqs {
		if t, _ := splitSeq(k); t == table {
			c.seqs[k] = 1
		}
	}
}

// Next reserves n consecutive values of the sequence of table.column and
// returns the first. Values are never handed out twice, also across
// restarts; values of transactions that rolled back are skipped, as in
// PostgreSQL.
func (c *Catalog) Next(table, column string, n int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := table + "." + column
	v, ok := c.seqs[k]
	if !ok {
		v = 1
	}
	c.seqs[k] = v + n
	if v+n > c.saved[k] {
		c.saved[k] = v + n + seqReserve
		if err := c.saveLocked(); err != nil {
			return 0, err
		}
	}
	return v, nil
}

// resetNamed starts, restarts and forgets the states of the sequences of
// CREATE SEQUENCE as next changes them. c.mu is held.
func (c *Catalog) resetNamed(old, next *Snapshot, n *pg_query.Node) {
	for name := range old.Sequences {
		if next.Sequences[name] == nil {
			delete(c.named, name)
			delete(c.durable, name)
			delete(c.ahead, name)
		}
	}
	for name, q := range next.Sequences {
		if old.Sequences[name] == nil {
			c.setNamedLocked(name, SeqState{Last: q.Start})
		}
	}
	if st, ok := old.Restart(n); ok {
		c.setNamedLocked(n.GetAlterSeqStmt().Sequence.Relname, st)
	}
}

// setNamedLocked sets a sequence's state, to be written with the next
// save. c.mu is held.
func (c *Catalog) setNamedLocked(name string, st SeqState) {
	c.named[name], c.durable[name], c.ahead[name] = st, st, 0
}

// SeqNext returns nextval() of the named sequence (see Sequence.Next).
// Values are never handed out twice, also across restarts: the file
// holds a state seqReserve calls ahead, written before any value past
// the previous one is handed out; after a crash the values in between
// are skipped, as PostgreSQL skips the values it logged ahead.
func (c *Catalog) SeqNext(name string) (int64, error) { return c.SeqNextAs(name, nil) }

// SeqNextAs is SeqNext with the sequence defined as q (nil: as
// committed): nextval() in a block that altered the sequence without
// restarting it draws from the committed state with the block's options.
// Values stay unique as long as they move the way the committed
// sequence's do, so a block that turned the sequence's direction is
// refused (0A000).
func (c *Catalog) SeqNextAs(name string, q *Sequence) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	committed := c.snap.Load().Sequence(name)
	if committed == nil {
		return 0, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
	}
	if q == nil {
		q = committed
	}
	if q.Increment > 0 != (committed.Increment > 0) {
		return 0, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support nextval() of sequence \"%s\" in the transaction block that changed its direction (ALTER SEQUENCE ... INCREMENT) before COMMIT", name)
	}
	st := c.named[name]
	v, next, err := q.Next(st)
	if err != nil {
		return 0, err
	}
	if c.ahead[name] <= 0 || next.Last == q.Min && st.Called && q.Increment > 0 || next.Last == q.Max && st.Called && q.Increment < 0 {
		// Past what the file covers, or wrapped around (CYCLE): write
		// a state seqReserve calls ahead of this one.
		c.durable[name], c.ahead[name] = q.Ahead(next, seqReserve), seqReserve
		if err := c.saveLocked(); err != nil {
			return 0, err
		}
	}
	c.ahead[name]--
	c.named[name] = next
	return v, nil
}

// SeqSet is setval(): it sets the named sequence's state, durably.
func (c *Catalog) SeqSet(name string, v int64, called bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.snap.Load().Sequence(name)
	if q == nil {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
	}
	st, err := q.Set(v, called)
	if err != nil {
		return err
	}
	c.setNamedLocked(name, st)
	return c.saveLocked()
}

// SetSerial is setval() of a SERIAL or IDENTITY column's sequence
// (table_column_seq): the next value is v+1, or v when called is false.
func (c *Catalog) SetSerial(table, column string, v int64, called bool) error {
	if err := c.Snapshot().CheckSerialSet(table, column, v); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := table + "." + column
	if called {
		v++
	}
	c.seqs[k] = v
	if v > c.saved[k] {
		c.saved[k] = v + seqReserve
		return c.saveLocked()
	}
	return nil
}

// CheckSerialSet checks setval()'s value v for the sequence of SERIAL
// or IDENTITY column table.column: within 1 and the column type's
// maximum (22003).
func (s *Snapshot) CheckSerialSet(table, column string, v int64) error {
	hi := int64(math.MaxInt64)
	if t := s.Table(table); t != nil && t.Column(column) != nil {
		_, hi = typeRange(t.Column(column).Type)
	}
	if v < 1 || v > hi {
		return pgerr.New(pgerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s_%s_seq\" (1..%d)", v, table, column, hi)
	}
	return nil
}

// SeqState returns where the named sequence stands.
func (c *Catalog) SeqState(name string) SeqState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.named[name]
}

func splitSeq(k string) (table, col string) {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == '.' {
			return k[:i], k[i+1:]
		}
	}
	return k, ""
}

// saveLocked writes the file atomically and durably. c.mu is held.
func (c *Catalog) saveLocked() error {
	if c.path == "" {
		return nil
	}
	mark := c.mark
	var pending []PendingBlock
	for _, txn := range slices.Sorted(maps.Keys(c.pending)) {
		pending = append(pending, c.pending[txn])
	}
	b, err := json.MarshalIndent(fileForm{Schema: c.snap.Load(), Sequences: c.saved, Named: c.durable, Log: &mark, Pending: pending}, "", "  ")
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	tmp := c.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("schema: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("schema: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if d, err := os.Open(filepath.Dir(c.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
