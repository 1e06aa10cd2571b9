package sqlan

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// seqEnv is the default cluster's environment after the statements.
func seqEnv(t *testing.T, ddl ...string) *Env {
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
			t.Fatalf("%s: %v", q, err)
		}
	}
	return &Env{Replicas: DefaultEnv.Replicas, Schema: c.Snapshot()}
}

// TestSequenceStatements: sequence DDL is shepherd's alone (Kind Local);
// nextval() is pinned where PostgreSQL calls it a known number of times,
// in PostgreSQL's order, and refused elsewhere; no replica's text calls
// a sequence function or keeps a DEFAULT nextval().
func TestSequenceStatements(t *testing.T) {
	env := seqEnv(t, "CREATE SEQUENCE s", "CREATE TABLE t (id bigint DEFAULT nextval('s') PRIMARY KEY, n int)")
	for q, verb := range map[string]string{
		"CREATE SEQUENCE s2 INCREMENT 5": "CREATE SEQUENCE",
		"ALTER SEQUENCE s RESTART":       "ALTER SEQUENCE",
		"DROP SEQUENCE IF EXISTS s":      "DROP SEQUENCE",
	} {
		st, err := ParseOneIn(q, env)
		if err != nil || st.Kind != Local || st.Session.Op != "sequence" || st.Verb != verb {
			t.Errorf("%s: %+v %v", q, st, err)
		}
	}
	for q, pins := range map[string]int{
		"SELECT nextval('s')":                                       0, // answered by shepherd alone
		"SELECT nextval('s')::int4, 'x'":                            1,
		"INSERT INTO t VALUES (nextval('s'), 1), (nextval('s'), 2)": 2,
		"INSERT INTO t (n) VALUES (1), (2), (3)":                    3,
		"INSERT INTO t (id, n) VALUES (DEFAULT, 1)":                 1,
		"INSERT INTO t DEFAULT VALUES":                              1,
		"INSERT INTO t (n) SELECT n FROM (VALUES (1), (2)) AS v(n)": 2,
		"INSERT INTO t (id, n) SELECT p0::bigint, p1 FROM (VALUES (nextval('s'), 1, 0), (nextval('s'), 2, 1)) AS v(p0, p1, sen) ORDER BY sen": 2,
		"WITH s AS (SELECT 1 AS x) SELECT x FROM s":           0,
		"SELECT n FROM t WHERE id = currval('s')":             1,
		"CREATE TABLE u (id int DEFAULT nextval('s'), n int)": 0,
	} {
		st, err := ParseOneIn(q, env)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if len(st.Pins) != pins {
			t.Errorf("%s: %d pins, want %d", q, len(st.Pins), pins)
		}
		for _, f := range st.Forms() {
			low := strings.ToLower(f.SQL)
			if strings.Contains(low, "nextval(") || strings.Contains(low, "currval(") {
				t.Errorf("%s: %s receives %s", q, f.Dialect, f.SQL)
			}
		}
	}
	for _, q := range []string{
		"UPDATE t SET n = nextval('s')",
		"INSERT INTO t (id, n) SELECT nextval('s'), n FROM t",
		"INSERT INTO t (id, n) SELECT p0, p1 FROM (VALUES (nextval('s'), 1), (nextval('s'), 2)) AS v(p0, p1) WHERE p1 > 1",
		"SELECT nextval('s') FROM t",
		"SELECT nextval('s') + 1",
		"SELECT CASE WHEN false THEN nextval('s') END",
		"SELECT nextval('s') WHERE false",
		"SELECT n FROM t WHERE id < nextval('s')",
		"INSERT INTO t (id, n) VALUES (nextval('s'), 1), (DEFAULT, 2)",
		"INSERT INTO t (n) VALUES (nextval('s'))",
		"SELECT setval('s', 5) + 1",
		"CREATE TABLE IF NOT EXISTS s (id int)",
		"ALTER SEQUENCE s RENAME TO s9",
		"ALTER TABLE t ALTER COLUMN n SET DEFAULT nextval('s')",
		"SELECT n FROM t JOIN s ON true",
		"CREATE VIEW v AS SELECT * FROM s",
	} {
		_, err := ParseOneIn(q, env)
		if pgerr.Code(err) != pgerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
	// A sequence read as a relation (pg_dump's data dump) is the
	// catalog's to answer, not the replicas'.
	if st, err := ParseOneIn("SELECT last_value, is_called FROM public.s", env); err != nil || st.Kind != Catalog {
		t.Errorf("SELECT last_value, is_called FROM public.s: %v, %v, want a catalog query", st, err)
	}
	for q, code := range map[string]string{
		"CREATE TABLE u (id int DEFAULT nextval('nosuch'))": pgerr.UndefinedTable,
		"CREATE TABLE s (id int)":                           pgerr.DuplicateTable,
	} {
		if _, err := ParseOneIn(q, env); pgerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}
