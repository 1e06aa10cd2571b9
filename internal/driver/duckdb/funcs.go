package duckdb

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"math/big"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Shepherd's functions for PostgreSQL's that DuckDB lacks or computes
// otherwise (the json operators, initcap, ...) are the SQLite driver's,
// registered in DuckDB too (sqlite.SharedFunctions): one Go
// implementation answers for both engines. Package dialect writes the
// calls (DuckDB), with the same arguments as for SQLite.

// sharedFunc is one shared function as a DuckDB scalar function. Its
// arguments are of any type (DuckDB hands them to Go as the library
// scans them; sqliteValue turns them into what SQLite would pass), and
// NULL arguments reach the function, which answers for them as it does
// on SQLite.
type sharedFunc struct {
	f      sqlite.Shared
	args   []duckdb.TypeInfo
	vararg duckdb.TypeInfo
	result duckdb.TypeInfo
}

func (s *sharedFunc) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: s.args, VariadicTypeInfo: s.vararg, ResultTypeInfo: s.result,
		SpecialNullHandling: true}
}

func (s *sharedFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(values []sqldriver.Value) (any, error) {
		args := make([]any, len(values))
		for i, v := range values {
			a, err := sqliteValue(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.f.Name, err)
			}
			args[i] = a
		}
		out, err := s.f.Fn(args)
		if err != nil || out == nil {
			return nil, err
		}
		switch s.f.Result {
		case sqlite.SharedBool:
			i, ok := out.(int64)
			if !ok {
				return nil, fmt.Errorf("%s returned %T, not a truth value", s.f.Name, out)
			}
			return i != 0, nil
		case sqlite.SharedInt:
			i, ok := out.(int64)
			if !ok {
				return nil, fmt.Errorf("%s returned %T, not an integer", s.f.Name, out)
			}
			return i, nil
		case sqlite.SharedFloat:
			switch x := out.(type) {
			case int64:
				return float64(x), nil
			case float64:
				return x, nil
			}
			return nil, fmt.Errorf("%s returned %T, not a number", s.f.Name, out)
		}
		switch x := out.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
		return nil, fmt.Errorf("%s returned %T, not text", s.f.Name, out)
	}}
}

// sqliteValue is a value DuckDB handed a function, as SQLite would hand
// it: text, an int64 (booleans as 0 or 1), a float64, bytes or nil; a
// date, timestamp or timestamptz as the text SQLite stores for it (the
// UTC wall-clock time, "2024-01-02 03:04:05.5"; a date at midnight, which
// the shared functions read as the date). Values of other types
// (decimals, intervals, lists) fail the statement:
// the SQL writer passes none to these functions on SQLite, where they
// would be text in another form.
func sqliteValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, int64, float64, []byte:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), nil
		}
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999"), nil
	}
	return nil, fmt.Errorf("an argument of type %T, which shepherd does not pass to it", v)
}

// registerShared registers the shared functions on the connection c
// (DuckDB keeps them in its catalog, for every connection to the
// database: the first connection registers them).
func registerShared(ctx context.Context, c *sql.Conn) error {
	var exists bool
	err := c.QueryRowContext(ctx, "SELECT count(*) > 0 FROM duckdb_functions() WHERE function_name = ?",
		sqlite.JSONGetFunction).Scan(&exists)
	if err != nil || exists {
		return err
	}
	anyType, err := duckdb.NewTypeInfo(duckdb.TYPE_ANY)
	if err != nil {
		return err
	}
	results := map[sqlite.SharedResult]duckdb.Type{
		sqlite.SharedText: duckdb.TYPE_VARCHAR, sqlite.SharedBool: duckdb.TYPE_BOOLEAN, sqlite.SharedInt: duckdb.TYPE_BIGINT,
		sqlite.SharedFloat: duckdb.TYPE_DOUBLE,
	}
	for _, f := range sqlite.SharedFunctions() {
		result, err := duckdb.NewTypeInfo(results[f.Result])
		if err != nil {
			return err
		}
		s := &sharedFunc{f: f, result: result}
		if f.Args < 0 {
			s.vararg = anyType
		} else {
			for range f.Args {
				s.args = append(s.args, anyType)
			}
		}
		if err := duckdb.RegisterScalarUDF(c, f.Name, s); err != nil {
			return fmt.Errorf("registering %s: %w", f.Name, err)
		}
	}
	return nil
}

// sharedError reads the SQLSTATE and message of a shared function's
// error back out of DuckDB's message (see sqlite.FunctionError).
func sharedError(msg string) (code, message string, ok bool) {
	code, message, ok = sqlite.FunctionError(msg)
	if ok {
		// DuckDB may add a line of its own after the function's text.
		message, _, _ = strings.Cut(message, "\n")
	}
	return code, message, ok
}

// sharedPGError is err as the PostgreSQL error a shared function failed
// with, or nil when it is none.
func sharedPGError(err error) *pgerr.Error {
	code, message, ok := sharedError(err.Error())
	if !ok {
		return nil
	}
	return pgerr.New(code, "%s", message)
}
