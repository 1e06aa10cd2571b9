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

// TestDivide checks DivideFunction: SQLite's own quotient, NULL for a
// NULL operand (also over zero: PostgreSQL's division is strict), and
// 22012 for a zero divisor of a value.
func TestDivide(t *testing.T) {
	for _, c := range []struct {
		a, b, want any
		err        error
	}{
		{int64(7), int64(2), int64(3), nil},
		{int64(-7), int64(2), int64(-3), nil},
		{int64(7), 2.0, 3.5, nil},
		{7.0, int64(-2), -3.5, nil},
		{int64(-9223372036854775808), int64(-1), 9223372036854775808.0, nil},
		{"8", int64(3), int64(2), nil},
		{nil, int64(0), nil, nil},
		{nil, 0.0, nil, nil},
		{int64(1), nil, nil, nil},
		{int64(1), int64(0), nil, errDivisionByZero},
		{0.5, 0.0, nil, errDivisionByZero},
		{int64(1), "0", nil, errDivisionByZero},
	} {
		got, err := divide(c.a, c.b)
		if !errors.Is(err, c.err) || got != c.want {
			t.Errorf("divide(%v, %v) = %v (%T), %v; want %v (%T), %v", c.a, c.b, got, got, err, c.want, c.want, c.err)
		}
	}
}
