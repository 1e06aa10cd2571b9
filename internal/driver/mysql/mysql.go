// Package mysql is the shepherd driver for MariaDB (10.11) and MySQL
// replicas, built on github.com/go-sql-driver/mysql.
//
// Every session is configured to behave as close to PostgreSQL as MySQL
// allows: SERIALIZABLE isolation (InnoDB then holds read locks to commit,
// which makes the engine strict two-phase locking and fit to be primary),
// UTC time zone, and an sql_mode with ANSI quoting, || as concatenation,
// no backslash escapes and strict errors instead of silent truncation.
// Recursive CTEs run as deep as their queries ask (MariaDB's default
// stops them after 1,000 iterations with a warning only).
//
// Answers are read as the raw text the server sent, typed by the column's
// database type name, so no value makes a round trip through a Go float.
// Affected-row counts use the CLIENT_FOUND_ROWS flag, so UPDATE counts the
// rows it matched, as PostgreSQL does, not only those it changed.
//
// TLS: the DSN's tls parameter as go-sql-driver reads it (true: the
// system's authorities; skip-verify; preferred), or TLSCAParam (tls-ca,
// shepherd's own) naming a PEM file of the authorities to verify the
// server's certificate and name against.
//
// Cancellation: go-sql-driver reacts to a done ctx by dropping the
// connection, which would leave the statement running on the server with
// its locks. So statements run under a ctx the library cannot see end;
// when the caller's ctx ends, the driver sends KILL QUERY for the
// session from another connection, and the session survives. Only if the
// server has not stopped the statement within cancelGrace is the
// connection dropped.
//
// Isolation override: Opener with Options.Isolation opens an engine whose
// sessions all run at another level, whatever BEGIN asks for. It exists
// for fault injection only: at READ UNCOMMITTED a MariaDB replica no
// longer blocks conflicting statements, so it can commit in an order the
// others cannot reproduce (the HRDB paper's Figure 5). Such an engine
// still reports class Locking: it is a faulty locking replica, not
// another kind of replica.
//
// Importing the package registers the driver as "mysql".
package mysql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Name is the driver's registered name.
const Name = "mysql"

// cancelGrace is how long a statement may run on after KILL QUERY before
// the connection is dropped. A variable for tests only.
var cancelGrace = 10 * time.Second

// sessionSQLMode is the sql_mode of every session.
const sessionSQLMode = "ANSI_QUOTES,PIPES_AS_CONCAT,NO_BACKSLASH_ESCAPES,STRICT_ALL_TABLES," +
	"NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

func init() { driver.Register(Name, driver.Locking, Open) }

// Engine is a MariaDB or MySQL replica.
type Engine struct {
	replica string
	db      *sql.DB
	// isolation is the SQL name of the sessions' level.
	isolation string
	// pinned says the level was overridden: BEGIN cannot change it.
	pinned bool
	// maxPacket is the server's max_allowed_packet as the latest
	// session read it (see Oversize).
	maxPacket atomic.Int64
	// waits is the latest read of InnoDB's lock waits on the engine's
	// server, shared with the other engines on it (see Blockers); the
	// engine holds one reference until Close.
	waits    *lockWaits
	released sync.Once // the reference let go (Close)
}

// Options change how an engine is opened. The zero Options is the
// registered driver's behaviour.
type Options struct {
	// Isolation, when set, pins every session and transaction to this
	// level instead of SERIALIZABLE: "serializable", "repeatable read",
	// "read committed" or "read uncommitted" (a hyphen may replace the
	// space). For fault injection; see the package comment.
	Isolation string
}

// Open parses spec.DSN (a go-sql-driver/mysql DSN) and connects once to
// check the server is reachable.
func Open(ctx context.Context, spec driver.Spec) (driver.Engine, error) {
	return open(ctx, spec, Options{})
}

// Opener returns an OpenFunc that opens engines with opts.
func Opener(opts Options) driver.OpenFunc {
	return func(ctx context.Context, spec driver.Spec) (driver.Engine, error) {
		return open(ctx, spec, opts)
	}
}

func open(ctx context.Context, spec driver.Spec, opts Options) (driver.Engine, error) {
	e := &Engine{replica: spec.Name, isolation: "SERIALIZABLE"}
	if opts.Isolation != "" {
		level, ok := isolationLevel(opts.Isolation)
		if !ok {
			return nil, openError(spec.Name, pgerr.New(pgerr.InvalidParameterValue, "unknown isolation level %q", opts.Isolation))
		}
		e.isolation, e.pinned = level, true
	}
	cfg, err := mysql.ParseDSN(spec.DSN)
	if err == nil {
		err = trustCAFile(cfg)
	}
	if err != nil {
		return nil, openError(spec.Name, pgerr.Wrap(pgerr.ConnectionException, err, "bad mysql DSN"))
	}
	cfg.ClientFoundRows = true
	cfg.ParseTime = false
	cfg.InterpolateParams = true
	cfg.MultiStatements = false
	cfg.DialFunc = recordingDial(cfg.DialFunc)
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, openError(spec.Name, pgerr.Wrap(pgerr.ConnectionException, err, "bad mysql DSN"))
	}
	db := sql.OpenDB(connector)
	// Sessions are pinned for their whole life and closed with it: a
	// connection is never handed to a second session with state left over.
	db.SetMaxIdleConns(0)
	e.db = db
	e.waits = lockWaitsOf(cfg.Net, cfg.Addr)
	c, err := e.Connect(ctx)
	if err != nil {
		releaseLockWaits(e.waits)
		db.Close()
		if pgerr.Code(err) == pgerr.FeatureNotSupported {
			return nil, err // reached, and refused (checkCollation)
		}
		return nil, openError(spec.Name, pgerr.From(err))
	}
	if err := c.Close(); err != nil {
		releaseLockWaits(e.waits)
		db.Close()
		return nil, err
	}
	return e, nil
}

func openError(replica string, cause *pgerr.Error) *pgerr.Error {
	e := pgerr.Wrap(cause.Code, cause, "replica "+replica+": cannot reach mysql")
	e.Replica = replica
	return e
}

// Driver returns "mysql".
func (e *Engine) Driver() string { return Name }

// Class returns driver.Locking, also for an engine whose isolation was
// overridden.
func (e *Engine) Class() driver.Class { return driver.Locking }

// Dialect returns driver.MySQL.
func (e *Engine) Dialect() driver.Dialect { return driver.MySQL }

// Close closes the connection pool and lets go of the server's lock
// waits.
func (e *Engine) Close() error {
	e.released.Do(func() { releaseLockWaits(e.waits) })
	return e.db.Close()
}

// Connect opens and configures a session.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	// With no idle connections kept, the pool dials a new one here, with
	// this ctx: the dial function records the network connection in dialed.
	dialed := &dialedConn{}
	sc, err := e.db.Conn(context.WithValue(ctx, dialedKey{}, dialed))
	if err != nil {
		return nil, e.tagged(classify(ctx, err))
	}
	c := &Conn{engine: e, conn: sc, nc: dialed.nc}
	setup := []string{
		"SET SESSION TRANSACTION ISOLATION LEVEL " + e.isolation,
		"SET SESSION time_zone = '+00:00', sql_mode = '" + sessionSQLMode + "', autocommit = 1",
		// Constants and parameters take the connection's collation, by
		// default utf8mb4_general_ci ('a' = 'A', 'a' = 'a '); text must
		// compare as the columns shepherd creates and as PostgreSQL's C
		// collation: byte-wise, without padding.
		collationSet,
		// Decimal division keeps 30 more digits (the most MariaDB
		// allows): the SQL writer lets a numeric division through only
		// where PostgreSQL's result is rounded to a stated scale.
		"SET SESSION div_precision_increment = 30",
		// GROUP_CONCAT (string_agg, array_agg) cuts its text at 1 MB
		// by default, with only a warning; 1 GB is the most MariaDB takes
		// (the packet limit bounds an answer before that).
		"SET SESSION group_concat_max_len = 1073741824",
	}
	for _, stmt := range setup {
		if err := c.run(ctx, stmt); err != nil {
			sc.Close()
			if stmt == collationSet && !pgerr.IsConnection(err) && ctx.Err() == nil {
				// A server without the collation (MySQL has none).
				return nil, e.tagged(pgerr.New(pgerr.FeatureNotSupported,
					"replica %s: the server refuses SET collation_connection = '%s' (%s); shepherd compares text byte-wise, without padding, as PostgreSQL's C collation does, and needs %s",
					e.replica, byteWise, pgerr.From(err).Message, byteWise))
			}
			return nil, err
		}
	}
	if err := c.unboundRecursion(ctx); err != nil {
		sc.Close()
		return nil, err
	}
	var maxPacket int64
	var collation string
	if err := sc.QueryRowContext(ctx, "SELECT CONNECTION_ID(), @@max_allowed_packet, @@collation_connection").Scan(&c.threadID, &maxPacket, &collation); err != nil {
		sc.Close()
		return nil, e.tagged(classify(ctx, err))
	}
	if err := e.checkCollation(collation); err != nil {
		sc.Close()
		return nil, err
	}
	e.maxPacket.Store(maxPacket)
	return c, nil
}

// TLSCAParam is the DSN parameter, shepherd's own, naming a PEM file of
// the certificate authorities the server's certificate must be signed by:
// the connection then uses TLS and checks the server's name against its
// certificate, as libpq's sslmode=verify-full with sslrootcert does.
// go-sql-driver itself trusts the system's authorities (tls=true) or
// none (tls=skip-verify).
const TLSCAParam = "tls-ca"

// trustCAFile applies TLSCAParam to cfg and takes it out of the
// parameters go-sql-driver would send the server as session variables.
func trustCAFile(cfg *mysql.Config) error {
	path, ok := cfg.Params[TLSCAParam]
	if !ok {
		return nil
	}
	delete(cfg.Params, TLSCAParam)
	if cfg.TLSConfig != "" && cfg.TLSConfig != "true" {
		return fmt.Errorf("%s verifies the server's certificate: it takes tls=true or no tls parameter, not tls=%s", TLSCAParam, cfg.TLSConfig)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", TLSCAParam, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%s: no PEM certificate in %s", TLSCAParam, path)
	}
	// NewConnector sets ServerName to the address's host.
	cfg.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	cfg.TLSConfig = ""
	return nil
}

// recursionLimits are the session variables that bound a recursive CTE's
// iterations: MariaDB's, then MySQL's; each server knows one of them.
// Both default to 1,000, and MariaDB then stops the query with only a
// warning, answering the rows so far: a deeper query would answer other
// rows than PostgreSQL, which has no such bound.
var recursionLimits = []string{"max_recursive_iterations", "cte_max_recursion_depth"}

// maxRecursion is the largest value both variables take.
const maxRecursion = "4294967295"

// unboundRecursion lifts the session's bound on recursive CTE iterations
// as far as the server allows (recursionLimits).
func (c *Conn) unboundRecursion(ctx context.Context) error {
	var last error
	for _, v := range recursionLimits {
		err := c.run(ctx, "SET SESSION "+v+" = "+maxRecursion)
		if err == nil {
			return nil
		}
		if pgerr.IsConnection(err) || ctx.Err() != nil {
			return err
		}
		last = err
	}
	return c.engine.tagged(pgerr.New(pgerr.FeatureNotSupported,
		"replica %s: the server knows neither %s (%s); shepherd needs one to run recursive queries as deep as PostgreSQL does",
		c.engine.replica, strings.Join(recursionLimits, " nor "), pgerr.From(last).Message))
}

// byteWise is the collation every session's text must compare in, and
// collationSet the setup statement that asks for it (Connect).
const (
	byteWise     = "utf8mb4_nopad_bin"
	collationSet = "SET SESSION collation_connection = '" + byteWise + "'"
)

// checkCollation refuses a session whose connection collation is not
// byteWise after the SET that asks for it (a server that ignored it, or
// a proxy in between that resets it): constants and parameters would
// compare as another collation does ('a' = 'A', 'a' = 'a '), where
// PostgreSQL's C collation and SQLite's BINARY compare byte-wise, and the
// replica would lose votes it should win, or win them against correct
// replicas.
func (e *Engine) checkCollation(got string) *pgerr.Error {
	if got == byteWise {
		return nil
	}
	return e.tagged(pgerr.New(pgerr.FeatureNotSupported,
		"replica %s: the session compares text in collation %q after SET collation_connection = '%s'; shepherd compares text byte-wise, without padding, as PostgreSQL's C collation does, and needs %s",
		e.replica, got, byteWise, byteWise))
}

func (e *Engine) tagged(err *pgerr.Error) *pgerr.Error {
	err.Replica = e.replica
	return err
}

// killQuery asks the server to stop the statement session threadID is
// running. It uses its own short-lived connection.
func (e *Engine) killQuery(threadID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	// A failure leaves the grace timer to drop the connection.
	_, _ = e.db.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", threadID))
}

// Oversize compares q with max_allowed_packet: a statement goes to the
// server as one packet (the command byte and the text, its parameters
// interpolated), and the server drops the connection that sends a larger
// one. Each parameter is counted as go-sql-driver writes it in place of
// its placeholder: under NO_BACKSLASH_ESCAPES (the session's sql_mode)
// only quotes are doubled, in quotes, after _binary for bytes; 9 bytes
// cover the quotes and the introducer.
func (e *Engine) Oversize(q driver.Query) *driver.Oversize {
	size := int64(1 + len(q.SQL))
	for _, a := range q.Args {
		size += int64(len(a.Text) + strings.Count(a.Text, "'") + len("_binary''"))
	}
	if max := e.maxPacket.Load(); size > max {
		return &driver.Oversize{Limit: "max_allowed_packet", Max: max, Size: size}
	}
	return nil
}

// isolationSQL maps TxOptions.Isolation onto SQL; anything else is refused
// rather than pasted into a statement.
var isolationSQL = map[string]string{
	"serializable":     "SERIALIZABLE",
	"repeatable read":  "REPEATABLE READ",
	"read committed":   "READ COMMITTED",
	"read uncommitted": "READ UNCOMMITTED",
}

// isolationLevel returns the SQL name of a level written "read committed"
// or "read-committed", in any case.
func isolationLevel(name string) (string, bool) {
	level, ok := isolationSQL[strings.ReplaceAll(strings.ToLower(name), "-", " ")]
	return level, ok
}

// Conn is one MariaDB/MySQL session, pinned to one connection.
type Conn struct {
	engine   *Engine
	conn     *sql.Conn
	threadID int64
	// nc is the session's network connection, which guard closes to
	// drop it; nil if it could not be recorded (see Connect).
	nc net.Conn
}

// dialedKey is the context key of a *dialedConn, which recordingDial
// fills in.
type dialedKey struct{}

type dialedConn struct{ nc net.Conn }

// recordingDial dials with dial, if set, else as go-sql-driver does by
// default (shepherd registers no dial functions with it), and records the
// connection in the *dialedConn of ctx, if there is one.
func recordingDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if d, ok := ctx.Value(dialedKey{}).(*dialedConn); ok && err == nil {
			d.nc = nc
		}
		return nc, err
	}
}

// Begin starts a transaction, at the session's level (SERIALIZABLE) unless
// opts name another one and the engine's level is not pinned.
func (c *Conn) Begin(ctx context.Context, opts driver.TxOptions) error {
	if opts.Isolation != "" && !c.engine.pinned {
		level, ok := isolationLevel(opts.Isolation)
		if !ok {
			return c.engine.tagged(pgerr.New(pgerr.InvalidParameterValue, "unknown isolation level %q", opts.Isolation))
		}
		// Applies to the next transaction only.
		if err := c.run(ctx, "SET TRANSACTION ISOLATION LEVEL "+level); err != nil {
			return err
		}
	}
	stmt := "START TRANSACTION"
	if opts.ReadOnly {
		stmt += " READ ONLY"
	}
	return c.run(ctx, stmt)
}

// Commit commits the transaction.
func (c *Conn) Commit(ctx context.Context) error { return c.run(ctx, "COMMIT") }

// Rollback rolls the transaction back (a no-op without one).
func (c *Conn) Rollback(ctx context.Context) error { return c.run(ctx, "ROLLBACK") }

// Close rolls back anything open and closes the connection.
func (c *Conn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.conn.ExecContext(ctx, "ROLLBACK") // closing rolls back anyway
	_ = c.conn.Close()
	return nil
}

// run executes one statement that returns nothing.
func (c *Conn) run(ctx context.Context, stmt string) error {
	return c.guard(ctx, true, func(ctx context.Context) error {
		_, err := c.conn.ExecContext(ctx, stmt)
		return err
	})
}

// What became of a statement whose ctx may have ended.
const (
	notKilled = iota
	killed    // KILL QUERY was sent
	dropped   // the server did not stop in time; the connection is gone
)

// guard runs f under a ctx the library cannot see end, and turns the end
// of the caller's ctx into KILL QUERY (see the package comment). The
// returned error is already classified.
//
// trustSuccess says whether f succeeding after KILL QUERY means it ran to
// the end: true for writes (an interrupted write fails and is rolled
// back), false for reads (an interrupted SLEEP() returns 1, no error).
func (c *Conn) guard(ctx context.Context, trustSuccess bool, f func(ctx context.Context) error) error {
	if ctx.Err() != nil {
		return c.engine.tagged(pgerr.Wrap(pgerr.QueryCanceled, ctx.Err(), "canceling statement due to user request"))
	}
	if ctx.Done() == nil { // ctx can never end: nothing to watch
		if err := f(ctx); err != nil {
			return c.engine.tagged(classify(ctx, err))
		}
		return nil
	}
	// A ctx that can never end costs nothing per statement in database/sql
	// and go-sql-driver; one that can costs each a goroutine hand-off. So
	// f gets one that cannot, and the connection, if it must be dropped,
	// is closed under it.
	inner, drop := context.WithoutCancel(ctx), func() { c.nc.Close() }
	if c.nc == nil {
		var cancel context.CancelFunc
		inner, cancel = context.WithCancel(inner)
		defer cancel()
		drop = cancel // go-sql-driver closes the connection
	}
	// The watch starts only if ctx ends: a statement that finishes first
	// costs no goroutine.
	finished := make(chan struct{})
	fate := make(chan int, 1)
	stop := context.AfterFunc(ctx, func() { fate <- c.watch(finished, drop) })
	err := f(inner)
	close(finished)
	outcome := notKilled
	if !stop() {
		outcome = <-fate // the watch started: wait for what it did
	}
	switch outcome {
	case dropped:
		return c.engine.tagged(pgerr.Wrap(pgerr.ConnectionFailure, err, "statement did not stop after KILL QUERY; connection dropped"))
	case killed:
		if err == nil && !trustSuccess {
			err = pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
		}
	}
	if err == nil {
		return nil
	}
	return c.engine.tagged(classify(ctx, err))
}

// watch runs once the caller's ctx ended during a statement. Unless the
// statement has finished, it kills it, and drops the connection if the
// statement has not finished cancelGrace later. It returns what it did.
func (c *Conn) watch(finished <-chan struct{}, drop func()) int {
	select {
	case <-finished: // both happened; the statement is over
		return notKilled
	default:
	}
	c.engine.killQuery(c.threadID)
	grace := time.NewTimer(cancelGrace)
	defer grace.Stop()
	select {
	case <-finished:
		return killed
	case <-grace.C:
		drop()
		return dropped
	}
}

// Backend implements driver.Backend: the session's connection id.
func (c *Conn) Backend() int64 { return c.threadID }
