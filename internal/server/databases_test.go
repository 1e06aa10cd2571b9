package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// dbTarget is where the database scenario runs: real PostgreSQL 15 or a
// shepherd. connect opens a connection to a database by name.
type dbTarget struct {
	main    string
	connect func(db string) (*pgx.Conn, error)
}

// outcome is what a statement or a connection attempt gave, in a form
// comparable between PostgreSQL and shepherd.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		s := pe.Severity + " " + pe.Code + ": " + pe.Message
		if pe.Detail != "" {
			s += " | " + pe.Detail
		}
		return s
	}
	return "error: " + err.Error()
}

// databaseScenario runs CREATE DATABASE, DROP DATABASE and connections to
// them, and returns what each step gave. x and y are the names of
// databases that do not exist yet.
func databaseScenario(t *testing.T, tg dbTarget, x, y string) []string {
	ctx := context.Background()
	var got []string
	step := func(what string, err error) {
		got = append(got, what+" -> "+outcome(err))
	}
	query := func(c *pgx.Conn, q string) string {
		var v string
		err := c.QueryRow(ctx, q).Scan(&v)
		if err != nil {
			return outcome(err)
		}
		return v
	}
	exec := func(c *pgx.Conn, q string) error {
		_, err := c.Exec(ctx, q)
		return err
	}
	m, err := tg.connect(tg.main)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	mustExec(t, m, "CREATE TABLE items (a int PRIMARY KEY)")
	mustExec(t, m, "INSERT INTO items VALUES (1)")

	step("create x", exec(m, "CREATE DATABASE "+x))
	step("create x again", exec(m, "CREATE DATABASE "+x))
	step("begin", exec(m, "BEGIN"))
	step("create y in a block", exec(m, "CREATE DATABASE "+y))
	step("select in the failed block", exec(m, "SELECT 1"))
	step("rollback", exec(m, "ROLLBACK"))
	_, err = m.Exec(ctx, "SELECT 1; DROP DATABASE "+x, pgx.QueryExecModeSimpleProtocol)
	step("drop x in an implicit block", err)
	_, err = tg.connect("nosuch_" + y)
	step("connect to nosuch", err)
	_, err = tg.connect(y)
	step("connect to y (never created)", err)

	c, err := tg.connect(x)
	step("connect to x", err)
	if err != nil {
		return got
	}
	got = append(got, "x: select items -> "+query(c, "SELECT count(*)::text FROM items"))
	step("x: create items", exec(c, "CREATE TABLE items (a int PRIMARY KEY)"))
	step("x: insert", exec(c, "INSERT INTO items VALUES (2), (3)"))
	got = append(got, "x: items -> "+query(c, "SELECT string_agg(a::text, ',' ORDER BY a) FROM items"))
	got = append(got, "main: items -> "+query(m, "SELECT string_agg(a::text, ',' ORDER BY a) FROM items"))
	got = append(got, fmt.Sprintf("x: current_database() is x -> %v", query(c, "SELECT current_database()") == x))
	step("drop x from main while x is used", exec(m, "DROP DATABASE "+x))
	step("x: drop x", exec(c, "DROP DATABASE "+x))
	step("x: create y", exec(c, "CREATE DATABASE "+y))
	step("x: drop y", exec(c, "DROP DATABASE "+y))
	c.Close(ctx)
	step("drop x once closed", exec(m, "DROP DATABASE "+x))
	step("drop x again", exec(m, "DROP DATABASE "+x))
	step("drop x if exists", exec(m, "DROP DATABASE IF EXISTS "+x))
	_, err = tg.connect(x)
	step("connect to dropped x", err)
	step("create x anew", exec(m, "CREATE DATABASE "+x))
	c, err = tg.connect(x)
	step("connect to x anew", err)
	if err == nil {
		got = append(got, "new x: select items -> "+query(c, "SELECT count(*)::text FROM items"))
		c.Close(ctx)
	}
	step("drop x at the end", exec(m, "DROP DATABASE "+x))
	got = append(got, "main: items at the end -> "+query(m, "SELECT string_agg(a::text, ',' ORDER BY a) FROM items"))
	return got
}

// withDatabase returns the postgres:// URL dsn with its database changed.
func withDatabase(t *testing.T, dsn, db string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// TestDatabasesAsPostgres runs the same CREATE DATABASE, DROP DATABASE
// and connection sequence, with its errors (42P04, 25001, 25P02, 3D000,
// 55006 with DETAIL), on PostgreSQL 15 and on shepherd (the embedded
// default and a MariaDB + PostgreSQL + SQLite cbs cluster), and checks
// that each database's data is its own. On the cbs cluster it also checks
// that each replica's database exists while the database does and is
// gone after DROP.
func TestDatabasesAsPostgres(t *testing.T) {
	pgDSN := testenv.Postgres(t)
	u, _ := url.Parse(pgDSN)
	pgMain := strings.TrimPrefix(u.Path, "/")
	// Names unique on the shared PostgreSQL server: the test database's
	// counter prefix (t12_...).
	prefix, _, _ := strings.Cut(pgMain, "_")
	x, y := prefix+"_scratch", prefix+"_other"
	oracle := dbTarget{main: pgMain, connect: func(db string) (*pgx.Conn, error) {
		return pgx.Connect(context.Background(), withDatabase(t, pgDSN, db))
	}}
	want := databaseScenario(t, oracle, x, y)

	shep := func(addr string) dbTarget {
		return dbTarget{main: "app", connect: func(db string) (*pgx.Conn, error) {
			return pgx.Connect(context.Background(), fmt.Sprintf("postgres://app@%s/%s?sslmode=disable", addr, db))
		}}
	}
	compare := func(t *testing.T, got []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("shepherd and PostgreSQL 15 differ:\nshepherd:\n  %s\nPostgreSQL:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}

	t.Run("embedded", func(t *testing.T) {
		cfg := embedded(t)
		cfg.Database = "app"
		addr, _ := start(t, cfg)
		compare(t, databaseScenario(t, shep(addr), x, y))
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "databases", x)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dropped database's directory is still there: %v", err)
		}
	})

	t.Run("cbs", func(t *testing.T) {
		cfg := realCluster(t, "cbs")
		cfg.Database = "app"
		addr, srv := start(t, cfg)
		tg := shep(addr)
		compare(t, databaseScenario(t, tg, x, y))

		// Each replica's database exists while the database does.
		m, err := tg.connect("app")
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close(context.Background())
		mustExec(t, m, "CREATE DATABASE "+x)
		if srv.Database(x) == nil {
			t.Fatal("no server for the created database")
		}
		checkReplicaDatabases(t, cfg, x, true)
		mustExec(t, m, "DROP DATABASE "+x)
		checkReplicaDatabases(t, cfg, x, false)
	})
}

// checkReplicaDatabases checks that every replica's database for the
// created database name exists (or, want false, does not), asking each
// engine itself.
func checkReplicaDatabases(t *testing.T, cfg *config.Config, name string, want bool) {
	t.Helper()
	ctx := context.Background()
	mcfg, err := mysqldrv.ParseDSN(cfg.Replicas[0].DSN)
	if err != nil {
		t.Fatal(err)
	}
	my, err := sql.Open("mysql", cfg.Replicas[0].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	var n int
	if err := my.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", mcfg.DBName+"_"+name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if (n == 1) != want {
		t.Errorf("MariaDB database %s_%s: %d found, want exists=%v", mcfg.DBName, name, n, want)
	}
	pg, err := pgx.Connect(ctx, cfg.Replicas[1].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	u, _ := url.Parse(cfg.Replicas[1].DSN)
	pgName := strings.TrimPrefix(u.Path, "/") + "_" + name
	var collate string
	err = pg.QueryRow(ctx, "SELECT datcollate FROM pg_database WHERE datname = $1", pgName).Scan(&collate)
	if errors.Is(err, pgx.ErrNoRows) {
		if want {
			t.Errorf("PostgreSQL database %s missing", pgName)
		}
	} else if err != nil {
		t.Fatal(err)
	} else if !want {
		t.Errorf("PostgreSQL database %s still there", pgName)
	} else if collate != "C" {
		t.Errorf("PostgreSQL database %s has collation %q, want C", pgName, collate)
	}
	_, err = os.Stat(filepath.Join(cfg.DataDir, "databases", name, "lite.db"))
	if want && err != nil {
		t.Errorf("SQLite file of %s: %v", name, err)
	}
	if !want && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SQLite file of %s still there: %v", name, err)
	}
}

// TestDatabasesRestart checks that a created database, and its data,
// outlive a restart of shepherd, and that a dropped one stays gone.
func TestDatabasesRestart(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Database = "app"
	addr, _, stop := startServer(t, cfg)
	m := connect(t, addr, "app")
	mustExec(t, m, "CREATE DATABASE kept")
	mustExec(t, m, "CREATE DATABASE gone")
	k := connect(t, addr, "kept")
	mustExec(t, k, "CREATE TABLE items (a int PRIMARY KEY, b text)")
	mustExec(t, k, "INSERT INTO items VALUES (1, 'one'), (2, 'two')")
	k.Close(context.Background())
	mustExec(t, m, "DROP DATABASE gone")
	m.Close(context.Background())
	stop()

	addr, _ = start(t, cfg)
	k = connect(t, addr, "kept")
	var got string
	if err := k.QueryRow(context.Background(), "SELECT string_agg(b, ',' ORDER BY a) FROM items").Scan(&got); err != nil || got != "one,two" {
		t.Fatalf("after restart: %q, %v; want one,two", got, err)
	}
	mustExec(t, k, "INSERT INTO items VALUES (3, 'three')")
	_, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://app@%s/gone?sslmode=disable", addr))
	if sqlstate(err) != "3D000" {
		t.Errorf("connecting to the dropped database after restart: %v, want 3D000", err)
	}
	checkReplicaDatabases(t, cfg, "gone", false)
	checkReplicaDatabases(t, cfg, "kept", true)
}

// TestCreateDatabaseReplicaFails checks that a CREATE DATABASE one
// replica cannot carry out is refused and undone on every replica: here
// the PostgreSQL replica's user may not create databases, so the MariaDB
// database made before it is dropped again and nothing is recorded. A
// replica database that exists already (not made by shepherd) refuses
// the CREATE before anything is made.
func TestCreateDatabaseReplicaFails(t *testing.T) {
	ctx := context.Background()
	cfg := realCluster(t, "cbs")
	cfg.Database = "app"
	pgDSN := cfg.Replicas[1].DSN
	u, _ := url.Parse(pgDSN)
	base := strings.TrimPrefix(u.Path, "/")
	role := base + "_nocreate"
	su, err := pgx.Connect(ctx, pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	mustExec(t, su, "CREATE ROLE "+role+" LOGIN NOCREATEDB")
	t.Cleanup(func() {
		// The test database (and its grants) is dropped after this
		// cleanup runs; revoke first so the role can go.
		c, err := pgx.Connect(context.Background(), pgDSN)
		if err == nil {
			c.Exec(context.Background(), "DROP OWNED BY "+role)
			c.Exec(context.Background(), "DROP ROLE "+role)
			c.Close(context.Background())
		}
	})
	mustExec(t, su, "GRANT ALL ON SCHEMA public TO "+role)
	u.User = url.User(role)
	cfg.Replicas[1].DSN = u.String()

	addr, srv := start(t, cfg)
	m := connect(t, addr, "app")
	_, err = m.Exec(ctx, "CREATE DATABASE scratch")
	if sqlstate(err) != "58000" || !strings.Contains(err.Error(), "replica pg could not create") {
		t.Fatalf("CREATE DATABASE with a replica that cannot: %v, want 58000 naming replica pg", err)
	}
	checkReplicaDatabases(t, cfg, "scratch", false) // MariaDB's was undone
	if srv.Database("scratch") != nil {
		t.Error("a server for the refused database")
	}
	if b, err := os.ReadFile(filepath.Join(cfg.DataDir, "databases.json")); err == nil && strings.Contains(string(b), "scratch") {
		t.Errorf("databases.json records the refused database: %s", b)
	}
	if _, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/scratch?sslmode=disable", addr)); sqlstate(err) != "3D000" {
		t.Errorf("connecting to the refused database: %v, want 3D000", err)
	}

	// A replica database shepherd did not make is never adopted.
	mustExec(t, su, "CREATE DATABASE "+base+"_taken")
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pgDSN)
		if err == nil {
			c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+base+"_taken")
			c.Close(context.Background())
		}
	})
	_, err = m.Exec(ctx, "CREATE DATABASE taken")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P04" || !strings.Contains(pe.Detail, "Replica pg") {
		t.Fatalf("CREATE DATABASE over a foreign replica database: %v, want 42P04 with a DETAIL naming replica pg", err)
	}
	if err := su.QueryRow(ctx, "SELECT 1 FROM pg_database WHERE datname = $1", base+"_taken").Scan(new(int)); err != nil {
		t.Errorf("the foreign database is gone: %v", err)
	}
}

// TestCreateDatabaseInterrupted checks that a CREATE DATABASE shepherd
// stopped in the middle of (databases.json says "creating") is undone at
// the next start: the replica databases it made are dropped and the
// database does not exist; and that a DROP DATABASE stopped in the middle
// ("dropping") is finished.
func TestCreateDatabaseInterrupted(t *testing.T) {
	ctx := context.Background()
	cfg := realCluster(t, "cbs")
	cfg.Database = "app"
	mcfg, err := mysqldrv.ParseDSN(cfg.Replicas[0].DSN)
	if err != nil {
		t.Fatal(err)
	}
	my, err := sql.Open("mysql", cfg.Replicas[0].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer my.Close()
	if _, err := my.ExecContext(ctx, "CREATE DATABASE `"+mcfg.DBName+"_half`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { my.Exec("DROP DATABASE IF EXISTS `" + mcfg.DBName + "_half`") })
	// And a DROP DATABASE stopped after the database was marked
	// dropping, with its replica databases all still there.
	if _, err := my.ExecContext(ctx, "CREATE DATABASE `"+mcfg.DBName+"_halfdrop`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { my.Exec("DROP DATABASE IF EXISTS `" + mcfg.DBName + "_halfdrop`") })
	u, _ := url.Parse(cfg.Replicas[1].DSN)
	pg, err := pgx.Connect(ctx, cfg.Replicas[1].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	mustExec(t, pg, "CREATE DATABASE "+strings.TrimPrefix(u.Path, "/")+"_halfdrop")
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "databases", "halfdrop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "databases", "halfdrop", "lite.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	checkReplicaDatabases(t, cfg, "halfdrop", true)
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "databases.json"), []byte(`{"databases":[{"name":"half","state":"creating"},{"name":"halfdrop","state":"dropping"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, _ := start(t, cfg)
	checkReplicaDatabases(t, cfg, "half", false)
	checkReplicaDatabases(t, cfg, "halfdrop", false)
	if b, err := os.ReadFile(filepath.Join(cfg.DataDir, "databases.json")); err != nil || strings.Contains(string(b), "half") {
		t.Errorf("databases.json after start: %s, %v; want both forgotten", b, err)
	}
	if _, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/half?sslmode=disable", addr)); sqlstate(err) != "3D000" {
		t.Errorf("connecting to the interrupted database: %v, want 3D000", err)
	}
	m := connect(t, addr, "app")
	mustExec(t, m, "CREATE DATABASE half") // the name is free again
	checkReplicaDatabases(t, cfg, "half", true)
}

// TestReplicaDatabaseNames checks the replica databases a created
// database gets: PostgreSQL URL and keyword DSNs and MariaDB DSNs pointed
// at <configured database>_<name> on the same server, SQLite files in
// the database's directory (an absolute path too), and names too long for
// an engine refused with 0A000.
func TestReplicaDatabaseNames(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{DataDir: dir, Replicas: []config.Replica{
		{Name: "pgurl", Driver: "postgres", DSN: "postgres://u@127.0.0.1:5432/app?sslmode=disable"},
		{Name: "pgkw", Driver: "postgres", DSN: "host=127.0.0.1 user=u dbname=app"},
		{Name: "maria", Driver: "mysql", DSN: "u:pw@tcp(127.0.0.1:3306)/app"},
		{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		{Name: "abs", Driver: "sqlite-cgo", DSN: "/somewhere/else/abs.db"},
	}}
	dbs := &databases{top: &Server{cfg: cfg}}
	specs, err := dbs.specs("scratch")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ dsn, engineDB string }{
		{"postgres://u@127.0.0.1:5432/app_scratch?sslmode=disable", "app_scratch"},
		{"host=127.0.0.1 user=u dbname=app dbname=app_scratch", "app_scratch"},
		{"u:pw@tcp(127.0.0.1:3306)/app_scratch", "app_scratch"},
		{"lite.db", filepath.Join(dir, "databases", "scratch", "lite.db")},
		{"abs.db", filepath.Join(dir, "databases", "scratch", "abs.db")},
	}
	for i, w := range want {
		if specs[i].dsn != w.dsn || specs[i].engineDB != w.engineDB || specs[i].adminDSN != cfg.Replicas[i].DSN {
			t.Errorf("%s: %+v, want dsn %s, database %s", cfg.Replicas[i].Name, specs[i], w.dsn, w.engineDB)
		}
	}
	sub := dbs.subConfig("scratch", specs)
	if sub.DataDir != filepath.Join(dir, "databases", "scratch") || sub.Replicas[2].DSN != want[2].dsn || cfg.Replicas[2].DSN == want[2].dsn {
		t.Errorf("subConfig: %+v (the configuration's own replicas must stay as they are)", sub)
	}
	var pe *pgerr.Error
	if _, err := dbs.specs(strings.Repeat("n", 60)); !errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported {
		t.Errorf("a name too long for an engine: %v, want 0A000", err)
	}
}

// TestDatabasesAnyName checks the configuration without a database name
// (the embedded default's): every name that is not a created database
// reaches the configured one, as before, and created databases are
// still their own.
func TestDatabasesAnyName(t *testing.T) {
	ctx := context.Background()
	addr, srv := start(t, embedded(t))
	a := connect(t, addr, "whatever")
	mustExec(t, a, "CREATE TABLE items (a int PRIMARY KEY)")
	mustExec(t, a, "INSERT INTO items VALUES (1)")
	b := connect(t, addr, "postgres")
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil || n != 1 {
		t.Fatalf("another name reaches the configured database: %d, %v", n, err)
	}
	if _, err := a.Exec(ctx, "CREATE DATABASE whatever"); sqlstate(err) != "42P04" {
		t.Errorf("CREATE DATABASE of the session's own database: %v, want 42P04", err)
	}
	if _, err := a.Exec(ctx, "DROP DATABASE whatever"); sqlstate(err) != "55006" {
		t.Errorf("DROP DATABASE of the session's own database: %v, want 55006", err)
	}
	mustExec(t, a, "CREATE DATABASE scratch")
	if got := srv.dbs.DatabaseNames("whatever"); strings.Join(got, ",") != "whatever,scratch" {
		t.Errorf("DatabaseNames from whatever: %q", got)
	}
	if got := srv.dbs.DatabaseNames("scratch"); strings.Join(got, ",") != "scratch" {
		t.Errorf("DatabaseNames from scratch: %q", got)
	}
	s := connect(t, addr, "scratch")
	if _, err := s.Exec(ctx, "SELECT count(*) FROM items"); sqlstate(err) != "42P01" {
		t.Errorf("the configured database's table seen from a created one: %v, want 42P01", err)
	}
	s.Close(ctx)
	mustExec(t, b, "DROP DATABASE scratch")
}
