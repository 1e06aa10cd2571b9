package duckdb

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
)

// A DuckDB replica keeps an array as the SQLite replicas do: PostgreSQL's
// output text of it, in a VARCHAR column (see dialect/duckdb_arrays.go).
// The functions below compute PostgreSQL's array operators and functions
// from that text, as SQLite's driver does (driver/sqlite/arrayfuncs.go),
// registered on every session under the names the dialect writes:
//
//	DuckArrayAny(a, x)          x = ANY (a), x as the element's text
//	DuckArrayLength(a, d)       array_length(a, d); d 0: cardinality(a)
//	DuckArrayContains(a, b)     a @> b
//	DuckArrayOverlap(a, b)      a && b
//	DuckArrayToString(a, sep)   array_to_string(a, sep)
//	DuckStringToArray(s, sep)   string_to_array(s, sep)
//	DuckArrayQuote(x)           x as an element of array_out's text
//	DuckArrayGet(a, i)          a[i]'s text
//	DuckArrayKey(a, kind)       a's sort key (answer.ArraySortKey)
//	DuckArrayUnkey(k, kind)     the array of sort key k
type arrayFunc struct {
	name   string
	args   []duckdb.Type
	result duckdb.Type
	// nulls: the function sees NULL arguments (otherwise a NULL
	// argument gives NULL).
	nulls bool
	fn    func(args []sqldriver.Value) (any, error)
}

var arrayFuncs = []arrayFunc{
	{name: dialect.DuckArrayAny, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_BOOLEAN, nulls: true, fn: arrayAny},
	{name: dialect.DuckArrayLength, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_INTEGER}, result: duckdb.TYPE_INTEGER, fn: arrayLength},
	{name: dialect.DuckArrayContains, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_BOOLEAN, fn: arrayContains},
	{name: dialect.DuckArrayOverlap, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_BOOLEAN, fn: arrayOverlap},
	{name: dialect.DuckArrayToString, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_VARCHAR, fn: arrayToString},
	{name: dialect.DuckStringToArray, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_VARCHAR, nulls: true, fn: stringToArray},
	{name: dialect.DuckArrayQuote, args: []duckdb.Type{duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_VARCHAR, fn: arrayQuote},
	{name: dialect.DuckArrayGet, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_INTEGER}, result: duckdb.TYPE_VARCHAR, fn: arrayGet},
	{name: dialect.DuckArrayKey, args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_BLOB, fn: arrayKey},
	{name: dialect.DuckArrayUnkey, args: []duckdb.Type{duckdb.TYPE_BLOB, duckdb.TYPE_VARCHAR}, result: duckdb.TYPE_VARCHAR, fn: arrayUnkey},
}

// udf is an arrayFunc as duckdb-go's ScalarFunc.
type udf struct {
	config duckdb.ScalarFuncConfig
	fn     func(args []sqldriver.Value) (any, error)
}

func (u *udf) Config() duckdb.ScalarFuncConfig { return u.config }
func (u *udf) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: u.fn}
}

// registerArrayFuncs registers arrayFuncs on session sc.
func registerArrayFuncs(_ context.Context, sc *sql.Conn) error {
	for _, f := range arrayFuncs {
		u := &udf{fn: f.fn}
		for _, t := range f.args {
			info, err := duckdb.NewTypeInfo(t)
			if err != nil {
				return err
			}
			u.config.InputTypeInfos = append(u.config.InputTypeInfos, info)
		}
		info, err := duckdb.NewTypeInfo(f.result)
		if err != nil {
			return err
		}
		u.config.ResultTypeInfo = info
		u.config.SpecialNullHandling = f.nulls
		if err := duckdb.RegisterScalarUDF(sc, f.name, u); err != nil {
			return err
		}
	}
	return nil
}

// errArrayText is an array value that is not the canonical text
// shepherd writes (a bug, or a value written behind shepherd's back).
var errArrayText = errors.New("shepherd: malformed array value")

// arrayArg reads an array's canonical text; ok is false for NULL.
func arrayArg(v sqldriver.Value) (items []*string, ok bool, err error) {
	s, ok := v.(string)
	if !ok {
		return nil, false, nil
	}
	items, err = answer.ParseArray(s)
	if err != nil {
		return nil, false, errArrayText
	}
	return items, true, nil
}

// arrayAny is PostgreSQL's x = ANY (a): NULL for a NULL a; false for an
// empty a (whatever x); NULL for a NULL x; true when some element
// equals x; else NULL when some element is NULL, and false.
func arrayAny(args []sqldriver.Value) (any, error) {
	items, ok, err := arrayArg(args[0])
	if err != nil || !ok {
		return nil, err
	}
	if len(items) == 0 {
		return false, nil
	}
	x, ok := args[1].(string)
	if !ok {
		return nil, nil
	}
	null := false
	for _, it := range items {
		switch {
		case it == nil:
			null = true
		case *it == x:
			return true, nil
		}
	}
	if null {
		return nil, nil
	}
	return false, nil
}

// arrayLength is array_length(a, d) (NULL for an empty array or another
// dimension than 1) and, for d 0, cardinality(a).
func arrayLength(args []sqldriver.Value) (any, error) {
	items, ok, err := arrayArg(args[0])
	if err != nil || !ok {
		return nil, err
	}
	d, _ := args[1].(int32)
	switch {
	case d == 0:
		return int32(len(items)), nil
	case d != 1 || len(items) == 0:
		return nil, nil
	}
	return int32(len(items)), nil
}

// elements are the non-NULL elements of an array.
func elements(items []*string) map[string]bool {
	have := map[string]bool{}
	for _, it := range items {
		if it != nil {
			have[*it] = true
		}
	}
	return have
}

// arrayContains is a @> b: every element of b equals one of a; a NULL
// element equals nothing.
func arrayContains(args []sqldriver.Value) (any, error) {
	x, ok1, err1 := arrayArg(args[0])
	y, ok2, err2 := arrayArg(args[1])
	if err := errors.Join(err1, err2); err != nil || !ok1 || !ok2 {
		return nil, err
	}
	have := elements(x)
	for _, it := range y {
		if it == nil || !have[*it] {
			return false, nil
		}
	}
	return true, nil
}

// arrayOverlap is a && b: some non-NULL element is in both.
func arrayOverlap(args []sqldriver.Value) (any, error) {
	x, ok1, err1 := arrayArg(args[0])
	y, ok2, err2 := arrayArg(args[1])
	if err := errors.Join(err1, err2); err != nil || !ok1 || !ok2 {
		return nil, err
	}
	have := elements(x)
	for _, it := range y {
		if it != nil && have[*it] {
			return true, nil
		}
	}
	return false, nil
}

// arrayToString is array_to_string(a, sep): the non-NULL elements'
// text joined by sep.
func arrayToString(args []sqldriver.Value) (any, error) {
	items, ok, err := arrayArg(args[0])
	sep, sok := args[1].(string)
	if err != nil || !ok || !sok {
		return nil, err
	}
	var parts []string
	for _, it := range items {
		if it != nil {
			parts = append(parts, *it)
		}
	}
	return strings.Join(parts, sep), nil
}

// stringToArray is string_to_array(s, sep): s split at each sep ("" for
// sep: s alone; NULL: each character), an empty s an empty array.
func stringToArray(args []sqldriver.Value) (any, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, nil
	}
	if s == "" {
		return "{}", nil
	}
	var parts []string
	switch sep, sok := args[1].(string); {
	case !sok:
		for _, r := range s {
			parts = append(parts, string(r))
		}
	case sep == "":
		parts = []string{s}
	default:
		parts = strings.Split(s, sep)
	}
	items := make([]*string, len(parts))
	for i := range parts {
		items[i] = &parts[i]
	}
	return answer.FormatArray(items), nil
}

// arrayQuote is x as array_out writes an element (array_agg's items).
func arrayQuote(args []sqldriver.Value) (any, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, nil
	}
	return answer.QuoteArrayElement(s), nil
}

// arrayGet is a[i]: element i counted from 1 (an array's lower bound is
// 1), NULL for a NULL element or an i outside a.
func arrayGet(args []sqldriver.Value) (any, error) {
	items, ok, err := arrayArg(args[0])
	i, iok := args[1].(int32)
	if err != nil || !ok || !iok || i < 1 || int(i) > len(items) || items[i-1] == nil {
		return nil, err
	}
	return *items[i-1], nil
}

// arrayKey is a's sort key for elements of kind (answer.ArraySortKey):
// a BLOB that DuckDB compares as PostgreSQL orders the arrays.
func arrayKey(args []sqldriver.Value) (any, error) {
	items, ok, err := arrayArg(args[0])
	kind, kok := args[1].(string)
	if err != nil || !ok || !kok {
		return nil, err
	}
	return answer.ArraySortKey(items, kind)
}

// arrayUnkey is the canonical text of the array whose sort key is k.
func arrayUnkey(args []sqldriver.Value) (any, error) {
	key, ok := args[0].([]byte)
	kind, kok := args[1].(string)
	if !ok || !kok {
		return nil, nil
	}
	return answer.ArrayFromSortKey(key, kind)
}
