package sqlite_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestFunctionsTakeNull: shepherd's SQLite functions give NULL for NULL
// in both builds (go-sqlite3 passes NULL as a nil []byte, which
// shepherd_numeric once refused as bad text, so NULLs stored into a
// numeric column failed on that replica alone), and ” stays bad text.
func TestFunctionsTakeNull(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "n.db", DataDir: t.TempDir()})
			defer e.Close()
			c, err := e.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, f := range []string{
				sqlite.NumericFunction + "(NULL, 8, 2)", sqlite.DivisorFunction + "(NULL)", sqlite.MD5Function + "(NULL)",
				sqlite.HexIntFunction + "(NULL)", sqlite.Int4Function + "(NULL)", sqlite.Int2Function + "(NULL)", sqlite.Int8Function + "(NULL)",
				sqlite.VarcharFunction + "(NULL, 3)", sqlite.SingleFunction + "(NULL, 1)",
			} {
				a, err := exec(t, c, "SELECT", "SELECT "+f)
				if err != nil || len(a.Rows) != 1 || !a.Rows[0][0].Null {
					t.Errorf("%s: %+v, %v; want NULL", f, a, err)
				}
			}
			if _, err := exec(t, c, "SELECT", "SELECT "+sqlite.NumericFunction+"('', 8, 2)"); err == nil {
				t.Errorf("%s('') succeeded; want 22P02 as PostgreSQL gives", sqlite.NumericFunction)
			}
		})
	}
}

// TestInt8Function: SQLite makes - x of -9223372036854775808 a real,
// which Int8Function fails as PostgreSQL's bigint does (22003 "bigint out
// of range"); SQLite's own abs() overflow gets the same words.
func TestInt8Function(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "n.db", DataDir: t.TempDir()})
			defer e.Close()
			c, err := e.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, q := range []string{
				"SELECT " + sqlite.Int8Function + "(-(-9223372036854775807 - 1))",
				"SELECT ABS(-9223372036854775807 - 1)",
			} {
				if _, err := exec(t, c, "SELECT", q); pgerr.Code(err) != pgerr.NumericValueOutOfRange || !strings.Contains(err.Error(), "bigint out of range") {
					t.Errorf("%s: %v; want 22003 bigint out of range", q, err)
				}
			}
			a, err := exec(t, c, "SELECT", "SELECT "+sqlite.Int8Function+"(-(-9223372036854775807))")
			if err != nil || len(a.Rows) != 1 || a.Rows[0][0].Text != "9223372036854775807" {
				t.Errorf("%+v, %v; want 9223372036854775807", a, err)
			}
		})
	}
}
