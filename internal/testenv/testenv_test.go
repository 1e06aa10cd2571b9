package testenv

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMain(m *testing.M) { Main(m) }

func TestPostgres(t *testing.T) {
	dsn := Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	res, err := c.Exec(ctx, "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace; SHOW server_version").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res[0].Rows[0][0]); got != "0" {
		t.Errorf("fresh database has %s tables", got)
	}
	if v := string(res[1].Rows[0][0]); v[:3] != "15." {
		t.Errorf("server_version = %s, want 15.x", v)
	}
	if dsn2 := Postgres(t); dsn2 == dsn {
		t.Errorf("two calls returned the same database %s", dsn)
	}
}

func TestMariaDB(t *testing.T) {
	dsn := MariaDB(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if want := "10.11."; len(version) < len(want) || version[:len(want)] != want {
		t.Errorf("VERSION() = %s, want %sx", version, want)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("fresh database has %d tables", n)
	}
}

// TestSettings checks the servers' command-line settings: the tests'
// defaults, Durable's, and Options.Settings over both.
func TestSettings(t *testing.T) {
	pg := strings.Join(postgresSettings(Options{}), " ")
	for _, want := range []string{"-c fsync=off", "-c synchronous_commit=on", "-c full_page_writes=off"} {
		if !strings.Contains(pg, want) {
			t.Errorf("tests' PostgreSQL settings lack %q: %s", want, pg)
		}
	}
	pg = strings.Join(postgresSettings(Options{Durable: true, Settings: map[string]string{"max_connections": "300", "shared_buffers": "256MB"}}), " ")
	for _, want := range []string{"-c fsync=on", "-c synchronous_commit=on", "-c full_page_writes=on", "-c max_connections=300", "-c shared_buffers=256MB"} {
		if !strings.Contains(pg, want) {
			t.Errorf("durable PostgreSQL settings lack %q: %s", want, pg)
		}
	}
	if strings.Contains(pg, "fsync=off") || strings.Contains(pg, "max_connections=200") {
		t.Errorf("a setting is given twice: %s", pg)
	}
	m := strings.Join(mariaSettings(Options{}), " ")
	if !strings.Contains(m, "--innodb-flush-log-at-trx-commit=2") || strings.Contains(m, "doublewrite") {
		t.Errorf("tests' MariaDB settings: %s", m)
	}
	m = strings.Join(mariaSettings(Options{Durable: true}), " ")
	if !strings.Contains(m, "--innodb-flush-log-at-trx-commit=1") || !strings.Contains(m, "--innodb-doublewrite=1") {
		t.Errorf("durable MariaDB settings: %s", m)
	}
}

// TestStartDurable starts a PostgreSQL and a MariaDB server of the
// benchmark's kind, durable, and asks each whether it syncs its commits;
// Stop removes their directories.
func TestStartDurable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg, err := StartPostgres(ctx, Options{Durable: true, Settings: map[string]string{"max_connections": "250"}})
	if err != nil {
		t.Fatal(err)
	}
	pgDir := pg.s.dir
	c, err := pgconn.Connect(ctx, pg.DSN)
	if err != nil {
		pg.Stop()
		t.Fatal(err)
	}
	res, err := c.Exec(ctx, "SHOW fsync; SHOW synchronous_commit; SHOW full_page_writes; SHOW max_connections").ReadAll()
	c.Close(ctx)
	pg.Stop()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		got = append(got, string(r.Rows[0][0]))
	}
	if strings.Join(got, " ") != "on on on 250" {
		t.Errorf("PostgreSQL fsync, synchronous_commit, full_page_writes, max_connections: %v", got)
	}
	if _, err := os.Stat(pgDir); !os.IsNotExist(err) {
		t.Errorf("PostgreSQL directory %s left after Stop: %v", pgDir, err)
	}

	m, err := StartMariaDB(ctx, Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var flush, doublewrite int
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit, @@innodb_doublewrite").Scan(&flush, &doublewrite); err != nil {
		t.Fatal(err)
	}
	if flush != 1 || doublewrite != 1 {
		t.Errorf("MariaDB innodb_flush_log_at_trx_commit %d, innodb_doublewrite %d", flush, doublewrite)
	}
}
