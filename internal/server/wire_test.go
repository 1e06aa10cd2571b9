package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// wireAnswerWait bounds how long a scripted exchange waits for an answer
// the server owes; waiting longer means the server is holding it back.
const wireAnswerWait = 5 * time.Second

// wireClient drives the protocol message by message over a connection
// pgconn opened and handed over.
type wireClient struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialWire(t *testing.T, dsn string) *wireClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pc, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := pc.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hc.Conn.Close() })
	return &wireClient{t: t, nc: hc.Conn, fe: hc.Frontend}
}

func (c *wireClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// until returns the messages received up to and including the first whose
// rendering starts with last; a server that stays silent for
// wireAnswerWait ends the list with "(nothing more)".
func (c *wireClient) until(last string) []string {
	c.t.Helper()
	var out []string
	for {
		if err := c.nc.SetReadDeadline(time.Now().Add(wireAnswerWait)); err != nil {
			c.t.Fatal(err)
		}
		m, err := c.fe.Receive()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return append(out, "(nothing more)")
		}
		if err != nil {
			c.t.Fatalf("receive: %v (after %q)", err, out)
		}
		s := renderWire(m)
		out = append(out, s)
		if strings.HasPrefix(s, last) {
			return out
		}
	}
}

func renderWire(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ErrorResponse:
		return fmt.Sprintf("ErrorResponse %s %s", m.Code, m.Message)
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.CopyInResponse:
		return fmt.Sprintf("CopyInResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("CopyOutResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return fmt.Sprintf("CopyData %q", m.Data)
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}

// wireScript is an exchange where the client waits for the error of a
// refused statement before it sends Sync, as asyncpg does when it
// prepares (Parse, Describe, Flush).
func wireScript(t *testing.T, dsn string) []string {
	c := dialWire(t, dsn)
	var got []string
	c.send(&pgproto3.Parse{Query: "selec * from t"}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{})
	got = append(got, c.until("ErrorResponse")...)
	// Messages after the error are skipped, a Flush included, until Sync.
	c.send(&pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{}, &pgproto3.Sync{})
	got = append(got, c.until("ReadyForQuery")...)
	// An error is sent at once, with what came before it, even without a
	// Flush.
	c.send(&pgproto3.Parse{Name: "ok", Query: "select 1"}, &pgproto3.Parse{Query: "selec 1"})
	got = append(got, c.until("ErrorResponse")...)
	c.send(&pgproto3.Sync{})
	got = append(got, c.until("ReadyForQuery")...)
	// The session goes on, and the statement parsed before the error stays.
	c.send(&pgproto3.Bind{PreparedStatement: "ok"}, &pgproto3.Execute{}, &pgproto3.Flush{})
	got = append(got, c.until("CommandComplete")...)
	c.send(&pgproto3.Sync{})
	return append(got, c.until("ReadyForQuery")...)
}

// TestParseErrorBeforeSync: a statement refused at Parse is answered
// without waiting for Sync, as PostgreSQL answers it; the same script runs
// against PostgreSQL 15 and against shepherd, and both must send the same
// messages.
func TestParseErrorBeforeSync(t *testing.T) {
	want := wireScript(t, testenv.Postgres(t))
	addr, _ := start(t, embedded(t))
	got := wireScript(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shepherd:\n  %s\nPostgreSQL 15:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// An unknown table is found when the statement is described (shepherd
	// asks the replicas), not at Parse as in PostgreSQL; its error, too,
	// must come before Sync.
	c := dialWire(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	c.send(&pgproto3.Parse{Query: "select * from nope"}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{})
	got = c.until("ErrorResponse")
	if last := got[len(got)-1]; !strings.HasPrefix(last, "ErrorResponse 42P01 ") {
		t.Fatalf("unknown table before Sync: %q, want an ErrorResponse 42P01", got)
	}
	c.send(&pgproto3.Sync{})
	if got := c.until("ReadyForQuery"); len(got) != 1 || got[0] != "ReadyForQuery I" {
		t.Fatalf("after Sync: %q, want ReadyForQuery I", got)
	}
}
