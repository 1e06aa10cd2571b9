// Package sqlite holds two shepherd drivers for SQLite replicas that share
// everything but the SQLite build underneath:
//
//   - "sqlite" runs modernc.org/sqlite, SQLite translated to pure Go;
//   - "sqlite-cgo" runs github.com/mattn/go-sqlite3, the C amalgamation
//     compiled by cgo (only in binaries built with cgo).
//
// The two are independently built engines, so a bug in one build can be
// out-voted by replicas running the other.
//
// The DSN is the database file's path; a relative path is resolved under
// the shepherd data directory. Files are opened in WAL mode with foreign
// keys enforced and synchronous=NORMAL.
//
// SQLite runs one writing transaction at a time (class Serial). Begin says
// BEGIN IMMEDIATE, taking the write lock up front: a transaction that
// started as a reader and later wants to write could fail to upgrade its
// lock, which would be an abort the other replicas never see.
//
// Values are typed per value, as SQLite stores them (see values.go);
// errors are classified by result code, and by message only where SQLite
// gives nothing finer (see errors.go). Both libraries interrupt a running
// statement when its ctx ends.
package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// busyTimeout is how long a statement waits for another connection's lock
// before failing with SQLITE_BUSY (40001).
const busyTimeout = 10 * time.Second

// library is one SQLite build behind database/sql.
type library struct {
	// name is the shepherd driver name.
	name string
	// sqlDriver is the database/sql driver name the library registers.
	sqlDriver string
	// dsnSuffix follows the file's path in the library's DSN.
	dsnSuffix string
	// limit reads one of a connection's run-time limits (sqlite3_limit).
	limit func(c *sql.Conn, id int) (int, error)
	// resultCode extracts the extended result code and message of an error
	// of the library; ok is false for errors that are not SQLite's.
	resultCode func(err error) (code int, msg string, ok bool)
}

// opener returns the driver.OpenFunc of lib.
func (lib *library) opener() driver.OpenFunc {
	return func(ctx context.Context, spec driver.Spec) (driver.Engine, error) {
		return open(ctx, lib, spec)
	}
}

// Engine is one SQLite database file.
type Engine struct {
	lib     *library
	replica string
	path    string
	db      *sql.DB
	// limits are the connections' run-time limits, read at open: every
	// connection of the engine has the same.
	limits [len(limits)]int64
	// schemaGen counts the schema changes run on any connection of the
	// engine (see Conn.prepared).
	schemaGen atomic.Uint64
}

// limits are the run-time limits (https://sqlite.org/limits.html) a
// statement is checked against before any replica runs it (Oversize).
var limits = [...]struct {
	id   int
	name string
}{
	{1, "SQLITE_LIMIT_SQL_LENGTH"},
	{0, "SQLITE_LIMIT_LENGTH"},
	{9, "SQLITE_LIMIT_VARIABLE_NUMBER"},
}

// Oversize checks q against the engine's limits: the length of its text,
// the length of each argument (a string or blob), the number of
// arguments.
func (e *Engine) Oversize(q driver.Query) *driver.Oversize {
	var longest int
	for _, a := range q.Args {
		longest = max(longest, len(a.Text))
	}
	for i, size := range [len(limits)]int64{int64(len(q.SQL)), int64(longest), int64(len(q.Args))} {
		if size > e.limits[i] {
			return &driver.Oversize{Limit: limits[i].name, Max: e.limits[i], Size: size}
		}
	}
	return nil
}

// readLimits reads the engine's limits on the connection sc.
func (e *Engine) readLimits(ctx context.Context, sc *sql.Conn) *pgerr.Error {
	for i, l := range limits {
		n, err := e.lib.limit(sc, l.id)
		if err != nil {
			return e.classify(ctx, err)
		}
		e.limits[i] = int64(n)
	}
	return nil
}

func open(ctx context.Context, lib *library, spec driver.Spec) (*Engine, error) {
	path := spec.DSN
	if path == "" {
		return nil, openError(spec.Name, pgerr.New(pgerr.ConnectionException, "empty sqlite DSN: want a file path"))
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(spec.DataDir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, openError(spec.Name, pgerr.Wrap(pgerr.ConnectionException, err, ""))
	}
	db, err := sql.Open(lib.sqlDriver, path+lib.dsnSuffix)
	if err != nil {
		return nil, openError(spec.Name, pgerr.Wrap(pgerr.ConnectionException, err, ""))
	}
	// Sessions are pinned for their whole life and closed with it: a
	// connection never carries one session's state into the next.
	db.SetMaxIdleConns(0)
	e := &Engine{lib: lib, replica: spec.Name, path: path, db: db}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
		db.Close()
		return nil, openError(spec.Name, e.classify(ctx, err))
	}
	c, err := e.Connect(ctx)
	if err != nil {
		db.Close()
		return nil, openError(spec.Name, pgerr.From(err))
	}
	if err := c.(*Conn).checkNoDQS(ctx); err != nil {
		c.Close()
		db.Close()
		return nil, openError(spec.Name, err)
	}
	if err := e.readLimits(ctx, c.(*Conn).conn); err != nil {
		c.Close()
		db.Close()
		return nil, openError(spec.Name, err)
	}
	if err := c.Close(); err != nil {
		db.Close()
		return nil, err
	}
	return e, nil
}

func openError(replica string, cause *pgerr.Error) *pgerr.Error {
	e := pgerr.Wrap(cause.Code, cause, "replica "+replica+": cannot open sqlite database")
	e.Replica = replica
	return e
}

// Driver returns "sqlite" or "sqlite-cgo".
func (e *Engine) Driver() string { return e.lib.name }

// Class returns driver.Serial.
func (e *Engine) Class() driver.Class { return driver.Serial }

// Dialect returns driver.SQLite.
func (e *Engine) Dialect() driver.Dialect { return driver.SQLite }

// Path returns the database file's absolute or DataDir-relative path.
func (e *Engine) Path() string { return e.path }

// Close closes the database file.
func (e *Engine) Close() error { return e.db.Close() }

// Connect opens a session with its per-connection settings.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	sc, err := e.db.Conn(ctx)
	if err != nil {
		return nil, e.classify(ctx, err)
	}
	c := &Conn{engine: e, conn: sc}
	setup := []string{
		"PRAGMA busy_timeout = " + itoa(busyTimeout.Milliseconds()),
		"PRAGMA foreign_keys = ON",
		// PostgreSQL's LIKE is case-sensitive (the SQL writer turns ILIKE into lower()).
		"PRAGMA case_sensitive_like = ON",
		"PRAGMA synchronous = NORMAL",
	}
	for _, stmt := range setup {
		if _, err := sc.ExecContext(ctx, stmt); err != nil {
			sc.Close()
			return nil, e.classify(ctx, err)
		}
	}
	return c, nil
}

// dqsProbe names no column: with SQLite's double-quoted-string fallback on,
// it would read as the string 'shepherd_dqs_probe'.
const dqsProbe = `SELECT "shepherd_dqs_probe"`

// checkNoDQS makes sure the library turned off SQLite's fallback that reads
// an unknown double-quoted identifier as a string literal (see
// https://sqlite.org/quirks.html#dblquote). The SQL writer double-quotes
// every identifier, so with it on a misspelt column would read its own
// name, and a write filtered on it would change every row, with every
// SQLite replica agreeing. A library that ignores the setting must not
// serve.
func (c *Conn) checkNoDQS(ctx context.Context) *pgerr.Error {
	_, err := c.query(ctx, dqsProbe, nil, nil)
	if err == nil {
		return c.engine.tagged(pgerr.New(pgerr.InternalError,
			"%s: SQLite reads an unknown double-quoted identifier as a string; shepherd needs that fallback off (sqlite3_db_config DQS_DML and DQS_DDL)", c.engine.lib.name))
	}
	if e := c.engine.classify(ctx, err); e.Code != pgerr.UndefinedColumn {
		return e
	}
	return nil
}

// Conn is one session, pinned to one SQLite connection.
type Conn struct {
	engine *Engine
	conn   *sql.Conn
	stmts  map[string]*sql.Stmt // prepared on this connection, by text
	gen    uint64               // engine.schemaGen when stmts were prepared
	// inTx: a transaction was begun and not yet ended; lost, once SQLite
	// rolled all of it back by itself after an error (see txGone), is
	// what every statement gets until Commit or Rollback.
	inTx bool
	lost error
}

// Begin starts a transaction. SQLite is always serializable, so the
// isolation level is accepted and ignored. A read-only transaction begins
// DEFERRED (it never writes, so it never upgrades its lock); read-only is
// not enforced.
func (c *Conn) Begin(ctx context.Context, opts driver.TxOptions) error {
	switch strings.ToLower(opts.Isolation) {
	case "", "serializable", "repeatable read", "read committed", "read uncommitted":
	default:
		return c.engine.tagged(pgerr.New(pgerr.InvalidParameterValue, "unknown isolation level %q", opts.Isolation))
	}
	stmt := "BEGIN IMMEDIATE"
	if opts.ReadOnly {
		stmt = "BEGIN DEFERRED"
	}
	err := c.run(ctx, stmt)
	c.inTx, c.lost = err == nil, nil
	return err
}

// Commit commits the transaction. When SQLite has already rolled it back
// by itself (an interrupted write does that), the answer is 25P01.
func (c *Conn) Commit(ctx context.Context) error {
	c.inTx, c.lost = false, nil
	return c.run(ctx, "COMMIT")
}

// txGone reports, after a statement of a transaction failed, whether
// SQLite rolled the whole transaction back by itself, as it does after an
// interrupt, a full disk or an ON CONFLICT ROLLBACK, where PostgreSQL
// and MariaDB undo only the statement. The statements after it would
// then each commit on their own on this replica alone. BEGIN tells: it
// fails inside a transaction, and one it starts is rolled back at once.
func (c *Conn) txGone(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := c.conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return false
	}
	_, _ = c.conn.ExecContext(ctx, "ROLLBACK")
	return true
}

// failed returns err, the error of a statement of a transaction, after
// checking whether SQLite rolled the whole transaction back (see txGone).
// Then every later statement of it, ROLLBACK TO SAVEPOINT included, fails
// with a serialization failure (40001) until Commit or Rollback: a
// concurrency failure, so the coordinator runs a secondary's attempt
// again from its start, and a client can only roll back.
func (c *Conn) failed(ctx context.Context, err error) error {
	if c.inTx && c.lost == nil && c.txGone(ctx) {
		c.lost = c.engine.tagged(pgerr.New(pgerr.SerializationFailure,
			"SQLite rolled the whole transaction back after an error (%v)", err).
			WithHint("roll the transaction back and retry it"))
	}
	return err
}

// Rollback rolls the transaction back; without one it does nothing.
func (c *Conn) Rollback(ctx context.Context) error {
	c.inTx, c.lost = false, nil
	err := c.run(ctx, "ROLLBACK")
	if pgerr.Code(err) == pgerr.NoActiveSQLTransaction {
		return nil
	}
	return err
}

// Close rolls back anything open and closes the connection.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Rollback(ctx) // closing rolls back anyway
	for _, st := range c.stmts {
		_ = st.Close()
	}
	_ = c.conn.Close()
	return nil
}

func (c *Conn) run(ctx context.Context, stmt string) error {
	st, err := c.prepared(ctx, stmt)
	if err == nil {
		_, err = st.ExecContext(ctx)
	}
	if err != nil {
		return c.engine.classify(ctx, err)
	}
	return nil
}

// maxStmts bounds a connection's cache of prepared statements.
const maxStmts = 256

// prepared returns the connection's prepared statement for text, preparing
// it on first use. Parsing is a good part of SQLite's cost for short
// statements; a prepared statement survives schema changes (SQLite
// prepares it again by itself when the schema moved).
func (c *Conn) prepared(ctx context.Context, text string) (*sql.Stmt, error) {
	if gen := c.engine.schemaGen.Load(); gen != c.gen {
		// A table was dropped, created or altered since these were
		// prepared, here or on another connection. go-sqlite3 keeps a
		// statement's column count from before SQLite prepares it again,
		// so SELECT * of a table created anew answered with the old
		// table's columns (TestPreparedAfterSchemaChange).
		c.forget()
		c.gen = gen
	}
	if st, ok := c.stmts[text]; ok {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	if len(c.stmts) >= maxStmts {
		c.forget()
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[text] = st
	return st, nil
}

// forget closes the connection's prepared statements.
func (c *Conn) forget() {
	for k, old := range c.stmts {
		_ = old.Close()
		delete(c.stmts, k)
	}
}

// schemaVerb reports whether a statement of that verb changes the schema.
func schemaVerb(verb string) bool {
	return strings.HasPrefix(verb, "CREATE") || strings.HasPrefix(verb, "DROP") || strings.HasPrefix(verb, "ALTER")
}

// Exec runs q: through Query when it returns rows, else through Exec,
// tagged with its affected rows.
func (c *Conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	if c.lost != nil {
		return nil, c.lost
	}
	args := convertArgs(q.Args)
	verb := q.Command()
	var err error
	if q.ReturnsRows {
		a, err := c.query(ctx, q.SQL, args, q.Sink)
		if err != nil {
			return nil, c.failed(ctx, c.engine.classify(ctx, err))
		}
		a.Tag = answer.Tag(verb, a.RowsAffected)
		return a, nil
	}
	var res sql.Result
	if (strings.HasPrefix(verb, "ALTER") || strings.HasPrefix(verb, "DROP") || strings.HasPrefix(verb, "TRUNCATE")) && len(args) == 0 {
		// The SQL writer may write an ALTER TABLE as several statements
		// (a table rebuilt, see package dialect), and a DROP of several
		// tables or views as one DROP each, a TRUNCATE of several as
		// one DELETE each. A prepared statement
		// of go-sqlite3 runs only the first; the connection's Exec runs
		// them all, in both builds. DDL is rare: not worth a cache entry.
		res, err = c.conn.ExecContext(ctx, q.SQL)
	} else {
		var st *sql.Stmt
		if st, err = c.prepared(ctx, q.SQL); err != nil {
			return nil, c.engine.classify(ctx, err)
		}
		res, err = st.ExecContext(ctx, args...)
	}
	if schemaVerb(verb) {
		// Also when it failed: part of a several-statement text may
		// have run.
		c.engine.schemaGen.Add(1)
	}
	if err != nil {
		return nil, c.failed(ctx, statementError(verb, c.engine.classify(ctx, err)))
	}
	var n int64
	if driver.CountsRows(verb) {
		// sqlite3_changes is only meaningful after INSERT, UPDATE and
		// DELETE; after anything else it still holds an older count.
		if n, err = res.RowsAffected(); err != nil {
			return nil, c.engine.classify(ctx, err)
		}
	}
	return &answer.Answer{Tag: answer.Tag(verb, n), RowsAffected: n}, nil
}

// query runs a statement that returns rows and reads them all, into the
// answer or, when there is one, into sink (driver.Query.Sink).
func (c *Conn) query(ctx context.Context, stmt string, args []any, sink func([]answer.Column, []answer.Value) error) (*answer.Answer, error) {
	st, err := c.prepared(ctx, stmt)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	declared := make([]declType, len(types))
	for i, ct := range types {
		declared[i] = declare(ct.DatabaseTypeName())
	}
	raw := make([]any, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	a := &answer.Answer{}
	var streamed []answer.Column // what the sink is told: the declared types
	var first [][]answer.Value   // per column, the first non-NULL value's row (streaming)
	if sink != nil {
		streamed = make([]answer.Column, len(types))
		for i, ct := range types {
			streamed[i] = declared[i].column(ct.Name(), nil, i)
		}
		first = make([][]answer.Value, len(types))
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]answer.Value, len(raw))
		for i, v := range raw {
			row[i] = declared[i].value(v)
		}
		n++
		if sink == nil {
			a.Rows = append(a.Rows, row)
			continue
		}
		for i := range first {
			if first[i] == nil && !row[i].Null {
				first[i] = row
			}
		}
		if err := sink(streamed, row); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	a.Columns = make([]answer.Column, len(types))
	for i, ct := range types {
		if sink != nil {
			// The column's type is its first value's, as for the
			// rows kept (declType.column).
			var seen [][]answer.Value
			if first[i] != nil {
				seen = [][]answer.Value{first[i]}
			}
			a.Columns[i] = declared[i].column(ct.Name(), seen, i)
			continue
		}
		a.Columns[i] = declared[i].column(ct.Name(), a.Rows, i)
	}
	a.RowsAffected = n
	return a, nil
}

func (e *Engine) tagged(err *pgerr.Error) *pgerr.Error {
	err.Replica = e.replica
	return err
}
