package session

import (
	"maps"
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// seqSession is a session's memory of its sequences: the value nextval()
// last gave each (currval()) and which sequence it gave last (lastval()).
// As in PostgreSQL it is not transactional: ROLLBACK keeps it.
type seqSession struct {
	curr map[string]int64
	last string
	// block is what the open block keeps of its sequences until COMMIT.
	block seqBlock
}

// seqBlock is the open block's own sequence state. PostgreSQL's sequence
// DDL is transactional: a sequence created, restarted or dropped in a
// block (CREATE/ALTER/DROP SEQUENCE, a table's SERIAL column made or
// dropped with it, TRUNCATE ... RESTART IDENTITY) is seen by others only
// at COMMIT, and ROLLBACK undoes it with the nextval() calls the block
// made on it. So the block's nextval() of such a sequence draws from its
// own state here, and COMMIT hands the states to the catalog with the
// block's DDL (schema.Catalog.CommitBlock); ROLLBACK just forgets them.
// Sequences the block did not create or restart are drawn from the
// committed state, by every session alike, and never given back: no value
// is handed out twice.
type seqBlock struct {
	// named: states of the sequences of CREATE SEQUENCE the block made
	// or restarted.
	named map[string]namedEntry
	// serial: the SERIAL counters of the block's schema ("table.column")
	// that are not the committed counter of that name.
	serial map[string]serialEntry
	// gens numbers the block's starts of a sequence (gen): ROLLBACK TO
	// SAVEPOINT keeps the state of one started before the savepoint,
	// as nextval() is not undone, and drops those started after it.
	gens int
}

// namedEntry is the state of a sequence the block made or restarted.
type namedEntry struct {
	st  schema.SeqState
	gen int
}

// serialEntry is a SERIAL counter of the block's schema: its own (own,
// with its next value; from and base say which committed counter it
// restarted, and where that stood, see schema.SerialStart), or the
// committed counter from (a table or column the block renamed).
type serialEntry struct {
	own  bool
	next int64
	from string
	base int64
	gen  int
}

// clone copies b (a savepoint keeps one, for ROLLBACK TO).
func (b seqBlock) clone() seqBlock {
	return seqBlock{named: maps.Clone(b.named), serial: maps.Clone(b.serial), gens: b.gens}
}

// rollbackTo returns the block's sequences as they were at savepoint sp,
// with the states reached since of the sequences started before it
// (nextval() is not undone).
func (b seqBlock) rollbackTo(sp seqBlock) seqBlock {
	out := sp.clone()
	out.gens = b.gens
	for k, e := range out.named {
		if now, ok := b.named[k]; ok && now.gen == e.gen {
			out.named[k] = now
		}
	}
	for k, e := range out.serial {
		if now, ok := b.serial[k]; ok && e.own && now.own && now.gen == e.gen {
			out.serial[k] = now
		}
	}
	return out
}

// commitForm is what CommitBlock takes of b.
// Its maps are nil while empty (most commits have none), which readers
// take as empty.
func (b seqBlock) commitForm() *schema.BlockSeqs {
	out := &schema.BlockSeqs{}
	for k, e := range b.named {
		if out.Named == nil {
			out.Named = map[string]schema.SeqState{}
		}
		out.Named[k] = e.st
	}
	for k, e := range b.serial {
		if e.own {
			if out.Serial == nil {
				out.Serial = map[string]schema.SerialStart{}
			}
			out.Serial[k] = schema.SerialStart{Next: e.next, From: e.from, Base: e.base}
		}
	}
	return out
}

// serialSource says where nextval() of SERIAL column table.column (as
// the block sees it) draws: the block's own counter (own) or the
// committed counter key.
func (s *Session) serialSource(table, column string) (e serialEntry, key string) {
	k := table + "." + column
	if e, ok := s.seqs.block.serial[k]; ok {
		if e.own {
			return e, k
		}
		return e, e.from
	}
	if t := s.cache.Catalog().Snapshot().Table(table); t != nil && t.Column(column) != nil && t.Column(column).Fill == schema.FillSerial ||
		!s.inBlock && !s.implicit {
		return serialEntry{from: k}, k
	}
	// A table or column the block made: its counter starts at 1.
	return serialEntry{own: true, next: 1}, k
}

// serialNext is nextval() of SERIAL column table.column of the block's
// schema (the committed one outside a block).
func (s *Session) serialNext(table, column string) (int64, error) {
	e, key := s.serialSource(table, column)
	if !e.own {
		t, c := splitKey(key)
		if err := s.shared.seqs.check(s, "serial "+key, t+"_"+c+"_seq"); err != nil {
			return 0, err
		}
		return s.cache.Catalog().Next(t, c, 1)
	}
	v := e.next
	if v == math.MaxInt64 {
		return 0, pgerr.New(codeSeqLimit, "nextval: reached maximum value of sequence \"%s_%s_seq\" (%d)", table, column, v)
	}
	e.next++
	s.setSerial(key, e)
	return v, nil
}

// codeSeqLimit is sequence_generator_limit_exceeded.
const codeSeqLimit = "2200H"

func (s *Session) setSerial(key string, e serialEntry) {
	if s.seqs.block.serial == nil {
		s.seqs.block.serial = map[string]serialEntry{}
	}
	s.seqs.block.serial[key] = e
}

func splitKey(k string) (table, column string) {
	i := strings.LastIndexByte(k, '.')
	return k[:i], k[i+1:]
}

// called records that nextval() of seq gave v in this session.
func (q *seqSession) called(seq string, v int64) {
	if q.curr == nil {
		q.curr = map[string]int64{}
	}
	q.curr[seq], q.last = v, seq
}

// evalSequence evaluates nextval(), currval(), setval() and lastval()
// (vals as callArgs read them) on the sequences the session sees (the
// block's, see seqBlock). Every replica receives the value shepherd
// computes here, never calling the function itself.
func (s *Session) evalSequence(c *sqlan.SessionCall, vals []string) (answer.Value, error) {
	null := answer.Value{Type: answer.Int, Null: true}
	num := func(v int64) (answer.Value, error) { return answer.V(answer.Int, strconv.FormatInt(v, 10)), nil }
	snap, err := s.visibleSchema()
	if err != nil {
		return null, err
	}
	if c.Func == "lastval" {
		v, ok := s.seqs.curr[s.seqs.last]
		if s.seqs.last == "" || !ok {
			return null, pgerr.New(objectNotInPrerequisiteState, "lastval is not yet defined in this session")
		}
		if snap.Sequence(s.seqs.last) == nil {
			if _, _, serial := snap.SerialSequence(s.seqs.last); !serial {
				return null, pgerr.New(objectNotInPrerequisiteState, "lastval is not yet defined in this session")
			}
		}
		return num(v)
	}
	name, err := schema.SequenceName(vals[0])
	if err != nil {
		return null, err
	}
	q := snap.Sequence(name)
	table, column, serial := "", "", false
	if q == nil {
		if table, column, serial = snap.SerialSequence(name); !serial {
			if snap.Table(name) != nil {
				return null, pgerr.New(wrongObjectType, "\"%s\" is not a sequence", name)
			}
			return null, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
		}
	}
	if (c.Func == "nextval" || c.Func == "setval") && s.readOnly() {
		return null, pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s() in a read-only transaction", c.Func)
	}
	switch c.Func {
	case "nextval":
		var v int64
		if serial {
			v, err = s.serialNext(table, column)
		} else {
			v, err = s.namedNext(name, q)
		}
		if err != nil {
			return null, err
		}
		s.seqs.called(name, v)
		return num(v)
	case "currval":
		v, ok := s.seqs.curr[name]
		if !ok {
			return null, pgerr.New(objectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", name)
		}
		return num(v)
	default: // setval
		v, _ := strconv.ParseInt(vals[1], 10, 64)
		called := len(vals) < 3 || vals[2] == "true"
		if serial {
			err = s.serialSet(snap, table, column, v, called)
		} else {
			err = s.namedSet(name, q, v, called)
		}
		if err != nil {
			return null, err
		}
		if called {
			// PostgreSQL sets currval() (not lastval()) only then.
			if s.seqs.curr == nil {
				s.seqs.curr = map[string]int64{}
			}
			s.seqs.curr[name] = v
		}
		return num(v)
	}
}

// namedNext is nextval() of sequence name, defined as q in the session's
// schema: from the block's state if the block made or restarted it,
// from the committed state otherwise.
func (s *Session) namedNext(name string, q *schema.Sequence) (int64, error) {
	e, ok := s.seqs.block.named[name]
	if !ok {
		if err := s.shared.seqs.check(s, name, name); err != nil {
			return 0, err
		}
		return s.cache.Catalog().SeqNextAs(name, q)
	}
	v, next, err := q.Next(e.st)
	if err != nil {
		return 0, err
	}
	e.st = next
	s.seqs.block.named[name] = e
	return v, nil
}

// namedSet is setval() of sequence name (see namedNext).
func (s *Session) namedSet(name string, q *schema.Sequence, v int64, called bool) error {
	e, ok := s.seqs.block.named[name]
	if !ok {
		if err := s.shared.seqs.check(s, name, name); err != nil {
			return err
		}
		return s.cache.Catalog().SeqSet(name, v, called)
	}
	st, err := q.Set(v, called)
	if err != nil {
		return err
	}
	e.st = st
	s.seqs.block.named[name] = e
	return nil
}

// serialSet is setval() of the sequence of SERIAL column table.column.
func (s *Session) serialSet(snap *schema.Snapshot, table, column string, v int64, called bool) error {
	if err := snap.CheckSerialSet(table, column, v); err != nil {
		return err
	}
	e, key := s.serialSource(table, column)
	if !e.own {
		t, c := splitKey(key)
		if err := s.shared.seqs.check(s, "serial "+key, t+"_"+c+"_seq"); err != nil {
			return err
		}
		return s.cache.Catalog().SetSerial(t, c, v, called)
	}
	e.next = v
	if called {
		e.next++
	}
	s.setSerial(key, e)
	return nil
}

// seqState is where sequence name stands as the session sees it.
func (s *Session) seqState(name string) schema.SeqState {
	if e, ok := s.seqs.block.named[name]; ok {
		return e.st
	}
	return s.cache.Catalog().SeqState(name)
}

// sequenceDDL runs CREATE, ALTER or DROP SEQUENCE: sequences live in
// shepherd's catalog alone, so no replica runs it. Outside a block the
// catalog records it at once; in a block it joins the block's DDL, which
// reaches the catalog at COMMIT (see seqBlock).
func (s *Session) sequenceDDL(st *sqlan.Stmt) error {
	if s.readOnly() {
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", st.Verb)
	}
	n := st.Session.DDL
	snap, err := s.visibleSchema()
	if err != nil {
		return err
	}
	if as := n.GetAlterSeqStmt(); as != nil && snap.Sequence(as.Sequence.Relname) == nil {
		if table, column, ok := snap.SerialSequence(as.Sequence.Relname); ok {
			return s.restartSerial(as, table, column)
		}
	}
	if as := n.GetAlterSeqStmt(); as != nil {
		if err := snap.CheckAlter(n, s.seqState(as.Sequence.Relname)); err != nil {
			return err
		}
	}
	if !s.inBlock && !s.implicit {
		return s.cache.Catalog().Apply(n)
	}
	after, err := snap.Apply(n)
	if err != nil {
		return err
	}
	s.ddl = append(s.ddl, st)
	s.trackSequences(snap, after, n)
	return nil
}

// restartSerial runs ALTER SEQUENCE t_c_seq RESTART [WITH n] on the
// sequence of SERIAL or IDENTITY column t.c, its only option shepherd
// takes there (the sequence's other options are PostgreSQL's defaults).
func (s *Session) restartSerial(as *pg_query.AlterSeqStmt, table, column string) error {
	v := int64(1)
	for _, o := range as.Options {
		d := o.GetDefElem()
		if d == nil || d.Defname != "restart" {
			return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support ALTER SEQUENCE %s other than RESTART [WITH n]", as.Sequence.Relname)
		}
		if d.Arg != nil {
			switch {
			case d.Arg.GetInteger() != nil:
				v = int64(d.Arg.GetInteger().Ival)
			default:
				n, err := strconv.ParseInt(d.Arg.GetFloat().GetFval(), 10, 64)
				if err != nil {
					return pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", d.Arg.GetFloat().GetFval())
				}
				v = n
			}
		}
	}
	if v < 1 {
		return pgerr.New(pgerr.InvalidParameterValue, "RESTART value (%d) cannot be less than MINVALUE (1)", v)
	}
	if !s.inBlock && !s.implicit {
		return s.cache.Catalog().SetSerial(table, column, v, false)
	}
	s.restartCounter(table, column, v)
	return nil
}

// restartCounter starts the block's own counter of SERIAL column
// table.column at v.
func (s *Session) restartCounter(table, column string, v int64) {
	e, key := s.serialSource(table, column)
	b := &s.seqs.block
	b.gens++
	ne := serialEntry{own: true, next: v, from: e.from, base: e.base, gen: b.gens}
	if !e.own {
		t, c := splitKey(key)
		ne.from, ne.base = key, s.cache.Catalog().SerialNext(t, c)
	}
	if ne.from != "" {
		s.shared.seqs.hold(s, "serial "+ne.from)
	}
	s.setSerial(table+"."+column, ne)
}

// trackSequences follows DDL statement n of the block in the block's
// sequences; before and after are the block's schema around it.
func (s *Session) trackSequences(before, after *schema.Snapshot, n *pg_query.Node) {
	b := &s.seqs.block
	if r := n.GetRenameStmt(); r != nil && r.Relation != nil {
		// A renamed table or column keeps its counter.
		if t := before.Table(r.Relation.Relname); t != nil {
			for _, c := range t.Columns {
				nt, nc := t.Name, c.Name
				switch {
				case c.Fill != schema.FillSerial:
					continue
				case r.RenameType == pg_query.ObjectType_OBJECT_TABLE:
					nt = r.Newname
				case r.RenameType == pg_query.ObjectType_OBJECT_COLUMN && c.Name == r.Subname:
					nc = r.Newname
				default:
					continue
				}
				e, key := s.serialSource(t.Name, c.Name)
				if !e.own {
					e.from = key
				}
				delete(b.serial, t.Name+"."+c.Name)
				s.setSerial(nt+"."+nc, e)
			}
		}
	} else {
		// A SERIAL column the statement made (CREATE TABLE, also of a
		// name the block dropped; ADD COLUMN) starts at 1.
		for name, t := range after.Tables {
			bt := before.Table(name)
			for _, c := range t.Columns {
				if c.Fill != schema.FillSerial {
					continue
				}
				if bt != nil && bt.Column(c.Name) != nil && bt.Column(c.Name).Fill == schema.FillSerial {
					continue
				}
				b.gens++
				s.setSerial(name+"."+c.Name, serialEntry{own: true, next: 1, gen: b.gens})
			}
		}
	}
	for k := range b.serial {
		table, col := splitKey(k)
		if t := after.Table(table); t == nil || t.Column(col) == nil || t.Column(col).Fill != schema.FillSerial {
			delete(b.serial, k)
		}
	}
	if tr := n.GetTruncateStmt(); tr != nil && tr.RestartSeqs {
		for _, r := range tr.Relations {
			name := r.GetRangeVar().GetRelname()
			t := after.Table(name)
			if t == nil {
				continue
			}
			for _, c := range t.Columns {
				if c.Fill == schema.FillSerial {
					s.restartCounter(name, c.Name, 1)
				}
			}
			// And the sequences OWNED BY its columns, as PostgreSQL.
			for qn, q := range after.Sequences {
				if i := strings.LastIndexByte(q.OwnedBy, '.'); i >= 0 && q.OwnedBy[:i] == name {
					b.gens++
					s.setNamed(qn, namedEntry{st: schema.SeqState{Last: q.Start}, gen: b.gens})
				}
			}
		}
	}
	for name := range b.named {
		if after.Sequence(name) == nil {
			delete(b.named, name)
		}
	}
	for name, q := range after.Sequences {
		if before.Sequence(name) == nil {
			b.gens++
			s.setNamed(name, namedEntry{st: schema.SeqState{Last: q.Start}, gen: b.gens})
		}
	}
	if st, ok := before.Restart(n); ok {
		b.gens++
		s.setNamed(n.GetAlterSeqStmt().Sequence.Relname, namedEntry{st: st, gen: b.gens})
	}
}

func (s *Session) setNamed(name string, e namedEntry) {
	if s.cache.Catalog().Snapshot().Sequence(name) != nil {
		// A committed sequence the block restarts: others' calls on
		// it wait for the block's end (seqHolds).
		s.shared.seqs.hold(s, name)
	}
	if s.seqs.block.named == nil {
		s.seqs.block.named = map[string]namedEntry{}
	}
	s.seqs.block.named[name] = e
}

// hasSequenceDDL reports whether ddl holds sequence DDL (which only
// shepherd's catalog checks, so COMMIT checks it again against what
// others committed meanwhile).
func hasSequenceDDL(ddl []*sqlan.Stmt) bool {
	for _, st := range ddl {
		if st.Kind == sqlan.Local {
			return true
		}
	}
	return false
}
