package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestAdminConsoleForAdminsOnly: with users configured, only a user marked
// admin opens the admin console; any other gets PostgreSQL's answer to a
// user without CONNECT on a database (FATAL 42501, checked against
// PostgreSQL 15), and keeps its access to the data.
func TestAdminConsoleForAdminsOnly(t *testing.T) {
	cfg := embedded(t)
	cfg.Users = []config.User{{Name: "app", Password: "apppw"}, {Name: "ops", Password: "opspw", Admin: true}}
	addr, _ := start(t, cfg)
	ctx := context.Background()
	dial := func(user, pw, db string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", user, pw, addr, db))
		if err == nil {
			t.Cleanup(func() { c.Close(ctx) })
		}
		return c, err
	}
	_, err := dial("app", "apppw", "shepherd")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" || pe.Severity != "FATAL" ||
		pe.Message != `permission denied for database "shepherd"` || pe.Detail != "User does not have CONNECT privilege." {
		t.Fatalf("non-admin on the admin console: %v, want FATAL 42501", err)
	}
	// PostgreSQL 15 says the same to a user without CONNECT on a database
	// (its database here is named shepherd too).
	pg := testenv.OwnPostgres(t)
	root, err := pgx.Connect(ctx, pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close(ctx)
	mustExec(t, root, "CREATE ROLE app LOGIN")
	mustExec(t, root, "REVOKE CONNECT ON DATABASE shepherd FROM PUBLIC")
	_, err = pgx.Connect(ctx, strings.Replace(pg.DSN(), "postgres@", "app@", 1))
	var want *pgconn.PgError
	if !errors.As(err, &want) {
		t.Fatalf("PostgreSQL: %v", err)
	}
	if pe.Severity != want.Severity || pe.Code != want.Code || pe.Message != want.Message || pe.Detail != want.Detail {
		t.Errorf("shepherd: %s %s %s (%s)\nPostgreSQL: %s %s %s (%s)", pe.Severity, pe.Code, pe.Message, pe.Detail,
			want.Severity, want.Code, want.Message, want.Detail)
	}
	c, err := dial("app", "apppw", "app")
	if err != nil {
		t.Fatal(err)
	}
	assertCount(t, c, "SELECT 1", 1)
	a, err := dial("ops", "opspw", "shepherd")
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := a.QueryRow(ctx, "SHOW MODE", pgx.QueryExecModeSimpleProtocol).Scan(&mode); err != nil || mode != "cbs" {
		t.Fatalf("admin's SHOW MODE: %q, %v", mode, err)
	}
}

// TestReservedForAdmins: the last reserved_connections slots of
// max_connections are kept for admin users, as PostgreSQL keeps
// superuser_reserved_connections: another user is told 53300 there, an
// admin gets in and reaches the admin console.
func TestReservedForAdmins(t *testing.T) {
	cfg := embedded(t)
	cfg.Users = []config.User{{Name: "app", Password: "apppw"}, {Name: "ops", Password: "opspw", Admin: true}}
	cfg.MaxConnections, cfg.ReservedConnections = 2, new(1)
	addr, _ := start(t, cfg)
	ctx := context.Background()
	url := func(user, pw, db string) string {
		return fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", user, pw, addr, db)
	}
	c, err := pgx.Connect(ctx, url("app", "apppw", "app"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	_, err = pgx.Connect(ctx, url("app", "apppw", "app"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != "remaining connection slots are reserved for admin users" {
		t.Fatalf("app in the reserve: %v", err)
	}
	// The refused connection gives its slot back on its way out, on the
	// server's own time: the admin tries until it is in.
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, err := pgx.Connect(ctx, url("ops", "opspw", "shepherd"))
		if err == nil {
			defer a.Close(ctx)
			var mode string
			if err := a.QueryRow(ctx, "SHOW MODE", pgx.QueryExecModeSimpleProtocol).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			break
		}
		if sqlstate(err) != "53300" || time.Now().After(deadline) {
			t.Fatalf("admin in the reserve: %v", err)
		}
	}
	assertCount(t, c, "SELECT 1", 1)
}

// TestTLSFromConfig: [tls] reaches the front: with require, pgx gets in
// with sslmode=require through TLS and is refused in the clear (28000);
// max_connections caps the clients (53300) while the service goes on.
func TestTLSFromConfig(t *testing.T) {
	cfg := embedded(t)
	certs := testenv.NewCerts(t, t.TempDir())
	cfg.TLS.Cert, cfg.TLS.Key = certs.Cert, certs.Key
	cfg.TLS.Require = true
	cfg.MaxConnections = 2
	addr, _ := start(t, cfg)
	ctx := context.Background()
	url := func(mode string) string { return fmt.Sprintf("postgres://app@%s/app?sslmode=%s", addr, mode) }
	_, err := pgx.Connect(ctx, url("disable"))
	if code := sqlstate(err); code != "28000" {
		t.Fatalf("in the clear: %v, want 28000", err)
	}
	var conns []*pgx.Conn
	for range 2 {
		c, err := pgx.Connect(ctx, url("require"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		conns = append(conns, c)
	}
	_, err = pgx.Connect(ctx, url("require"))
	if code := sqlstate(err); code != "53300" || !strings.Contains(err.Error(), "sorry, too many clients already") {
		t.Fatalf("third client: %v, want 53300", err)
	}
	for _, c := range conns {
		assertCount(t, c, "SELECT 1", 1)
	}
}

// TestReplicaTLSPostgres: a PostgreSQL replica that accepts TLS
// connections only is reached through the DSN's TLS settings (URL with
// sslmode=verify-full and sslrootcert, and the keyword form), and
// statements run on it; a DSN in the clear, or verifying against another
// CA, cannot open it, and start-up names the replica.
func TestReplicaTLSPostgres(t *testing.T) {
	pg := testenv.OwnPostgresTLS(t)
	host, port, _ := strings.Cut(strings.TrimPrefix(strings.Split(pg.DSN(), "/shepherd")[0], "postgres://postgres@"), ":")
	keyword := fmt.Sprintf("host=%s port=%s user=postgres dbname=shepherd sslmode=verify-full sslrootcert=%s", host, port, pg.Certs().CA)
	cfgFor := func(dsn string) *config.Config {
		return &config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "passthrough",
			Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: dsn}}}
	}
	for i, dsn := range []string{pg.DSN(), keyword} {
		addr, _ := start(t, cfgFor(dsn))
		c := connect(t, addr, "app")
		table := fmt.Sprintf("t%d", i)
		mustExec(t, c, "CREATE TABLE "+table+" (id int PRIMARY KEY, v text)")
		mustExec(t, c, "INSERT INTO "+table+" VALUES (1, 'one'), (2, 'two')")
		assertCount(t, c, "SELECT count(*) FROM "+table, 2)
	}
	other := testenv.NewCerts(t, t.TempDir())
	for _, dsn := range []string{
		strings.Replace(pg.DSN(), "sslmode=verify-full", "sslmode=disable", 1),
		strings.Replace(pg.DSN(), pg.Certs().CA, other.CA, 1),
	} {
		cfg := cfgFor(dsn)
		if err := cfg.Check([]string{"postgres"}); err != nil {
			t.Fatal(err)
		}
		srv, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err == nil {
			srv.closeAll()
			t.Fatalf("%s: opened", dsn)
		}
		t.Logf("%s: %v", dsn, err)
		if !strings.Contains(err.Error(), "replicas[0] (pg)") {
			t.Errorf("%s: %v does not name the replica", dsn, err)
		}
	}
}

// TestReplicaTLSMariaDB: a MariaDB replica that takes TCP connections over
// TLS only (require_secure_transport) is reached with tls-ca (the server's
// certificate checked against that CA and its name; the path escaped as
// every go-sql-driver parameter value) and with
// go-sql-driver's tls=skip-verify; without TLS, or against another CA,
// start-up fails naming the replica.
func TestReplicaTLSMariaDB(t *testing.T) {
	maria := testenv.OwnMariaDBTLS(t)
	with := func(param string) string {
		if strings.Contains(maria.DSN(), "?") {
			return maria.DSN() + "&" + param
		}
		return maria.DSN() + "?" + param
	}
	cfgFor := func(dsn string) *config.Config {
		return &config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "passthrough",
			Replicas: []config.Replica{{Name: "maria", Driver: "mysql", DSN: dsn}}}
	}
	for i, dsn := range []string{with("tls-ca=" + url.QueryEscape(maria.Certs().CA)), with("tls=skip-verify")} {
		addr, _ := start(t, cfgFor(dsn))
		c := connect(t, addr, "app")
		table := fmt.Sprintf("t%d", i)
		mustExec(t, c, "CREATE TABLE "+table+" (id int PRIMARY KEY, v text)")
		mustExec(t, c, "INSERT INTO "+table+" VALUES (1, 'one'), (2, 'two')")
		assertCount(t, c, "SELECT count(*) FROM "+table, 2)
	}
	other := testenv.NewCerts(t, t.TempDir())
	for _, dsn := range []string{maria.DSN(), with("tls-ca=" + url.QueryEscape(other.CA)),
		with("tls=skip-verify&tls-ca=" + url.QueryEscape(maria.Certs().CA))} {
		cfg := cfgFor(dsn)
		if err := cfg.Check([]string{"mysql"}); err != nil {
			t.Fatal(err)
		}
		srv, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err == nil {
			srv.closeAll()
			t.Fatalf("%s: opened", dsn)
		}
		t.Logf("%s: %v", dsn, err)
		if !strings.Contains(err.Error(), "replicas[0] (maria)") {
			t.Errorf("%s: %v does not name the replica", dsn, err)
		}
	}
}

// TestPlaintextRefusedAsPostgres: with [tls] require, a client in the
// clear is told what a PostgreSQL 15 whose pg_hba.conf has hostssl lines
// only tells it: FATAL 28000, the same message.
func TestPlaintextRefusedAsPostgres(t *testing.T) {
	pg := testenv.OwnPostgresTLS(t)
	pgAddr := strings.TrimPrefix(strings.Split(pg.DSN(), "/shepherd")[0], "postgres://postgres@")
	cfg := embedded(t)
	certs := testenv.NewCerts(t, t.TempDir())
	cfg.TLS.Cert, cfg.TLS.Key, cfg.TLS.Require = certs.Cert, certs.Key, true
	addr, _ := start(t, cfg)
	ctx := context.Background()
	refusal := func(addr string) *pgconn.PgError {
		_, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s in the clear: %v", addr, err)
		}
		return pe
	}
	want, got := refusal(pgAddr), refusal(addr)
	if got.Severity != want.Severity || got.Code != want.Code || got.Message != want.Message {
		t.Errorf("shepherd: %s %s %s\nPostgreSQL: %s %s %s", got.Severity, got.Code, got.Message, want.Severity, want.Code, want.Message)
	}
}
