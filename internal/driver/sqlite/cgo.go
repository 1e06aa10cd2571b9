//go:build cgo

package sqlite

import (
	"errors"

	msqlite3 "github.com/mattn/go-sqlite3"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// CGo is the driver name of SQLite's C build (github.com/mattn/go-sqlite3).
// It exists only in binaries built with cgo.
const CGo = "sqlite-cgo"

var cgoLibrary = &library{
	name:      CGo,
	sqlDriver: "sqlite3",
	resultCode: func(err error) (int, string, bool) {
		var e msqlite3.Error
		if !errors.As(err, &e) {
			return 0, "", false
		}
		return int(e.ExtendedCode), e.Error(), true
	},
}

func init() { driver.Register(CGo, driver.Serial, cgoLibrary.opener()) }
