package sqlite_test

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestPreparedAfterSchemaChange: a statement the connection prepared
// before a table was dropped and created again with other columns
// answers with the new table's columns and rows, in both builds, also
// when the schema changed on another connection (the replica manager
// runs each transaction attempt on a connection of its own).
func TestPreparedAfterSchemaChange(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "s.db", DataDir: t.TempDir()})
			defer e.Close()
			ctx := context.Background()
			a, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for _, q := range []string{`CREATE TABLE "m2" ("a" int, "b" text)`, `INSERT INTO "m2" VALUES (1, 'x')`} {
				if _, err := exec(t, a, "", q); err != nil {
					t.Fatal(err)
				}
			}
			if ans, err := exec(t, a, "SELECT", `SELECT * FROM "m2"`); err != nil || len(ans.Columns) != 2 {
				t.Fatalf("first select: %+v, %v", ans, err)
			}
			for _, c := range []driver.Conn{a, b} {
				for _, q := range []string{`DROP TABLE "m2"`, `CREATE TABLE "m2" ("z" text)`, `INSERT INTO "m2" VALUES ('y')`} {
					if _, err := exec(t, c, "", q); err != nil {
						t.Fatal(err)
					}
				}
				ans, err := exec(t, a, "SELECT", `SELECT * FROM "m2"`)
				if err != nil {
					t.Fatal(err)
				}
				if len(ans.Columns) != 1 || ans.Columns[0].Name != "z" || len(ans.Rows) != 1 {
					t.Errorf("after the schema changed: columns %+v, rows %v", ans.Columns, ans.Rows)
				}
			}
		})
	}
}
