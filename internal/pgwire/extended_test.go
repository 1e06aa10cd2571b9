package pgwire

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/answer"
)

func TestExtendedNamedStatementsAndPortals(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(
		&pgproto3.Parse{Name: "s1", Query: "echo $1::int8, $2", ParameterOIDs: []uint32{0, answer.OIDInt4}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s1", Parameters: [][]byte{[]byte("42"), []byte("7")},
			ResultFormatCodes: []int16{1, 0}},
		&pgproto3.Describe{ObjectType: 'P', Name: "p1"},
		&pgproto3.Execute{Portal: "p1"},
		&pgproto3.Sync{}),
		"ParseComplete",
		"ParameterDescription [20 23]",
		"RowDescription c1:20/0 c2:25/0",
		"BindComplete",
		"RowDescription c1:20/1 c2:25/0",
		"DataRow 0x000000000000002a|7",
		"CommandComplete SELECT 1",
		"ReadyForQuery I")

	// A named statement cannot be parsed twice; the error skips to Sync.
	checkScript(t, c.exchange(
		&pgproto3.Parse{Name: "s1", Query: "count 1"},
		&pgproto3.Bind{PreparedStatement: "s1"},
		&pgproto3.Execute{},
		&pgproto3.Sync{}),
		`ErrorResponse ERROR 42P05 prepared statement "s1" already exists`,
		"ReadyForQuery I")

	// The unnamed statement is replaced; the old one is released.
	s := onlySession(t, ts.h)
	checkScript(t, c.exchange(
		&pgproto3.Parse{Query: "count 1"},
		&pgproto3.Parse{Query: "count 2"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{}),
		"ParseComplete", "ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "CommandComplete SELECT 2", "ReadyForQuery I")
	if _, closed, _ := s.counts(); closed != 1 {
		t.Errorf("%d statements released, want 1", closed)
	}

	// Closing s1 releases it; binding it afterwards fails.
	checkScript(t, c.exchange(
		&pgproto3.Close{ObjectType: 'S', Name: "s1"},
		&pgproto3.Close{ObjectType: 'S', Name: "never-existed"},
		&pgproto3.Bind{PreparedStatement: "s1"},
		&pgproto3.Sync{}),
		"CloseComplete", "CloseComplete", `ErrorResponse ERROR 26000 prepared statement "s1" does not exist`, "ReadyForQuery I")
	if _, closed, _ := s.counts(); closed != 2 {
		t.Errorf("%d statements released, want 2", closed)
	}
}

func TestExtendedDescribeNoData(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(
		&pgproto3.Parse{Name: "ins", Query: "insert into t values ($1, $2::int8)"},
		&pgproto3.Describe{ObjectType: 'S', Name: "ins"},
		&pgproto3.Bind{PreparedStatement: "ins", Parameters: [][]byte{nil, []byte("5")}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{}),
		"ParseComplete", "ParameterDescription [25 20]", "NoData", "BindComplete", "NoData",
		"CommandComplete INSERT 0 1", "ReadyForQuery I")
	got := onlySession(t, ts.h).params()
	want := []Param{{Null: true, OID: answer.OIDText}, {OID: answer.OIDInt8, Text: "5"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("params = %+v, want %+v", got, want)
	}
}

func TestExtendedEmptyQuery(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(
		&pgproto3.Parse{Query: "  "},
		&pgproto3.Describe{ObjectType: 'S'},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{}),
		"ParseComplete", "ParameterDescription []", "NoData", "BindComplete", "NoData", "EmptyQueryResponse", "ReadyForQuery I")
}

func TestExtendedMaxRowsAcrossExecutes(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.exchange(&pgproto3.Query{String: "begin"})
	checkScript(t, c.exchange(
		&pgproto3.Parse{Name: "five", Query: "count 5"},
		&pgproto3.Bind{DestinationPortal: "cur", PreparedStatement: "five"},
		&pgproto3.Execute{Portal: "cur", MaxRows: 2},
		&pgproto3.Sync{}),
		"ParseComplete", "BindComplete", "DataRow 1", "DataRow 2", "PortalSuspended", "ReadyForQuery T")
	// Inside a transaction a named portal outlives Sync.
	checkScript(t, c.exchange(
		&pgproto3.Execute{Portal: "cur", MaxRows: 2},
		&pgproto3.Execute{Portal: "cur", MaxRows: 2},
		&pgproto3.Sync{}),
		"DataRow 3", "DataRow 4", "PortalSuspended", "DataRow 5", "CommandComplete SELECT 5", "ReadyForQuery T")
	c.exchange(&pgproto3.Query{String: "commit"})
	// Once the transaction is over, so is the portal.
	checkScript(t, c.exchange(&pgproto3.Execute{Portal: "cur"}, &pgproto3.Sync{}),
		`ErrorResponse ERROR 34000 portal "cur" does not exist`, "ReadyForQuery I")
}

func TestExtendedErrorSkipsUntilSync(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, c.exchange(
		&pgproto3.Bind{PreparedStatement: "nope"},
		&pgproto3.Parse{Query: "insert"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Query{String: "insert"},
		&pgproto3.Sync{}),
		`ErrorResponse ERROR 26000 prepared statement "nope" does not exist`, "ReadyForQuery I")
	// An execution error does the same, and the connection carries on.
	checkScript(t, c.exchange(
		&pgproto3.Parse{Query: "fail"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Parse{Query: "insert"},
		&pgproto3.Bind{},
		&pgproto3.Execute{},
		&pgproto3.Sync{}),
		"ParseComplete", "BindComplete", "ErrorResponse ERROR 42601 scripted failure / the detail / the hint", "ReadyForQuery I")
	checkScript(t, c.untilReady(), "ParseComplete", "BindComplete", "CommandComplete INSERT 0 1", "ReadyForQuery I")
}

func TestExtendedErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []pgproto3.FrontendMessage
		want string
	}{
		{"prepare fails", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "unpreparable x"}},
			`ErrorResponse ERROR 42601 cannot prepare "unpreparable x"`},
		{"too few parameters", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1::int8"}, &pgproto3.Bind{}},
			`ErrorResponse ERROR 08P01 bind message supplies 0 parameters, but prepared statement "" requires 1`},
		{"bad format code", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1::int8"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{7}, Parameters: [][]byte{[]byte("1")}}},
			"ErrorResponse ERROR 08P01 unsupported format code: 7"},
		{"result formats mismatch", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "count 1"},
			&pgproto3.Bind{ResultFormatCodes: []int16{0, 1}}},
			"ErrorResponse ERROR 08P01 bind message has 2 result formats but query has 1 columns"},
		{"malformed binary int8", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1::int8"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2, 3}}}},
			"ErrorResponse ERROR 08P01 invalid binary parameter of type int8"},
		{"bad bytea text", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1::bytea"},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(`\xzz`)}}},
			"ErrorResponse ERROR 22P02 invalid hexadecimal data for type bytea"},
		{"value not of its type", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "badvalue"},
			&pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{}},
			`ErrorResponse ERROR 22P02 invalid input syntax for type int4: "abc"`},
		{"unknown portal", []pgproto3.FrontendMessage{&pgproto3.Execute{Portal: "p"}},
			`ErrorResponse ERROR 34000 portal "p" does not exist`},
		{"describe unknown statement", []pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'S', Name: "x"}},
			`ErrorResponse ERROR 26000 prepared statement "x" does not exist`},
		{"bad describe kind", []pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'X'}},
			"ErrorResponse ERROR 08P01 invalid DESCRIBE message subtype 88"},
		{"duplicate portal", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "count 1"},
			&pgproto3.Bind{DestinationPortal: "p"}, &pgproto3.Bind{DestinationPortal: "p"}},
			`ErrorResponse ERROR 42P03 portal "p" already exists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, nil)
			c := ts.connect(t)
			got := c.exchange(append(tc.msgs, &pgproto3.Sync{})...)
			errors := 0
			for _, m := range got {
				if len(m) > 13 && m[:13] == "ErrorResponse" {
					errors++
					if !bytes.HasPrefix([]byte(m), []byte(tc.want)) {
						t.Errorf("got %q, want %q", m, tc.want)
					}
				}
			}
			if errors != 1 {
				t.Errorf("got %q, want exactly one error %q", got, tc.want)
			}
			checkScript(t, c.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")
		})
	}
}

// typeCases pairs the PostgreSQL text form of a value with its binary form,
// written out by hand from the PostgreSQL binary formats.
var typeCases = []struct {
	typ    string
	text   string
	binary string // hex
}{
	{"int2", "7", "0007"},
	{"int4", "-2", "fffffffe"},
	{"int8", "42", "000000000000002a"},
	{"numeric", "12.5", "0002" + "0000" + "0000" + "0001" + "000c" + "1388"},
	{"numeric", "-0.001", "0001" + "ffff" + "4000" + "0003" + "000a"},
	{"numeric", "NaN", "0000" + "0000" + "c000" + "0000"},
	{"float4", "1.5", "3fc00000"},
	{"float8", "-0.25", "bfd0000000000000"},
	{"float8", "1e+100", "54b249ad2594c37d"},
	{"float8", "Infinity", "7ff0000000000000"},
	{"bool", "t", "01"},
	{"bool", "f", "00"},
	{"text", "héllo", "68c3a96c6c6f"},
	{"varchar", "v", "76"},
	{"bpchar", "ab", "6162"},
	{"name", "nm", "6e6d"},
	{"date", "2000-01-02", "00000001"},
	{"date", "infinity", "7fffffff"},
	{"timestamp", "2000-01-01 00:00:01", "00000000000f4240"},
	{"timestamptz", "2000-01-01 00:00:00.5+00", "000000000007a120"},
	{"timestamptz", "-infinity", "8000000000000000"},
	{"time", "12:34:56.5", "0000000a8be1bd20"},
	{"interval", "1 day 02:03:04", "00000001b81ee600" + "00000001" + "00000000"},
	{"uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc999c0b4ef8bb6d6bb9bd380a11"},
	{"json", `{"a":1}`, "7b2261223a317d"},
	{"jsonb", `{"a": 1}`, "01" + "7b2261223a2031" + "7d"},
}

// execOne binds "echo $1::typ" with one parameter and returns the single
// value of the answer.
func (c *testClient) execOne(typ string, paramFormat int16, param []byte, resultFormat int16) []byte {
	c.t.Helper()
	c.send(
		&pgproto3.Parse{Query: "echo $1::" + typ},
		&pgproto3.Bind{ParameterFormatCodes: []int16{paramFormat}, Parameters: [][]byte{param}, ResultFormatCodes: []int16{resultFormat}},
		&pgproto3.Execute{},
		&pgproto3.Sync{})
	var value []byte
	for {
		switch m := c.recv().(type) {
		case *pgproto3.DataRow:
			value = m.Values[0]
		case *pgproto3.ErrorResponse:
			c.t.Fatalf("%s: %s %s", typ, m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			return value
		}
	}
}

func TestBinaryResults(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	for _, tc := range typeCases {
		got := c.execOne(tc.typ, formatText, []byte(tc.text), formatBinary)
		if hex.EncodeToString(got) != tc.binary {
			t.Errorf("%s %q: binary %x, want %s", tc.typ, tc.text, got, tc.binary)
		}
	}
	// bytea: the text parameter is hex, the value raw bytes.
	if got := c.execOne("bytea", formatText, []byte(`\x00ff`), formatBinary); !bytes.Equal(got, []byte{0, 0xff}) {
		t.Errorf("bytea binary %x", got)
	}
	if got := c.execOne("bytea", formatText, []byte(`a\\b\001`), formatText); string(got) != `\x615c6201` {
		t.Errorf("bytea from escape form, as text: %q", got)
	}
}

func TestBinaryParameters(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	s := onlySession(t, ts.h)
	for _, tc := range typeCases {
		bin, _ := hex.DecodeString(tc.binary)
		got := c.execOne(tc.typ, formatBinary, bin, formatText)
		if string(got) != tc.text {
			t.Errorf("%s %s: text %q, want %q", tc.typ, tc.binary, got, tc.text)
		}
		p := s.params()[0]
		if p.Text != tc.text || p.OID != fakeTypes[tc.typ] || p.Null {
			t.Errorf("%s %s: param %+v", tc.typ, tc.binary, p)
		}
	}
	if got := c.execOne("bytea", formatBinary, []byte{0, 0xff}, formatText); string(got) != `\x00ff` {
		t.Errorf("bytea as text: %q", got)
	}
	if p := s.params()[0]; p.Text != "\x00\xff" {
		t.Errorf("bytea param %q, want raw bytes", p.Text)
	}
	if got := c.execOne("int8", formatBinary, nil, formatBinary); got != nil {
		t.Errorf("NULL came back as %x", got)
	}
	if p := s.params()[0]; !p.Null || p.OID != answer.OIDInt8 {
		t.Errorf("NULL param %+v", p)
	}
}

// TestExtendedErrorSentBeforeSync: an error in the extended protocol
// reaches the client at once, with the output queued before it, as
// PostgreSQL sends it; a client that prepares with Parse, Describe and
// Flush (asyncpg) waits for it before sending Sync. Messages after the
// error, a Flush included, are skipped until Sync.
func TestExtendedErrorSentBeforeSync(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	c.send(&pgproto3.Parse{Query: "unpreparable"}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{})
	checkScript(t, []string{render(c.recv())}, `ErrorResponse ERROR 42601 cannot prepare "unpreparable"`)
	checkScript(t, c.exchange(&pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{}, &pgproto3.Sync{}), "ReadyForQuery I")

	// No Flush at all: the error still comes, after the ParseComplete queued
	// before it.
	c.send(&pgproto3.Parse{Name: "ok", Query: "count 1"}, &pgproto3.Parse{Query: "unpreparable"})
	checkScript(t, []string{render(c.recv()), render(c.recv())},
		"ParseComplete", `ErrorResponse ERROR 42601 cannot prepare "unpreparable"`)
	checkScript(t, c.exchange(&pgproto3.Sync{}), "ReadyForQuery I")

	// An error at Describe (here a parameter the statement cannot have) is
	// sent at once too.
	c.send(&pgproto3.Parse{Query: "echo $0"}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Flush{})
	checkScript(t, []string{render(c.recv()), render(c.recv())},
		"ParseComplete", "ErrorResponse ERROR 42P02 there is no parameter $0")
	checkScript(t, c.exchange(&pgproto3.Sync{}), "ReadyForQuery I")
	checkScript(t, c.exchange(&pgproto3.Bind{PreparedStatement: "ok"}, &pgproto3.Execute{}, &pgproto3.Sync{}),
		"BindComplete", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I")
}

// TestBindReadsDateTimeAndUUIDAsPostgreSQL: text parameters of the date,
// time and uuid types reach the Session as PostgreSQL prints the value
// (a zone suffix after a date as pgjdbc sends it, an offset moved to UTC,
// upper-case and brace-wrapped uuids), and text PostgreSQL refuses fails
// at Bind with its SQLSTATE, so no replica sees it.
func TestBindReadsDateTimeAndUUIDAsPostgreSQL(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	for _, tc := range []struct{ typ, in, want string }{
		{"date", "2024-02-29 +00", "DataRow 2024-02-29"},
		{"date", "2024-02-29T23:59:59.999+05:30", "DataRow 2024-02-29"},
		{"timestamp", "2024-02-29 12:34:56.123 +00:00", "DataRow 2024-02-29 12:34:56.123"},
		{"timestamp", "2024-02-29 23:59:59.9999996-05", "DataRow 2024-03-01 00:00:00"},
		{"timestamptz", "2024-02-29 12:34:56.123456-05", "DataRow 2024-02-29 17:34:56.123456+00"},
		{"time", "12:34:56+00", "DataRow 12:34:56"},
		{"uuid", "{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}", "DataRow a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"date", "2024-02-30", `ErrorResponse ERROR 22008 date/time field value out of range: "2024-02-30"`},
		{"timestamp", "yesterday noon", `ErrorResponse ERROR 22007 invalid input syntax for type timestamp: "yesterday noon"`},
		{"timestamptz", "2024-02-29 12:00+16", `ErrorResponse ERROR 22009 time zone displacement out of range: "2024-02-29 12:00+16"`},
		{"date", "today", `ErrorResponse ERROR 0A000 shepherd does not read date input "today": its value depends on the clock; use now() or current_date`},
		{"uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", `ErrorResponse ERROR 22P02 invalid input syntax for type uuid: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1"`},
	} {
		got := c.exchange(
			&pgproto3.Parse{Query: "echo $1::" + tc.typ},
			&pgproto3.Bind{Parameters: [][]byte{[]byte(tc.in)}},
			&pgproto3.Execute{},
			&pgproto3.Sync{})
		if !slices.Contains(got, tc.want) || got[len(got)-1] != "ReadyForQuery I" {
			t.Errorf("%s %q: got %q, want %q", tc.typ, tc.in, got, tc.want)
		}
		if strings.HasPrefix(tc.want, "ErrorResponse") && slices.Contains(got, "BindComplete") {
			t.Errorf("%s %q: BindComplete before the error; PostgreSQL fails the Bind", tc.typ, tc.in)
		}
	}
}
