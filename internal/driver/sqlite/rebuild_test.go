package sqlite_test

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestSeveralStatementsInOneDDL checks that both builds run every
// statement of an ALTER TABLE text that holds several (the SQL writer
// rebuilds a table that way, see dialect's rebuild), inside the
// replica's transaction, the same text the log replays.
func TestSeveralStatementsInOneDDL(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "r.db", DataDir: t.TempDir()})
			defer e.Close()
			ctx := context.Background()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := exec(t, c, "", `CREATE TABLE "t" ("a" int)`); err != nil {
				t.Fatal(err)
			}
			if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := exec(t, c, "ALTER TABLE", `CREATE TABLE "n" ("a" int NOT NULL); INSERT INTO "n" SELECT "a" FROM "t"; DROP TABLE "t"; ALTER TABLE "n" RENAME TO "t"`); err != nil {
				t.Fatal(err)
			}
			if err := c.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := exec(t, c, "", `INSERT INTO "t" VALUES (NULL)`); err == nil {
				t.Errorf("the table was not rebuilt: NULL accepted")
			}
		})
	}
}
