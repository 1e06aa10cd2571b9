package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

func zzDump(t *testing.T, cfgReplicas []struct{ name, drv, dsn string }, dataDir, q string) {
	ctx := context.Background()
	for _, r := range cfgReplicas {
		open, _ := driver.Lookup(r.drv)
		e, err := open(ctx, driver.Spec{Name: r.name, DSN: r.dsn, DataDir: dataDir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Exec(ctx, driver.Query{SQL: q, ReturnsRows: true, Verb: "SELECT"})
		c.Close()
		e.Close()
		if err != nil {
			t.Logf("%s: %v", r.name, err)
			continue
		}
		var out []string
		for _, row := range a.Rows {
			s := ""
			for _, v := range row {
				if v.Null {
					s += "NULL|"
				} else {
					s += v.Text + "|"
				}
			}
			out = append(out, s)
		}
		t.Logf("%-6s %q", r.name, out)
	}
}

func TestZZReviewWrites(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, _ := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	var reps []struct{ name, drv, dsn string }
	for _, r := range cfg.Replicas {
		reps = append(reps, struct{ name, drv, dsn string }{r.Name, r.Driver, r.DSN})
	}
	mustExec(t, c, "CREATE TABLE t (id int PRIMARY KEY, s text, g int, v int, w int, n numeric(12,4), n2 numeric(10,2), ts timestamp)")
	mustExec(t, c, "INSERT INTO t VALUES (1,'abc',1,1,10,10,10,'2024-01-05 10:00:00'),(2,'émile',1,1,20,7,7,'2024-03-31 23:59:59'),(3,'ÄBC',2,NULL,30,1.5,1.5,'2024-12-30 00:00:00'),(4,'a.b',2,2,40,2,2,'2021-01-03 12:00:00')")
	mustExec(t, c, "CREATE TABLE u (k int, s text, x int, n numeric(14,4))")
	stmts := []string{
		"INSERT INTO u (k, s) SELECT 50, ts::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 51, date_trunc('day', ts)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 52, date_trunc('week', ts)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 53, (ts + interval '1 day')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 54, (ts - interval '1 hour')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 55, 'x' || date_trunc('week', ts) FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 56, concat('x', ts + interval '1 day') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 57, make_date(2024, 1, 2)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 58, (ts AT TIME ZONE 'UTC')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 59, age(ts, '2020-01-01'::timestamp)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 60, (ts - '2020-01-01'::timestamp)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 61, extract(epoch FROM ts)::text FROM t",
		"INSERT INTO u (k, s) SELECT 62, extract(second FROM ts)::text FROM t",
		"INSERT INTO u (k, s) SELECT 63, date_part('dow', ts)::text FROM t",
		"INSERT INTO u (k, s) SELECT 64, (now() AT TIME ZONE 'UTC')::date::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 65, to_char(ts, 'YYYY-MM-DD') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 66, date_trunc('quarter', ts)::text FROM t",
		"INSERT INTO u (k, s) SELECT 67, ('{\"a\": 1.50}'::jsonb -> 'a')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 68, ('{\"a\": 1.50, \"b\": [1,2]}'::json #> '{b}')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 69, ('{\"a\": \"\\u00e9\"}'::jsonb ->> 'a') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 70, ('{\"a\": 1e2}'::jsonb ->> 'a') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 71, ('{\"a\": 1e2}'::json ->> 'a') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 72, ('{\"a\": {\"b\":1,  \"a\":2}}'::jsonb -> 'a')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 73, ('{\"a\": {\"b\":1,  \"a\":2}}'::json -> 'a')::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 74, ('[1, 2.0, 3]'::jsonb -> 1)::text FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 75, encode('ab'::bytea, 'hex') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 76, (true::text || 'x') FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 77, ('x' || 1.5::real) FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 78, ('x' || (0.1::real + 1)) FROM t WHERE id = 1",
		"INSERT INTO u (k, s) SELECT 79, ('x' || 1e20::float8) FROM t WHERE id = 1",
	}
	for _, q := range stmts {
		_, err := c.Exec(ctx, q)
		state := "ok"
		if err != nil {
			state = fmt.Sprintf("%s %v", sqlstate(err), err)
			if len(state) > 110 {
				state = state[:110]
			}
		}
		t.Logf("%-70.70s => %s", q, state)
	}
	zzDump(t, reps, cfg.DataDir, "SELECT id, s, n, n2 FROM t ORDER BY id")
	zzDump(t, reps, cfg.DataDir, "SELECT k, s, x, n FROM u ORDER BY k, s, x, n")
}
