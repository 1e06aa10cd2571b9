package sqlan

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// fuzzSchema is the catalog FuzzParse analyses against, so that the
// paths that depend on known tables (SERIAL and now() fills, typed
// translation, * expansion, column typing) run too.
var fuzzSchema = []string{
	"CREATE TABLE t (id serial PRIMARY KEY, a int, b text DEFAULT 'x', n numeric(12,2), at timestamptz DEFAULT now())",
	"CREATE TABLE u (k bigint PRIMARY KEY, s smallint NOT NULL, f float8, d date, v varchar(10), ok bool)",
	"CREATE VIEW w AS SELECT id, a FROM t",
}

// FuzzParse feeds arbitrary text to the analyser, with no schema and
// with fuzzSchema: it must never panic, every error must carry a
// SQLSTATE other than XX000 (a recovered panic is one), and every
// statement's dialect forms must exist with placeholders the client's
// parameters can fill. Column typing and the describe probe run too.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "select a from t where id = $1 order by a", "BEGIN; UPDATE t SET a = $2 WHERE b = $1; COMMIT",
		"INSERT INTO t VALUES ($1, '$2') RETURNING *", "SET x = 1", "SHOW ALL", "-- c\n;", "COPY t FROM STDIN",
		"SELECT $0", "SELECT $99999999999", "/* */ SELECT 'a;b'",
		"INSERT INTO t DEFAULT VALUES RETURNING *", "SELECT a FROM t ORDER BY 0", "SELECT 1+1+1+1+1+1+1+1+1+1+1+1+1+1+1",
		"SELECT (SELECT (SELECT (SELECT (SELECT a FROM t))))", "SELECT avg(n), avg(a) FROM t GROUP BY b",
		// Determinism of writes and PostgreSQL's refusals.
		"INSERT INTO t SELECT * FROM (SELECT 1 AS a) x JOIN u USING (a) LIMIT 1", "SELECT DISTINCT ON (a) * FROM t",
		"INSERT INTO t SELECT row_number() OVER w, string_agg(b, ',') FROM t WINDOW w AS (w2 ORDER BY a)",
		"UPDATE t SET a = u.a FROM u WHERE u.id = t.id", "DELETE FROM t USING u RETURNING u.*",
		"SELECT CASE WHEN a > 0 THEN 1 WHEN 1 = 1 THEN 2 ELSE -2147483648 / -1 END, coalesce(NULL, 1 % 0) FROM t",
		"SELECT +a, -'x', a + 'x', '9'::int2 * 9999::int2 FROM t", "SELECT E'\\x00'",
		"SELECT a::text, b FROM t ORDER BY a, b", "SELECT lower(b) FROM t GROUP BY lower ORDER BY lower",
		"SELECT round(avg(a), -2), avg(n)::numeric(20,4) FROM t ORDER BY 1", "SELECT sum(a)::text FROM t",
		"SELECT * FROM nope ORDER BY 3 DESC",
		`COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER match, FORCE_NULL (a), QUOTE '''', ESCAPE '\')`,
		"COPY (SELECT a FROM t ORDER BY a) TO STDOUT WITH CSV FORCE QUOTE *", "COPY t TO STDOUT (FORMAT binary, FREEZE)",
	} {
		f.Add(s)
	}
	withSchema := fuzzEnv(f)
	typingPanics = true
	f.Fuzz(func(t *testing.T, sql string) { checkAnalysis(t, sql, withSchema) })
}

// fuzzEnv is an Env whose schema holds fuzzSchema.
func fuzzEnv(f *testing.F) *Env {
	c, err := schema.Open("")
	if err != nil {
		f.Fatal(err)
	}
	for _, q := range fuzzSchema {
		tree, err := pg_query.Parse(q)
		if err != nil {
			f.Fatal(err)
		}
		if err := c.Apply(tree.Stmts[0].Stmt); err != nil {
			f.Fatal(err)
		}
	}
	return &Env{Replicas: DefaultEnv.Replicas, Schema: c.Snapshot()}
}

// FuzzNesting is FuzzParse over deeply nested statements (issue 18):
// prefix, then open repeated depth times, leaf, and close as often, at
// depths up to twice MaxExprDepth and beyond, where the random text of
// FuzzParse never reaches. The analyser must answer (or refuse with
// 54001) without a panic or a crash of the parser's C stack, and in
// time linear in the text.
func FuzzNesting(f *testing.F) {
	for _, s := range []struct {
		prefix, open, leaf, close string
		depth                     uint16
	}{
		{"SELECT ", "1+", "1", "", 999},
		{"SELECT ", "1+", "1", "", 3000},
		{"SELECT ", "(SELECT ", "1", ")", 1200},
		{"SELECT ", "(", "1", ")", 1001},
		{"SELECT ", "CASE WHEN true THEN ", "1", " ELSE 0 END", 700},
		{"SELECT ", "NOT (", "true", ")", 2000},
		{"SELECT a FROM t WHERE ", "a = 1 OR (", "true", ")", 900},
		{"SELECT ", "ARRAY[", "1", "]", 1500},
		{"SELECT ", "coalesce(", "a", ", 1)", 800},
		{"SELECT x FROM ", "(SELECT * FROM ", "t", ") x", 600},
		{"SELECT ", "'a' || ", "b", "", 5000},
		{"SELECT 1 ", "UNION SELECT ", "1", "", 1100},
		{"SELECT ", "-", "1", "", 4000},
		{"SELECT ", "a::int", "", "::text", 1000},
	} {
		f.Add(s.prefix, s.open, s.leaf, s.close, s.depth)
	}
	withSchema := fuzzEnv(f)
	typingPanics = true
	f.Fuzz(func(t *testing.T, prefix, open, leaf, close string, depth uint16) {
		// Short pieces keep a case under some 300 KB.
		if len(prefix) > 64 || len(open) > 32 || len(leaf) > 64 || len(close) > 32 {
			t.Skip()
		}
		d := int(depth) % (5 * MaxExprDepth)
		sql := prefix + strings.Repeat(open, d) + leaf + strings.Repeat(close, d)
		checkAnalysis(t, sql, withSchema)
	})
}

// checkAnalysis analyses sql with no schema and with withSchema: it must
// not panic, every error must carry a SQLSTATE other than XX000 (a
// recovered panic is one), and every statement's dialect forms must
// exist with placeholders the client's parameters can fill. Column
// typing and the describe probe run too.
func checkAnalysis(t *testing.T, sql string, withSchema *Env) {
	t.Helper()
	{
		for _, env := range []*Env{DefaultEnv, withSchema} {
			sts, err := ParseIn(sql, env)
			if err != nil {
				if c := pgerr.Code(err); c == pgerr.InternalError || len(c) != 5 {
					t.Fatalf("error without a proper SQLSTATE: %v", err)
				}
				continue
			}
			for _, st := range sts {
				for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite} {
					text, order := st.For(d)
					if text == "" && st.SQL != "" {
						t.Fatalf("empty %v form of %q", d, st.SQL)
					}
					for _, i := range order {
						if i < 0 || i >= st.NumParams+len(st.Pins) {
							t.Fatalf("%v form of %q uses parameter %d of %d", d, st.SQL, i, st.NumParams+len(st.Pins))
						}
					}
				}
				st.Columns()
				st.KnownColumns()
				st.DigestHints()
				st.Describe()
			}
		}
	}
}
