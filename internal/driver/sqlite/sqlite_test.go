package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	_ "github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func open(t *testing.T, name string, spec driver.Spec) driver.Engine {
	t.Helper()
	openFunc, ok := driver.Lookup(name)
	if !ok {
		t.Fatalf("driver %q is not registered", name)
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
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			drivertest.Run(t, func(t *testing.T) driver.Engine {
				return open(t, name, driver.Spec{Name: name, DSN: "db/replica.sqlite", DataDir: t.TempDir()})
			})
		})
	}
}

func TestRelativePathUnderDataDir(t *testing.T) {
	dir := t.TempDir()
	e := open(t, "sqlite", driver.Spec{Name: "lite", DSN: "sub/dir/r.db", DataDir: dir})
	defer e.Close()
	if _, err := os.Stat(filepath.Join(dir, "sub/dir/r.db")); err != nil {
		t.Errorf("database file not created under DataDir: %v", err)
	}
}

// TestDoubleQuotedIsNeverAString checks that both builds refuse a
// double-quoted name that resolves to nothing, as PostgreSQL does (42703),
// where SQLite by default reads it as a string literal: the SQL writer
// double-quotes every identifier, so a typo in a column name would read
// the name itself on every SQLite replica, and a write filtered on it
// would change every row, agreed by all replicas. DDL too: a CHECK or an
// index on an unknown double-quoted name is refused, not made a constant.
func TestDoubleQuotedIsNeverAString(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "r.db", DataDir: t.TempDir()})
			defer e.Close()
			ctx := context.Background()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, s := range []string{`CREATE TABLE "t" ("a" text)`, `INSERT INTO "t" ("a") VALUES ('x'), ('y')`} {
				if _, err := exec(t, c, "", s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			refused := []struct{ verb, sql, msg string }{
				{"SELECT", `SELECT "nope" FROM "t"`, `column "nope" does not exist`},
				{"SELECT", `SELECT "t"."nope" FROM "t"`, `column t.nope does not exist`},
				{"UPDATE", `UPDATE "t" SET "a" = 'z' WHERE "nope" = 'nope'`, `column "nope" does not exist`},
				{"DELETE", `DELETE FROM "t" WHERE "nope" = 'nope'`, `column "nope" does not exist`},
				{"CREATE TABLE", `CREATE TABLE "u" ("a" text CHECK ("nope" <> ''))`, `column "nope" does not exist`},
				{"CREATE INDEX", `CREATE INDEX "i" ON "t" ("nope")`, ""},
			}
			for _, r := range refused {
				_, err := exec(t, c, r.verb, r.sql)
				if got := pgerr.Code(err); got != pgerr.UndefinedColumn {
					t.Errorf("%s: got %v (%s), want 42703", r.sql, err, got)
				} else if r.msg != "" && pgerr.From(err).Message != r.msg {
					t.Errorf("%s: message %q, want PostgreSQL's %q", r.sql, pgerr.From(err).Message, r.msg)
				}
			}
			a, err := exec(t, c, "SELECT", `SELECT "a" FROM "t" ORDER BY "a"`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, row := range a.Rows {
				got = append(got, row[0].Text)
			}
			if strings.Join(got, ",") != "x,y" {
				t.Errorf("rows after the refused writes: %v, want x,y", got)
			}
		})
	}
}

// TestOversize checks that both builds report the limits SQLite enforces:
// a statement with more parameters than SQLITE_LIMIT_VARIABLE_NUMBER
// allows is reported, and SQLite does refuse it; one within the limits
// is not.
func TestOversize(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "r.db", DataDir: t.TempDir()})
			defer e.Close()
			sizer, ok := e.(driver.Sizer)
			if !ok {
				t.Fatal("not a driver.Sizer")
			}
			small := driver.Query{SQL: "SELECT ?", Args: []driver.Arg{{Text: strings.Repeat("x", 1<<20)}}, ReturnsRows: true, Verb: "SELECT"}
			if o := sizer.Oversize(small); o != nil {
				t.Errorf("a 1 MB parameter: %+v", o)
			}
			n := 100000
			many := driver.Query{SQL: "SELECT " + strings.TrimSuffix(strings.Repeat("?, ", n), ", "),
				Args: make([]driver.Arg, n), ReturnsRows: true, Verb: "SELECT"}
			o := sizer.Oversize(many)
			if o == nil || o.Limit != "SQLITE_LIMIT_VARIABLE_NUMBER" || o.Size != int64(n) || o.Max >= int64(n) {
				t.Fatalf("%d parameters: %+v, want SQLITE_LIMIT_VARIABLE_NUMBER", n, o)
			}
			c, err := e.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Exec(context.Background(), many); err == nil {
				t.Errorf("SQLite took %d parameters, above the limit %d it reported", n, o.Max)
			}
		})
	}
}
