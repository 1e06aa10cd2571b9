package testenv

import (
	"context"
	"fmt"
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
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, database)
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
	initdb, err := findBinary("postgresql-15", filepath.Join(postgresBin, "initdb"))
	if err != nil {
		return nil, err
	}
	postgres, err := findBinary("postgresql-15", filepath.Join(postgresBin, "postgres"))
	if err != nil {
		return nil, err
	}
	who, err := lookupRunAs("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := who.makeDir("shepherd-pg-*")
	if err != nil {
		return nil, err
	}
	registered := false
	defer removeUnlessRegistered(dir, &registered)
	data := filepath.Join(dir, "data")
	err = who.run(initdb, "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(postgres, "-D", data,
		"-p", fmt.Sprint(port),
		"-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "TimeZone=UTC",
		"-c", "logging_collector=off")
	s, err := startProcess("postgres", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	register(s)
	registered = true
	srv := &pgServer{server: s, port: port}
	err = s.waitReady(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.exec(ctx, "SELECT 1")
	})
	if err != nil {
		return nil, err
	}
	return srv, nil
}
