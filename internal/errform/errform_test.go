package errform

import (
	"errors"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

func snapshot(t *testing.T, ddl ...string) *schema.Snapshot {
	t.Helper()
	c, err := schema.Open("")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range ddl {
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatal(err)
		}
	}
	return c.Snapshot()
}

func parse(t *testing.T, q string) *pg_query.Node {
	t.Helper()
	tree, err := pg_query.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].Stmt
}

// TestRewriteKeys: MariaDB's printed key values are split and retyped
// only where that is exact; what cannot be is left out, never guessed.
func TestRewriteKeys(t *testing.T) {
	snap := snapshot(t,
		`CREATE TABLE k (a int, b text, f bool, x float8, "Mixed" int, UNIQUE (a, b), UNIQUE (f), UNIQUE (x), UNIQUE ("Mixed"))`)
	for _, c := range []struct {
		key, value, detail string
	}{
		{"k_a_b_key", "1-x", "Key (a, b)=(1, x) already exists."},
		{"k_a_b_key", "1-x-y", ""}, // a '-' inside a value: ambiguous
		{"k_a_b_key", "-1-x", ""},
		{"k_f_key", "1", "Key (f)=(t) already exists."},
		{"k_x_key", "1.5", ""}, // MariaDB prints doubles otherwise
		{"k_Mixed_key", "3", `Key ("Mixed")=(3) already exists.`},
	} {
		raw := &pgerr.Error{Code: pgerr.UniqueViolation, Message: "engine words",
			Raw: &pgerr.Raw{Constraint: c.key, Value: c.value, HasValue: true}}
		got := pgerr.From(Rewrite(raw, parse(t, "INSERT INTO k VALUES (1)"), snap, nil))
		if got.Message != `duplicate key value violates unique constraint "`+c.key+`"` || got.Detail != c.detail ||
			got.Constraint != c.key || got.Table != "k" || got.Schema != "public" || got.Raw != nil {
			t.Errorf("%s %q: got %q / %q / %s.%s %s", c.key, c.value, got.Message, got.Detail, got.Schema, got.Table, got.Constraint)
		}
		if raw.Raw == nil || raw.Message != "engine words" {
			t.Errorf("the engine's error was modified: %+v", raw)
		}
	}
}

// TestRewriteUnknown: what the catalog cannot place is left in the
// engine's words, and errors without Raw pass through untouched.
func TestRewriteUnknown(t *testing.T) {
	snap := snapshot(t, "CREATE TABLE k (a int UNIQUE)")
	raw := &pgerr.Error{Code: pgerr.UniqueViolation, Message: "engine words", Raw: &pgerr.Raw{Constraint: "nope"}}
	if got := pgerr.From(Rewrite(raw, parse(t, "INSERT INTO k VALUES (1)"), snap, nil)); got.Message != "engine words" || got.Raw != nil {
		t.Errorf("unknown constraint: %+v", got)
	}
	plain := errors.New("x")
	if Rewrite(plain, nil, snap, nil) != plain {
		t.Error("an error without SQLSTATE was changed")
	}
	// SQLite names no foreign key: with two candidates, no guess.
	snap = snapshot(t, "CREATE TABLE p (id int PRIMARY KEY)",
		"CREATE TABLE c (a int REFERENCES p, b int REFERENCES p)")
	fk := &pgerr.Error{Code: pgerr.ForeignKeyViolation, Message: "FOREIGN KEY constraint failed", Raw: &pgerr.Raw{}}
	if got := pgerr.From(Rewrite(fk, parse(t, "INSERT INTO c VALUES (1, 2)"), snap, nil)); got.Constraint != "" {
		t.Errorf("guessed %q among two foreign keys", got.Constraint)
	}
	got := pgerr.From(Rewrite(fk, parse(t, "UPDATE c SET b = 3"), snap, nil))
	if got.Constraint != "c_b_fkey" || got.Message != `insert or update on table "c" violates foreign key constraint "c_b_fkey"` {
		t.Errorf("UPDATE of b: %q %q", got.Constraint, got.Message)
	}
}

// TestValuesFromTheStatement: a key's values are taken from the
// statement only where they are the new row's.
func TestValuesFromTheStatement(t *testing.T) {
	snap := snapshot(t, "CREATE TABLE k (id int PRIMARY KEY, s text UNIQUE, n int)")
	for _, c := range []struct{ sql, detail string }{
		{"INSERT INTO k VALUES (1, 'a', 2)", "Key (s)=(a) already exists."},
		{"INSERT INTO k (s, id) VALUES ($1, 1)", "Key (s)=(p) already exists."},
		{"INSERT INTO k VALUES (1, 'a', 2), (2, 'b', 3)", ""},
		{"INSERT INTO k VALUES (1, 'a', 2) ON CONFLICT (id) DO UPDATE SET s = 'b'", ""},
		{"INSERT INTO k SELECT 1, 'a', 2", ""},
		{"UPDATE k SET s = 'c' WHERE id = 1", "Key (s)=(c) already exists."},
		{"UPDATE k SET s = s || 'c'", ""},
	} {
		e := &pgerr.Error{Code: pgerr.UniqueViolation, Raw: &pgerr.Raw{Table: "k", Columns: []string{"s"}}}
		got := pgerr.From(Rewrite(e, parse(t, c.sql), snap, []driver.Arg{{Text: "p"}}))
		if got.Constraint != "k_s_key" || got.Detail != c.detail {
			t.Errorf("%s: %s %q, want k_s_key %q", c.sql, got.Constraint, got.Detail, c.detail)
		}
	}
}
