package testenv

import (
	"context"
	"database/sql"
	"fmt"
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
	const pkg = "mariadb-server"
	installDB, err := findBinary(pkg, "mariadb-install-db", "/usr/bin/mariadb-install-db")
	if err != nil {
		return nil, err
	}
	mariadbd, err := findBinary(pkg, "mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	who, err := lookupRunAs("mysql")
	if err != nil {
		return nil, err
	}
	dir, err := who.makeDir("shepherd-maria-*")
	if err != nil {
		return nil, err
	}
	registered := false
	defer removeUnlessRegistered(dir, &registered)
	data := filepath.Join(dir, "data")
	err = who.run(installDB, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db",
		"--skip-name-resolve")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	socket := filepath.Join(dir, "mysqld.sock")
	cmd := exec.Command(mariadbd, "--no-defaults",
		"--datadir="+data,
		"--port="+fmt.Sprint(port),
		"--socket="+socket,
		"--pid-file="+filepath.Join(dir, "mysqld.pid"),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--skip-log-bin",
		"--innodb-buffer-pool-size=64M",
		"--innodb-flush-log-at-trx-commit=2",
		"--max-connections=300",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_bin")
	s, err := startProcess("mariadbd", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	register(s)
	registered = true
	srv := &mariaServer{server: s, port: port, socket: socket}
	err = s.waitReady(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.exec(ctx, "SELECT 1")
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = srv.exec(ctx,
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", mariaUser, mariaPassword),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", mariaUser))
	if err != nil {
		return nil, fmt.Errorf("testenv: create MariaDB user: %w", err)
	}
	return srv, nil
}
