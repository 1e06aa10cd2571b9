package tpcc

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Mix weighs the transaction types, indexed by TxType. Only the ratios
// matter.
type Mix [NumTxTypes]int

// StandardMix is the benchmark's mix: NewOrder 45 %, Payment 43 %,
// OrderStatus, Delivery and StockLevel 4 % each.
var StandardMix = Mix{NewOrderTx: 45, PaymentTx: 43, OrderStatusTx: 4, DeliveryTx: 4, StockLevelTx: 4}

// Validate reports a mix with a negative weight or no positive one.
func (m Mix) Validate() error {
	total := 0
	for t, w := range m {
		if w < 0 {
			return fmt.Errorf("tpcc: negative weight %d for %s", w, TxType(t))
		}
		total += w
	}
	if total == 0 {
		return errors.New("tpcc: the mix has no transaction type")
	}
	return nil
}

// GeneratorConfig configures a Generator.
type GeneratorConfig struct {
	Scale
	Constants Constants // the run's NURand constants (RunConstants)
	Mix       Mix       // zero: StandardMix
	// HomeWID is the client's warehouse, HomeDID its district (the one
	// StockLevel asks about).
	HomeWID, HomeDID int
	// Seed and Stream seed the generator's source; clients of one run
	// share the seed and differ in stream.
	Seed, Stream uint64
}

// Generator draws transaction types and their inputs for one client. The
// same configuration always yields the same sequence. It is not safe for
// concurrent use.
type Generator struct {
	cfg GeneratorConfig
	cum [NumTxTypes]int // running sums of the mix's weights
	r   *rand.Rand
}

// NewGenerator returns a generator for cfg.
func NewGenerator(cfg GeneratorConfig) (*Generator, error) {
	if err := cfg.Scale.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mix == (Mix{}) {
		cfg.Mix = StandardMix
	}
	if err := cfg.Mix.Validate(); err != nil {
		return nil, err
	}
	if cfg.HomeWID < 1 || cfg.HomeWID > cfg.Warehouses {
		return nil, fmt.Errorf("tpcc: home warehouse %d out of 1..%d", cfg.HomeWID, cfg.Warehouses)
	}
	if cfg.HomeDID < 1 || cfg.HomeDID > DistrictsPerWarehouse {
		return nil, fmt.Errorf("tpcc: home district %d out of 1..%d", cfg.HomeDID, DistrictsPerWarehouse)
	}
	g := &Generator{cfg: cfg, r: rand.New(rand.NewPCG(cfg.Seed, cfg.Stream))}
	sum := 0
	for t, w := range cfg.Mix {
		sum += w
		g.cum[t] = sum
	}
	return g, nil
}

// Next draws the type of the next transaction, each type with
// probability its weight over the mix's total.
func (g *Generator) Next() TxType {
	x := g.r.IntN(g.cum[NumTxTypes-1])
	for t, c := range g.cum {
		if x < c {
			return TxType(t)
		}
	}
	panic("unreachable")
}

// percent reports true with probability p/100.
func (g *Generator) percent(p int) bool { return g.r.IntN(100) < p }

func (g *Generator) district() int { return between(g.r, 1, DistrictsPerWarehouse) }

// customerID draws a customer id, skewed by NURand.
func (g *Generator) customerID() int {
	return NURand(g.r, aCID, g.cfg.Constants.CID, 1, g.cfg.Customers)
}

// customer draws a customer reference: by last name 60 % of the time, by
// id otherwise.
func (g *Generator) customer() CustomerRef {
	if g.percent(60) {
		n := NURand(g.r, aLast, g.cfg.Constants.CLast, 0, nameRange(g.cfg.Customers)-1)
		return CustomerRef{ByName: true, Last: LastName(n)}
	}
	return CustomerRef{ID: g.customerID()}
}

// otherWarehouse draws a warehouse other than the home one, uniformly
// (the home one when there is no other).
func (g *Generator) otherWarehouse() int {
	if g.cfg.Warehouses == 1 {
		return g.cfg.HomeWID
	}
	w := between(g.r, 1, g.cfg.Warehouses-1)
	if w >= g.cfg.HomeWID {
		w++
	}
	return w
}

// NewOrder draws a NewOrder input: 5 to 15 lines of distinct NURand items
// with quantities 1 to 10, each supplied by the home warehouse 99 % of
// the time and by another one otherwise; in 1 % of orders the last item
// does not exist, so the order rolls back.
func (g *Generator) NewOrder() NewOrderInput {
	in := NewOrderInput{WID: g.cfg.HomeWID, DID: g.district(), CID: g.customerID()}
	n := between(g.r, minOrderLines, maxOrderLines)
	rollback := g.percent(1)
	used := make(map[int]bool, n)
	for i := range n {
		var item int
		if rollback && i == n-1 {
			item = g.cfg.Items + 1
		} else {
			item = g.distinctItem(used)
		}
		used[item] = true
		supply := g.cfg.HomeWID
		if g.percent(1) {
			supply = g.otherWarehouse()
		}
		in.Lines = append(in.Lines, OrderLine{ItemID: item, SupplyWID: supply, Quantity: between(g.r, 1, 10)})
	}
	return in
}

// distinctItem draws a NURand item id not in used; after many collisions
// (a tiny item table) it takes an unused id uniformly instead.
func (g *Generator) distinctItem(used map[int]bool) int {
	for range 64 {
		item := NURand(g.r, aItem, g.cfg.Constants.CItem, 1, g.cfg.Items)
		if !used[item] {
			return item
		}
	}
	k := g.r.IntN(g.cfg.Items - len(used))
	for item := 1; ; item++ {
		if used[item] {
			continue
		}
		if k == 0 {
			return item
		}
		k--
	}
}

// Payment draws a Payment input: the customer belongs to the home
// district 85 % of the time and to a random district of another
// warehouse otherwise; the amount is 1.00 to 5000.00.
func (g *Generator) Payment() PaymentInput {
	in := PaymentInput{WID: g.cfg.HomeWID, DID: g.district()}
	in.CWID, in.CDID = in.WID, in.DID
	if g.cfg.Warehouses > 1 && !g.percent(85) {
		in.CWID, in.CDID = g.otherWarehouse(), g.district()
	}
	in.Customer = g.customer()
	in.Amount = int64(between(g.r, 100, 500000))
	return in
}

// OrderStatus draws an OrderStatus input in the home warehouse.
func (g *Generator) OrderStatus() OrderStatusInput {
	return OrderStatusInput{WID: g.cfg.HomeWID, DID: g.district(), Customer: g.customer()}
}

// Delivery draws a Delivery input for the home warehouse.
func (g *Generator) Delivery() DeliveryInput {
	return DeliveryInput{WID: g.cfg.HomeWID, CarrierID: between(g.r, 1, 10)}
}

// StockLevel draws a StockLevel input for the home district, with a
// threshold of 10 to 20.
func (g *Generator) StockLevel() StockLevelInput {
	return StockLevelInput{WID: g.cfg.HomeWID, DID: g.cfg.HomeDID, Threshold: between(g.r, 10, 20)}
}

// Input draws the input of a transaction of type t: a NewOrderInput,
// PaymentInput, OrderStatusInput, DeliveryInput or StockLevelInput.
func (g *Generator) Input(t TxType) any {
	switch t {
	case NewOrderTx:
		return g.NewOrder()
	case PaymentTx:
		return g.Payment()
	case OrderStatusTx:
		return g.OrderStatus()
	case DeliveryTx:
		return g.Delivery()
	case StockLevelTx:
		return g.StockLevel()
	}
	panic(fmt.Sprintf("tpcc: no input for %v", t))
}

// exponential draws a think time with the given mean from a negative
// exponential distribution, cut off at ten times the mean.
func (g *Generator) exponential(mean float64) float64 {
	return min(g.r.ExpFloat64()*mean, 10*mean)
}
