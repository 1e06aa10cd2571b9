package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/workload/tpcc"
)

// TestTPCCCBS loads a small TPC-C database through shepherd in cbs mode
// over MariaDB, PostgreSQL and SQLite, runs the five transactions as a
// PostgreSQL client writes them (FOR UPDATE, numeric money, multi-row
// INSERT, row-value IN, ORDER BY ... LIMIT 1) with 8 clients, and checks
// that no replica was ever accused, that the TPC-C consistency conditions
// hold, and that the three replicas hold identical tables.
func TestTPCCCBS(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	connect := func(ctx context.Context) (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	}
	scale := tpcc.Scale{Warehouses: 1, Items: 1000, Customers: 30, Orders: 30}
	conn := connect1(t, connect)
	start := time.Now()
	if err := tpcc.Load(ctx, conn, tpcc.LoadConfig{Scale: scale, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v", time.Since(start).Round(time.Millisecond))
	res, err := tpcc.Run(ctx, connect, tpcc.RunConfig{
		Scale: scale, LoadSeed: 1, Seed: 2, Clients: 8,
		WarmUp: 500 * time.Millisecond, Duration: 5 * time.Second, MaxRetries: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%v", res)
	for typ, s := range res.Types {
		if s.Count == 0 {
			t.Errorf("no %v finished", tpcc.TxType(typ))
		}
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tpcc.Check(ctx, conn); err != nil {
		t.Errorf("after the run: %v", err)
	}
	for _, r := range srv.Cluster().Replicas() {
		if r.Mismatches > 0 {
			t.Errorf("replica %s accused %d times", r.Name, r.Mismatches)
		}
		t.Logf("replica %s (%s, %s): %s, %d mismatches, %d reruns", r.Name, r.Class, r.Role, r.State, r.Mismatches, r.Reruns)
	}
	for _, q := range []string{
		"SELECT w_id, w_ytd FROM warehouse ORDER BY w_id",
		"SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY d_w_id, d_id",
		"SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt FROM customer ORDER BY c_w_id, c_d_id, c_id",
		"SELECT o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_entry_d FROM orders ORDER BY o_w_id, o_d_id, o_id",
		"SELECT no_w_id, no_d_id, no_o_id FROM new_order ORDER BY no_w_id, no_d_id, no_o_id",
		"SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number",
		"SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock ORDER BY s_w_id, s_i_id",
		"SELECT h_c_w_id, h_c_d_id, h_c_id, h_c_payment_cnt, h_amount, h_date FROM history ORDER BY h_c_w_id, h_c_d_id, h_c_id, h_c_payment_cnt",
	} {
		assertIdentical(t, cfg, q)
	}
}

func connect1(t *testing.T, connect func(context.Context) (*pgx.Conn, error)) *pgx.Conn {
	t.Helper()
	c, err := connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
