// Package pgnumeric computes on numbers written as decimal text with
// PostgreSQL's numeric rules (src/backend/utils/adt/numeric.c), where a
// value's display scale, its digits after the point, is part of the
// value the client sees: 1 / 3.0 is 0.33333333333333333333, 6.0 / 2 is
// 3.0000000000000000. Shepherd needs them where no replica but
// PostgreSQL computes those digits: a quotient the SQL writer folds
// from constants, and the parts sqlan asks the replicas for.
package pgnumeric

import (
	"math/big"
	"strings"
)

// Decimal is a number read from its text: |v| = Digits * 10^-Scale, and
// Scale is its display scale.
type Decimal struct {
	Neg    bool
	Digits *big.Int
	Scale  int
}

// maxDigits bounds the text Parse reads: far above any value the
// replicas hold, low enough that no division costs much.
const maxDigits = 2000

// Parse reads a numeric's text as PostgreSQL, MariaDB and SQLite
// (through printf) write it: an optional sign, digits, an optional point
// and decimals. No exponent, no NaN or infinity.
func Parse(s string) (Decimal, bool) {
	d := Decimal{Neg: strings.HasPrefix(s, "-")}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(s, ".")
	if whole+frac == "" || strings.Trim(whole+frac, "0123456789") != "" || len(whole)+len(frac) > maxDigits {
		return Decimal{}, false
	}
	d.Digits, _ = new(big.Int).SetString(whole+frac, 10)
	d.Scale = len(frac)
	return d, true
}

// String writes d as PostgreSQL writes a numeric: its scale's decimals,
// no sign on zero.
func (d Decimal) String() string {
	text := d.Digits.String()
	if d.Scale > 0 {
		if len(text) <= d.Scale {
			text = strings.Repeat("0", d.Scale-len(text)+1) + text
		}
		text = text[:len(text)-d.Scale] + "." + text[len(text)-d.Scale:]
	}
	if d.Neg && d.Digits.Sign() != 0 {
		text = "-" + text
	}
	return text
}

// weight returns PostgreSQL's normalised weight of a numeric (the
// power of 10000 of its first non-zero base-10000 digit) and that digit;
// 0, 0 for zero.
func (d Decimal) weight() (int, int64) {
	if d.Digits.Sign() == 0 {
		return 0, 0
	}
	text := d.Digits.String()
	e := len(text) - d.Scale - 1 // power of ten of the first digit
	w := floorDiv(e, 4)
	n := e - 4*w + 1 // decimal digits of the first base-10000 digit
	lead := text[:min(len(text), n)] + strings.Repeat("0", max(0, n-len(text)))
	var first int64
	for _, c := range lead {
		first = first*10 + int64(c-'0')
	}
	return w, first
}

// DivScale is the display scale of PostgreSQL's quotient x / y
// (select_div_scale): at least 16 significant digits by the operands'
// weights, never fewer decimals than either operand has, at most 1000.
func DivScale(x, y Decimal) int {
	const minSigDigits, maxScale = 16, 1000
	w1, f1 := x.weight()
	w2, f2 := y.weight()
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	return min(max(minSigDigits-qweight*4, x.Scale, y.Scale, 0), maxScale)
}

// Quotient is x / y as PostgreSQL's numeric division computes it:
// rounded half away from zero to DivScale(x, y). ok is false for a zero
// y (PostgreSQL fails with 22012).
func Quotient(x, y Decimal) (Decimal, bool) {
	if y.Digits.Sign() == 0 {
		return Decimal{}, false
	}
	rscale := DivScale(x, y)
	// |x| / |y| * 10^rscale = xd * 10^(y.Scale + rscale) / (yd * 10^x.Scale)
	num := new(big.Int).Mul(x.Digits, pow10(y.Scale+rscale))
	den := new(big.Int).Mul(y.Digits, pow10(x.Scale))
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if rem.Mul(rem, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return Decimal{Neg: x.Neg != y.Neg && q.Sign() != 0, Digits: q, Scale: rscale}, true
}

// Divide is Quotient on text. ok is false for text that is not a number
// and for a zero y.
func Divide(xs, ys string) (string, bool) {
	x, ok1 := Parse(xs)
	y, ok2 := Parse(ys)
	if !ok1 || !ok2 {
		return "", false
	}
	q, ok := Quotient(x, y)
	if !ok {
		return "", false
	}
	return q.String(), true
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
