package pgwire

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// fuzzDeadline is how long one input may take; the server taking longer
// is reported as a hang.
const fuzzDeadline = 5 * time.Second

// encodeMessages encodes client messages back to back.
func encodeMessages(tb testing.TB, msgs ...pgproto3.FrontendMessage) []byte {
	tb.Helper()
	var out []byte
	for _, m := range msgs {
		var err error
		if out, err = m.Encode(out); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// FuzzFront feeds arbitrary bytes to a connection after a valid startup.
// The server must neither panic nor hang, and must close the session
// exactly once.
func FuzzFront(f *testing.F) {
	f.Add(encodeMessages(f, &pgproto3.Query{String: "select rows; count 3; insert x"}, &pgproto3.Terminate{}))
	f.Add(encodeMessages(f,
		&pgproto3.Parse{Name: "s", Query: "echo $1::int8, $2::timestamptz, $3::bytea, $4::numeric"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1, 0, 1, 0},
			Parameters:        [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}, []byte("2024-01-02 03:04:05+00"), {0xff}, []byte("1.5")},
			ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{}))
	f.Add(encodeMessages(f,
		&pgproto3.Query{String: "begin"},
		&pgproto3.Parse{Name: "c", Query: "count 5"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "c", ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{Portal: "p", MaxRows: 2},
		&pgproto3.Flush{},
		&pgproto3.Execute{Portal: "p", MaxRows: 2},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Close{ObjectType: 'S', Name: "c"},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "fail; rollback"}))
	f.Add(encodeMessages(f,
		&pgproto3.Bind{PreparedStatement: "nope"},
		&pgproto3.Execute{},
		&pgproto3.CopyData{Data: []byte("x")},
		&pgproto3.FunctionCall{Function: 1},
		&pgproto3.Sync{}))
	// The COPY sub-protocol: data in pieces, Flush and Sync inside it,
	// CopyFail, a limit, binary data cut short, stray COPY messages.
	f.Add(encodeMessages(f,
		&pgproto3.Query{String: "copy in text"},
		&pgproto3.CopyData{Data: []byte("1\t\\\\x01\n2\t")}, &pgproto3.Flush{}, &pgproto3.Sync{},
		&pgproto3.CopyData{Data: []byte("\\N\n\\.\n")}, &pgproto3.CopyDone{},
		&pgproto3.Query{String: "copy in csv 12"},
		&pgproto3.CopyData{Data: []byte("1,\"a\nb\"\n")}, &pgproto3.CopyData{Data: []byte("2,x\n")}, &pgproto3.CopyDone{},
		&pgproto3.Parse{Query: "copy in binary"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.CopyData{Data: []byte("PGCOPY\n\377\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x04")},
		&pgproto3.CopyFail{Message: "stop"}, &pgproto3.CopyDone{}, &pgproto3.Sync{},
		&pgproto3.Query{String: "copy out binary"}, &pgproto3.Query{String: "copy in text"},
		&pgproto3.Terminate{}))
	f.Add([]byte{'Q', 0x40, 0, 0, 0})
	f.Add([]byte("garbage"))

	startup := encodeMessages(f, &pgproto3.StartupMessage{
		ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters:      map[string]string{"user": "fuzz", "database": "db"},
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newFakeHandler()
		h.sleepReturns = true
		errs := &errorLog{}
		srv := &Server{Handler: h, Logger: slog.New(errs), MaxMessageBytes: 1 << 20}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
		defer cancel()

		client, server := net.Pipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			srv.ServeConn(ctx, server)
		}()
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			_, _ = io.Copy(io.Discard, client)
		}()
		_ = client.SetDeadline(time.Now().Add(fuzzDeadline))
		// Writes fail once the server has hung up: that is fine.
		if _, err := client.Write(startup); err == nil {
			_, _ = client.Write(data)
		}
		client.Close()
		<-served
		<-drained
		if ctx.Err() != nil {
			t.Fatalf("server still busy after %v", fuzzDeadline)
		}
		if msg := errs.first(); msg != "" {
			t.Fatalf("server logged an error: %s", msg)
		}
		for _, s := range h.allSessions() {
			if closes, _, _ := s.counts(); closes != 1 {
				t.Fatalf("session closed %d times", closes)
			}
		}
	})
}

// errorLog is a slog.Handler that keeps the first record at level Error or
// above (a recovered panic is logged so).
type errorLog struct {
	mu  sync.Mutex
	msg string
}

func (l *errorLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msg == "" {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		l.msg = b.String()
	}
	return nil
}

func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

func (l *errorLog) first() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msg
}
