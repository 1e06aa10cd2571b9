package sqlite

// AvgCountFunction is the SQL function the SQL writer wraps count(x) in
// where it compares an integer with avg(x) of int2/int4 values as
// e * count(x) op sum(x) (see dialect's avgCompare): that is PostgreSQL's
// comparison with its rounded average below AvgCountLimit values. It
// returns its argument, and fails with 0A000 from the limit on.
const AvgCountFunction = "shepherd_avg_count"

// AvgCountLimit is the count from which AvgCountFunction fails.
const AvgCountLimit = 200000000

// Registered with the functions of datefuncs.go (see arrayfuncs.go).
func init() {
	pgFunctions = append(pgFunctions, struct {
		name string
		n    int
		fn1  func(a any) (any, error)
		fn2  func(a, b any) (any, error)
		fn3  func(a, b, c any) (any, error)
		fn4  func(a, b, c, d any) (any, error)
	}{name: AvgCountFunction, n: 1, fn1: avgCount})
}

// avgCount implements AvgCountFunction.
func avgCount(v any) (any, error) {
	if n, ok := v.(int64); !ok || n >= AvgCountLimit {
		return nil, pgFunctionError("0A000", "shepherd cannot compute avg() exactly over so many values on SQLite replicas (compared: fewer than %d; cast to an integer: fewer than %d)", AvgCountLimit, AvgCountLimit/2)
	}
	return v, nil
}
