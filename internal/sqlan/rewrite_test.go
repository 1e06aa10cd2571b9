package sqlan

import (
	"strings"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

func envWith(t *testing.T, ddl ...string) *Env {
	t.Helper()
	c, _ := schema.Open("")
	for _, q := range ddl {
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatal(err)
		}
	}
	return &Env{Replicas: DefaultEnv.Replicas, Schema: c.Snapshot()}
}

// TestPins: nondeterministic values become parameters after the client's,
// shared where PostgreSQL shares them, and every dialect receives them.
func TestPins(t *testing.T) {
	// random() is stored as a float: its text differs by engine (see
	// floatText).
	env := envWith(t, "CREATE TABLE ev (id serial PRIMARY KEY, at timestamptz DEFAULT now(), note text, r float8)")
	st, err := ParseOneIn("INSERT INTO ev (note, r) VALUES ($1, 0), (now()::text, 0), ('x', random())", env)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range st.Pins {
		kinds = append(kinds, p.Kind.String())
	}
	// Three rows' keys and one random; now() once for the whole statement.
	if got := strings.Join(kinds, ","); got != "serial,serial,serial,now,random" {
		t.Errorf("pins %s", got)
	}
	pg, _ := st.For(driver.Postgres)
	if !strings.Contains(pg, "$2::bigint") || !strings.Contains(pg, "(note, r, id, at)") {
		t.Errorf("postgres form %s", pg)
	}
	my, order := st.For(driver.MySQL)
	// The client's $1, a key and the timestamp per row, now() inside
	// the second row and random() in the third.
	if strings.Count(my, "?") != len(order) || len(order) != 1+3*2+2 {
		t.Errorf("mysql form %s, order %v", my, order)
	}
	n := int64(0)
	args, err := st.PinArgs(PinSource{TxnTime: time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.UTC), StmtTime: time.Now(),
		Next: func(string, string) (int64, error) { n++; return n, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if args[0].Text != "1" || args[2].Text != "3" || args[3].Text != "2026-01-02 03:04:05.6" {
		t.Errorf("pin values %+v", args)
	}
}

// TestTotalOrder: ORDER BY gets the remaining output columns as keys, a
// LIMIT without ORDER BY all of them, * is expanded from the schema.
func TestTotalOrder(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (a int, b text, c numeric(5,2))")
	for sql, want := range map[string]string{
		"SELECT a, b FROM t ORDER BY b":      "SELECT a, b FROM t ORDER BY b, 1",
		"SELECT * FROM t LIMIT 3":            "SELECT t.a, t.b, t.c FROM t ORDER BY 1, 2, 3 LIMIT 3",
		"SELECT a AS x, c FROM t ORDER BY x": "SELECT a AS x, c FROM t ORDER BY x, 2",
	} {
		st, err := ParseOneIn(sql, env)
		if err != nil {
			t.Fatal(err)
		}
		if pg, _ := st.For(driver.Postgres); pg != want || !st.Ordered {
			t.Errorf("%s: got %s (ordered %v), want %s", sql, pg, st.Ordered, want)
		}
	}
}
