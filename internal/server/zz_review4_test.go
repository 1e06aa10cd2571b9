package server

import (
	"context"
	"testing"
)

func TestZZReviewSeqRestart(t *testing.T) {
	cfg := embedded(t)
	addr, _ := start(t, cfg)
	ctx := context.Background()
	a := connect(t, addr, "app")
	b := connect(t, addr, "app")
	next := func(c interface{}, who string) int64 { return 0 }
	_ = next
	mustExec(t, a, "CREATE SEQUENCE s")
	var v int64
	a.QueryRow(ctx, "SELECT nextval('s')").Scan(&v)
	t.Logf("a: %d", v)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER SEQUENCE s RESTART WITH 3")
	a.QueryRow(ctx, "SELECT nextval('s')").Scan(&v)
	t.Logf("a in block: %d", v)
	for i := 0; i < 4; i++ {
		err := b.QueryRow(ctx, "SELECT nextval('s')").Scan(&v)
		t.Logf("b: %d %v", v, err)
	}
	mustExec(t, a, "COMMIT")
	for i := 0; i < 3; i++ {
		b.QueryRow(ctx, "SELECT nextval('s')").Scan(&v)
		t.Logf("b after commit: %d", v)
	}
}
