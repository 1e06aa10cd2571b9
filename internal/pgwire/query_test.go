package pgwire

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

const rowsDescription = "RowDescription id:20/0 name:25/0 price:1700/0 ratio:701/0 ok:16/0 data:17/0 day:1082/0 at:1184/0 uid:2950/0 doc:3802/0"

func TestSimpleQuerySeveralStatements(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Query{String: "select rows; insert into t values (1); count 0"}),
		rowsDescription,
		`DataRow 1|alice|12.50|0.25|t|\x00ff|2024-01-02|2024-01-02 03:04:05.123456+00|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|{"a": 1}`,
		"DataRow 2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
		"CommandComplete SELECT 2",
		"CommandComplete INSERT 0 1",
		"RowDescription n:20/0",
		"CommandComplete SELECT 0",
		"ReadyForQuery I")
}

func TestSimpleQueryEmpty(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	for _, q := range []string{"", " ; ;"} {
		checkScript(t, c.exchange(&pgproto3.Query{String: q}), "EmptyQueryResponse", "ReadyForQuery I")
	}
}

func TestSimpleQueryStopsAtError(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Query{String: "insert x; fail; insert y"}),
		"CommandComplete INSERT 0 1",
		"ErrorResponse ERROR 42601 scripted failure / the detail / the hint",
		"ReadyForQuery I")
	checkScript(t, c.exchange(&pgproto3.Query{String: "insert x; copy nowhere; insert y"}),
		"CommandComplete INSERT 0 1", "ErrorResponse ERROR 42601 copy in|out FORMAT [LIMIT]", "ReadyForQuery I")
	checkScript(t, c.exchange(&pgproto3.Query{String: "badrow"}),
		"RowDescription v:23/0", "ErrorResponse ERROR XX000 result row has 0 values but 1 columns", "ReadyForQuery I")
}

func TestReadyForQueryFollowsTxStatus(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Query{String: "begin"}), "CommandComplete BEGIN", "ReadyForQuery T")
	checkScript(t, c.exchange(&pgproto3.Query{String: "fail"}),
		"ErrorResponse ERROR 42601 scripted failure / the detail / the hint", "ReadyForQuery E")
	checkScript(t, c.exchange(&pgproto3.Query{String: "count 1"}),
		"ErrorResponse ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block",
		"ReadyForQuery E")
	checkScript(t, c.exchange(&pgproto3.Query{String: "rollback"}), "CommandComplete ROLLBACK", "ReadyForQuery I")
	// The extended protocol reports the same status at Sync.
	checkScript(t, c.exchange(&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		"ParseComplete", "BindComplete", "CommandComplete BEGIN", "ReadyForQuery T")
}

func TestFatalSessionErrorEndsConnection(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.send(&pgproto3.Query{String: "fatal"})
	checkScript(t, c.untilClosed(), "ErrorResponse FATAL 57P01 scripted fatal error")
	waitClosed(t, onlySession(t, ts.h))
}

func TestTerminateClosesSessionOnce(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.exchange(&pgproto3.Parse{Name: "a", Query: "count 1"}, &pgproto3.Parse{Name: "b", Query: "count 2"}, &pgproto3.Sync{})
	c.send(&pgproto3.Terminate{})
	checkScript(t, c.untilClosed())
	s := onlySession(t, ts.h)
	waitClosed(t, s)
	if closes, closedStmts, prepared := s.counts(); closes != 1 || closedStmts != prepared || prepared != 2 {
		t.Errorf("Close called %d times, %d of %d statements released", closes, closedStmts, prepared)
	}
}

func TestDisconnectClosesSessionOnce(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.exchange(&pgproto3.Query{String: "begin"})
	c.nc.Close()
	s := onlySession(t, ts.h)
	waitClosed(t, s)
	if closes, _, _ := s.counts(); closes != 1 {
		t.Errorf("Close called %d times", closes)
	}
}

func TestShutdownClosesSessions(t *testing.T) {
	var s *fakeSession
	t.Run("serve", func(t *testing.T) {
		ts := startServer(t, nil)
		c := ts.connect(t)
		c.send(&pgproto3.Query{String: "sleep"})
		s = <-ts.h.sleeping
	})
	// The subtest's cleanup stopped the server and waited for it.
	if closes, _, _ := s.counts(); closes != 1 {
		t.Errorf("Close called %d times", closes)
	}
}

func TestCancelRequest(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.send(&pgproto3.Query{String: "sleep"})
	s := <-ts.h.sleeping

	// A wrong key is ignored; the server hangs up once it has looked.
	wrong := ts.dial(t)
	wrong.send(&pgproto3.CancelRequest{ProcessID: c.pid, SecretKey: []byte{c.key[0] ^ 1, c.key[1], c.key[2], c.key[3]}})
	checkScript(t, wrong.untilClosed())
	if _, cancels := s.cancelCount(); cancels != 0 {
		t.Fatalf("wrong key cancelled the session")
	}

	cancel := ts.dial(t)
	cancel.send(&pgproto3.CancelRequest{ProcessID: c.pid, SecretKey: c.key})
	checkScript(t, cancel.untilClosed())
	checkScript(t, c.untilReady(),
		"ErrorResponse ERROR 57014 canceling statement due to user request", "ReadyForQuery I")
	// The connection goes on.
	checkScript(t, c.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")
}

func TestFunctionCallRefused(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.FunctionCall{Function: 1}),
		"ErrorResponse ERROR 0A000 the fast-path function call interface is not supported", "ReadyForQuery I")
}

func TestCopyMessagesOutsideCopyIgnored(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.CopyData{Data: []byte("1\n")}, &pgproto3.CopyDone{}, &pgproto3.CopyFail{Message: "x"},
		&pgproto3.Query{String: "insert"}),
		"CommandComplete INSERT 0 1", "ReadyForQuery I")
}

func TestFlushSendsPendingOutput(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.send(&pgproto3.Parse{Query: "count 1"}, &pgproto3.Flush{})
	if err := c.nc.SetReadDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatal(err)
	}
	checkScript(t, []string{render(c.recv())}, "ParseComplete")
	checkScript(t, c.exchange(&pgproto3.Sync{}), "ReadyForQuery I")
}

// TestRowsReuseKeepsValues: the connection reuses one DataRow and does
// not copy text values (dataRow); an empty text is still not NULL, and
// each row carries its own values, also when a row is narrower than the
// one before.
func TestRowsReuseKeepsValues(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(&pgproto3.Query{String: "echo 'abc', null, '', 'x'; echo '', 'y'; echo null"}),
		"RowDescription c1:25/0 c2:25/0 c3:25/0 c4:25/0", "DataRow abc|NULL||x", "CommandComplete SELECT 1",
		"RowDescription c1:25/0 c2:25/0", "DataRow |y", "CommandComplete SELECT 1",
		"RowDescription c1:25/0", "DataRow NULL", "CommandComplete SELECT 1",
		"ReadyForQuery I")
	checkScript(t, c.exchange(&pgproto3.Parse{Query: "echo $1, $2"},
		&pgproto3.Bind{Parameters: [][]byte{{}, nil}}, &pgproto3.Execute{},
		&pgproto3.Bind{Parameters: [][]byte{nil, []byte("z")}}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		"ParseComplete", "BindComplete", "DataRow |NULL", "CommandComplete SELECT 1",
		"BindComplete", "DataRow NULL|z", "CommandComplete SELECT 1", "ReadyForQuery I")
}
