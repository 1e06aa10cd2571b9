package duckdb_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestSharedFunctions: the SQLite driver's functions for PostgreSQL's
// json operators and string functions are registered in DuckDB too, on
// every connection, and answer there as on SQLite; their errors keep
// PostgreSQL's SQLSTATE.
func TestSharedFunctions(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "f.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 { // a second connection finds them registered
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Exec(ctx, driver.Query{Verb: "SELECT", ReturnsRows: true,
			SQL: `SELECT shepherd_json_get('{"a": [1, 2]}', 'a', 0), shepherd_json_get('[10, "b"]', 1::int4, 5),` +
				` shepherd_jsonb_contains('{"a": 1, "b": 2}', '{"b": 2}'), shepherd_jsonb_eq('{"a": 1.0}', '{"a": 1}'),` +
				` shepherd_jsonb_cmp('1', '"a"'), shepherd_initcap('hello wORLD'), shepherd_json_get(NULL, 'a', 0)`})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range a.Rows[0] {
			if v.Null {
				got = append(got, "NULL")
				continue
			}
			got = append(got, v.Text)
		}
		if want := []string{"[1, 2]", "b", "t", "t", "1", "Hello World", "NULL"}; !slices.Equal(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		_, err = c.Exec(ctx, driver.Query{Verb: "SELECT", ReturnsRows: true, SQL: `SELECT shepherd_repeat('ab', 1000000000)`})
		if code := pgerr.Code(err); code != "54000" {
			t.Errorf("repeat() too long: %v (SQLSTATE %s), want 54000", err, code)
		}
		c.Close()
	}
}
