package bench

import (
	"math"
	"testing"
	"time"
)

func TestBankConfigValidate(t *testing.T) {
	for _, c := range []BankConfig{
		{Accounts: 1},
		{Accounts: 10, HotAccounts: 11},
		{Accounts: 10, HotShare: 1.5},
		{Accounts: 10, HotShare: -0.1},
		{Accounts: 10, HotAccounts: 1, HotShare: 0.5},
		{Accounts: 10, ReadOnly: 2},
		{Accounts: 10, Initial: -1},
	} {
		if _, err := NewBank(c); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	b, err := NewBank(BankConfig{Accounts: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Config(); got.HotAccounts != 5 || got.Initial != 1000 {
		t.Errorf("defaults: %+v", got)
	}
}

// TestBankMix: the read-only share and the hot-spot share come out as
// configured (within a few standard deviations over 200,000 draws), cold
// draws are uniform over all accounts, and the two accounts differ.
func TestBankMix(t *testing.T) {
	const n = 200_000
	for _, c := range []BankConfig{
		{Accounts: 1000, HotAccounts: 10, HotShare: 0.5, ReadOnly: 0.2},
		{Accounts: 1000, HotAccounts: 10, HotShare: 0, ReadOnly: 0},
		{Accounts: 50, HotAccounts: 2, HotShare: 0.9, ReadOnly: 0.9},
		{Accounts: 2, HotShare: 1, ReadOnly: 1},
	} {
		b, err := NewBank(c)
		if err != nil {
			t.Fatal(err)
		}
		c = b.Config()
		g := b.NewBankGen(1, 0)
		var readOnly, hot int
		counts := make([]int, c.Accounts+1)
		for range n {
			op := g.Op()
			if op.From == op.To {
				t.Fatalf("%+v: transfer from an account to itself: %+v", c, op)
			}
			if op.Amount < 1 || op.Amount > 100 {
				t.Fatalf("amount %d", op.Amount)
			}
			if op.ReadOnly {
				readOnly++
			}
			for _, a := range []int{op.From, op.To} {
				if a < 1 || a > c.Accounts {
					t.Fatalf("%+v: account %d", c, a)
				}
				counts[a]++
			}
			if op.From <= c.HotAccounts {
				hot++
			}
		}
		near(t, "read-only share", float64(readOnly)/n, c.ReadOnly, n)
		// The payer is in the hot spot when it was a hot draw, or a cold
		// draw that happened to pick a hot account. (The payee is drawn
		// again when it equals the payer, which skews it a little.)
		share := float64(c.HotAccounts) / float64(c.Accounts)
		near(t, "hot share", float64(hot)/n, c.HotShare+(1-c.HotShare)*share, n)
		if c.HotShare == 0 {
			// Uniform: every account within 25 % of the mean.
			mean := 2.0 * n / float64(c.Accounts)
			for a := 1; a <= c.Accounts; a++ {
				if math.Abs(float64(counts[a])-mean) > 0.25*mean {
					t.Errorf("%+v: account %d drawn %d times, mean %.0f", c, a, counts[a], mean)
				}
			}
		}
	}
}

// near fails unless got is within five standard deviations of the
// binomial proportion want over n draws.
func near(t *testing.T, what string, got, want float64, n int) {
	t.Helper()
	sd := math.Sqrt(want*(1-want)/float64(n)) + 1e-9
	if math.Abs(got-want) > 5*sd {
		t.Errorf("%s: %.4f, want %.4f ± %.4f", what, got, want, 5*sd)
	}
}

// TestBankGenSeeded: a seed and stream replay the same transactions;
// another stream gives others.
func TestBankGenSeeded(t *testing.T) {
	b, _ := NewBank(BankConfig{Accounts: 100, HotShare: 0.3, ReadOnly: 0.3})
	a, c, d := b.NewBankGen(9, 1), b.NewBankGen(9, 1), b.NewBankGen(9, 2)
	same := 0
	for range 100 {
		x, y, z := a.Op(), c.Op(), d.Op()
		if x != y {
			t.Fatalf("same seed and stream differ: %+v %+v", x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 10 {
		t.Errorf("streams 1 and 2 agree on %d of 100 draws", same)
	}
	if k := b.Generator(0, 1).Next().Kind; k != KindTransfer && k != KindInquiry {
		t.Errorf("kind %q", k)
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Error("empty histogram reports a value")
	}
	for i := 1; i <= 10000; i++ {
		h.Add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5000 * time.Microsecond}, {0.95, 9500 * time.Microsecond}, {0.99, 9900 * time.Microsecond}} {
		got := h.Quantile(c.q)
		if math.Abs(float64(got-c.want)) > 0.02*float64(c.want) {
			t.Errorf("q%.2f = %v, want %v within 2%%", c.q, got, c.want)
		}
	}
	if h.Quantile(1) != 10000*time.Microsecond {
		t.Errorf("max %v", h.Quantile(1))
	}
	if m := h.Mean(); m < 5000*time.Microsecond || m > 5001*time.Microsecond {
		t.Errorf("mean %v", m)
	}
	// Small values are exact; a merge counts both.
	var small Histogram
	for range 3 {
		small.Add(7 * time.Microsecond)
	}
	small.Add(-time.Second)
	if small.Quantile(0.9) != 7*time.Microsecond || small.Quantile(0) != 0 {
		t.Errorf("small: %v %v", small.Quantile(0.9), small.Quantile(0))
	}
	h.Merge(&small)
	if h.Count() != 10004 {
		t.Errorf("merged count %d", h.Count())
	}
	// Every bucket's middle maps back to the bucket (up to 2^61 µs).
	for i := range histIndex(1 << 61) {
		if got := histIndex(histValue(i)); got != i {
			t.Fatalf("bucket %d: middle %d maps to %d", i, histValue(i), got)
		}
	}
}
