package sqlite

import (
	"errors"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// PostgreSQL's array operators and functions for SQLite, which keeps an
// array as PostgreSQL's output text of it (dialect/arrays.go): the
// writer calls them with that text, and, for an element, its text as
// the array holds it (integers in decimal, booleans as t or f).
//
//	ArrayAnyFunction(a, x)          x = ANY (a)
//	ArrayLengthFunction(a, d)       array_length(a, d); d 0: cardinality(a)
//	ArrayContainsFunction(a, b)     a @> b
//	ArrayOverlapFunction(a, b)      a && b
//	ArrayToStringFunction(a, sep)   array_to_string(a, sep)
//	StringToArrayFunction(s, sep)   string_to_array(s, sep)
//	ArrayQuoteFunction(x)           x as an element of array_out's text
//	ArrayGetFunction(a, i)          a[i]'s text
//	ArrayKeyFunction(a, kind)       a's sort key (answer.ArraySortKey)
//	ArrayUnkeyFunction(k, kind)     the array of sort key k
const (
	ArrayAnyFunction      = "shepherd_array_any"
	ArrayLengthFunction   = "shepherd_array_length"
	ArrayContainsFunction = "shepherd_array_contains"
	ArrayOverlapFunction  = "shepherd_array_overlap"
	ArrayToStringFunction = "shepherd_array_to_string"
	StringToArrayFunction = "shepherd_string_to_array"
	ArrayQuoteFunction    = "shepherd_array_quote"
	ArrayGetFunction      = "shepherd_array_get"
	ArrayKeyFunction      = "shepherd_array_key"
	ArrayUnkeyFunction    = "shepherd_array_unkey"
)

// Registered with the functions of datefuncs.go: this file's init runs
// before those of cgo.go and modernc.go, which register pgFunctions
// (a package's files are initialised in the order of their names).
func init() {
	pgFunctions = append(pgFunctions, []struct {
		name string
		n    int
		fn1  func(a any) (any, error)
		fn2  func(a, b any) (any, error)
		fn3  func(a, b, c any) (any, error)
		fn4  func(a, b, c, d any) (any, error)
	}{
		{name: ArrayAnyFunction, n: 2, fn2: arrayAny},
		{name: ArrayLengthFunction, n: 2, fn2: arrayLength},
		{name: ArrayContainsFunction, n: 2, fn2: arrayContains},
		{name: ArrayOverlapFunction, n: 2, fn2: arrayOverlap},
		{name: ArrayToStringFunction, n: 2, fn2: arrayToString},
		{name: StringToArrayFunction, n: 2, fn2: stringToArray},
		{name: ArrayQuoteFunction, n: 1, fn1: arrayQuote},
		{name: ArrayGetFunction, n: 2, fn2: arrayGet},
		{name: ArrayKeyFunction, n: 2, fn2: arrayKey},
		{name: ArrayUnkeyFunction, n: 2, fn2: arrayUnkey},
	}...)
}

// errArrayText is an array value that is not the canonical text
// shepherd writes (a bug, or a value written behind shepherd's back).
var errArrayText = errors.New("shepherd: malformed array value")

func arrayArg(v any) ([]*string, bool, error) {
	s, ok := argText(v)
	if !ok {
		return nil, false, nil
	}
	items, err := answer.ParseArray(s)
	if err != nil {
		return nil, false, errArrayText
	}
	return items, true, nil
}

// arrayAny is PostgreSQL's x = ANY (a): NULL for a NULL a, false for an
// empty a whatever x, NULL for a NULL x; true when some element equals
// x, NULL when none does and some is NULL.
func arrayAny(a, x any) (any, error) {
	items, ok, err := arrayArg(a)
	if err != nil || !ok {
		return nil, err
	}
	if len(items) == 0 {
		return int64(0), nil
	}
	xs, xok := argText(x)
	if !xok {
		return nil, nil
	}
	null := false
	for _, it := range items {
		switch {
		case it == nil:
			null = true
		case *it == xs:
			return int64(1), nil
		}
	}
	if null {
		return nil, nil
	}
	return int64(0), nil
}

// arrayLength is array_length(a, d) (NULL for an empty array or another
// dimension than 1) and, for d 0, cardinality(a).
func arrayLength(a, d any) (any, error) {
	items, ok, err := arrayArg(a)
	if err != nil || !ok || d == nil {
		return nil, err
	}
	dim, _ := d.(int64)
	switch {
	case dim == 0:
		return int64(len(items)), nil
	case dim != 1 || len(items) == 0:
		return nil, nil
	}
	return int64(len(items)), nil
}

// arrayContains is a @> b: every element of b equals one of a; a NULL
// element equals nothing.
func arrayContains(a, b any) (any, error) {
	x, ok1, err1 := arrayArg(a)
	y, ok2, err2 := arrayArg(b)
	if err := errors.Join(err1, err2); err != nil || !ok1 || !ok2 {
		return nil, err
	}
	have := map[string]bool{}
	for _, it := range x {
		if it != nil {
			have[*it] = true
		}
	}
	for _, it := range y {
		if it == nil || !have[*it] {
			return int64(0), nil
		}
	}
	return int64(1), nil
}

// arrayOverlap is a && b: some non-NULL element is in both.
func arrayOverlap(a, b any) (any, error) {
	x, ok1, err1 := arrayArg(a)
	y, ok2, err2 := arrayArg(b)
	if err := errors.Join(err1, err2); err != nil || !ok1 || !ok2 {
		return nil, err
	}
	have := map[string]bool{}
	for _, it := range x {
		if it != nil {
			have[*it] = true
		}
	}
	for _, it := range y {
		if it != nil && have[*it] {
			return int64(1), nil
		}
	}
	return int64(0), nil
}

// arrayToString is array_to_string(a, sep): the non-NULL elements'
// text joined by sep.
func arrayToString(a, sep any) (any, error) {
	items, ok, err := arrayArg(a)
	s, sok := argText(sep)
	if err != nil || !ok || !sok {
		return nil, err
	}
	var parts []string
	for _, it := range items {
		if it != nil {
			parts = append(parts, *it)
		}
	}
	return strings.Join(parts, s), nil
}

// stringToArray is string_to_array(s, sep): s split at each sep ("" for
// sep: s alone; NULL: each character), an empty s an empty array.
func stringToArray(v, sep any) (any, error) {
	s, ok := argText(v)
	if !ok {
		return nil, nil
	}
	if s == "" {
		return "{}", nil
	}
	var parts []string
	switch d, dok := argText(sep); {
	case !dok:
		for _, r := range s {
			parts = append(parts, string(r))
		}
	case d == "":
		parts = []string{s}
	default:
		parts = strings.Split(s, d)
	}
	items := make([]*string, len(parts))
	for i := range parts {
		items[i] = &parts[i]
	}
	return answer.FormatArray(items), nil
}

// arrayQuote is x as array_out writes an element (array_agg's items).
func arrayQuote(x any) (any, error) {
	s, ok := argText(x)
	if !ok {
		return nil, nil
	}
	return answer.QuoteArrayElement(s), nil
}

// arrayGet is a[i]: element i counted from 1 (an array's lower bound is
// 1), NULL for a NULL element, a NULL a or i, or an i outside a.
func arrayGet(a, i any) (any, error) {
	items, ok, err := arrayArg(a)
	n, iok := i.(int64)
	if s, isText := i.(string); isText {
		// A parameter bound as text.
		v, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		n, iok = v, perr == nil
	}
	if err != nil || !ok || !iok || n < 1 || n > int64(len(items)) || items[n-1] == nil {
		return nil, err
	}
	return *items[n-1], nil
}

// arrayKey is a's sort key for elements of kind (answer.ArraySortKey):
// a BLOB that SQLite compares as PostgreSQL orders the arrays.
func arrayKey(a, kind any) (any, error) {
	items, ok, err := arrayArg(a)
	k, kok := argText(kind)
	if err != nil || !ok || !kok {
		return nil, err
	}
	return answer.ArraySortKey(items, k)
}

// arrayUnkey is the canonical text of the array whose sort key is k
// (max() and min() of arrays).
func arrayUnkey(k, kind any) (any, error) {
	key, ok := k.([]byte)
	kd, kok := argText(kind)
	if !ok || !kok {
		return nil, nil
	}
	return answer.ArrayFromSortKey(key, kd)
}
