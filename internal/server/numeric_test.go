package server

import (
	"context"
	"math/big"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestNumericScaleOnEveryReplica writes values with more decimals than a
// numeric(6,2) column keeps, by every path a value takes into a column —
// a constant, a parameter (text and float), INSERT ... SELECT, UPDATE SET
// an expression or a parameter — and checks that every replica stores
// what PostgreSQL stores: the value rounded to 2 places, half away from
// zero; and that a value beyond the precision fails with 22003 everywhere
// and writes nothing. SQLite kept 99.49001287680001 where the others kept
// 99.49, and lost every later vote on the row.
func TestNumericScaleOnEveryReplica(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, _ := start(t, cfg)
	c := connect(t, addr, "app")
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE num (id int PRIMARY KEY, n numeric(6,2))")
	mustExec(t, c, "CREATE TABLE src (id int PRIMARY KEY, f float8, d numeric(12,6))")
	mustExec(t, c, "INSERT INTO src (id, f, d) VALUES (1, 99.49001287680001, 1.004999), (2, 12345.678, 9999.995), (3, 1.005, 0)")
	writes := []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO num (id, n) VALUES (1, 99.49001287680001)", nil},
		{"INSERT INTO num (id, n) VALUES ($1, $2)", []any{2, "99.49001287680001"}},
		{"INSERT INTO num (id, n) VALUES ($1, $2)", []any{3, 99.49001287680001}},
		{"INSERT INTO num (id, n) SELECT 4, f FROM src WHERE id = 1", nil},
		{"INSERT INTO num (id, n) SELECT 5, d FROM src WHERE id = 1", nil},
		{"INSERT INTO num (id, n) VALUES (6, 0), (7, 0), (8, 0)", nil},
		// The double nearest 1.005 is below it; PostgreSQL reads a
		// double with 15 significant digits, 1.00500000000000.
		{"INSERT INTO num (id, n) SELECT 9, f FROM src WHERE id = 3", nil},
		{"INSERT INTO num SELECT 13, f FROM src WHERE id = 1 UNION ALL SELECT 14, -0.005", nil},
		{"UPDATE num SET n = n + 0.005 WHERE id = 6", nil},
		{"UPDATE num SET n = $1 WHERE id = 7", []any{"-0.125"}},
		{"UPDATE num SET n = (SELECT d FROM src WHERE id = 1) * 2 WHERE id = 8", nil},
	}
	for _, w := range writes {
		if _, err := c.Exec(ctx, w.sql, w.args...); err != nil {
			t.Fatalf("%s %v: %v", w.sql, w.args, err)
		}
	}
	overflows := []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO num (id, n) VALUES (10, 10000)", nil},
		{"INSERT INTO num (id, n) VALUES ($1, $2)", []any{11, "9999.995"}},
		{"INSERT INTO num (id, n) SELECT 12, f FROM src WHERE id = 2", nil},
		{"UPDATE num SET n = n * 1000 WHERE id = 1", nil},
		{"UPDATE num SET n = $1 WHERE id = 1", []any{-10000}},
	}
	for _, w := range overflows {
		if _, err := c.Exec(ctx, w.sql, w.args...); sqlstate(err) != "22003" {
			t.Errorf("%s %v: got %v, want 22003", w.sql, w.args, err)
		}
	}
	// Defaults are stored as values are: one evaluated for each new row
	// (CREATE TABLE), one filled into the rows already there (ALTER).
	mustExec(t, c, "CREATE TABLE dflt (id int PRIMARY KEY, n numeric(6,2) DEFAULT 1.005)")
	mustExec(t, c, "INSERT INTO dflt (id) VALUES (1)")
	mustExec(t, c, "ALTER TABLE dflt ADD COLUMN m numeric(5,1) DEFAULT -2.25")
	if _, err := c.Exec(ctx, "ALTER TABLE dflt ADD COLUMN o numeric(3,1) DEFAULT 100"); sqlstate(err) != "22003" {
		t.Errorf("ALTER TABLE ... ADD COLUMN numeric(3,1) DEFAULT 100: got %v, want 22003", err)
	}
	for _, r := range cfg.Replicas {
		a := replicaQuery(t, cfg, r.Name, driver.Query{SQL: `SELECT "n", "m" FROM "dflt"`, ReturnsRows: true, Verb: "SELECT"})
		if len(a.Rows) != 1 || len(a.Rows[0]) != 2 {
			t.Fatalf("%s: dflt holds %v", r.Name, a.Rows)
		}
		for i, want := range []string{"1.01", "-2.3"} {
			w, _ := new(big.Rat).SetString(want)
			v, ok := new(big.Rat).SetString(a.Rows[0][i].Text)
			if !ok || w.Cmp(v) != 0 {
				t.Errorf("%s: dflt column %d holds %s, want %s", r.Name, i, a.Rows[0][i].Text, want)
			}
		}
	}
	want := map[string]string{
		"1": "99.49", "2": "99.49", "3": "99.49", "4": "99.49", "5": "1.00",
		"6": "0.01", "7": "-0.13", "8": "2.01", "9": "1.01", "13": "99.49", "14": "-0.01",
	}
	rows, err := c.Query(ctx, "SELECT id::text AS k, n::text FROM num ORDER BY num.id")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var id, n string
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		got[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("through shepherd: %v, want %v", got, want)
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("through shepherd: row %s = %s, want %s", id, got[id], n)
		}
	}
	// Each replica's own value, read behind shepherd's back.
	for _, r := range cfg.Replicas {
		a := replicaQuery(t, cfg, r.Name, driver.Query{SQL: `SELECT "id", "n" FROM "num"`, ReturnsRows: true, Verb: "SELECT"})
		if len(a.Rows) != len(want) {
			t.Errorf("%s holds %d rows, want %d", r.Name, len(a.Rows), len(want))
		}
		for _, row := range a.Rows {
			w, ok := new(big.Rat).SetString(want[row[0].Text])
			v, ok2 := new(big.Rat).SetString(row[1].Text)
			if !ok || !ok2 || w.Cmp(v) != 0 {
				t.Errorf("%s: row %s holds %s, want %s", r.Name, row[0].Text, row[1].Text, want[row[0].Text])
			}
		}
	}
	assertReplicas(t, addr, 3)
}

// TestNumericOverflowEmbedded checks on SQLite alone (the embedded
// default, both builds) that a value too large for numeric(p,s), stored
// or cast, fails with 22003 as on PostgreSQL instead of being kept, and
// that casts round as PostgreSQL rounds.
func TestNumericOverflowEmbedded(t *testing.T) {
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE num (id int PRIMARY KEY, n numeric(6,2))")
	mustExec(t, c, "INSERT INTO num (id, n) VALUES (1, 1)")
	for _, w := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO num (id, n) VALUES (2, 10000)", nil},
		{"INSERT INTO num (id, n) VALUES ($1, $2)", []any{3, "9999.995"}},
		{"INSERT INTO num (id, n) SELECT 4, 123456", nil},
		{"UPDATE num SET n = n * 10000 WHERE id = 1", nil},
		{"SELECT 1234.5::numeric(5,2)", nil},
	} {
		if _, err := c.Exec(ctx, w.sql, w.args...); sqlstate(err) != "22003" {
			t.Errorf("%s %v: got %v, want 22003", w.sql, w.args, err)
		}
	}
	var s string
	if err := c.QueryRow(ctx, "SELECT (2.675::numeric(5,2))::text").Scan(&s); err != nil || s != "2.68" {
		t.Errorf("2.675::numeric(5,2) = %q, %v; want 2.68 (half away from zero, exactly)", s, err)
	}
	assertCount(t, c, "SELECT count(*) FROM num WHERE n = 1", 1)
	assertCount(t, c, "SELECT count(*) FROM num", 1)
	assertReplicas(t, addr, 3)
}
