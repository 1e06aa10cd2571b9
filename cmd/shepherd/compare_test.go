package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/server"
)

// TestCheckRepairCommands runs 'shepherd check' and 'shepherd repair'
// against a running shepherd (three embedded SQLite replicas, as the
// default configuration) after a row was changed behind its back on one
// replica: check names it and exits 1, repair rewrites it and exits 0,
// and check then exits 0.
func TestCheckRepairCommands(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "shepherd.toml")
	conf := fmt.Sprintf(`listen = %q
data_dir = %q
f = 1

[repair]
mode = "off"

[[replicas]]
name = "lite1"
driver = "sqlite"
dsn = "lite1.db"

[[replicas]]
name = "lite2"
driver = "sqlite-cgo"
dsn = "lite2.db"

[[replicas]]
name = "lite3"
driver = "sqlite"
dsn = "lite3.db"
`, ln.Addr().String(), filepath.Join(dir, "data"))
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, driver.Names())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, s := range []string{
		"CREATE TABLE stock (sku text PRIMARY KEY, qty int NOT NULL, price numeric(8,2))",
		"INSERT INTO stock VALUES ('a-1', 5, 1.50), ('a-2', 7, 2.25), ('b-1', 0, NULL)",
	} {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	open, _ := driver.Lookup("sqlite-cgo")
	e, err := open(ctx, driver.Spec{Name: "lite2", DSN: "lite2.db", DataDir: cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, driver.Query{SQL: "UPDATE stock SET qty = 70 WHERE sku = 'a-2'", Verb: "UPDATE"}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	e.Close()

	cmd := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		code := run(args, &out, &errs)
		return code, out.String() + errs.String()
	}
	code, out := cmd("check", "--config", path)
	if code != 1 || !strings.Contains(out, "lite2\tstock\ta-2\tdiffers") {
		t.Fatalf("check: exit %d, want 1 naming lite2 stock a-2:\n%s", code, out)
	}
	code, out = cmd("repair", "--config", path, "--table", "stock")
	if code != 0 || !strings.Contains(out, "lite2\tstock\ta-2\tdiffers") || !strings.Contains(out, "\trepaired") {
		t.Fatalf("repair: exit %d, want 0 with the row repaired:\n%s", code, out)
	}
	code, out = cmd("check", "--config", path)
	if code != 0 || !strings.Contains(out, "the replicas agree") {
		t.Fatalf("check after repair: exit %d, want 0:\n%s", code, out)
	}
	code, out = cmd("check", "--config", path, "--table", "nothing")
	if code != 2 || !strings.Contains(out, "42P01") {
		t.Errorf("check of a missing table: exit %d, want 2 with 42P01:\n%s", code, out)
	}
	var qty int
	if err := c.QueryRow(ctx, "SELECT qty FROM stock WHERE sku = 'a-2'").Scan(&qty); err != nil || qty != 7 {
		t.Errorf("a-2 qty %d (%v), want 7", qty, err)
	}
}
