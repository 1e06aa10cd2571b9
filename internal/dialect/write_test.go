package dialect

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// testSchema knows one table, created the way a client would.
func testSchema(t *testing.T) *schema.Snapshot {
	t.Helper()
	var s *schema.Snapshot
	for _, q := range []string{
		"CREATE TABLE acct (id serial PRIMARY KEY, name text NOT NULL UNIQUE, bal numeric(12,2) NOT NULL, n int, created timestamptz DEFAULT now())",
		"CREATE INDEX acct_n ON acct (n)",
	} {
		next, err := s.Apply(parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	return s
}

func parse(t *testing.T, q string) *pg_query.Node {
	t.Helper()
	tree, err := pg_query.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].Stmt
}

// TestWrite pins down translations whose meaning depends on the details:
// each line is what the engine must receive for PostgreSQL's answer.
func TestWrite(t *testing.T) {
	s := testSchema(t)
	cases := []struct {
		sql, my, lite string
	}{
		// PostgreSQL truncates integer division; MariaDB's / does not.
		{"SELECT n / 2 FROM acct", "SELECT (`n` DIV 2) FROM `acct`", `SELECT ("n" / 2) FROM "acct"`},
		// NULLs sort last ascending in PostgreSQL, first in MariaDB; a
		// NOT NULL column needs no help.
		{"SELECT id FROM acct ORDER BY n, name DESC",
			"SELECT `id` FROM `acct` ORDER BY `n` IS NULL, `n`, `name` DESC",
			`SELECT "id" FROM "acct" ORDER BY "n" NULLS LAST, "name" DESC NULLS FIRST`},
		// LIKE's default escape is a backslash only in PostgreSQL.
		{"SELECT 1 FROM acct WHERE name LIKE 'a\\_%'",
			"SELECT 1 FROM `acct` WHERE (`name` LIKE 'a\\_%' ESCAPE '\\')",
			`SELECT 1 FROM "acct" WHERE ("name" LIKE 'a\_%' ESCAPE '\')`},
		// Row-value IN: SQLite takes a VALUES list.
		{"SELECT 1 FROM acct WHERE (id, n) IN ((1, 2), (3, 4))",
			"SELECT 1 FROM `acct` WHERE ((`id`, `n`) IN ((1, 2), (3, 4)))",
			`SELECT 1 FROM "acct" WHERE (("id", "n") IN (VALUES (1, 2), (3, 4)))`},
		// A timestamptz constant is stored as its UTC instant.
		{"SELECT 1 FROM acct WHERE created > '2026-01-01 12:00:00+02'",
			"SELECT 1 FROM `acct` WHERE (`created` > '2026-01-01 10:00:00')",
			`SELECT 1 FROM "acct" WHERE ("created" > '2026-01-01 10:00:00')`},
		// Money: SQLite adds floats, so sums and stored results are
		// rounded to the column's scale.
		{"SELECT sum(bal) FROM acct", "SELECT SUM(`bal`) FROM `acct`", `SELECT ROUND(SUM("bal"), 2) FROM "acct"`},
		{"UPDATE acct SET bal = bal * 1.05 WHERE id = $1",
			"UPDATE `acct` SET `bal` = (`bal` * 1.05) WHERE (`id` = ?)",
			// ... and a tie (7200.50 * 1.05 = 7560.525) rounds away from
			// zero as in PostgreSQL, in integers, not as the float
			// nearest to it would.
			`UPDATE "acct" SET "bal" = shepherd_numeric(ROUND(("bal" * 1.05), 4), 12, 2) WHERE ("id" = ?1)`},
		// OFFSET without LIMIT.
		{"SELECT id FROM acct OFFSET 5", "SELECT `id` FROM `acct` LIMIT 18446744073709551615 OFFSET 5", `SELECT "id" FROM "acct" LIMIT -1 OFFSET 5`},
		// FOR UPDATE is moot on SQLite, which runs one writer at a time.
		{"SELECT id FROM acct WHERE id = 1 FOR UPDATE", "SELECT `id` FROM `acct` WHERE (`id` = 1) FOR UPDATE", `SELECT "id" FROM "acct" WHERE ("id" = 1)`},
		{"SELECT a IS DISTINCT FROM b FROM (SELECT 1 AS a, NULL AS b) AS x",
			"SELECT (NOT (`a` <=> `b`)) FROM (SELECT 1 AS `a`, NULL AS `b`) AS `x`",
			`SELECT ("a" IS NOT "b") FROM (SELECT 1 AS "a", NULL AS "b") AS "x"`},
		{"DROP INDEX acct_n", "DROP INDEX `acct_n` ON `acct`", `DROP INDEX "acct_n"`},
	}
	for _, c := range cases {
		n := parse(t, c.sql)
		for _, want := range []struct {
			d   driver.Dialect
			sql string
		}{{driver.MySQL, c.my}, {driver.SQLite, c.lite}} {
			f, err := Write(n, want.d, s)
			if err != nil {
				t.Errorf("%s for %v: %v", c.sql, want.d, err)
				continue
			}
			if f.SQL != want.sql {
				t.Errorf("%s for %v:\n got %s\nwant %s", c.sql, want.d, f.SQL, want.sql)
			}
		}
	}
}

// TestUpsertCount: MariaDB counts a row an upsert updated twice; the form
// says how many rows PostgreSQL reports.
func TestUpsertCount(t *testing.T) {
	s := testSchema(t)
	f, err := Write(parse(t, "INSERT INTO acct (id, name, bal) VALUES (1, 'a', 1), (2, 'b', 2) ON CONFLICT (id) DO UPDATE SET bal = excluded.bal"), driver.MySQL, s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.SQL, "ON DUPLICATE KEY UPDATE `bal` = VALUES(`bal`)") || f.CountRows != 2 {
		t.Errorf("got %s, count %d", f.SQL, f.CountRows)
	}
}

// TestRefused: constructs a dialect cannot express are refused with
// 0A000 naming the construct and the dialect.
func TestRefused(t *testing.T) {
	s := testSchema(t)
	for _, c := range []struct {
		sql  string
		d    driver.Dialect
		word string
	}{
		{"SELECT 1 FROM acct a FULL JOIN acct b USING (id)", driver.MySQL, "FULL JOIN"},
		{"SELECT * FROM acct a FULL JOIN acct b ON a.id = b.id", driver.MySQL, "FULL JOIN"},
		{"SELECT DISTINCT ON (n) n FROM acct", driver.SQLite, "DISTINCT ON"},
		{"UPDATE acct SET n = 1 RETURNING id", driver.MySQL, "RETURNING"},
		{"UPDATE acct SET n = 1, bal = n", driver.MySQL, "assigns before"},
		{"SELECT id FROM acct FOR UPDATE SKIP LOCKED", driver.MySQL, "SKIP LOCKED"},
		{"SELECT $1 / $2", driver.MySQL, "division"},
		{"SELECT ARRAY[1.5, 2]", driver.SQLite, "ARRAY[...]"},
		{"SELECT format('%I', name) FROM acct", driver.MySQL, "format"},
		{"SELECT name ~ '(a)\\1' FROM acct", driver.SQLite, "regular expression"},
		{"SELECT regexp_replace(name, 'a|ab', 'x', 'g') FROM acct", driver.MySQL, "regexp_replace"},
		{"CREATE TABLE t (a numeric[])", driver.MySQL, "type"},
		{"SELECT string_agg(name, ',') FROM acct", driver.MySQL, "ORDER BY"},
	} {
		_, err := Write(parse(t, c.sql), c.d, s)
		if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), c.word) {
			t.Errorf("%s for %v: got %v, want 0A000 about %q", c.sql, c.d, err, c.word)
		}
	}
}

func TestNormalizeTime(t *testing.T) {
	for _, c := range []struct{ in, typ, want string }{
		{"2026-01-01 12:00:00+02", "timestamptz", "2026-01-01 10:00:00"},
		{"2026-01-01T10:00:00.500000Z", "timestamptz", "2026-01-01 10:00:00.5"},
		{"2026-01-01 10:00:00.123456", "timestamp", "2026-01-01 10:00:00.123456"},
		{"2026-03-04", "date", "2026-03-04"},
		{"2026-07-08 04:10:11.123456Z", "date", "2026-07-08"},
		{"2026-07-08 23:30:00-05", "date", "2026-07-08"},
		{"10:30", "time", "10:30:00"},
		{"2024-02-29 +00", "date", "2024-02-29"},
		{"2024-02-29 12:34:56.123 +00:00", "timestamptz", "2024-02-29 12:34:56.123"},
		{"2024-02-29 12:34:56.1234565-05", "timestamp", "2024-02-29 12:34:56.123456"},
	} {
		got, err := NormalizeTime(c.in, c.typ)
		if err != nil || got != c.want {
			t.Errorf("%q as %s: got %q, %v; want %q", c.in, c.typ, got, err, c.want)
		}
	}
	for bad, code := range map[string]string{
		"now": pgerr.FeatureNotSupported, "today": pgerr.FeatureNotSupported, "infinity": pgerr.FeatureNotSupported,
		"2026-13-01": pgerr.DatetimeFieldOverflow, "2026-01-01 10:00+16": pgerr.InvalidTimeZoneDisplacement,
		"Jan 1 2026 junk": pgerr.InvalidDatetimeFormat,
	} {
		if _, err := NormalizeTime(bad, "timestamp"); pgerr.Code(err) != code {
			t.Errorf("%q: got %v, want SQLSTATE %s", bad, err, code)
		}
	}
}

func TestRoundDecimal(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		want  string
	}{
		{"1.555", 2, "1.56"}, {"-1.555", 2, "-1.56"}, {"9.995", 2, "10.00"}, {"0.004", 2, "0.00"},
		{"-0.004", 2, "0.00"}, {"12", 2, "12.00"}, {"999.5", 0, "1000"}, {".5", 0, "1"},
	} {
		if got, ok := roundDecimal(c.in, c.scale); !ok || got != c.want {
			t.Errorf("roundDecimal(%q, %d) = %q, want %q", c.in, c.scale, got, c.want)
		}
	}
}

// TestBadConstants: a constant that does not read as its type fails as
// in PostgreSQL (the engines would read it as 0).
func TestBadConstants(t *testing.T) {
	for q, code := range map[string]string{
		"SELECT CAST('abc' AS integer)": pgerr.InvalidTextRepresentation,
		"SELECT '99999999999'::int4":    pgerr.NumericValueOutOfRange,
		"SELECT 'x1'::numeric":          pgerr.InvalidTextRepresentation,
	} {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			if _, err := Write(parse(t, q), d, nil); pgerr.Code(err) != code {
				t.Errorf("%s for %v: %v, want %s", q, d, err, code)
			}
		}
	}
}

// TestDropForeignKeyIndex: MariaDB refuses to drop the index a foreign
// key uses, PostgreSQL needs none: the key gets its own index first.
func TestDropForeignKeyIndex(t *testing.T) {
	var s *schema.Snapshot
	for _, q := range []string{
		"CREATE TABLE dept (id int PRIMARY KEY)",
		"CREATE TABLE emp (id int PRIMARY KEY, dept_id int REFERENCES dept (id), n int)",
		"CREATE INDEX emp_dept_idx ON emp (dept_id, n)",
		"CREATE INDEX emp_n ON emp (n)",
	} {
		next, err := s.Apply(parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	for q, want := range map[string]string{
		"DROP INDEX emp_dept_idx": "ALTER TABLE `emp` ADD INDEX `shepherd_fk_emp_dept_idx` (`dept_id`), DROP INDEX `emp_dept_idx`",
		"DROP INDEX emp_n":        "DROP INDEX `emp_n` ON `emp`",
	} {
		f, err := Write(parse(t, q), driver.MySQL, s)
		if err != nil || f.SQL != want {
			t.Errorf("%s: got %q, %v; want %q", q, f.SQL, err, want)
		}
	}
}

// TestByteaParam: an untyped parameter for a bytea column is bytea's text
// input, which PostgreSQL decodes; the other engines are given the bytes,
// not that text (they would store it as it is).
func TestByteaParam(t *testing.T) {
	var s *schema.Snapshot
	s, err := s.Apply(parse(t, "CREATE TABLE blobs (id int PRIMARY KEY, b bytea)"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
		form, err := Write(parse(t, "INSERT INTO blobs VALUES ($1, $2)"), d, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(form.Hints) < 2 || form.Hints[1] != answer.Bytes {
			t.Fatalf("%v: hints %v, want bytes for $2", d, form.Hints)
		}
		for in, want := range map[string]string{`\x0aff5c`: "\n\xff\\", `a\\b\001`: "a\\b\x01", "plain": "plain"} {
			if got := Arg(driver.Arg{Text: in}, form.Hints[1], d); got.Text != want || got.Type != answer.Bytes {
				t.Errorf("%v: %q gave %q (%v), want %q", d, in, got.Text, got.Type, want)
			}
		}
	}
	if got := Arg(driver.Arg{Text: `\x0a`}, answer.Bytes, driver.Postgres); got.Text != `\x0a` || got.Type != answer.Unknown {
		t.Errorf("postgres: %q (%v), want the untyped text unchanged", got.Text, got.Type)
	}
}

// TestUUIDAsCanonicalText: a uuid column is the canonical text on MariaDB
// (not its UUID type, which orders and accepts uuids otherwise than
// PostgreSQL); constants are written canonical or fail as PostgreSQL
// fails them; computed text cast to uuid is refused, since no engine
// would check or lower-case it.
func TestUUIDAsCanonicalText(t *testing.T) {
	s, err := (*schema.Snapshot)(nil).Apply(parse(t, "CREATE TABLE u (id uuid PRIMARY KEY, name text)"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Write(parse(t, "CREATE TABLE u (id uuid PRIMARY KEY, name text)"), driver.MySQL, nil)
	if err != nil || !strings.Contains(f.SQL, "`id` CHAR(36)") {
		t.Errorf("create: %q, %v; want id CHAR(36)", f.SQL, err)
	}
	for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
		for sql, want := range map[string]string{
			"SELECT name FROM u WHERE id = '{A0EEBC99-9C0B4EF8-BB6D6BB9-BD380A11}'": "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
			"SELECT 'A0EEBC999C0B4EF8BB6D6BB9BD380A11'::uuid":                       "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
		} {
			f, err := Write(parse(t, sql), d, s)
			if err != nil || !strings.Contains(f.SQL, want) {
				t.Errorf("%v: %s: %q, %v; want %s in it", d, sql, f.SQL, err, want)
			}
		}
		for sql, code := range map[string]string{
			"SELECT name FROM u WHERE id = 'a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11'": pgerr.InvalidTextRepresentation,
			"SELECT ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid":                 pgerr.InvalidTextRepresentation,
			"SELECT upper(name)::uuid FROM u":                                      pgerr.FeatureNotSupported,
		} {
			if _, err := Write(parse(t, sql), d, s); pgerr.Code(err) != code {
				t.Errorf("%v: %s: got %v, want SQLSTATE %s", d, sql, err, code)
			}
		}
	}
}

// TestFloatConstants: a float constant in exponent form is written as a
// number each engine reads (MariaDB took "1e+300E0" as a syntax error,
// which COPY of float columns sends); one PostgreSQL reads as infinity
// or NaN is written where the engine has it (SQLite's 9e999) and refused
// where it has not, not written as text the engine misreads.
func TestFloatConstants(t *testing.T) {
	s := testSchema(t)
	for _, c := range []struct{ sql, my, lite string }{
		{"SELECT '-1e300'::float8, '1e-05'::float8, '2.5'::float8, '3'::float4", "SELECT -1e+300, 1e-05, 2.5E0, 3.0E0", "SELECT -1e+300, 1e-05, 2.5, 3.0"},
		{"SELECT 'Infinity'::float8, '-inf'::float8", "", "SELECT 9e999, -9e999"},
		{"SELECT 'NaN'::float8", "", ""},
	} {
		n := parse(t, c.sql)
		for _, want := range []struct {
			d   driver.Dialect
			sql string
		}{{driver.MySQL, c.my}, {driver.SQLite, c.lite}} {
			f, err := Write(n, want.d, s)
			switch {
			case want.sql == "" && pgerr.Code(err) != pgerr.FeatureNotSupported:
				t.Errorf("%s for %v: %v, %v; want 0A000", c.sql, want.d, f.SQL, err)
			case want.sql != "" && (err != nil || f.SQL != want.sql):
				t.Errorf("%s for %v:\n got %s %v\nwant %s", c.sql, want.d, f.SQL, err, want.sql)
			}
		}
	}
}

// TestConstraintNamesWritten: MariaDB and SQLite get each constraint
// under the name PostgreSQL gives it (MariaDB names a primary key
// PRIMARY whatever it is called, and no column constraint), so that
// their errors name PostgreSQL's constraint.
func TestConstraintNamesWritten(t *testing.T) {
	s := testSchema(t)
	for _, c := range []struct {
		sql      string
		d        driver.Dialect
		contains []string
	}{
		{"CREATE TABLE t (id int PRIMARY KEY, a text UNIQUE, b int REFERENCES acct, CHECK (b > 0))", driver.MySQL,
			[]string{"CONSTRAINT `t_a_key` UNIQUE (`a`)", "CONSTRAINT `t_b_fkey` FOREIGN KEY (`b`)", "CONSTRAINT `t_b_check` CHECK"}},
		{"CREATE TABLE t (id int PRIMARY KEY, a text UNIQUE, b int REFERENCES acct, CHECK (b > 0))", driver.SQLite,
			[]string{`"a" TEXT CONSTRAINT "t_a_key" UNIQUE`, `CONSTRAINT "t_b_fkey" REFERENCES`, `CONSTRAINT "t_b_check" CHECK`}},
		{"ALTER TABLE acct ADD CHECK (n > 0)", driver.MySQL, []string{"ADD CONSTRAINT `acct_n_check` CHECK"}},
		{"ALTER TABLE acct ADD COLUMN m int CHECK (m > 0)", driver.MySQL, []string{"ADD COLUMN `m` INT, ADD CONSTRAINT `acct_m_check` CHECK"}},
		{"ALTER TABLE acct ADD COLUMN m int CHECK (m > 0)", driver.SQLite, []string{`CONSTRAINT "acct_m_check" CHECK`}},
	} {
		f, err := Write(parse(t, c.sql), c.d, s)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		for _, want := range c.contains {
			if !strings.Contains(f.SQL, want) {
				t.Errorf("%s for %v:\n  %s\nlacks %s", c.sql, c.d, f.SQL, want)
			}
		}
	}
}
