package sqlite_test

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestPostgreSQLChecksInBothBuilds: shepherd_math_check fails where
// PostgreSQL's float8 math functions do (SQLite answers NULL or an
// infinity there) and passes SQLite's result on elsewhere, and
// shepherd_text_of prints floats and timestamptz as PostgreSQL does
// (SQLite's CAST prints 2.0 and leaves out +00), in both builds.
func TestPostgreSQLChecksInBothBuilds(t *testing.T) {
	failing := map[string]string{
		"SELECT shepherd_math_check('sqrt', sqrt(-1), -1)":                   "2201F",
		"SELECT shepherd_math_check('ln', ln(0), 0)":                         "2201E",
		"SELECT shepherd_math_check('log', log10(-2.5), -2.5)":               "2201E",
		"SELECT shepherd_math_check('exp', exp(1000), 1000)":                 "22003",
		"SELECT shepherd_math_check('exp', exp(-1000), -1000)":               "22003",
		"SELECT shepherd_math_check('power', power(0, -1), 0, -1)":           "2201F",
		"SELECT shepherd_math_check('power', power(-8, 0.5), -8, 0.5)":       "2201F",
		"SELECT shepherd_math_check('power', power(10, 400), 10, 400)":       "22003",
		"SELECT shepherd_math_check('power', power(10.0, -400), 10.0, -400)": "22003",
	}
	answered := map[string][]string{
		"SELECT shepherd_math_check('sqrt', sqrt(16), 16), shepherd_math_check('ln', ln(NULL), NULL), shepherd_math_check('power', power(-8, 3), -8, 3), shepherd_math_check('exp', exp(0), 0)": {"4", "", "-512", "1"},
		"SELECT shepherd_text_of(2.0, 'float8'), shepherd_text_of(1e20, 'float8'), shepherd_text_of(0.1, 'float4'), shepherd_text_of(NULL, 'float8'), shepherd_text_of('Infinity', 'float8')":   {"2", "1e+20", "0.1", "", "Infinity"},
		"SELECT shepherd_text_of('2024-01-02 03:04:05', 'timestamptz'), shepherd_text_of('2024-01-02T03:04:05.5+02:00', 'timestamptz')":                                                         {"2024-01-02 03:04:05+00", "2024-01-02 01:04:05.5+00"},
	}
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		e := open(t, name, driver.Spec{Name: name, DSN: "c.db", DataDir: t.TempDir()})
		defer e.Close()
		c, err := e.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for q, code := range failing {
			a, err := exec(t, c, "SELECT", q)
			if got := pgerr.Code(err); err == nil || got != code {
				t.Errorf("%s: %s: %v (SQLSTATE %q) %v, want SQLSTATE %s", name, q, err, got, a, code)
			}
		}
		for q, want := range answered {
			a, err := exec(t, c, "SELECT", q)
			if err != nil {
				t.Errorf("%s: %s: %v", name, q, err)
				continue
			}
			for i, v := range a.Rows[0] {
				got := v.Text
				if v.Null {
					got = ""
				}
				if got != want[i] {
					t.Errorf("%s: %s: column %d = %q, want %q", name, q, i+1, got, want[i])
				}
			}
		}
	}
}
