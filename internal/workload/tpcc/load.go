package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Scale sets the size of a database. The benchmark's sizes are
// DefaultScale's; tests shrink Items, Customers and Orders.
type Scale struct {
	Warehouses int // W, at least 1
	Items      int // rows of item and, per warehouse, of stock (benchmark: 100000)
	Customers  int // customers per district (benchmark: 3000)
	Orders     int // orders loaded per district, at most Customers (benchmark: 3000)
}

// DefaultScale returns the benchmark's sizes for w warehouses.
func DefaultScale(w int) Scale {
	return Scale{Warehouses: w, Items: 100000, Customers: 3000, Orders: 3000}
}

// Validate reports a scale the workload cannot run with.
func (s Scale) Validate() error {
	switch {
	case s.Warehouses < 1:
		return errors.New("tpcc: at least 1 warehouse")
	case s.Items < maxOrderLines:
		return fmt.Errorf("tpcc: at least %d items (an order has up to %d distinct items)", maxOrderLines, maxOrderLines)
	case s.Customers < 1:
		return errors.New("tpcc: at least 1 customer per district")
	case s.Orders < 1 || s.Orders > s.Customers:
		return fmt.Errorf("tpcc: orders per district must be 1..%d (the customers per district)", s.Customers)
	}
	return nil
}

// newOrders is how many of a district's loaded orders are undelivered:
// the newest 30 %.
func (s Scale) newOrders() int { return s.Orders * 3 / 10 }

// LoadConfig configures Load.
type LoadConfig struct {
	Scale
	// Seed makes the data: the same seed, scale and LoadTime give the
	// same rows. It also fixes the loader's NURand constants
	// (LoadConstants); a run passes it on as RunConfig.LoadSeed.
	Seed uint64
	// BatchRows is the most rows one INSERT carries (default 100).
	BatchRows int
	// LoadTime is written into c_since, h_date, o_entry_d and the
	// delivered order lines' ol_delivery_d, in UTC, to the microsecond;
	// zero means now, to the second. Set it when loading warehouses in
	// separate calls, or each call takes its own now.
	LoadTime time.Time
}

const defaultBatchRows = 100

func (c LoadConfig) withDefaults() LoadConfig {
	if c.BatchRows <= 0 {
		c.BatchRows = defaultBatchRows
	}
	if c.LoadTime.IsZero() {
		c.LoadTime = time.Now().Truncate(time.Second)
	}
	c.LoadTime = stamp(c.LoadTime)
	return c
}

// Load creates the tables in an empty database, fills them for cfg and
// creates the secondary indexes. Statements run one by one on db (each
// its own transaction unless db is a pgx.Tx). To load warehouses in
// parallel over several connections, call CreateTables, LoadItems,
// LoadWarehouse for each warehouse and CreateIndexes instead, with the
// same cfg.
func Load(ctx context.Context, db Execer, cfg LoadConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	if err := CreateTables(ctx, db); err != nil {
		return err
	}
	if err := LoadItems(ctx, db, cfg); err != nil {
		return err
	}
	for w := 1; w <= cfg.Warehouses; w++ {
		if err := LoadWarehouse(ctx, db, cfg, w); err != nil {
			return err
		}
	}
	return CreateIndexes(ctx, db)
}

// LoadItems inserts the item table.
func LoadItems(ctx context.Context, db Execer, cfg LoadConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0))
	b := newBatch(db, cfg.BatchRows, "item", "i_id", "i_im_id", "i_name", "i_price", "i_data")
	for i := 1; i <= cfg.Items; i++ {
		err := b.add(ctx, i, between(r, 1, 10000), alnumText(r, 14, 24),
			money(int64(between(r, 100, 10000))), itemData(r))
		if err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// LoadWarehouse inserts warehouse w with its stock, districts, customers,
// history, orders, order lines and new orders. Its rows depend only on
// cfg and w, so warehouses may be loaded in any order or in parallel.
func LoadWarehouse(ctx context.Context, db Execer, cfg LoadConfig, w int) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if w < 1 || w > cfg.Warehouses {
		return fmt.Errorf("tpcc: warehouse %d out of 1..%d", w, cfg.Warehouses)
	}
	cfg = cfg.withDefaults()
	l := &loader{cfg: cfg, w: w, db: db,
		r: rand.New(rand.NewPCG(cfg.Seed, uint64(w))),
		c: LoadConstants(cfg.Seed)}
	steps := []func(context.Context) error{l.warehouse, l.stock, l.districts}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// loader generates one warehouse's rows from its own random source.
type loader struct {
	cfg LoadConfig
	w   int
	db  Execer
	r   *rand.Rand
	c   Constants
}

// address draws street 1, street 2, city, state and zip.
func (l *loader) address() []any {
	return []any{alnumText(l.r, 10, 20), alnumText(l.r, 10, 20), alnumText(l.r, 10, 20),
		text(l.r, upper, 2), zip(l.r)}
}

// districtYTD is each district's starting d_ytd in cents: its customers'
// initial payments of 10.00 each.
func (l *loader) districtYTD() int64 { return int64(l.cfg.Customers) * 1000 }

func (l *loader) warehouse(ctx context.Context) error {
	b := newBatch(l.db, 1, "warehouse", "w_id", "w_name", "w_street_1", "w_street_2",
		"w_city", "w_state", "w_zip", "w_tax", "w_ytd")
	row := append([]any{l.w, alnumText(l.r, 6, 10)}, l.address()...)
	row = append(row, rate(int64(l.r.IntN(2001))), money(DistrictsPerWarehouse*l.districtYTD()))
	if err := b.add(ctx, row...); err != nil {
		return err
	}
	return b.flush(ctx)
}

func (l *loader) stock(ctx context.Context) error {
	cols := []string{"s_w_id", "s_i_id", "s_quantity"}
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		cols = append(cols, distColumn(d))
	}
	cols = append(cols, "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data")
	b := newBatch(l.db, l.cfg.BatchRows, "stock", cols...)
	for i := 1; i <= l.cfg.Items; i++ {
		row := []any{l.w, i, between(l.r, 10, 100)}
		for range DistrictsPerWarehouse {
			row = append(row, text(l.r, alnum, 24))
		}
		row = append(row, 0, 0, 0, itemData(l.r))
		if err := b.add(ctx, row...); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// districts inserts the districts and, district by district, their
// customers, history, orders, order lines and new orders.
func (l *loader) districts(ctx context.Context) error {
	n := l.cfg.BatchRows
	t := l.cfg.LoadTime
	dist := newBatch(l.db, n, "district", "d_w_id", "d_id", "d_name", "d_street_1",
		"d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id")
	cust := newBatch(l.db, n, "customer", "c_w_id", "c_d_id", "c_id", "c_first", "c_middle",
		"c_last", "c_street_1", "c_street_2", "c_city", "c_state", "c_zip", "c_phone",
		"c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment",
		"c_payment_cnt", "c_delivery_cnt", "c_data")
	hist := newBatch(l.db, n, "history", "h_c_w_id", "h_c_d_id", "h_c_id", "h_c_payment_cnt",
		"h_w_id", "h_d_id", "h_date", "h_amount", "h_data")
	ord := newBatch(l.db, n, "orders", "o_w_id", "o_d_id", "o_id", "o_c_id", "o_entry_d",
		"o_carrier_id", "o_ol_cnt", "o_all_local")
	line := newBatch(l.db, n, "order_line", "ol_w_id", "ol_d_id", "ol_o_id", "ol_number",
		"ol_i_id", "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info")
	newOrd := newBatch(l.db, n, "new_order", "no_w_id", "no_d_id", "no_o_id")
	names := nameRange(l.cfg.Customers)
	firstNew := l.cfg.Orders - l.cfg.newOrders() + 1
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		row := append([]any{l.w, d, alnumText(l.r, 6, 10)}, l.address()...)
		row = append(row, rate(int64(l.r.IntN(2001))), money(l.districtYTD()), l.cfg.Orders+1)
		if err := dist.add(ctx, row...); err != nil {
			return err
		}
		for c := 1; c <= l.cfg.Customers; c++ {
			num := c - 1
			if c > names {
				num = NURand(l.r, aLast, l.c.CLast, 0, names-1)
			}
			credit := "GC"
			if l.r.IntN(10) == 0 {
				credit = "BC"
			}
			row := []any{l.w, d, c, text(l.r, lower, between(l.r, 8, 16)), "OE", LastName(num)}
			row = append(row, l.address()...)
			row = append(row, text(l.r, digits, 16), t, credit, money(5000000),
				rate(int64(l.r.IntN(5001))), money(-1000), money(1000), 1, 0, alnumText(l.r, 300, 500))
			if err := cust.add(ctx, row...); err != nil {
				return err
			}
			err := hist.add(ctx, l.w, d, c, 1, l.w, d, t, money(1000), alnumText(l.r, 12, 24))
			if err != nil {
				return err
			}
		}
		perm := l.r.Perm(l.cfg.Customers)
		for o := 1; o <= l.cfg.Orders; o++ {
			delivered := o < firstNew
			var carrier, deliveryDate any
			if delivered {
				carrier, deliveryDate = between(l.r, 1, 10), t
			}
			lines := between(l.r, minOrderLines, maxOrderLines)
			if err := ord.add(ctx, l.w, d, o, perm[o-1]+1, t, carrier, lines, 1); err != nil {
				return err
			}
			for n := 1; n <= lines; n++ {
				amount := int64(0)
				if !delivered {
					amount = int64(between(l.r, 1, 999999))
				}
				err := line.add(ctx, l.w, d, o, n, between(l.r, 1, l.cfg.Items), l.w,
					deliveryDate, 5, money(amount), text(l.r, alnum, 24))
				if err != nil {
					return err
				}
			}
			if !delivered {
				if err := newOrd.add(ctx, l.w, d, o); err != nil {
					return err
				}
			}
		}
	}
	for _, b := range []*batch{dist, cust, hist, ord, line, newOrd} {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}

// batch collects rows of one table and inserts them with multi-row
// INSERTs of up to max rows each.
type batch struct {
	db    Execer
	max   int
	table string
	cols  []string
	args  []any
	rows  int
}

func newBatch(db Execer, max int, table string, cols ...string) *batch {
	return &batch{db: db, max: max, table: table, cols: cols}
}

func (b *batch) add(ctx context.Context, row ...any) error {
	if len(row) != len(b.cols) {
		panic(fmt.Sprintf("tpcc: %s row has %d values for %d columns", b.table, len(row), len(b.cols)))
	}
	b.args = append(b.args, row...)
	b.rows++
	if b.rows >= b.max {
		return b.flush(ctx)
	}
	return nil
}

func (b *batch) flush(ctx context.Context) error {
	if b.rows == 0 {
		return nil
	}
	sql := "INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES " +
		valuesList(b.rows, len(b.cols), 1)
	if _, err := b.db.Exec(ctx, sql, b.args...); err != nil {
		return fmt.Errorf("tpcc: load %s: %w", b.table, err)
	}
	b.args, b.rows = b.args[:0], 0
	return nil
}

// valuesList writes rows tuples of cols placeholders each, numbered from
// first: ($1, $2), ($3, $4).
func valuesList(rows, cols, first int) string {
	var sb strings.Builder
	n := first
	for r := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for c := range cols {
			if c > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "$%d", n)
			n++
		}
		sb.WriteByte(')')
	}
	return sb.String()
}
