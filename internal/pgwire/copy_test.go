package pgwire

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// copyIn runs a COPY FROM of the fake session ("copy in ..."), sends data
// in the given pieces and CopyDone, and returns what came back.
func copyIn(t *testing.T, c *testClient, query string, pieces ...string) []string {
	t.Helper()
	c.send(&pgproto3.Query{String: query})
	if got := render(c.recv()); !strings.HasPrefix(got, "CopyInResponse") {
		t.Fatalf("%s: got %s, want CopyInResponse", query, got)
	}
	var msgs []pgproto3.FrontendMessage
	for _, p := range pieces {
		msgs = append(msgs, &pgproto3.CopyData{Data: []byte(p)})
	}
	return c.exchange(append(msgs, &pgproto3.CopyDone{})...)
}

// TestCopyInFormats: text, CSV and binary data are read as PostgreSQL
// reads them (escapes, NULL, quotes across lines and pieces, the
// end-of-data marker), bytea in its text form.
func TestCopyInFormats(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	checkScript(t, copyIn(t, c, "copy in text", "1\t\\\\x0a\n", "\\N\ta\\tb\\\\\\101\\x42\n2\t", "\\N\n\\.\nignored"),
		"CommandComplete COPY 3 1,\\x0a,NULL,a\tb\\AB,2,NULL", "ReadyForQuery I")
	checkScript(t, copyIn(t, c, "copy in csv", "1,\"a\n", "b\"\"c\"\r\n,\"\"\r\n"),
		"CommandComplete COPY 2 1,a\nb\"c,NULL,", "ReadyForQuery I")
	bin := "PGCOPY\n\377\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00" +
		"\x00\x02" + "\x00\x00\x00\x04\x00\x00\x00\x07" + "\x00\x00\x00\x02\x01\xff" +
		"\x00\x02" + "\xff\xff\xff\xff" + "\x00\x00\x00\x00" + "\xff\xff"
	checkScript(t, copyIn(t, c, "copy in binary", bin[:5], bin[5:]),
		"CommandComplete COPY 2 7,\\x01ff,NULL,\\x", "ReadyForQuery I")
}

// TestCopyInErrors: bad data gets PostgreSQL's error and CONTEXT; CopyFail
// is 57014; data over the Session's limit is 54000, not memory; after an
// error the client's remaining COPY messages are ignored and the session
// goes on.
func TestCopyInErrors(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	for _, tc := range []struct {
		query, data, want string
	}{
		{"copy in text", "1\n", `ErrorResponse ERROR 22P04 missing data for column "b" @ COPY t, line 1: "1"`},
		{"copy in text", "1\t2\n3\t4\t5\n", `ErrorResponse ERROR 22P04 extra data after last expected column @ COPY t, line 2: "3	4	5"`},
		{"copy in text", "1\t2\r\n3\t4\n", `ErrorResponse ERROR 22P04 literal newline found in data / Use "\n" to represent newline. @ COPY t, line 2`},
		{"copy in text", "1\t\\xff\n", `ErrorResponse ERROR 22021 invalid byte sequence for encoding "UTF8": 0xff @ COPY t, line 1`},
		{"copy in text", "1\t2\n\\.x\n", `ErrorResponse ERROR 22P04 end-of-copy marker corrupt @ COPY t, line 2`},
		{"copy in csv", "1,\"open\n", `ErrorResponse ERROR 22P04 unterminated CSV quoted field @ COPY t, line 1: "1,"open` + "\n" + `"`},
		{"copy in binary", "PGCOPY\n", `ErrorResponse ERROR 22P04 COPY file signature not recognized @ COPY t, line 0`},
		{"copy in binary", "PGCOPY\n\377\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01",
			`ErrorResponse ERROR 22P04 row field count is 1, expected 2 @ COPY t, line 1`},
		{"copy in binary", "PGCOPY\n\377\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x02\x00\x01",
			`ErrorResponse ERROR 22P03 incorrect binary data format @ COPY t, line 1, column a`},
		{"copy in binary", "PGCOPY\n\377\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x09",
			`ErrorResponse ERROR 22P04 unexpected EOF in COPY data @ COPY t, line 1, column a`},
		{"copy in text 4", "1\t\\N\n", `ErrorResponse ERROR 54000 COPY data exceeds shepherd's limit of 4 bytes / Split the data into several COPY statements.`},
	} {
		checkScript(t, copyIn(t, c, tc.query, tc.data), tc.want, "ReadyForQuery I")
	}
	c.send(&pgproto3.Query{String: "copy in text"})
	c.recv()
	checkScript(t, c.exchange(&pgproto3.CopyData{Data: []byte("1\t")}, &pgproto3.CopyFail{Message: "client gave up"}),
		"ErrorResponse ERROR 57014 COPY from stdin failed: client gave up", "ReadyForQuery I")
	// Stray COPY messages are ignored; the session goes on.
	checkScript(t, c.exchange(&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{}, &pgproto3.Query{String: "insert x"}),
		"CommandComplete INSERT 0 1", "ReadyForQuery I")
}

// TestCopyOut: COPY TO's rows in text, CSV and binary, each row its own
// CopyData, between CopyOutResponse (with the format) and CopyDone, in
// both protocols.
func TestCopyOut(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.connect(t)
	got := c.exchange(&pgproto3.Query{String: "copy out text"})
	checkScript(t, got,
		"CopyOutResponse 0 [0 0 0 0 0 0 0 0 0 0]",
		`CopyData "1\talice\t12.50\t0.25\tt\t\\\\x00ff\t2024-01-02\t2024-01-02 03:04:05.123456+00\ta0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\t{\"a\": 1}\n"`,
		got[2], "CopyDone", "CommandComplete COPY 2", "ReadyForQuery I")
	got = c.exchange(&pgproto3.Parse{Query: "copy out csv"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	checkScript(t, got, "ParseComplete", "BindComplete", "NoData",
		"CopyOutResponse 0 [0 0 0 0 0 0 0 0 0 0]",
		`CopyData "1,alice,12.50,0.25,t,\\x00ff,2024-01-02,2024-01-02 03:04:05.123456+00,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,\"{\"\"a\"\": 1}\"\n"`,
		got[5], "CopyDone", "CommandComplete COPY 2", "ReadyForQuery I")
	got = c.exchange(&pgproto3.Query{String: "copy out binary"})
	if len(got) != 7 || got[0] != "CopyOutResponse 1 [1 1 1 1 1 1 1 1 1 1]" ||
		!strings.HasPrefix(got[1], `CopyData "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\n`) ||
		got[3] != `CopyData "\xff\xff"` || got[4] != "CopyDone" {
		t.Fatalf("binary COPY TO:\n  %s", strings.Join(got, "\n  "))
	}
}
