package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestUnits(t *testing.T) {
	num := func(i int64, exp int32) pgtype.Numeric {
		return pgtype.Numeric{Int: big.NewInt(i), Exp: exp, Valid: true}
	}
	for _, tc := range []struct {
		n     pgtype.Numeric
		scale int32
		want  int64
	}{
		{num(1230, -2), 2, 1230},
		{num(123, -1), 2, 1230},
		{num(12, 2), 2, 120000},
		{num(-1000, -2), 2, -1000},
		{num(5000, -4), 4, 5000},
		{num(123000, -5), 2, 123},
	} {
		got, err := units(tc.n, tc.scale)
		if err != nil || got != tc.want {
			t.Errorf("units(%s, %d) = %d, %v; want %d", formatNumeric(tc.n), tc.scale, got, err, tc.want)
		}
	}
	for _, bad := range []pgtype.Numeric{num(1231, -3), {}, {NaN: true, Valid: true}} {
		if _, err := units(bad, 2); err == nil {
			t.Errorf("units(%+v) did not fail", bad)
		}
	}
	var c int64
	var null bool
	if err := nullCents(&c, &null).ScanNumeric(pgtype.Numeric{}); err != nil || !null || c != 0 {
		t.Errorf("NULL sum: %d, %v, %v", c, null, err)
	}
	if err := cents(&c).ScanText(pgtype.Text{String: "-12.30", Valid: true}); err != nil || c != -1230 {
		t.Errorf("text -12.30: %d, %v", c, err)
	}
	if err := cents(&c).ScanInt64(pgtype.Int8{Int64: 7, Valid: true}); err != nil || c != 700 {
		t.Errorf("int 7: %d, %v", c, err)
	}
	if got := formatCents(-1230); got != "-12.30" {
		t.Errorf("formatCents(-1230) = %s", got)
	}
}

func TestOrderTotal(t *testing.T) {
	// 100.00 with 10 % discount and 15 % tax: 103.50.
	if got := orderTotal(10000, 1000, 1500); got != 10350 {
		t.Errorf("orderTotal = %d, want 10350", got)
	}
	// 0.01 with 50 % discount, no tax: half a cent rounds up.
	if got := orderTotal(1, 5000, 0); got != 1 {
		t.Errorf("orderTotal = %d, want 1", got)
	}
}

// recorder is an Execer that keeps what it was asked to run.
type recorder struct {
	stmts []string
	args  [][]any
}

func (r *recorder) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	r.stmts = append(r.stmts, sql)
	r.args = append(r.args, append([]any(nil), args...))
	return pgconn.CommandTag{}, nil
}

// rowsByTable counts the rows the recorded INSERTs carry, per table.
func (r *recorder) rowsByTable(t *testing.T, batch int) map[string]int {
	out := map[string]int{}
	for i, s := range r.stmts {
		if !strings.HasPrefix(s, "INSERT INTO ") {
			continue
		}
		table := strings.Fields(s)[2]
		rows := strings.Count(s[strings.Index(s, " VALUES "):], "(")
		if rows > batch {
			t.Errorf("an INSERT into %s carries %d rows, more than %d", table, rows, batch)
		}
		cols := strings.Count(s[:strings.Index(s, " VALUES ")], ",") + 1
		if len(r.args[i]) != rows*cols {
			t.Errorf("INSERT into %s: %d arguments for %d rows of %d columns", table, len(r.args[i]), rows, cols)
		}
		out[table] += rows
	}
	return out
}

// TestLoadDeterministic loads into a recorder: the same configuration
// produces the same statements and arguments, another seed other data,
// and every table gets the rows its scale asks for.
func TestLoadDeterministic(t *testing.T) {
	ctx := context.Background()
	cfg := LoadConfig{
		Scale:     Scale{Warehouses: 2, Items: 200, Customers: 40, Orders: 20},
		Seed:      9,
		BatchRows: 7,
		LoadTime:  time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
	}
	var a, b, c recorder
	for _, r := range []*recorder{&a, &b} {
		if err := Load(ctx, r, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two loads with the same configuration differ")
	}
	other := cfg
	other.Seed = 10
	if err := Load(ctx, &c, other); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.args, c.args) {
		t.Error("another seed loaded the same data")
	}
	got := a.rowsByTable(t, cfg.BatchRows)
	w, d := cfg.Warehouses, DistrictsPerWarehouse
	want := map[string]int{
		"item": cfg.Items, "warehouse": w, "stock": w * cfg.Items, "district": w * d,
		"customer": w * d * cfg.Customers, "history": w * d * cfg.Customers,
		"orders": w * d * cfg.Orders, "new_order": w * d * cfg.newOrders(),
		"order_line": got["order_line"],
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows loaded %v, want %v", got, want)
	}
	if n := got["order_line"]; n < w*d*cfg.Orders*minOrderLines || n > w*d*cfg.Orders*maxOrderLines {
		t.Errorf("%d order lines for %d orders", n, w*d*cfg.Orders)
	}
	if a.stmts[0] != tables[0] || a.stmts[len(a.stmts)-1] != indexes[len(indexes)-1] {
		t.Errorf("load does not start with the tables and end with the indexes")
	}
	if err := Load(ctx, &c, LoadConfig{Scale: Scale{Warehouses: 1, Items: 5, Customers: 1, Orders: 1}}); err == nil {
		t.Error("loaded an invalid scale")
	}
}

// flakyDB is a DB whose first failures BEGINs fail with err; later
// transactions answer every query with a zero integer.
type flakyDB struct {
	failures int
	err      error
	begins   int
}

func (f *flakyDB) Begin(context.Context) (pgx.Tx, error) {
	f.begins++
	if f.begins <= f.failures {
		return nil, f.err
	}
	return zeroTx{}, nil
}

// zeroTx is enough of a pgx.Tx for StockLevel.
type zeroTx struct{ pgx.Tx }

func (zeroTx) QueryRow(context.Context, string, ...any) pgx.Row { return zeroRow{} }
func (zeroTx) Commit(context.Context) error                     { return nil }
func (zeroTx) Rollback(context.Context) error                   { return nil }

type zeroRow struct{}

func (zeroRow) Scan(dest ...any) error {
	for _, d := range dest {
		p, ok := d.(*int)
		if !ok {
			return fmt.Errorf("zeroRow cannot scan into %T", d)
		}
		*p = 0
	}
	return nil
}

// TestRetries drives a client's retry loop with a DB that fails a given
// number of times.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	serialization := &pgconn.PgError{Code: "40001"}
	deadlock := &pgconn.PgError{Code: "40P01"}
	now := time.Now()
	w := window{from: now.Add(-time.Hour), to: now.Add(time.Hour)}
	in := StockLevelInput{WID: 1, DID: 1, Threshold: 10}
	for _, tc := range []struct {
		name                   string
		failures               int
		err                    error
		count, retries, failed int64
		aborts                 map[string]int64
		fatal                  bool
	}{
		{"first try", 0, nil, 1, 0, 0, map[string]int64{}, false},
		{"two serialization failures", 2, serialization, 1, 2, 0, map[string]int64{"40001": 2}, false},
		{"deadlocks until the limit", 3, deadlock, 1, 3, 0, map[string]int64{"40P01": 3}, false},
		{"beyond the limit", 100, serialization, 0, 3, 1, map[string]int64{"40001": 4}, false},
		{"not retryable", 1, &pgconn.PgError{Code: "42P01"}, 0, 0, 0, map[string]int64{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &flakyDB{failures: tc.failures, err: tc.err}
			c := &client{cfg: &RunConfig{MaxRetries: 3}, db: db, w: w, t: newTally()}
			err := c.one(ctx, StockLevelTx, in)
			if (err != nil) != tc.fatal {
				t.Fatalf("error %v, fatal %v", err, tc.fatal)
			}
			s := c.t.stats[StockLevelTx]
			if s.Count != tc.count || s.Retries != tc.retries || s.Failed != tc.failed {
				t.Errorf("count %d retries %d failed %d, want %d %d %d",
					s.Count, s.Retries, s.Failed, tc.count, tc.retries, tc.failed)
			}
			if !reflect.DeepEqual(c.t.aborts, tc.aborts) {
				t.Errorf("aborts %v, want %v", c.t.aborts, tc.aborts)
			}
		})
	}
	if !Retryable(fmt.Errorf("wrapped: %w", deadlock)) || Retryable(errors.New("40001")) {
		t.Error("Retryable must look at the SQLSTATE of a wrapped server error only")
	}
}

func TestRunConfigChecks(t *testing.T) {
	connect := func(context.Context) (*pgx.Conn, error) { return nil, errors.New("not called") }
	for _, cfg := range []RunConfig{
		{Scale: tinyScale},
		{Scale: tinyScale, Duration: time.Second, WarmUp: -1},
		{Scale: Scale{}, Duration: time.Second},
		{Scale: tinyScale, Duration: time.Second, Mix: Mix{PaymentTx: -1}},
	} {
		if _, err := Run(context.Background(), connect, cfg); err == nil {
			t.Errorf("Run accepted %+v", cfg)
		}
	}
}
