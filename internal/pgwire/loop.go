package pgwire

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// loop reads and runs client messages until the client leaves or a FATAL
// error. Reading and running share this one goroutine: a CancelRequest
// arrives on a connection of its own.
func (c *conn) loop(ctx context.Context) error {
	ctx = withCopier(ctx, c)
	for {
		if c.idleNext {
			c.setIdle(true)
		}
		msg, err := c.be.Receive()
		if c.idleNext {
			c.setIdle(false) // waits for a notification being sent
			c.idleNext = false
		}
		if c.idleTxDeadline {
			c.idleTxDeadline = false
			var ne net.Error
			if err != nil && errors.As(err, &ne) && ne.Timeout() {
				return c.fail(pgerr.New(pgerr.IdleInTransactionTimeout,
					"terminating connection due to idle-in-transaction timeout").Fatal())
			}
			if derr := c.nc.SetReadDeadline(time.Time{}); derr != nil && err == nil {
				return errors.Join(errClientGone, derr)
			}
		}
		if msg, ok := c.rd.malformedQuery(err); ok {
			// A NUL inside the query string, or none at its end: an
			// error the session survives, as in PostgreSQL (which
			// ignores it, like any message, while skipping to Sync).
			if c.skipToSync {
				continue
			}
			c.sendError(pgerr.New(pgerr.ProtocolViolation, "%s", msg))
			if err := c.readyForQuery(); err != nil {
				return c.fail(err)
			}
			continue
		}
		if err != nil {
			return c.fail(c.receiveError(err))
		}
		if err := c.dispatch(ctx, msg); err != nil {
			return c.fail(err)
		}
	}
}

// dispatch runs one message. It returns an error only to end the
// connection; errors the client may recover from are reported here.
func (c *conn) dispatch(ctx context.Context, msg pgproto3.FrontendMessage) error {
	if c.skipToSync {
		switch msg.(type) {
		case *pgproto3.Sync, *pgproto3.Terminate:
		default:
			return nil
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.simpleQuery(ctx, m.String)
	case *pgproto3.Parse:
		return c.reportExtended(c.parse(ctx, m))
	case *pgproto3.Bind:
		return c.reportExtended(c.bind(ctx, m))
	case *pgproto3.Describe:
		return c.reportExtended(c.describe(ctx, m))
	case *pgproto3.Execute:
		return c.reportExtended(c.execute(ctx, m))
	case *pgproto3.Close:
		return c.reportExtended(c.close(m))
	case *pgproto3.Sync:
		return c.sync()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Terminate:
		return errTerminate
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// PostgreSQL ignores COPY traffic outside a COPY, which lets a
		// client that raced an error out of COPY mode recover (a COPY's
		// own data is read by Copier.CopyIn while it runs).
		return nil
	case *pgproto3.FunctionCall:
		c.sendError(pgerr.New(pgerr.FeatureNotSupported, "the fast-path function call interface is not supported"))
		c.send(&pgproto3.ReadyForQuery{TxStatus: c.sess.TxStatus()})
		return c.flush()
	}
	return pgerr.New(pgerr.ProtocolViolation, "unexpected message type %T", msg).Fatal()
}

// reportExtended reports the error of an extended-protocol message, after which
// every message is ignored until Sync. A FATAL error, or the client being
// gone, ends the connection instead.
//
// The error goes out at once, with whatever output is queued before it, as
// PostgreSQL sends it: a client that prepares with Parse, Describe and
// Flush (asyncpg) waits for the answer before it sends Sync, and the Flush
// it sent is skipped with everything else after the error.
func (c *conn) reportExtended(err error) error {
	if c.readErr != nil {
		return c.readErr
	}
	if err != nil && c.writeErr == nil {
		pe := pgerr.From(err)
		if pe.Severity == pgerr.SeverityFatal {
			return pe
		}
		c.sendError(pe)
		c.skipToSync = true
		return c.flush()
	}
	return c.checkWrite()
}

// checkWrite returns errClientGone once a write has failed.
func (c *conn) checkWrite() error {
	if c.writeErr != nil {
		return errors.Join(errClientGone, c.writeErr)
	}
	return nil
}

// simpleQuery runs a Query message: every statement's answer in turn, then
// ReadyForQuery.
func (c *conn) simpleQuery(ctx context.Context, sql string) error {
	c.dropPortal("")
	c.closeStatement("")
	c.current = sql
	err := c.sess.Query(ctx, sql, c.sendAnswer)
	if c.readErr != nil {
		return c.readErr
	}
	if c.writeErr != nil {
		return c.checkWrite()
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrEmptyQuery):
		c.send(&pgproto3.EmptyQueryResponse{})
	default:
		pe := pgerr.From(err)
		if pe.Severity == pgerr.SeverityFatal {
			return pe
		}
		c.sendError(pe)
	}
	return c.readyForQuery()
}

// sendAnswer sends one statement's answer of a simple query, in text
// (in binary when the answer asks so: a FETCH from a BINARY cursor).
func (c *conn) sendAnswer(a *answer.Answer) error {
	if a == nil {
		return pgerr.New(pgerr.InternalError, "statement produced no answer")
	}
	defer a.More.Close()
	if a.Columns == nil && len(a.Rows) > 0 {
		return pgerr.New(pgerr.InternalError, "answer has rows but no columns")
	}
	if a.Columns != nil {
		var formats []int16
		if a.Binary {
			formats = make([]int16, len(a.Columns))
			for i := range formats {
				formats[i] = formatBinary
			}
		}
		c.send(rowDescription(a.Columns, formats))
		oids := columnOIDs(a.Columns)
		for _, row := range a.Rows {
			dr, err := c.dataRow(oids, formats, row)
			if err != nil {
				return err
			}
			c.send(dr)
		}
		for a.More.Len() > 0 {
			// Spilled rows, read back one at a time.
			row, err := a.More.Next()
			if err != nil {
				return pgerr.Wrap(pgerr.IOError, err, "")
			}
			dr, err := c.dataRow(oids, formats, row)
			if err != nil {
				return err
			}
			if err := c.sendRow(dr); err != nil {
				return err
			}
		}
	}
	c.sendComplete(a.Tag)
	return c.checkWrite()
}

// sendComplete sends CommandComplete with tag, in a message and buffer the
// connection reuses (no allocation per statement).
func (c *conn) sendComplete(tag string) {
	c.tag = append(c.tag[:0], tag...)
	c.complete.CommandTag = c.tag
	c.send(&c.complete)
}

// sync ends an extended-protocol batch: error recovery stops, the unnamed
// portal goes away (and every portal, once no transaction is open), and the
// client hears ReadyForQuery.
func (c *conn) sync() error {
	c.skipToSync = false
	c.dropPortal("")
	return c.readyForQuery()
}

func (c *conn) readyForQuery() error {
	status := c.sess.TxStatus()
	if status == 'I' {
		// Portals live no longer than their transaction.
		c.dropAllPortals()
	}
	if r, ok := c.sess.(Reporter); ok {
		for _, p := range r.ChangedParameters() {
			c.send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
		}
	}
	if n, ok := c.sess.(Notifier); ok && status == 'I' {
		// Notifications wait while a transaction is open, as in
		// PostgreSQL; the next wait for a command is idle.
		c.sendNotifications(n)
		c.idleNext = true
	}
	if t, ok := c.sess.(IdleInTransactionTimeouter); ok && status != 'I' {
		if d := t.IdleInTransactionTimeout(); d > 0 {
			// The wait for the next message, in a transaction, is
			// bounded (loop ends the connection when it runs out).
			if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
				return errors.Join(errClientGone, err)
			}
			c.idleTxDeadline = true
		}
	}
	c.ready.TxStatus = status
	c.send(&c.ready)
	return c.flush()
}

// IdleInTransactionTimeouter is a Session whose transactions may stay
// idle only so long (PostgreSQL's idle_in_transaction_session_timeout):
// when the client sends nothing for that long after a ReadyForQuery in a
// transaction (status T or E), the connection ends with FATAL 25P03 and
// the session's Close rolls the transaction back. 0 means no bound.
type IdleInTransactionTimeouter interface {
	IdleInTransactionTimeout() time.Duration
}
