package tpcc

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// loaded returns a connector to a fresh PostgreSQL database loaded with
// cfg, after checking that the loaded database is consistent.
func loaded(t *testing.T, cfg LoadConfig) func(context.Context) (*pgx.Conn, error) {
	t.Helper()
	dsn := testenv.Postgres(t)
	connect := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	ctx := context.Background()
	conn := mustConnect(t, connect)
	start := time.Now()
	if err := Load(ctx, conn, cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %+v in %v", cfg.Scale, time.Since(start).Round(time.Millisecond))
	if err := Check(ctx, conn); err != nil {
		t.Fatalf("freshly loaded database: %v", err)
	}
	return connect
}

func mustConnect(t *testing.T, connect func(context.Context) (*pgx.Conn, error)) *pgx.Conn {
	t.Helper()
	c, err := connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func mustExec(t *testing.T, db Execer, sql string, args ...any) {
	t.Helper()
	if _, err := db.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInt(t *testing.T, c *pgx.Conn, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := c.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

var tinyLoad = LoadConfig{Scale: tinyScale, Seed: 1}

// TestRunAndCheck loads a tiny database into PostgreSQL, runs the
// standard mix with 4 clients for 3 seconds, checks consistency, and then
// breaks the database in several ways, each inside a transaction that is
// rolled back, expecting Check to name exactly the conditions broken and
// where.
func TestRunAndCheck(t *testing.T) {
	ctx := context.Background()
	connect := loaded(t, tinyLoad)
	res, err := Run(ctx, connect, RunConfig{
		Scale: tinyScale, LoadSeed: tinyLoad.Seed, Seed: 2, Clients: 4,
		WarmUp: 500 * time.Millisecond, Duration: 2500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%v", res)
	for typ, s := range res.Types {
		if s.Count == 0 {
			t.Errorf("no %v finished", TxType(typ))
		}
		if s.Failed != 0 {
			t.Errorf("%d %v gave up after %d retries", s.Failed, TxType(typ), defaultMaxRetries)
		}
	}
	conn := mustConnect(t, connect)
	if err := Check(ctx, conn); err != nil {
		t.Fatalf("after the run: %v", err)
	}

	// The district with the most undelivered orders, for breaking the
	// new_order range.
	var busy, lo, hi, count int
	err = conn.QueryRow(ctx, "SELECT no_d_id, min(no_o_id), max(no_o_id), count(*) FROM new_order "+
		"WHERE no_w_id = 1 GROUP BY no_d_id ORDER BY count(*) DESC, no_d_id LIMIT 1").Scan(&busy, &lo, &hi, &count)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		sql   []string
		wants map[int]int // condition -> district (0: the warehouse)
	}{
		{"d_ytd bumped", []string{"UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 3"},
			map[int]int{1: 0, 9: 3}},
		{"w_ytd bumped", []string{"UPDATE warehouse SET w_ytd = w_ytd + 0.01 WHERE w_id = 1"},
			map[int]int{1: 0, 8: 0}},
		{"order line deleted", []string{
			"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 5 AND ol_o_id = 1 AND ol_number = 1"},
			map[int]int{4: 5, 6: 5}},
		{"next order id bumped", []string{"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 7"},
			map[int]int{2: 7}},
		{"customer balance changed", []string{
			"UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 4 AND c_id = 1"},
			map[int]int{10: 4, 12: 4}},
		{"delivery date cleared", []string{
			"UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 6 AND ol_o_id = 1 AND ol_number = 1"},
			map[int]int{7: 6}},
		{"carrier cleared", []string{
			"UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 8 AND o_id = 1"},
			map[int]int{5: 8, 7: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) { breakAndCheck(t, conn, tc.sql, tc.wants) })
	}
	t.Run("new order gap", func(t *testing.T) {
		if count < 3 || hi-lo+1 != count {
			t.Skipf("district %d has %d new orders (%d..%d), too few for a gap", busy, count, lo, hi)
		}
		breakAndCheck(t, conn, []string{
			"DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = " + strconv.Itoa(busy) + " AND no_o_id = " + strconv.Itoa(lo+1)},
			map[int]int{3: busy, 5: busy})
	})
	if err := Check(ctx, conn); err != nil {
		t.Fatalf("the breakages were not rolled back: %v", err)
	}
}

// breakAndCheck runs sql in a transaction, expects Check to report
// exactly the conditions of wants in the districts given, and rolls back.
func breakAndCheck(t *testing.T, conn *pgx.Conn, sql []string, wants map[int]int) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, s := range sql {
		mustExec(t, tx, s)
	}
	err = Check(ctx, tx)
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("Check returned %v, want a *CheckError", err)
	}
	t.Logf("%v", err)
	got := map[int]bool{}
	for _, v := range ce.Violations {
		got[v.Condition] = true
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(wants))) {
		t.Errorf("conditions %v failed, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(wants)))
	}
	for c, d := range wants {
		if !ce.Has(c, 1, d) {
			t.Errorf("condition %d not reported for warehouse 1 district %d", c, d)
		}
	}
}

// TestTransactions runs each transaction once on a fresh tiny database
// and checks what it reports and what it changed.
func TestTransactions(t *testing.T) {
	ctx := context.Background()
	connect := loaded(t, tinyLoad)
	conn := mustConnect(t, connect)
	next := tinyScale.Orders + 1

	lines := []OrderLine{{ItemID: 5, SupplyWID: 1, Quantity: 3}, {ItemID: 900, SupplyWID: 1, Quantity: 10}}
	stockBefore := queryInt(t, conn, "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 900")
	no, err := NewOrder(ctx, conn, NewOrderInput{WID: 1, DID: 2, CID: 7, Lines: lines})
	if err != nil {
		t.Fatal(err)
	}
	if no.RolledBack || no.OrderID != next || len(no.Lines) != 2 || no.Lines[1].Amount != 10*no.Lines[1].Price {
		t.Errorf("new order: %+v", no)
	}
	want := stockBefore - 10
	if stockBefore < 20 {
		want += 91
	}
	if got := queryInt(t, conn, "SELECT s_quantity FROM stock WHERE s_w_id = 1 AND s_i_id = 900"); got != want || no.Lines[1].StockQuantity != want {
		t.Errorf("stock 900: %d (reported %d), want %d", got, no.Lines[1].StockQuantity, want)
	}

	bad := append(lines[:1:1], OrderLine{ItemID: tinyScale.Items + 1, SupplyWID: 1, Quantity: 1})
	rb, err := NewOrder(ctx, conn, NewOrderInput{WID: 1, DID: 2, CID: 7, Lines: bad})
	if err != nil || !rb.RolledBack {
		t.Fatalf("new order with an unknown item: %+v, %v", rb, err)
	}
	if got := queryInt(t, conn, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2"); got != next+1 {
		t.Errorf("d_next_o_id %d after a rolled back order, want %d", got, next+1)
	}

	os, err := OrderStatus(ctx, conn, OrderStatusInput{WID: 1, DID: 2, Customer: CustomerRef{ID: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if !os.HasOrder || os.OrderID != next || os.CarrierID != 0 || len(os.Lines) != 2 || os.Lines[1].ItemID != 900 {
		t.Errorf("order status: %+v", os)
	}

	// Three customers of district 1 share a last name; by first name,
	// customer 1 is in the middle.
	name := LastName(0)
	mustExec(t, conn, "UPDATE customer SET c_last = $1, c_first = 'bbb' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1", name)
	mustExec(t, conn, "UPDATE customer SET c_last = $1, c_first = 'ccc' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2", name)
	mustExec(t, conn, "UPDATE customer SET c_last = $1, c_first = 'aaa' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 3", name)
	pay, err := Payment(ctx, conn, PaymentInput{WID: 1, DID: 3, CWID: 1, CDID: 1,
		Customer: CustomerRef{ByName: true, Last: name}, Amount: 12345})
	if err != nil {
		t.Fatal(err)
	}
	if pay.CustomerID != 1 || pay.Balance != -1000-12345 {
		t.Errorf("payment: %+v", pay)
	}
	if got := queryInt(t, conn, "SELECT c_payment_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1"); got != 2 {
		t.Errorf("c_payment_cnt %d, want 2", got)
	}

	del, err := Delivery(ctx, conn, DeliveryInput{WID: 1, CarrierID: 4})
	if err != nil {
		t.Fatal(err)
	}
	firstNew := tinyScale.Orders - tinyLoad.newOrders() + 1
	if len(del.Delivered) != DistrictsPerWarehouse || del.Skipped != 0 || del.Delivered[0].OrderID != firstNew {
		t.Errorf("delivery: %+v", del)
	}
	if got := queryInt(t, conn, "SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 9 AND o_id = $1", firstNew); got != 4 {
		t.Errorf("carrier %d, want 4", got)
	}

	sl, err := StockLevel(ctx, conn, StockLevelInput{WID: 1, DID: 2, Threshold: 101})
	if err != nil {
		t.Fatal(err)
	}
	// Every quantity is below 101 after loading (at most 100), so the
	// answer is the number of distinct items in the last 20 orders.
	distinct := queryInt(t, conn, "SELECT count(DISTINCT ol_i_id) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id >= $1", next+1-stockLevelOrders)
	if sl.LowStock != distinct || distinct == 0 {
		t.Errorf("stock level %d, want %d", sl.LowStock, distinct)
	}
	if err := Check(ctx, conn); err != nil {
		t.Fatal(err)
	}
}

// TestSerializableTwoWarehouses runs the mix at SERIALIZABLE over two
// warehouses (remote lines and payments), where PostgreSQL aborts
// transactions with 40001 and the runner retries them, and checks the
// result.
func TestSerializableTwoWarehouses(t *testing.T) {
	ctx := context.Background()
	scale := tinyScale
	scale.Warehouses = 2
	cfg := LoadConfig{Scale: scale, Seed: 3, BatchRows: 250}
	connect := loaded(t, cfg)
	res, err := Run(ctx, connect, RunConfig{
		Scale: scale, LoadSeed: cfg.Seed, Seed: 4, Clients: 6, Duration: 1500 * time.Millisecond,
		TxOptions: pgx.TxOptions{IsoLevel: pgx.Serializable},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%v", res)
	if res.Total() == 0 {
		t.Fatal("nothing finished")
	}
	conn := mustConnect(t, connect)
	if err := Check(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM history WHERE h_c_w_id <> h_w_id"); n == 0 {
		t.Log("no remote payment happened")
	}
}

// TestRunStopsOnError checks that a non-retryable error stops the run
// and names the transaction type.
func TestRunStopsOnError(t *testing.T) {
	ctx := context.Background()
	connect := loaded(t, tinyLoad)
	conn := mustConnect(t, connect)
	mustExec(t, conn, "DROP TABLE history")
	_, err := Run(ctx, connect, RunConfig{Scale: tinyScale, Clients: 2, Duration: 10 * time.Second,
		Mix: Mix{PaymentTx: 1}})
	if err == nil || SQLState(err) != "42P01" {
		t.Fatalf("run without history: %v, want 42P01", err)
	}
	t.Log(err)
}
