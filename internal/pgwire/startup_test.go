package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func TestStartupAfterSSLAndGSSRequests(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.dial(t)
	for _, code := range []uint32{codeSSLRequest, codeGSSEncRequest} {
		c.writeRaw(startupPacket(code, nil))
		var answer [1]byte
		if _, err := io.ReadFull(c.nc, answer[:]); err != nil {
			t.Fatal(err)
		}
		if answer[0] != 'N' {
			t.Fatalf("encryption request answered %q, want N", answer[0])
		}
	}
	c.sendStartup(map[string]string{"user": "alice", "database": "shop", "application_name": "psql"})
	checkScript(t, c.untilReady(), "AuthenticationOk", "BackendKeyData", "ReadyForQuery I")

	if v := c.status["server_version"]; !regexp.MustCompile(`^\d+\.\d+`).MatchString(v) {
		t.Errorf("server_version %q does not start with a version number", v)
	}
	for name, want := range map[string]string{
		"client_encoding": "UTF8", "server_encoding": "UTF8", "DateStyle": "ISO, MDY",
		"integer_datetimes": "on", "standard_conforming_strings": "on", "TimeZone": "UTC",
		"application_name": "psql", "is_superuser": "off", "session_authorization": "alice",
	} {
		if got := c.status[name]; got != want {
			t.Errorf("ParameterStatus %s = %q, want %q", name, got, want)
		}
	}
	if len(c.key) != 4 || c.pid == 0 {
		t.Errorf("BackendKeyData pid %d key %x", c.pid, c.key)
	}
	s := onlySession(t, ts.h)
	if s.info.User != "alice" || s.info.Database != "shop" || s.info.Params["application_name"] != "psql" {
		t.Errorf("StartupInfo = %+v", s.info)
	}
}

func TestStartupDatabaseDefaultsToUser(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "bob"})
	c.untilReady()
	if s := onlySession(t, ts.h); s.info.Database != "bob" {
		t.Errorf("database = %q, want bob", s.info.Database)
	}
}

func TestStartupRefusesOtherProtocolVersions(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.dial(t)
	c.writeRaw(startupPacket(2<<16, []byte("user\x00alice\x00\x00")))
	checkScript(t, c.untilClosed(),
		"ErrorResponse FATAL 0A000 unsupported frontend protocol 2.0: server supports 3.0 to 3.0")
	if len(ts.h.allSessions()) != 0 {
		t.Error("a session was opened")
	}
}

func TestStartupNegotiatesMinorVersionDown(t *testing.T) {
	ts := startServer(t, nil)
	c := ts.dial(t)
	c.writeRaw(startupPacket(3<<16|2, []byte("user\x00alice\x00_pq_.frob\x00x\x00\x00")))
	checkScript(t, c.untilReady(),
		"NegotiateProtocolVersion 0 [_pq_.frob]", "AuthenticationOk", "BackendKeyData", "ReadyForQuery I")
	if _, ok := onlySession(t, ts.h).info.Params["_pq_.frob"]; ok {
		t.Error("protocol option passed on as a parameter")
	}
}

func TestStartupErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		packet []byte
		want   string
	}{
		{"no user", startupPacket(3<<16, []byte("database\x00x\x00\x00")),
			"ErrorResponse FATAL 28000 no PostgreSQL user name specified in startup packet"},
		{"bad layout", startupPacket(3<<16, []byte("user\x00alice")),
			"ErrorResponse FATAL 08P01 invalid startup packet layout"},
		{"too short", []byte{0, 0, 0, 5, 0},
			"ErrorResponse FATAL 08P01 invalid length of startup packet: 5"},
		{"too long", []byte{0x40, 0, 0, 0},
			"ErrorResponse FATAL 08P01 invalid length of startup packet: 1073741824"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, nil)
			c := ts.dial(t)
			c.writeRaw(tc.packet)
			got := c.untilClosed()
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStartupNewSessionError(t *testing.T) {
	ts := startServer(t, func(s *Server) {
		s.Handler.(*fakeHandler).newSessionErr = pgerr.New(pgerr.InvalidCatalogName, `database "nope" does not exist`)
	})
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "alice", "database": "nope"})
	checkScript(t, c.untilClosed(), "AuthenticationOk", `ErrorResponse FATAL 3D000 database "nope" does not exist`)
}

// remoteConn is a connection that claims to come from elsewhere.
type remoteConn struct{ net.Conn }

func (remoteConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 5432} }

func TestTrustWithoutUsersOnlyFromLoopback(t *testing.T) {
	h := newFakeHandler()
	srv := &Server{Handler: h}
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeConn(context.Background(), remoteConn{server})
	}()
	c := &testClient{t: t, nc: client, fe: pgproto3.NewFrontend(client, client), status: map[string]string{}}
	if err := client.SetDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatal(err)
	}
	c.sendStartup(map[string]string{"user": "alice"})
	got := c.untilClosed()
	if len(got) != 1 || !strings.HasPrefix(got[0], "ErrorResponse FATAL 28000 ") {
		t.Fatalf("got %q", got)
	}
	client.Close()
	<-done
	if len(h.allSessions()) != 0 {
		t.Error("a session was opened")
	}
}

func TestTrustedUserInUserMap(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.Users = map[string]string{"guest": "", "alice": "secret"} })
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "guest"})
	checkScript(t, c.untilReady(), "AuthenticationOk", "BackendKeyData", "ReadyForQuery I")
}

// pgconnect connects with pgconn (SCRAM done by pgx's client code).
func pgconnect(t *testing.T, addr, user, password string) (*pgconn.PgConn, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	dsn := fmt.Sprintf("host=%s port=%s user=%s password=%s database=db sslmode=disable connect_timeout=10", host, port, user, password)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

func TestSCRAM(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.Users = map[string]string{"alice": "s3cret", "bob": "other"} })

	conn, err := pgconnect(t, ts.addr, "alice", "s3cret")
	if err != nil {
		t.Fatalf("good password: %v", err)
	}
	res := conn.Exec(context.Background(), "count 1")
	if _, err := res.ReadAll(); err != nil {
		t.Fatalf("query after SCRAM: %v", err)
	}
	// A second connection reuses the cached credentials.
	if _, err := pgconnect(t, ts.addr, "alice", "s3cret"); err != nil {
		t.Fatalf("second connection: %v", err)
	}

	for _, tc := range []struct{ user, password string }{{"alice", "wrong"}, {"mallory", "s3cret"}, {"bob", "s3cret"}} {
		_, err := pgconnect(t, ts.addr, tc.user, tc.password)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s/%s: err = %v, want a PgError", tc.user, tc.password, err)
		}
		want := fmt.Sprintf("password authentication failed for user %q", tc.user)
		if pe.Code != pgerr.InvalidPassword || pe.Message != want || pe.Severity != "FATAL" {
			t.Errorf("%s/%s: got %s %s %q, want FATAL 28P01 %q", tc.user, tc.password, pe.Severity, pe.Code, pe.Message, want)
		}
	}
	if n := len(ts.h.allSessions()); n != 2 {
		t.Errorf("%d sessions opened, want 2", n)
	}
}

func TestSCRAMByHandRejectsOtherMechanism(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.Users = map[string]string{"alice": "s3cret"} })
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "alice"})
	sasl, ok := c.recv().(*pgproto3.AuthenticationSASL)
	if !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
		t.Fatalf("want AuthenticationSASL offering SCRAM-SHA-256, got %+v", sasl)
	}
	c.send(&pgproto3.SASLInitialResponse{AuthMechanism: "PLAIN", Data: []byte("x")})
	checkScript(t, c.untilClosed(), "ErrorResponse FATAL 08P01 client selected an invalid SASL authentication mechanism")
}
