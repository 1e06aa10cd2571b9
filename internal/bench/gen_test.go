package bench

import (
	"math"
	"testing"
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
