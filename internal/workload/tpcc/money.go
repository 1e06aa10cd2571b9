package tpcc

import (
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5/pgtype"
)

// Money is kept in the client as whole cents and rates (tax, discount) as
// ten-thousandths, so the client's own arithmetic is exact too; on the
// wire both are numeric.

// money converts cents to a numeric parameter.
func money(cents int64) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(cents), Exp: -2, Valid: true}
}

// rate converts ten-thousandths to a numeric parameter.
func rate(tenThousandths int64) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(tenThousandths), Exp: -4, Valid: true}
}

// units returns n in units of 10^-scale (scale 2: cents), failing if n is
// NULL, not finite, has digits below that unit or does not fit an int64.
func units(n pgtype.Numeric, scale int32) (int64, error) {
	if !n.Valid {
		return 0, fmt.Errorf("numeric is NULL")
	}
	if n.NaN || n.InfinityModifier != pgtype.Finite || n.Int == nil {
		return 0, fmt.Errorf("numeric is not a finite number")
	}
	v := new(big.Int).Set(n.Int)
	shift := n.Exp + scale
	ten := big.NewInt(10)
	if shift >= 0 {
		v.Mul(v, new(big.Int).Exp(ten, big.NewInt(int64(shift)), nil))
	} else {
		div := new(big.Int).Exp(ten, big.NewInt(int64(-shift)), nil)
		var rem big.Int
		v.QuoRem(v, div, &rem)
		if rem.Sign() != 0 {
			return 0, fmt.Errorf("numeric %s has more than %d decimal places", formatNumeric(n), scale)
		}
	}
	if !v.IsInt64() {
		return 0, fmt.Errorf("numeric %s out of range", formatNumeric(n))
	}
	return v.Int64(), nil
}

func formatNumeric(n pgtype.Numeric) string {
	if n.Int == nil {
		return "?"
	}
	return fmt.Sprintf("%se%d", n.Int, n.Exp)
}

// formatCents writes cents as a decimal amount, -12.30 for -1230.
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// fixed is a scan target for a numeric column: it stores the value in
// units of 10^-scale in dst. A NULL is an error unless null is set, which
// then records it (and dst is set to 0). Besides numeric it accepts text
// and integer columns, so a server that describes a computed column
// differently still works.
type fixed struct {
	dst   *int64
	scale int32
	null  *bool
}

// cents scans a money column into whole cents.
func cents(dst *int64) *fixed { return &fixed{dst: dst, scale: 2} }

// nullCents scans a money column that may be NULL (a sum over no rows).
func nullCents(dst *int64, null *bool) *fixed { return &fixed{dst: dst, scale: 2, null: null} }

// tenThousandths scans a rate column (tax, discount).
func tenThousandths(dst *int64) *fixed { return &fixed{dst: dst, scale: 4} }

// ScanNumeric implements pgtype.NumericScanner.
func (f *fixed) ScanNumeric(n pgtype.Numeric) error {
	if !n.Valid && f.null != nil {
		*f.null, *f.dst = true, 0
		return nil
	}
	v, err := units(n, f.scale)
	if err != nil {
		return err
	}
	if f.null != nil {
		*f.null = false
	}
	*f.dst = v
	return nil
}

// ScanText implements pgtype.TextScanner.
func (f *fixed) ScanText(t pgtype.Text) error {
	if !t.Valid {
		return f.ScanNumeric(pgtype.Numeric{})
	}
	var n pgtype.Numeric
	if err := n.Scan(t.String); err != nil {
		return fmt.Errorf("numeric from text %q: %w", t.String, err)
	}
	return f.ScanNumeric(n)
}

// ScanInt64 implements pgtype.Int64Scanner.
func (f *fixed) ScanInt64(i pgtype.Int8) error {
	if !i.Valid {
		return f.ScanNumeric(pgtype.Numeric{})
	}
	return f.ScanNumeric(pgtype.Numeric{Int: big.NewInt(i.Int64), Valid: true})
}
