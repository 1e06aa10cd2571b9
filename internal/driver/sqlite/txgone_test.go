package sqlite_test

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestWholeTransactionRolledBack: where SQLite rolls a whole transaction
// back after one statement's error (here an ON CONFLICT ROLLBACK clause;
// an interrupted write or a full disk do the same), the transaction's
// later statements, ROLLBACK TO SAVEPOINT included, fail with 40001
// instead of each committing on its own on this replica alone (PostgreSQL
// and MariaDB undo only the failed statement). Both builds.
func TestWholeTransactionRolledBack(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "g.db", DataDir: t.TempDir()})
			defer e.Close()
			ctx := context.Background()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := exec(t, c, "", `CREATE TABLE "t" ("a" int UNIQUE ON CONFLICT ROLLBACK)`); err != nil {
				t.Fatal(err)
			}
			if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := exec(t, c, "", `INSERT INTO "t" VALUES (1)`); err != nil {
				t.Fatal(err)
			}
			if _, err := exec(t, c, "", `INSERT INTO "t" VALUES (1)`); pgerr.Code(err) != pgerr.UniqueViolation {
				t.Fatalf("the duplicate: %v, want 23505", err)
			}
			for _, q := range []string{`INSERT INTO "t" VALUES (2)`, `ROLLBACK TO SAVEPOINT "x"`} {
				if _, err := exec(t, c, "", q); pgerr.Code(err) != pgerr.SerializationFailure {
					t.Errorf("%s after the transaction was lost: %v, want 40001", q, err)
				}
			}
			if err := c.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			a, err := exec(t, c, "SELECT", `SELECT count(*) FROM "t"`)
			if err != nil || len(a.Rows) != 1 || a.Rows[0][0].Text != "0" {
				t.Errorf("after the rollback: %+v, %v; want no rows", a, err)
			}
			// An error that undoes only its statement leaves the
			// transaction as it was.
			if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := exec(t, c, "", `INSERT INTO "nope" VALUES (1)`); err == nil || pgerr.Code(err) == pgerr.SerializationFailure {
				t.Errorf("an unknown table: %v", err)
			}
			if _, err := exec(t, c, "", `INSERT INTO "t" VALUES (3)`); err != nil {
				t.Errorf("after a statement's own error: %v", err)
			}
			if err := c.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
