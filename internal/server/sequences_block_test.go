package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// sequenceBlockScript is run by two sessions, A and B (the prefix says
// which), on PostgreSQL 15 and through shepherd; every answer and error
// must be the same. Sequence DDL (CREATE, ALTER, DROP SEQUENCE, a table's
// SERIAL made or dropped with it, TRUNCATE ... RESTART IDENTITY) is
// transactional in PostgreSQL: others do not see it before COMMIT, and
// ROLLBACK undoes it, nextval() calls the block made on what it created
// or restarted included. nextval() of what others see is not undone.
// B's steps are only those PostgreSQL runs without waiting for A's locks.
var sequenceBlockScript = []string{
	// A block that drops a SERIAL table and makes it again numbers the
	// new table's rows from 1.
	"A: CREATE TABLE keep (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO keep (v) VALUES (1), (2), (3)",
	"A: BEGIN",
	"A: DROP TABLE keep",
	"A: CREATE TABLE keep (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO keep (v) VALUES (10) RETURNING id",
	"A: SELECT currval('keep_id_seq')",
	"A: COMMIT",
	"A: INSERT INTO keep (v) VALUES (11) RETURNING id",
	"A: SELECT id, v FROM keep ORDER BY id",
	// A table or column renamed in a block keeps its counter.
	"A: BEGIN",
	"A: ALTER TABLE keep RENAME TO kept",
	"A: INSERT INTO kept (v) VALUES (12) RETURNING id",
	"A: ALTER TABLE kept RENAME COLUMN id TO kid",
	"A: INSERT INTO kept (v) VALUES (13) RETURNING kid",
	"A: COMMIT",
	"B: INSERT INTO kept (v) VALUES (14) RETURNING kid",
	"A: BEGIN",
	"A: CREATE TABLE ren (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO ren (v) VALUES (1) RETURNING id",
	"A: ALTER TABLE ren RENAME TO ren2",
	"A: INSERT INTO ren2 (v) VALUES (2) RETURNING id",
	"A: COMMIT",
	"B: INSERT INTO ren2 (v) VALUES (3) RETURNING id",
	// A table made in a block: its sequence is the block's.
	"B: CREATE TABLE u (id serial PRIMARY KEY, v int)",
	"B: INSERT INTO u (v) VALUES (1) RETURNING id",
	"A: BEGIN",
	"A: CREATE TABLE s (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO s (v) VALUES (1), (2) RETURNING id",
	"A: SELECT nextval('s_id_seq')",
	"B: SELECT nextval('s_id_seq')",
	"B: SELECT nextval('u_id_seq')",
	"A: ROLLBACK",
	"A: SELECT nextval('s_id_seq')",
	"A: CREATE TABLE s (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO s (v) VALUES (1) RETURNING id",
	"B: INSERT INTO u (v) VALUES (2) RETURNING id",
	// TRUNCATE ... RESTART IDENTITY is undone by ROLLBACK.
	"A: CREATE TABLE r (id serial PRIMARY KEY, v int)",
	"A: INSERT INTO r (v) VALUES (1), (2), (3)",
	"A: BEGIN",
	"A: TRUNCATE r RESTART IDENTITY",
	"A: INSERT INTO r (v) VALUES (4) RETURNING id",
	"A: ROLLBACK",
	"A: INSERT INTO r (v) VALUES (5) RETURNING id",
	"A: BEGIN",
	"A: TRUNCATE r RESTART IDENTITY",
	"A: INSERT INTO r (v) VALUES (6) RETURNING id",
	"A: SELECT nextval('r_id_seq')",
	"A: COMMIT",
	"A: INSERT INTO r (v) VALUES (7) RETURNING id",
	"A: SELECT id, v FROM r ORDER BY id",
	"A: BEGIN",
	"A: ALTER SEQUENCE r_id_seq RESTART WITH 50",
	"A: INSERT INTO r (v) VALUES (8) RETURNING id",
	"A: ROLLBACK",
	"A: INSERT INTO r (v) VALUES (9) RETURNING id",
	"A: BEGIN",
	"A: ALTER SEQUENCE r_id_seq RESTART WITH 50",
	"A: INSERT INTO r (v) VALUES (10) RETURNING id",
	"A: COMMIT",
	"B: INSERT INTO r (v) VALUES (11) RETURNING id",
	// A named sequence made in a block is the block's until COMMIT.
	"A: BEGIN",
	"A: CREATE SEQUENCE n START 5",
	"A: SELECT nextval('n')",
	"B: SELECT nextval('n')",
	"B: CREATE SEQUENCE other",
	"A: COMMIT",
	"B: SELECT nextval('n')",
	"A: BEGIN",
	"A: CREATE SEQUENCE gone",
	"A: SELECT nextval('gone')",
	"A: ROLLBACK",
	"B: SELECT nextval('gone')",
	"A: CREATE SEQUENCE gone",
	"A: SELECT nextval('gone')",
	// RESTART in a block: the block's nextval() calls go with it.
	"A: BEGIN",
	"A: ALTER SEQUENCE n RESTART WITH 100",
	"A: SELECT nextval('n'), nextval('n')",
	"A: ROLLBACK",
	"A: SELECT nextval('n')",
	"A: BEGIN",
	"A: ALTER SEQUENCE n RESTART WITH 100",
	"A: SELECT nextval('n')",
	"A: COMMIT",
	"B: SELECT nextval('n')",
	// Savepoints: ROLLBACK TO undoes what was made after it, not the
	// nextval() calls on what was made before it.
	"A: BEGIN",
	"A: CREATE SEQUENCE sp",
	"A: SAVEPOINT a",
	"A: SELECT nextval('sp')",
	"A: CREATE SEQUENCE sp2",
	"A: ROLLBACK TO SAVEPOINT a",
	"A: SELECT nextval('sp')",
	"A: SELECT nextval('sp2')",
	"A: ROLLBACK",
	"A: BEGIN",
	"A: CREATE TABLE spt (id serial PRIMARY KEY, v int)",
	"A: SAVEPOINT a",
	"A: INSERT INTO spt (v) VALUES (1) RETURNING id",
	"A: ROLLBACK TO SAVEPOINT a",
	"A: INSERT INTO spt (v) VALUES (2) RETURNING id",
	"A: SAVEPOINT b",
	"A: TRUNCATE spt RESTART IDENTITY",
	"A: INSERT INTO spt (v) VALUES (3) RETURNING id",
	"A: ROLLBACK TO SAVEPOINT b",
	"A: INSERT INTO spt (v) VALUES (4) RETURNING id",
	"A: COMMIT",
	"A: SELECT id, v FROM spt ORDER BY id",
	// Dropped in a block and made again: a new sequence.
	"A: BEGIN",
	"A: DROP SEQUENCE n",
	"A: SELECT nextval('n')",
	"A: ROLLBACK",
	"A: BEGIN",
	"A: DROP SEQUENCE n",
	"A: CREATE SEQUENCE n",
	"A: SELECT nextval('n')",
	"A: COMMIT",
	"B: SELECT nextval('n')",
	// A SERIAL table's sequence made in a block and used by setval.
	"A: BEGIN",
	"A: CREATE TABLE w (id serial PRIMARY KEY, v int)",
	"A: SELECT setval('w_id_seq', 40)",
	"A: INSERT INTO w (v) VALUES (1) RETURNING id",
	"A: COMMIT",
	"B: INSERT INTO w (v) VALUES (2) RETURNING id",
}

// TestSequenceBlocksAsPostgres runs sequenceBlockScript on PostgreSQL 15
// and through shepherd (embedded: DDL in a block needs replicas that
// take it there) and compares every answer and error.
func TestSequenceBlocksAsPostgres(t *testing.T) {
	ctx := context.Background()
	addr, _ := start(t, embedded(t))
	dsn := testenv.Postgres(t)
	conns := map[string][2]*pgx.Conn{}
	for _, name := range []string{"A", "B"} {
		pc, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		// A step PostgreSQL would wait on fails instead of hanging.
		pc.RuntimeParams["lock_timeout"] = "5000"
		alone, err := pgx.ConnectConfig(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { alone.Close(ctx) })
		conns[name] = [2]*pgx.Conn{alone, connect(t, addr, "app")}
	}
	for _, step := range sequenceBlockScript {
		who, q, _ := strings.Cut(step, ": ")
		c := conns[who]
		want := seqRun(ctx, c[0], q)
		got := seqRun(ctx, c[1], q)
		if want != got {
			t.Errorf("%s:\n  PostgreSQL: %s\n  shepherd:   %s", step, want, got)
		}
	}
}

// TestSequenceBlockNoReissue: a block's sequence DDL rolled back after
// other sessions drew values from the sequence never makes shepherd hand
// those values out again. (PostgreSQL makes the others wait for the
// block instead; shepherd lets them draw from the sequence as committed.)
// On the embedded default and on a MariaDB + PostgreSQL + SQLite CBS
// cluster (sequence DDL reaches no replica).
func TestSequenceBlockNoReissue(t *testing.T) {
	for _, setup := range []string{"embedded", "cbs"} {
		t.Run(setup, func(t *testing.T) {
			ctx := context.Background()
			cfg := embedded(t)
			if setup == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, _ := start(t, cfg)
			a, b := connect(t, addr, "app"), connect(t, addr, "app")
			mustExec(t, a, "CREATE SEQUENCE q")
			seen := map[int64]string{}
			draw := func(c *pgx.Conn, who string) {
				t.Helper()
				var v int64
				if err := c.QueryRow(ctx, "SELECT nextval('q')").Scan(&v); err != nil {
					t.Fatalf("%s: nextval: %v", who, err)
				}
				if prev, ok := seen[v]; ok {
					t.Errorf("%s: nextval('q') gave %d again (first to %s)", who, v, prev)
				}
				seen[v] = who
			}
			draw(b, "B before")
			for _, alter := range []string{"ALTER SEQUENCE q MAXVALUE 100000", "ALTER SEQUENCE q INCREMENT 1", "DROP SEQUENCE q"} {
				for _, end := range []string{"ROLLBACK", "COMMIT"} {
					if alter == "DROP SEQUENCE q" && end == "COMMIT" {
						continue
					}
					mustExec(t, a, "BEGIN")
					mustExec(t, a, alter)
					for i := 0; i < 3; i++ {
						draw(b, "B during "+alter)
					}
					if alter != "DROP SEQUENCE q" {
						draw(a, "A in "+alter)
					}
					mustExec(t, a, end)
					draw(b, "B after "+alter+" "+end)
					draw(a, "A after "+alter+" "+end)
				}
			}
			// A block that turned the sequence's direction would draw
			// values others draw too: refused, naming the construct.
			mustExec(t, a, "CREATE SEQUENCE dir")
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "ALTER SEQUENCE dir INCREMENT -1 MINVALUE -100")
			if _, err := a.Exec(ctx, "SELECT nextval('dir')"); sqlstate(err) != "0A000" || !strings.Contains(err.Error(), "INCREMENT") {
				t.Errorf("nextval after the block turned the direction: %v, want 0A000 naming ALTER SEQUENCE ... INCREMENT", err)
			}
			mustExec(t, a, "ROLLBACK")
			// Sequence DDL and a statement using it in one query string.
			res, err := a.PgConn().Exec(ctx, "CREATE SEQUENCE multi START 3; SELECT nextval('multi')").ReadAll()
			if err != nil || len(res) != 2 || len(res[1].Rows) != 1 || string(res[1].Rows[0][0]) != "3" {
				t.Errorf("CREATE SEQUENCE and nextval in one string: %v, %v; want 3", res, err)
			}
		})
	}
}

// TestSequenceBlockCrash: shepherd's catalog file, read while a block
// that made, changed and dropped sequences is open (what a start-up after
// a crash there would find), holds none of the block's changes.
func TestSequenceBlockCrash(t *testing.T) {
	ctx := context.Background()
	cfg := embedded(t)
	addr, _ := start(t, cfg)
	a := connect(t, addr, "app")
	mustExec(t, a, "CREATE SEQUENCE kept START 10")
	mustExec(t, a, "CREATE SEQUENCE dropped")
	mustExec(t, a, "CREATE TABLE t (id serial PRIMARY KEY, v int)")
	mustExec(t, a, "INSERT INTO t (v) VALUES (1)")
	for _, q := range []string{
		"BEGIN",
		"CREATE SEQUENCE fresh",
		"SELECT nextval('fresh')",
		"ALTER SEQUENCE kept INCREMENT 7 RESTART WITH 500",
		"SELECT nextval('kept')",
		"DROP SEQUENCE dropped",
		"CREATE TABLE blockt (id serial PRIMARY KEY, v int)",
		"INSERT INTO blockt (v) VALUES (1)",
	} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := schema.Open(filepath.Join(dir, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap := cat.Snapshot()
	if snap.Sequence("fresh") != nil {
		t.Errorf("the block's CREATE SEQUENCE fresh is in the catalog file before COMMIT")
	}
	if snap.Sequence("dropped") == nil {
		t.Errorf("the block's DROP SEQUENCE dropped is in the catalog file before COMMIT")
	}
	if q := snap.Sequence("kept"); q == nil || q.Increment != 1 {
		t.Errorf("the block's ALTER SEQUENCE kept is in the catalog file before COMMIT: %+v", q)
	} else if v, err := cat.SeqNext("kept"); err != nil || v >= 500 {
		t.Errorf("nextval('kept') after a crash in the block: %d, %v; want the old numbering", v, err)
	}
	// The table made in the block starts at 1 if made again after the
	// crash (its counter is not in the file).
	if v, err := cat.Next("blockt", "id", 1); err != nil || v != 1 {
		t.Errorf("blockt's counter after a crash in the block: %d, %v; want 1", v, err)
	}
	mustExec(t, a, "COMMIT")
	// In this order: the count reads the INSERT's row.
	for _, c := range []struct{ q, want string }{
		{"SELECT nextval('fresh')", "2"},
		{"SELECT nextval('kept')", "507"},
		{"SELECT nextval('dropped')", `ERROR: relation "dropped" does not exist (SQLSTATE 42P01)`},
		{"INSERT INTO blockt (v) VALUES (2) RETURNING id", "2"},
		{"SELECT count(*) FROM blockt WHERE v IS NOT NULL", "2"},
	} {
		q, want := c.q, c.want
		var got string
		if err := a.QueryRow(ctx, q).Scan(&got); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s after COMMIT: %s, want %s", q, got, want)
		}
	}
}

// TestSequenceRestartedInBlockHeld: while a block has restarted a
// committed sequence (ALTER SEQUENCE ... RESTART, TRUNCATE ... RESTART
// IDENTITY), another session's nextval() of it fails with 55P03 instead
// of drawing from the committed state, which handed out a value the
// block gave too (the review saw 3 twice: the block's after RESTART
// WITH 3, and the other session's). PostgreSQL makes it wait; after the
// block's COMMIT both go on from the block's state, as on PostgreSQL.
func TestSequenceRestartedInBlockHeld(t *testing.T) {
	addr, _ := start(t, embedded(t))
	ctx := context.Background()
	a, b := connect(t, addr, "app"), connect(t, addr, "app")
	mustExec(t, a, "CREATE SEQUENCE hs")
	mustExec(t, a, "CREATE TABLE ht (id serial PRIMARY KEY, v int)")
	mustExec(t, a, "INSERT INTO ht (v) VALUES (1), (2), (3)")
	next := func(c *pgx.Conn, q string) (int64, error) {
		var v int64
		err := c.QueryRow(ctx, q).Scan(&v)
		return v, err
	}
	if v, err := next(a, "SELECT nextval('hs')"); err != nil || v != 1 {
		t.Fatalf("nextval: %d %v", v, err)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER SEQUENCE hs RESTART WITH 3")
	mustExec(t, a, "TRUNCATE ht RESTART IDENTITY")
	if v, err := next(a, "SELECT nextval('hs')"); err != nil || v != 3 {
		t.Fatalf("the block's nextval: %d %v, want 3", v, err)
	}
	if _, err := next(b, "SELECT nextval('hs')"); sqlstate(err) != "55P03" {
		t.Errorf("another session's nextval while the block restarted it: %v, want 55P03", err)
	}
	if _, err := next(b, "INSERT INTO ht (v) VALUES (9) RETURNING id"); sqlstate(err) != "55P03" {
		t.Errorf("another session's INSERT into the truncated SERIAL table: %v, want 55P03", err)
	}
	mustExec(t, a, "COMMIT")
	if v, err := next(b, "SELECT nextval('hs')"); err != nil || v != 4 {
		t.Errorf("nextval after the block's COMMIT: %d %v, want 4", v, err)
	}
	if v, err := next(b, "INSERT INTO ht (v) VALUES (9) RETURNING id"); err != nil || v != 1 {
		t.Errorf("INSERT after the block's COMMIT: id %d %v, want 1", v, err)
	}
}
