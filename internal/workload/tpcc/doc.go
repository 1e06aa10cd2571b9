// Package tpcc is a TPC-C-style order-entry workload, written the way an
// ordinary PostgreSQL application would write it, for shepherd's tests and
// its benchmark command.
//
// It is modelled on the TPC-C benchmark but is not a conforming or audited
// implementation: there are no terminals, screens or delivery queue, and
// the database may be scaled down far below the benchmark's sizes so tests
// can run it in seconds.
//
// # Pieces
//
//   - Schema: the nine tables (warehouse, district, customer, history,
//     new_order, orders, order_line, item, stock) in mainstream SQL, every
//     one with a primary key. Money is numeric(12,2) and similar, rates are
//     numeric(4,4), dates are timestamp. CreateTables, CreateIndexes,
//     DropTables.
//   - Loader: Load fills a freshly created schema with W warehouses,
//     deterministically from a seed, using batched multi-row INSERTs with
//     $n parameters. Scale sets the sizes (items, customers and orders per
//     district); DefaultScale gives the benchmark's.
//   - Transactions: NewOrder, Payment, OrderStatus, Delivery and
//     StockLevel each run one whole transaction (BEGIN ... COMMIT) on a DB,
//     anything with pgx's Begin, from an explicit input. They never retry;
//     Retryable tells the caller whether an error (SQLSTATE 40001 or
//     40P01) is worth another attempt.
//   - Inputs: a Generator draws the transaction type from a Mix (the
//     standard one is 45/43/4/4/4) and the inputs for it — NURand-skewed
//     customer and item ids, home and remote warehouses, the one-in-a-
//     hundred NewOrder that must roll back — from a seeded math/rand/v2
//     source, so a seed replays the same sequence.
//   - Runner: Run drives many clients, each on its own connection, for a
//     warm-up and a measured duration with optional keying and think time,
//     retrying serialization failures and deadlocks a bounded number of
//     times, and reports counts, aborts by SQLSTATE, latency percentiles
//     and throughput.
//   - Checker: Check verifies the benchmark's consistency conditions that
//     apply to this schema and names each one that fails together with the
//     warehouse, district, order or customer it fails for.
//
// # SQL it sends
//
// The statements stay within what MariaDB and SQLite can be made to run:
// SELECT ... FOR UPDATE, ORDER BY ... LIMIT 1 (also with FOR UPDATE),
// IN lists and one row-value IN ((s_w_id, s_i_id) IN (($1, $2), ...)),
// multi-row INSERT ... VALUES with parameters, UPDATE with arithmetic on
// numeric columns (c_balance = c_balance - $1), aggregates (sum, count,
// count(DISTINCT), max, min) with GROUP BY and HAVING, a join with a
// derived table, LEFT JOIN and NOT EXISTS in the checker. Text is built in
// the client (no ||, no string functions), no casts, no engine-specific
// functions, and every timestamp comes from the client as a parameter, so
// replicas never see now(). Rows are read in a total order wherever the
// client depends on the order.
//
// # Keys the benchmark leaves open
//
// history has no key in TPC-C. Here its key is (h_c_w_id, h_c_d_id,
// h_c_id, h_c_payment_cnt): the paying customer and that customer's
// payment count after the payment, which Payment reads under the row lock
// it takes on the customer, so it is unique without any shared counter.
//
// # Scaling down
//
// With fewer than 1000 customers per district, the last-name numbers range
// over 0..customers-1 instead of 0..999, so a last name always matches at
// least one customer. Each district's ytd starts at customers x 10.00 (the
// history rows written by the loader), and the warehouse's at ten times
// that, so the conditions relating ytd to history hold at any scale.
package tpcc
