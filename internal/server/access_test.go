package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestAdminConsoleForAdminsOnly: with users configured, only a user marked
// admin opens the admin console; any other gets PostgreSQL's answer to a
// user without CONNECT on a database (FATAL 42501), and keeps its access
// to the data.
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
