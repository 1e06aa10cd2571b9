// Package direct runs a PostgreSQL client's statements straight on one
// engine, in process, with no proxy between: each statement is analysed
// and written in the engine's dialect by the same code shepherd uses
// (package sqlan), run through shepherd's driver for the engine (so the
// session settings, such as MariaDB at SERIALIZABLE, are those a replica
// gets), and its answer is handed back through pgx's interfaces.
//
// It is the "direct" baseline of the benchmarks: the workloads are
// written for PostgreSQL, and MariaDB and SQLite cannot run that text as
// it is. Translation costs a little client CPU (the analysis of a
// statement text is cached), far less than a round trip through a proxy.
//
// Only what the benchmark workloads use is there: Begin/BeginTx, Exec,
// Query and QueryRow on a connection and in a transaction; copy, batches,
// large objects and savepoints are refused.
package direct

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// cacheSize bounds the analysed statements kept.
const cacheSize = 10_000

// DB is one engine, opened through shepherd's driver for it.
type DB struct {
	engine  driver.Engine
	cache   *sqlan.Cache
	dialect driver.Dialect
}

// Open opens the engine that shepherd's driver drv ("mysql", "sqlite",
// "sqlite-cgo", "postgres") reaches with dsn. dataDir holds the catalog of
// the tables created through the DB (and relative SQLite paths).
func Open(ctx context.Context, drv, dsn, dataDir string) (*DB, error) {
	open, ok := driver.Lookup(drv)
	if !ok {
		return nil, fmt.Errorf("direct: unknown driver %q", drv)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	e, err := open(ctx, driver.Spec{Name: drv, DSN: dsn, DataDir: dataDir})
	if err != nil {
		return nil, err
	}
	cat, err := schema.Open(filepath.Join(dataDir, "catalog.json"))
	if err != nil {
		e.Close()
		return nil, err
	}
	d := e.Dialect()
	cache := sqlan.NewCache(cacheSize, map[driver.Dialect][]string{d: {drv}}, cat)
	return &DB{engine: e, cache: cache, dialect: d}, nil
}

// Engine returns the driver's engine.
func (db *DB) Engine() driver.Engine { return db.engine }

// Close closes the engine.
func (db *DB) Close() error { return db.engine.Close() }

// Connect opens a session.
func (db *DB) Connect(ctx context.Context) (*Conn, error) {
	c, err := db.engine.Connect(ctx)
	if err != nil {
		return nil, pgError(err)
	}
	return &Conn{db: db, c: c, types: pgtype.NewMap()}, nil
}

// Conn is one session on the engine. Like a *pgx.Conn, it is used by one
// goroutine at a time.
type Conn struct {
	db      *DB
	c       driver.Conn
	types   *pgtype.Map
	tx      *Tx           // the open transaction, nil outside one
	txnTime time.Time     // now() of the open transaction
	ddl     []*sqlan.Stmt // DDL run in the open transaction, recorded at COMMIT
}

// Close closes the session, rolling back what is open.
func (c *Conn) Close(ctx context.Context) error {
	c.tx = nil
	return pgError(c.c.Close())
}

// Begin starts a transaction with the engine's default options.
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error) {
	return c.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx starts a transaction; an isolation level and read-only are
// passed on to the engine.
func (c *Conn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	if c.tx != nil {
		return nil, errors.New("direct: a transaction is already open")
	}
	o := driver.TxOptions{Isolation: string(opts.IsoLevel), ReadOnly: opts.AccessMode == pgx.ReadOnly}
	if err := c.c.Begin(ctx, o); err != nil {
		return nil, pgError(err)
	}
	c.tx = &Tx{c: c}
	c.txnTime = time.Now()
	return c.tx, nil
}

// Exec runs a statement without rows.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	a, _, err := c.run(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return pgconn.NewCommandTag(a.Tag), nil
}

// Query runs a statement and returns its rows.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	a, st, err := c.run(ctx, sql, args)
	if err != nil {
		return &rows{err: err}, err
	}
	return &rows{a: a, st: st, types: c.types, at: -1}, nil
}

// QueryRow runs a statement and returns its first row.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r, _ := c.Query(ctx, sql, args...)
	return row{r.(*rows)}
}

// run analyses sql, writes it for the engine and runs it. Outside a
// transaction it runs in the engine's autocommit.
func (c *Conn) run(ctx context.Context, sql string, args []any) (*answer.Answer, *sqlan.Stmt, error) {
	sts, err := c.db.cache.Parse(sql)
	if err != nil {
		return nil, nil, pgError(err)
	}
	if len(sts) != 1 {
		return nil, nil, fmt.Errorf("direct: %d statements in one call; send one at a time", len(sts))
	}
	st := sts[0]
	switch st.Kind {
	case sqlan.Begin, sqlan.Commit, sqlan.Rollback:
		return nil, nil, errors.New("direct: use Begin, Commit and Rollback, not statements")
	case sqlan.Set, sqlan.Show, sqlan.Explain:
		return nil, nil, fmt.Errorf("direct: %s is not supported", st.Verb)
	}
	dargs, err := c.args(st, args)
	if err != nil {
		return nil, nil, err
	}
	q := sqlan.Query(st, c.db.dialect, dargs)
	a, err := c.c.Exec(ctx, q)
	if err != nil {
		return nil, nil, pgError(err)
	}
	if n := st.CountRows(c.db.dialect); n > 0 {
		a.RowsAffected = n
		a.Tag = answer.Tag(q.Verb, n)
	}
	if st.Kind == sqlan.DDL {
		if c.tx != nil {
			c.ddl = append(c.ddl, st)
		} else if err := c.record(st); err != nil {
			return nil, nil, err
		}
	}
	if a.Columns != nil {
		a = sqlan.ShapeAnswer(a, st.Columns())
	}
	return a, st, nil
}

// record enters a DDL statement that committed into the catalog.
func (c *Conn) record(st *sqlan.Stmt) error {
	cat := c.db.cache.Catalog()
	if err := cat.Apply(st.Tree()); err != nil {
		return fmt.Errorf("direct: catalog: %w", err)
	}
	if tr := st.Tree().GetTruncateStmt(); tr != nil && tr.RestartSeqs {
		for _, r := range tr.Relations {
			if err := cat.Restart(r.GetRangeVar().Relname); err != nil {
				return fmt.Errorf("direct: catalog: %w", err)
			}
		}
	}
	return nil
}

// args converts the client's arguments and adds the values shepherd pins
// (now(), random(), serial keys).
func (c *Conn) args(st *sqlan.Stmt, args []any) ([]driver.Arg, error) {
	out := make([]driver.Arg, max(st.NumParams, len(args)))
	for i := range out {
		if i >= len(args) {
			out[i] = driver.Arg{Null: true}
			continue
		}
		a, err := Arg(args[i])
		if err != nil {
			return nil, fmt.Errorf("direct: argument $%d: %w", i+1, err)
		}
		out[i] = a
	}
	if len(st.Pins) == 0 {
		return out, nil
	}
	t := c.txnTime
	if c.tx == nil {
		t = time.Now()
	}
	pins, err := st.PinArgs(sqlan.PinSource{
		TxnTime:  t,
		StmtTime: time.Now(),
		Next: func(table, column string) (int64, error) {
			return c.db.cache.Catalog().Next(table, column, 1)
		},
	})
	if err != nil {
		return nil, pgError(err)
	}
	return append(out[:st.NumParams], pins...), nil
}

// commit commits the open transaction and records its DDL.
func (c *Conn) commit(ctx context.Context) error {
	ddl := c.ddl
	c.tx, c.ddl = nil, nil
	if err := c.c.Commit(ctx); err != nil {
		_ = c.c.Rollback(ctx)
		return pgError(err)
	}
	for _, st := range ddl {
		if err := c.record(st); err != nil {
			return err
		}
	}
	return nil
}

func (c *Conn) rollback(ctx context.Context) error {
	c.tx, c.ddl = nil, nil
	return pgError(c.c.Rollback(ctx))
}

// Tx is an open transaction; it implements pgx.Tx.
type Tx struct{ c *Conn }

var errTxClosed = pgx.ErrTxClosed

func (t *Tx) open() bool { return t.c.tx == t }

// Begin would start a nested transaction (a savepoint): not supported.
func (t *Tx) Begin(ctx context.Context) (pgx.Tx, error) {
	return nil, errors.New("direct: savepoints are not supported")
}

// Commit commits the transaction.
func (t *Tx) Commit(ctx context.Context) error {
	if !t.open() {
		return errTxClosed
	}
	return t.c.commit(ctx)
}

// Rollback rolls the transaction back.
func (t *Tx) Rollback(ctx context.Context) error {
	if !t.open() {
		return errTxClosed
	}
	return t.c.rollback(ctx)
}

// CopyFrom is not supported.
func (t *Tx) CopyFrom(ctx context.Context, _ pgx.Identifier, _ []string, _ pgx.CopyFromSource) (int64, error) {
	return 0, errors.New("direct: COPY is not supported")
}

// SendBatch is not supported: the results all fail.
func (t *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return failedBatch{errors.New("direct: batches are not supported")}
}

// LargeObjects is not supported (its zero value fails on use).
func (t *Tx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

// Prepare is not supported.
func (t *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return nil, errors.New("direct: Prepare is not supported")
}

// Exec runs a statement in the transaction.
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if !t.open() {
		return pgconn.CommandTag{}, errTxClosed
	}
	return t.c.Exec(ctx, sql, args...)
}

// Query runs a statement in the transaction and returns its rows.
func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !t.open() {
		return &rows{err: errTxClosed}, errTxClosed
	}
	return t.c.Query(ctx, sql, args...)
}

// QueryRow runs a statement in the transaction and returns its first row.
func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	r, _ := t.Query(ctx, sql, args...)
	return row{r.(*rows)}
}

// Conn returns nil: there is no *pgx.Conn underneath.
func (t *Tx) Conn() *pgx.Conn { return nil }

type failedBatch struct{ err error }

func (b failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b failedBatch) Query() (pgx.Rows, error)         { return &rows{err: b.err}, b.err }
func (b failedBatch) QueryRow() pgx.Row                { return row{&rows{err: b.err}} }
func (b failedBatch) Close() error                     { return b.err }
func (b failedBatch) Tx() pgx.Tx                       { return nil }

// rows are an answer read row by row; they implement pgx.Rows.
type rows struct {
	a     *answer.Answer
	st    *sqlan.Stmt
	types *pgtype.Map
	at    int
	err   error
}

func (r *rows) Close() {}

func (r *rows) Err() error { return r.err }

func (r *rows) CommandTag() pgconn.CommandTag {
	if r.a == nil {
		return pgconn.CommandTag{}
	}
	return pgconn.NewCommandTag(r.a.Tag)
}

func (r *rows) FieldDescriptions() []pgconn.FieldDescription {
	if r.a == nil {
		return nil
	}
	out := make([]pgconn.FieldDescription, len(r.a.Columns))
	for i, col := range r.a.Columns {
		out[i] = pgconn.FieldDescription{Name: col.Name, DataTypeOID: col.TypeOID(),
			DataTypeSize: col.Size, TypeModifier: col.Mod, Format: pgtype.TextFormatCode}
	}
	return out
}

func (r *rows) Next() bool {
	if r.err != nil || r.a == nil || r.at+1 >= len(r.a.Rows) {
		return false
	}
	r.at++
	return true
}

// Scan converts the current row's values into dest, with pgx's own
// conversions from the PostgreSQL text form.
func (r *rows) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	if r.a == nil || r.at < 0 || r.at >= len(r.a.Rows) {
		return errors.New("direct: Scan without a current row")
	}
	vals := r.a.Rows[r.at]
	if len(dest) != len(vals) {
		return fmt.Errorf("direct: %d values to scan into %d destinations", len(vals), len(dest))
	}
	for i, d := range dest {
		if d == nil {
			continue
		}
		oid := r.a.Columns[i].TypeOID()
		if err := r.types.Scan(oid, pgtype.TextFormatCode, text(oid, vals[i]), d); err != nil {
			return fmt.Errorf("direct: column %q: %w", r.a.Columns[i].Name, err)
		}
	}
	return nil
}

// text returns v in PostgreSQL's text form, nil for NULL.
func text(oid uint32, v answer.Value) []byte {
	if v.Null {
		return nil
	}
	if v.Type == answer.Bytes || (v.Type == answer.Unknown && oid == answer.OIDBytea) {
		return []byte(`\x` + hex.EncodeToString([]byte(v.Text)))
	}
	return []byte(v.Text)
}

func (r *rows) Values() ([]any, error) {
	if r.a == nil || r.at < 0 || r.at >= len(r.a.Rows) {
		return nil, errors.New("direct: Values without a current row")
	}
	out := make([]any, len(r.a.Columns))
	for i, col := range r.a.Columns {
		v := r.a.Rows[r.at][i]
		if v.Null {
			continue
		}
		t, ok := r.types.TypeForOID(col.TypeOID())
		if !ok {
			out[i] = v.Text
			continue
		}
		var err error
		out[i], err = t.Codec.DecodeValue(r.types, col.TypeOID(), pgtype.TextFormatCode, text(col.TypeOID(), v))
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *rows) RawValues() [][]byte {
	if r.a == nil || r.at < 0 || r.at >= len(r.a.Rows) {
		return nil
	}
	out := make([][]byte, len(r.a.Columns))
	for i, col := range r.a.Columns {
		out[i] = text(col.TypeOID(), r.a.Rows[r.at][i])
	}
	return out
}

func (r *rows) Conn() *pgx.Conn { return nil }

func (r *rows) TypeMap() *pgtype.Map { return r.types }

// row is the first row of rows; it implements pgx.Row.
type row struct{ r *rows }

func (w row) Scan(dest ...any) error {
	if w.r.err != nil {
		return w.r.err
	}
	if !w.r.Next() {
		return pgx.ErrNoRows
	}
	return w.r.Scan(dest...)
}

// pgError turns a driver's error into the *pgconn.PgError a pgx client
// sees from a server, so SQLSTATEs read the same.
func pgError(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgerr.Error
	if errors.As(err, &pe) {
		sev := pe.Severity
		if sev == "" {
			sev = "ERROR"
		}
		return &pgconn.PgError{Severity: sev, Code: pe.Code, Message: pe.Error(), Detail: pe.Detail, Hint: pe.Hint}
	}
	return err
}
