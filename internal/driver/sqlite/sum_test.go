package sqlite_test

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestSumFunctions checks shepherd_sum and shepherd_sum_expr in both
// builds: exact sums of integers where SQLite's SUM fails with "integer
// overflow" (PostgreSQL's sum(bigint) is numeric), the digits as text
// beyond the 64-bit range for a result column, 0A000 for an expression.
func TestSumFunctions(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "s.db", DataDir: t.TempDir()})
			defer e.Close()
			c, err := e.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, s := range []string{
				`CREATE TABLE "t" ("k" integer, "b" bigint)`,
				`INSERT INTO "t" VALUES (1, 9223372036854775807), (2, 9223372036854775807), (3, -9223372036854775808), (4, -9223372036854775808), (5, NULL)`,
			} {
				if _, err := exec(t, c, "", s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			for _, q := range []struct{ sql, want string }{
				{`SELECT shepherd_sum("b") FROM "t" WHERE "k" IN (1, 2)`, "18446744073709551614"},
				{`SELECT shepherd_sum("b") FROM "t" WHERE "k" IN (3, 4)`, "-18446744073709551616"},
				{`SELECT shepherd_sum("b") FROM "t"`, "-2"},
				{`SELECT shepherd_sum_expr("b") + 1 FROM "t"`, "-1"},
				{`SELECT shepherd_sum(DISTINCT "b") FROM "t" WHERE "k" IN (1, 2)`, "9223372036854775807"},
				{`SELECT shepherd_sum("b") FROM "t" WHERE "k" = 5`, "<NULL>"},
				{`SELECT shepherd_sum("b") FROM "t" WHERE "k" > 9`, "<NULL>"},
				// Over a window, from the sums of the high and low 32 bits
				// (both builds register the scalar shepherd_sum_parts).
				{`SELECT shepherd_sum_parts(SUM("b" >> 32) OVER (), SUM("b" & 4294967295) OVER ()) FROM "t" WHERE "k" IN (1, 2)`, "18446744073709551614"},
				{`SELECT shepherd_sum_parts(SUM("b" >> 32) OVER (), SUM("b" & 4294967295) OVER ()) FROM "t" WHERE "k" IN (3, 4)`, "-18446744073709551616"},
				{`SELECT shepherd_sum_parts_expr(SUM("b" >> 32) OVER (), SUM("b" & 4294967295) OVER ()) + 1 FROM "t"`, "-1"},
				{`SELECT shepherd_sum_parts(SUM("b" >> 32) OVER (), SUM("b" & 4294967295) OVER ()) FROM "t" WHERE "k" = 5`, "<NULL>"},
			} {
				a, err := exec(t, c, "SELECT", q.sql)
				if err != nil {
					t.Errorf("%s: %v", q.sql, err)
					continue
				}
				got := a.Rows[0][0].Text
				if a.Rows[0][0].Null {
					got = "<NULL>"
				}
				if got != q.want {
					t.Errorf("%s = %s, want %s", q.sql, got, q.want)
				}
			}
			_, err = exec(t, c, "SELECT", `SELECT shepherd_sum_expr("b") FROM "t" WHERE "k" IN (1, 2)`)
			if pgerr.Code(err) != pgerr.FeatureNotSupported {
				t.Errorf("shepherd_sum_expr beyond the range: %v (%s), want 0A000", err, pgerr.Code(err))
			}
		})
	}
}
