package tpcc

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func testGenerator(t *testing.T, scale Scale, seed, stream uint64) *Generator {
	t.Helper()
	g, err := NewGenerator(GeneratorConfig{
		Scale:     scale,
		Constants: RunConstants(LoadConstants(1), seed),
		HomeWID:   1, HomeDID: 1,
		Seed: seed, Stream: stream,
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var tinyScale = Scale{Warehouses: 1, Items: 1000, Customers: 30, Orders: 30}

// TestMixProportions draws 100,000 transaction types and finds each
// type's share within half a percentage point of its weight.
func TestMixProportions(t *testing.T) {
	const draws = 100000
	g := testGenerator(t, tinyScale, 7, 0)
	var n [NumTxTypes]int
	for range draws {
		n[g.Next()]++
	}
	for typ, want := range StandardMix {
		got := 100 * float64(n[typ]) / draws
		if math.Abs(got-float64(want)) > 0.5 {
			t.Errorf("%v: %.2f %% of draws, want %d %%", TxType(typ), got, want)
		}
	}
	t.Logf("shares of %d draws: %v", draws, n)
}

// TestMixCustom checks that a zero weight is never drawn and that the
// weights are relative.
func TestMixCustom(t *testing.T) {
	g, err := NewGenerator(GeneratorConfig{Scale: tinyScale, HomeWID: 1, HomeDID: 1,
		Mix: Mix{NewOrderTx: 1, StockLevelTx: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var n [NumTxTypes]int
	for range 40000 {
		n[g.Next()]++
	}
	if n[PaymentTx]+n[OrderStatusTx]+n[DeliveryTx] != 0 {
		t.Errorf("types with weight 0 were drawn: %v", n)
	}
	if share := float64(n[StockLevelTx]) / 40000; math.Abs(share-0.75) > 0.01 {
		t.Errorf("StockLevel share %.3f, want 0.75", share)
	}
	for _, bad := range []Mix{{}, {NewOrderTx: -1, PaymentTx: 2}} {
		if bad.Validate() == nil {
			t.Errorf("mix %v validated", bad)
		}
	}
}

// topShare returns the fraction of draws that fell on the most frequent
// tenth of the values seen.
func topShare(counts map[int]int, values, draws int) float64 {
	c := make([]int, 0, len(counts))
	for _, n := range counts {
		c = append(c, n)
	}
	slices.Sort(c)
	slices.Reverse(c)
	top := 0
	for _, n := range c[:min(len(c), values/10)] {
		top += n
	}
	return float64(top) / float64(draws)
}

// TestNURand checks the range of NURand for the three uses and that it is
// far from uniform, where a uniform draw of the same size is not.
func TestNURand(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const draws = 100000
	for _, tc := range []struct{ a, c, x, y int }{
		{aCID, 259, 1, 3000},
		{aItem, 7911, 1, 100000},
		{aLast, 157, 0, 999},
		{aCID, 0, 1, 30},
		{aLast, 255, 0, 29},
	} {
		counts := map[int]int{}
		uniform := map[int]int{}
		for range draws {
			v := NURand(r, tc.a, tc.c, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d, %d) = %d, out of range", tc.a, tc.c, tc.x, tc.y, v)
			}
			counts[v]++
			uniform[between(r, tc.x, tc.y)]++
		}
		n := tc.y - tc.x + 1
		skewed, flat := topShare(counts, n, draws), topShare(uniform, n, draws)
		t.Logf("NURand(%d, %d, %d, %d): top tenth of values takes %.3f of draws (uniform %.3f)",
			tc.a, tc.c, tc.x, tc.y, skewed, flat)
		if n < 1000 {
			continue // too few values per bucket for the skew to show reliably
		}
		if skewed < 2*flat {
			t.Errorf("NURand(%d, %d, %d, %d): top tenth takes %.3f (uniform %.3f), want at least twice as much",
				tc.a, tc.c, tc.x, tc.y, skewed, flat)
		}
	}
}

// TestNURandConstantShiftsHotKeys checks that C moves the hot keys.
func TestNURandConstantShiftsHotKeys(t *testing.T) {
	hottest := func(c int) int {
		r := rand.New(rand.NewPCG(5, 6))
		counts := map[int]int{}
		for range 50000 {
			counts[NURand(r, aCID, c, 1, 3000)]++
		}
		best, bestN := 0, -1
		for v, n := range counts {
			if n > bestN || (n == bestN && v < best) {
				best, bestN = v, n
			}
		}
		return best
	}
	if a, b := hottest(0), hottest(500); a == b {
		t.Errorf("C 0 and C 500 share the hottest customer %d", a)
	}
}

// TestRunConstants checks the allowed distance between the loader's and
// the run's last-name constants, for every loader constant.
func TestRunConstants(t *testing.T) {
	for seed := range uint64(50) {
		load := LoadConstants(seed)
		for c := 0; c <= aLast; c++ {
			load.CLast = c
			run := RunConstants(load, seed)
			d := run.CLast - c
			if d < 0 {
				d = -d
			}
			if d < 65 || d > 119 || d == 96 || d == 112 || run.CLast < 0 || run.CLast > aLast {
				t.Fatalf("load C %d, run C %d: distance %d not allowed", c, run.CLast, d)
			}
			if run.CID != load.CID || run.CItem != load.CItem {
				t.Fatalf("run constants %+v differ from load %+v beyond C_LAST", run, load)
			}
		}
	}
}

// draw returns n transactions (type and input) from g.
func draw(g *Generator, n int) []any {
	var out []any
	for range n {
		typ := g.Next()
		out = append(out, typ, g.Input(typ))
	}
	return out
}

// TestGeneratorDeterministic checks that a seed and stream replay the
// same transactions and that another stream or seed does not.
func TestGeneratorDeterministic(t *testing.T) {
	scale := Scale{Warehouses: 3, Items: 1000, Customers: 3000, Orders: 3000}
	a := draw(testGenerator(t, scale, 11, 2), 2000)
	b := draw(testGenerator(t, scale, 11, 2), 2000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed and stream gave different transactions")
	}
	if reflect.DeepEqual(a, draw(testGenerator(t, scale, 11, 3), 2000)) {
		t.Error("another stream gave the same transactions")
	}
	if reflect.DeepEqual(a, draw(testGenerator(t, scale, 12, 2), 2000)) {
		t.Error("another seed gave the same transactions")
	}
}

// TestNewOrderInputs checks the shape of NewOrder inputs and the rates of
// rollbacks and remote lines.
func TestNewOrderInputs(t *testing.T) {
	scale := Scale{Warehouses: 4, Items: 1000, Customers: 30, Orders: 30}
	g := testGenerator(t, scale, 21, 0)
	const n = 20000
	rollbacks, lines, remote := 0, 0, 0
	for range n {
		in := g.NewOrder()
		if in.WID != 1 || in.DID < 1 || in.DID > 10 || in.CID < 1 || in.CID > scale.Customers {
			t.Fatalf("bad keys in %+v", in)
		}
		if len(in.Lines) < minOrderLines || len(in.Lines) > maxOrderLines {
			t.Fatalf("%d lines", len(in.Lines))
		}
		seen := map[int]bool{}
		for i, l := range in.Lines {
			if seen[l.ItemID] {
				t.Fatalf("item %d twice in %+v", l.ItemID, in.Lines)
			}
			seen[l.ItemID] = true
			if l.ItemID == scale.Items+1 {
				if i != len(in.Lines)-1 {
					t.Fatalf("unused item on line %d of %d", i+1, len(in.Lines))
				}
				rollbacks++
			} else if l.ItemID < 1 || l.ItemID > scale.Items {
				t.Fatalf("item %d out of range", l.ItemID)
			}
			if l.Quantity < 1 || l.Quantity > 10 || l.SupplyWID < 1 || l.SupplyWID > scale.Warehouses {
				t.Fatalf("bad line %+v", l)
			}
			lines++
			if l.SupplyWID != in.WID {
				remote++
			}
		}
	}
	if r := float64(rollbacks) / n; r < 0.007 || r > 0.013 {
		t.Errorf("rollback rate %.4f, want about 0.01", r)
	}
	if r := float64(remote) / float64(lines); r < 0.008 || r > 0.012 {
		t.Errorf("remote line rate %.4f, want about 0.01", r)
	}
	// With one warehouse every line is local.
	g1 := testGenerator(t, tinyScale, 21, 0)
	for range 5000 {
		for _, l := range g1.NewOrder().Lines {
			if l.SupplyWID != 1 {
				t.Fatalf("remote line %+v with one warehouse", l)
			}
		}
	}
}

// TestDistinctItemsTinyTable draws orders from the smallest item table
// allowed, where NURand collides often.
func TestDistinctItemsTinyTable(t *testing.T) {
	g := testGenerator(t, Scale{Warehouses: 1, Items: maxOrderLines, Customers: 1, Orders: 1}, 1, 1)
	for range 1000 {
		in := g.NewOrder()
		seen := map[int]bool{}
		for _, l := range in.Lines {
			if seen[l.ItemID] || l.ItemID < 1 || l.ItemID > maxOrderLines+1 {
				t.Fatalf("bad items %+v", in.Lines)
			}
			seen[l.ItemID] = true
		}
	}
}

// TestPaymentInputs checks the by-name and remote-customer rates and the
// amounts of Payment inputs.
func TestPaymentInputs(t *testing.T) {
	scale := Scale{Warehouses: 5, Items: 1000, Customers: 30, Orders: 30}
	g := testGenerator(t, scale, 31, 0)
	const n = 50000
	byName, remote := 0, 0
	names := map[string]bool{}
	for i := range nameRange(scale.Customers) {
		names[LastName(i)] = true
	}
	for range n {
		in := g.Payment()
		if in.Amount < 100 || in.Amount > 500000 {
			t.Fatalf("amount %d", in.Amount)
		}
		if in.Customer.ByName {
			byName++
			if !names[in.Customer.Last] {
				t.Fatalf("last name %s is nobody's at this scale", in.Customer.Last)
			}
		} else if in.Customer.ID < 1 || in.Customer.ID > scale.Customers {
			t.Fatalf("customer id %d", in.Customer.ID)
		}
		if in.CWID != in.WID {
			remote++
		} else if in.CDID != in.DID {
			t.Fatalf("local customer in another district: %+v", in)
		}
	}
	if r := float64(byName) / n; math.Abs(r-0.6) > 0.01 {
		t.Errorf("by-name rate %.3f, want 0.60", r)
	}
	if r := float64(remote) / n; math.Abs(r-0.15) > 0.01 {
		t.Errorf("remote customer rate %.3f, want 0.15", r)
	}
}

// TestOtherInputs checks the ranges of OrderStatus, Delivery and
// StockLevel inputs.
func TestOtherInputs(t *testing.T) {
	g, err := NewGenerator(GeneratorConfig{Scale: tinyScale, HomeWID: 1, HomeDID: 7})
	if err != nil {
		t.Fatal(err)
	}
	for range 5000 {
		if in := g.Delivery(); in.WID != 1 || in.CarrierID < 1 || in.CarrierID > 10 {
			t.Fatalf("delivery %+v", in)
		}
		if in := g.StockLevel(); in.WID != 1 || in.DID != 7 || in.Threshold < 10 || in.Threshold > 20 {
			t.Fatalf("stock level %+v", in)
		}
		if in := g.OrderStatus(); in.WID != 1 || in.DID < 1 || in.DID > 10 {
			t.Fatalf("order status %+v", in)
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING"} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestScaleValidate(t *testing.T) {
	if err := DefaultScale(10).Validate(); err != nil {
		t.Errorf("default scale: %v", err)
	}
	for _, s := range []Scale{
		{Warehouses: 0, Items: 1000, Customers: 30, Orders: 30},
		{Warehouses: 1, Items: 10, Customers: 30, Orders: 30},
		{Warehouses: 1, Items: 1000, Customers: 30, Orders: 31},
		{Warehouses: 1, Items: 1000, Customers: 0, Orders: 0},
	} {
		if s.Validate() == nil {
			t.Errorf("%+v validated", s)
		}
	}
}
