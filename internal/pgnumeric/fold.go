package pgnumeric

import (
	"math"
	"math/big"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// A numeric division of constants (CAST(6 AS DECIMAL) / - 32, 1.5 / 7)
// has one value, which shepherd computes as PostgreSQL does (Quotient)
// and gives the replicas as a constant of its digits and display scale:
// the engines' own quotients have other digits (MariaDB four decimals
// more than the dividend, SQLite a double).
//
// fold evaluates only what it can prove to be PostgreSQL's value:
// integer and decimal constants, signs, casts of them to numeric and
// integer, and + - * / between them, typed as PostgreSQL types them
// (int4 arithmetic where both sides are integers, truncating /, exact
// numeric elsewhere). Anything that could fail in PostgreSQL (an int4
// overflow, a division by zero, a cast out of range) or has another
// type (a float, an int8 constant, a string) is not folded, so that the
// SQL writer writes it and its error as before.

// value is a folded constant: an int4 (scale 0) or a numeric.
type value struct {
	d       Decimal
	numeric bool
}

// FoldQuotient returns PostgreSQL's value of l / r when both are
// constants fold evaluates and at least one of them is numeric (a
// division of integers truncates, and is not folded here); ok is false
// otherwise, and for a zero divisor.
func FoldQuotient(l, r *pg_query.Node) (Decimal, bool) {
	x, ok1 := fold(l, 0)
	y, ok2 := fold(r, 0)
	if !ok1 || !ok2 || !x.numeric && !y.numeric {
		return Decimal{}, false
	}
	return Quotient(x.d, y.d)
}

// Fold returns PostgreSQL's value of n when n is a constant fold
// evaluates (see FoldQuotient), integer or numeric.
func Fold(n *pg_query.Node) (Decimal, bool) {
	v, ok := fold(n, 0)
	return v.d, ok
}

// Equal reports whether x and y are the same number, whatever their
// scales (1.50 = 1.5), as PostgreSQL's = compares them.
func Equal(x, y Decimal) bool {
	scale := max(x.Scale, y.Scale)
	vx := new(big.Int).Mul(x.signed(), pow10(scale-x.Scale))
	vy := new(big.Int).Mul(y.signed(), pow10(scale-y.Scale))
	return vx.Cmp(vy) == 0
}

// maxFoldDepth bounds the recursion over a constant expression.
const maxFoldDepth = 64

func fold(n *pg_query.Node, depth int) (value, bool) {
	if n == nil || depth > maxFoldDepth {
		return value{}, false
	}
	switch {
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.Isnull:
		case c.GetIval() != nil:
			return intValue(int64(c.GetIval().Ival)), true
		case c.GetFval() != nil:
			// Without a point it is an integer beyond int4 (int8 or
			// numeric), with an exponent a numeric of another scale.
			f := c.GetFval().Fval
			if strings.Contains(f, ".") {
				d, ok := Parse(f)
				return value{d: d, numeric: true}, ok
			}
		case n.GetAConst().Val == nil:
			return intValue(0), true // an integer constant 0
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, mods, _, ok := schema.TypeOf(tc.TypeName)
		if !ok || len(mods) > 0 {
			return value{}, false
		}
		v, ok := fold(tc.Arg, depth+1)
		switch {
		case !ok:
		case t == "numeric":
			v.numeric = true
			return v, true
		case t == "int4" && !v.numeric:
			return v, true
		}
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return value{}, false
		}
		op := schema.OpName(e.Name)
		if e.Lexpr == nil {
			v, ok := fold(e.Rexpr, depth+1)
			switch {
			case !ok:
			case op == "+":
				return v, true
			case op == "-":
				v.d.Neg = !v.d.Neg && v.d.Digits.Sign() != 0
				return v, v.numeric || fitsInt4(v.d) // - (-2147483648) overflows
			}
			return value{}, false
		}
		x, ok1 := fold(e.Lexpr, depth+1)
		y, ok2 := fold(e.Rexpr, depth+1)
		if !ok1 || !ok2 {
			return value{}, false
		}
		return arith(op, x, y)
	}
	return value{}, false
}

// arith is x op y as PostgreSQL computes it.
func arith(op string, x, y value) (value, bool) {
	numeric := x.numeric || y.numeric
	var d Decimal
	switch op {
	case "+", "-":
		scale := max(x.d.Scale, y.d.Scale)
		vx := new(big.Int).Mul(x.d.signed(), pow10(scale-x.d.Scale))
		vy := new(big.Int).Mul(y.d.signed(), pow10(scale-y.d.Scale))
		if op == "+" {
			d = fromSigned(vx.Add(vx, vy), scale)
		} else {
			d = fromSigned(vx.Sub(vx, vy), scale)
		}
	case "*":
		d = fromSigned(new(big.Int).Mul(x.d.signed(), y.d.signed()), x.d.Scale+y.d.Scale)
	case "/":
		if numeric {
			q, ok := Quotient(x.d, y.d)
			return value{d: q, numeric: true}, ok
		}
		if y.d.Digits.Sign() == 0 {
			return value{}, false
		}
		d = fromSigned(new(big.Int).Quo(x.d.signed(), y.d.signed()), 0) // truncates toward zero
	default:
		return value{}, false
	}
	if d.Digits.BitLen() > maxDigits*4 || !numeric && !fitsInt4(d) {
		return value{}, false
	}
	return value{d: d, numeric: numeric}, true
}

func intValue(v int64) value {
	return value{d: fromSigned(big.NewInt(v), 0)}
}

// fitsInt4 reports whether d, an integer, is in int4's range.
func fitsInt4(d Decimal) bool {
	v := d.signed()
	return v.IsInt64() && v.Int64() >= math.MinInt32 && v.Int64() <= math.MaxInt32
}

// signed is d's digits with its sign.
func (d Decimal) signed() *big.Int {
	v := new(big.Int).Set(d.Digits)
	if d.Neg {
		v.Neg(v)
	}
	return v
}

// fromSigned is the decimal v * 10^-scale.
func fromSigned(v *big.Int, scale int) Decimal {
	return Decimal{Neg: v.Sign() < 0, Digits: new(big.Int).Abs(v), Scale: scale}
}

// Significant is the number of significant digits of d (0 for zero),
// trailing zeros not counted: what a double must hold to keep d exactly.
func (d Decimal) Significant() int {
	if d.Digits.Sign() == 0 {
		return 0
	}
	return len(strings.TrimRight(d.Digits.String(), "0"))
}
