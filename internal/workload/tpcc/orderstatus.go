package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OrderStatusInput names the customer whose latest order is asked for.
type OrderStatusInput struct {
	WID, DID int
	Customer CustomerRef
}

// OrderStatusOutput is the customer and their latest order.
type OrderStatusOutput struct {
	CustomerID          int
	First, Middle, Last string
	Balance             int64 // cents
	// HasOrder is false when the customer has no order (possible when
	// the database was loaded with fewer orders than customers).
	HasOrder  bool
	OrderID   int
	EntryDate time.Time
	CarrierID int // 0 while undelivered
	Lines     []OrderStatusLine
}

// OrderStatusLine is one line of the latest order.
type OrderStatusLine struct {
	ItemID, SupplyWID, Quantity int
	Amount                      int64     // cents
	DeliveryDate                time.Time // zero while undelivered
}

// OrderStatus reads a customer (by id or by last name), their most recent
// order (ORDER BY o_id DESC LIMIT 1) and its lines. It only reads.
func OrderStatus(ctx context.Context, db DB, in OrderStatusInput) (OrderStatusOutput, error) {
	var out OrderStatusOutput
	_, err := inTx(ctx, db, func(tx pgx.Tx) error {
		out = OrderStatusOutput{}
		return orderStatus(ctx, tx, in, &out)
	})
	if err != nil {
		return OrderStatusOutput{}, fmt.Errorf("tpcc: order-status: %w", err)
	}
	return out, nil
}

func orderStatus(ctx context.Context, tx pgx.Tx, in OrderStatusInput, out *OrderStatusOutput) error {
	cid, err := customerID(ctx, tx, in.WID, in.DID, in.Customer)
	if err != nil {
		return err
	}
	out.CustomerID = cid
	err = tx.QueryRow(ctx,
		"SELECT c_first, c_middle, c_last, c_balance FROM customer "+
			"WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
		in.WID, in.DID, cid).Scan(&out.First, &out.Middle, &out.Last, cents(&out.Balance))
	if err != nil {
		return fmt.Errorf("customer %d: %w", cid, err)
	}
	var carrier *int
	err = tx.QueryRow(ctx,
		"SELECT o_id, o_entry_d, o_carrier_id FROM orders "+
			"WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1",
		in.WID, in.DID, cid).Scan(&out.OrderID, &out.EntryDate, &carrier)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("latest order: %w", err)
	}
	out.HasOrder = true
	if carrier != nil {
		out.CarrierID = *carrier
	}
	rows, err := tx.Query(ctx,
		"SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "+
			"WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 ORDER BY ol_number",
		in.WID, in.DID, out.OrderID)
	if err != nil {
		return fmt.Errorf("order lines: %w", err)
	}
	var l OrderStatusLine
	var delivered *time.Time
	_, err = pgx.ForEachRow(rows, []any{&l.ItemID, &l.SupplyWID, &l.Quantity, cents(&l.Amount), &delivered},
		func() error {
			l.DeliveryDate = time.Time{}
			if delivered != nil {
				l.DeliveryDate = *delivered
			}
			out.Lines = append(out.Lines, l)
			return nil
		})
	if err != nil {
		return fmt.Errorf("order lines: %w", err)
	}
	return nil
}
