package pgwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// writeBufferBytes is the size of the buffer in front of the socket: output
// reaches the client when it fills, and at every ReadyForQuery, Flush and
// extended-protocol error.
const writeBufferBytes = 32 << 10

// errTerminate ends the message loop after a Terminate message.
var errTerminate = errors.New("pgwire: client terminated")

// errClientGone marks the end of a connection the client closed or broke;
// nothing more can be said to it.
var errClientGone = errors.New("pgwire: client gone")

// conn is the state of one client connection. Only its own goroutine
// touches it.
type conn struct {
	srv *Server
	nc  net.Conn
	log *slog.Logger

	rd *framingReader
	bw *bufio.Writer
	be *pgproto3.Backend
	// writeErr is the first error writing to the client; once set, the
	// connection is finished.
	writeErr error
	// readErr is an error reading from the client inside a statement (a
	// COPY FROM's data) that ends the connection.
	readErr error

	sess Session
	// types converts values between text and binary; created on first use
	// because most connections never ask for binary.
	types *pgtype.Map

	statements map[string]*prepared
	portals    map[string]*portal
	// skipToSync is set by an error in an extended-protocol message: every
	// message up to the next Sync is then ignored.
	skipToSync bool
	// async guards output sent while the connection is idle
	// (notifications, notify.go).
	async idleSender
	// idleNext is set by a ReadyForQuery with status 'I': the wait for
	// the next message is idle.
	idleNext bool

	// info is the startup's (user, database), and current the text of
	// the statement the client's latest query, Parse or Execute carried:
	// what Server.OnError is told an error is about.
	info    StartupInfo
	current string
	// idleTxDeadline is set while a read deadline bounds the wait for the
	// next message in a transaction (IdleInTransactionTimeouter).
	idleTxDeadline bool
	// tls is set once the connection speaks through TLS (nc is then the
	// *tls.Conn).
	tls bool
	// releaseSlot gives back the connection's slot of MaxConnections;
	// nil until it holds one.
	releaseSlot func()

	// row and ready are messages the connection reuses, which saves
	// allocations per row and per statement: only the connection's
	// goroutine sends, and sending copies a message into the output.
	row   pgproto3.DataRow
	ready pgproto3.ReadyForQuery
	// complete and tag are CommandComplete's (sendComplete), and spare
	// an unnamed portal dropped, for the next Bind to reuse.
	complete pgproto3.CommandComplete
	tag      []byte
	spare    *portal
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:        s,
		log:        s.logger().With("remote", nc.RemoteAddr().String()),
		statements: make(map[string]*prepared),
		portals:    make(map[string]*portal),
	}
	c.useTransport(nc)
	return c
}

// useTransport makes nc the connection's transport: the raw socket, or
// the TLS connection over it once negotiated (nothing is buffered then).
func (c *conn) useTransport(nc net.Conn) {
	c.nc = nc
	c.rd = &framingReader{r: nc}
	var w io.Writer = nc
	if d := c.srv.writeTimeout(); d > 0 {
		w = timedWriter{nc, d}
	}
	c.bw = bufio.NewWriterSize(w, writeBufferBytes)
	c.be = pgproto3.NewBackend(c.rd, c.bw)
	c.be.SetMaxBodyLen(c.srv.maxMessageBytes())
}

// timedWriter gives each write to the client at most d: the buffered
// writer hands it at most writeBufferBytes at a time (or one larger
// message), so a client that reads at all never sees the bound.
type timedWriter struct {
	nc net.Conn
	d  time.Duration
}

func (w timedWriter) Write(p []byte) (int, error) {
	if err := w.nc.SetWriteDeadline(time.Now().Add(w.d)); err != nil {
		return 0, err
	}
	return w.nc.Write(p)
}

// run takes the connection through startup, authentication and the message
// loop. The Session, once opened, is closed exactly once on the way out.
func (c *conn) run(ctx context.Context) error {
	defer func() {
		if c.releaseSlot != nil {
			c.releaseSlot()
		}
	}()
	info, err := c.startup(ctx)
	if err != nil {
		return c.fail(err)
	}
	c.info = info
	sess, err := c.srv.Handler.NewSession(ctx, info)
	if err != nil {
		return c.fail(pgerr.From(err).Fatal())
	}
	c.sess = sess
	defer c.closeSession(ctx)

	pid, secret, unregister, err := c.srv.register(sess)
	if err != nil {
		return c.fail(pgerr.Wrap(pgerr.InternalError, err, "allocating a backend key").Fatal())
	}
	defer unregister()
	if at, ok := sess.(Attacher); ok {
		at.Attach(sessionConn{c: c, pid: pid})
	}

	c.sendParameterStatuses(info)
	c.send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: uint32Bytes(secret)})
	c.send(&pgproto3.ReadyForQuery{TxStatus: sess.TxStatus()})
	if err := c.flush(); err != nil {
		return err
	}
	c.log.Debug("pgwire: session started", "user", info.User, "database", info.Database)
	if n, ok := sess.(Notifier); ok {
		done := make(chan struct{})
		defer close(done)
		c.idleNext = sess.TxStatus() == 'I'
		go c.watchNotifications(n, done)
	}
	return c.loop(ctx)
}

// recoverPanic keeps a panic in this connection (in the front or in its
// Session) from taking the process and every other connection down: it is
// logged with its stack and the client told FATAL XX000. The deferred
// cleanup of run (Session.Close included) has already happened.
func (c *conn) recoverPanic() {
	p := recover()
	if p == nil {
		return
	}
	c.log.Error("pgwire: panic serving connection", "panic", p, "stack", string(debug.Stack()))
	defer func() { _ = recover() }() // the output path itself may be what broke
	c.sendError(pgerr.New(pgerr.InternalError, "internal error").Fatal())
	_ = c.flush()
}

// closeSession releases every statement still prepared, then the Session.
// It runs even when ctx is cancelled (server shutdown), with a bound.
func (c *conn) closeSession(ctx context.Context) {
	for name, p := range c.statements {
		delete(c.statements, name)
		if p.st != nil {
			c.sess.CloseStatement(p.st)
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionCloseTimeout)
	defer cancel()
	c.sess.Close(cctx)
}

// fail sends err as an ErrorResponse if the client can still hear it, and
// returns it for the caller to end the connection with.
func (c *conn) fail(err error) error {
	if isQuietEnd(err) || errors.Is(err, errTLSHandshake) {
		return err
	}
	c.sendError(err)
	_ = c.flush()
	return err
}

// isQuietEnd reports whether err ends the connection without anything to
// tell the client.
func isQuietEnd(err error) bool {
	return errors.Is(err, errTerminate) || errors.Is(err, errClientGone) || errors.Is(err, errCancelRequest)
}

// send queues msg for the client. A failure to write is remembered and
// reported by flush.
func (c *conn) send(msg pgproto3.BackendMessage) {
	if c.writeErr != nil {
		return
	}
	c.be.Send(msg)
	if err := c.be.Flush(); err != nil {
		c.writeErr = err
	}
}

// flush pushes queued output to the client.
func (c *conn) flush() error {
	if c.writeErr == nil {
		if err := c.bw.Flush(); err != nil {
			c.writeErr = err
		}
	}
	if c.writeErr != nil {
		return errors.Join(errClientGone, c.writeErr)
	}
	return nil
}

// sendError queues err as an ErrorResponse.
func (c *conn) sendError(err error) {
	pe := pgerr.From(err)
	sev := pe.Severity
	if sev == "" {
		sev = pgerr.SeverityError
	}
	if c.srv.OnError != nil {
		c.srv.OnError(ErrorEvent{User: c.info.User, Database: c.info.Database, Remote: c.nc.RemoteAddr(), SQL: c.current, Err: pe})
	}
	c.send(&pgproto3.ErrorResponse{
		Severity:            sev,
		SeverityUnlocalized: sev,
		Code:                pe.Code,
		Message:             pe.Message,
		Detail:              pe.Detail,
		Hint:                pe.Hint,
		Where:               pe.Where,
		SchemaName:          pe.Schema,
		TableName:           pe.Table,
		ColumnName:          pe.Column,
		DataTypeName:        pe.DataType,
		ConstraintName:      pe.Constraint,
	})
}

// receiveError turns an error from Backend.Receive into the error that ends
// the connection: the client leaving is quiet; anything else is a protocol
// violation the client is told about.
func (c *conn) receiveError(err error) error {
	if c.rd.err != nil {
		if errors.Is(c.rd.err, io.EOF) && c.rd.midMessage() {
			// The stream ended inside a message.
			return pgerr.New(pgerr.ProtocolViolation, "incomplete message from client").Fatal()
		}
		return errors.Join(errClientGone, c.rd.err)
	}
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooLong) {
		return pgerr.New(pgerr.ProtocolViolation, "message of %d bytes exceeds the limit of %d bytes",
			tooLong.ActualBodyLen, tooLong.MaxExpectedBodyLen).Fatal()
	}
	return pgerr.New(pgerr.ProtocolViolation, "invalid message: %v", err).Fatal()
}

// framingReader passes the client's bytes to the Backend and follows the
// message framing ([type][int32 length][body]) as they go by. It remembers
// the first read error, so that an I/O failure can be told apart from a
// malformed message, and a clean hang-up between messages from one in the
// middle of a message. Only messages after the startup packet pass through
// it.
type framingReader struct {
	r   io.Reader
	err error

	header    [5]byte
	headerLen int   // bytes of the current header seen so far
	bodyLeft  int64 // bytes of the current body not seen yet
	// bodyNUL says whether the current (or last) body held a NUL byte,
	// which tells PostgreSQL's two answers to a malformed Query apart.
	bodyNUL bool
}

func (r *framingReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	r.follow(p[:n])
	if err != nil {
		r.err = err
	}
	return n, err
}

// follow advances the framing state over b.
func (r *framingReader) follow(b []byte) {
	for len(b) > 0 {
		if r.bodyLeft > 0 {
			k := min(r.bodyLeft, int64(len(b)))
			r.bodyNUL = r.bodyNUL || bytes.IndexByte(b[:k], 0) >= 0
			r.bodyLeft -= k
			b = b[k:]
			continue
		}
		r.header[r.headerLen] = b[0]
		r.headerLen++
		b = b[1:]
		if r.headerLen == len(r.header) {
			r.headerLen = 0
			r.bodyNUL = false
			// A length below 4 is rejected by the Backend before the
			// framing matters again.
			r.bodyLeft = max(int64(int32(binary.BigEndian.Uint32(r.header[1:])))-4, 0)
		}
	}
}

// malformedQuery reports whether the message just received whole was a
// Query whose body pgproto3 would not decode, and PostgreSQL's error for
// it: the framing is intact, so PostgreSQL answers ERROR (not FATAL) and
// the session goes on. A body without a NUL has no string at all
// (pq_getmsgstring); one with a NUL before its end has bytes after the
// string (pq_getmsgend).
//
// err is Backend.Receive's error: past the framing, an oversized
// message is the only other error a Query read whole can have.
func (r *framingReader) malformedQuery(err error) (string, bool) {
	if err == nil {
		// Before tooLong, which escapes: no allocation per message.
		return "", false
	}
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooLong) || r.err != nil || r.midMessage() || r.header[0] != 'Q' || int32(binary.BigEndian.Uint32(r.header[1:])) < 4 {
		return "", false
	}
	if !r.bodyNUL {
		return "invalid string in message", true
	}
	return "invalid message format", true
}

// midMessage reports whether the bytes so far end inside a message.
func (r *framingReader) midMessage() bool {
	return r.headerLen > 0 || r.bodyLeft > 0
}

func uint32Bytes(v uint32) []byte {
	return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// sendRow sends one row read back from disk; its error says the client
// is gone, so that the rest of a long answer is not read for nothing.
func (c *conn) sendRow(msg pgproto3.BackendMessage) error {
	c.send(msg)
	if c.writeErr != nil {
		return errors.Join(errClientGone, c.writeErr)
	}
	return nil
}
