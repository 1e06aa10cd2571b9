package sqlite

import (
	"errors"
	"testing"
)

// TestNumeric checks NumericFunction against what PostgreSQL 15 stores in
// numeric(p,s): half away from zero on the exact value, a double read
// with 15 significant digits, and overflow at p-s digits before the
// point after rounding.
func TestNumeric(t *testing.T) {
	for _, c := range []struct {
		v    any
		p, s int64
		want any
		err  error
	}{
		{"99.49001287680001", 6, 2, 99.49, nil},
		{99.49001287680001, 6, 2, 99.49, nil},
		{"-0.125", 6, 2, -0.13, nil},
		{"0.125", 6, 2, 0.13, nil},
		{1.005, 6, 2, 1.01, nil}, // the double is 1.00499999999999989..., PostgreSQL reads 1.00500000000000
		{0.1 + 0.2, 6, 2, 0.3, nil},
		{int64(42), 6, 2, 42.0, nil},
		{"2.5", 6, 0, int64(3), nil},
		{"-2.5", 6, 0, int64(-3), nil},
		{" 1e2 ", 6, 2, 100.0, nil},
		{nil, 6, 2, nil, nil},
		{"9999.994", 6, 2, 9999.99, nil},
		{"9999.995", 6, 2, nil, errNumericOverflow},
		{int64(10000), 6, 2, nil, errNumericOverflow},
		{-123456.0, 6, 0, int64(-123456), nil},
		{-1234567.0, 6, 0, nil, errNumericOverflow},
		{"abc", 6, 2, nil, errNumericSyntax},
		{"0x10", 6, 2, nil, errNumericSyntax},
	} {
		got, err := numeric(c.v, c.p, c.s)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("numeric(%v, %d, %d) = %v (%T), %v; want %v (%T), %v", c.v, c.p, c.s, got, got, err, c.want, c.want, c.err)
		}
	}
}
