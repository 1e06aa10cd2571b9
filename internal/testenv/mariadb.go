package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The account tests use over TCP. root only logs in over the socket.
const (
	mariaUser     = "shepherd"
	mariaPassword = "shepherd-test"
)

// mariaServer is the running MariaDB server of this test binary.
type mariaServer struct {
	*server
	port   int
	socket string
}

var mariaOnce shared[*mariaServer]

// MariaDB returns the go-sql-driver/mysql DSN of a fresh, empty database
// on the test binary's MariaDB server (TCP on 127.0.0.1, a user with a
// password), starting the server on first use. The database is dropped
// when t ends.
func MariaDB(t testing.TB) string {
	t.Helper()
	requireMain(t)
	srv, err := mariaOnce.get(startMariaDB)
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
		if err := srv.exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Logf("testenv: drop database %s: %v", name, err)
		}
	})
	cfg := mysql.NewConfig()
	cfg.User = mariaUser
	cfg.Passwd = mariaPassword
	cfg.Net = "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", srv.port)
	cfg.DBName = name
	return cfg.FormatDSN()
}

// exec runs statements as root over the unix socket.
func (s *mariaServer) exec(ctx context.Context, stmts ...string) error {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = s.socket
	cfg.Timeout = 2 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// startMariaDB creates a data directory with mariadb-install-db and starts
// mariadbd on it, listening on 127.0.0.1 and on a socket in the temporary
// directory; then it creates the TCP account.
func startMariaDB() (_ *mariaServer, err error) {
	dir, data, port, who, err := initMariaDB()
	if err != nil {
		return nil, err
	}
	registered := false
	defer removeUnlessRegistered(dir, &registered)
	srv, err := runMariaDB(context.Background(), dir, data, port, who, nil, Options{})
	if err != nil {
		return nil, err
	}
	register(srv.server)
	registered = true
	if err := srv.createUser(context.Background()); err != nil {
		return nil, err
	}
	return srv, nil
}

// initMariaDB makes a data directory with mariadb-install-db and picks a
// port.
func initMariaDB() (dir, data string, port int, who runAs, err error) {
	installDB, err := findBinary("mariadb-server", "mariadb-install-db", "/usr/bin/mariadb-install-db")
	if err != nil {
		return "", "", 0, who, err
	}
	who, err = lookupRunAs("mysql")
	if err != nil {
		return "", "", 0, who, err
	}
	dir, err = who.makeDir("shepherd-maria-*")
	if err != nil {
		return "", "", 0, who, err
	}
	data = filepath.Join(dir, "data")
	err = who.run(installDB, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db",
		"--skip-name-resolve")
	if err != nil {
		return "", "", 0, who, err
	}
	port, err = freePort()
	return dir, data, port, who, err
}

// runMariaDB starts mariadbd on an initialised data directory and waits
// until it answers. With certs, it serves TLS with them and refuses TCP
// connections without it (require_secure_transport; the socket is
// secure enough).
func runMariaDB(ctx context.Context, dir, data string, port int, who runAs, certs *Certs, opts Options) (*mariaServer, error) {
	mariadbd, err := findBinary("mariadb-server", "mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	socket := filepath.Join(dir, "mysqld.sock")
	cmd := exec.Command(mariadbd, append([]string{"--no-defaults",
		"--datadir=" + data,
		"--port=" + fmt.Sprint(port),
		"--socket=" + socket,
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"),
		// Its own temporary files (a large aggregate's disk table) stay
		// in its directory, out of reach of whatever cleans /tmp.
		"--tmpdir=" + dir,
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--skip-log-bin",
	}, mariaSettings(opts)...)...)
	if certs != nil {
		cmd.Args = append(cmd.Args, "--ssl-cert="+certs.Cert, "--ssl-key="+certs.Key, "--ssl-ca="+certs.CA,
			"--require-secure-transport=ON")
	}
	s, err := startProcess("mariadbd", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	srv := &mariaServer{server: s, port: port, socket: socket}
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

// MariaDBServer is a MariaDB server of one test's own, which the test may
// kill and start again (crash tests).
type MariaDBServer struct {
	t    testing.TB
	dir  string
	data string
	port int
	who  runAs
	cur  *mariaServer
	// certs, for a server of OwnMariaDBTLS: it accepts TCP connections
	// over TLS only, with the server certificate of Certs.
	certs *Certs
}

// OwnMariaDB starts a MariaDB server for t alone, with a database
// "shepherd" and the TCP account. It is stopped and removed when t ends.
func OwnMariaDB(t testing.TB) *MariaDBServer {
	t.Helper()
	return ownMariaDB(t, false)
}

// OwnMariaDBTLS is OwnMariaDB for a server that accepts TCP connections
// over TLS only, with a server certificate for localhost and 127.0.0.1
// signed by a CA of its own (Certs).
func OwnMariaDBTLS(t testing.TB) *MariaDBServer {
	t.Helper()
	return ownMariaDB(t, true)
}

func ownMariaDB(t testing.TB, withTLS bool) *MariaDBServer {
	requireMain(t)
	dir, data, port, who, err := initMariaDB()
	if err != nil {
		t.Fatal(err)
	}
	m := &MariaDBServer{t: t, dir: dir, data: data, port: port, who: who}
	if withTLS {
		m.certs = NewCerts(t, dir)
		// The server runs as who and must read its key.
		for _, f := range []string{m.certs.Cert, m.certs.Key, m.certs.CA} {
			if err := os.Chown(f, who.uid, who.gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		if m.cur != nil {
			m.cur.stop()
		}
		_ = os.RemoveAll(dir)
	})
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = m.cur.exec(ctx, "CREATE DATABASE shepherd",
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", mariaUser, mariaPassword),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", mariaUser))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// DSN returns the go-sql-driver DSN of the server's database.
func (m *MariaDBServer) DSN() string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = mariaUser, mariaPassword, "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", m.port)
	cfg.DBName = "shepherd"
	return cfg.FormatDSN()
}

// Certs returns the certificates of a server of OwnMariaDBTLS, nil for
// others.
func (m *MariaDBServer) Certs() *Certs { return m.certs }

// Kill kills the server with SIGKILL and waits until it is gone.
func (m *MariaDBServer) Kill() {
	m.t.Helper()
	if m.cur == nil {
		return
	}
	m.cur.kill()
	m.cur.log.Close()
	m.cur = nil
}

// Start starts the (killed) server again on the same data and port.
func (m *MariaDBServer) Start() {
	m.t.Helper()
	srv, err := runMariaDB(context.Background(), m.dir, m.data, m.port, m.who, m.certs, Options{})
	if err != nil {
		m.t.Fatal(err)
	}
	m.cur = srv
}

// createUser creates the TCP account.
func (s *mariaServer) createUser(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := s.exec(ctx,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", mariaUser, mariaPassword),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", mariaUser))
	if err != nil {
		return fmt.Errorf("testenv: create MariaDB user: %w", err)
	}
	return nil
}

// mariaSettings returns the server's tuning arguments: the tests'
// settings, made durable by opts.Durable, then opts.Settings.
func mariaSettings(opts Options) []string {
	set := settings{
		{"innodb-buffer-pool-size", "64M"},
		// The log is written at each commit and flushed once a second:
		// a killed server loses nothing (the kernel has it), a crashed
		// machine may lose the last second.
		{"innodb-flush-log-at-trx-commit", "2"},
		{"max-connections", "300"},
		{"character-set-server", "utf8mb4"},
		{"collation-server", "utf8mb4_bin"},
	}
	if opts.Durable {
		set.put("innodb-flush-log-at-trx-commit", "1")
		set.put("innodb-doublewrite", "1")
	}
	set.putAll(opts.Settings)
	var args []string
	for _, kv := range set {
		args = append(args, "--"+kv[0]+"="+kv[1])
	}
	return args
}
