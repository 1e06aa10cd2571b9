package pgwire

import (
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestBadInputEndsConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		// halfClose ends the client's side after the bytes.
		halfClose bool
		want      string
	}{
		{name: "garbage", bytes: []byte("\x00\x01\x02garbage garbage"),
			want: "ErrorResponse FATAL 08P01 invalid message: unknown message type"},
		{name: "unknown message type", bytes: []byte{'z', 0, 0, 0, 4},
			want: "ErrorResponse FATAL 08P01 invalid message: unknown message type: z"},
		{name: "length below 4", bytes: []byte{'Q', 0, 0, 0, 2},
			want: "ErrorResponse FATAL 08P01 invalid message: invalid message length: 2"},
		{name: "1 GiB length prefix", bytes: []byte{'Q', 0x40, 0, 0, 0},
			want: "ErrorResponse FATAL 08P01 message of 1073741820 bytes exceeds the limit of 67108864 bytes"},
		{name: "negative length", bytes: []byte{'Q', 0xff, 0xff, 0xff, 0xff},
			want: "ErrorResponse FATAL 08P01 invalid message: invalid message length: -1"},
		{name: "malformed body", bytes: []byte{'D', 0, 0, 0, 5, 'S'},
			want: "ErrorResponse FATAL 08P01 invalid message:"},
		{name: "Bind cut inside", bytes: []byte{'B', 0, 0, 0, 6, 0, 0},
			want: "ErrorResponse FATAL 08P01 invalid message:"},
		{name: "truncated message", bytes: []byte{'Q', 0, 0, 0, 100, 's', 'e', 'l'}, halfClose: true,
			want: "ErrorResponse FATAL 08P01 incomplete message from client"},
		{name: "truncated header", bytes: []byte{'Q', 0, 0}, halfClose: true,
			want: "ErrorResponse FATAL 08P01 incomplete message from client"},
		{name: "unexpected password message", bytes: []byte{'p', 0, 0, 0, 8, 'p', 'w', 0, 0},
			want: "ErrorResponse FATAL 08P01 unexpected message type *pgproto3.PasswordMessage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, nil)
			c := ts.connect(t)
			c.writeRaw(tc.bytes)
			if tc.halfClose {
				if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			got := c.untilClosed()
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			s := onlySession(t, ts.h)
			waitClosed(t, s)
		})
	}
}

func TestCleanHangUpSaysNothing(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.send(&pgproto3.Query{String: "insert"})
	if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	checkScript(t, c.untilClosed(), "CommandComplete INSERT 0 1", "ReadyForQuery I")
	waitClosed(t, onlySession(t, ts.h))
}

func TestSmallMessageLimit(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.MaxMessageBytes = 64 })
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")
	c.send(&pgproto3.Query{String: "insert" + strings.Repeat(" ", 100)})
	checkScript(t, c.untilClosed(), "ErrorResponse FATAL 08P01 message of 107 bytes exceeds the limit of 64 bytes")
}

func TestGarbageOnOneConnectionLeavesOthersAlone(t *testing.T) {
	ts := startServer(t, nil)
	good := ts.connect(t)
	bad := ts.connect(t)
	checkScript(t, good.exchange(&pgproto3.Query{String: "begin"}), "CommandComplete BEGIN", "ReadyForQuery T")
	bad.writeRaw([]byte("\xff\xff\xff\xff\xff\xff this is not the protocol"))
	got := bad.untilClosed()
	if len(got) != 1 || !strings.HasPrefix(got[0], "ErrorResponse FATAL 08P01") {
		t.Fatalf("bad connection got %q", got)
	}
	checkScript(t, good.exchange(&pgproto3.Query{String: "count 2"}),
		"RowDescription n:20/0", "DataRow 1", "DataRow 2", "CommandComplete SELECT 2", "ReadyForQuery T")
}

func TestBindUnknownStatementConnectionSurvives(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Bind{PreparedStatement: "ghost"}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		`ErrorResponse ERROR 26000 prepared statement "ghost" does not exist`, "ReadyForQuery I")
	checkScript(t, c.exchange(&pgproto3.Parse{Name: "ghost", Query: "count 1"}, &pgproto3.Bind{PreparedStatement: "ghost"},
		&pgproto3.Execute{}, &pgproto3.Sync{}),
		"ParseComplete", "BindComplete", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

// TestMalformedQuerySessionGoesOn (issue 18): a Query whose string holds
// a NUL, or has none at its end, is an ERROR in PostgreSQL 15 ("invalid
// message format", "invalid string in message"), not the end of the
// session: the framing is intact. It ended the connection (FATAL).
// server's TestHostileMessages compares these with a real PostgreSQL.
func TestMalformedQuerySessionGoesOn(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	for _, tc := range []struct{ body, want string }{
		{"insert\x00insert\x00", "ErrorResponse ERROR 08P01 invalid message format"},
		{"insert", "ErrorResponse ERROR 08P01 invalid string in message"},
		{"", "ErrorResponse ERROR 08P01 invalid string in message"},
		{"\x00\x00", "ErrorResponse ERROR 08P01 invalid message format"},
	} {
		msg := append([]byte{'Q'}, uint32Bytes(uint32(4+len(tc.body)))...)
		c.writeRaw(append(msg, tc.body...))
		checkScript(t, c.untilReady(), tc.want, "ReadyForQuery I")
		checkScript(t, c.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")
	}
}
