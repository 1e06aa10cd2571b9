package session

import (
	"context"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Databases carries out CREATE DATABASE and DROP DATABASE for sessions
// (the server's list of databases, each its own cluster). from is the
// database the session is connected to.
type Databases interface {
	CreateDatabase(ctx context.Context, from string, st *sqlan.DatabaseStmt) error
	DropDatabase(ctx context.Context, from string, st *sqlan.DatabaseStmt) error
	// DatabaseNames lists the databases a client may connect to (for
	// pg_database), from's first when it is the configured one.
	DatabaseNames(from string) []string
}

// DatabaseNames lists the databases a client may connect to, for
// pg_database: the session's own and every other one shepherd serves.
func (s *Session) DatabaseNames() []string {
	if s.dbs == nil {
		return []string{s.database}
	}
	return s.dbs.DatabaseNames(s.database)
}

// SetDatabases makes CREATE and DROP DATABASE reach dbs, and has the
// session call closed once when it ends (the server counts a database's
// sessions, for DROP DATABASE's 55006). Call before the session's first
// statement.
func (s *Session) SetDatabases(dbs Databases, closed func()) {
	s.dbs, s.closed = dbs, closed
}

// createOrDrop runs a CREATE or DROP DATABASE: outside any transaction block
// only, as PostgreSQL does (25001), since it cannot be rolled back.
func (s *Session) createOrDrop(ctx context.Context, st *sqlan.Stmt) (*answer.Answer, error) {
	if s.inBlock || s.implicit {
		s.fail()
		return nil, pgerr.New(pgerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.Verb)
	}
	if s.dbs == nil {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support %s here", st.Verb)
	}
	var err error
	if st.Database.Create {
		err = s.dbs.CreateDatabase(ctx, s.database, st.Database)
	} else {
		err = s.dbs.DropDatabase(ctx, s.database, st.Database)
	}
	if err != nil {
		return nil, err
	}
	return &answer.Answer{Tag: st.Verb}, nil
}
