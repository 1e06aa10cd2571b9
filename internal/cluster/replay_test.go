package cluster

import (
	"context"
	"errors"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/replica"
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
	lite := func(sql string, args ...wal.Value) []wal.Form {
		return []wal.Form{{Dialect: uint8(driver.Postgres), SQL: "not for sqlite"}, {Dialect: uint8(driver.SQLite), SQL: sql, Args: args}}
	}
	records := []wal.Record{
		{Txn: 1, Barrier: 5, Statements: []wal.Statement{{SQL: "CREATE TABLE t (a int PRIMARY KEY, b text)", Writes: true, DDL: true,
			Forms: lite(`CREATE TABLE "t" ("a" INTEGER PRIMARY KEY, "b" TEXT)`)}}},
		{Txn: 2, Barrier: 6, Statements: []wal.Statement{
			{SQL: "INSERT INTO t VALUES ($1, $2)", Writes: true, Args: []wal.Value{{Text: "1"}, {Text: "one"}},
				Forms: lite(`INSERT INTO "t" VALUES (?, ?)`, wal.Value{Text: "1"}, wal.Value{Text: "one"})},
			{SQL: "SELECT count(*) FROM t"},
		}},
		// The client's text is not what runs: the form is.
		{Txn: 3, Barrier: 7, Statements: []wal.Statement{{SQL: "UPDATE t SET b = 'wrong' WHERE a = 1", Writes: true,
			Forms: lite(`UPDATE "t" SET "b" = 'uno' WHERE "a" = 1`)}}},
		{Txn: 4, Barrier: 8, Statements: []wal.Statement{{SQL: "UPDATE t SET b = 'eins' WHERE a = 1", Writes: true,
			Forms: lite(`UPDATE "t" SET "b" = 'eins' WHERE "a" = 1`)}}},
	}
	have, _, err := replica.LogRead(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	have[8] = true // the replica committed barrier 8 already
	n, err := Replay(ctx, c, driver.SQLite, records, have)
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

// TestReplayRefusesWithoutForm: a logged statement without the form the
// replica's dialect ran (a record of log format 1, or a dialect added
// since) is not analysed again against today's schema: replay stops
// before sending anything of that transaction, with ErrUnreplayable.
func TestReplayRefusesWithoutForm(t *testing.T) {
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
	records := []wal.Record{
		{Txn: 1, Barrier: 5, Statements: []wal.Statement{
			{SQL: "CREATE TABLE t (a int)", Writes: true, DDL: true, Forms: []wal.Form{{Dialect: uint8(driver.SQLite), SQL: `CREATE TABLE "t" ("a" INTEGER)`}}},
			{SQL: "INSERT INTO t VALUES (1)", Writes: true},
		}},
	}
	have, _, err := replica.LogRead(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Replay(ctx, c, driver.SQLite, records, have)
	if n != 0 || !errors.Is(err, ErrUnreplayable) {
		t.Fatalf("replayed %d, %v; want 0, ErrUnreplayable", n, err)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: `SELECT * FROM "t"`, ReturnsRows: true, Verb: "SELECT"}); err == nil {
		t.Error("the transaction's DDL ran although its INSERT could not be replayed")
	}
}

// TestLostCommits: a replica coming back that lacks transactions of this
// run it was seen to commit lost them; they are counted when the log
// still holds everything before them, and refused when it lacks the
// log's first record (what the log dropped may be lost too).
func TestLostCommits(t *testing.T) {
	records := []wal.Record{{Barrier: 10}, {Barrier: 12}, {Barrier: 13}, {Barrier: 20}}
	for _, c := range []struct {
		name          string
		have          []uint64
		base, applied uint64
		lost          int
		refused       bool
	}{
		{name: "has all it committed", have: []uint64{10, 12, 13}, base: 1, applied: 14},
		{name: "lagging, not lost", have: []uint64{10}, base: 1, applied: 11},
		{name: "lost a tail", have: []uint64{10}, base: 1, applied: 14, lost: 2},
		{name: "lost from the start", have: []uint64{12, 13}, base: 1, applied: 14, refused: true},
		{name: "an earlier run's", have: nil, base: 14, applied: 14},
		{name: "an earlier run's, then lost", have: []uint64{}, base: 13, applied: 14, lost: 1},
	} {
		have := map[uint64]bool{}
		for _, b := range c.have {
			have[b] = true
		}
		lost, err := lostCommits(records, have, c.base, c.applied)
		if (err != nil) != c.refused || lost != c.lost {
			t.Errorf("%s: lost %d, %v; want %d, refused %v", c.name, lost, err, c.lost, c.refused)
		}
	}
}
