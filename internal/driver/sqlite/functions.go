package sqlite

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DivisorFunction is the SQL function the SQL writer wraps a divisor in
// for SQLite: PostgreSQL fails a division by zero with 22012 where
// SQLite returns NULL, and a replica that quietly returns NULL would be
// outvoted as faulty or, worse, outvote the others. It returns its
// argument, or fails when that is zero.
const DivisorFunction = "shepherd_divisor"

// errDivisionByZero is the error DivisorFunction fails with; its text is
// what classify maps to 22012.
var errDivisionByZero = errors.New("division by zero")

// divisor implements DivisorFunction over the values either library
// hands a function.
func divisor(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		if x == 0 {
			return nil, errDivisionByZero
		}
	case float64:
		if x == 0 {
			return nil, errDivisionByZero
		}
	case nil:
	case []byte, string:
		// Text in arithmetic is read as a number by SQLite; do the same.
		var f float64
		if _, err := fmt.Sscan(fmt.Sprint(x), &f); err == nil && f == 0 {
			return nil, errDivisionByZero
		}
	}
	return v, nil
}

// DivisorIfFunction is DivisorFunction with a second argument: the
// divisor is checked only when that is true. The SQL writer passes
// "dividend IS NOT NULL", as PostgreSQL's division is strict: NULL / 0 is
// NULL, not an error.
const DivisorIfFunction = "shepherd_divisor_if"

// divisorIf implements DivisorIfFunction.
func divisorIf(v, check any) (any, error) {
	if c, ok := check.(int64); ok && c == 0 {
		return v, nil
	}
	if check == nil {
		return v, nil
	}
	return divisor(v)
}

// DivideFunction is SQLite's division a / b, but for a zero divisor,
// which fails when a is not NULL. The SQL writer calls it where the
// dividend may be NULL and cannot be written twice (for DivisorIfFunction)
// without the statement's text growing too fast: PostgreSQL's division is
// strict, so NULL / 0 is NULL, which a divisor check alone fails.
const DivideFunction = "shepherd_divide"

// divide implements DivideFunction as SQLite's division computes: two
// integers divide as integers (but the one quotient out of range, which
// is a float), anything else as floats, text read as the number it
// starts with.
func divide(a, b any) (any, error) {
	if a == nil || b == nil {
		return nil, nil
	}
	a, b = sqliteNumber(a), sqliteNumber(b)
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	if aInt && bInt {
		if bi == 0 {
			return nil, errDivisionByZero
		}
		if ai != math.MinInt64 || bi != -1 {
			return ai / bi, nil
		}
	}
	af, bf := asFloat(a), asFloat(b)
	if bf == 0 {
		return nil, errDivisionByZero
	}
	q := af / bf
	if math.IsNaN(q) {
		return nil, nil
	}
	return q, nil
}

// sqliteNumber is v as SQLite reads an operand of arithmetic: an integer
// or a float (text as the number it spells, else 0).
func sqliteNumber(v any) any {
	switch x := v.(type) {
	case int64, float64:
		return x
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case []byte:
		return sqliteNumber(string(x))
	case string:
		t := strings.TrimSpace(x)
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f
		}
	}
	return int64(0)
}

// asFloat is an integer or float as a float.
func asFloat(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	f, _ := v.(float64)
	return f
}

// Int4Function is the SQL function the SQL writer wraps integer
// arithmetic in for SQLite where PostgreSQL computes in 32 bits: there
// 2147483647 + 1 fails with 22003, where SQLite computes in 64.
const Int4Function = "shepherd_int4"

// errInt4Range is the error Int4Function fails with; classify maps it to
// 22003.
var errInt4Range = errors.New("integer out of range")

// int4 implements Int4Function.
func int4(v any) (any, error) {
	if x, ok := v.(int64); ok && (x < -1<<31 || x > 1<<31-1) {
		return nil, errInt4Range
	}
	return v, nil
}

// VarcharFunction is the SQL function the SQL writer wraps a value
// stored into a varchar(n) column in for SQLite, which ignores the
// length: shepherd_varchar(v, n) is v when it has at most n characters,
// v cut to n when only spaces are beyond them, and fails as PostgreSQL's
// assignment does otherwise (22001, "value too long for type character
// varying(n)"). NULL and values other than text pass as they are.
const VarcharFunction = "shepherd_varchar"

// errVarcharLength starts VarcharFunction's error; classify maps it to
// 22001.
const errVarcharLength = "value too long for type character varying("

// varchar implements VarcharFunction.
func varchar(v, n any) (any, error) {
	s, ok := v.(string)
	max, isInt := n.(int64)
	if !ok || !isInt || max < 0 || int64(utf8.RuneCountInString(s)) <= max {
		return v, nil
	}
	r := []rune(s)
	if strings.TrimRight(string(r[max:]), " ") != "" {
		return nil, fmt.Errorf("%s%d)", errVarcharLength, max)
	}
	return string(r[:max]), nil
}

// SingleFunction is the SQL function the SQL writer wraps the value of a
// scalar subquery in for SQLite, which answers the first row of a
// subquery that gives several: shepherd_single(v, n), with n the
// subquery's row count (count(*) OVER ()), is v, and fails as PostgreSQL
// does (21000) when n is more than 1.
const SingleFunction = "shepherd_single"

// errMoreThanOneRow is SingleFunction's error; classify maps it to 21000.
var errMoreThanOneRow = errors.New("more than one row returned by a subquery used as an expression")

// single implements SingleFunction.
func single(v, n any) (any, error) {
	if c, ok := n.(int64); ok && c > 1 {
		return nil, errMoreThanOneRow
	}
	return v, nil
}

// Int2Function is the SQL function the SQL writer wraps a value stored
// into a smallint column in for SQLite, which stores any 64-bit integer
// there: PostgreSQL fails one out of range with 22003.
const Int2Function = "shepherd_int2"

// errInt2Range is the error Int2Function fails with; classify maps it to
// 22003.
var errInt2Range = errors.New("smallint out of range")

// int2 implements Int2Function.
func int2(v any) (any, error) {
	if x, ok := v.(int64); ok && (x < -1<<15 || x > 1<<15-1) {
		return nil, errInt2Range
	}
	return v, nil
}

// Int8Function is the SQL function the SQL writer wraps a bigint result
// of negation or abs() in for SQLite, which makes an integer result
// beyond 64 bits a real (- x of -9223372036854775808 is
// 9.223372036854776e+18) where PostgreSQL fails with 22003. Integers,
// NULL and other values pass as they are.
const Int8Function = "shepherd_int8"

// errInt8Range is the error Int8Function fails with; classify maps it to
// 22003.
var errInt8Range = errors.New("bigint out of range")

// bigint implements Int8Function.
func bigint(v any) (any, error) {
	if _, ok := v.(float64); ok {
		return nil, errInt8Range
	}
	return v, nil
}

// MD5Function is md5() for SQLite, which has none: the lowercase hex MD5
// of a text's UTF-8 bytes (or a blob's bytes), as PostgreSQL's md5() and
// MariaDB's MD5() return it, so that compare-and-repair can hash rows
// inside every engine alike. NULL gives NULL.
const MD5Function = "shepherd_md5"

// md5Hex implements MD5Function.
func md5Hex(v any) (any, error) {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		b = []byte(fmt.Sprint(x))
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:]), nil
}

// HexIntFunction reads up to 15 hex digits as an integer (SQLite cannot):
// compare-and-repair sums slices of row hashes, as PostgreSQL does with
// bit(32)::bigint and MariaDB with CONV. NULL gives NULL.
const HexIntFunction = "shepherd_hexint"

// hexInt implements HexIntFunction.
func hexInt(v any) (any, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return nil, fmt.Errorf("%s: not text: %v", HexIntFunction, v)
	}
	if len(s) > 15 {
		return nil, fmt.Errorf("%s: more than 15 digits: %q", HexIntFunction, s)
	}
	n, err := strconv.ParseInt(s, 16, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", HexIntFunction, err)
	}
	return n, nil
}

// NumericFunction is shepherd_numeric(x, p, s): x as PostgreSQL stores it
// in a numeric(p,s) column, which the SQL writer wraps every value stored
// into such a column in, and every cast to such a type. SQLite keeps the
// value as it comes (a float of all its digits); PostgreSQL and MariaDB
// round it to s places. The value is taken exactly — text and integers
// as they are, a float with 15 significant digits as PostgreSQL converts
// a double to numeric, which also gives back the decimal that float
// arithmetic on numeric values approximated — and rounded half away from
// zero; a result of p digits or more before the scale fails as
// PostgreSQL fails, "numeric field overflow" (22003). The result is an
// integer for scale 0, else the double nearest the rounded decimal.
const NumericFunction = "shepherd_numeric"

// errNumericOverflow is the error NumericFunction fails with when the
// rounded value has too many digits; classify maps it to 22003.
var errNumericOverflow = errors.New("numeric field overflow")

// errNumericSyntax is the error NumericFunction fails with when given
// text that is not a number; classify maps it to 22P02.
var errNumericSyntax = errors.New("invalid input syntax for type numeric")

// numericText is what PostgreSQL reads as a finite numeric.
var numericText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// numeric implements NumericFunction.
func numeric(v, precision, scale any) (any, error) {
	p, okP := precision.(int64)
	s, okS := scale.(int64)
	if !okP || !okS || p < 1 || p > 1000 || s < 0 || s > 1000 {
		return nil, fmt.Errorf("%s: bad precision or scale %v, %v", NumericFunction, precision, scale)
	}
	var r *big.Rat
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		r = new(big.Rat).SetInt64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errNumericOverflow
		}
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(x, 'e', 14, 64))
	case string, []byte:
		t := strings.TrimSpace(fmt.Sprintf("%s", x))
		if !numericText.MatchString(t) {
			return nil, fmt.Errorf("%w: %q", errNumericSyntax, t)
		}
		var ok bool
		if r, ok = new(big.Rat).SetString(t); !ok {
			return nil, fmt.Errorf("%w: %q", errNumericSyntax, t)
		}
	default:
		return nil, fmt.Errorf("%s: unexpected value %v", NumericFunction, v)
	}
	// q = |r| * 10^s rounded half up, then given r's sign back.
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(s), nil)
	scaled := new(big.Rat).Mul(new(big.Rat).Abs(r), new(big.Rat).SetInt(unit))
	scaled.Add(scaled, big.NewRat(1, 2))
	q := new(big.Int).Quo(scaled.Num(), scaled.Denom())
	if q.Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(p), nil)) >= 0 {
		// The field's size, for PostgreSQL's DETAIL (see overflowField).
		return nil, fmt.Errorf("%w: precision %d, scale %d", errNumericOverflow, p, s)
	}
	if r.Sign() < 0 {
		q.Neg(q)
	}
	if s == 0 && q.IsInt64() {
		return q.Int64(), nil
	}
	f, _ := new(big.Rat).SetFrac(q, unit).Float64()
	return f, nil
}

// SumFunction and SumInExprFunction are sum() of integers for SQLite,
// where PostgreSQL's sum(bigint) is an exact numeric and SQLite's SUM
// fails with "integer overflow" as soon as a partial sum leaves the
// 64-bit range (even when the total is back in it). Both add exactly and
// answer an integer when the total fits. Beyond it SumFunction answers
// the total's decimal digits as text, which only a result column can
// carry (the SQL writer uses it where nothing compares, sorts or
// computes with the value); SumInExprFunction fails there (0A000),
// since SQLite cannot compare or compute with such a value exactly.
const (
	SumFunction       = "shepherd_sum"
	SumInExprFunction = "shepherd_sum_expr"
)

// SumPartsFunction and SumPartsInExprFunction are sum() of bigints over a
// window on SQLite, which has no exact window sum (go-sqlite3 registers
// no window aggregates): the SQL writer sums the high and the low 32 bits
// of each value with SQLite's SUM over the window, which cannot overflow
// (below 2^31 rows), and these put the two sums together exactly:
// hi * 2^32 + lo, as an integer when it fits, beyond the 64-bit range as
// its digits in text (SumPartsFunction, for a result column) or failing
// with 0A000 (SumPartsInExprFunction), as SumFunction and
// SumInExprFunction do.
const (
	SumPartsFunction       = "shepherd_sum_parts"
	SumPartsInExprFunction = "shepherd_sum_parts_expr"
)

// sumParts is SumPartsFunction (text true) and SumPartsInExprFunction.
func sumParts(hi, lo any, text bool) (any, error) {
	if hi == nil || lo == nil {
		return nil, nil // no non-NULL value in the frame
	}
	h, ok1 := hi.(int64)
	l, ok2 := lo.(int64)
	if !ok1 || !ok2 {
		return nil, errSumOperand
	}
	total := new(big.Int).Lsh(big.NewInt(h), 32)
	total.Add(total, big.NewInt(l))
	switch {
	case total.IsInt64():
		return total.Int64(), nil
	case text:
		return total.String(), nil
	}
	return nil, errSumRange
}

// errSumRange is the error SumInExprFunction fails with; classify maps
// it to 0A000.
var errSumRange = errors.New("shepherd cannot use a sum() of bigint values beyond the 64-bit range in an expression, condition or sort key on SQLite replicas")

// errSumOperand is the error both fail with on a value that is not an
// integer (a bigint column holds none).
var errSumOperand = errors.New("shepherd_sum: operand is not an integer")

// intSum is the state of one SumFunction or SumInExprFunction.
type intSum struct {
	text  bool // SumFunction: text beyond the range
	any   bool
	small int64
	big   *big.Int // the total once a partial sum left the int64 range
}

func (s *intSum) step(v any) error {
	var x int64
	switch t := v.(type) {
	case nil:
		return nil
	case []byte:
		if t == nil {
			return nil // go-sqlite3 hands a NULL to an any parameter so
		}
		return errSumOperand
	case int64:
		x = t
	default:
		return errSumOperand
	}
	s.any = true
	if s.big != nil {
		s.big.Add(s.big, big.NewInt(x))
		return nil
	}
	sum := s.small + x
	if (x > 0 && sum < s.small) || (x < 0 && sum > s.small) {
		s.big = new(big.Int).Add(big.NewInt(s.small), big.NewInt(x))
		return nil
	}
	s.small = sum
	return nil
}

func (s *intSum) value() (any, error) {
	switch {
	case !s.any:
		return nil, nil
	case s.big == nil:
		return s.small, nil
	case s.big.IsInt64():
		return s.big.Int64(), nil
	case s.text:
		return s.big.String(), nil
	}
	return nil, errSumRange
}
