package sqlite

// Shared are the functions of this package that another engine's driver
// registers as well (package driver/duckdb: DuckDB replicas), so that a
// PostgreSQL function both engines lack is computed by one Go
// implementation: the engines then answer alike by construction, and a
// fix is made once. Each takes and returns values as SQLite hands them
// (text as string, integers as int64, booleans as 0 or 1, dates and
// timestamps as the text SQLite stores, timestamptz in UTC, NULL as
// nil); the other driver converts its own.
type Shared struct {
	// Name is the SQL name, as the SQL writers call it.
	Name string
	// Args is the number of arguments, -1 for any.
	Args int
	// Result is what the function returns: SharedText, SharedBool
	// (0 or 1), SharedInt or SharedFloat (an integer or a float).
	Result SharedResult
	Fn     func(args []any) (any, error)
}

// SharedResult is the kind of value a Shared function returns.
type SharedResult int

// The kinds of results.
const (
	SharedText SharedResult = iota
	SharedBool
	SharedInt
	SharedFloat
)

// SharedFunctions returns the functions shared with other drivers: the
// json operators' (JSONGetFunction and the rest), extract(), age() and
// to_char() of dates and timestamps (DatePartFunction, AgeFunction,
// ToCharFunction, EpochDiffFunction) and the string functions (StringFunctionPrefix + the
// names of StringFunctions).
func SharedFunctions() []Shared {
	out := []Shared{
		{JSONGetFunction, 3, SharedText, func(a []any) (any, error) { return jsonGet(a[0], a[1], a[2]) }},
		{JSONPathFunction, 3, SharedText, func(a []any) (any, error) { return jsonPath(a[0], a[1], a[2]) }},
		{JSONContainsFunction, 2, SharedBool, func(a []any) (any, error) { return jsonbContains(a[0], a[1]) }},
		{JSONExistsFunction, 2, SharedBool, func(a []any) (any, error) { return jsonbExists(a[0], a[1]) }},
		{JSONEqualFunction, 2, SharedBool, func(a []any) (any, error) { return jsonbEqual(a[0], a[1]) }},
		{JSONCompareFunction, 2, SharedInt, func(a []any) (any, error) { return jsonbCompare(a[0], a[1]) }},
		{DatePartFunction, 2, SharedFloat, func(a []any) (any, error) { return datePart(a[0], a[1]) }},
		{AgeFunction, 2, SharedText, func(a []any) (any, error) { return age(a[0], a[1]) }},
		{ToCharFunction, 2, SharedText, func(a []any) (any, error) { return toChar(a[0], a[1]) }},
		{EpochDiffFunction, 2, SharedFloat, func(a []any) (any, error) { return epochDiff(a[0], a[1]) }},
	}
	out = append(out, sharedMath...)
	for name, n := range StringFunctions {
		result := SharedText
		switch name {
		case "ascii", "regexp_count":
			result = SharedInt
		case "starts_with", "regexp_match":
			result = SharedBool
		}
		out = append(out, Shared{StringFunctionPrefix + name, n, result, stringFuncs[name]})
	}
	return out
}

// MathFunctionPrefix is the prefix of SQLite's math functions as shared
// (sqrt, exp, ln, log, log10, power): MathFunctionPrefix + the name.
const MathFunctionPrefix = "shepherd_math_"

// sharedMath are SQLite's math functions of one number or two, as the
// cgo build registers them (mathFunctions over the C library), filled in
// by that build: another engine computes them as SQLite does.
var sharedMath []Shared

// FunctionError reads the SQLSTATE and message of an error a shared
// function failed with back out of an engine's message, which holds the
// function's error text; ok is false when msg holds none.
func FunctionError(msg string) (code, message string, ok bool) {
	return pgFunctionErrorOf(msg)
}
