// Package driver defines how shepherd talks to one replica database, and
// the registry of the drivers it knows (postgres, mysql, sqlite, sqlite-cgo,
// duckdb).
//
// A driver hides everything engine-specific below one small interface:
// connecting, transaction control, running a statement already written in
// the engine's dialect, answering in the canonical form of package answer,
// and mapping the engine's errors onto SQLSTATEs (package pgerr). It also
// declares the engine's concurrency class, which the scheduler needs to
// know which orderings the engine enforces by itself.
//
// Concurrency contract: an Engine is safe for concurrent use; a Conn is
// used by one goroutine at a time.
package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Class is how an engine orders concurrent transactions (DESIGN.md,
// "Replicas are not all two-phase locking").
type Class uint8

const (
	// Locking engines hold locks to commit (strict two-phase locking at
	// SERIALIZABLE): a statement that conflicts with an uncommitted
	// transaction waits. Fit to be primary.
	Locking Class = iota + 1
	// MVCC engines let readers see a snapshot and never wait for writers;
	// they run at READ COMMITTED as secondaries.
	MVCC
	// Serial engines run one transaction at a time.
	Serial
)

// String returns the class name used in config and SHOW REPLICAS.
func (c Class) String() string {
	switch c {
	case Locking:
		return "locking"
	case MVCC:
		return "mvcc"
	case Serial:
		return "serial"
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// MayBePrimary reports whether an engine of this class may be the primary:
// its answers must reflect an order the secondaries can reproduce.
func (c Class) MayBePrimary() bool { return c == Locking || c == Serial }

// Dialect is the SQL dialect an engine speaks. Statements reach a driver
// already translated into it.
type Dialect uint8

// Dialects.
const (
	Postgres Dialect = iota + 1
	MySQL
	SQLite
	// DuckDB reads PostgreSQL's text, checked and partly rewritten by
	// package dialect where DuckDB means something else by it.
	DuckDB
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	case SQLite:
		return "sqlite"
	case DuckDB:
		return "duckdb"
	}
	return fmt.Sprintf("dialect(%d)", uint8(d))
}

// Spec is what a driver needs to open an engine, from the config file.
type Spec struct {
	// Name is the replica's name in the config, for messages.
	Name string
	// DSN is the driver-specific connection string.
	DSN string
	// DataDir is the shepherd data directory; relative file paths in DSN
	// (SQLite) are resolved under it.
	DataDir string
}

// Engine is one replica database. It is safe for concurrent use.
type Engine interface {
	// Driver returns the driver name ("postgres", "mysql", ...).
	Driver() string
	// Class returns the engine's concurrency class.
	Class() Class
	// Dialect returns the SQL dialect the engine speaks.
	Dialect() Dialect
	// Connect opens a new session to the engine, configured for shepherd
	// (isolation level, time zone UTC, autocommit off where that matters).
	Connect(ctx context.Context) (Conn, error)
	// Close releases what the engine holds (an embedded database file).
	Close() error
}

// Oversize says which of an engine's limits a statement exceeds.
type Oversize struct {
	// Limit is the engine's name for the limit ("max_allowed_packet").
	Limit string
	// Max is the limit, in bytes (or in parameters, for a limit on
	// their number).
	Max int64
	// Size is what the statement takes against it, in the same unit.
	Size int64
}

// Refusal is the error a statement that replica's engine would not take
// is refused with (54000), before any replica runs it.
func (o *Oversize) Refusal(replica string) *pgerr.Error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "statement too large for replica %s: %d against its %s of %d",
		replica, o.Size, o.Limit, o.Max)
}

// Sizer is an Engine that refuses statements beyond some size. shepherd
// must refuse such a statement before any replica runs it: the engine
// would fail it (MariaDB drops the connection) where the other replicas
// succeed, and its catch-up would then fail on it for ever.
type Sizer interface {
	// Oversize returns the limit q, written for the engine, exceeds
	// there, or nil when it fits. The limits are read when the engine is
	// opened or connected; the sizes count what the engine's protocol
	// carries (text and arguments), with its escaping.
	Oversize(q Query) *Oversize
}

// TxOptions are the options of BEGIN. Zero values mean the driver's
// default for its class.
type TxOptions struct {
	// Isolation is "", "serializable", "repeatable read", "read committed"
	// or "read uncommitted".
	Isolation string
	ReadOnly  bool
}

// Conn is one session on an engine. It is used by one goroutine at a time.
//
// Errors: every method returns a *pgerr.Error. An error in SQLSTATE class
// 08 means the connection is unusable and must be closed; 57014 means ctx
// ended the statement (the driver has asked the engine to cancel it); any
// other code is an answer of the engine (the statement failed, the
// connection is still usable, the transaction state follows the engine's
// rules: PostgreSQL aborts the transaction, MySQL keeps it).
type Conn interface {
	// Begin starts a transaction.
	Begin(ctx context.Context, opts TxOptions) error
	// Commit commits the current transaction.
	Commit(ctx context.Context) error
	// Rollback rolls the current transaction back; it is a no-op without one.
	Rollback(ctx context.Context) error
	// Exec runs one statement inside the current transaction (or alone, in
	// the engine's autocommit, when none is open).
	Exec(ctx context.Context, q Query) (*answer.Answer, error)
	// Close closes the connection, rolling back anything open.
	Close() error
}

// LockWaits is an Engine that says whose locks one of its sessions waits
// for. shepherd holds some locks itself (advisory locks, DDL locks),
// which no engine sees: a cycle through one of those and an engine's
// lock is found by joining the two (see session's lock table).
type LockWaits interface {
	// Blockers returns the sessions (as Backend names them) holding a
	// lock the session backend waits for; none when it waits for none.
	// The answer comes from a look at the engine that began at or
	// after the call, or at or after the time WithNotBefore put in
	// ctx when there is one: a wait it shows was under way then.
	Blockers(ctx context.Context, backend int64) ([]int64, error)
}

// notBeforeKey is the context key of WithNotBefore's time.
type notBeforeKey struct{}

// WithNotBefore returns ctx carrying t: LockWaits.Blockers called with it
// may answer from a look at the engine that began at or after t, even one
// that began before the call. Several calls of one check (as a deadlock
// check asks about every transaction in a cycle) can so share one look.
func WithNotBefore(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, notBeforeKey{}, t)
}

// NotBefore returns the time WithNotBefore put in ctx; the zero time if
// none.
func NotBefore(ctx context.Context) time.Time {
	t, _ := ctx.Value(notBeforeKey{}).(time.Time)
	return t
}

// Backend is a Conn that names its session in the engine (PostgreSQL's
// backend pid, MariaDB's connection id), as LockWaits reports them.
type Backend interface {
	Backend() int64
}

// Batcher is a Conn that can send several statements of an open
// transaction to the engine at once and read all their answers in one
// round trip. A replica that replays a transaction already answered by
// the primary has its statements queued together; sending them one by
// one would cost a round trip each.
type Batcher interface {
	// ExecBatch runs qs in order inside the current transaction, as that
	// many Exec calls would, and returns the answers of the statements
	// that succeeded, in order. If a statement fails, its error is
	// returned with the answers of those before it (so it is
	// qs[len(answers)]); the statements after it did not run, and the
	// engine's transaction has failed as it would have with Exec. Without
	// an open transaction the statements run one at a time.
	ExecBatch(ctx context.Context, qs []Query) ([]*answer.Answer, error)
}

// Committer is a Conn that can run a transaction's last statement and its
// COMMIT in one round trip to the engine.
type Committer interface {
	// ExecCommit runs q and then commits, as Exec followed by Commit
	// would. If q fails, its error is returned, and the transaction is
	// neither committed nor ended.
	ExecCommit(ctx context.Context, q Query) error
}

// Query is one statement in the engine's dialect.
type Query struct {
	// SQL is the statement text, parameters written the dialect's way
	// ($1 for postgres, ? for mysql and sqlite).
	SQL string
	// Args are the parameter values, in the order the dialect's
	// placeholders consume them.
	Args []Arg
	// ReturnsRows says the statement produces a result set (SELECT,
	// VALUES, SHOW, ... RETURNING).
	ReturnsRows bool
	// Verb is the command tag verb ("SELECT", "INSERT", "CREATE TABLE").
	Verb string
	// Sink, when set, receives the statement's rows one at a time as the
	// engine sends them, instead of the answer's Rows: a large answer is
	// never held whole. cols are the columns as the engine described them
	// before the first row (the answer's may be refined after the last);
	// the sink may keep row. An error from it ends the statement with
	// that error. A driver that does not stream returns the rows in the
	// answer as before; the caller feeds them to its sink itself.
	Sink func(cols []answer.Column, row []answer.Value) error
}

// StatementSeparator separates the statements of a text a writer made
// of several (a TRUNCATE of several tables: one DELETE each; for DuckDB
// also an ALTER TABLE of several actions, and a DELETE and what foreign
// key actions do after it). A driver
// whose engine runs one statement per call splits the text there and
// runs the parts in order, in the same transaction. The writers never
// put it inside an identifier or a literal of such a text.
const StatementSeparator = ";\n"

// Arg is one parameter value, in PostgreSQL text form (bytea as raw bytes).
type Arg struct {
	Null bool
	// Type is the parameter's family, Unknown when the client did not say;
	// a driver passes Unknown as a string and lets the engine coerce it.
	Type answer.Type
	Text string
}

// OpenFunc opens an engine from its spec. It checks the engine is
// reachable before it returns.
type OpenFunc func(ctx context.Context, spec Spec) (Engine, error)

type registered struct {
	open  OpenFunc
	class Class
}

var (
	registryMu sync.Mutex
	registry   = map[string]registered{}
)

// Register makes a driver available under name; class is the class of
// the engines it opens, known before any is opened (for checking a
// configuration). It panics if the name is taken: two drivers claiming
// one name is a programming error.
func Register(name string, class Class, open OpenFunc) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("driver: Register called twice for " + name)
	}
	registry[name] = registered{open: open, class: class}
}

// Lookup returns the driver registered under name.
func Lookup(name string) (OpenFunc, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	r, ok := registry[name]
	return r.open, ok
}

// ClassOf returns the class of the engines the named driver opens.
func ClassOf(name string) (Class, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	r, ok := registry[name]
	return r.class, ok
}

// Names returns the registered driver names, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// Command returns q's command tag verb, or the statement's first word in
// upper case when the caller gave no Verb.
func (q Query) Command() string {
	if q.Verb != "" {
		return q.Verb
	}
	f := strings.Fields(q.SQL)
	if len(f) == 0 {
		return ""
	}
	return strings.ToUpper(f[0])
}

// CountsRows reports whether a statement's affected-row count is part of
// its command tag (and so of its answer).
func CountsRows(verb string) bool {
	switch verb {
	case "INSERT", "UPDATE", "DELETE", "MERGE":
		return true
	}
	return false
}
