package session

import (
	"strconv"

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
	// undo undoes the open block's sequence DDL (see endSequences).
	undo []seqUndo
}

// called records that nextval() of seq gave v in this session.
func (q *seqSession) called(seq string, v int64) {
	if q.curr == nil {
		q.curr = map[string]int64{}
	}
	q.curr[seq], q.last = v, seq
}

// evalSequence evaluates nextval(), currval(), setval() and lastval()
// (vals as callArgs read them). Every replica receives the value shepherd
// computes here, never calling the function itself.
func (s *Session) evalSequence(c *sqlan.SessionCall, vals []string) (answer.Value, error) {
	null := answer.Value{Type: answer.Int, Null: true}
	num := func(v int64) (answer.Value, error) { return answer.V(answer.Int, strconv.FormatInt(v, 10)), nil }
	cat := s.cache.Catalog()
	if c.Func == "lastval" {
		v, ok := s.seqs.curr[s.seqs.last]
		if s.seqs.last == "" || !ok {
			return null, pgerr.New(objectNotInPrerequisiteState, "lastval is not yet defined in this session")
		}
		if cat.Snapshot().Sequence(s.seqs.last) == nil {
			if _, _, serial := cat.Snapshot().SerialSequence(s.seqs.last); !serial {
				return null, pgerr.New(objectNotInPrerequisiteState, "lastval is not yet defined in this session")
			}
		}
		return num(v)
	}
	name, err := schema.SequenceName(vals[0])
	if err != nil {
		return null, err
	}
	snap := cat.Snapshot()
	table, column, serial := "", "", false
	if snap.Sequence(name) == nil {
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
			v, err = cat.Next(table, column, 1)
		} else {
			v, err = cat.SeqNext(name)
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
			err = cat.SetSerial(table, column, v, called)
		} else {
			err = cat.SeqSet(name, v, called)
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

// sequenceDDL runs CREATE, ALTER or DROP SEQUENCE: sequences live in
// shepherd's catalog alone, so no replica runs it.
func (s *Session) sequenceDDL(st *sqlan.Stmt) error {
	if s.readOnly() {
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", st.Verb)
	}
	cat := s.cache.Catalog()
	if as := st.Session.DDL.GetAlterSeqStmt(); as != nil && cat.Snapshot().Sequence(as.Sequence.Relname) == nil {
		if table, column, ok := cat.Snapshot().SerialSequence(as.Sequence.Relname); ok {
			return s.restartSerial(as, table, column)
		}
	}
	// In a block the change is made at once (other sessions see it
	// before COMMIT, unlike in PostgreSQL; replicas never do) and
	// undone if the block rolls back.
	var undo []seqUndo
	if s.inBlock || s.implicit {
		snap := cat.Snapshot()
		var names []string
		switch n := st.Session.DDL; {
		case n.GetCreateSeqStmt() != nil:
			names = []string{n.GetCreateSeqStmt().Sequence.Relname}
		case n.GetAlterSeqStmt() != nil:
			names = []string{n.GetAlterSeqStmt().Sequence.Relname}
		case n.GetDropStmt() != nil:
			for _, o := range n.GetDropStmt().Objects {
				if l := o.GetList().GetItems(); len(l) > 0 {
					names = append(names, l[len(l)-1].GetString_().GetSval())
				}
			}
		}
		for _, name := range names {
			undo = append(undo, seqUndo{name: name, seq: snap.Sequence(name), state: cat.SeqState(name)})
		}
	}
	if as := st.Session.DDL.GetAlterSeqStmt(); as != nil {
		if err := cat.Snapshot().CheckAlter(st.Session.DDL, cat.SeqState(as.Sequence.Relname)); err != nil {
			return err
		}
	}
	if err := cat.Apply(st.Session.DDL); err != nil {
		return err
	}
	s.seqs.undo = append(s.seqs.undo, undo...)
	return nil
}

// restartSerial runs ALTER SEQUENCE t_c_seq RESTART [WITH n] on the
// sequence of SERIAL or IDENTITY column t.c, its only option shepherd
// takes there (the sequence's other options are PostgreSQL's defaults).
func (s *Session) restartSerial(as *pg_query.AlterSeqStmt, table, column string) error {
	if s.inBlock || s.implicit {
		return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support ALTER SEQUENCE of a SERIAL column's sequence inside a transaction block")
	}
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
	return s.cache.Catalog().SetSerial(table, column, v, false)
}

// seqUndo is how to undo a sequence DDL statement of an open block: the
// sequence as it was (nil: absent) and where it stood.
type seqUndo struct {
	name  string
	seq   *schema.Sequence
	state schema.SeqState
}

// endSequences ends the block's sequence DDL: kept on COMMIT, undone in
// reverse order on ROLLBACK. (nextval() is never undone.)
func (s *Session) endSequences(commit bool) {
	undo := s.seqs.undo
	s.seqs.undo = nil
	if commit {
		return
	}
	cat := s.cache.Catalog()
	for i := len(undo) - 1; i >= 0; i-- {
		u := undo[i]
		if u.seq != nil && cat.Snapshot().Sequence(u.name) == u.seq {
			continue // unchanged (DROP ... IF EXISTS of nothing, an ALTER that failed)
		}
		// An error is the file's: memory is restored, and only a
		// restart before the next write of the file would bring the
		// change back.
		_ = cat.RestoreSequence(u.name, u.seq, u.state)
	}
}
