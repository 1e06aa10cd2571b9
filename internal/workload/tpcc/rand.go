package tpcc

import (
	"math/rand/v2"
	"strings"
)

// The A values of NURand for the three skewed choices.
const (
	aLast = 255  // customer last-name numbers
	aCID  = 1023 // customer ids
	aItem = 8191 // item ids
)

// NURand draws a non-uniform integer in [x, y]: a uniform draw from
// [0, a] is OR-ed into a uniform draw from [x, y], shifted by c and folded
// back into the range. The OR makes values with many bits set (in the low
// bits a covers) more likely, so some keys become hot. a is 255, 1023 or
// 8191 for last names, customer ids and item ids; c is the run's constant
// for that choice.
func NURand(r *rand.Rand, a, c, x, y int) int {
	n := y - x + 1
	return ((r.IntN(a+1)|(x+r.IntN(n)))+c)%n + x
}

// Constants are the C values NURand adds for the three skewed choices.
// The last-name constant a run uses must differ from the loader's by 65
// to 119 (but neither 96 nor 112), which RunConstants arranges.
type Constants struct {
	CLast int // 0..255
	CID   int // 0..1023
	CItem int // 0..8191
}

// LoadConstants returns the constants the loader uses for seed.
func LoadConstants(seed uint64) Constants {
	r := rand.New(rand.NewPCG(seed, 0xc0c0))
	return Constants{
		CLast: r.IntN(aLast + 1),
		CID:   r.IntN(aCID + 1),
		CItem: r.IntN(aItem + 1),
	}
}

// RunConstants returns the constants a run with seed uses against a
// database loaded with load: the same customer and item constants, and a
// last-name constant whose distance to the loader's is allowed.
func RunConstants(load Constants, seed uint64) Constants {
	r := rand.New(rand.NewPCG(seed, 0xc1c1))
	var ok []int
	for c := 0; c <= aLast; c++ {
		if validLastDelta(c - load.CLast) {
			ok = append(ok, c)
		}
	}
	out := load
	out.CLast = ok[r.IntN(len(ok))]
	return out
}

func validLastDelta(d int) bool {
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// between draws uniformly from [lo, hi].
func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

const (
	alnum   = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower   = "abcdefghijklmnopqrstuvwxyz"
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits  = "0123456789"
	marker  = "ORIGINAL" // in i_data and s_data: the item is "brand"
	zipTail = "11111"
)

// text draws a string of n characters from alphabet.
func text(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// alnumText draws an alphanumeric string of lo to hi characters.
func alnumText(r *rand.Rand, lo, hi int) string { return text(r, alnum, between(r, lo, hi)) }

// zip draws a zip code: four random digits and 11111.
func zip(r *rand.Rand) string { return text(r, digits, 4) + zipTail }

// itemData draws i_data or s_data: 26 to 50 characters, one in ten with
// ORIGINAL somewhere in it.
func itemData(r *rand.Rand) string {
	s := alnumText(r, 26, 50)
	if r.IntN(10) == 0 {
		at := r.IntN(len(s) - len(marker) + 1)
		s = s[:at] + marker + s[at+len(marker):]
	}
	return s
}

// syllables build last names: number n's three decimal digits pick three.
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName returns the last name of number n (0..999).
func LastName(n int) string {
	var b strings.Builder
	b.WriteString(syllables[n/100%10])
	b.WriteString(syllables[n/10%10])
	b.WriteString(syllables[n%10])
	return b.String()
}

// nameRange is how many last-name numbers exist at a scale: 1000, or the
// number of customers per district if that is smaller.
func nameRange(customers int) int { return min(1000, customers) }
