package duckdb_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestSavepoints: DuckDB has no savepoints, and a failed statement aborts
// its whole transaction; the driver gives SAVEPOINT, RELEASE and ROLLBACK
// TO PostgreSQL's meaning by running the transaction again up to the
// savepoint (see savepoint.go). A ROLLBACK TO undoes what came after the
// savepoint and keeps what came before, also after a failed statement
// (PostgreSQL's way on from an error); after the failure and before it,
// statements fail; RELEASE forgets a savepoint and those after it.
func TestSavepoints(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "sp.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx := context.Background()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	step := func(sql, wantCode string) {
		t.Helper()
		err := exec(t, c, strings.Fields(sql)[0], sql)
		if pgerr.Code(err) != wantCode && !(wantCode == "" && err == nil) {
			t.Fatalf("%s: %v, want %q", sql, err, wantCode)
		}
	}
	ids := func() []string {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		a, err := c.Exec(cctx, driver.Query{SQL: "SELECT id FROM t ORDER BY id", Verb: "SELECT", ReturnsRows: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range a.Rows {
			out = append(out, r[0].Text)
		}
		return out
	}
	step("CREATE TABLE t (id int PRIMARY KEY)", "")
	step(`SAVEPOINT "a"`, pgerr.NoActiveSQLTransaction)
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	step("INSERT INTO t VALUES (1)", "")
	step(`SAVEPOINT "a"`, "")
	step("INSERT INTO t VALUES (2)", "")
	step(`SAVEPOINT "b"`, "")
	step("INSERT INTO t VALUES (3)", "")
	if got := ids(); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("before ROLLBACK TO: %q", got)
	}
	step(`ROLLBACK TO SAVEPOINT "b"`, "")
	if got := ids(); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after ROLLBACK TO b: %q", got)
	}
	// A failed statement: DuckDB aborted the transaction; the driver
	// fails what follows until ROLLBACK TO.
	step("INSERT INTO t VALUES (1)", pgerr.UniqueViolation)
	step("INSERT INTO t VALUES (4)", pgerr.SerializationFailure)
	step(`SAVEPOINT "c"`, pgerr.SerializationFailure)
	step(`ROLLBACK TO SAVEPOINT "b"`, "")
	step("INSERT INTO t VALUES (4)", "")
	if got := ids(); !slices.Equal(got, []string{"1", "2", "4"}) {
		t.Fatalf("after the failure and ROLLBACK TO b: %q", got)
	}
	// ROLLBACK TO keeps the savepoint; RELEASE forgets it and those
	// after it.
	step(`ROLLBACK TO SAVEPOINT "b"`, "")
	step(`RELEASE SAVEPOINT "a"`, "")
	step(`ROLLBACK TO SAVEPOINT "b"`, "3B001")
	step(`ROLLBACK TO SAVEPOINT "a"`, "3B001")
	// An unknown savepoint is an error of its own; the transaction goes
	// on (the session fails the block, as PostgreSQL does).
	step("INSERT INTO t VALUES (5)", "")
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"1", "2", "5"}) {
		t.Fatalf("committed: %q", got)
	}
	// The same names again in the next transaction: the log starts anew.
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	step(`SAVEPOINT "a"`, "")
	step("DELETE FROM t WHERE id = 5", "")
	step(`SAVEPOINT "a"`, "")
	step("DELETE FROM t WHERE id = 2", "")
	step(`ROLLBACK TO SAVEPOINT "a"`, "") // the latest "a"
	if got := ids(); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("after ROLLBACK TO the latest a: %q", got)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"1", "2", "5"}) {
		t.Fatalf("rolled back: %q", got)
	}
}

// TestSavepointReplayDiffers: a statement that answers otherwise when the
// driver runs the transaction again for ROLLBACK TO fails it with XX000,
// the replica's own error, and leaves the transaction failed; nothing is
// answered as if it had worked. (shepherd pins random() before a replica
// sees it; here it stands for any replica that goes astray.)
func TestSavepointReplayDiffers(t *testing.T) {
	e := open(t, driver.Spec{Name: "duck", DSN: "spr.duckdb", DataDir: t.TempDir()})
	defer e.Close()
	ctx := context.Background()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: "SELECT random()", Verb: "SELECT", ReturnsRows: true}); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`SAVEPOINT "a"`, `ROLLBACK TO SAVEPOINT "a"`, "SELECT 1"} {
		err := exec(t, c, strings.Fields(sql)[0], sql)
		want := map[string]string{`SAVEPOINT "a"`: "", `ROLLBACK TO SAVEPOINT "a"`: pgerr.InternalError, "SELECT 1": pgerr.SerializationFailure}[sql]
		if pgerr.Code(err) != want && !(want == "" && err == nil) {
			t.Fatalf("%s: %v, want %q", sql, err, want)
		}
	}
	if err := c.Commit(ctx); pgerr.Code(err) != pgerr.SerializationFailure {
		t.Fatalf("COMMIT: %v, want 40001", err)
	}
}
