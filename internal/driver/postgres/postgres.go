// Package postgres is the shepherd driver for PostgreSQL replicas.
//
// It talks to the server through pgx's low-level pgconn, the way a proxy
// should: statements go out with text-format parameters (the server infers
// the type of an untyped one), answers come back in text format exactly as
// PostgreSQL prints them, and the server's command tag and SQLSTATE pass
// through unchanged. PostgreSQL is an MVCC engine; as a secondary it runs
// at READ COMMITTED so each statement sees the latest commits.
//
// Cancellation: when ctx ends during a statement the driver sends the
// server a cancel request, so the statement stops there too and the
// session stays usable; the caller gets SQLSTATE 57014. Should the server
// not answer within cancelGrace, the connection is cut and the caller gets
// 08006.
//
// Importing the package registers the driver as "postgres".
package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Name is the driver's registered name.
const Name = "postgres"

// cancelGrace is how long a cancelled statement may keep the connection
// after the cancel request was sent before the connection is cut.
const cancelGrace = 10 * time.Second

func init() { driver.Register(Name, driver.MVCC, Open) }

// Engine is a PostgreSQL replica.
type Engine struct {
	replica string
	config  *pgconn.Config
	// schemaEpoch moves whenever a connection of the engine ran a
	// statement that may change the schema; connections drop their
	// prepared statements when it moved since they prepared them.
	schemaEpoch atomic.Uint64
}

// Open parses spec.DSN (a PostgreSQL URL or keyword/value string) and
// connects once to check the server is reachable.
func Open(ctx context.Context, spec driver.Spec) (driver.Engine, error) {
	cfg, err := pgconn.ParseConfig(spec.DSN)
	if err != nil {
		e := pgerr.Wrap(pgerr.ConnectionException, err, "replica "+spec.Name+": bad postgres DSN")
		e.Replica = spec.Name
		return nil, e
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["TimeZone"] = "UTC"
	cfg.RuntimeParams["DateStyle"] = "ISO, MDY"
	cfg.RuntimeParams["IntervalStyle"] = "postgres"
	cfg.RuntimeParams["extra_float_digits"] = "1"
	cfg.RuntimeParams["bytea_output"] = "hex"
	cfg.RuntimeParams["client_encoding"] = "UTF8"
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
	}
	e := &Engine{replica: spec.Name, config: cfg}
	c, err := e.Connect(ctx)
	if err != nil {
		pe := pgerr.From(err)
		wrapped := pgerr.Wrap(pe.Code, pe, "replica "+spec.Name+": cannot reach postgres")
		wrapped.Replica = spec.Name
		return nil, wrapped
	}
	if err := c.(*Conn).checkLocale(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Close(); err != nil {
		return nil, err
	}
	return e, nil
}

// localeQuery reads the database's locale. pg_database's row goes through
// to_jsonb so that the columns PostgreSQL added later (datlocprovider in
// 15, daticulocale renamed datlocale in 17) read as NULL where absent.
const localeQuery = `SELECT current_database(), datcollate, datctype,
	coalesce(to_jsonb(d)->>'datlocprovider', 'c'),
	coalesce(to_jsonb(d)->>'datlocale', to_jsonb(d)->>'daticulocale', '')
	FROM pg_database d WHERE datname = current_database()`

// checkLocale refuses a database whose text does not behave as under the
// C locale. The SQL writer relies on it (package dialect): text compares
// and sorts byte-wise, as on MariaDB (utf8mb4_nopad_bin) and SQLite
// (BINARY), and lower() and upper() map ASCII letters only, as SQLite's
// do. Another collation would order rows, and decide comparisons,
// differently from the other replicas; C.UTF-8 sorts byte-wise but maps
// the case of every letter (upper('é') is 'É'). Such a replica would
// lose votes it should win, or win them against correct replicas, so it
// must not start.
func (c *Conn) checkLocale(ctx context.Context) error {
	rs, err := c.pc.Exec(ctx, localeQuery).ReadAll()
	if err != nil {
		return c.classify(ctx, err)
	}
	if len(rs) != 1 || len(rs[0].Rows) != 1 || len(rs[0].Rows[0]) != 5 {
		return c.tagged(pgerr.New(pgerr.InternalError, "replica %s: cannot read the database's locale", c.replica))
	}
	row := rs[0].Rows[0]
	db, collate, ctype, provider, locale := string(row[0]), string(row[1]), string(row[2]), string(row[3]), string(row[4])
	isC := func(l string) bool { return l == "C" || l == "POSIX" }
	var what string
	switch {
	case provider == "i":
		what = fmt.Sprintf("the ICU locale %q", locale)
	case provider == "b" && !isC(locale):
		what = fmt.Sprintf("the builtin locale %q", locale)
	case provider != "c" && provider != "b":
		what = fmt.Sprintf("locale provider %q", provider)
	case !isC(collate):
		what = fmt.Sprintf("LC_COLLATE %q", collate)
	case !isC(ctype):
		what = fmt.Sprintf("LC_CTYPE %q", ctype)
	default:
		return nil
	}
	e := pgerr.New(pgerr.FeatureNotSupported,
		"replica %s: database %q uses %s; shepherd compares, sorts and case-maps text as the C locale does, like the other engines, and needs a database created with LOCALE 'C' (CREATE DATABASE ... TEMPLATE template0 LOCALE 'C')",
		c.replica, db, what)
	return c.tagged(e)
}

// maxMessage is the largest message the server reads from a client
// (PQ_LARGE_MESSAGE_LIMIT, 1 GB less one byte); a longer one ends the
// connection. It is also the most a single value may take (MaxAllocSize).
const maxMessage = 1<<30 - 1

// Oversize checks q against the protocol's message limit: the statement
// goes out in a Parse message (its text) and a Bind message (its
// arguments, each with a 4-byte length); the 64 bytes cover the other
// fields of either.
func (e *Engine) Oversize(q driver.Query) *driver.Oversize {
	bind := int64(64)
	for _, a := range q.Args {
		bind += int64(4 + len(a.Text))
	}
	if size := max(int64(64+len(q.SQL)), bind); size > maxMessage {
		return &driver.Oversize{Limit: "the protocol's message size limit", Max: maxMessage, Size: size}
	}
	return nil
}

// Driver returns "postgres".
func (e *Engine) Driver() string { return Name }

// Class returns driver.MVCC.
func (e *Engine) Class() driver.Class { return driver.MVCC }

// Dialect returns driver.Postgres.
func (e *Engine) Dialect() driver.Dialect { return driver.Postgres }

// Close does nothing: every Conn owns its own connection.
func (e *Engine) Close() error { return nil }

// Connect opens a session with TimeZone UTC, DateStyle ISO, shortest
// round-trip float output and hex bytea, whatever the server's or
// database's defaults: answers are read in that form.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	pc, err := pgconn.ConnectConfig(ctx, e.config)
	if err != nil {
		return nil, e.connectError(ctx, err)
	}
	return &Conn{replica: e.replica, engine: e, pc: pc, stmts: stmtCache{epoch: e.schemaEpoch.Load()}}, nil
}

func (e *Engine) connectError(ctx context.Context, err error) *pgerr.Error {
	var pgErr *pgconn.PgError
	var out *pgerr.Error
	switch {
	case errors.As(err, &pgErr):
		out = fromPgError(pgErr)
	case ctx.Err() != nil:
		out = pgerr.Wrap(pgerr.QueryCanceled, err, "connect cancelled")
	default:
		out = pgerr.Wrap(pgerr.ConnectionFailure, err, "")
	}
	out.Replica = e.replica
	return out
}

// Conn is one PostgreSQL session.
type Conn struct {
	replica string
	engine  *Engine
	pc      *pgconn.PgConn
	stmts   stmtCache
	// schemaInTx says the open transaction ran a statement that may
	// change the schema (see schemaChanged).
	schemaInTx bool
	// pendingBegin is the BEGIN of a transaction begun but not sent yet
	// (see Begin).
	pendingBegin string
	// inTx says Begin was called and neither Commit nor Rollback yet: a
	// statement must then run in that transaction, never on its own (see
	// lostTx).
	inTx bool
}

// lostTx reports whether the transaction Begin started is not open on
// the server although it was not ended: its deferred BEGIN went out with
// a first statement whose round trip failed before the BEGIN ran. The
// statements after it must fail as in a failed transaction; run on their
// own they would each commit, and a rolled-back attempt would leave its
// writes behind.
func (c *Conn) lostTx() error {
	if c.inTx && c.pendingBegin == "" && c.pc.TxStatus() == 'I' {
		return c.tagged(pgerr.New(pgerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block").
			WithDetail("its BEGIN did not take effect"))
	}
	return nil
}

// isolationSQL maps TxOptions.Isolation onto the words of BEGIN; anything
// else is refused rather than pasted into SQL.
var isolationSQL = map[string]string{
	"":                 "READ COMMITTED",
	"serializable":     "SERIALIZABLE",
	"repeatable read":  "REPEATABLE READ",
	"read committed":   "READ COMMITTED",
	"read uncommitted": "READ UNCOMMITTED",
}

// Begin starts a transaction, at READ COMMITTED unless opts say otherwise.
// The BEGIN is not sent by itself: it goes out in front of the
// transaction's first statement, in the same round trip (see
// execPipeline). Nothing tells the two apart: a READ COMMITTED statement
// takes its own snapshot, and a REPEATABLE READ or SERIALIZABLE
// transaction takes its snapshot at its first statement, not at BEGIN.
func (c *Conn) Begin(ctx context.Context, opts driver.TxOptions) error {
	level, ok := isolationSQL[strings.ToLower(opts.Isolation)]
	if !ok {
		return c.tagged(pgerr.New(pgerr.InvalidParameterValue, "unknown isolation level %q", opts.Isolation))
	}
	stmt := "BEGIN ISOLATION LEVEL " + level
	if opts.ReadOnly {
		stmt += " READ ONLY"
	}
	if c.pendingBegin != "" || c.pc.TxStatus() != 'I' {
		// Inside a transaction: PostgreSQL's own answer (a warning, or
		// 25P02 in a failed one), as before.
		if err := c.sendPendingBegin(ctx); err != nil {
			return err
		}
		_, err := c.simple(ctx, stmt)
		return err
	}
	c.pendingBegin, c.inTx = stmt, true
	return nil
}

// sendPendingBegin sends the deferred BEGIN now, if there is one.
func (c *Conn) sendPendingBegin(ctx context.Context) error {
	if c.pendingBegin == "" {
		return nil
	}
	stmt := c.pendingBegin
	c.pendingBegin = ""
	_, err := c.simple(ctx, stmt)
	return err
}

// Commit commits the transaction. PostgreSQL answers COMMIT in a failed
// transaction by rolling back; that is reported as 25P02, never as success.
// A transaction that ran no statement has nothing to commit.
func (c *Conn) Commit(ctx context.Context) error {
	if c.pendingBegin != "" {
		c.pendingBegin, c.inTx = "", false
		return nil
	}
	if err := c.lostTx(); err != nil {
		c.inTx = false
		return err
	}
	c.inTx = false
	tag, err := c.simple(ctx, "COMMIT")
	c.endTx()
	if err != nil {
		return err
	}
	if tag == "ROLLBACK" {
		return c.tagged(pgerr.New(pgerr.InFailedSQLTransaction, "transaction was aborted; COMMIT rolled it back"))
	}
	return nil
}

// Rollback rolls the transaction back (a no-op without one).
func (c *Conn) Rollback(ctx context.Context) error {
	c.inTx = false
	if c.pendingBegin != "" {
		c.pendingBegin = ""
		return nil
	}
	_, err := c.simple(ctx, "ROLLBACK")
	c.endTx()
	return err
}

// Close ends the session; the server rolls back anything open.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.pc.Close(ctx) // the connection is gone either way
	return nil
}

// simple runs one parameterless statement and returns its command tag.
func (c *Conn) simple(ctx context.Context, stmt string) (string, error) {
	rr := c.pc.ExecParams(ctx, stmt, nil, nil, nil, nil)
	tag, err := rr.Close()
	if err != nil {
		return "", c.classify(ctx, err)
	}
	return tag.String(), nil
}

// Exec runs q with text parameters and text results. A DML statement with
// parameters runs prepared (see stmtcache.go): the server then neither
// parses nor, once it settles on a generic plan, plans it again each time.
// Anything else runs unnamed, parsed afresh, as a client's ExecParams
// would.
func (c *Conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	if err := c.lostTx(); err != nil {
		return nil, err
	}
	if c.pendingBegin != "" {
		answers, _, err := c.execPipeline(ctx, []driver.Query{q}, false)
		if err != nil {
			return nil, err
		}
		return answers[0], nil
	}
	values, oids := encodeArgs(q.Args)
	verb := q.Command()
	if len(q.Args) == 0 || !preparedVerbs[verb] {
		a, err := c.read(c.pc.ExecParams(ctx, q.SQL, values, oids, nil, nil), q.Sink)
		if changesSchema(verb) {
			c.schemaChanged()
		}
		if err != nil {
			return nil, c.classify(ctx, err)
		}
		return a, nil
	}
	a, err := c.execPrepared(ctx, q.SQL, values, oids, q.Sink)
	if isStalePlan(err) {
		// The schema changed under the prepared statement. Outside a
		// transaction nothing happened yet, so it is prepared again and
		// run once more; inside one the transaction has failed, as it
		// would have on PostgreSQL itself.
		if derr := c.dropCached(ctx, q.SQL); derr != nil {
			return nil, c.classify(ctx, derr)
		}
		if c.pc.TxStatus() == 'I' {
			a, err = c.execPrepared(ctx, q.SQL, values, oids, q.Sink)
		}
	}
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return a, nil
}

// execPrepared runs sql as a prepared statement, preparing it if needed.
func (c *Conn) execPrepared(ctx context.Context, sql string, values [][]byte, oids []uint32, sink func([]answer.Column, []answer.Value) error) (*answer.Answer, error) {
	sd, err := c.statement(ctx, sql, oids)
	if err != nil {
		return nil, err
	}
	return c.read(c.pc.ExecStatement(ctx, sd, values, nil, nil), sink)
}

// read takes a statement's rows, columns and command tag from rr; the
// rows go to sink, when there is one (driver.Query.Sink).
func (c *Conn) read(rr *pgconn.ResultReader, sink func([]answer.Column, []answer.Value) error) (*answer.Answer, error) {
	var rows [][]answer.Value
	var cols []answer.Column
	for rr.NextRow() {
		if cols == nil {
			cols = columnsOf(rr.FieldDescriptions())
		}
		row := decodeRow(cols, rr.Values())
		if sink == nil {
			rows = append(rows, row)
		} else if err := sink(cols, row); err != nil {
			rr.Close()
			return nil, err
		}
	}
	if cols == nil && rr.FieldDescriptions() != nil {
		cols = columnsOf(rr.FieldDescriptions())
	}
	tag, err := rr.Close()
	if err != nil {
		return nil, err
	}
	a := &answer.Answer{Columns: cols, Rows: rows, Tag: tag.String(), RowsAffected: tag.RowsAffected()}
	return a, nil
}

// schemaChanged records that a statement on this connection may have
// changed the schema: every connection of the engine drops its prepared
// statements before it runs another one. In a transaction the epoch moves
// again when the transaction ends (see endTx), so that a statement
// another connection prepares meanwhile, against the schema of before
// the commit, does not outlive it.
func (c *Conn) schemaChanged() {
	c.engine.schemaEpoch.Add(1)
	if c.pc.TxStatus() != 'I' {
		c.schemaInTx = true
	}
}

// endTx is called when a transaction ended, committed or not.
func (c *Conn) endTx() {
	c.inTx = false
	if c.schemaInTx {
		c.schemaInTx = false
		c.engine.schemaEpoch.Add(1)
	}
}

// encodeArgs turns Args into text-format parameters and their type OIDs:
// 0 for an untyped one, so the server infers it as it would for a client.
func encodeArgs(args []driver.Arg) ([][]byte, []uint32) {
	if len(args) == 0 {
		return nil, nil
	}
	values := make([][]byte, len(args))
	oids := make([]uint32, len(args))
	for i, a := range args {
		if a.Type != answer.Unknown {
			oids[i] = a.Type.DefaultOID()
		}
		switch {
		case a.Null:
			values[i] = nil
		case a.Type == answer.Bytes:
			values[i] = []byte(`\x` + hex.EncodeToString([]byte(a.Text)))
		default:
			values[i] = []byte(a.Text)
		}
	}
	return values, oids
}

func columnsOf(fds []pgconn.FieldDescription) []answer.Column {
	cols := make([]answer.Column, len(fds))
	for i, fd := range fds {
		cols[i] = answer.Column{
			Name: fd.Name,
			Type: answer.TypeOfOID(fd.DataTypeOID),
			OID:  fd.DataTypeOID,
			Size: fd.DataTypeSize,
			Mod:  fd.TypeModifier,
		}
	}
	return cols
}

// decodeRow copies one row out of pgconn's buffer. Values stay in
// PostgreSQL's text form except bytea, which becomes raw bytes.
func decodeRow(cols []answer.Column, raw [][]byte) []answer.Value {
	row := make([]answer.Value, len(raw))
	for i, b := range raw {
		switch {
		case b == nil:
			row[i] = answer.Null
		case cols[i].Type == answer.Bytes:
			row[i] = answer.Value{Text: decodeBytea(b)}
		default:
			row[i] = answer.Value{Text: string(b)}
		}
	}
	return row
}

// decodeBytea decodes bytea's hex output ("\x0102"). Anything else (the
// old escape format, which the session never selects) is kept as is.
func decodeBytea(b []byte) string {
	if len(b) < 2 || b[0] != '\\' || b[1] != 'x' {
		return string(b)
	}
	out := make([]byte, hex.DecodedLen(len(b)-2))
	if _, err := hex.Decode(out, b[2:]); err != nil {
		return string(b)
	}
	return string(out)
}

// classify maps an error from pgconn onto a SQLSTATE error.
func (c *Conn) classify(ctx context.Context, err error) *pgerr.Error {
	var pgErr *pgconn.PgError
	var out *pgerr.Error
	switch {
	case errors.As(err, &pgErr):
		out = fromPgError(pgErr)
	case c.pc.IsClosed():
		out = pgerr.Wrap(pgerr.ConnectionFailure, err, "connection to postgres lost")
	case ctx.Err() != nil:
		out = pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request")
	default:
		out = pgerr.Wrap(pgerr.InternalError, err, "")
	}
	out.Replica = c.replica
	return out
}

func (c *Conn) tagged(e *pgerr.Error) *pgerr.Error {
	e.Replica = c.replica
	return e
}

func fromPgError(p *pgconn.PgError) *pgerr.Error {
	e := pgerr.Wrap(p.Code, p, p.Message)
	e.Message = p.Message
	e.Detail = p.Detail
	e.Hint = p.Hint
	e.Schema, e.Table, e.Column = p.SchemaName, p.TableName, p.ColumnName
	e.DataType, e.Constraint = p.DataTypeName, p.ConstraintName
	if p.Severity == pgerr.SeverityFatal || p.Severity == "PANIC" {
		e.Severity = pgerr.SeverityFatal
	}
	return e
}

// Backend implements driver.Backend: the session's backend pid.
func (c *Conn) Backend() int64 { return int64(c.pc.PID()) }

// Blockers implements driver.LockWaits with pg_blocking_pids, on a
// session of its own.
func (e *Engine) Blockers(ctx context.Context, backend int64) ([]int64, error) {
	pc, err := pgconn.ConnectConfig(ctx, e.config)
	if err != nil {
		return nil, e.connectError(ctx, err)
	}
	defer pc.Close(context.Background())
	rr := pc.ExecParams(ctx, "SELECT unnest(pg_blocking_pids($1::int))", [][]byte{[]byte(strconv.FormatInt(backend, 10))}, nil, nil, nil)
	var out []int64
	for rr.NextRow() {
		n, err := strconv.ParseInt(string(rr.Values()[0]), 10, 64)
		if err != nil {
			rr.Close()
			return nil, err
		}
		out = append(out, n)
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	return out, nil
}
