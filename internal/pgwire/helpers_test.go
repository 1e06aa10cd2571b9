package pgwire

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testDeadline bounds every client read and write in the tests, so that a
// bug shows up as a failure instead of a hang.
const testDeadline = 10 * time.Second

// testServer is a Server with a fakeHandler listening on loopback.
type testServer struct {
	srv  *Server
	h    *fakeHandler
	addr string
}

// startServer starts a server; configure may adjust it before it serves.
// The server is shut down, and every connection goroutine awaited, when the
// test ends.
func startServer(t *testing.T, configure func(*Server)) *testServer {
	t.Helper()
	h := newFakeHandler()
	srv := &Server{Handler: h, Logger: slog.New(slog.DiscardHandler)}
	if configure != nil {
		configure(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testServer{srv: srv, h: h, addr: ln.Addr().String()}
}

// testClient drives the protocol by hand with pgproto3.Frontend.
type testClient struct {
	t   *testing.T
	nc  net.Conn
	fe  *pgproto3.Frontend
	pid uint32
	key []byte
	// status holds the ParameterStatus values of the startup.
	status map[string]string
}

func (ts *testServer) dial(t *testing.T) *testClient {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if err := nc.SetDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatal(err)
	}
	return &testClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc), status: map[string]string{}}
}

// connect dials and completes a trusted startup.
func (ts *testServer) connect(t *testing.T) *testClient {
	t.Helper()
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "alice", "database": "db", "application_name": "tests"})
	got := c.untilReady()
	if last := got[len(got)-1]; last != "ReadyForQuery I" {
		t.Fatalf("startup ended with %q", last)
	}
	return c
}

func (c *testClient) sendStartup(params map[string]string) {
	c.t.Helper()
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
}

func (c *testClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// writeRaw writes bytes as they are.
func (c *testClient) writeRaw(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// recv returns the next message, copied out of the Frontend's buffers.
func (c *testClient) recv() pgproto3.BackendMessage {
	c.t.Helper()
	m, err := c.fe.Receive()
	if err != nil {
		c.t.Fatalf("receive: %v", err)
	}
	return copyMessage(c.t, m)
}

// untilReady returns the rendered messages up to and including
// ReadyForQuery; it also records BackendKeyData and ParameterStatus.
func (c *testClient) untilReady() []string {
	c.t.Helper()
	var out []string
	for {
		m := c.recv()
		switch m := m.(type) {
		case *pgproto3.BackendKeyData:
			c.pid, c.key = m.ProcessID, m.SecretKey
		case *pgproto3.ParameterStatus:
			c.status[m.Name] = m.Value
			continue
		}
		out = append(out, render(m))
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return out
		}
	}
}

// untilClosed returns the rendered messages up to the server closing the
// connection.
func (c *testClient) untilClosed() []string {
	c.t.Helper()
	var out []string
	for {
		m, err := c.fe.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
				return out
			}
			c.t.Fatalf("receive: %v (after %q)", err, out)
		}
		if _, ok := m.(*pgproto3.ParameterStatus); ok {
			continue
		}
		out = append(out, render(copyMessage(c.t, m)))
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "reset")
}

// exchange sends msgs and returns what comes back up to ReadyForQuery.
func (c *testClient) exchange(msgs ...pgproto3.FrontendMessage) []string {
	c.t.Helper()
	c.send(msgs...)
	return c.untilReady()
}

// copyMessage re-encodes m into a fresh message of its type, since the
// Frontend reuses its messages.
func copyMessage(t *testing.T, m pgproto3.BackendMessage) pgproto3.BackendMessage {
	t.Helper()
	buf, err := m.Encode(nil)
	if err != nil {
		t.Fatalf("encode %T: %v", m, err)
	}
	fresh := reflect.New(reflect.TypeOf(m).Elem()).Interface().(pgproto3.BackendMessage)
	if err := fresh.Decode(buf[5:]); err != nil {
		t.Fatalf("decode %T: %v", m, err)
	}
	return fresh
}

// render writes a message as one short line for scripted comparisons.
func render(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.ErrorResponse:
		s := fmt.Sprintf("ErrorResponse %s %s %s", m.Severity, m.Code, m.Message)
		if m.Detail != "" {
			s += " / " + m.Detail
		}
		if m.Hint != "" {
			s += " / " + m.Hint
		}
		if m.Where != "" {
			s += " @ " + m.Where
		}
		return s
	case *pgproto3.RowDescription:
		var fields []string
		for _, f := range m.Fields {
			fields = append(fields, fmt.Sprintf("%s:%d/%d", f.Name, f.DataTypeOID, f.Format))
		}
		return "RowDescription " + strings.Join(fields, " ")
	case *pgproto3.DataRow:
		var vals []string
		for _, v := range m.Values {
			vals = append(vals, renderValue(v))
		}
		return "DataRow " + strings.Join(vals, "|")
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs)
	case *pgproto3.BackendKeyData:
		return "BackendKeyData"
	case *pgproto3.CopyInResponse:
		return fmt.Sprintf("CopyInResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyOutResponse:
		return fmt.Sprintf("CopyOutResponse %d %v", m.OverallFormat, m.ColumnFormatCodes)
	case *pgproto3.CopyData:
		return fmt.Sprintf("CopyData %q", m.Data)
	case *pgproto3.NegotiateProtocolVersion:
		return fmt.Sprintf("NegotiateProtocolVersion %d %v", m.NewestMinorProtocol, m.UnrecognizedOptions)
	}
	return strings.TrimPrefix(reflect.TypeOf(m).String(), "*pgproto3.")
}

func renderValue(v []byte) string {
	if v == nil {
		return "NULL"
	}
	if utf8.Valid(v) && !strings.ContainsFunc(string(v), func(r rune) bool { return r < ' ' }) {
		return string(v)
	}
	return "0x" + hex.EncodeToString(v)
}

// checkScript compares rendered messages with the expected ones.
func checkScript(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// startupPacket builds a raw startup packet: length, code, body.
func startupPacket(code uint32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	b = binary.BigEndian.AppendUint32(b, code)
	return append(b, body...)
}

// waitClosed waits until the fake session was closed.
func waitClosed(t *testing.T, s *fakeSession) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(testDeadline):
		t.Fatal("session was never closed")
	}
}

// onlySession returns the one session the handler opened.
func onlySession(t *testing.T, h *fakeHandler) *fakeSession {
	t.Helper()
	ss := h.allSessions()
	if len(ss) != 1 {
		t.Fatalf("%d sessions, want 1", len(ss))
	}
	return ss[0]
}
