package tpcc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The consistency conditions Check verifies, numbered as in the
// benchmark. Condition 11 (orders minus new orders per district equals
// the initial number of delivered orders) only holds right after loading
// and is left out.
var conditions = map[int]string{
	1:  "w_ytd = sum(d_ytd)",
	2:  "d_next_o_id - 1 = max(o_id) = max(no_o_id)",
	3:  "count(new_order) = max(no_o_id) - min(no_o_id) + 1",
	4:  "sum(o_ol_cnt) = count(order_line) per district",
	5:  "o_carrier_id is NULL exactly when a new_order row exists",
	6:  "o_ol_cnt = count(order_line) per order",
	7:  "ol_delivery_d is NULL exactly when o_carrier_id is NULL",
	8:  "w_ytd = sum(h_amount) of the warehouse",
	9:  "d_ytd = sum(h_amount) of the district",
	10: "c_balance = sum(delivered ol_amount) - sum(h_amount) of the customer",
	12: "c_balance + c_ytd_payment = sum(delivered ol_amount) of the customer",
}

// Violation is one failed consistency condition, for one warehouse,
// district, order or customer.
type Violation struct {
	Condition  int    // the benchmark's number
	Rule       string // what should hold
	WID, DID   int    // DID 0: the whole warehouse
	OrderID    int    // 0 unless the condition is about one order
	CustomerID int    // 0 unless the condition is about one customer
	Detail     string // the values found
}

// Error names the condition, where it fails and the values found.
func (v Violation) Error() string {
	var where strings.Builder
	fmt.Fprintf(&where, "warehouse %d", v.WID)
	if v.DID != 0 {
		fmt.Fprintf(&where, " district %d", v.DID)
	}
	if v.OrderID != 0 {
		fmt.Fprintf(&where, " order %d", v.OrderID)
	}
	if v.CustomerID != 0 {
		fmt.Fprintf(&where, " customer %d", v.CustomerID)
	}
	return fmt.Sprintf("condition %d (%s) fails for %s: %s", v.Condition, v.Rule, where.String(), v.Detail)
}

// CheckError is what Check returns for an inconsistent database.
type CheckError struct {
	// Violations are sorted by condition, warehouse, district, order and
	// customer; at most maxPerCondition per condition are kept.
	Violations []Violation
	// Omitted counts violations found beyond those kept.
	Omitted int
}

// Has reports whether condition c failed for warehouse w and district d
// (d 0: any district).
func (e *CheckError) Has(c, w, d int) bool {
	return slices.ContainsFunc(e.Violations, func(v Violation) bool {
		return v.Condition == c && v.WID == w && (d == 0 || v.DID == d)
	})
}

// Error lists the violations, one per line.
func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tpcc: %d consistency violations", len(e.Violations)+e.Omitted)
	for _, v := range e.Violations {
		b.WriteString("\n\t")
		b.WriteString(v.Error())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "\n\t... and %d more", e.Omitted)
	}
	return b.String()
}

const maxPerCondition = 10

// Check verifies the consistency conditions on a database no transaction
// is changing (or through a db that is one transaction with a stable
// snapshot). It returns nil if they hold, a *CheckError listing the
// violations if not, and any other error if a query failed.
func Check(ctx context.Context, db Querier) error {
	c := &checker{db: db, perCond: map[int]int{}}
	steps := []func(context.Context) error{c.districts, c.orders, c.customers}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return fmt.Errorf("tpcc: check: %w", err)
		}
	}
	if len(c.found) == 0 {
		return nil
	}
	slices.SortStableFunc(c.found, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Condition, b.Condition), cmp.Compare(a.WID, b.WID),
			cmp.Compare(a.DID, b.DID), cmp.Compare(a.OrderID, b.OrderID),
			cmp.Compare(a.CustomerID, b.CustomerID))
	})
	return &CheckError{Violations: c.found, Omitted: c.omitted}
}

type checker struct {
	db      Querier
	found   []Violation
	perCond map[int]int
	omitted int
}

func (c *checker) fail(v Violation, format string, args ...any) {
	if c.perCond[v.Condition] >= maxPerCondition {
		c.omitted++
		return
	}
	c.perCond[v.Condition]++
	v.Rule = conditions[v.Condition]
	v.Detail = fmt.Sprintf(format, args...)
	c.found = append(c.found, v)
}

// each runs sql and calls fn after scanning each row into dest.
func (c *checker) each(ctx context.Context, sql string, dest []any, fn func()) error {
	rows, err := c.db.Query(ctx, sql)
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	_, err = pgx.ForEachRow(rows, dest, func() error { fn(); return nil })
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

type wd struct{ w, d int }

// districtAgg is what the district-level conditions compare.
type districtAgg struct {
	ytd, next             int64
	maxO, olCnt           int64
	hasNew                bool
	maxNO, minNO, countNO int64
	lines, historySum     int64
}

// districts checks conditions 1 to 4, 8 and 9.
func (c *checker) districts(ctx context.Context) error {
	wYTD := map[int]int64{}
	var wOrder []int
	var w, d int
	var ytd, n1, n2, n3 int64
	err := c.each(ctx, "SELECT w_id, w_ytd FROM warehouse ORDER BY w_id", []any{&w, cents(&ytd)}, func() {
		wYTD[w] = ytd
		wOrder = append(wOrder, w)
	})
	if err != nil {
		return err
	}
	agg := map[wd]*districtAgg{}
	var dOrder []wd
	err = c.each(ctx, "SELECT d_w_id, d_id, d_ytd, d_next_o_id FROM district ORDER BY d_w_id, d_id",
		[]any{&w, &d, cents(&ytd), &n1}, func() {
			agg[wd{w, d}] = &districtAgg{ytd: ytd, next: n1}
			dOrder = append(dOrder, wd{w, d})
		})
	if err != nil {
		return err
	}
	get := func() *districtAgg {
		a := agg[wd{w, d}]
		if a == nil {
			a = &districtAgg{}
			agg[wd{w, d}] = a
			dOrder = append(dOrder, wd{w, d})
		}
		return a
	}
	err = c.each(ctx, "SELECT o_w_id, o_d_id, max(o_id), sum(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id",
		[]any{&w, &d, &n1, &n2}, func() {
			a := get()
			a.maxO, a.olCnt = n1, n2
		})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT no_w_id, no_d_id, max(no_o_id), min(no_o_id), count(*) FROM new_order "+
		"GROUP BY no_w_id, no_d_id", []any{&w, &d, &n1, &n2, &n3}, func() {
		a := get()
		a.hasNew, a.maxNO, a.minNO, a.countNO = true, n1, n2, n3
	})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT ol_w_id, ol_d_id, count(*) FROM order_line GROUP BY ol_w_id, ol_d_id",
		[]any{&w, &d, &n1}, func() {
			a := get()
			a.lines = n1
		})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT h_w_id, h_d_id, sum(h_amount) FROM history GROUP BY h_w_id, h_d_id",
		[]any{&w, &d, cents(&n1)}, func() {
			a := get()
			a.historySum = n1
		})
	if err != nil {
		return err
	}

	sumDYTD := map[int]int64{}
	sumHist := map[int]int64{}
	for _, k := range dOrder {
		a := agg[k]
		sumDYTD[k.w] += a.ytd
		sumHist[k.w] += a.historySum
		v := Violation{WID: k.w, DID: k.d}
		v.Condition = 2
		if a.next-1 != a.maxO {
			c.fail(v, "d_next_o_id %d, max(o_id) %d", a.next, a.maxO)
		}
		if a.hasNew && a.maxNO != a.maxO {
			c.fail(v, "max(o_id) %d, max(no_o_id) %d", a.maxO, a.maxNO)
		}
		v.Condition = 3
		if a.hasNew && a.countNO != a.maxNO-a.minNO+1 {
			c.fail(v, "%d new_order rows, no_o_id from %d to %d", a.countNO, a.minNO, a.maxNO)
		}
		v.Condition = 4
		if a.olCnt != a.lines {
			c.fail(v, "sum(o_ol_cnt) %d, %d order_line rows", a.olCnt, a.lines)
		}
		v.Condition = 9
		if a.ytd != a.historySum {
			c.fail(v, "d_ytd %s, sum(h_amount) %s", formatCents(a.ytd), formatCents(a.historySum))
		}
	}
	for _, w := range wOrder {
		v := Violation{WID: w, Condition: 1}
		if wYTD[w] != sumDYTD[w] {
			c.fail(v, "w_ytd %s, sum(d_ytd) %s", formatCents(wYTD[w]), formatCents(sumDYTD[w]))
		}
		v.Condition = 8
		if wYTD[w] != sumHist[w] {
			c.fail(v, "w_ytd %s, sum(h_amount) %s", formatCents(wYTD[w]), formatCents(sumHist[w]))
		}
	}
	return nil
}

// orders checks conditions 5 to 7, order by order.
func (c *checker) orders(ctx context.Context) error {
	var w, d, o int
	var n1, n2 int64
	const newOrderOf = "SELECT 1 FROM new_order n WHERE n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id AND n.no_o_id = o.o_id"
	err := c.each(ctx, "SELECT o.o_w_id, o.o_d_id, o.o_id FROM orders o "+
		"WHERE o.o_carrier_id IS NULL AND NOT EXISTS ("+newOrderOf+")", []any{&w, &d, &o}, func() {
		c.fail(Violation{Condition: 5, WID: w, DID: d, OrderID: o}, "no carrier but no new_order row")
	})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT o.o_w_id, o.o_d_id, o.o_id FROM orders o "+
		"WHERE o.o_carrier_id IS NOT NULL AND EXISTS ("+newOrderOf+")", []any{&w, &d, &o}, func() {
		c.fail(Violation{Condition: 5, WID: w, DID: d, OrderID: o}, "a carrier and a new_order row")
	})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT n.no_w_id, n.no_d_id, n.no_o_id FROM new_order n WHERE NOT EXISTS "+
		"(SELECT 1 FROM orders o WHERE o.o_w_id = n.no_w_id AND o.o_d_id = n.no_d_id AND o.o_id = n.no_o_id)",
		[]any{&w, &d, &o}, func() {
			c.fail(Violation{Condition: 5, WID: w, DID: d, OrderID: o}, "a new_order row without its order")
		})
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt, count(ol.ol_number) FROM orders o "+
		"LEFT JOIN order_line ol ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id "+
		"GROUP BY o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt HAVING o.o_ol_cnt <> count(ol.ol_number)",
		[]any{&w, &d, &o, &n1, &n2}, func() {
			c.fail(Violation{Condition: 6, WID: w, DID: d, OrderID: o}, "o_ol_cnt %d, %d order_line rows", n1, n2)
		})
	if err != nil {
		return err
	}
	return c.each(ctx, "SELECT o.o_w_id, o.o_d_id, o.o_id, count(*) FROM orders o "+
		"JOIN order_line ol ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id "+
		"WHERE (o.o_carrier_id IS NULL AND ol.ol_delivery_d IS NOT NULL) "+
		"OR (o.o_carrier_id IS NOT NULL AND ol.ol_delivery_d IS NULL) "+
		"GROUP BY o.o_w_id, o.o_d_id, o.o_id", []any{&w, &d, &o, &n1}, func() {
		c.fail(Violation{Condition: 7, WID: w, DID: d, OrderID: o},
			"%d lines whose delivery date disagrees with the carrier", n1)
	})
}

type customerKey struct{ w, d, c int }

// customers checks conditions 10 and 12, customer by customer.
func (c *checker) customers(ctx context.Context) error {
	delivered := map[customerKey]int64{}
	paid := map[customerKey]int64{}
	var k customerKey
	var amount, balance, ytd int64
	err := c.each(ctx, "SELECT o.o_w_id, o.o_d_id, o.o_c_id, sum(ol.ol_amount) FROM orders o "+
		"JOIN order_line ol ON ol.ol_w_id = o.o_w_id AND ol.ol_d_id = o.o_d_id AND ol.ol_o_id = o.o_id "+
		"WHERE ol.ol_delivery_d IS NOT NULL GROUP BY o.o_w_id, o.o_d_id, o.o_c_id",
		[]any{&k.w, &k.d, &k.c, cents(&amount)}, func() { delivered[k] = amount })
	if err != nil {
		return err
	}
	err = c.each(ctx, "SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) FROM history "+
		"GROUP BY h_c_w_id, h_c_d_id, h_c_id",
		[]any{&k.w, &k.d, &k.c, cents(&amount)}, func() { paid[k] = amount })
	if err != nil {
		return err
	}
	return c.each(ctx, "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment FROM customer "+
		"ORDER BY c_w_id, c_d_id, c_id",
		[]any{&k.w, &k.d, &k.c, cents(&balance), cents(&ytd)}, func() {
			v := Violation{Condition: 10, WID: k.w, DID: k.d, CustomerID: k.c}
			if balance != delivered[k]-paid[k] {
				c.fail(v, "c_balance %s, delivered %s, paid %s",
					formatCents(balance), formatCents(delivered[k]), formatCents(paid[k]))
			}
			v.Condition = 12
			if balance+ytd != delivered[k] {
				c.fail(v, "c_balance %s + c_ytd_payment %s, delivered %s",
					formatCents(balance), formatCents(ytd), formatCents(delivered[k]))
			}
		})
}
