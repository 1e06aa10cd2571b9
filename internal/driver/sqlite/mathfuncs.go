package sqlite

import (
	"math"
	"strconv"
	"strings"
)

// mathFunction is one of SQLite's math functions (SQLITE_ENABLE_MATH_
// FUNCTIONS), written in Go as SQLite's C source (func.c) computes it.
type mathFunction struct {
	name string
	n    int // arguments
	fn1  func(any) any
	fn2  func(any, any) any
	fn0  func() any
}

// libm is the C math library's functions the math functions use.
type libm struct {
	ceil, floor, trunc, log, log10, log2, exp, sqrt func(float64) float64
	pow, fmod                                       func(float64, float64) float64
}

// mathFunctions are registered in the cgo build, which go-sqlite3
// compiles without SQLite's math functions unless built with its
// sqlite_math_functions tag: the dialect writes them (ceil, floor,
// trunc, ln, log10, power, sqrt, exp, pi, mod), and without them the cgo
// replica of the embedded default failed every such statement (42883)
// and lost the vote. The pure Go build compiles SQLite with them; both
// builds must answer alike, so these follow SQLite's code (func.c) over
// the C library's functions m, as SQLite calls them: a NULL, blob or
// non-numeric text argument gives NULL, an integer ceil/floor/trunc
// stays an integer, a NaN result is NULL (as sqlite3_result_double
// makes it). The trigonometric ones are left out: the dialect does not
// write them, and the C libraries' last digits differ.
func mathFunctions(m libm) []mathFunction {
	return []mathFunction{
		{name: "ceil", n: 1, fn1: rounding(m.ceil)},
		{name: "ceiling", n: 1, fn1: rounding(m.ceil)},
		{name: "floor", n: 1, fn1: rounding(m.floor)},
		{name: "trunc", n: 1, fn1: rounding(m.trunc)},
		{name: "ln", n: 1, fn1: logOf(m.log)},
		{name: "log", n: 1, fn1: logOf(m.log10)},
		{name: "log10", n: 1, fn1: logOf(m.log10)},
		{name: "log2", n: 1, fn1: logOf(m.log2)},
		{name: "log", n: 2, fn2: func(b, x any) any { return logBase(m.log, b, x) }},
		{name: "exp", n: 1, fn1: math1(m.exp)},
		{name: "pow", n: 2, fn2: math2(m.pow)},
		{name: "power", n: 2, fn2: math2(m.pow)},
		{name: "mod", n: 2, fn2: math2(m.fmod)},
		{name: "sqrt", n: 1, fn1: math1(m.sqrt)},
		{name: "pi", n: 0, fn0: func() any { return math.Pi }},
	}
}

// double is a float result as SQLite gives it: NaN is NULL.
func double(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return f
}

// numericValue reads v as sqlite3_value_numeric_type does: an integer or
// a real as it is, text that reads as a number (spaces around it
// allowed) as that number; anything else is not numeric (ok false).
func numericValue(v any) (i int64, f float64, isInt, ok bool) {
	switch x := v.(type) {
	case int64:
		return x, float64(x), true, true
	case float64:
		return 0, x, false, true
	case string:
		s := strings.Trim(x, " \t\n\f\r")
		if s == "" || strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789+-.eE", r) }) >= 0 {
			return 0, 0, false, false
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, float64(n), true, true
		}
		if g, err := strconv.ParseFloat(s, 64); err == nil || errorsIsRange(err) {
			return 0, g, false, true
		}
	}
	return 0, 0, false, false
}

// errorsIsRange reports a ParseFloat error for a value out of range,
// which SQLite reads as an infinity (ParseFloat returns it too).
func errorsIsRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// valueDouble reads v as sqlite3_value_double does: NULL is 0, text and
// blobs their longest numeric prefix.
func valueDouble(v any) float64 {
	var s string
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return 0
	}
	s = strings.TrimLeft(s, " \t\n\f\r")
	for end := len(s); end > 0; end-- {
		if strings.ContainsRune("0123456789.", rune(s[end-1])) {
			if g, err := strconv.ParseFloat(s[:end], 64); err == nil || errorsIsRange(err) {
				if strings.IndexFunc(s[:end], func(r rune) bool { return !strings.ContainsRune("0123456789+-.eE", r) }) < 0 {
					return g
				}
			}
		}
	}
	return 0
}

// rounding is SQLite's ceilingFunc: an integer as it is, a real through
// f, anything else NULL.
func rounding(f func(float64) float64) func(any) any {
	return func(v any) any {
		i, x, isInt, ok := numericValue(v)
		switch {
		case !ok:
			return nil
		case isInt:
			return i
		}
		return double(f(x))
	}
}

// math1 is SQLite's math1Func.
func math1(f func(float64) float64) func(any) any {
	return func(v any) any {
		_, x, _, ok := numericValue(v)
		if !ok {
			return nil
		}
		return double(f(x))
	}
}

// math2 is SQLite's math2Func.
func math2(f func(float64, float64) float64) func(any, any) any {
	return func(a, b any) any {
		_, x, _, ok := numericValue(a)
		if !ok {
			return nil
		}
		_, y, _, ok := numericValue(b)
		if !ok {
			return nil
		}
		return double(f(x, y))
	}
}

// logOf is SQLite's logFunc of one argument: NULL for x <= 0.
func logOf(f func(float64) float64) func(any) any {
	return func(v any) any {
		_, x, _, ok := numericValue(v)
		if !ok || x <= 0 {
			return nil
		}
		return double(f(x))
	}
}

// logBase is SQLite's log(B, X): NULL unless B > 1 and X > 0. SQLite
// checks the type of B twice and reads X as a double whatever it is.
func logBase(log func(float64) float64, bv, xv any) any {
	_, b, _, ok := numericValue(bv)
	if !ok || b <= 0 {
		return nil
	}
	lb := log(b)
	if lb <= 0 {
		return nil
	}
	x := valueDouble(xv)
	if x <= 0 {
		return nil
	}
	return double(log(x) / lb)
}
