package duckdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestArrays runs on DuckDB the text package dialect writes for arrays
// (dialect/duckdb_arrays.go) and checks the answers are PostgreSQL's (as
// TestArraysAsPostgreSQL in package server finds them): the column holds
// PostgreSQL's output text; = ANY and <> ALL are NULL with a NULL
// element or operand, false and true over an empty array; array_length
// of an empty array is NULL, its cardinality 0; array_agg keeps its
// order and quotes; unnest of a constant keeps the element type; a[i]
// counts from 1 and is NULL outside the array. The
// functions are there on every session.
func TestArrays(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "arr.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx := context.Background()
	s := &schema.Snapshot{}
	run := func(c driver.Conn, verb, sql string) string {
		t.Helper()
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		stmt := tree.Stmts[0].Stmt
		if err := dialect.CheckDuckDB(stmt, s); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		out, err := dialect.DuckDB(stmt, s)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		text, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		if next, err := s.Apply(stmt); err == nil && next != nil {
			s = next
		}
		qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		a, err := c.Exec(qctx, driver.Query{SQL: text, Verb: verb, ReturnsRows: verb == "SELECT"})
		if err != nil {
			t.Fatalf("%s (%s): %v", sql, text, err)
		}
		var rows []string
		for _, r := range a.Rows {
			var vs []string
			for _, v := range r {
				if v.Null {
					vs = append(vs, "<null>")
				} else {
					vs = append(vs, v.Text)
				}
			}
			rows = append(rows, strings.Join(vs, "|"))
		}
		return strings.Join(rows, "; ")
	}
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run(c, "CREATE TABLE", "CREATE TABLE a (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', n integer[], b boolean[])")
	run(c, "INSERT", `INSERT INTO a (id, tags, n, b) VALUES (1, '{ go , "a b", NULL }', ARRAY[3, 1], '{yes,NULL}'), (2, '{}', '{}', '{f}')`)
	run(c, "INSERT", "INSERT INTO a (id) VALUES (3)")
	// A second session has the functions too.
	c2, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for _, q := range []struct{ sql, want string }{
		{"SELECT id, tags, n, b FROM a ORDER BY id", `1|{go,"a b",NULL}|{3,1}|{t,NULL}; 2|{}|{}|{f}; 3|{}|<null>|<null>`},
		{"SELECT id, 'go' = ANY(tags), 'x' = ANY(tags), 'x' <> ALL(tags), NULL::text = ANY(tags), 1 = ANY(n), true = ANY(b), NULL::boolean = ANY(b) FROM a ORDER BY id",
			"1|t|<null>|<null>|<null>|t|t|<null>; 2|f|f|t|f|f|f|<null>; 3|f|f|t|f|<null>|<null>|<null>"},
		{"SELECT id, array_length(tags, 1), cardinality(tags), array_length(n, 2), array_to_string(tags, '/') FROM a ORDER BY id",
			"1|3|3|<null>|go/a b; 2|<null>|0|<null>|; 3|<null>|0|<null>|"},
		{"SELECT id FROM a WHERE tags @> '{go}' OR n && ARRAY[7, 1] OR b <@ '{f}' ORDER BY id", "1; 2"},
		{"SELECT id FROM a WHERE id = ANY('{ 3 , 1 }') AND tags <> '{ }' ORDER BY id", "1"},
		{"SELECT array_agg(id ORDER BY id DESC), array_agg(CASE WHEN id > 1 THEN 'x y' END ORDER BY id), array_agg(id > 1 ORDER BY id) FROM a",
			`{3,2,1}|{NULL,"x y","x y"}|{f,t,t}`},
		{"SELECT array_agg(id ORDER BY id) FROM a WHERE id < 0", "<null>"},
		{"SELECT string_to_array('a,b,,c', ','), string_to_array('x y', NULL), string_to_array('', ',')", `{a,b,"",c}|{x," ",y}|{}`},
		{"SELECT id, tags[1], tags[3], tags[0], tags[4], n[2] + 1, b[1], b[2] FROM a ORDER BY id",
			"1|go|<null>|<null>|<null>|2|t|<null>; 2|<null>|<null>|<null>|<null>|<null>|f|<null>; 3|<null>|<null>|<null>|<null>|<null>|<null>|<null>"},
		{"SELECT x, n, x + 1 FROM unnest(ARRAY[3, NULL, 1]) WITH ORDINALITY AS u(x, n) ORDER BY n", "3|1|4; <null>|2|<null>; 1|3|2"},
	} {
		if got := run(c2, "SELECT", q.sql); got != q.want {
			t.Errorf("%s:\n got %s\nwant %s", q.sql, got, q.want)
		}
	}
}
