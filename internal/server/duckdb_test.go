package server

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestEmbeddedDiverse runs the diverse embedded cluster (two SQLite builds
// and DuckDB) through the constructs DuckDB's text is rewritten for: the
// answers are PostgreSQL's, every replica stays up with no mismatch, and
// the replicas end with the same rows.
func TestEmbeddedDiverse(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	for _, sql := range []string{
		"CREATE TABLE emp (id int PRIMARY KEY, name text NOT NULL, boss int REFERENCES emp (id), code char(3), pay numeric(10,2))",
		// Employees and their bosses in one statement: DuckDB gets one
		// INSERT per row.
		"INSERT INTO emp (id, name, boss, code, pay) VALUES (1, 'Ada', NULL, 'a', 10.50), (2, 'Bob', 1, 'b', 7), (3, 'Cé', 1, NULL, 3.25)",
		"CREATE TABLE scratch1 (id int PRIMARY KEY)",
		"CREATE TABLE scratch2 (id int PRIMARY KEY)",
		"DROP TABLE scratch1, scratch2",
	} {
		mustExec(t, c, sql)
	}
	var got []string
	rows, err := c.Query(ctx, `SELECT name || ':' || upper(name) || ':' || (id / 2)::text || ':' || (name LIKE 'A\_%')::text
		FROM emp WHERE (boss, id) >= (1, 2) OR boss IS NULL ORDER BY id`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"Ada:ADA:0:false", "Bob:BOB:1:false", "Cé:Cé:1:false"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
	for _, sql := range []string{"SELECT 1 / (id - id) FROM emp", "SELECT mod(id, 0) FROM emp"} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != "22012" {
			t.Errorf("%s: %v, want 22012", sql, err)
		}
	}
	// DuckDB has no savepoints; its driver makes them
	// (TestEmbeddedDiverseSavepoints).
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "SAVEPOINT s")
	mustExec(t, c, "INSERT INTO emp (id, name) VALUES (4, 'Dee')")
	mustExec(t, c, "ROLLBACK TO SAVEPOINT s")
	mustExec(t, c, "COMMIT")
	idle, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// TestEmbeddedDiverseAssignments: what DuckDB would store otherwise than
// PostgreSQL is refused on the diverse embedded cluster (0A000): a float
// stored into a numeric column (DuckDB rounds the binary value, 1.005 to
// 1.00, PostgreSQL its shortest decimal, to 1.01). A numeric stored
// there is stored alike.
func TestEmbeddedDiverseAssignments(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, _ := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE dn (id int PRIMARY KEY, n numeric(5,2), f float8)")
	mustExec(t, c, "INSERT INTO dn VALUES (1, 1.005, 1.005)")
	for _, sql := range []string{
		"UPDATE dn SET n = f",
		"INSERT INTO dn (id, n) VALUES (2, 1.005::float8)",
		"INSERT INTO dn (id, n) SELECT 3, f FROM dn WHERE id = 1",
	} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != "0A000" {
			t.Errorf("%s: %v; want 0A000", sql, err)
		}
	}
	var n string
	if err := c.QueryRow(ctx, "SELECT n::text FROM dn WHERE id = 1").Scan(&n); err != nil || n != "1.01" {
		t.Errorf("numeric 1.005 stored into numeric(5,2): %q, %v; want 1.01", n, err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// TestEmbeddedDiverseVarchar: DuckDB's varchar has no length, and a
// varchar(n) column of the diverse embedded cluster holds its values as
// PostgreSQL's does all the same: a longer value fails with 22001 unless
// only spaces are beyond n (then it is cut), from VALUES, UPDATE, ON
// CONFLICT DO UPDATE and INSERT ... SELECT alike, and a cast to
// varchar(n) cuts the text. Every replica ends with the same rows.
func TestEmbeddedDiverseVarchar(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE dv (id int PRIMARY KEY, v varchar(3), w text)")
	for _, sql := range []string{
		"INSERT INTO dv VALUES (1, 'abc', 'abcdef'), (2, 'xy   ', 'é')",
		"INSERT INTO dv (id, v) VALUES (3, 'éèê  ')",
		"INSERT INTO dv (v, id) SELECT w, id + 10 FROM dv WHERE id = 2",
		"UPDATE dv SET v = v || ' ' WHERE id = 1",
		"INSERT INTO dv VALUES (1, 'q') ON CONFLICT (id) DO UPDATE SET v = excluded.v || '  '",
	} {
		mustExec(t, c, sql)
	}
	for _, sql := range []string{
		"INSERT INTO dv VALUES (4, 'abcd')",
		"INSERT INTO dv (id, v) SELECT 5, w FROM dv WHERE id = 1",
		"UPDATE dv SET v = v || 'x' WHERE id = 2",
		"INSERT INTO dv VALUES (1, 'q') ON CONFLICT (id) DO UPDATE SET v = 'long'",
	} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != "22001" {
			t.Errorf("%s: %v; want 22001", sql, err)
		}
	}
	var got string
	if err := c.QueryRow(ctx, "SELECT string_agg(id || '=' || v || '/' || length(v), ',' ORDER BY id) || ':' || 'abcdef'::varchar(4) FROM dv").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1=q  /3,2=xy /3,3=éèê/3,12=é/1:abcd"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	idle, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// TestEmbeddedDiverseForeignKeyActions: the DuckDB replica has no
// foreign keys, and its rows follow PostgreSQL's ON DELETE CASCADE and
// SET NULL all the same (down a chain, with RETURNING, inside a
// transaction and out), and a DELETE a key without action forbids fails
// (23503) with nothing deleted; ADD COLUMN ... NOT NULL DEFAULT fills
// the column. Every replica ends with the same rows.
func TestEmbeddedDiverseForeignKeyActions(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	for _, sql := range []string{
		"CREATE TABLE fp (id int PRIMARY KEY)",
		"CREATE TABLE fc (id int PRIMARY KEY, pid int REFERENCES fp ON DELETE CASCADE)",
		"CREATE TABLE fg (id int PRIMARY KEY, cid int REFERENCES fc (id) ON DELETE SET NULL)",
		"CREATE TABLE fn (id int PRIMARY KEY, pid int REFERENCES fp (id))",
		"INSERT INTO fp VALUES (1), (2), (3)",
		"INSERT INTO fc VALUES (10, 1), (11, 1), (20, 2), (30, NULL)",
		"INSERT INTO fg VALUES (100, 10), (101, 20), (102, NULL)",
		"INSERT INTO fn VALUES (7, 3)",
		"DELETE FROM fp WHERE id = 1",
		"BEGIN",
		"DELETE FROM fp WHERE id = 2 RETURNING id",
		"COMMIT",
		"ALTER TABLE fc ADD COLUMN flag int NOT NULL DEFAULT 5",
	} {
		mustExec(t, c, sql)
	}
	if _, err := c.Exec(ctx, "DELETE FROM fp WHERE id = 3"); sqlstate(err) != "23503" {
		t.Errorf("DELETE of a row a key without action references: %v; want 23503", err)
	}
	var got string
	if err := c.QueryRow(ctx, `SELECT (SELECT string_agg(id || ':' || coalesce(pid::text, '-') || ':' || flag, ',' ORDER BY id) FROM fc)
		|| ' ' || (SELECT string_agg(id || ':' || coalesce(cid::text, '-'), ',' ORDER BY id) FROM fg)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "30:-:5 100:-,101:-,102:-"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	idle, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}
