package tpcc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// cDataMax is the length of customer.c_data.
const cDataMax = 500

// PaymentInput is what a Payment transaction is asked to do: customer
// (CWID, CDID, Customer) pays Amount at warehouse WID, district DID.
type PaymentInput struct {
	WID, DID   int
	CWID, CDID int
	Customer   CustomerRef
	Amount     int64     // cents, 1.00 to 5000.00
	Date       time.Time // zero: now
}

// PaymentOutput is what a Payment transaction reports.
type PaymentOutput struct {
	CustomerID int
	First      string
	Last       string
	Credit     string // GC or BC
	Balance    int64  // cents, after the payment
	Discount   int64  // ten-thousandths
	// Data is the start of the customer's c_data after the payment, for a
	// customer with bad credit (BC); empty otherwise.
	Data string
}

// Payment records a payment: it adds the amount to the warehouse's and
// the district's year-to-date totals, finds the customer (by id or, by
// last name, the middle one in first-name order), locks the customer row,
// takes the amount off the balance — prepending a note to c_data for a
// customer with bad credit — and inserts the history row.
func Payment(ctx context.Context, db DB, in PaymentInput) (PaymentOutput, error) {
	var out PaymentOutput
	date := stamp(in.Date)
	_, err := inTx(ctx, db, func(tx pgx.Tx) error {
		out = PaymentOutput{}
		return payment(ctx, tx, in, date, &out)
	})
	if err != nil {
		return PaymentOutput{}, fmt.Errorf("tpcc: payment: %w", err)
	}
	return out, nil
}

func payment(ctx context.Context, tx pgx.Tx, in PaymentInput, date time.Time, out *PaymentOutput) error {
	amount := money(in.Amount)
	_, err := tx.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2", amount, in.WID)
	if err != nil {
		return fmt.Errorf("update warehouse: %w", err)
	}
	var wName, dName string
	var addr [5]string
	err = tx.QueryRow(ctx,
		"SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = $1",
		in.WID).Scan(&wName, &addr[0], &addr[1], &addr[2], &addr[3], &addr[4])
	if err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	_, err = tx.Exec(ctx, "UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3",
		amount, in.WID, in.DID)
	if err != nil {
		return fmt.Errorf("update district: %w", err)
	}
	err = tx.QueryRow(ctx,
		"SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district "+
			"WHERE d_w_id = $1 AND d_id = $2",
		in.WID, in.DID).Scan(&dName, &addr[0], &addr[1], &addr[2], &addr[3], &addr[4])
	if err != nil {
		return fmt.Errorf("district: %w", err)
	}
	cid, err := customerID(ctx, tx, in.CWID, in.CDID, in.Customer)
	if err != nil {
		return err
	}
	out.CustomerID = cid
	var middle, phone, data string
	var since time.Time
	var creditLim int64
	var payments int
	err = tx.QueryRow(ctx,
		"SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "+
			"c_since, c_credit, c_credit_lim, c_discount, c_balance, c_payment_cnt, c_data "+
			"FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE",
		in.CWID, in.CDID, cid).Scan(&out.First, &middle, &out.Last, &addr[0], &addr[1], &addr[2],
		&addr[3], &addr[4], &phone, &since, &out.Credit, cents(&creditLim),
		tenThousandths(&out.Discount), cents(&out.Balance), &payments, &data)
	if err != nil {
		return fmt.Errorf("customer %d: %w", cid, err)
	}
	out.Balance -= in.Amount
	const update = "UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1, " +
		"c_payment_cnt = c_payment_cnt + 1"
	const where = " WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4"
	if out.Credit == "BC" {
		data = fmt.Sprintf("%d %d %d %d %d %s | %s", cid, in.CDID, in.CWID, in.DID, in.WID,
			formatCents(in.Amount), data)
		if len(data) > cDataMax {
			data = data[:cDataMax]
		}
		out.Data = data[:min(len(data), 200)]
		_, err = tx.Exec(ctx, update+", c_data = $5"+where, amount, in.CWID, in.CDID, cid, data)
	} else {
		_, err = tx.Exec(ctx, update+where, amount, in.CWID, in.CDID, cid)
	}
	if err != nil {
		return fmt.Errorf("update customer: %w", err)
	}
	_, err = tx.Exec(ctx,
		"INSERT INTO history (h_c_w_id, h_c_d_id, h_c_id, h_c_payment_cnt, h_w_id, h_d_id, h_date, "+
			"h_amount, h_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
		in.CWID, in.CDID, cid, payments+1, in.WID, in.DID, date, amount, wName+"    "+dName)
	if err != nil {
		return fmt.Errorf("insert history: %w", err)
	}
	return nil
}
