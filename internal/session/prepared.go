package session

import (
	"context"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// statement is a prepared statement of the extended protocol.
type statement struct {
	sql       string
	st        *sqlan.Stmt // nil for an empty query
	paramOIDs []uint32
	described bool
	cols      []answer.Column
}

// SQL implements pgwire.Statement.
func (p *statement) SQL() string { return p.sql }

// Prepare implements pgwire.Session.
func (s *Session) Prepare(ctx context.Context, sql string, paramOIDs []uint32) (pgwire.Statement, error) {
	sts, err := s.parse(sql)
	if err != nil {
		// DDL whose analysis waits for another transaction's DDL
		// (parseWaiting), as a cancellable call.
		ctx = s.cancellable(ctx)
		sts, err = s.retryDDL(ctx, sql, err)
		s.endCall()
		if !s.inBlock && s.txn == nil {
			// Execute takes them again (lockDDL); a statement
			// prepared and never run must not keep them.
			s.shared.locks.releaseTables(&s.owner)
		}
	}
	if err != nil {
		s.fail()
		return nil, err
	}
	if len(sts) > 1 {
		s.fail()
		return nil, pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	p := &statement{sql: sql}
	if len(sts) == 1 {
		p.st = sts[0]
	}
	n := len(paramOIDs)
	if p.st != nil {
		n = max(n, p.st.NumParams)
	}
	p.paramOIDs = make([]uint32, n)
	copy(p.paramOIDs, paramOIDs)
	if p.st != nil {
		// A parameter the client left untyped gets the type the
		// statement expects it as, as PostgreSQL infers it, where
		// shepherd can tell; else it stays 0 ("unspecified"), and the
		// client sends text each engine coerces as it would a literal.
		for i, oid := range p.st.ParamOIDs() {
			if i < len(p.paramOIDs) && p.paramOIDs[i] == 0 {
				p.paramOIDs[i] = oid
			}
		}
	}
	return p, nil
}

// Describe implements pgwire.Session.
func (s *Session) Describe(ctx context.Context, ps pgwire.Statement) ([]uint32, []answer.Column, error) {
	p := ps.(*statement)
	if p.described || p.st == nil {
		return p.paramOIDs, p.cols, nil
	}
	switch {
	case p.st.Kind == sqlan.Show && p.st.ShowName == "all":
		p.cols = showAllColumns
	case p.st.Kind == sqlan.Show:
		p.cols = []answer.Column{showColumn(p.st.ShowName)}
	case p.st.Kind == sqlan.Local && p.st.Session.Op == "fetch" && !p.st.Session.Fetch.Move:
		// The cursor's columns, as they are now; every FETCH from it
		// answers them. No cursor of that name (yet): no columns, and
		// Execute says it does not exist (PostgreSQL's
		// UtilityTupleDescriptor leaves the error to it).
		cols, err := s.cursorColumns(p.st.Session.Name)
		if err != nil {
			cols = nil
		}
		return p.paramOIDs, cols, nil
	case p.st.Kind == sqlan.Local && p.st.Session.Op == "execute":
		// The columns of the statement it runs.
		inner, err := s.sqlStatement(p.st.Session.Name)
		if err != nil {
			return nil, nil, err
		}
		_, cols, err := s.Describe(ctx, inner)
		if err != nil {
			return nil, nil, err
		}
		return p.paramOIDs, cols, nil // not kept: the name may be prepared again
	case p.st.Kind == sqlan.Local:
		for _, c := range p.st.Session.Calls {
			p.cols = append(p.cols, c.Column)
		}
	case p.st.Kind == sqlan.Explain:
		p.cols = explain(nil).Columns
	case p.st.Kind == sqlan.Catalog:
		params, cols, err := s.catalogColumns(ctx, p.st)
		if err != nil {
			return nil, nil, err
		}
		for i, oid := range params {
			if i < len(p.paramOIDs) && p.paramOIDs[i] == 0 {
				p.paramOIDs[i] = oid
			}
		}
		p.cols = cols
	case p.st.ReturnsRows:
		ctx = s.cancellable(ctx)
		defer s.endCall()
		cols, err := s.describe(ctx, p.st)
		if err != nil {
			return nil, nil, err
		}
		p.cols = cols
	}
	p.described = true
	return p.paramOIDs, p.cols, nil
}

// describe learns st's result columns: from the statement and the schema
// when they tell every column's name and type, else by running its
// describe form (no rows, NULL parameters) like any other statement: in
// the session's open transaction if there is one, else on its own. Going
// through the coordinator matters: a replica that has not yet caught up
// with the latest DDL must not be the one asked.
func (s *Session) describe(ctx context.Context, st *sqlan.Stmt) ([]answer.Column, error) {
	if s.failed {
		return nil, pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.Unnest != nil {
		st = st.Inner // the expansion's columns (a row per element)
	} else if st.SelectFirst != nil {
		st = st.SelectFirst.Insert() // the INSERT of the SELECT's rows
	}
	if cols, ok := st.KnownColumns(); ok {
		// The text and the schema tell everything the probe would.
		return cols, nil
	}
	dst := st.Describe()
	if dst == nil {
		// Nothing to run: the text alone must do.
		var cols []answer.Column
		for _, g := range st.Columns() {
			cols = append(cols, answer.Column{Name: g.Name, Type: g.Type, OID: g.OID, Size: -1, Mod: -1})
		}
		return cols, nil
	}
	args := make([]driver.Arg, dst.NumParams)
	for i := range args {
		args[i] = driver.Arg{Null: true}
	}
	a, err := s.exec(ctx, dst, args)
	if err != nil {
		return nil, err
	}
	return sqlan.Shape(a.Columns, st.Columns()), nil
}

// Execute implements pgwire.Session.
func (s *Session) Execute(ctx context.Context, ps pgwire.Statement, params []pgwire.Param) (*answer.Answer, error) {
	p := ps.(*statement)
	if p.st == nil {
		return nil, pgwire.ErrEmptyQuery
	}
	ctx = s.cancellable(ctx)
	defer s.endCall()
	ctx, stop := s.statementTimeout(ctx)
	defer stop()
	a, err := s.execute(ctx, p, params)
	return a, timedOut(ctx, err)
}

// execute is Execute's work, under statement_timeout.
func (s *Session) execute(ctx context.Context, p *statement, params []pgwire.Param) (*answer.Answer, error) {
	args := make([]driver.Arg, len(params))
	for i, prm := range params {
		args[i] = driver.Arg{Null: prm.Null, Text: prm.Text, Type: answer.TypeOfOID(prm.OID)}
	}
	if !s.failed {
		// Refused at Bind, as PostgreSQL does (an aborted block answers
		// 25P02 first, in exec); the error aborts an open block.
		if err := p.st.CheckArgs(args); err != nil {
			s.fail()
			return nil, err
		}
	}
	if len(args) < p.st.NumParams {
		return nil, pgerr.New(pgerr.ProtocolViolation, "statement needs %d parameters, %d given", p.st.NumParams, len(args))
	}
	return s.exec(cluster.WithSpill(ctx), p.st, args)
}

// CloseStatement implements pgwire.Session.
func (s *Session) CloseStatement(pgwire.Statement) {}

// prepareSQL answers SQL PREPARE: the statement is prepared as a Parse
// would (types declared, the rest inferred) and named in the protocol's
// namespace, where EXECUTE, DEALLOCATE, DISCARD ALL and a Bind find it.
func (s *Session) prepareSQL(ctx context.Context, op *sqlan.SessionOp) error {
	if s.conn == nil {
		return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support PREPARE without a client connection")
	}
	ps, err := s.Prepare(ctx, op.Prepare.Body, op.Prepare.ParamOIDs)
	if err != nil {
		return err
	}
	return s.conn.AddStatement(op.Name, ps)
}

// executeSQL answers SQL EXECUTE of a prepared statement: its arguments
// (constants, or the EXECUTE's own parameters) go to it as a Bind's
// would, in text, read as the statement's parameter types.
func (s *Session) executeSQL(ctx context.Context, op *sqlan.SessionOp, args []driver.Arg) (*answer.Answer, error) {
	p, err := s.sqlStatement(op.Name)
	if err != nil {
		return nil, err
	}
	// As a Bind: the statement's parameter types are known once
	// described.
	oids, _, err := s.Describe(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(op.Args) != len(oids) {
		return nil, pgerr.New(pgerr.SyntaxError, "wrong number of parameters for prepared statement %q", op.Name).
			WithDetail("Expected %d parameters but got %d.", len(oids), len(op.Args))
	}
	bound := make([]driver.Arg, len(op.Args))
	for i, a := range op.Args {
		v, null := a.Value, a.Null
		if a.Param > 0 {
			if a.Param > len(args) {
				return nil, pgerr.New(pgerr.UndefinedParameterRef, "there is no parameter $%d", a.Param)
			}
			v, null = args[a.Param-1].Text, args[a.Param-1].Null
		}
		if !null && a.Param == 0 {
			if v, err = pgwire.TextParam(oids[i], v); err != nil {
				return nil, err
			}
		}
		bound[i] = driver.Arg{Text: v, Null: null, Type: answer.TypeOfOID(oids[i])}
	}
	if err := p.st.CheckArgs(bound); err != nil {
		return nil, err
	}
	return s.exec(ctx, p.st, bound)
}

// sqlStatement finds the prepared statement EXECUTE names.
func (s *Session) sqlStatement(name string) (*statement, error) {
	var p *statement
	if s.conn != nil {
		if ps, ok := s.conn.Statement(name); ok {
			p, _ = ps.(*statement)
		}
	}
	if p == nil || p.st == nil {
		return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement %q does not exist", name)
	}
	return p, nil
}
