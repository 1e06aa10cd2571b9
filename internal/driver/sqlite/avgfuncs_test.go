package sqlite_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestAvgCountFunction checks shepherd_avg_count in both builds: the
// count it is given below sqlite.AvgCountLimit, 0A000 from the limit on
// (where e * count(x) op sum(x) might not be PostgreSQL's comparison with
// avg(x)).
func TestAvgCountFunction(t *testing.T) {
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
				`CREATE TABLE "t" ("k" integer, "i" integer)`,
				`INSERT INTO "t" VALUES (1, 3), (2, 4), (3, NULL)`,
			} {
				if _, err := exec(t, c, "", s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			for _, q := range []struct{ sql, want, code string }{
				{`SELECT 4 * shepherd_avg_count(COUNT("i")) > SUM("i") FROM "t"`, "1", ""},
				{`SELECT shepherd_avg_count(COUNT("i")) FROM "t" WHERE "k" > 5`, "0", ""},
				{`SELECT shepherd_avg_count(COUNT("i") * ` + strconv.Itoa(sqlite.AvgCountLimit/2-1) + `) FROM "t"`, strconv.Itoa(sqlite.AvgCountLimit - 2), ""},
				{`SELECT shepherd_avg_count(COUNT("i") * ` + strconv.Itoa(sqlite.AvgCountLimit/2) + `) FROM "t"`, "", pgerr.FeatureNotSupported},
				// An aggregate in WHERE (where the comparison may put one)
				// fails as in PostgreSQL, 42803.
				{`SELECT 1 FROM "t" WHERE 4 * shepherd_avg_count(COUNT("i")) > SUM("i")`, "", "42803"},
			} {
				a, err := exec(t, c, "SELECT", q.sql)
				if got := pgerr.Code(err); got != q.code {
					t.Errorf("%s: %v, want SQLSTATE %q", q.sql, err, q.code)
					continue
				}
				if err != nil {
					continue
				}
				if got := a.Rows[0][0].Text; got != q.want {
					t.Errorf("%s = %s, want %s", q.sql, got, q.want)
				}
			}
		})
	}
}
