package sqlite

import (
	"math"
	"strconv"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// MathCheckFunction is shepherd_math_check(name, result, x [, y]): the
// result of SQLite's math function name (sqrt, ln, log, log10, exp,
// power) of x (and y), or PostgreSQL's error where PostgreSQL's double
// precision function fails. SQLite answers NULL (a NaN) or an infinity
// there: sqrt(-1) and ln(0) are NULL, power(0, -1) and exp(1000)
// Infinity. The SQL writer wraps each such call in it (the operands
// written twice), so the engine's own digits are kept.
const MathCheckFunction = "shepherd_math_check"

// mathCheck is MathCheckFunction over SQLite's values.
func mathCheck(args []any) (any, error) {
	if len(args) < 3 {
		return nil, pgFunctionError("42883", "%s needs a name, a result and operands", MathCheckFunction)
	}
	name, _ := args[0].(string)
	if b, ok := args[0].([]byte); ok {
		name = string(b)
	}
	ops := make([]float64, len(args)-2)
	for i, v := range args[2:] {
		_, f, _, ok := numericValue(v)
		if !ok {
			return args[1], nil // NULL in, NULL out (or not a number: SQLite's own answer)
		}
		ops[i] = f
	}
	if err := pgMathError(name, args[1], ops); err != nil {
		return nil, err
	}
	return args[1], nil
}

// pgMathError is the error PostgreSQL's float8 function name fails with
// for the operands ops and the engine's result, nil when it answers
// (as dsqrt, dlog1, dlog10, dexp and dpow of PostgreSQL 15 check).
func pgMathError(name string, result any, ops []float64) error {
	r, isFloat := result.(float64)
	finite := func(fs ...float64) bool {
		for _, f := range fs {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return false
			}
		}
		return true
	}
	overflow := func() error { return pgFunctionError("22003", "value out of range: overflow") }
	underflow := func() error { return pgFunctionError("22003", "value out of range: underflow") }
	x := ops[0]
	switch name {
	case "sqrt":
		if x < 0 {
			return pgFunctionError("2201F", "cannot take square root of a negative number")
		}
	case "ln", "log", "log10":
		if x == 0 {
			return pgFunctionError("2201E", "cannot take logarithm of zero")
		}
		if x < 0 {
			return pgFunctionError("2201E", "cannot take logarithm of a negative number")
		}
	case "exp":
		switch {
		case !finite(x) || !isFloat:
		case math.IsInf(r, 0):
			return overflow()
		case r == 0:
			return underflow()
		}
	case "power", "pow":
		if len(ops) != 2 {
			return nil
		}
		y := ops[1]
		if x == 0 && y < 0 {
			return pgFunctionError("2201F", "zero raised to a negative power is undefined")
		}
		if x < 0 && math.Floor(y) != y {
			return pgFunctionError("2201F", "a negative number raised to a non-integer power yields a complex result")
		}
		switch {
		case !finite(x, y) || !isFloat:
		case math.IsInf(r, 0):
			return overflow()
		case r == 0 && x != 0:
			return underflow()
		}
	}
	return nil
}

// TextOfFunction is shepherd_text_of(x, type): PostgreSQL's text of x,
// a value of type float8, float4 or timestamptz, where SQLite's CAST
// prints otherwise: a float8 2 is 2.0 to SQLite and 2 to PostgreSQL, a
// timestamptz lacks its offset (+00) in SQLite's stored text.
const TextOfFunction = "shepherd_text_of"

// textOf is TextOfFunction over SQLite's values.
func textOf(v, typ any) (any, error) {
	t, _ := typ.(string)
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		s = x
	case []byte:
		s = string(x)
	}
	switch t {
	case "float8", "float4":
		bits := 64
		if t == "float4" {
			bits = 32
		}
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			g, err := strconv.ParseFloat(s, 64)
			if err != nil && !errorsIsRange(err) {
				return s, nil // Infinity and NaN are kept as text, as PostgreSQL spells them
			}
			f = g
		}
		if bits == 32 {
			f = float64(float32(f))
		}
		return answer.FormatFloat(f, bits), nil
	case "timestamptz":
		if pg, ok := answer.PGText(answer.TimestampTZ, s); ok {
			return pg, nil
		}
		return s, nil
	}
	return nil, pgFunctionError("42883", "%s of type %q", TextOfFunction, t)
}
