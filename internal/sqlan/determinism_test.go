package sqlan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestWriteDeterminism: a statement that writes rows chosen or numbered
// by scan order is given a total order (the PostgreSQL form shows it) or
// refused with 0A000 naming the construct (issue 14, item 3).
func TestWriteDeterminism(t *testing.T) {
	env := envWith(t,
		"CREATE TABLE src (k int PRIMARY KEY, v int, g int, f float8, j jsonb)",
		"CREATE TABLE nokey (a int, b int)",
		"CREATE TABLE dst (k int, v int)",
		"CREATE TABLE tgt (g int PRIMARY KEY, k int)",
		"CREATE VIEW sv AS SELECT k, v FROM src",
		"CREATE VIEW uv AS SELECT k, v * 2 FROM src",
		"CREATE VIEW starv AS SELECT * FROM src",
		"CREATE VIEW av (a, b) AS SELECT k, v FROM src",
		"CREATE VIEW fv AS SELECT g, sum(f) AS total FROM src GROUP BY g",
		"CREATE VIEW fv2 AS SELECT g FROM fv",
	)
	// Two PostgreSQL replicas: the rules do not depend on the dialects,
	// and this keeps the dialects' own refusals out of the table.
	env.Replicas = map[driver.Dialect][]string{driver.Postgres: {"pg1", "pg2"}}
	for _, tc := range []struct {
		sql string
		// want is a piece of the PostgreSQL form when accepted, or of
		// the message when refused (refused set).
		want    string
		refused bool
	}{
		// LIMIT and OFFSET anywhere in a write.
		{"INSERT INTO dst SELECT * FROM (SELECT k, v FROM src) x LIMIT 1", "SELECT x.k, x.v FROM (SELECT k, v FROM src) x ORDER BY 1, 2 LIMIT 1", false},
		{"INSERT INTO dst SELECT k, v FROM src ORDER BY v LIMIT 1", "ORDER BY v, 1 LIMIT 1", false},
		{"INSERT INTO dst SELECT k, v FROM src OFFSET 1", "ORDER BY 1, 2 OFFSET 1", false},
		{"UPDATE dst SET v = 1 WHERE k = (SELECT k FROM src ORDER BY v LIMIT 1)", "ORDER BY v, 1 LIMIT 1", false},
		{"DELETE FROM dst WHERE k IN (SELECT a FROM nokey LIMIT 2)", "ORDER BY 1 LIMIT 2", false},
		{"INSERT INTO dst SELECT k, v FROM src x JOIN tgt USING (k) LIMIT 1", "ORDER BY 1, 2", false},
		// * takes src's jsonb column j, which no engine orders as
		// PostgreSQL does: under a join no key makes the order total.
		{"INSERT INTO dst SELECT * FROM src x JOIN tgt USING (k) LIMIT 1", "LIMIT over rows shepherd cannot order completely", true},
		{"INSERT INTO dst SELECT * FROM sv LIMIT 1", "SELECT sv.k, sv.v FROM sv ORDER BY 1, 2 LIMIT 1", false},
		{"INSERT INTO dst SELECT * FROM uv LIMIT 1", "LIMIT over rows shepherd cannot order", true},
		{"INSERT INTO dst (k) SELECT k FROM (SELECT * FROM starv LIMIT 1) s", "LIMIT over rows", true},
		{"INSERT INTO dst SELECT * FROM av LIMIT 1", "SELECT av.a, av.b FROM av ORDER BY 1, 2 LIMIT 1", false},
		{"INSERT INTO dst SELECT * FROM src NATURAL JOIN tgt LIMIT 1", "LIMIT over rows", true},
		{"INSERT INTO dst SELECT * FROM uv OFFSET 1", "OFFSET over rows", true},
		{"INSERT INTO dst (k) SELECT j::text::int FROM (SELECT j FROM src LIMIT 1) s", "LIMIT over rows", true},
		// json columns cannot be sort keys, but a primary key among the
		// keys orders the rows of one table completely.
		{"INSERT INTO dst (k) SELECT k FROM (SELECT k, j FROM src LIMIT 1) s", "(SELECT k, j FROM src ORDER BY 1 LIMIT 1)", false},
		{"INSERT INTO dst (k) SELECT k FROM (SELECT j, s2.k FROM src s2 ORDER BY v LIMIT 1) s", "ORDER BY v, 2 LIMIT 1", false},
		{"INSERT INTO dst (k) SELECT k FROM (SELECT j, v FROM src LIMIT 1) s", "LIMIT over rows", true},
		{"WITH src AS (SELECT 1 AS k, '{}'::jsonb AS j UNION ALL SELECT 1, '[]') INSERT INTO dst (k) SELECT k FROM (SELECT k, j FROM src LIMIT 1) s", "LIMIT over rows", true},
		{"INSERT INTO dst SELECT k, v FROM src ORDER BY v FETCH FIRST 1 ROWS WITH TIES", "WITH TIES", false},
		// DISTINCT ON.
		{"INSERT INTO dst SELECT DISTINCT ON (v) k, v FROM src", "DISTINCT ON (v) k, v FROM src ORDER BY v, 1", false},
		{"INSERT INTO dst SELECT DISTINCT ON (v) * FROM uv", "DISTINCT ON over rows", true},
		// Windows.
		{"INSERT INTO dst SELECT k, row_number() OVER (ORDER BY v) FROM src", "row_number() OVER (ORDER BY v, src.k)", false},
		{"INSERT INTO dst SELECT k, row_number() OVER w FROM src s WINDOW w AS (PARTITION BY g ORDER BY v)", "OVER (PARTITION BY g ORDER BY v, s.k)", false},
		{"INSERT INTO dst SELECT k, row_number() OVER (ORDER BY k) FROM src", "row_number() OVER (ORDER BY k)", false},
		{"INSERT INTO dst SELECT k, rank() OVER (ORDER BY v) FROM src", "rank() OVER (ORDER BY v)", false},
		{"INSERT INTO dst SELECT k, sum(v) OVER (ORDER BY v) FROM src", "sum(v) OVER (ORDER BY v)", false},
		{"INSERT INTO dst SELECT a, row_number() OVER (ORDER BY b) FROM nokey", "row_number() over a window whose ORDER BY has ties", true},
		{"INSERT INTO dst SELECT k, lag(v) OVER (ORDER BY v) FROM src x JOIN tgt USING (k)", "lag() over a window", true},
		{"INSERT INTO dst SELECT k, last_value(v) OVER (ORDER BY v) FROM src", "last_value() over a window", true},
		{"INSERT INTO dst SELECT k, sum(v) OVER (ORDER BY v ROWS 1 PRECEDING) FROM src", "sum() over a window", true},
		{"INSERT INTO dst SELECT k, first_value(v) OVER (ORDER BY k) FROM src", "first_value(v) OVER (ORDER BY k)", false},
		// Ordered aggregates.
		{"INSERT INTO dst (k) SELECT length(string_agg(v::text, ',')) FROM src", "string_agg(v::text, ',' ORDER BY v::text)", false},
		{"INSERT INTO dst (k) SELECT length(string_agg(v::text, ',' ORDER BY g)) FROM src", "ORDER BY g, v::text)", false},
		// Float aggregates.
		{"INSERT INTO dst (k) SELECT sum(f) FROM src", "sum() of float4/float8", true},
		{"UPDATE dst SET v = (SELECT avg(f * 2) FROM src)", "avg() of float4/float8", true},
		{"INSERT INTO dst (k) SELECT sum(v::float8) FROM src", "sum() of float4/float8", true},
		{"INSERT INTO dst (k) SELECT sum(f::numeric) FROM src", "sum(f::numeric)", false},
		{"INSERT INTO dst (k) SELECT sum(v) FROM src", "sum(v)", false},
		{"INSERT INTO dst SELECT g, total FROM fv", "sum() of float4/float8 values in view fv", true},
		{"UPDATE dst SET v = 1 WHERE k IN (SELECT g FROM fv2)", "sum() of float4/float8 values in view fv", true},
		{"INSERT INTO dst SELECT * FROM sv", "SELECT * FROM sv", false},
		{"SELECT * FROM fv", "SELECT * FROM fv", false},
		// UPDATE ... FROM and DELETE ... USING.
		{"UPDATE tgt SET k = src.k FROM src WHERE src.g = tgt.g", "UPDATE ... FROM where a row may match several rows of src", true},
		{"UPDATE tgt SET k = s.k FROM src s WHERE s.k = tgt.g AND s.v > 0", "FROM src s WHERE s.k = tgt.g", false},
		{"UPDATE tgt SET k = s.k FROM src s, nokey n WHERE s.k = tgt.g AND n.a = 1", "several rows of nokey", true},
		{"UPDATE tgt SET k = s.k FROM (SELECT k FROM src) s WHERE s.k = tgt.g", "UPDATE ... FROM from a join or subquery", true},
		{"UPDATE tgt SET k = s.k FROM src s WHERE s.k = s.v", "several rows of src", true},
		{"DELETE FROM tgt USING src WHERE src.g = tgt.g", "DELETE FROM tgt USING src", false},
		{"DELETE FROM tgt USING src WHERE src.g = tgt.g RETURNING src.k", "DELETE ... USING ... RETURNING where a row may match several rows of src", true},
		// Reads are answered by the vote: only completed, never refused.
		{"SELECT * FROM uv LIMIT 1", "SELECT * FROM uv LIMIT 1", false},
		{"SELECT sum(f) FROM src", "sum(f)", false},
		{"SELECT string_agg(v::text, ',') FROM src", "ORDER BY v::text", false},
		// Views a write may read get the same rules when created.
		{"CREATE VIEW top1 AS SELECT k, v FROM src LIMIT 1", "ORDER BY 1, 2 LIMIT 1", false},
		{"CREATE VIEW top2 AS SELECT * FROM uv LIMIT 1", "LIMIT over rows", true},
		{"CREATE VIEW rn AS SELECT a, row_number() OVER (ORDER BY b) FROM nokey", "row_number() over a window", true},
	} {
		st, err := ParseOneIn(tc.sql, env)
		if tc.refused {
			var pe *pgerr.Error
			if err == nil {
				pg, _ := st.For(driver.Postgres)
				t.Errorf("%s: accepted as %s, want 0A000 naming %q", tc.sql, pg, tc.want)
			} else if !errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported || !strings.Contains(pe.Message, tc.want) {
				t.Errorf("%s: %v, want 0A000 naming %q", tc.sql, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if pg, _ := st.For(driver.Postgres); !strings.Contains(pg, tc.want) {
			t.Errorf("%s: written as %s, want it to contain %s", tc.sql, pg, tc.want)
		}
	}
}

// TestSortKeys: a read whose ORDER BY shepherd cannot make total tells
// the vote which output columns its leading keys are, so that answers
// are compared as tie groups in order (answer.DigestSorted) rather than
// as multisets, which endorsed a primary's misordered rows.
func TestSortKeys(t *testing.T) {
	env := envWith(t,
		"CREATE TABLE src (k int PRIMARY KEY, v int, j json)",
		"CREATE VIEW sv AS SELECT k, v FROM src",
		"CREATE VIEW uv AS SELECT k, v, k * 2 FROM src",
	)
	env.Replicas = map[driver.Dialect][]string{driver.Postgres: {"pg1", "pg2"}}
	for sql, want := range map[string]string{
		"SELECT k, v FROM src ORDER BY v":        "ordered",
		"SELECT * FROM sv ORDER BY v":            "ordered", // the view's columns are known
		"SELECT * FROM uv ORDER BY 2, 1":         "[1 0]",
		"SELECT * FROM uv ORDER BY 2, v":         "[1]",
		"SELECT * FROM uv ORDER BY v":            "[]",
		"SELECT v, j FROM src ORDER BY v":        "[0]",
		"SELECT j, v AS w FROM src ORDER BY w":   "[1]",
		"SELECT j, v FROM src ORDER BY v + 1, v": "[]",
		"SELECT k, j FROM src ORDER BY v":        "ordered", // the key orders the rest
		"SELECT * FROM sv":                       "[]",
		// PostgreSQL cannot sort the json a -> gives, nor a cast to json.
		"SELECT v, j -> 'a' FROM src ORDER BY v":      "[0]",
		"SELECT v, j::jsonb FROM src ORDER BY v":      "[0]",
		"SELECT v, j #> '{a}' FROM src ORDER BY v":    "[0]",
		"SELECT v, now() - now() FROM src ORDER BY v": "[0]",
	} {
		st, err := ParseOneIn(sql, env)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		got := fmt.Sprint(st.SortKeys)
		if st.Ordered {
			got = "ordered"
		}
		if got != want {
			t.Errorf("%s: sort keys %s, want %s", sql, got, want)
		}
	}
}

// TestWritesPrintedOtherwiseOnMariaDB: with MariaDB among the replicas, a
// write holding a json operator, AT TIME ZONE, date_trunc, to_char, age
// or an interval is refused: MariaDB's translation prints or compares
// such values otherwise in some cases (a jsonb number 1e2, key order,
// timestamps' fraction), and what a write stores, or which rows it picks,
// is not voted (the review found MariaDB storing other text than
// PostgreSQL and SQLite). Reads keep them (the vote sees a difference),
// and so do writes without MariaDB.
func TestWritesPrintedOtherwiseOnMariaDB(t *testing.T) {
	env := envWith(t, "CREATE TABLE ev (id int PRIMARY KEY, j jsonb, ts timestamp, s text)",
		"CREATE VIEW evj AS SELECT id, j ->> 'a' AS a FROM ev")
	for _, tc := range []struct {
		sql, want string
	}{
		{"INSERT INTO ev (id, s) SELECT id + 100, j ->> 'a' FROM ev", "json operator ->>"},
		{"UPDATE ev SET s = 'x' WHERE j -> 'a' = '1'::jsonb", "json operator ->"},
		{"DELETE FROM ev WHERE j @> '{\"a\": 1}'", "json operator @>"},
		{"INSERT INTO ev (id, s) SELECT id + 100, (ts AT TIME ZONE 'UTC')::text FROM ev", "AT TIME ZONE"},
		{"UPDATE ev SET s = date_trunc('week', ts)::text", "date_trunc() result"},
		{"UPDATE ev SET s = (ts + interval '1 day')::text", "computed with an interval"},
		{"INSERT INTO ev (id, s) SELECT id + 100, a FROM evj", "json operator ->> (in view evj)"},
	} {
		if _, err := ParseOneIn(tc.sql, env); pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 0A000 naming %q", tc.sql, err, tc.want)
		}
		pgOnly := *env
		pgOnly.Replicas = map[driver.Dialect][]string{driver.Postgres: {"pg"}, driver.SQLite: {"lite"}}
		if _, err := ParseOneIn(tc.sql, &pgOnly); pgerr.Code(err) == pgerr.FeatureNotSupported && strings.Contains(err.Error(), "with MariaDB replicas") {
			t.Errorf("%s without MariaDB: %v", tc.sql, err)
		}
	}
	if _, err := ParseOneIn("SELECT j ->> 'a', ts AT TIME ZONE 'UTC' FROM ev", env); err != nil && strings.Contains(err.Error(), "statement that writes") {
		t.Errorf("a read: %v", err)
	}
	// The values themselves are the same everywhere.
	for _, q := range []string{"UPDATE ev SET ts = ts + interval '1 day'", "UPDATE ev SET ts = date_trunc('day', ts)"} {
		if _, err := ParseOneIn(q, env); err != nil && strings.Contains(err.Error(), "statement that writes") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestFloatTextByEngines: a write storing a float's text is refused
// whenever a replica is not PostgreSQL (MariaDB, SQLite or DuckDB print
// floats otherwise), and allowed on PostgreSQL replicas alone.
func TestFloatTextByEngines(t *testing.T) {
	env := envWith(t, "CREATE TABLE df (id int PRIMARY KEY, f float8, t text)")
	for _, tc := range []struct {
		replicas map[driver.Dialect][]string
		engines  string
	}{
		{map[driver.Dialect][]string{driver.Postgres: {"pg1", "pg2"}}, ""},
		{map[driver.Dialect][]string{driver.Postgres: {"pg"}, driver.SQLite: {"l1", "l2"}}, "SQLite"},
		{map[driver.Dialect][]string{driver.Postgres: {"pg"}, driver.MySQL: {"m"}}, "MariaDB"},
		{map[driver.Dialect][]string{driver.Postgres: {"pg"}, driver.DuckDB: {"d"}}, "DuckDB"},
	} {
		env.Replicas = tc.replicas
		_, err := ParseOneIn("UPDATE df SET t = f::text", env)
		var pe *pgerr.Error
		switch {
		case tc.engines == "" && err != nil:
			t.Errorf("%v: %v, want it accepted", tc.replicas, err)
		case tc.engines != "" && (!errors.As(err, &pe) || pe.Code != "0A000" || !strings.Contains(pe.Message, "with "+tc.engines+" replicas")):
			t.Errorf("%v: %v, want 0A000 naming %s", tc.replicas, err, tc.engines)
		}
	}
}
