package cluster

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// TestReplay: logged transactions a replica lacks are applied in order
// with their log-table rows; what its table has is skipped; a DDL change
// that is there already (MariaDB commits DDL at once, a crash can come
// before its row) does not stop the replay.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	open, _ := driver.Lookup(sqlite.Pure)
	e, err := open(ctx, driver.Spec{Name: "lite", DSN: "lite.db", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The table exists although the log table has no row for it.
	if _, err := c.Exec(ctx, driver.Query{SQL: `CREATE TABLE "t" ("a" INTEGER PRIMARY KEY, "b" TEXT)`, Verb: "CREATE TABLE"}); err != nil {
		t.Fatal(err)
	}
	cache := sqlan.NewCache(16, map[driver.Dialect][]string{driver.SQLite: {"lite"}}, nil)
	records := []wal.Record{
		{Txn: 1, Barrier: 5, Statements: []wal.Statement{{SQL: "CREATE TABLE t (a int PRIMARY KEY, b text)", Writes: true}}},
		{Txn: 2, Barrier: 6, Statements: []wal.Statement{
			{SQL: "INSERT INTO t VALUES ($1, $2)", Writes: true, Args: []wal.Value{{Text: "1"}, {Text: "one"}}},
			{SQL: "SELECT count(*) FROM t"},
		}},
		{Txn: 3, Barrier: 7, Statements: []wal.Statement{{SQL: "UPDATE t SET b = 'uno' WHERE a = 1", Writes: true}}},
		{Txn: 4, Barrier: 8, Statements: []wal.Statement{{SQL: "UPDATE t SET b = 'eins' WHERE a = 1", Writes: true}}},
	}
	have, _, err := replica.LogRead(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	have[8] = true // the replica committed barrier 8 already
	n, err := Replay(ctx, c, driver.SQLite, cache, records, have)
	if err != nil || n != 3 {
		t.Fatalf("replayed %d, %v; want 3", n, err)
	}
	a, err := c.Exec(ctx, driver.Query{SQL: `SELECT b FROM "t" WHERE a = 1`, ReturnsRows: true, Verb: "SELECT"})
	if err != nil || len(a.Rows) != 1 || a.Rows[0][0].Text != "uno" {
		t.Fatalf("row after replay: %+v, %v", a, err)
	}
	got, top, err := replica.LogRead(ctx, c, 0)
	if err != nil || !got[5] || !got[6] || !got[7] || got[8] || top != 7 {
		t.Errorf("log table %v (top %d), %v; want 5, 6, 7", got, top, err)
	}
}
