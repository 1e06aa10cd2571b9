package server

import (
	"context"
	"testing"
)

func TestZZReviewReads(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, _ := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE t (id int PRIMARY KEY, ts timestamp, b boolean)")
	mustExec(t, c, "INSERT INTO t VALUES (1, '2024-01-05 10:00:00', true)")
	for _, q := range []string{
		"SELECT true::text",
		"SELECT 'x' || true",
		"SELECT b::text FROM t",
		"SELECT concat(b) FROM t",
		"SELECT length(true::text)",
		"SELECT ('{\"a\": 1.50, \"b\": [1,2]}'::json #> '{b}')::text",
		"SELECT length(('{\"a\": 1.50, \"b\": [1,2]}'::json #> '{b}')::text)",
		"SELECT length(('{\"a\": 1e2}'::jsonb ->> 'a'))",
		"SELECT length(('{\"a\": {\"b\":1,  \"a\":2}}'::json -> 'a')::text)",
	} {
		var s string
		err := c.QueryRow(ctx, q).Scan(&s)
		t.Logf("%-70.70s => %q %v", q, s, err)
	}
}
