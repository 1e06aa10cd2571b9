package duckdb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	_ "github.com/shepherd-db/shepherd/internal/driver/duckdb"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func open(t *testing.T, spec driver.Spec) driver.Engine {
	t.Helper()
	openFunc, ok := driver.Lookup("duckdb")
	if !ok {
		t.Fatal(`driver "duckdb" is not registered`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := openFunc(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Engine {
		return open(t, driver.Spec{Name: "duck", DSN: "db/replica.duckdb", DataDir: t.TempDir()})
	})
}

func exec(t *testing.T, c driver.Conn, verb, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Exec(ctx, driver.Query{SQL: sql, Verb: verb, ReturnsRows: verb == "SELECT"})
	return err
}

// TestWriteConflictIsSerializationFailure: DuckDB aborts the later of two
// transactions that write the same row instead of making it wait; the
// driver reports that as 40001, which the coordinator retries, and the
// transaction it aborted fails every later statement and its COMMIT the
// same way.
func TestWriteConflictIsSerializationFailure(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "c.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx := context.Background()
	c1, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := exec(t, c1, "CREATE TABLE", "CREATE TABLE acc (id int PRIMARY KEY, bal int)"); err != nil {
		t.Fatal(err)
	}
	if err := exec(t, c1, "INSERT", "INSERT INTO acc VALUES (1, 10)"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []driver.Conn{c1, c2} {
		if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec(t, c1, "UPDATE", "UPDATE acc SET bal = bal + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	err = exec(t, c2, "UPDATE", "UPDATE acc SET bal = bal + 2 WHERE id = 1")
	if err == nil {
		err = c2.Commit(ctx)
	} else {
		if code := pgerr.Code(err); code != pgerr.SerializationFailure {
			t.Errorf("conflicting UPDATE: %v (SQLSTATE %s), want 40001", err, code)
		}
		err = c2.Commit(ctx)
	}
	if code := pgerr.Code(err); code != pgerr.SerializationFailure {
		t.Errorf("COMMIT of the conflicting transaction: %v (SQLSTATE %s), want 40001", err, code)
	}
	if err := c1.Commit(ctx); err != nil {
		t.Fatalf("COMMIT of the first writer: %v", err)
	}
}

// TestRewrittenMeaning runs on DuckDB the text package dialect writes for
// it, and checks it answers as PostgreSQL does where DuckDB's own reading
// differs: an integer division by zero fails (DuckDB: NULL), LIKE's
// backslash escapes (DuckDB: no escape), lower() leaves non-ASCII
// letters (PostgreSQL's C locale), integers divide by truncating.
func TestRewrittenMeaning(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "m.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	c, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	write := func(sql string) string {
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		out, err := dialect.DuckDB(tree.Stmts[0].Stmt, nil)
		if err != nil {
			t.Fatal(err)
		}
		text, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	query := func(sql string) (*answer.Answer, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return c.Exec(ctx, driver.Query{SQL: write(sql), ReturnsRows: true, Verb: "SELECT"})
	}
	for _, sql := range []string{"SELECT 1 / 0", "SELECT 7 % (3 - 3)", "SELECT mod(7, 0)"} {
		if _, err := query(sql); pgerr.Code(err) != pgerr.DivisionByZero {
			t.Errorf("%s: %v, want 22012", sql, err)
		}
	}
	a, err := query(`SELECT 'a_c' LIKE 'a\_c', 'abc' LIKE 'a\_c', lower('ÀB'), upper('éa'), 7 / 2, -7 / 2`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range a.Rows[0] {
		got = append(got, v.Text)
	}
	if want := []string{"t", "f", "Àb", "éA", "3", "-3"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStatementSeparator: a DROP of several tables, written as one DROP
// each, drops them all; a literal holding the separator stays one value.
func TestStatementSeparator(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "s.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	c, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []struct{ verb, sql string }{
		{"CREATE TABLE", "CREATE TABLE a (s text)"},
		{"CREATE TABLE", "CREATE TABLE b (s text)"},
		{"INSERT", "INSERT INTO a VALUES ('x" + driver.StatementSeparator + "y')"},
	} {
		if err := exec(t, c, q.verb, q.sql); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	a, err := c.Exec(context.Background(), driver.Query{SQL: "SELECT s FROM a", ReturnsRows: true, Verb: "SELECT"})
	if err != nil || len(a.Rows) != 1 || a.Rows[0][0].Text != "x"+driver.StatementSeparator+"y" {
		t.Fatalf("literal with the separator: %v %v", a, err)
	}
	if err := exec(t, c, "DROP TABLE", "DROP TABLE a"+driver.StatementSeparator+"DROP TABLE b"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := exec(t, c, "SELECT", "SELECT * FROM "+name); pgerr.Code(err) != pgerr.UndefinedTable {
			t.Errorf("table %s after the DROP: %v, want 42P01", name, err)
		}
	}
}

// TestDuplicateKeyInTransaction: a key that a row inserted earlier in the
// same transaction holds is a unique violation (23505), as outside one;
// DuckDB words that case otherwise ("PRIMARY KEY or UNIQUE constraint
// violation: duplicate key"), which the driver took for 23000, and the
// replica lost the vote to SQLite's 23505.
func TestDuplicateKeyInTransaction(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "dup.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx := context.Background()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := exec(t, c, "CREATE TABLE", "CREATE TABLE t (id int PRIMARY KEY, u text UNIQUE)"); err != nil {
		t.Fatal(err)
	}
	for _, dup := range []string{"INSERT INTO t VALUES (1, 'b')", "INSERT INTO t VALUES (2, 'a')"} {
		if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := exec(t, c, "INSERT", "INSERT INTO t VALUES (1, 'a')"); err != nil {
			t.Fatal(err)
		}
		if err := exec(t, c, "INSERT", dup); pgerr.Code(err) != pgerr.UniqueViolation {
			t.Errorf("%s after (1, 'a') in one transaction: %v, want 23505", dup, err)
		}
		if err := c.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A unique index over rows that hold a key twice: 23505 as well
	// (DuckDB: "Data contains duplicates").
	if err := exec(t, c, "CREATE TABLE", "CREATE TABLE d (v int)"); err != nil {
		t.Fatal(err)
	}
	if err := exec(t, c, "INSERT", "INSERT INTO d VALUES (1), (1)"); err != nil {
		t.Fatal(err)
	}
	if err := exec(t, c, "CREATE INDEX", "CREATE UNIQUE INDEX d_v ON d (v)"); pgerr.Code(err) != pgerr.UniqueViolation {
		t.Errorf("unique index over duplicates: %v, want 23505", err)
	}
}

// TestAvgCountMacro: dialect.AvgCountMacro passes a count below the limit
// under which a comparison with an average is exact and fails from it
// with 0A000, as SQLite's shepherd_avg_count does.
func TestAvgCountMacro(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "avg.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	c, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := c.Exec(context.Background(), driver.Query{SQL: "SELECT " + dialect.AvgCountMacro + "(199999999)", Verb: "SELECT", ReturnsRows: true})
	if err != nil || len(a.Rows) != 1 || a.Rows[0][0].Text != "199999999" {
		t.Fatalf("below the limit: %v %v", a, err)
	}
	_, err = c.Exec(context.Background(), driver.Query{SQL: "SELECT " + dialect.AvgCountMacro + "(200000000)", Verb: "SELECT", ReturnsRows: true})
	if pgerr.Code(err) != pgerr.FeatureNotSupported {
		t.Fatalf("at the limit: %v, want 0A000", err)
	}
}
