package tpcc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The number of lines of an order.
const (
	minOrderLines = 5
	maxOrderLines = 15
)

// OrderLine is one line of a new order.
type OrderLine struct {
	ItemID    int // an item that does not exist makes the order roll back
	SupplyWID int // the warehouse the stock comes from
	Quantity  int // 1..10
}

// NewOrderInput is what a NewOrder transaction is asked to do. The items
// of the lines must be distinct.
type NewOrderInput struct {
	WID, DID, CID int
	Lines         []OrderLine
	EntryDate     time.Time // zero: now
}

// NewOrderOutput is what a NewOrder transaction reports.
type NewOrderOutput struct {
	// RolledBack is set when an item did not exist: the transaction was
	// rolled back on purpose and the other fields are not filled in.
	RolledBack bool
	OrderID    int
	Last       string // the customer's last name
	Credit     string // GC or BC
	Discount   int64  // ten-thousandths
	WTax, DTax int64  // ten-thousandths
	Lines      []NewOrderLine
	// Total is the sum of the line amounts after discount and with
	// taxes, in cents, rounded half up.
	Total int64
}

// NewOrderLine reports one line of a new order.
type NewOrderLine struct {
	ItemName      string
	Price         int64 // cents
	Amount        int64 // cents: Price x quantity
	StockQuantity int   // after the order
	Brand         byte  // 'B' if item and stock data both say ORIGINAL, else 'G'
}

// NewOrder enters a new order: it takes the district's next order id
// (locking the district row), inserts the order and its new_order row,
// looks up the items — rolling back if one does not exist —, locks and
// updates the stock rows of the lines, and inserts the order lines in one
// multi-row INSERT.
func NewOrder(ctx context.Context, db DB, in NewOrderInput) (NewOrderOutput, error) {
	var out NewOrderOutput
	if len(in.Lines) == 0 {
		return out, fmt.Errorf("tpcc: new-order: no lines")
	}
	date := stamp(in.EntryDate)
	rolledBack, err := inTx(ctx, db, func(tx pgx.Tx) error {
		out = NewOrderOutput{}
		return newOrder(ctx, tx, in, date, &out)
	})
	if err != nil {
		return NewOrderOutput{}, fmt.Errorf("tpcc: new-order: %w", err)
	}
	if rolledBack {
		return NewOrderOutput{RolledBack: true}, nil
	}
	return out, nil
}

func newOrder(ctx context.Context, tx pgx.Tx, in NewOrderInput, date time.Time, out *NewOrderOutput) error {
	err := tx.QueryRow(ctx, "SELECT w_tax FROM warehouse WHERE w_id = $1", in.WID).
		Scan(tenThousandths(&out.WTax))
	if err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	err = tx.QueryRow(ctx,
		"SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2 FOR UPDATE",
		in.WID, in.DID).Scan(tenThousandths(&out.DTax), &out.OrderID)
	if err != nil {
		return fmt.Errorf("district: %w", err)
	}
	_, err = tx.Exec(ctx,
		"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2",
		in.WID, in.DID)
	if err != nil {
		return fmt.Errorf("update district: %w", err)
	}
	err = tx.QueryRow(ctx,
		"SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
		in.WID, in.DID, in.CID).Scan(tenThousandths(&out.Discount), &out.Last, &out.Credit)
	if err != nil {
		return fmt.Errorf("customer: %w", err)
	}
	allLocal := 1
	for _, l := range in.Lines {
		if l.SupplyWID != in.WID {
			allLocal = 0
		}
	}
	_, err = tx.Exec(ctx,
		"INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) "+
			"VALUES ($1, $2, $3, $4, $5, NULL, $6, $7)",
		in.WID, in.DID, out.OrderID, in.CID, date, len(in.Lines), allLocal)
	if err != nil {
		return fmt.Errorf("insert orders: %w", err)
	}
	_, err = tx.Exec(ctx, "INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES ($1, $2, $3)",
		in.WID, in.DID, out.OrderID)
	if err != nil {
		return fmt.Errorf("insert new_order: %w", err)
	}
	items, err := readItems(ctx, tx, in.Lines)
	if err != nil {
		return err
	}
	if items == nil {
		return errRollback
	}
	stocks, err := lockStock(ctx, tx, in)
	if err != nil {
		return err
	}
	lineArgs := make([]any, 0, len(in.Lines)*8)
	var sum int64
	for n, l := range in.Lines {
		it := items[l.ItemID]
		key := stockKey{l.SupplyWID, l.ItemID}
		st, ok := stocks[key]
		if !ok {
			return fmt.Errorf("no stock for item %d in warehouse %d", l.ItemID, l.SupplyWID)
		}
		qty := st.quantity - l.Quantity
		if st.quantity < l.Quantity+10 {
			qty += 91
		}
		remote := 0
		if l.SupplyWID != in.WID {
			remote = 1
		}
		_, err := tx.Exec(ctx,
			"UPDATE stock SET s_quantity = $1, s_ytd = s_ytd + $2, s_order_cnt = s_order_cnt + 1, "+
				"s_remote_cnt = s_remote_cnt + $3 WHERE s_w_id = $4 AND s_i_id = $5",
			qty, l.Quantity, remote, l.SupplyWID, l.ItemID)
		if err != nil {
			return fmt.Errorf("update stock: %w", err)
		}
		st.quantity = qty
		stocks[key] = st
		amount := it.price * int64(l.Quantity)
		sum += amount
		brand := byte('G')
		if strings.Contains(it.data, marker) && strings.Contains(st.data, marker) {
			brand = 'B'
		}
		out.Lines = append(out.Lines, NewOrderLine{ItemName: it.name, Price: it.price,
			Amount: amount, StockQuantity: qty, Brand: brand})
		lineArgs = append(lineArgs, in.WID, in.DID, out.OrderID, n+1, l.ItemID, l.SupplyWID,
			l.Quantity, money(amount), st.distInfo)
	}
	_, err = tx.Exec(ctx,
		"INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, "+
			"ol_quantity, ol_amount, ol_dist_info) VALUES "+valuesList(len(in.Lines), 9, 1),
		lineArgs...)
	if err != nil {
		return fmt.Errorf("insert order_line: %w", err)
	}
	out.Total = orderTotal(sum, out.Discount, out.WTax+out.DTax)
	return nil
}

// orderTotal applies discount and taxes (ten-thousandths) to sum (cents)
// exactly, rounding the result half up to cents.
func orderTotal(sum, discount, tax int64) int64 {
	const scale = 10000 * 10000
	v := sum * (10000 - discount) * (10000 + tax)
	return (v + scale/2) / scale
}

type item struct {
	price      int64
	name, data string
}

// readItems looks up the lines' items with one IN list. It returns nil
// (and no error) if one of them does not exist.
func readItems(ctx context.Context, tx pgx.Tx, lines []OrderLine) (map[int]item, error) {
	args := make([]any, len(lines))
	for i, l := range lines {
		args[i] = l.ItemID
	}
	rows, err := tx.Query(ctx,
		"SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ("+placeholders(len(lines), 1)+")",
		args...)
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	items := make(map[int]item, len(lines))
	var id int
	var it item
	_, err = pgx.ForEachRow(rows, []any{&id, cents(&it.price), &it.name, &it.data}, func() error {
		items[id] = it
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	for _, l := range lines {
		if _, ok := items[l.ItemID]; !ok {
			return nil, nil
		}
	}
	return items, nil
}

type stockKey struct{ w, i int }

type stockRow struct {
	quantity       int
	data, distInfo string
}

// lockStock reads and locks the lines' stock rows with one row-value IN,
// in key order so that concurrent orders lock them in the same order.
func lockStock(ctx context.Context, tx pgx.Tx, in NewOrderInput) (map[stockKey]stockRow, error) {
	args := make([]any, 0, 2*len(in.Lines))
	for _, l := range in.Lines {
		args = append(args, l.SupplyWID, l.ItemID)
	}
	rows, err := tx.Query(ctx,
		"SELECT s_w_id, s_i_id, s_quantity, s_data, "+distColumn(in.DID)+" FROM stock "+
			"WHERE (s_w_id, s_i_id) IN ("+valuesList(len(in.Lines), 2, 1)+") "+
			"ORDER BY s_w_id, s_i_id FOR UPDATE",
		args...)
	if err != nil {
		return nil, fmt.Errorf("stock: %w", err)
	}
	out := make(map[stockKey]stockRow, len(in.Lines))
	var k stockKey
	var s stockRow
	_, err = pgx.ForEachRow(rows, []any{&k.w, &k.i, &s.quantity, &s.data, &s.distInfo}, func() error {
		out[k] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stock: %w", err)
	}
	return out, nil
}

// placeholders writes n placeholders numbered from first: $1, $2, $3.
func placeholders(n, first int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", first+i)
	}
	return b.String()
}
