package pgwire

import (
	"net"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Conn is the part of a connection's protocol state that SQL statements
// act on: in PostgreSQL, DEALLOCATE drops the protocol's named prepared
// statements and CLOSE its portals, which are cursors too.
type Conn interface {
	// DropStatement drops the named prepared statement; false when there
	// is none of that name.
	DropStatement(name string) bool
	// DropAllStatements drops every named prepared statement (the unnamed
	// one stays, as in PostgreSQL).
	DropAllStatements()
	// AddStatement adds a named prepared statement (SQL PREPARE: the
	// protocol's and SQL's prepared statements are one namespace, as in
	// PostgreSQL); it fails with 42P05 when the name is taken.
	AddStatement(name string, st Statement) error
	// Statement returns the named prepared statement (SQL EXECUTE).
	Statement(name string) (Statement, bool)
	// DropPortal drops the named portal; false when there is none.
	DropPortal(name string) bool
	// DropAllPortals drops every named portal.
	DropAllPortals()
	// ProcessID is the process id the client got in BackendKeyData.
	ProcessID() int32
	// LocalAddr and RemoteAddr are the connection's addresses.
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
}

// Attacher is a Session that wants its connection's Conn: Attach is
// called once, before the first statement, from the connection's
// goroutine; Conn's methods may only be called from there too (during
// the Session's calls).
type Attacher interface {
	Attach(Conn)
}

// sessionConn is a conn seen as a Conn.
type sessionConn struct {
	c   *conn
	pid uint32
}

func (s sessionConn) DropStatement(name string) bool {
	if _, ok := s.c.statements[name]; !ok || name == "" {
		return false
	}
	s.c.closeStatement(name)
	return true
}

func (s sessionConn) DropAllStatements() {
	for name := range s.c.statements {
		if name != "" {
			s.c.closeStatement(name)
		}
	}
}

func (s sessionConn) AddStatement(name string, st Statement) error {
	if _, ok := s.c.statements[name]; ok || name == "" {
		return pgerr.New(pgerr.DuplicatePreparedStmt, "prepared statement %q already exists", name)
	}
	if len(s.c.statements) >= s.c.srv.maxStatements() {
		return pgerr.New(programLimitExceeded, "too many prepared statements (limit %d)", s.c.srv.maxStatements())
	}
	s.c.statements[name] = &prepared{st: st}
	return nil
}

func (s sessionConn) Statement(name string) (Statement, bool) {
	p, ok := s.c.statements[name]
	if !ok || name == "" || p.st == nil {
		return nil, false
	}
	return p.st, true
}

func (s sessionConn) DropPortal(name string) bool {
	if _, ok := s.c.portals[name]; !ok || name == "" {
		return false
	}
	s.c.dropPortal(name)
	return true
}

func (s sessionConn) DropAllPortals() {
	for name := range s.c.portals {
		if name != "" {
			s.c.dropPortal(name)
		}
	}
}

func (s sessionConn) ProcessID() int32     { return int32(s.pid) }
func (s sessionConn) LocalAddr() net.Addr  { return s.c.nc.LocalAddr() }
func (s sessionConn) RemoteAddr() net.Addr { return s.c.nc.RemoteAddr() }

// Reporter is a Session whose parameters the client tracks: before each
// ReadyForQuery, the front sends a ParameterStatus for every one that
// changed since the last it reported (PostgreSQL's GUC_REPORT parameters;
// the startup values are those sendParameterStatuses sent).
type Reporter interface {
	// ChangedParameters returns the changed parameters as name/value
	// pairs, and takes them as reported.
	ChangedParameters() [][2]string
}

// CursorDescriber is a Session with cursors of its own (DECLARE): in
// PostgreSQL a cursor is a portal, which a Describe message may name.
type CursorDescriber interface {
	// DescribeCursor returns the columns of the named cursor; false when
	// there is none.
	DescribeCursor(name string) ([]answer.Column, bool)
}
