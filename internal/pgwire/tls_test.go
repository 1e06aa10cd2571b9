package pgwire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// testPKI is a certificate authority with a server certificate for
// localhost and 127.0.0.1 and a client certificate for alice, as PEM files
// in a temporary directory (testenv.NewCerts).
type testPKI struct {
	dir string
	*testenv.Certs
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	return &testPKI{dir: dir, Certs: testenv.NewCerts(t, dir)}
}

// serverTLS is the server's TLS configuration; with clientCA, client
// certificates signed by the test CA are required.
func (p *testPKI) serverTLS(t *testing.T, clientCA bool) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clientCA {
		pemBytes, err := os.ReadFile(p.CA)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AppendCertsFromPEM(pemBytes)
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// pgxDSN connects pgx to addr as alice with the given extra settings.
func pgxTry(t *testing.T, addr, settings string) (*pgx.Conn, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=db %s", host, port, settings))
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

// isTLS reports whether conn speaks through TLS.
func isTLS(conn *pgx.Conn) bool {
	_, ok := conn.PgConn().Conn().(*tls.Conn)
	return ok
}

// TestTLSWithPgx: with a TLS configuration, an SSLRequest is answered 'S'
// and pgx's sslmode=require and verify-full (against the test CA, by name
// and by address) connect through TLS and run statements; verify-full
// against another CA fails, and sslmode=disable still connects in the
// clear.
func TestTLSWithPgx(t *testing.T) {
	pki := newTestPKI(t)
	ts := startServer(t, func(s *Server) { s.TLS = pki.serverTLS(t, false) })
	_, port, _ := net.SplitHostPort(ts.addr)
	for _, settings := range []string{
		"sslmode=require",
		"sslmode=verify-full sslrootcert=" + pki.CA,
		"sslmode=verify-full host=localhost sslrootcert=" + pki.CA,
	} {
		conn, err := pgxTry(t, ts.addr, settings)
		if err != nil {
			t.Fatalf("%s: %v", settings, err)
		}
		if !isTLS(conn) {
			t.Errorf("%s: connection is not TLS", settings)
		}
		checkPgxRows(context.Background(), t, conn)
	}
	other := newTestPKI(t)
	if _, err := pgxTry(t, ts.addr, "sslmode=verify-full sslrootcert="+other.CA); err == nil {
		t.Error("verify-full against another CA connected")
	}
	conn, err := pgxTry(t, net.JoinHostPort("127.0.0.1", port), "sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if isTLS(conn) {
		t.Error("sslmode=disable connected through TLS")
	}
}

// TestTLSWithPsql: psql 15 connects with sslmode=require and verify-full,
// reports the TLS connection (\conninfo) and runs a statement.
func TestTLSWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		psql = "/usr/lib/postgresql/15/bin/psql"
		if _, err := os.Stat(psql); err != nil {
			t.Skip("psql is not installed (Debian package postgresql-client)")
		}
	}
	pki := newTestPKI(t)
	ts := startServer(t, func(s *Server) { s.TLS = pki.serverTLS(t, false); s.RequireTLS = true })
	_, port, _ := net.SplitHostPort(ts.addr)
	for _, settings := range []string{
		"host=127.0.0.1 sslmode=require",
		"host=localhost sslmode=verify-full sslrootcert=" + pki.CA,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
		cmd := exec.CommandContext(ctx, psql, "-X", "-At", "-c", `\conninfo`, "-c", "select",
			fmt.Sprintf("%s port=%s user=alice dbname=db gssencmode=disable", settings, port))
		cmd.Env = append(os.Environ(), "PGSSLCERT="+filepath.Join(pki.dir, "none"), "PGSSLKEY="+filepath.Join(pki.dir, "none"))
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", settings, err, out)
		}
		if !strings.Contains(string(out), "SSL connection (protocol: TLSv1.3") || !strings.Contains(string(out), "1|alice|12.50") {
			t.Errorf("psql %s printed:\n%s", settings, out)
		}
	}
	// sslmode=disable is refused as PostgreSQL refuses it without a
	// matching pg_hba.conf line.
	out, err := exec.Command(psql, "-X", "-At", "-c", "select",
		fmt.Sprintf("host=127.0.0.1 port=%s user=alice dbname=db sslmode=disable", port)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `FATAL:  no pg_hba.conf entry for host "127.0.0.1", user "alice", database "db", no encryption`) {
		t.Errorf("psql sslmode=disable: %v\n%s", err, out)
	}
}

// TestTLSRequired: with RequireTLS, a StartupMessage in the clear gets
// FATAL 28000 and no session; through TLS the same client gets in, and a
// CancelRequest in the clear still reaches its session.
func TestTLSRequired(t *testing.T) {
	pki := newTestPKI(t)
	ts := startServer(t, func(s *Server) { s.TLS = pki.serverTLS(t, false); s.RequireTLS = true })
	c := ts.dial(t)
	c.sendStartup(map[string]string{"user": "alice", "database": "db"})
	checkScript(t, c.untilClosed(),
		`ErrorResponse FATAL 28000 no pg_hba.conf entry for host "127.0.0.1", user "alice", database "db", no encryption / this server accepts TLS connections only: connect with sslmode=require or stronger`)
	_, err := pgxTry(t, ts.addr, "sslmode=disable")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" {
		t.Fatalf("sslmode=disable: got %v, want 28000", err)
	}
	if n := len(ts.h.allSessions()); n != 0 {
		t.Fatalf("%d sessions opened in the clear", n)
	}
	conn, err := pgxTry(t, ts.addr, "sslmode=prefer")
	if err != nil || !isTLS(conn) {
		t.Fatalf("sslmode=prefer: %v (TLS: %v)", err, err == nil && isTLS(conn))
	}

	// A session through TLS, cancelled by a CancelRequest in the clear.
	tc := ts.dialTLS(t, &tls.Config{InsecureSkipVerify: true})
	tc.sendStartup(map[string]string{"user": "alice", "database": "db"})
	tc.untilReady()
	tc.send(&pgproto3.Query{String: "sleep"})
	<-ts.h.sleeping
	cancel := ts.dial(t)
	cancel.send(&pgproto3.CancelRequest{ProcessID: tc.pid, SecretKey: tc.key})
	checkScript(t, cancel.untilClosed())
	checkScript(t, tc.untilReady(),
		"ErrorResponse ERROR 57014 canceling statement due to user request", "ReadyForQuery I")
}

// dialTLS dials, asks for TLS and completes the handshake with cfg.
func (ts *testServer) dialTLS(t *testing.T, cfg *tls.Config) *testClient {
	t.Helper()
	c := ts.dial(t)
	c.writeRaw(startupPacket(codeSSLRequest, nil))
	var answer [1]byte
	if _, err := io.ReadFull(c.nc, answer[:]); err != nil {
		t.Fatal(err)
	}
	if answer[0] != 'S' {
		t.Fatalf("SSLRequest answered %q, want S", answer[0])
	}
	tc := tls.Client(c.nc, cfg)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	c.nc = tc
	c.fe = pgproto3.NewFrontend(tc, tc)
	return c
}

// TestTLSEncryptionRequestsOnce: inside TLS, a second SSLRequest or a
// GSSENCRequest is read as a StartupMessage of an unknown protocol, as
// PostgreSQL reads it.
func TestTLSEncryptionRequestsOnce(t *testing.T) {
	pki := newTestPKI(t)
	ts := startServer(t, func(s *Server) { s.TLS = pki.serverTLS(t, false) })
	for code, want := range map[uint32]string{
		codeSSLRequest:    "ErrorResponse FATAL 0A000 unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0",
		codeGSSEncRequest: "ErrorResponse FATAL 0A000 unsupported frontend protocol 1234.5680: server supports 3.0 to 3.0",
	} {
		c := ts.dialTLS(t, &tls.Config{InsecureSkipVerify: true})
		c.writeRaw(startupPacket(code, nil))
		checkScript(t, c.untilClosed(), want)
	}
}

// TestTLSClientCertificates: with client CAs, a client with a certificate
// the CA signed gets in; one without a certificate, or in the clear, does
// not.
func TestTLSClientCertificates(t *testing.T) {
	pki := newTestPKI(t)
	ts := startServer(t, func(s *Server) { s.TLS = pki.serverTLS(t, true); s.RequireTLS = true })
	conn, err := pgxTry(t, ts.addr, fmt.Sprintf("sslmode=verify-full sslrootcert=%s sslcert=%s sslkey=%s", pki.CA, pki.ClientCert, pki.ClientKey))
	if err != nil {
		t.Fatal(err)
	}
	if !isTLS(conn) {
		t.Error("not TLS")
	}
	checkPgxRows(context.Background(), t, conn)
	if _, err := pgxTry(t, ts.addr, "sslmode=verify-full sslrootcert="+pki.CA); err == nil {
		t.Error("a client without a certificate got in")
	}
	other := newTestPKI(t)
	if _, err := pgxTry(t, ts.addr, fmt.Sprintf("sslmode=require sslcert=%s sslkey=%s", other.ClientCert, other.ClientKey)); err == nil {
		t.Error("a client with a certificate of another CA got in")
	}
	if n := len(ts.h.allSessions()); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}
