package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB starts transactions. *pgx.Conn and pgxpool.Pool satisfy it; so does
// pgx.Tx, but its Begin makes a savepoint (a nested transaction, not a
// new one). To run with an isolation level, wrap a connection with
// WithTxOptions.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// WithTxOptions returns a DB whose transactions start with opts (for
// example BEGIN ISOLATION LEVEL SERIALIZABLE).
func WithTxOptions(c *pgx.Conn, opts pgx.TxOptions) DB { return optsDB{c, opts} }

type optsDB struct {
	c    *pgx.Conn
	opts pgx.TxOptions
}

// Begin starts a transaction with the options.
func (o optsDB) Begin(ctx context.Context) (pgx.Tx, error) { return o.c.BeginTx(ctx, o.opts) }

// TxType is one of the five transaction types.
type TxType int

// The five transaction types.
const (
	NewOrderTx TxType = iota
	PaymentTx
	OrderStatusTx
	DeliveryTx
	StockLevelTx
	// NumTxTypes is the number of transaction types.
	NumTxTypes
)

var txNames = [NumTxTypes]string{"NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"}

// String returns the type's name, such as "NewOrder".
func (t TxType) String() string {
	if t < 0 || t >= NumTxTypes {
		return fmt.Sprintf("TxType(%d)", int(t))
	}
	return txNames[t]
}

// SQLState returns the SQLSTATE carried by err, or "" if err is not a
// server error.
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Retryable reports whether err is a serialization failure (40001) or a
// deadlock (40P01): the transaction was rolled back and may simply be run
// again. shepherd also answers 40001 when its replicas disagreed.
func Retryable(err error) bool {
	switch SQLState(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// errRollback makes inTx roll back without reporting an error.
var errRollback = errors.New("tpcc: roll back")

// inTx runs fn in a transaction on db: COMMIT if fn returns nil, ROLLBACK
// otherwise. fn returning errRollback is a deliberate rollback, reported
// as rolledBack with a nil error.
func inTx(ctx context.Context, db DB, fn func(pgx.Tx) error) (rolledBack bool, err error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		rbErr := tx.Rollback(ctx)
		if errors.Is(err, errRollback) {
			if rbErr != nil {
				return true, fmt.Errorf("rollback: %w", rbErr)
			}
			return true, nil
		}
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	return false, nil
}

// stamp returns t, or now if t is zero, in UTC to the microsecond (what a
// timestamp column keeps).
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// CustomerRef names a customer by id, or by last name when ByName is set
// (then the middle one of those with that name, in order of first name).
type CustomerRef struct {
	ByName bool
	ID     int
	Last   string
}

// String describes the reference, such as "id 7" or "last name BARBARBAR".
func (c CustomerRef) String() string {
	if c.ByName {
		return "last name " + c.Last
	}
	return fmt.Sprint("id ", c.ID)
}

// customerID resolves ref to an id in warehouse w, district d. For a name
// it reads the customers with that name ordered by first name (and id, so
// the order is total) and takes the middle one, rounding up.
func customerID(ctx context.Context, tx pgx.Tx, w, d int, ref CustomerRef) (int, error) {
	if !ref.ByName {
		return ref.ID, nil
	}
	rows, err := tx.Query(ctx,
		"SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first, c_id",
		w, d, ref.Last)
	if err != nil {
		return 0, fmt.Errorf("customers by name: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return 0, fmt.Errorf("customers by name: %w", err)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d", ref.Last, w, d)
	}
	return ids[(len(ids)-1)/2], nil
}
