// Package duckdb is the shepherd driver "duckdb": an embedded DuckDB
// database (github.com/duckdb/duckdb-go, the engine's C++ library linked
// statically through cgo). DuckDB is written independently of SQLite,
// PostgreSQL and MariaDB, so a logic bug in one of those is out-voted by
// a DuckDB replica.
//
// The DSN is the database file's path; a relative path is resolved under
// the shepherd data directory. The engine runs with one thread and a
// modest memory limit (a replica shares its host with the others).
//
// DuckDB keeps snapshots (MVCC) and checks writes optimistically: two
// transactions that write the same row conflict, and the later one fails
// (at the write or at COMMIT) instead of waiting. Its readers never wait
// and its writers never queue, so it cannot be a locking engine, and an
// MVCC engine's schedule would have it abort writers the primary let
// through. It is therefore of class Serial: replica.Manager admits one
// engine transaction at a time, under which no conflict can arise. A
// conflict that happens all the same (a session outside the manager, a
// repair) is a serialization failure, 40001, which the coordinator
// retries.
//
// Every session runs with integer_division on (an integer / is
// PostgreSQL's truncating division), NULLs sorted as PostgreSQL sorts
// them (last ascending, first descending), and time zone UTC. The text a
// replica receives is PostgreSQL's, checked and rewritten by package
// dialect (WriteDuckDB) where DuckDB reads it otherwise.
package duckdb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Name is the driver's name in the config.
const Name = "duckdb"

// Threads and MemoryLimit bound what one DuckDB replica takes of its
// host.
const (
	Threads     = 1
	MemoryLimit = "256MB"
)

func init() {
	driver.Register(Name, driver.Serial, func(ctx context.Context, spec driver.Spec) (driver.Engine, error) {
		return open(ctx, spec)
	})
}

// sessionSetup is run on every connection the engine opens.
var sessionSetup = []string{
	"SET integer_division = true",
	"SET default_null_order = 'nulls_last_on_asc_first_on_desc'",
	"SET TimeZone = 'UTC'",
	// dialect.VarcharMacro: PostgreSQL's assignment to varchar(n).
	"CREATE OR REPLACE TEMP MACRO " + dialect.VarcharMacro + "(v, n) AS CASE" +
		" WHEN v IS NULL OR length(CAST(v AS VARCHAR)) <= n THEN CAST(v AS VARCHAR)" +
		" WHEN rtrim(substring(CAST(v AS VARCHAR), n + 1), ' ') = '' THEN left(CAST(v AS VARCHAR), n)" +
		" ELSE error('value too long for type character varying(' || n || ')') END",
	// dialect.AvgCountMacro: the count of a comparison with avg(), exact
	// below the limit.
	"CREATE OR REPLACE TEMP MACRO " + dialect.AvgCountMacro + "(n) AS CASE WHEN n < " + strconv.Itoa(avgCountLimit) +
		" THEN n ELSE error('" + avgCountError + "') END",
}

// avgCountLimit and avgCountError are dialect.AvgCountMacro's limit and
// error, which classify reports as 0A000.
const (
	avgCountLimit = 200000000
	avgCountError = "shepherd cannot compare with avg() of 200000000 or more values exactly on DuckDB replicas"
)

// Engine is one DuckDB database file.
type Engine struct {
	replica string
	path    string
	conn    *duckdb.Connector
	db      *sql.DB
	// shared registers the shared functions (funcs.go) once.
	shared    sync.Once
	sharedErr error
}

func open(ctx context.Context, spec driver.Spec) (*Engine, error) {
	path := spec.DSN
	if path == "" {
		return nil, openError(spec.Name, pgerr.New(pgerr.ConnectionException, "empty duckdb DSN: want a file path"))
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(spec.DataDir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, openError(spec.Name, pgerr.Wrap(pgerr.ConnectionException, err, ""))
	}
	dsn := path + "?threads=" + strconv.Itoa(Threads) + "&memory_limit=" + MemoryLimit
	e := &Engine{replica: spec.Name, path: path}
	conn, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, openError(spec.Name, e.classify(ctx, err))
	}
	e.conn = conn
	e.db = sql.OpenDB(conn)
	// Sessions are pinned for their whole life and closed with it.
	e.db.SetMaxIdleConns(0)
	c, err := e.Connect(ctx)
	if err != nil {
		e.Close()
		return nil, openError(spec.Name, pgerr.From(err))
	}
	if err := c.Close(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func openError(replica string, cause *pgerr.Error) *pgerr.Error {
	e := pgerr.Wrap(cause.Code, cause, "replica "+replica+": cannot open duckdb database")
	e.Replica = replica
	return e
}

// Driver returns "duckdb".
func (e *Engine) Driver() string { return Name }

// Class returns driver.Serial (see the package doc).
func (e *Engine) Class() driver.Class { return driver.Serial }

// Dialect returns driver.DuckDB.
func (e *Engine) Dialect() driver.Dialect { return driver.DuckDB }

// Path returns the database file's path.
func (e *Engine) Path() string { return e.path }

// Close closes the database.
func (e *Engine) Close() error {
	err := e.db.Close()
	if cerr := e.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// Connect opens a session with its settings.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	sc, err := e.db.Conn(ctx)
	if err != nil {
		return nil, e.classify(ctx, err)
	}
	for _, stmt := range sessionSetup {
		if _, err := sc.ExecContext(ctx, stmt); err != nil {
			sc.Close()
			return nil, e.classify(ctx, err)
		}
	}
	if err := registerArrayFuncs(ctx, sc); err != nil {
		sc.Close()
		return nil, e.classify(ctx, err)
	}
	// The shared functions live in the database's catalog, for every
	// connection: registered once, by the first (open's, before any
	// other can connect).
	e.shared.Do(func() { e.sharedErr = registerShared(ctx, sc) })
	if e.sharedErr != nil {
		sc.Close()
		return nil, e.classify(ctx, e.sharedErr)
	}
	return &Conn{engine: e, conn: sc}, nil
}

// Conn is one session, pinned to one DuckDB connection.
type Conn struct {
	engine *Engine
	conn   *sql.Conn
	inTx   bool
	// failed: a statement of the open transaction failed. DuckDB then
	// refuses everything but ROLLBACK, where MariaDB and SQLite keep the
	// transaction going; see Exec.
	failed bool
	// log is what the open transaction ran, for ROLLBACK TO SAVEPOINT
	// (see savepoint.go).
	log txLog
}

// Begin starts a transaction. DuckDB runs snapshot isolation only; under
// the Serial class no two transactions overlap, so every level the
// client may ask for is met.
func (c *Conn) Begin(ctx context.Context, opts driver.TxOptions) error {
	switch strings.ToLower(opts.Isolation) {
	case "", "serializable", "repeatable read", "read committed", "read uncommitted":
	default:
		return c.engine.tagged(pgerr.New(pgerr.InvalidParameterValue, "unknown isolation level %q", opts.Isolation))
	}
	err := c.run(ctx, "BEGIN TRANSACTION")
	c.inTx, c.failed = err == nil, false
	c.log.reset()
	return err
}

// Commit commits the transaction.
func (c *Conn) Commit(ctx context.Context) error {
	failed := c.failed
	c.inTx, c.failed = false, false
	c.log.reset()
	if failed {
		_ = c.run(ctx, "ROLLBACK")
		return c.aborted()
	}
	return c.run(ctx, "COMMIT")
}

// Rollback rolls the transaction back; without one it does nothing.
func (c *Conn) Rollback(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	c.inTx, c.failed = false, false
	c.log.reset()
	return c.run(ctx, "ROLLBACK")
}

// Close rolls back anything open and closes the connection.
func (c *Conn) Close() error {
	if c.inTx {
		_ = c.Rollback(context.Background())
	}
	return c.conn.Close()
}

func (c *Conn) run(ctx context.Context, stmt string) error {
	if _, err := c.conn.ExecContext(ctx, stmt); err != nil {
		return c.engine.classify(ctx, err)
	}
	return nil
}

// Exec runs q: through a query when it returns rows, else as a
// statement tagged with its affected rows.
//
// A failed statement aborts a DuckDB transaction as a whole, where
// PostgreSQL undoes only the statement (and then refuses the rest: the
// shepherd session sees 25P02 for what follows, as PostgreSQL would).
// Every later statement of the transaction fails with 40001 here, as
// SQLite's driver does when SQLite rolled back on its own, until a
// ROLLBACK TO SAVEPOINT, which the driver does itself (savepoint.go),
// recovers it.
func (c *Conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	if op, name, ok := savepointOf(q); ok {
		return c.savepoint(ctx, q, op, name)
	}
	if c.failed {
		return nil, c.aborted()
	}
	a, err := c.exec(ctx, q)
	switch {
	case err != nil && c.inTx:
		c.failed = true
	case err == nil && c.inTx:
		c.log.record(q, a)
	}
	return a, err
}

func (c *Conn) exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	if err := ctx.Err(); err != nil {
		return nil, c.engine.tagged(pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request"))
	}
	args := convertArgs(q.Args)
	verb := q.Command()
	// A DROP or TRUNCATE of several tables, an ALTER TABLE of several
	// actions, and a DELETE followed by what foreign key actions do
	// (dialect.DuckDBAfter) are texts of several statements (see
	// driver.StatementSeparator), run in order. Only those: another
	// statement's literal may hold the separator. The first part is the
	// client's statement: it takes the parameters and gives the answer.
	parts := []string{q.SQL}
	for _, p := range []string{"DROP", "TRUNCATE", "ALTER", "DELETE"} {
		if strings.HasPrefix(verb, p) {
			parts = strings.Split(q.SQL, driver.StatementSeparator)
		}
	}
	if len(parts) > 1 && !c.inTx {
		// In the engine's autocommit, the parts are still one
		// transaction: all of them or none.
		if err := c.run(ctx, "BEGIN TRANSACTION"); err != nil {
			return nil, err
		}
		a, err := c.parts(ctx, q, verb, parts, args)
		if err != nil {
			_ = c.run(ctx, "ROLLBACK")
			return nil, err
		}
		if err := c.run(ctx, "COMMIT"); err != nil {
			return nil, err
		}
		return a, nil
	}
	return c.parts(ctx, q, verb, parts, args)
}

// parts runs the parts of q's text in order (see exec).
func (c *Conn) parts(ctx context.Context, q driver.Query, verb string, parts []string, args []any) (*answer.Answer, error) {
	var a *answer.Answer
	if q.ReturnsRows {
		var err error
		if a, err = c.query(ctx, parts[0], args); err != nil {
			return nil, c.engine.classify(ctx, err)
		}
		a.Tag = answer.Tag(verb, a.RowsAffected)
	}
	var n int64
	for i, part := range parts {
		if i == 0 && a != nil {
			continue
		}
		var partArgs []any
		if i == 0 {
			partArgs = args
		}
		res, err := c.conn.ExecContext(ctx, part, partArgs...)
		if err != nil {
			return nil, c.engine.classify(ctx, err)
		}
		if i == 0 && driver.CountsRows(verb) {
			m, err := res.RowsAffected()
			if err != nil {
				return nil, c.engine.classify(ctx, err)
			}
			n = m
		}
	}
	if a != nil {
		return a, nil
	}
	return &answer.Answer{Tag: answer.Tag(verb, n), RowsAffected: n}, nil
}

// query runs a statement that returns rows and reads them all.
func (c *Conn) query(ctx context.Context, stmt string, args []any) (*answer.Answer, error) {
	rows, err := c.conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(types))
	for i, ct := range types {
		cols[i] = columnOf(ct.DatabaseTypeName())
	}
	raw := make([]any, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	a := &answer.Answer{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]answer.Value, len(raw))
		for i, v := range raw {
			row[i] = cols[i].value(v)
		}
		a.Rows = append(a.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	a.Columns = make([]answer.Column, len(types))
	for i, ct := range types {
		a.Columns[i] = answer.Column{Name: ct.Name(), Type: cols[i].typ, OID: cols[i].oid, Size: -1, Mod: -1}
	}
	a.RowsAffected = int64(len(a.Rows))
	return a, nil
}

func (e *Engine) tagged(err *pgerr.Error) *pgerr.Error {
	err.Replica = e.replica
	return err
}
