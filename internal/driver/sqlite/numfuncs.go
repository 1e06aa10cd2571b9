package sqlite

import (
	"fmt"
	"math"
)

// RoundEvenFunction is round() of a double precision for SQLite:
// PostgreSQL rounds a float8 to the nearest integer, halves to even (C's
// rint), where SQLite's ROUND takes halves away from zero. NULL gives
// NULL; an integer is returned as it is (PostgreSQL casts it to float8,
// which the column's type tells clients).
const RoundEvenFunction = "shepherd_round_even"

// roundEven implements RoundEvenFunction.
func roundEven(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64:
		return v, nil
	case float64:
		return math.RoundToEven(x), nil
	}
	return nil, fmt.Errorf("%s: not a number: %v", RoundEvenFunction, v)
}
