package pgwire

import (
	"context"
	"errors"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// Handler opens sessions for authenticated client connections. It is
// called concurrently from many connections.
type Handler interface {
	// NewSession is called once a client has passed authentication. The
	// returned error (a *pgerr.Error) is sent as a FATAL ErrorResponse and
	// the connection is closed (e.g. 3D000 for an unknown database).
	NewSession(ctx context.Context, info StartupInfo) (Session, error)
}

// StartupInfo is what the client said in its StartupMessage.
type StartupInfo struct {
	User     string
	Database string
	// Params holds every startup parameter, user and database included
	// (application_name, client_encoding, options, ...).
	Params map[string]string
	// RemoteAddr is the client's address, for logs.
	RemoteAddr string
}

// Session executes the statements of one client connection. The front calls
// its methods from one goroutine at a time, except Cancel, which may be
// called concurrently from the goroutine serving a CancelRequest.
//
// Every error a Session returns is a *pgerr.Error (or is wrapped into an
// internal error XX000 by the front); after an error the front reports it
// and asks TxStatus for the ReadyForQuery status.
type Session interface {
	// Query runs a simple-protocol query string, which may hold several
	// statements (or none). For each statement that completes, emit is
	// called with its answer, in order; an answer with Columns is sent as
	// RowDescription, DataRows and CommandComplete, one without as
	// CommandComplete only. Query stops at the first failing statement and
	// returns its error. An empty query string returns ErrEmptyQuery
	// without calling emit.
	Query(ctx context.Context, sql string, emit func(*answer.Answer) error) error

	// Prepare analyses one statement for the extended protocol. paramOIDs
	// are the types the client gave in Parse (0 = unspecified, possibly
	// fewer than the statement uses).
	Prepare(ctx context.Context, sql string, paramOIDs []uint32) (Statement, error)

	// Describe returns the parameter types of st (one OID per parameter,
	// every one resolved: unknown ones as text) and its result columns (nil
	// when it returns no rows). The front calls it at most once per
	// statement, at the first Describe or Bind, and keeps the answer.
	Describe(ctx context.Context, st Statement) (params []uint32, cols []answer.Column, err error)

	// Execute runs st with bound parameter values (already decoded by the
	// front into PostgreSQL text form, see driver.Arg). The answer's
	// Columns, if the front already told the client a RowDescription for
	// this portal, are encoded following that description.
	Execute(ctx context.Context, st Statement, params []Param) (*answer.Answer, error)

	// CloseStatement releases st: on a Close message, when an unnamed
	// statement is replaced, and, for every statement still open, at the
	// session's end just before Close. Called once per prepared statement.
	CloseStatement(st Statement)

	// TxStatus returns the ReadyForQuery status: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte

	// Cancel asks the statement the session is running, if any, to stop
	// on every replica (CancelRequest). Safe to call concurrently.
	Cancel()

	// Close ends the session: anything open is rolled back on every
	// replica. Called exactly once, when the client goes away.
	Close(ctx context.Context)
}

// Statement is a prepared statement the Session understands; the front
// treats it as opaque.
type Statement interface {
	// SQL returns the statement's text as the client sent it.
	SQL() string
}

// Param is one bound parameter, decoded into PostgreSQL text form (bytea
// as raw bytes).
type Param struct {
	Null bool
	// OID is the parameter type from Describe (after Parse's own OIDs).
	OID  uint32
	Text string
}

// ErrEmptyQuery is returned by Session.Query for a query string with no
// statement in it; the front answers EmptyQueryResponse.
var ErrEmptyQuery = errors.New("pgwire: empty query")
