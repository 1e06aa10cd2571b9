package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// TestReplay: logged transactions a replica lacks are applied in order
// with their log-table rows; what its table has is skipped.
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

// TestReplayAlreadyDone: a DDL statement whose effect is there already
// does not stop the replay on a replica that commits DDL as it runs it
// (MariaDB: a crash can come between the change and its log-table row).
// Anywhere else the change commits with its row, so such an error means
// the replica differs: on SQLite, where an ALTER TABLE may be a rebuild
// of several statements, taking it for done would commit the rebuild
// half made (here: the table left without its new NOT NULL), so the
// replay stops instead, with nothing of the transaction committed.
func TestReplayAlreadyDone(t *testing.T) {
	ctx := context.Background()
	ddl := func(form wal.Form) []wal.Record {
		return []wal.Record{{Txn: 1, Barrier: 5, Statements: []wal.Statement{
			{SQL: "ALTER TABLE t ALTER b SET NOT NULL", Writes: true, DDL: true, Verb: "ALTER TABLE", Forms: []wal.Form{form}}}}}
	}

	maria := fakeengine.New("maria", driver.Locking, driver.MySQL)
	maria.On(fakeengine.Exec, "ALTER TABLE").Fail("42701", "Duplicate column name 'b'")
	mc, err := maria.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	form := wal.Form{Dialect: uint8(driver.MySQL), SQL: "ALTER TABLE `t` MODIFY `b` text NOT NULL"}
	if n, err := Replay(ctx, mc, driver.MySQL, ddl(form), map[uint64]bool{}); n != 1 || err != nil {
		t.Fatalf("MariaDB: replayed %d, %v; want 1 (the change is there already)", n, err)
	}
	if maria.Count(fakeengine.Commit, "") != 1 {
		t.Fatalf("MariaDB: %d commits, want 1", maria.Count(fakeengine.Commit, ""))
	}

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
	for _, q := range []string{`CREATE TABLE "t" ("a" INTEGER PRIMARY KEY, "b" TEXT)`, `INSERT INTO "t" VALUES (1, 'x')`,
		// A step of the rebuild finds its effect there already.
		`CREATE TABLE "shepherd_rebuild" ("a" INTEGER)`} {
		if _, err := c.Exec(ctx, driver.Query{SQL: q, Verb: strings.Join(strings.Fields(q)[:2], " ")}); err != nil {
			t.Fatal(err)
		}
	}
	have, _, err := replica.LogRead(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	rebuild := wal.Form{Dialect: uint8(driver.SQLite), SQL: `SAVEPOINT shepherd_rebuild; ` +
		`CREATE TABLE "shepherd_rebuild" ("a" INTEGER PRIMARY KEY, "b" TEXT NOT NULL); ` +
		`INSERT INTO "shepherd_rebuild" ("a", "b") SELECT "a", "b" FROM "t"; ` +
		`PRAGMA defer_foreign_keys = ON; DROP TABLE "t"; ` +
		`CREATE TABLE "t" ("a" INTEGER PRIMARY KEY, "b" TEXT NOT NULL); ` +
		`INSERT INTO "t" ("a", "b") SELECT "a", "b" FROM "shepherd_rebuild"; ` +
		`DROP TABLE "shepherd_rebuild"; PRAGMA defer_foreign_keys = OFF; RELEASE shepherd_rebuild`}
	n, err := Replay(ctx, c, driver.SQLite, ddl(rebuild), have)
	var re *ReplayError
	if n != 0 || !errors.As(err, &re) || re.Barrier != 5 {
		t.Fatalf("SQLite: replayed %d, %v; want 0 and a ReplayError at barrier 5", n, err)
	}
	if got, _, err := replica.LogRead(ctx, c, 0); err != nil || got[5] {
		t.Fatalf("SQLite's log table after the failed replay: %v, %v; want no row for 5", got, err)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: `INSERT INTO "t" VALUES (2, NULL)`, Verb: "INSERT"}); err != nil {
		t.Fatalf("the half-made rebuild was kept: %v", err)
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

// TestReplayWritesBeforeDDL: a logged block with a write before its DDL
// is not replayed to MariaDB, which commits the write with the DDL (a
// replay cut short after the DDL would apply the write again: the
// reviewer saw count(*) = 2); nothing reaches the replica. A block whose
// writes all follow its DDL, and every record on the other dialects,
// replays.
func TestReplayWritesBeforeDDL(t *testing.T) {
	ctx := context.Background()
	st := func(sql string, ddl bool) wal.Statement {
		verb := strings.Join(strings.Fields(sql)[:2], " ")
		return wal.Statement{SQL: sql, Writes: true, DDL: ddl, Verb: verb,
			Forms: []wal.Form{{Dialect: uint8(driver.MySQL), SQL: sql}}}
	}
	before := []wal.Record{{Txn: 1, Barrier: 7, Statements: []wal.Statement{
		st("INSERT INTO t VALUES (1)", false), st("ALTER TABLE t ADD c int", true), st("INSERT INTO t VALUES (2, 2)", false)}}}
	after := []wal.Record{{Txn: 2, Barrier: 8, Statements: []wal.Statement{
		st("ALTER TABLE t ADD c int", true), st("ALTER TABLE t ADD d int", true), st("INSERT INTO t VALUES (2, 2, 2)", false)}}}

	maria := fakeengine.New("maria", driver.Locking, driver.MySQL)
	mc, err := maria.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if n, err := Replay(ctx, mc, driver.MySQL, before, map[uint64]bool{}); n != 0 || !errors.Is(err, ErrWritesBeforeDDL) {
		t.Fatalf("replayed %d, %v; want 0, ErrWritesBeforeDDL", n, err)
	}
	if got := maria.Count(fakeengine.Exec, "INSERT"); got != 0 {
		t.Fatalf("%d INSERTs reached MariaDB, want none", got)
	}
	if n, err := Replay(ctx, mc, driver.MySQL, after, map[uint64]bool{}); n != 1 || err != nil {
		t.Fatalf("DDL first: replayed %d, %v; want 1", n, err)
	}
}
