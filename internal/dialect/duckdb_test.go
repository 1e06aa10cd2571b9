package dialect

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestDuckDB checks the text DuckDB replicas receive: PostgreSQL's, with
// the constructs DuckDB reads otherwise rewritten, and the ones it
// cannot express refused with 0A000 naming them.
func TestDuckDB(t *testing.T) {
	cases := []struct{ in, want string }{
		// An integer / or % by zero is NULL in DuckDB, 22012 here.
		{"SELECT a / b FROM t", "SELECT CASE WHEN b = 0 THEN error('division by zero') ELSE a / b END FROM t"},
		{"SELECT mod(a, 3) FROM t", "SELECT CASE WHEN 3 = 0 THEN error('division by zero') ELSE a % 3 END FROM t"},
		// LIKE's escape is a backslash in PostgreSQL, none in DuckDB.
		{"SELECT 1 FROM t WHERE s LIKE 'a\\_%'", "SELECT 1 FROM t WHERE like_escape(s, E'a\\\\_%', E'\\\\')"},
		{"SELECT 1 FROM t WHERE s NOT LIKE $1", "SELECT 1 FROM t WHERE NOT like_escape(s, $1, E'\\\\')"},
		// lower() and upper() change ASCII letters only in the C locale.
		{"SELECT lower(s) FROM t", "SELECT translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') FROM t"},
		{"SELECT btrim(s, 'x') FROM t", `SELECT "trim"(s, 'x') FROM t`},
		// Serial and identity columns are plain integers (shepherd fills
		// them); types unqualified; DuckDB's foreign keys are left out.
		{"CREATE TABLE t (id serial PRIMARY KEY, p int REFERENCES t (id), d date)",
			"CREATE TABLE t (id int4 PRIMARY KEY, p int4, d date)"},
		{"CREATE TABLE t (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY)", "CREATE TABLE t (id int8 PRIMARY KEY)"},
		{"CREATE INDEX i ON t (a)", "CREATE INDEX i ON t (a)"},
		// NOT NULL of an added column is a second action (sqlan runs
		// each alone).
		{"ALTER TABLE t ADD COLUMN c int NOT NULL DEFAULT 1", "ALTER TABLE t ADD COLUMN c int4 DEFAULT 1, ALTER COLUMN c SET NOT NULL"},
		{"SELECT a FROM t WHERE id = 1 FOR UPDATE", "SELECT a FROM t WHERE id = 1"},
		{"SELECT '2024-01-02'::date", "SELECT '2024-01-02'::date"},
		// A word DuckDB reserves is refused as a name only.
		{"SELECT 1 FROM t WHERE s = 'at'", "SELECT 1 FROM t WHERE s = 'at'"},
		// Rows compare column by column, with PostgreSQL's NULLs.
		{"SELECT 1 FROM t WHERE (a, b) = (1, 2)", "SELECT 1 FROM t WHERE a = 1 AND b = 2"},
		// A row IN a list: one comparison each, as PostgreSQL expands it.
		{"SELECT 1 FROM t WHERE (a, b) IN ((1, 2), (3, NULL))", "SELECT 1 FROM t WHERE (a = 1 AND b = 2) OR (a = 3 AND b = NULL)"},
		{"SELECT 1 FROM t WHERE (a, b) NOT IN ((1, 2), (3, 4))", "SELECT 1 FROM t WHERE (a <> 1 OR b <> 2) AND (a <> 3 OR b <> 4)"},
		// ILIKE lowers ASCII letters only, as the C locale does.
		{"SELECT 1 FROM t WHERE s NOT ILIKE 'A%'", "SELECT 1 FROM t WHERE NOT like_escape(translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), translate('A%', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), E'\\\\')"},
		{"SELECT lpad(s, 4), every(b) FROM t", "SELECT shepherd_lpad(s, 4, ' '), bool_and(b) FROM t"},
		{"SELECT 1 FROM t WHERE (a, b, c) <= (1, 2, 3)", "SELECT 1 FROM t WHERE a < 1 OR (a = 1 AND (b < 2 OR (b = 2 AND c <= 3)))"},
	}
	for _, c := range cases {
		tree, err := pg_query.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DuckDB(tree.Stmts[0].Stmt, nil)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
		if again, _ := pg_query.Deparse(tree); again != mustDeparse(t, c.in) {
			t.Errorf("%s: the input tree was changed", c.in)
		}
	}
	refused := map[string]string{
		"SELECT s SIMILAR TO 'a%' FROM t":                           "similar",
		"CREATE TABLE t (n numeric)":                                "numeric without a precision",
		"SELECT extract(epoch from x) FROM t":                       "extract(epoch",
		"SELECT '1.5'::int":                                         "casting '1.5' to int4",
		"SELECT ' t'::boolean":                                      "casting ' t' to boolean",
		"SELECT string_agg(s, ',') FROM t":                          "string_agg() without ORDER BY",
		"SELECT 1 FROM t WHERE (a, b) IN (SELECT 1, 2)":             "row values",
		"SELECT split_part(s, ',', 0) FROM t":                       "split_part",
		"DROP TABLE a CASCADE":                                      "CASCADE",
		"ALTER TABLE t ADD COLUMN c int UNIQUE":                     "ADD COLUMN with a UNIQUE constraint",
		"CREATE TABLE c (p int REFERENCES t ON UPDATE SET DEFAULT)": "ON UPDATE SET DEFAULT",
		"CREATE TABLE c (p int REFERENCES t ON DELETE SET DEFAULT)": "ON DELETE SET DEFAULT",
	}
	for in, what := range refused {
		tree, err := pg_query.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DuckDB(tree.Stmts[0].Stmt, nil)
		if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "DuckDB") {
			t.Errorf("%s: %v, want 0A000 naming %q for DuckDB", in, err, what)
		}
	}
}

func mustDeparse(t *testing.T, sql string) string {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pg_query.Deparse(tree)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDuckDBVarchar checks the text for varchar(n): the column is plain
// varchar, every value stored into it goes through VarcharMacro (a
// constant no longer than n needs none), and a cast cuts the text.
func TestDuckDBVarchar(t *testing.T) {
	s := &schema.Snapshot{Tables: map[string]*schema.Table{"t": {Name: "t", Columns: []schema.Column{
		{Name: "id", Type: "int4"}, {Name: "v", Type: "varchar", Mods: []int32{3}}, {Name: "w", Type: "text"},
	}}}}
	cases := []struct{ in, want string }{
		{"CREATE TABLE t (id int PRIMARY KEY, v varchar(3))", "CREATE TABLE t (id int4 PRIMARY KEY, v \"varchar\")"},
		{"SELECT 'abcdef'::varchar(3)", "SELECT \"left\"('abcdef'::\"varchar\", 3)"},
		{"INSERT INTO t VALUES (1, 'abc', 'x'), (2, $1, 'y')", "INSERT INTO t VALUES (1, 'abc', 'x'), (2, shepherd_varchar($1, 3), 'y')"},
		{"INSERT INTO t (w, v) VALUES ('abcdef', 'abcd')", "INSERT INTO t (w, v) VALUES ('abcdef', shepherd_varchar('abcd', 3))"},
		{"UPDATE t SET v = w, w = v WHERE id = 1", "UPDATE t SET v = shepherd_varchar(w, 3), w = v WHERE id = 1"},
		{"INSERT INTO t (id, v) VALUES (1, 'a') ON CONFLICT (id) DO UPDATE SET v = excluded.w",
			"INSERT INTO t (id, v) VALUES (1, 'a') ON CONFLICT (id) DO UPDATE SET v = shepherd_varchar(excluded.w, 3)"},
		{"INSERT INTO t (v, id) SELECT w, id FROM t ORDER BY id",
			"INSERT INTO t (v, id) SELECT shepherd_varchar(c1, 3), c2 FROM (SELECT w, id FROM t ORDER BY id) shepherd_insert(c1, c2)"},
		{"INSERT INTO t (id, w) SELECT id, w FROM t", "INSERT INTO t (id, w) SELECT id, w FROM t"},
	}
	for _, c := range cases {
		tree, err := pg_query.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DuckDB(tree.Stmts[0].Stmt, s)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	tree, _ := pg_query.Parse("INSERT INTO t SELECT * FROM t")
	if _, err := DuckDB(tree.Stmts[0].Stmt, s); pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "varchar(n)") {
		t.Errorf("INSERT ... SELECT * into varchar(n): %v, want 0A000", err)
	}
}

// TestDuckDBAfter checks the statements a DuckDB replica runs after a
// DELETE for the foreign keys that reference its table with ON DELETE
// CASCADE or SET NULL, down the chain of cascades, and the refusal of a
// cycle of them.
func TestDuckDBAfter(t *testing.T) {
	s := &schema.Snapshot{Tables: map[string]*schema.Table{
		"p": {Name: "p", Columns: []schema.Column{{Name: "id", Type: "int4"}}, Key: []string{"id"}},
		"c": {Name: "c", Columns: []schema.Column{{Name: "id", Type: "int4"}, {Name: "pid", Type: "int4"}}, Key: []string{"id"},
			Constraints: []schema.Constraint{{Name: "c_pid_fkey", Kind: schema.ConstraintForeign, Columns: []string{"pid"}, RefTable: "p", OnDelete: "c"}}},
		"g": {Name: "g", Columns: []schema.Column{{Name: "cid", Type: "int4"}},
			Constraints: []schema.Constraint{{Name: "g_cid_fkey", Kind: schema.ConstraintForeign, Columns: []string{"cid"}, RefTable: "c", RefColumns: []string{"id"}, OnDelete: "n"}}},
		"n": {Name: "n", Columns: []schema.Column{{Name: "pid", Type: "int4"}},
			Constraints: []schema.Constraint{{Name: "n_pid_fkey", Kind: schema.ConstraintForeign, Columns: []string{"pid"}, RefTable: "p"}}},
		"loop": {Name: "loop", Columns: []schema.Column{{Name: "id", Type: "int4"}, {Name: "up", Type: "int4"}}, Key: []string{"id"},
			Constraints: []schema.Constraint{{Name: "loop_up_fkey", Kind: schema.ConstraintForeign, Columns: []string{"up"}, RefTable: "loop", OnDelete: "c"}}},
	}}
	after := func(sql string) ([]string, error) {
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		return DuckDBAfter(tree.Stmts[0].Stmt, s)
	}
	got, err := after("DELETE FROM p WHERE id = $1")
	want := []string{
		`DELETE FROM "c" WHERE "c"."pid" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "p" WHERE "p"."id" = "c"."pid")`,
		`UPDATE "g" SET "cid" = NULL WHERE "g"."cid" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "c" WHERE "c"."id" = "g"."cid")`,
	}
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("DELETE FROM p: %q, %v; want %q", got, err, want)
	}
	for _, sql := range []string{"DELETE FROM n", "DELETE FROM g", "UPDATE p SET id = 2", "INSERT INTO p VALUES (1)"} {
		if got, err := after(sql); len(got) != 0 || err != nil {
			t.Errorf("%s: %q, %v; want nothing", sql, got, err)
		}
	}
	if _, err := after("DELETE FROM loop WHERE id = 1"); pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("DELETE FROM loop: %v, want 0A000 naming the cycle", err)
	}
}
