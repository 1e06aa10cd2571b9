package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeliveryInput asks for one batch of deliveries: the oldest undelivered
// order of each district of warehouse WID goes with carrier CarrierID.
type DeliveryInput struct {
	WID       int
	CarrierID int       // 1..10
	Date      time.Time // zero: now
}

// DeliveryOutput lists the orders delivered.
type DeliveryOutput struct {
	Delivered []DeliveredOrder
	// Skipped counts districts with no undelivered order.
	Skipped int
}

// DeliveredOrder is one order a Delivery delivered.
type DeliveredOrder struct {
	DID, OrderID int
	Amount       int64 // cents: the sum of its lines, added to the customer's balance
}

// Delivery delivers, for each district of the warehouse in turn, its
// oldest new order: it picks and locks the lowest new_order row
// (ORDER BY no_o_id LIMIT 1 FOR UPDATE) and deletes it, sets the order's
// carrier and its lines' delivery date, sums the lines' amounts and adds
// the sum to the customer's balance. All ten districts are one
// transaction.
func Delivery(ctx context.Context, db DB, in DeliveryInput) (DeliveryOutput, error) {
	var out DeliveryOutput
	date := stamp(in.Date)
	_, err := inTx(ctx, db, func(tx pgx.Tx) error {
		out = DeliveryOutput{}
		for d := 1; d <= DistrictsPerWarehouse; d++ {
			if err := deliver(ctx, tx, in, d, date, &out); err != nil {
				return fmt.Errorf("district %d: %w", d, err)
			}
		}
		return nil
	})
	if err != nil {
		return DeliveryOutput{}, fmt.Errorf("tpcc: delivery: %w", err)
	}
	return out, nil
}

func deliver(ctx context.Context, tx pgx.Tx, in DeliveryInput, d int, date time.Time, out *DeliveryOutput) error {
	var oid int
	err := tx.QueryRow(ctx,
		"SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 "+
			"ORDER BY no_o_id LIMIT 1 FOR UPDATE",
		in.WID, d).Scan(&oid)
	if errors.Is(err, pgx.ErrNoRows) {
		out.Skipped++
		return nil
	}
	if err != nil {
		return fmt.Errorf("oldest new order: %w", err)
	}
	tag, err := tx.Exec(ctx, "DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3",
		in.WID, d, oid)
	if err != nil {
		return fmt.Errorf("delete new_order: %w", err)
	}
	if tag.RowsAffected() != 1 {
		// Another delivery took it between our read and our delete
		// (possible where FOR UPDATE does not lock).
		out.Skipped++
		return nil
	}
	var cid int
	err = tx.QueryRow(ctx, "SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $3",
		in.WID, d, oid).Scan(&cid)
	if err != nil {
		return fmt.Errorf("order %d: %w", oid, err)
	}
	_, err = tx.Exec(ctx, "UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4",
		in.CarrierID, in.WID, d, oid)
	if err != nil {
		return fmt.Errorf("update orders: %w", err)
	}
	_, err = tx.Exec(ctx,
		"UPDATE order_line SET ol_delivery_d = $1 WHERE ol_w_id = $2 AND ol_d_id = $3 AND ol_o_id = $4",
		date, in.WID, d, oid)
	if err != nil {
		return fmt.Errorf("update order_line: %w", err)
	}
	var amount int64
	var none bool
	err = tx.QueryRow(ctx,
		"SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
		in.WID, d, oid).Scan(nullCents(&amount, &none))
	if err != nil {
		return fmt.Errorf("sum order_line: %w", err)
	}
	_, err = tx.Exec(ctx,
		"UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1 "+
			"WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4",
		money(amount), in.WID, d, cid)
	if err != nil {
		return fmt.Errorf("update customer: %w", err)
	}
	out.Delivered = append(out.Delivered, DeliveredOrder{DID: d, OrderID: oid, Amount: amount})
	return nil
}
