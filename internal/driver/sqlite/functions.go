package sqlite

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
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
