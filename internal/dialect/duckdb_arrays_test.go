package dialect

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// arraySchema is a table with array columns of every element type.
func duckArraySchema(t *testing.T) *schema.Snapshot {
	t.Helper()
	tree, err := pg_query.Parse("CREATE TABLE a (id integer PRIMARY KEY, s text, tags text[], n integer[], b boolean[], v varchar[])")
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&schema.Snapshot{}).Apply(tree.Stmts[0].Stmt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDuckDBArrays checks the text DuckDB replicas receive for arrays:
// each array constant as PostgreSQL's output text of it (the text every
// replica stores), the operators and functions as the driver's
// functions over that text, array_agg as the text it builds, unnest of
// a constant as VALUES.
func TestDuckDBArrays(t *testing.T) {
	s := duckArraySchema(t)
	cases := []struct{ in, want string }{
		{"CREATE TABLE x (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{ a , \"b\" }', n integer[])",
			"CREATE TABLE x (id int4 PRIMARY KEY, tags text NOT NULL DEFAULT '{a,b}', n text)"},
		{"INSERT INTO a (id, tags, n, b, v) VALUES (1, '{ x , \"y z\" }', ARRAY[1, 2], '{yes,off}', ARRAY['q']::varchar[])",
			"INSERT INTO a (id, tags, n, b, v) VALUES (1, '{x,\"y z\"}', '{1,2}', '{t,f}', '{q}')"},
		{"SELECT '{ 1 , 2 }'::integer[], ARRAY['x', 'y z']", "SELECT '{1,2}', '{x,\"y z\"}'"},
		{"SELECT id FROM a WHERE 'go' = ANY(tags)", "SELECT id FROM a WHERE shepherd_array_any(tags, 'go'::text)"},
		{"SELECT 4 = ANY(n), 4 <> ALL(n), true = ANY(b) FROM a",
			"SELECT shepherd_array_any(n, 4::int8::text), NOT shepherd_array_any(n, 4::int8::text), " +
				"shepherd_array_any(b, CASE WHEN true THEN 't' WHEN NOT true THEN 'f' END) FROM a"},
		{"SELECT id FROM a WHERE id = ANY($1)", "SELECT id FROM a WHERE shepherd_array_any($1, id::int8::text)"},
		{"SELECT id FROM a WHERE s = ANY($1::text[])", "SELECT id FROM a WHERE shepherd_array_any($1, s::text)"},
		{"SELECT id FROM a WHERE id = ANY('{ 2 ,4}')", "SELECT id FROM a WHERE shepherd_array_any('{2,4}', id::int8::text)"},
		{"SELECT id FROM a WHERE id = ANY(ARRAY[1, 2])", "SELECT id FROM a WHERE id IN (1, 2)"},
		{"SELECT id FROM a WHERE id <> ALL(ARRAY[1, 2])", "SELECT id FROM a WHERE id NOT IN (1, 2)"},
		{"SELECT id FROM a WHERE tags = '{ go }' AND n <> ARRAY[1]", "SELECT id FROM a WHERE tags = '{go}' AND n <> '{1}'"},
		{"SELECT tags @> ARRAY['go'], tags <@ '{a}', tags && '{x,p}' FROM a",
			"SELECT shepherd_array_contains(tags, '{go}'), shepherd_array_contains('{a}', tags), shepherd_array_overlap(tags, '{x,p}') FROM a"},
		{"SELECT array_length(tags, 1), cardinality(n), array_to_string(tags, '|'), string_to_array('a,b', ',') FROM a",
			"SELECT shepherd_array_length(tags, 1), shepherd_array_length(n, 0), shepherd_array_to_string(tags, '|'), shepherd_string_to_array('a,b', ',') FROM a"},
		{"SELECT array_agg(id ORDER BY id) FILTER (WHERE id > 2), array_agg(s ORDER BY id), array_agg(id > 1 ORDER BY id) FROM a",
			"SELECT ('{' || string_agg(COALESCE(id::int8::text, 'NULL'), ',' ORDER BY id) FILTER (WHERE id > 2)) || '}', " +
				"('{' || string_agg(COALESCE(shepherd_array_quote(s), 'NULL'), ',' ORDER BY id)) || '}', " +
				"('{' || string_agg(COALESCE(CASE WHEN id > 1 THEN 't' WHEN NOT id > 1 THEN 'f' END, 'NULL'), ',' ORDER BY id)) || '}' FROM a"},
		{"SELECT * FROM unnest(ARRAY[3, NULL]) AS u(x)", "SELECT * FROM (VALUES ('3'::int4), (NULL::int4)) u(x)"},
		{"SELECT x, n FROM unnest('{p,q}'::text[]) WITH ORDINALITY AS t(x, n)",
			"SELECT x, n FROM (VALUES ('p'::text, '1'::int8), ('q'::text, '2'::int8)) t(x, n)"},
		{"SELECT sum(unnest) FROM unnest('{1}'::int[])", "SELECT sum(unnest) FROM (VALUES ('1'::int4)) unnest(unnest)"},
		{"SELECT a.id FROM a JOIN unnest(ARRAY[true]) AS v(x) ON x", "SELECT a.id FROM a JOIN (VALUES ('true'::bool)) v(x) ON x"},
		{"UPDATE a SET tags = $1, n = '{ 7 }' WHERE id = $2", "UPDATE a SET tags = $1, n = '{7}' WHERE id = $2"},
		{"ALTER TABLE a ADD COLUMN extra integer[] DEFAULT '{ 5 , 6 }'", "ALTER TABLE a ADD COLUMN extra text DEFAULT '{5,6}'"},
		{"ALTER TABLE a ALTER COLUMN n SET DEFAULT '{ 7 }'", "ALTER TABLE a ALTER COLUMN n SET DEFAULT '{7}'"},
		// a[i]: the element's text as the element type.
		{"SELECT tags[1], n[id], b[$1], v['2'] FROM a WHERE n[2] > 1",
			"SELECT shepherd_array_get(tags, 1::int4), shepherd_array_get(n, id::int4)::int4, shepherd_array_get(b, $1::int4)::bool, " +
				"shepherd_array_get(v, '2'::int4)::\"varchar\" FROM a WHERE shepherd_array_get(n, 2::int4)::int4 > 1"},
		{"SELECT ('{ a }'::text[])[1]", "SELECT shepherd_array_get('{a}', 1::int4)"},
		// The order of arrays: by their sort keys.
		{"SELECT id FROM a WHERE n < '{ 2 }' AND tags >= ARRAY['a']",
			"SELECT id FROM a WHERE shepherd_array_key(n, 'int') < shepherd_array_key('{2}', 'int') AND shepherd_array_key(tags, 'text') >= shepherd_array_key('{a}', 'text')"},
		{"SELECT max(n), min(b) FROM a",
			"SELECT shepherd_array_unkey(max(shepherd_array_key(n, 'int')), 'int'), shepherd_array_unkey(min(shepherd_array_key(b, 'bool')), 'bool') FROM a"},
		{"SELECT tags FROM a ORDER BY tags DESC NULLS LAST, n, id",
			"SELECT tags FROM a ORDER BY shepherd_array_key(tags, 'text') DESC NULLS LAST, shepherd_array_key(n, 'int'), id"},
	}
	for _, c := range cases {
		tree, err := pg_query.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckDuckDB(tree.Stmts[0].Stmt, s); err != nil {
			t.Errorf("%s: CheckDuckDB: %v", c.in, err)
			continue
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
		if again, _ := pg_query.Deparse(tree); again != mustDeparse(t, c.in) {
			t.Errorf("%s: the input tree was changed", c.in)
		}
	}
	refused := map[string]string{
		"SELECT tags[1:2] FROM a":                                   "array slices",
		"SELECT tags[id::bigint] FROM a":                            "subscript of type int8",
		"SELECT tags[1][2] FROM a":                                  "subscripts",
		"SELECT DISTINCT tags FROM a ORDER BY tags":                 "ORDER BY an array",
		"SELECT tags FROM a ORDER BY 1":                             "ORDER BY an array",
		"SELECT n AS tags FROM a ORDER BY tags":                     "ORDER BY an array",
		"SELECT tags FROM a UNION SELECT tags FROM a ORDER BY tags": "ORDER BY an array",
		"SELECT max(n) OVER () FROM a":                              "max() of arrays over a window",
	}
	for in, want := range refused {
		tree, err := pg_query.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckDuckDB(tree.Stmts[0].Stmt, s)
		if err == nil {
			_, err = DuckDB(tree.Stmts[0].Stmt, s)
		}
		if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want 0A000 naming %q", in, err, want)
		}
	}
	// DuckDB alone (no CheckDuckDB before) refuses what the SQLite
	// writer refuses once the statement may hold arrays: DuckDB would
	// sort the text.
	tree, err := pg_query.Parse("SELECT tags FROM a ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DuckDB(tree.Stmts[0].Stmt, s); pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "DuckDB replicas") {
		t.Errorf("ORDER BY an array by position, DuckDB alone: %v, want 0A000", err)
	}
}
