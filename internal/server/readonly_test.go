package server

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestReadOnlyTransactionEmbedded: in a read-only transaction (BEGIN READ
// ONLY, or default_transaction_read_only), writes and DDL fail with 25006
// and PostgreSQL's message on the embedded default too, whose SQLite
// replicas do not enforce read-only (they wrote the row); reads run.
func TestReadOnlyTransactionEmbedded(t *testing.T) {
	addr, _ := start(t, embedded(t))
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE ro (id int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO ro VALUES (1, 'one')")
	for _, s := range []struct{ sql, msg string }{
		{"INSERT INTO ro VALUES (2, 'two')", "cannot execute INSERT in a read-only transaction"},
		{"UPDATE ro SET v = 'uno'", "cannot execute UPDATE in a read-only transaction"},
		{"DELETE FROM ro", "cannot execute DELETE in a read-only transaction"},
		{"CREATE TABLE ro2 (id int)", "cannot execute CREATE TABLE in a read-only transaction"},
		{"TRUNCATE ro", "cannot execute TRUNCATE TABLE in a read-only transaction"},
	} {
		mustExec(t, c, "BEGIN READ ONLY")
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM ro").Scan(&n); err != nil || n != 1 {
			t.Fatalf("read in a read-only transaction: %d, %v", n, err)
		}
		_, err := c.Exec(ctx, s.sql, pgx.QueryExecModeSimpleProtocol)
		if sqlstate(err) != "25006" || err.(interface{ Error() string }).Error() != "ERROR: "+s.msg+" (SQLSTATE 25006)" {
			t.Errorf("%s: %v; want 25006 %q", s.sql, err, s.msg)
		}
		mustExec(t, c, "ROLLBACK")
	}
	mustExec(t, c, "SET default_transaction_read_only = on")
	if _, err := c.Exec(ctx, "INSERT INTO ro VALUES (3, 'three')"); sqlstate(err) != "25006" {
		t.Errorf("INSERT with default_transaction_read_only: %v; want 25006", err)
	}
	mustExec(t, c, "SET default_transaction_read_only = off")
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM ro").Scan(&n); err != nil || n != 1 {
		t.Errorf("after the read-only transactions: %d rows, %v; want 1", n, err)
	}
	assertReplicas(t, addr, 3)
}
