package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// postgresBin is where Debian's postgresql-15 package installs the server.
const postgresBin = "/usr/lib/postgresql/15/bin"

// pgServer is the running PostgreSQL server of this test binary.
type pgServer struct {
	*server
	port int
	// sslmode is how testenv itself connects: "disable", or "require"
	// for a server that accepts TLS connections only.
	sslmode string
}

var pgOnce shared[*pgServer]

// Postgres returns the DSN (a postgres:// URL, user postgres, no password)
// of a fresh, empty database on the test binary's PostgreSQL 15 server,
// starting the server on first use. The database is dropped when t ends.
func Postgres(t testing.TB) string {
	t.Helper()
	requireMain(t)
	srv, err := pgOnce.get(startPostgres)
	if err != nil {
		t.Fatal(err)
	}
	name := databaseName(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testenv: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("testenv: drop database %s: %v", name, err)
		}
	})
	return srv.dsn(name)
}

func (s *pgServer) dsn(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=%s", s.port, database, s.sslmode)
}

// exec runs one statement on the maintenance database.
func (s *pgServer) exec(ctx context.Context, stmt string) error {
	c, err := pgconn.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, stmt).ReadAll()
	return err
}

// startPostgres initialises a cluster in a temporary directory and starts
// postgres on it, listening on 127.0.0.1 and on a socket in that directory.
func startPostgres() (_ *pgServer, err error) {
	dir, data, port, who, err := initPostgres()
	if err != nil {
		return nil, err
	}
	registered := false
	defer removeUnlessRegistered(dir, &registered)
	srv, err := runPostgres(context.Background(), dir, data, port, who, nil, Options{})
	if err != nil {
		return nil, err
	}
	register(srv.server)
	registered = true
	return srv, nil
}

// initPostgres makes a data directory with initdb and picks a port.
func initPostgres() (dir, data string, port int, who runAs, err error) {
	initdb, err := findBinary("postgresql-15", filepath.Join(postgresBin, "initdb"))
	if err != nil {
		return "", "", 0, who, err
	}
	who, err = lookupRunAs("postgres")
	if err != nil {
		return "", "", 0, who, err
	}
	dir, err = who.makeDir("shepherd-pg-*")
	if err != nil {
		return "", "", 0, who, err
	}
	data = filepath.Join(dir, "data")
	err = who.run(initdb, "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if err != nil {
		return "", "", 0, who, err
	}
	port, err = freePort()
	return dir, data, port, who, err
}

// runPostgres starts postgres on an initialised data directory and waits
// until it answers. With certs, it serves TLS with them (and its
// pg_hba.conf, written by OwnPostgresTLS, accepts nothing else).
func runPostgres(ctx context.Context, dir, data string, port int, who runAs, certs *Certs, opts Options) (*pgServer, error) {
	postgres, err := findBinary("postgresql-15", filepath.Join(postgresBin, "postgres"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(postgres, append([]string{"-D", data, "-p", fmt.Sprint(port), "-k", dir},
		postgresSettings(opts)...)...)
	sslmode := "disable"
	if certs != nil {
		cmd.Args = append(cmd.Args, "-c", "ssl=on", "-c", "ssl_cert_file="+certs.Cert, "-c", "ssl_key_file="+certs.Key)
		sslmode = "require"
	}
	s, err := startProcess("postgres", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	srv := &pgServer{server: s, port: port, sslmode: sslmode}
	err = s.waitReady(ctx, func() error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return srv.exec(ctx, "SELECT 1")
	})
	if err != nil {
		s.kill()
		return nil, err
	}
	return srv, nil
}

// PostgresServer is a PostgreSQL server of one test's own, which the
// test may kill and start again (crash tests); the shared server of
// Postgres must not be killed.
type PostgresServer struct {
	t    testing.TB
	dir  string
	data string
	port int
	who  runAs
	cur  *pgServer
	// certs, for a server of OwnPostgresTLS: it accepts TLS connections
	// only, with the server certificate of Certs.
	certs *Certs
}

// OwnPostgres starts a PostgreSQL server for t alone, with one database
// "shepherd". It is stopped and removed when t ends.
func OwnPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	return ownPostgres(t, false)
}

// OwnPostgresTLS is OwnPostgres for a server that accepts TLS connections
// only (its pg_hba.conf has hostssl lines only), with a server certificate
// for localhost and 127.0.0.1 signed by a CA of its own (Certs).
func OwnPostgresTLS(t testing.TB) *PostgresServer {
	t.Helper()
	return ownPostgres(t, true)
}

func ownPostgres(t testing.TB, withTLS bool) *PostgresServer {
	requireMain(t)
	dir, data, port, who, err := initPostgres()
	if err != nil {
		t.Fatal(err)
	}
	p := &PostgresServer{t: t, dir: dir, data: data, port: port, who: who}
	if withTLS {
		p.certs = NewCerts(t, dir)
		hba := filepath.Join(data, "pg_hba.conf")
		if err := os.WriteFile(hba, []byte("local all all trust\nhostssl all all 127.0.0.1/32 trust\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// The server runs as who, and reads its key only if it owns it.
		for _, f := range []string{p.certs.Cert, p.certs.Key, p.certs.CA, hba} {
			if err := os.Chown(f, who.uid, who.gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		if p.cur != nil {
			p.cur.stop()
		}
		_ = os.RemoveAll(dir)
	})
	p.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.cur.exec(ctx, "CREATE DATABASE shepherd"); err != nil {
		t.Fatal(err)
	}
	return p
}

// DSN returns the URL of the server's database; for a server of
// OwnPostgresTLS, with sslmode=verify-full against its CA.
func (p *PostgresServer) DSN() string {
	if p.certs != nil {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/shepherd?sslmode=verify-full&sslrootcert=%s", p.port, p.certs.CA)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/shepherd?sslmode=disable", p.port)
}

// Certs returns the certificates of a server of OwnPostgresTLS, nil for
// others.
func (p *PostgresServer) Certs() *Certs { return p.certs }

// Kill kills the server with SIGKILL, as a crash would, and waits until
// it is gone. PostgreSQL recovers from its own log when started again.
func (p *PostgresServer) Kill() {
	p.t.Helper()
	if p.cur == nil {
		return
	}
	p.cur.kill()
	p.cur.log.Close()
	p.cur = nil
}

// Start starts the (killed) server again on the same data and port.
func (p *PostgresServer) Start() {
	p.t.Helper()
	srv, err := runPostgres(context.Background(), p.dir, p.data, p.port, p.who, p.certs, Options{})
	if err != nil {
		p.t.Fatal(err)
	}
	p.cur = srv
}

// postgresSettings returns the server's -c arguments: the tests' settings,
// made durable by opts.Durable, then opts.Settings.
func postgresSettings(opts Options) []string {
	set := settings{
		{"listen_addresses", "127.0.0.1"},
		// fsync=off loses nothing when only the server is killed (the
		// kernel keeps what was written), but synchronous_commit=off
		// would: a COMMIT acknowledged before its WAL was written is
		// gone after a SIGKILL. A replica must not lose what it
		// acknowledged (shepherd's log drops what every replica
		// committed), and the crash tests kill servers.
		{"fsync", "off"},
		{"synchronous_commit", "on"},
		{"full_page_writes", "off"},
		{"max_connections", "200"},
		{"TimeZone", "UTC"},
		{"logging_collector", "off"},
	}
	if opts.Durable {
		set.put("fsync", "on")
		set.put("synchronous_commit", "on")
		set.put("full_page_writes", "on")
	}
	set.putAll(opts.Settings)
	var args []string
	for _, kv := range set {
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	return args
}
