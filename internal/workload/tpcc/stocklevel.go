package tpcc

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// stockLevelOrders is how many of the district's latest orders StockLevel
// looks at.
const stockLevelOrders = 20

// StockLevelInput asks how many items recently ordered in a district are
// running low.
type StockLevelInput struct {
	WID, DID  int
	Threshold int // 10..20
}

// StockLevelOutput is the answer.
type StockLevelOutput struct {
	// LowStock counts the distinct items of the district's last 20
	// orders whose stock at the warehouse is below the threshold.
	LowStock int
}

// StockLevel reads the district's next order id, then counts the distinct
// items of the 20 orders before it whose stock quantity is below the
// threshold, joining stock with a derived table of those orders' items.
// It only reads.
func StockLevel(ctx context.Context, db DB, in StockLevelInput) (StockLevelOutput, error) {
	var out StockLevelOutput
	_, err := inTx(ctx, db, func(tx pgx.Tx) error {
		var next int
		err := tx.QueryRow(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2",
			in.WID, in.DID).Scan(&next)
		if err != nil {
			return fmt.Errorf("district: %w", err)
		}
		err = tx.QueryRow(ctx,
			"SELECT count(DISTINCT s.s_i_id) FROM stock s JOIN "+
				"(SELECT ol_i_id FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 "+
				"AND ol_o_id >= $3 AND ol_o_id < $4) recent ON s.s_i_id = recent.ol_i_id "+
				"WHERE s.s_w_id = $1 AND s.s_quantity < $5",
			in.WID, in.DID, next-stockLevelOrders, next, in.Threshold).Scan(&out.LowStock)
		if err != nil {
			return fmt.Errorf("low stock: %w", err)
		}
		return nil
	})
	if err != nil {
		return StockLevelOutput{}, fmt.Errorf("tpcc: stock-level: %w", err)
	}
	return out, nil
}
