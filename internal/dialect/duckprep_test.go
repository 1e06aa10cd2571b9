package dialect

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestPrepareDuckDB: what the SQL writer's types and the schema tell the
// DuckDB text (see PrepareDuckDB): PostgreSQL's folds to NULL, numeric
// arithmetic widened to DECIMAL(38), a GROUP BY of a primary key
// completed with the table's other columns.
func TestPrepareDuckDB(t *testing.T) {
	s := testSchema(t)
	cases := []struct{ in, want string }{
		{"SELECT n / 0 = NULL, NULL IN (n / (n - n)) FROM acct WHERE n % 0 > NULL",
			"SELECT NULL, NULL FROM acct WHERE NULL"},
		// Not folded where PostgreSQL evaluates: a guard stays.
		{"SELECT n / 0 = 1 FROM acct", "SELECT CASE WHEN 0 = 0 THEN error('division by zero') ELSE n / 0 END = 1 FROM acct"},
		{"SELECT bal * 2.5, bal + n, n * 2 FROM acct",
			`SELECT (bal * 1::"numeric"(38, 0)) * (2.5 * 1::"numeric"(38, 0)), (bal * 1::"numeric"(38, 0)) + n, n * 2 FROM acct`},
		// An operand that is itself widened arithmetic is not widened again.
		{"SELECT bal * 2 * 3.5 FROM acct",
			`SELECT ((bal * 1::"numeric"(38, 0)) * 2) * (3.5 * 1::"numeric"(38, 0)) FROM acct`},
		{"SELECT id, n, count(*) FROM acct GROUP BY id",
			"SELECT id, n, count(*) FROM acct GROUP BY id, acct.name, acct.bal, acct.n, acct.created"},
		{"SELECT a.n FROM acct a JOIN acct b ON b.n = a.id GROUP BY a.id, b.n",
			"SELECT a.n FROM acct a JOIN acct b ON b.n = a.id GROUP BY a.id, b.n, a.name, a.bal, a.n, a.created"},
		// Not the table: a WITH query of its name; not the whole key.
		{"WITH acct AS (SELECT 1 AS id, 2 AS n) SELECT id, n FROM acct GROUP BY id, n",
			"WITH acct AS (SELECT 1 AS id, 2 AS n) SELECT id, n FROM acct GROUP BY id, n"},
		{"SELECT n, count(*) FROM acct GROUP BY n", "SELECT n, count(*) FROM acct GROUP BY n"},
		// A comparison with an average of integers: its sum against the
		// count (avgCompare), the count checked by the driver's macro.
		{"SELECT n FROM acct GROUP BY n HAVING avg(n) >= 2",
			"SELECT n FROM acct GROUP BY n HAVING sum(n) >= (2 * shepherd_avg_count(count(n)))"},
		{"SELECT id FROM acct WHERE n < -(SELECT avg(n) FROM acct)",
			"SELECT id FROM acct WHERE (n * (SELECT shepherd_avg_count(count(n)) FROM acct)) < (- (SELECT sum(n) FROM acct))"},
		// duckRewrites.
		{"SELECT 1 FROM acct WHERE n = ANY (ARRAY[1, NULL]) AND n <> ALL (ARRAY[2, 3]) OR n = ANY (ARRAY[4])",
			"SELECT 1 FROM acct WHERE ((n = 1 OR n = NULL) AND (n <> 2 AND n <> 3)) OR n = 4"},
		{"SELECT id FROM acct a WHERE (id, n) IN (SELECT n, id FROM acct) AND (SELECT true)",
			"SELECT id FROM acct a WHERE EXISTS (SELECT 1 FROM (SELECT n, id FROM acct) shepherd_in1(shepherd_in1_1, shepherd_in1_2) WHERE shepherd_in1.shepherd_in1_1 = id AND shepherd_in1.shepherd_in1_2 = n) AND (SELECT true)"},
		{"SELECT avg(NULL::int), sum(NULL::numeric), count(*) FROM acct",
			`SELECT max(NULL::int4), max(NULL::"numeric"(38, 0)), count(*) FROM acct`},
	}
	for _, c := range cases {
		res, err := pg_query.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		tree := res.Stmts[0].Stmt
		before := mustDeparse(t, c.in)
		prepared, err := PrepareDuckDB(tree, s)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		out, err := DuckDB(prepared, s)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := pg_query.Deparse(&pg_query.ParseResult{Version: res.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
		if again, _ := pg_query.Deparse(&pg_query.ParseResult{Version: res.Version, Stmts: []*pg_query.RawStmt{{Stmt: tree}}}); again != before {
			t.Errorf("%s: the input tree was changed", c.in)
		}
	}
}

// TestQuoteDuckNames: a name DuckDB reserves and PostgreSQL does not is
// quoted in the DuckDB text; a string constant spelling it is not.
func TestQuoteDuckNames(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE TABLE e (id int, at timestamp, pivot_longer int)":  `CREATE TABLE e (id int4, "at" "timestamp", "pivot_longer" int4)`,
		"SELECT at AS by, 'at' FROM e show WHERE show.at > 'show'": `SELECT "at" AS "by", 'at' FROM e "show" WHERE "show"."at" > 'show'`,
	} {
		res, err := pg_query.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DuckDB(res.Stmts[0].Stmt, nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		text, err := pg_query.Deparse(&pg_query.ParseResult{Version: res.Version, Stmts: []*pg_query.RawStmt{{Stmt: out}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := QuoteDuckNames(text); got != want {
			t.Errorf("%s:\n got %s\nwant %s", in, got, want)
		}
	}
}
