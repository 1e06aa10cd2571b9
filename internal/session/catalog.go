package session

import (
	"context"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgcatalog"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Catalog queries (pg_catalog, information_schema) are answered by
// shepherd's catalog engine from the schema the session sees: the
// committed one with the DDL of its open block applied. No replica runs
// them, so they are neither voted nor logged.

// visibleSchema is the schema as this session sees it. The block's
// schema is remembered for the committed snapshot and DDL it was made
// from, so a block of many statements does not apply its DDL again for
// each.
func (s *Session) visibleSchema() (*schema.Snapshot, error) {
	snap := s.cache.Catalog().Snapshot()
	if len(s.ddl) == 0 {
		return snap, nil
	}
	last := s.ddl[len(s.ddl)-1]
	if m := &s.blockSchema; m.base == snap && m.n == len(s.ddl) && m.last == last {
		return m.snap, nil
	}
	base := snap
	for _, st := range s.ddl {
		next, err := snap.Apply(st.Tree())
		if err != nil {
			return nil, err
		}
		snap = next
	}
	s.blockSchema = blockSchema{base: base, n: len(s.ddl), last: last, snap: snap}
	return snap, nil
}

// blockSchema remembers the schema of the open block: snap is base (the
// committed schema) with the block's n DDL statements, the last one
// last, applied.
type blockSchema struct {
	base, snap *schema.Snapshot
	n          int
	last       *sqlan.Stmt
}

// parse analyses sql against the schema the session sees: in a block
// that ran DDL, the committed schema with that DDL applied (not cached:
// it is the block's own), so the block's statements see its tables as on
// PostgreSQL.
func (s *Session) parse(sql string) ([]*sqlan.Stmt, error) {
	if len(s.ddl) == 0 {
		return s.cache.Parse(sql)
	}
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, err
	}
	return s.cache.ParseFor(sql, snap)
}

// env is the analysis environment of the schema the session sees.
func (s *Session) env() (*sqlan.Env, error) {
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, err
	}
	return s.cache.EnvOf(snap), nil
}

func (s *Session) catalogEngine() (*pgcatalog.Engine, *schema.Snapshot, error) {
	e, err := pgcatalog.For(s.cache.Catalog())
	if err != nil {
		return nil, nil, pgerr.Wrap(pgerr.InternalError, err, "shepherd's catalog")
	}
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, nil, err
	}
	return e, snap, nil
}

// catalogQuery answers a catalog query. An error fails an open block, as
// any error does.
func (s *Session) catalogQuery(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	e, snap, err := s.catalogEngine()
	if err == nil {
		var a *answer.Answer
		if a, err = e.Query(ctx, st.Tree(), args, snap, s.catalogSession(snap)); err == nil {
			return a, nil
		}
	}
	s.fail()
	return nil, err
}

// catalogColumns describes a catalog query's parameters (their type
// OIDs, 0 where the query does not tell them) and its result.
func (s *Session) catalogColumns(ctx context.Context, st *sqlan.Stmt) ([]uint32, []answer.Column, error) {
	e, snap, err := s.catalogEngine()
	if err != nil {
		return nil, nil, err
	}
	return e.Describe(ctx, st.Tree(), st.NumParams, snap, s.catalogSession(snap))
}

// catalogSession is what the catalog needs of the session: its user, and
// the columns of views, which the analyser works out from their queries.
func (s *Session) catalogSession(snap *schema.Snapshot) pgcatalog.Session {
	return pgcatalog.Session{User: s.user, Database: s.database, Databases: s.DatabaseNames(), Settings: s.params, SetConfig: s.catalogSetConfig, SeqLast: s.seqLast, SerialLast: s.serialLast, ViewColumns: func(v *schema.Table) []answer.Column {
		if v.Query == "" {
			return nil
		}
		st, err := sqlan.ParseOneIn(v.Query, &sqlan.Env{Schema: snap})
		if err != nil || st == nil {
			return nil
		}
		cols, ok := st.KnownColumns()
		if !ok {
			return nil
		}
		for i, a := range v.Aliases {
			if i < len(cols) {
				cols[i].Name = a
			}
		}
		return cols
	}}
}

// catalogSetConfig is set_config() called in a catalog query: as the
// session function (local.go) does it.
func (s *Session) catalogSetConfig(name string, value *string, local bool) (string, error) {
	st := &sqlan.Stmt{Verb: "SET", SetName: strings.ToLower(name), SetLocal: local}
	if value == nil {
		st.SetValue, st.SetReset = resetMark, true
	} else {
		st.SetValue = *value
	}
	v, err := s.apply(st)
	if err != nil {
		return "", err
	}
	if !st.SetLocal || s.inBlock || s.implicit {
		v, _ = s.param(st.SetName)
	}
	return v, nil
}

// serialLast is the last value the sequence of SERIAL column
// table.column handed out as the session sees it, false when none.
func (s *Session) serialLast(table, column string) (int64, bool) {
	e, key := s.serialSource(table, column)
	next := e.next
	if !e.own {
		t, c := splitKey(key)
		next = s.cache.Catalog().SerialNext(t, c)
	}
	return next - 1, next > 1
}

// seqLast is a CREATE SEQUENCE sequence's last value handed out, false
// when nextval has not been called (or setval said is_called false).
func (s *Session) seqLast(name string) (int64, bool) {
	st := s.seqState(name)
	return st.Last, st.Called
}
