package dialect

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestDuckDBFunctions checks the text DuckDB replicas receive for json,
// jsonb and bytea values and the functions shared with SQLite: json
// kept as text, jsonb constants in jsonb's output form, bytea constants
// as their bytes, the json operators as calls of the SQLite driver's
// functions (chosen by the operands' types), and names DuckDB reserves
// quoted.
func TestDuckDBFunctions(t *testing.T) {
	s := &schema.Snapshot{Tables: map[string]*schema.Table{"ev": {Name: "ev", Key: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Type: "int4"}, {Name: "at", Type: "timestamptz"}, {Name: "payload", Type: "json"},
		{Name: "doc", Type: "jsonb"}, {Name: "body", Type: "bytea"}, {Name: "w", Type: "text"}, {Name: "c", Type: "bpchar", Mods: []int32{4}},
		{Name: "i", Type: "int4"}, {Name: "f", Type: "float8"}, {Name: "x", Type: "numeric", Mods: []int32{10, 2}}, {Name: "r", Type: "float4"},
		{Name: "k", Type: "varchar", Mods: []int32{3}},
	}}}}
	write := func(in string) (string, error) {
		tree, err := pg_query.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DuckDB(tree.Stmts[0].Stmt, s)
		if err != nil {
			return "", err
		}
		text, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		return QuoteDuckNames(text), nil
	}
	cases := []struct{ in, want string }{
		{"CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, payload json, doc jsonb, body bytea)",
			`CREATE TABLE ev (id int4 PRIMARY KEY, "at" timestamptz, payload "varchar", doc "varchar", body bytea)`},
		{`INSERT INTO ev (id, doc, body) VALUES (1, '{"b": 1, "a": 1, "a": 2}', '\xDEad'), (2, NULL, 'hi')`,
			`INSERT INTO ev (id, doc, body) VALUES (1, '{"a": 2, "b": 1}', unhex('dead')), (2, NULL, unhex('6869'))`},
		{`INSERT INTO ev (id, doc, body) SELECT id + 1, '{"b": 1, "a": 2}', body FROM ev UNION ALL SELECT 9, doc, '\x01'`,
			`INSERT INTO ev (id, doc, body) SELECT id + 1, '{"a": 2, "b": 1}', body FROM ev UNION ALL SELECT 9, doc, unhex('01')`},
		{`INSERT INTO ev (id, body, k) SELECT 1, '\x01', k FROM ev`,
			`INSERT INTO ev (id, body, k) SELECT c1, c2, shepherd_varchar(c3, 3) FROM (SELECT 1, unhex('01'), k FROM ev) shepherd_insert(c1, c2, c3)`},
		{`UPDATE ev SET doc = '{"a": 1, "a": 2}'::json, payload = '{"a": 1, "a": 2}'::json`,
			`UPDATE ev SET doc = '{"a": 2}'::"varchar", payload = '{"a": 1, "a": 2}'::"varchar"`},
		{`UPDATE ev SET doc = '[1.0, 1e2]', body = decode('00ff', 'hex') WHERE at > '2024-01-01'`,
			`UPDATE ev SET doc = '[1.0, 100]', body = unhex('00ff') WHERE "at" > '2024-01-01'`},
		{`SELECT '{"a":  1}'::json, '{"a":  1}'::jsonb, '\x01'::bytea`,
			`SELECT '{"a":  1}'::"varchar", '{"a": 1}'::"varchar", unhex('01')`},
		{`SELECT payload->'a', payload->>0, doc->>'a', doc#>>'{a,b}' FROM ev`,
			`SELECT shepherd_json_get(payload, 'a', 0), shepherd_json_get(payload, 0, 5), shepherd_json_get(doc, 'a', 3), shepherd_json_path(doc, '{a,b}', 3) FROM ev`},
		{`SELECT id FROM ev WHERE doc @> '{"a": 1}' AND doc ? 'b' AND doc = '{"a": 1}' AND doc > '1'`,
			`SELECT id FROM ev WHERE shepherd_jsonb_contains(doc, '{"a": 1}') AND shepherd_jsonb_exists(doc, 'b') AND shepherd_jsonb_eq(doc, '{"a": 1}') AND shepherd_jsonb_cmp(doc, '1') > 0`},
		{`SELECT id FROM ev WHERE doc NOT IN ('1', '2')`,
			`SELECT id FROM ev WHERE NOT (shepherd_jsonb_eq(doc, '1') OR shepherd_jsonb_eq(doc, '2'))`},
		// round() of a float8 rounds half to even, of an integer is a
		// float8; numeric's rounds half away from zero on both.
		{"SELECT round(f), round(i) / 2, ceil(i), round(x), trunc(f), round(2.5) FROM ev",
			"SELECT round_even(f, 0), CASE WHEN 2 = 0 THEN error('division by zero') ELSE i::float8 / 2 END, i::float8, round(x), trunc(f), round(2.5) FROM ev"},
		{`SELECT w ~ '^a\d', w !~* 'B', regexp_replace(w, 'a+', '_', 'gi'), format('%s-%s', w, i) FROM ev`,
			`SELECT shepherd_regexp_match(w, E'(?s)\\Aa[0-9]'), NOT shepherd_regexp_match(w, '(?s)[bB]'), shepherd_regexp_replace(w, '(?s)[aA]+', '_', 1), shepherd_format('%s-%s', w, i) FROM ev`},
		// Dates and times: the SQLite driver's extract() of seconds,
		// age() and to_char(); DuckDB's date_trunc() (of a date as a
		// timestamptz) and AT TIME ZONE 'UTC'.
		{"SELECT extract(second FROM at), date_part('day', at), extract(day FROM at), age(at, at), to_char(at, 'YYYY') FROM ev",
			"SELECT shepherd_date_part('second', \"at\"), shepherd_date_part('day', \"at\"), date_part('day', \"at\"), shepherd_age(\"at\", \"at\"), shepherd_to_char(\"at\", 'YYYY') FROM ev"},
		{"SELECT date_trunc('Month', at::date), at AT TIME ZONE 'Z', make_date(2024, 2, 29) FROM ev",
			"SELECT date_trunc('month', \"at\"::date::timestamptz), timezone('UTC', \"at\"), '2024-02-29'::date FROM ev"},
		// character(n) is padded in PostgreSQL, not in DuckDB.
		{"SELECT octet_length(c), substr(w, 2, 3), substring(w FROM -1 FOR 3), lpad(w, 3, '') FROM ev",
			`SELECT (strlen(rtrim(c, ' ')) + 4) - length(rtrim(c, ' ')), "substring"(w, 2, 3), "substring"(w, 1, 1), shepherd_lpad(w, 3, '') FROM ev`},
		// Both read white space around an integer, and an interval's
		// time of day, alike.
		{"SELECT ' 7 '::int, at + '1 month 2 days 03:04:05.5'::interval FROM ev",
			`SELECT ' 7 '::int4, "at" + '1 month 2 days 03:04:05.5'::"interval" FROM ev`},
		// SQLite's math functions, shared; sign() typed as PostgreSQL's.
		{"SELECT sqrt(f), power(i, 2), log(f), sign(i), sign(x) FROM ev",
			"SELECT shepherd_math_sqrt(f), shepherd_math_power(i, 2), shepherd_math_log(f), sign(i)::float8, sign(x)::\"numeric\"(1, 0) FROM ev"},
		{"SELECT initcap(w), length(body), octet_length(w), length(w) FROM ev",
			"SELECT shepherd_initcap(w), octet_length(body), strlen(w), length(w) FROM ev"},
	}
	for _, c := range cases {
		got, err := write(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	refused := map[string]string{
		"SELECT octet_length(c::char(4)) FROM ev":       "octet_length() of a character(n) value other than a column",
		"SELECT initcap(id) FROM ev":                    "initcap() of a int4",
		"SELECT decode(w, 'hex') FROM ev":               "decode()",
		"SELECT round(r) FROM ev":                       "round() of a float4",
		"SELECT sqrt(x) FROM ev":                        "sqrt() of a numeric value",
		"SELECT at AT TIME ZONE 'Europe/Paris' FROM ev": "AT TIME ZONE other than 'UTC'",
		"SELECT date_trunc('century', at) FROM ev":      "date_trunc('century'",
		"SELECT make_date(2023, 2, 29)":                 "make_date()",
		"SELECT w ~ w FROM ev":                          "pattern that is not a constant",
		"SELECT format('%s', f) FROM ev":                "format() of a float8",
	}
	for in, what := range refused {
		_, err := write(in)
		if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "DuckDB") {
			t.Errorf("%s: %v, want 0A000 naming %q for DuckDB", in, err, what)
		}
	}
}
