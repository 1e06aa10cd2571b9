package sqlite

import (
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"

	msqlite "modernc.org/sqlite"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// Pure is the driver name of SQLite translated to Go (modernc.org/sqlite).
const Pure = "sqlite"

var moderncLibrary = &library{
	name:      Pure,
	sqlDriver: "sqlite",
	// _dqs=0 makes the library call sqlite3_db_config(DQS_DML and DQS_DDL,
	// 0) on every connection it opens, before anything else runs on it.
	dsnSuffix: "?_dqs=0",
	limit: func(c *sql.Conn, id int) (int, error) {
		return msqlite.Limit(c, id, -1)
	},
	resultCode: func(err error) (int, string, bool) {
		var e *msqlite.Error
		if !errors.As(err, &e) {
			return 0, "", false
		}
		return e.Code(), e.Error(), true
	},
}

func init() {
	msqlite.MustRegisterDeterministicScalarFunction(DivisorFunction, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return divisor(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(DivisorIfFunction, 2,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return divisorIf(args[0], args[1])
		})
	msqlite.MustRegisterDeterministicScalarFunction(MathCheckFunction, -1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			a := make([]any, len(args))
			for i, v := range args {
				a[i] = v
			}
			return mathCheck(a)
		})
	msqlite.MustRegisterDeterministicScalarFunction(TextOfFunction, 2,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return textOf(args[0], args[1])
		})
	msqlite.MustRegisterDeterministicScalarFunction(DivideFunction, 2,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return divide(args[0], args[1])
		})
	msqlite.MustRegisterDeterministicScalarFunction(Int4Function, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return int4(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(VarcharFunction, 2,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return varchar(args[0], args[1])
		})
	msqlite.MustRegisterDeterministicScalarFunction(SingleFunction, 2,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return single(args[0], args[1])
		})
	msqlite.MustRegisterDeterministicScalarFunction(Int2Function, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return int2(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(Int8Function, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return bigint(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(MD5Function, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return md5Hex(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(HexIntFunction, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return hexInt(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(RoundEvenFunction, 1,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return roundEven(args[0])
		})
	msqlite.MustRegisterDeterministicScalarFunction(NumericFunction, 3,
		func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
			return numeric(args[0], args[1], args[2])
		})
	for name, nargs := range StringFunctions {
		f := stringFuncs[name]
		msqlite.MustRegisterDeterministicScalarFunction(StringFunctionPrefix+name, int32(nargs),
			func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
				a := make([]any, len(args))
				for i, v := range args {
					a[i] = v
				}
				return f(a)
			})
	}
	for name, text := range map[string]bool{SumPartsFunction: true, SumPartsInExprFunction: false} {
		msqlite.MustRegisterDeterministicScalarFunction(name, 2,
			func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
				return sumParts(args[0], args[1], text)
			})
	}
	for name, text := range map[string]bool{SumFunction: true, SumInExprFunction: false} {
		msqlite.MustRegisterFunction(name, &msqlite.FunctionImpl{NArgs: 1, Deterministic: true,
			MakeAggregate: func(msqlite.FunctionContext) (msqlite.AggregateFunction, error) {
				return &moderncSum{intSum{text: text}}, nil
			}})
	}
	for _, f := range pgFunctions {
		msqlite.MustRegisterDeterministicScalarFunction(f.name, int32(f.n),
			func(_ *msqlite.FunctionContext, args []sqldriver.Value) (sqldriver.Value, error) {
				switch f.n {
				case 1:
					return f.fn1(args[0])
				case 2:
					return f.fn2(args[0], args[1])
				case 3:
					return f.fn3(args[0], args[1], args[2])
				}
				return f.fn4(args[0], args[1], args[2], args[3])
			})
	}
	driver.Register(Pure, driver.Serial, moderncLibrary.opener())
}

// moderncSum is an intSum as modernc.org/sqlite calls an aggregate (not
// over a window: the SQL writer keeps SQLite's SUM there, as go-sqlite3
// has no window aggregates).
type moderncSum struct{ intSum }

func (m *moderncSum) Step(_ *msqlite.FunctionContext, args []sqldriver.Value) error {
	return m.step(args[0])
}

func (m *moderncSum) WindowInverse(*msqlite.FunctionContext, []sqldriver.Value) error {
	return errors.New("shepherd_sum is not a window function")
}

func (m *moderncSum) WindowValue(*msqlite.FunctionContext) (sqldriver.Value, error) {
	return m.value()
}

func (m *moderncSum) Final(*msqlite.FunctionContext) {}
