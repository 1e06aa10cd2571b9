package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestFloatTextWrites: on a cbs cluster of MariaDB, PostgreSQL and
// SQLite a write storing a float's text is refused with 0A000 (each
// engine prints 1e10 otherwise, and a write is voted by its row count),
// while numeric's text and floats stored as floats are written, and the
// replicas stay identical.
func TestFloatTextWrites(t *testing.T) {
	ctx := context.Background()
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	c, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	exec := func(sql string) error {
		_, err := c.Exec(ctx, sql).ReadAll()
		return err
	}
	for _, sql := range []string{
		"CREATE TABLE df (id int PRIMARY KEY, f float8, r float4, n numeric(12,4), t text)",
		"INSERT INTO df VALUES (1, 1e10, 3.4e38, 1.5, NULL), (2, 1::float8 / 3, 0.1, -2, NULL)",
		"UPDATE df SET t = n::text, f = f * 2",
		"UPDATE df SET t = t || n",
	} {
		if err := exec(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, sql := range []string{
		"UPDATE df SET t = f::text",
		"UPDATE df SET t = r::text",
		"UPDATE df SET t = f || ''",
		"INSERT INTO df (id, t) SELECT id + 10, f FROM df",
	} {
		if err := exec(sql); err == nil || !strings.Contains(renderErr(err), "0A000") {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
	assertReplicas(t, addr, 3)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, f, r, n, t FROM df ORDER BY id")
}
