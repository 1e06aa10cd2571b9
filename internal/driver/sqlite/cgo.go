//go:build cgo

package sqlite

import (
	"database/sql"
	"errors"

	msqlite3 "github.com/mattn/go-sqlite3"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// CGo is the driver name of SQLite's C build (github.com/mattn/go-sqlite3).
// It exists only in binaries built with cgo.
const CGo = "sqlite-cgo"

var cgoLibrary = &library{
	name:      CGo,
	sqlDriver: cgoSQLDriver,
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
	sql.Register(cgoSQLDriver, &msqlite3.SQLiteDriver{ConnectHook: func(c *msqlite3.SQLiteConn) error {
		if err := c.RegisterFunc(DivisorFunction, func(v any) (any, error) { return divisor(v) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(MD5Function, func(v any) (any, error) { return md5Hex(v) }, true); err != nil {
			return err
		}
		if err := c.RegisterFunc(HexIntFunction, func(v any) (any, error) { return hexInt(v) }, true); err != nil {
			return err
		}
		return c.RegisterFunc(Int4Function, func(v any) (any, error) { return int4(v) }, true)
	}})
	driver.Register(CGo, driver.Serial, cgoLibrary.opener())
}
