package pgwire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestMaxConnections: past MaxConnections, a client is told FATAL 53300
// "sorry, too many clients already" (PostgreSQL's answer past
// max_connections) and no session is opened for it; the sessions already
// in go on, a CancelRequest still reaches them, and once one leaves a new
// client gets in.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.MaxConnections = 2 })
	a, b := ts.connect(t), ts.connect(t)
	for range 3 {
		c := ts.dial(t)
		c.sendStartup(map[string]string{"user": "alice", "database": "db"})
		checkScript(t, c.untilClosed(), "ErrorResponse FATAL 53300 sorry, too many clients already")
	}
	if n := len(ts.h.allSessions()); n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
	checkScript(t, b.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")

	// A CancelRequest takes no slot.
	a.send(&pgproto3.Query{String: "sleep"})
	<-ts.h.sleeping
	cancel := ts.dial(t)
	cancel.send(&pgproto3.CancelRequest{ProcessID: a.pid, SecretKey: a.key})
	checkScript(t, cancel.untilClosed())
	checkScript(t, a.untilReady(), "ErrorResponse ERROR 57014 canceling statement due to user request", "ReadyForQuery I")

	// b leaves: its slot is given back once its connection has ended,
	// which the server notices on its own time, so try until a client
	// gets in.
	b.send(&pgproto3.Terminate{})
	deadline := time.Now().Add(testDeadline)
	for {
		c := ts.dial(t)
		c.sendStartup(map[string]string{"user": "alice", "database": "db"})
		first := render(c.recv())
		if first == "AuthenticationOk" {
			break
		}
		if first != "ErrorResponse FATAL 53300 sorry, too many clients already" || time.Now().After(deadline) {
			t.Fatalf("after a client left: %q", first)
		}
	}
}

// TestReservedConnections: the last ReservedConnections slots are kept for
// the users Reserved accepts (PostgreSQL's superuser_reserved_connections):
// another user is refused there once authenticated (53300), an accepted
// one gets in, and past MaxConnections nobody does. SetConnectionLimits
// changes the limits of a serving server.
func TestReservedConnections(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.MaxConnections, s.ReservedConnections = 3, 1
		s.Reserved = func(user string) bool { return user == "ops" }
	})
	login := func(user string) *testClient {
		c := ts.dial(t)
		c.sendStartup(map[string]string{"user": user, "database": "db"})
		return c
	}
	login("alice").untilReady()
	login("alice").untilReady()
	checkScript(t, login("alice").untilClosed(), "AuthenticationOk",
		"ErrorResponse FATAL 53300 remaining connection slots are reserved for admin users")
	// The refused connection gives its slot back on its way out, which
	// the server does on its own time: the admin tries until it is in.
	deadline := time.Now().Add(testDeadline)
	for {
		c := login("ops")
		if first := render(c.recv()); first == "AuthenticationOk" {
			c.untilReady()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("admin in the reserve: %q", first)
		}
	}
	checkScript(t, login("ops").untilClosed(), "ErrorResponse FATAL 53300 sorry, too many clients already")

	ts.srv.SetConnectionLimits(5, 1)
	login("alice").untilReady()
	checkScript(t, login("alice").untilClosed(), "AuthenticationOk",
		"ErrorResponse FATAL 53300 remaining connection slots are reserved for admin users")
}

// TestClientThatNeverReads (issue 18): a client that asks for a large
// answer and reads none of it holds its session (its transaction, its
// locks, its answer in memory) only for WriteTimeout; then the
// connection ends and the session is closed, while another connection
// goes on. Before, the write waited for ever.
func TestClientThatNeverReads(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.WriteTimeout = 300 * time.Millisecond })
	deaf := ts.connect(t)
	good := ts.connect(t)
	// Some 30 MB of DataRows, far beyond the socket buffers.
	for range 20 {
		deaf.send(&pgproto3.Query{String: "count 100000"})
	}
	sessions := ts.h.allSessions()
	waitClosed(t, sessions[0])
	checkScript(t, good.exchange(&pgproto3.Query{String: "count 2"}),
		"RowDescription n:20/0", "DataRow 1", "DataRow 2", "CommandComplete SELECT 2", "ReadyForQuery I")
}
