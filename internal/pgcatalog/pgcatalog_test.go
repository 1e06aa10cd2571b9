package pgcatalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

func snapshotOf(t *testing.T, ddl string) *schema.Snapshot {
	t.Helper()
	tree, err := pg_query.Parse(ddl)
	if err != nil {
		t.Fatal(err)
	}
	var snap *schema.Snapshot
	for _, raw := range tree.Stmts {
		if snap, err = snap.Apply(raw.Stmt); err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

func query(t *testing.T, e *Engine, snap *schema.Snapshot, sql string) [][]string {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Query(context.Background(), tree.Stmts[0].Stmt, nil, snap, Session{User: "app"})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][]string
	for _, r := range a.Rows {
		var row []string
		for _, v := range r {
			row = append(row, v.Text)
		}
		out = append(out, row)
	}
	return out
}

const testDDL = `
CREATE TABLE a (id serial PRIMARY KEY, name text UNIQUE);
CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a);
CREATE INDEX b_a ON b (a_id);
CREATE TABLE shepherd_log (x int);`

// TestStableOIDs: the same schema gets the same OIDs in a new engine (a
// restarted shepherd), whatever order the engine learnt it in; shepherd's
// own tables are not shown.
func TestStableOIDs(t *testing.T) {
	const q = "SELECT relname, oid FROM pg_catalog.pg_class WHERE relnamespace = 2200 ORDER BY relname"
	e1, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e1.Close()
	first := query(t, e1, snapshotOf(t, testDDL), q)
	e2, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	// Learnt differently: with a table created and dropped first.
	again := query(t, e2, snapshotOf(t, "CREATE TABLE z (x int);"+testDDL+"DROP TABLE z;"), q)
	if len(first) != 7 { // a, a_id_seq, a_name_key, a_pkey, b, b_a, b_pkey
		t.Fatalf("user relations: %v", first)
	}
	for i := range first {
		if first[i][0] != again[i][0] || first[i][1] != again[i][1] {
			t.Fatalf("OIDs differ after a restart: %v vs %v", first, again)
		}
		if first[i][0] == "shepherd_log" {
			t.Fatalf("shepherd's own table is shown: %v", first)
		}
	}
}

// TestRegclassRoundTrip: OIDs cast to regclass print as names, names cast
// to regclass give the OIDs.
func TestRegclassRoundTrip(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL)
	got := query(t, e, snap, "SELECT c.oid::regclass, c.oid = 'public.b'::regclass, 'pg_class'::regclass::oid FROM pg_catalog.pg_class c WHERE c.relname = 'b'")
	if len(got) != 1 || got[0][0] != "b" || got[0][1] != "t" || got[0][2] != "1259" {
		t.Fatalf("got %v", got)
	}
}

// TestOddQueries: queries the rewriter does not expect fail with a
// PostgreSQL error or a refusal, never with an internal error.
func TestOddQueries(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL)
	for _, q := range []string{
		"SELECT * FROM pg_catalog.pg_class, unnest() AS u",
		"SELECT * FROM pg_catalog.pg_class, pg_catalog.generate_series(1) AS g",
		"SELECT * FROM pg_catalog.pg_class, pg_catalog.pg_partition_ancestors() AS a",
		"SELECT unnest() FROM pg_catalog.pg_class",
		"SELECT generate_subscripts() FROM pg_catalog.pg_class",
		"SELECT (c.relname).x FROM pg_catalog.pg_class c",
		"SELECT c.relacl[1:2] FROM pg_catalog.pg_class c",
		"SELECT ARRAY(SELECT 1, 2) FROM pg_catalog.pg_class",
		"SELECT pg_catalog.format_type() FROM pg_catalog.pg_class",
		"SELECT pg_catalog.pg_get_expr() FROM pg_catalog.pg_class",
		"SELECT pg_catalog.obj_description() FROM pg_catalog.pg_class",
		"SELECT array_upper() FROM pg_catalog.pg_class",
		"SELECT json_build_object('a') FROM pg_catalog.pg_class",
		"SELECT relname ~ '(' FROM pg_catalog.pg_class",
		"SELECT 'x'::regclass FROM pg_catalog.pg_class",
		"SELECT '1.5'::oid FROM pg_catalog.pg_class",
		"SELECT ROW(1, 2) FROM pg_catalog.pg_class",
		"SELECT 1 = ANY (SELECT 1) FROM pg_catalog.pg_class",
		"SELECT relname FROM pg_catalog.pg_class WHERE oid = ANY ('{1,2}')",
		"WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT 1 FROM r) SELECT * FROM pg_catalog.pg_class, r LIMIT 1",
		"SELECT * FROM pg_catalog.pg_class ORDER BY relname USING <",
		"SELECT relname FROM pg_catalog.pg_class FOR UPDATE",
		"SELECT * FROM pg_catalog.pg_class c, LATERAL (SELECT c.relname) s LIMIT 1",
	} {
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_, err = e.Query(context.Background(), tree.Stmts[0].Stmt, nil, snap, Session{})
		if err != nil && strings.Contains(err.Error(), "XX000") && strings.Contains(err.Error(), "a bug") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestRenames: renaming a column or a table shows in the indexes, keys
// and foreign keys that name it, as in PostgreSQL.
func TestRenames(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL+`
ALTER TABLE a RENAME COLUMN name TO title;
ALTER TABLE a RENAME COLUMN id TO a_key;
ALTER TABLE b RENAME COLUMN a_id TO a_ref;
ALTER TABLE a RENAME TO aa;`)
	got := query(t, e, snap, "SELECT conname, pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint ORDER BY conname")
	want := [][]string{
		{"a_name_key", "UNIQUE (title)"},
		{"a_pkey", "PRIMARY KEY (a_key)"},
		{"b_a_id_fkey", "FOREIGN KEY (a_ref) REFERENCES aa(a_key)"},
		{"b_pkey", "PRIMARY KEY (id)"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("constraints after renames:\n got %v\nwant %v", got, want)
	}
	got = query(t, e, snap, "SELECT pg_get_indexdef(indexrelid) FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'b_a'")
	if len(got) != 1 || got[0][0] != "CREATE INDEX b_a ON public.b USING btree (a_ref)" {
		t.Errorf("index after a column rename: %v", got)
	}
}

// TestDropColumn: dropping a column drops the indexes and constraints on
// it, as in PostgreSQL.
func TestDropColumn(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL+`
ALTER TABLE a DROP COLUMN name;
ALTER TABLE b DROP COLUMN a_id;`)
	got := query(t, e, snap, "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = 2200 ORDER BY 1")
	want := [][]string{{"a"}, {"a_id_seq"}, {"a_pkey"}, {"b"}, {"b_pkey"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("relations after DROP COLUMN:\n got %v\nwant %v", got, want)
	}
	got = query(t, e, snap, "SELECT conname FROM pg_catalog.pg_constraint ORDER BY 1")
	if fmt.Sprint(got) != "[[a_pkey] [b_pkey]]" {
		t.Errorf("constraints after DROP COLUMN: %v", got)
	}
}

// TestAlterConstraints: constraints ALTER TABLE adds are in pg_constraint
// under the names their errors give (schema.Table.Constraints), with
// their expression and options; those it drops are gone. Before, the
// catalog kept a record of its own, filled by CREATE TABLE only.
func TestAlterConstraints(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL+`
ALTER TABLE b ADD CONSTRAINT b_positive CHECK (id > 0);
ALTER TABLE b ADD UNIQUE (a_id);
ALTER TABLE a ADD CONSTRAINT a_b FOREIGN KEY (id) REFERENCES b ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE b DROP CONSTRAINT b_a_id_fkey;`)
	got := query(t, e, snap, "SELECT conname, contype, condeferrable, condeferred, pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint ORDER BY conname")
	want := [][]string{
		{"a_b", "f", "t", "t", "FOREIGN KEY (id) REFERENCES b(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"},
		{"a_name_key", "u", "f", "f", "UNIQUE (name)"},
		{"a_pkey", "p", "f", "f", "PRIMARY KEY (id)"},
		{"b_a_id_key", "u", "f", "f", "UNIQUE (a_id)"},
		{"b_pkey", "p", "f", "f", "PRIMARY KEY (id)"},
		{"b_positive", "c", "f", "f", "CHECK ((id > 0))"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("constraints after ALTER TABLE:\n got %v\nwant %v", got, want)
	}
	got = query(t, e, snap, "SELECT relname, relchecks, relhastriggers FROM pg_catalog.pg_class WHERE relname IN ('a', 'b') ORDER BY 1")
	if fmt.Sprint(got) != "[[a 0 t] [b 1 t]]" {
		t.Errorf("relchecks, relhastriggers after ALTER TABLE: %v", got)
	}
}

// TestPgDumpForms: the forms pg_dump 15's catalog queries use give what
// PostgreSQL gives (TestCatalogAsPostgres compares pg_dump's own queries
// with PostgreSQL's answers): pg_options_to_table splits "name=value"
// at the first '=', quote_literal, a name's subscript (typname[0], its
// isarray test), a SERIAL column's sequence read as a relation, and
// pg_get_viewdef's ';' (pg_dump cuts the last character).
func TestPgDumpForms(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	snap := snapshotOf(t, testDDL+";\nCREATE VIEW va AS SELECT id FROM a")
	for _, tc := range []struct{ sql, want string }{
		{"SELECT option_name, option_value FROM pg_catalog.pg_options_to_table('{a=1,b=x=y,c}'::text[]) ORDER BY 1", "[[a 1] [b x=y] [c ]]"},
		{"SELECT pg_catalog.quote_literal(relname || '''\\') FROM pg_catalog.pg_class WHERE relname = 'a'", `[[E'a''\\']]`},
		{"SELECT typname[0], typname[0] = '_' FROM pg_catalog.pg_type WHERE typname IN ('_int4', 'int4') ORDER BY 1", "[[_ t] [i f]]"},
		{"SELECT last_value, log_cnt, is_called FROM public.a_id_seq", "[[1 0 f]]"},
		{"SELECT pg_catalog.pg_get_viewdef('va'::pg_catalog.regclass::pg_catalog.oid)", "[[ SELECT a.id\n   FROM a;]]"},
	} {
		if got := fmt.Sprint(query(t, e, snap, tc.sql)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.sql, got, tc.want)
		}
	}
	// Under pg_dump's search_path '' what is not in pg_catalog is
	// qualified, as PostgreSQL prints it.
	for _, tc := range []struct{ sql, want string }{
		{"SELECT pg_catalog.current_schemas(false), pg_catalog.current_schemas(true)", "[[{} {pg_catalog}]]"},
		{"SELECT pg_catalog.pg_get_viewdef('va'::pg_catalog.regclass::pg_catalog.oid)", "[[ SELECT a.id\n   FROM public.a;]]"},
		{"SELECT pg_catalog.pg_get_expr(adbin, adrelid) FROM pg_catalog.pg_attrdef", "[[nextval('public.a_id_seq'::regclass)]]"},
		{"SELECT pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint WHERE contype = 'f'", "[[FOREIGN KEY (a_id) REFERENCES public.a(id)]]"},
	} {
		tree, err := pg_query.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Query(context.Background(), tree.Stmts[0].Stmt, nil, snap, Session{User: "app", Settings: map[string]string{"search_path": ""}})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		var rows [][]string
		for _, r := range a.Rows {
			var row []string
			for _, v := range r {
				row = append(row, v.Text)
			}
			rows = append(rows, row)
		}
		if got := fmt.Sprint(rows); got != tc.want {
			t.Errorf("search_path '': %s: %s, want %s", tc.sql, got, tc.want)
		}
	}
}
