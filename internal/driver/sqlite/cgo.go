//go:build cgo

package sqlite

/*
// go-sqlite3 exposes neither sqlite3_db_config nor a connection's sqlite3
// handle, so the double-quoted-string fallback is turned off the way
// SQLite offers for libraries one does not control: an automatic
// extension, which SQLite runs inside every sqlite3_open of this build,
// before the connection prepares anything (SQLite wants the DQS settings
// made before the first statement). The prototypes are SQLite's own;
// the symbols come from the amalgamation go-sqlite3 compiles (or the
// system library with its libsqlite3 tag).
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_api_routines sqlite3_api_routines;
extern int sqlite3_db_config(sqlite3*, int op, ...);
extern int sqlite3_auto_extension(void (*xEntryPoint)(void));

enum { shepherdDQSDML = 1013, shepherdDQSDDL = 1014 }; // SQLITE_DBCONFIG_DQS_DML, _DDL

static int shepherd_no_dqs(sqlite3 *db, char **errmsg, const sqlite3_api_routines *api) {
	(void)errmsg;
	(void)api;
	int rc = sqlite3_db_config(db, shepherdDQSDML, 0, (int *)0);
	if (rc == 0) {
		rc = sqlite3_db_config(db, shepherdDQSDDL, 0, (int *)0);
	}
	return rc;
}

static int shepherd_register_no_dqs(void) {
	return sqlite3_auto_extension((void (*)(void))shepherd_no_dqs);
}

// The C library's math functions, which SQLite's math functions call
// (see mathFunctions).
#cgo LDFLAGS: -lm
#include <math.h>
*/
import "C"

import (
	"database/sql"
	"errors"
	"fmt"

	msqlite3 "github.com/mattn/go-sqlite3"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// CGo is the driver name of SQLite's C build (github.com/mattn/go-sqlite3).
// It exists only in binaries built with cgo.
const CGo = "sqlite-cgo"

var cgoLibrary = &library{
	name:      CGo,
	sqlDriver: cgoSQLDriver,
	limit: func(c *sql.Conn, id int) (n int, err error) {
		err = c.Raw(func(dc any) error {
			sc, ok := dc.(*msqlite3.SQLiteConn)
			if !ok {
				return fmt.Errorf("go-sqlite3: unexpected connection type %T", dc)
			}
			n = sc.GetLimit(id)
			return nil
		})
		return n, err
	},
	resultCode: func(err error) (int, string, bool) {
		var e msqlite3.Error
		if !errors.As(err, &e) {
			return 0, "", false
		}
		return int(e.ExtendedCode), e.Error(), true
	},
}

// cgoSQLDriver is go-sqlite3 registered once more, with shepherd's
// functions on every connection.
const cgoSQLDriver = "sqlite3-shepherd"

func init() {
	// Process-wide for go-sqlite3's copy of SQLite, which only shepherd's
	// drivers use; open checks it took effect.
	if rc := C.shepherd_register_no_dqs(); rc != 0 {
		panic(fmt.Sprintf("sqlite3_auto_extension: result code %d", rc))
	}
	sql.Register(cgoSQLDriver, &msqlite3.SQLiteDriver{ConnectHook: func(c *msqlite3.SQLiteConn) error {
		if err := c.RegisterFunc(DivisorFunction, func(v any) (any, error) { return divisor(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(DivisorIfFunction, func(v, check any) (any, error) {
			return divisorIf(cgoArg(v), cgoArg(check))
		}, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(MathCheckFunction, func(args ...any) (any, error) {
			for i, v := range args {
				args[i] = cgoArg(v)
			}
			return mathCheck(args)
		}, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(TextOfFunction, func(v, t any) (any, error) { return textOf(cgoArg(v), cgoArg(t)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(DivideFunction, func(a, b any) (any, error) {
			return divide(cgoArg(a), cgoArg(b))
		}, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(VarcharFunction, func(v, n any) (any, error) { return varchar(cgoArg(v), cgoArg(n)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(SingleFunction, func(v, n any) (any, error) { return single(cgoArg(v), cgoArg(n)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(Int2Function, func(v any) (any, error) { return int2(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(Int8Function, func(v any) (any, error) { return bigint(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(MD5Function, func(v any) (any, error) { return md5Hex(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(HexIntFunction, func(v any) (any, error) { return hexInt(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(RoundEvenFunction, func(v any) (any, error) { return roundEven(cgoArg(v)) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(NumericFunction, func(v, p, s any) (any, error) { return numeric(cgoArg(v), p, s) }, true); err != nil {
			return err
		}
		if err := c.RegisterAggregator(SumFunction, func() *cgoSum { return &cgoSum{intSum{text: true}} }, true); err != nil {
			return err
		}
		if err := c.RegisterAggregator(SumInExprFunction, func() *cgoSum { return &cgoSum{} }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(SumPartsFunction, func(hi, lo any) (any, error) { return sumParts(cgoArg(hi), cgoArg(lo), true) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(SumPartsInExprFunction, func(hi, lo any) (any, error) { return sumParts(cgoArg(hi), cgoArg(lo), false) }, true); err != nil {
			return err
		}
		for _, f := range pgFunctions {
			var fn any
			switch f.n {
			case 1:
				fn = func(a any) (any, error) { return f.fn1(cgoArg(a)) }
			case 2:
				fn = func(a, b any) (any, error) { return f.fn2(cgoArg(a), cgoArg(b)) }
			case 3:
				fn = func(a, b, x any) (any, error) { return f.fn3(cgoArg(a), cgoArg(b), cgoArg(x)) }
			default:
				fn = func(a, b, x, y any) (any, error) { return f.fn4(cgoArg(a), cgoArg(b), cgoArg(x), cgoArg(y)) }
			}
			if err := c.RegisterFunc(f.name, fn, true); err != nil {
				return err
			}
		}
		for _, f := range mathFunctions(cLibm) {
			var fn any
			switch f.n {
			case 0:
				fn = func() any { return f.fn0() }
			case 1:
				fn = func(a any) any { return f.fn1(cgoArg(a)) }
			default:
				fn = func(a, b any) any { return f.fn2(cgoArg(a), cgoArg(b)) }
			}
			if err := c.RegisterFunc(f.name, fn, true); err != nil {
				return err
			}
		}
		for name := range StringFunctions {
			f := stringFuncs[name]
			if err := c.RegisterFunc(StringFunctionPrefix+name, func(args ...any) (any, error) {
				for i, v := range args {
					args[i] = cgoArg(v)
				}
				return f(args)
			}, true); err != nil {
				return err
			}
		}
		return c.RegisterFunc(Int4Function, func(v any) (any, error) { return int4(cgoArg(v)) }, true)
	}})
	driver.Register(CGo, driver.Serial, cgoLibrary.opener())
}

// cLibm is the C library's math, as SQLite's math functions call it.
var cLibm = libm{
	ceil:  func(x float64) float64 { return float64(C.ceil(C.double(x))) },
	floor: func(x float64) float64 { return float64(C.floor(C.double(x))) },
	trunc: func(x float64) float64 { return float64(C.trunc(C.double(x))) },
	log:   func(x float64) float64 { return float64(C.log(C.double(x))) },
	log10: func(x float64) float64 { return float64(C.log10(C.double(x))) },
	log2:  func(x float64) float64 { return float64(C.log2(C.double(x))) },
	exp:   func(x float64) float64 { return float64(C.exp(C.double(x))) },
	sqrt:  func(x float64) float64 { return float64(C.sqrt(C.double(x))) },
	pow:   func(x, y float64) float64 { return float64(C.pow(C.double(x), C.double(y))) },
	fmod:  func(x, y float64) float64 { return float64(C.fmod(C.double(x), C.double(y))) },
}

// cgoArg gives a function's argument as modernc.org/sqlite gives it,
// which the shared functions expect: go-sqlite3 passes SQL NULL to an
// untyped (any) argument as a nil []byte, and the functions would read it
// as empty text (shepherd_numeric refused every NULL stored into a
// numeric column with 22P02, so the go-sqlite3 replica lost such writes).
// A zero-length text or blob arrives as a non-nil empty slice or string.
func cgoArg(v any) any {
	if b, ok := v.([]byte); ok && b == nil {
		return nil
	}
	return v
}

// cgoSum is an intSum as go-sqlite3 calls an aggregate.
type cgoSum struct{ intSum }

func (c *cgoSum) Step(v any) error   { return c.step(cgoArg(v)) }
func (c *cgoSum) Done() (any, error) { return c.value() }
