package tpcc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DistrictsPerWarehouse is the number of districts of every warehouse.
const DistrictsPerWarehouse = 10

// Execer runs a statement without rows; *pgx.Conn, pgx.Tx and pgxpool.Pool
// satisfy it.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Querier runs a statement with rows; *pgx.Conn, pgx.Tx and pgxpool.Pool
// satisfy it.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// tableNames lists the tables in creation order.
var tableNames = []string{
	"warehouse", "district", "customer", "history", "new_order",
	"orders", "order_line", "item", "stock",
}

// tables is the DDL of the nine tables.
var tables = []string{
	`CREATE TABLE warehouse (
	w_id integer NOT NULL,
	w_name varchar(10) NOT NULL,
	w_street_1 varchar(20) NOT NULL,
	w_street_2 varchar(20) NOT NULL,
	w_city varchar(20) NOT NULL,
	w_state char(2) NOT NULL,
	w_zip char(9) NOT NULL,
	w_tax numeric(4,4) NOT NULL,
	w_ytd numeric(12,2) NOT NULL,
	PRIMARY KEY (w_id)
)`,
	`CREATE TABLE district (
	d_w_id integer NOT NULL,
	d_id integer NOT NULL,
	d_name varchar(10) NOT NULL,
	d_street_1 varchar(20) NOT NULL,
	d_street_2 varchar(20) NOT NULL,
	d_city varchar(20) NOT NULL,
	d_state char(2) NOT NULL,
	d_zip char(9) NOT NULL,
	d_tax numeric(4,4) NOT NULL,
	d_ytd numeric(12,2) NOT NULL,
	d_next_o_id integer NOT NULL,
	PRIMARY KEY (d_w_id, d_id)
)`,
	`CREATE TABLE customer (
	c_w_id integer NOT NULL,
	c_d_id integer NOT NULL,
	c_id integer NOT NULL,
	c_first varchar(16) NOT NULL,
	c_middle char(2) NOT NULL,
	c_last varchar(16) NOT NULL,
	c_street_1 varchar(20) NOT NULL,
	c_street_2 varchar(20) NOT NULL,
	c_city varchar(20) NOT NULL,
	c_state char(2) NOT NULL,
	c_zip char(9) NOT NULL,
	c_phone char(16) NOT NULL,
	c_since timestamp NOT NULL,
	c_credit char(2) NOT NULL,
	c_credit_lim numeric(12,2) NOT NULL,
	c_discount numeric(4,4) NOT NULL,
	c_balance numeric(12,2) NOT NULL,
	c_ytd_payment numeric(12,2) NOT NULL,
	c_payment_cnt integer NOT NULL,
	c_delivery_cnt integer NOT NULL,
	c_data varchar(500) NOT NULL,
	PRIMARY KEY (c_w_id, c_d_id, c_id)
)`,
	`CREATE TABLE history (
	h_c_w_id integer NOT NULL,
	h_c_d_id integer NOT NULL,
	h_c_id integer NOT NULL,
	h_c_payment_cnt integer NOT NULL,
	h_w_id integer NOT NULL,
	h_d_id integer NOT NULL,
	h_date timestamp NOT NULL,
	h_amount numeric(6,2) NOT NULL,
	h_data varchar(24) NOT NULL,
	PRIMARY KEY (h_c_w_id, h_c_d_id, h_c_id, h_c_payment_cnt)
)`,
	`CREATE TABLE new_order (
	no_w_id integer NOT NULL,
	no_d_id integer NOT NULL,
	no_o_id integer NOT NULL,
	PRIMARY KEY (no_w_id, no_d_id, no_o_id)
)`,
	`CREATE TABLE orders (
	o_w_id integer NOT NULL,
	o_d_id integer NOT NULL,
	o_id integer NOT NULL,
	o_c_id integer NOT NULL,
	o_entry_d timestamp NOT NULL,
	o_carrier_id integer,
	o_ol_cnt integer NOT NULL,
	o_all_local integer NOT NULL,
	PRIMARY KEY (o_w_id, o_d_id, o_id)
)`,
	`CREATE TABLE order_line (
	ol_w_id integer NOT NULL,
	ol_d_id integer NOT NULL,
	ol_o_id integer NOT NULL,
	ol_number integer NOT NULL,
	ol_i_id integer NOT NULL,
	ol_supply_w_id integer NOT NULL,
	ol_delivery_d timestamp,
	ol_quantity integer NOT NULL,
	ol_amount numeric(6,2) NOT NULL,
	ol_dist_info char(24) NOT NULL,
	PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
)`,
	`CREATE TABLE item (
	i_id integer NOT NULL,
	i_im_id integer NOT NULL,
	i_name varchar(24) NOT NULL,
	i_price numeric(5,2) NOT NULL,
	i_data varchar(50) NOT NULL,
	PRIMARY KEY (i_id)
)`,
	stockDDL(),
}

// stockDDL spells out stock's ten s_dist_NN columns.
func stockDDL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE stock (\n\ts_w_id integer NOT NULL,\n\ts_i_id integer NOT NULL,\n\ts_quantity integer NOT NULL,\n")
	for d := 1; d <= DistrictsPerWarehouse; d++ {
		fmt.Fprintf(&b, "\t%s char(24) NOT NULL,\n", distColumn(d))
	}
	b.WriteString("\ts_ytd integer NOT NULL,\n\ts_order_cnt integer NOT NULL,\n\ts_remote_cnt integer NOT NULL,\n\ts_data varchar(50) NOT NULL,\n\tPRIMARY KEY (s_w_id, s_i_id)\n)")
	return b.String()
}

// distColumn names the stock column holding district d's dist info.
func distColumn(d int) string { return fmt.Sprintf("s_dist_%02d", d) }

// indexes is the DDL of the secondary indexes: customers by last name
// (Payment and OrderStatus by name) and orders by customer (OrderStatus).
var indexes = []string{
	"CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first)",
	"CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
}

// Schema returns the DDL statements of the schema in the order they run:
// the nine CREATE TABLEs, then the CREATE INDEXes.
func Schema() []string {
	out := append([]string(nil), tables...)
	return append(out, indexes...)
}

// TableNames returns the names of the nine tables.
func TableNames() []string { return append([]string(nil), tableNames...) }

// CreateTables creates the nine tables, without secondary indexes.
func CreateTables(ctx context.Context, db Execer) error {
	return execAll(ctx, db, tables)
}

// CreateIndexes creates the secondary indexes; Load runs it after the
// data is in.
func CreateIndexes(ctx context.Context, db Execer) error {
	return execAll(ctx, db, indexes)
}

// DropTables drops the nine tables if they exist.
func DropTables(ctx context.Context, db Execer) error {
	stmts := make([]string, len(tableNames))
	for i, name := range tableNames {
		stmts[i] = "DROP TABLE IF EXISTS " + name
	}
	return execAll(ctx, db, stmts)
}

func execAll(ctx context.Context, db Execer, stmts []string) error {
	for _, s := range stmts {
		if _, err := db.Exec(ctx, s); err != nil {
			return fmt.Errorf("tpcc: %s: %w", firstLine(s), err)
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSuffix(s[:i], " (")
	}
	return s
}
