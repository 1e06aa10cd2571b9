package server

import (
	"context"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestEmbeddedDiverseJSON: json, jsonb, bytea and uuid values on the
// diverse embedded cluster. DuckDB keeps json and jsonb as the text
// SQLite keeps, bytea constants as PostgreSQL reads them, and computes
// the json operators with the SQLite driver's functions: every answer
// matches the SQLite replicas' (no mismatch), the tables hold the same
// rows, and the answers are PostgreSQL's. A column named at (a word
// DuckDB reserves) is quoted for DuckDB.
func TestEmbeddedDiverseJSON(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	for _, sql := range []string{
		"CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, payload json, doc jsonb, body bytea, ref uuid)",
		`INSERT INTO ev VALUES (1, '2024-01-01 12:00:00+00', '{"user": "ada", "ok": true}', '{"b": [1.0, 1e2], "a": 1, "a": 2}', '\xdeadbeef', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'),
			(2, '2024-03-31 01:30:00+02', '{"size": 1024, "parts": [1, 2, 3]}', '"x"', 'hello', NULL),
			(3, '2023-12-31 23:00:00-05', NULL, NULL, decode('00ff10', 'hex'), NULL)`,
		`UPDATE ev SET doc = '{"k": "\u0041"}', body = '\x0102' WHERE id = 3`,
		"CREATE TABLE ev2 (id int PRIMARY KEY, kind varchar(5), doc jsonb, body bytea)",
		`INSERT INTO ev2 SELECT id, 'k' || id, '{"a": [1.0], "z": 1}', '\x00ff'::bytea FROM ev`,
		`INSERT INTO ev2 VALUES (9, 'nine', '{"a": 1, "a": 2}'::json, '\x01020304')`,
	} {
		mustExec(t, c, sql)
	}
	// PostgreSQL reads the constant as bytea input; the SQLite replicas
	// would store its text.
	if _, err := c.Exec(ctx, `INSERT INTO ev2 SELECT 10, 'x', NULL, '\x00ff'`); sqlstate(err) != "0A000" {
		t.Errorf("INSERT ... SELECT of a string constant into a bytea column: %v, want 0A000", err)
	}
	queries := []struct{ sql, want string }{
		{"SELECT payload->>'user' FROM ev WHERE id = 1", "ada"},
		{"SELECT (payload->'parts'->1)::text FROM ev WHERE id = 2", "2"},
		{"SELECT payload#>>'{parts,2}' FROM ev WHERE id = 2", "3"},
		{"SELECT doc::text FROM ev WHERE id = 1", `{"a": 2, "b": [1.0, 100]}`},
		{"SELECT doc::text FROM ev WHERE id = 3", `{"k": "A"}`},
		{`SELECT count(*)::text FROM ev WHERE payload::jsonb @> '{"ok": true}'`, "1"},
		{`SELECT count(*)::text FROM ev WHERE doc = '{"a": 2.0, "b": [1, 100]}'::jsonb`, "1"},
		{`SELECT count(*)::text FROM ev WHERE doc ? 'k' OR doc <> '"x"'`, "2"},
		{`SELECT string_agg(id::text, ',' ORDER BY id) FROM ev WHERE doc > '"a"'::jsonb`, "1,2,3"},
		{`SELECT string_agg(id::text, ',' ORDER BY id) FROM ev WHERE doc->'a' IN ('2', '"x"')`, "1"},
		{"SELECT length(body)::text FROM ev WHERE id = 1", "4"},
		{"SELECT length(body)::text FROM ev WHERE id = 3", "2"},
		{"SELECT ref::text FROM ev WHERE id = 1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"SELECT initcap('hello wORLD mc-donald')", "Hello World Mc-Donald"},
		{"SELECT string_agg(doc::text || length(body), ' ' ORDER BY id) FROM ev2", `{"a": [1.0], "z": 1}2 {"a": [1.0], "z": 1}2 {"a": [1.0], "z": 1}2 {"a": 2}4`},
	}
	for _, q := range queries {
		var got string
		if err := c.QueryRow(ctx, q.sql, pgx.QueryExecModeSimpleProtocol).Scan(&got); err != nil {
			t.Errorf("%s: %v", q.sql, err)
			continue
		}
		if got != q.want {
			t.Errorf("%s: %q, want %q", q.sql, got, q.want)
		}
	}
	// Whole rows, voted on by every replica.
	for _, sql := range []string{"SELECT * FROM ev ORDER BY id", `SELECT '{"a": [1, 2]}'::json, '\x0102'::bytea, decode('414243', 'hex'), '{"b": 1, "a": 2}'::jsonb`} {
		rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	idle, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// TestEmbeddedDiverseFunctions runs PostgreSQL's functions DuckDB
// replicas compute with the SQLite driver's implementation or with a
// rewrite by type (round() of a float8 half to even, of an integer a
// float8; the regular expression operators; format(); octet_length())
// and the date and time functions (extract() of seconds and epochs,
// to_char(), age() by the SQLite driver; date_trunc() and AT TIME ZONE
// 'UTC' by DuckDB) on the diverse embedded cluster: DuckDB answers every one as the
// SQLite replicas do (no mismatch), and some as PostgreSQL does.
func TestEmbeddedDiverseFunctions(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	for _, sql := range []string{
		"CREATE TABLE p (id int PRIMARY KEY, name text, grade int, x numeric(10,3), f float8, w text, code char(4))",
		`INSERT INTO p VALUES (1, 'Alice', 3, 2.5, 2.5, 'héllo', 'é'), (2, 'bob', 2, -2.5, -0.5, NULL, 'ab  '), (3, 'Cé dric', 1, 1234.567, 3.5, 'ab', NULL)`,
		"CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, body bytea)",
		`INSERT INTO ev VALUES (1, '2024-01-01 12:00:00+00', '\xdeadbeef'), (2, '2024-02-29 23:59:59.123456+00', 'hello'), (3, '2024-03-31 01:30:00+02', NULL)`,
	} {
		mustExec(t, c, sql)
	}
	for _, sql := range []string{
		"SELECT id, octet_length(w), char_length(w) FROM p ORDER BY id",
		"SELECT reverse('shepherd'), repeat('ab', 3), initcap('hello wORLD')",
		"SELECT id, initcap(name), initcap(lower(name) || ' mc-donald_x 2nd éa'), initcap(NULL) FROM p ORDER BY id",
		"SELECT format('%s has grade %s', name, grade) FROM p ORDER BY id",
		"SELECT format('%s-%s-%1$s', 'a', NULL), format('100%%'), format('%s', id) FROM p ORDER BY id",
		"SELECT regexp_replace('a1b22c333', '[0-9]+', '#', 'g'), regexp_replace(name, '[aeiou]+', '_', 'gi') FROM p ORDER BY id",
		"SELECT name, name ~ '^[A-D]', name ~* '^a', name !~ 'e', name !~* 'E' FROM p ORDER BY id",
		"SELECT round(2.5), round(-2.5), round(2.345, 2), round(1234.5678, -2)",
		"SELECT round(2.5::double precision), round(3.5::double precision), round(-0.5::double precision)",
		"SELECT id, ceil(grade) / 2, round(grade) / 4, floor(id) / 7, round(x), round(f), trunc(f), ceil(x) FROM p ORDER BY id",
		"SELECT id, at FROM ev ORDER BY id",
		"SELECT id FROM ev WHERE at - TIMESTAMPTZ '2024-01-01 00:00:00+00' > INTERVAL '30 days' ORDER BY id",
		"SELECT id, TIMESTAMPTZ '2024-03-01 00:00:00+00' - at <= INTERVAL '1 month 1 hour', INTERVAL '1 day' = at - at FROM ev ORDER BY id",
		"SELECT id, at - TIMESTAMPTZ '2024-02-29 23:59:59.5+00', TIMESTAMPTZ '2024-01-01 12:00:00+00' - at FROM ev ORDER BY id",
		"SELECT id, date_part('day', at) / 2, extract(second FROM at), extract(epoch FROM at), date_part('dow', at), extract(isoyear FROM at) FROM ev ORDER BY id",
		"SELECT id, to_char(at, 'DD Mon YYYY, HH12:MI:SS AM'), to_char(at, 'YYYY-MM-DD HH24:MI:SS.US'), age(at::timestamp, TIMESTAMP '2023-01-15') FROM ev ORDER BY id",
		"SELECT id, date_trunc('week', at), date_trunc('quarter', at), date_trunc('day', at), date_trunc('month', at::date) FROM ev ORDER BY id",
		"SELECT id, at AT TIME ZONE 'UTC', (at AT TIME ZONE 'UTC') AT TIME ZONE 'utc' FROM ev WHERE at AT TIME ZONE 'UTC' >= TIMESTAMP '2024-02-01' ORDER BY id",
		"SELECT make_date(2024, 2, 29), age(TIMESTAMP '2024-01-31', TIMESTAMP '2024-03-01')",
		"SELECT id, extract(epoch FROM at - TIMESTAMPTZ '2024-01-01 00:00:00+00'), encode(body, 'hex'), length(body) FROM ev ORDER BY id",
		"SELECT id, substr(name, 2, 3), substring(name FROM 1 FOR 2), substring(name, 3), substr(w, 2) FROM p ORDER BY id",
		"SELECT id, substring(name from '[a-z]+'), substring(name from 'x'), substring(name from 'l(i)') FROM p ORDER BY id",
		"SELECT lpad('abc', -1, 'x'), lpad('abc', 5, ''), rpad(NULL, 3, 'x'), lpad('héé', 5, 'é'), left('héllo', -2), right('héllo', -2)",
		"SELECT id, code || '|', length(code), octet_length(code) FROM p ORDER BY id",
		"SELECT '123'::int + 1, '  7 '::int, ' -7'::int8",
		"SELECT power(2, 10), sqrt(16), exp(0), ln(1), log(100), power(2.5::float8, 2)",
		"SELECT trunc(4.567, 2), trunc(-4.567), sign(-3), sign(0), sign(2.5)",
		"SELECT id, sign(grade) / 2, sqrt(abs(f)), ln(grade), sign(x), exp(f) FROM p ORDER BY id",
		"SELECT id, at + INTERVAL '1 month 2 days 03:04:05.5', at - INTERVAL '1 year', DATE '2024-01-31' + INTERVAL '1 month 1 day' FROM ev ORDER BY id",
	} {
		rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	var got []float64
	rows, err := c.Query(ctx, "SELECT round(f) FROM p ORDER BY id", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f float64
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		got = append(got, f)
	}
	if len(got) != 3 || got[0] != 2 || got[1] != 0 || !math.Signbit(got[1]) || got[2] != 4 {
		t.Errorf("round() of float8 2.5, -0.5, 3.5: %v; want 2, -0, 4 (half to even)", got)
	}
	idle, cancel := context.WithTimeout(ctx, 30e9)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}
