package testenv

import (
	"context"
	"database/sql"
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
