package server

import (
	"context"
	"strings"
	"testing"
)

// TestExplainShepherd: EXPLAIN (SHEPHERD) shows, per dialect, what the
// replicas receive, with the values shepherd pins named; and a cbs
// cluster keeps large answers of secondaries as digests only, while the
// client still gets every row.
func TestExplainShepherd(t *testing.T) {
	cfg := realCluster(t, "cbs")
	zero := 0
	cfg.DigestRows = &zero
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE ev (id serial PRIMARY KEY, at timestamptz DEFAULT now(), n int)")
	rows, err := c.Query(ctx, "EXPLAIN (SHEPHERD) INSERT INTO ev (n) VALUES ($1)", 7)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for rows.Next() {
		var dialect, replicas, sql, params string
		if err := rows.Scan(&dialect, &replicas, &sql, &params); err != nil {
			t.Fatal(err)
		}
		got[dialect] = [2]string{sql, params}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	my := got["mysql"]
	if !strings.Contains(my[0], "INSERT INTO `ev` (`n`, `id`, `at`)") || my[1] != "$1, nextval(ev.id), now" {
		t.Errorf("mysql form %q, parameters %q", my[0], my[1])
	}
	if len(got) != 3 {
		t.Errorf("forms for %d dialects, want 3: %v", len(got), got)
	}
	for i := 1; i <= 5; i++ {
		mustExec(t, c, "INSERT INTO ev (n) VALUES ($1)", i)
	}
	var ns []int
	retry40(t, func() error {
		ns = ns[:0]
		r, err := c.Query(ctx, "SELECT n FROM ev ORDER BY id")
		if err != nil {
			return err
		}
		for r.Next() {
			var n int
			r.Scan(&n)
			ns = append(ns, n)
		}
		return r.Err()
	})
	if len(ns) != 5 || ns[4] != 5 {
		t.Errorf("client got %v", ns)
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Cluster().Replicas() {
		switch {
		case r.Role == "primary" && r.Digests != 0:
			t.Errorf("primary %s kept %d answers as digests", r.Name, r.Digests)
		case r.Role == "secondary" && r.Digests == 0:
			t.Errorf("secondary %s kept no answer as a digest", r.Name)
		}
	}
	assertIdentical(t, cfg, "SELECT id, n, at FROM ev ORDER BY id")
}
