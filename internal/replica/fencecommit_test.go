package replica_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/replica"
)

// TestWorkerCommitFenced runs commits through a manager on the real
// engines: a commit of a term below the replica's fence fails as the
// node's lost term and leaves no row; a commit of the fence's term lands
// with its log row and epoch.
func TestWorkerCommitFenced(t *testing.T) {
	for _, fe := range fenceEngines {
		t.Run(fe.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			e, err := fe.open(ctx, t)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			d := e.Dialect()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, q := range []driver.Query{
				{SQL: replica.LogCreate}, {SQL: replica.LogAddEpoch}, {SQL: replica.FenceCreate}, replica.FenceInit(d), replica.FenceRaise(d, 2),
				{SQL: "CREATE TABLE t (a INT)"},
			} {
				if _, err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q.SQL, err)
				}
			}
			results := make(chan replica.Result, 8)
			m := replica.New(0, "r", e, slog.Default(), func(r replica.Result) { results <- r })
			defer m.Close()
			commit := func(txn coord.TxnID, epoch, barrier uint64) replica.Result {
				m.SetEpoch(epoch)
				m.Submit(replica.Task{Op: coord.Op{Txn: txn, Kind: coord.OpStmt}, Query: driver.Query{SQL: "INSERT INTO t VALUES (1)", Verb: "INSERT"}})
				if r := <-results; r.Err != nil {
					t.Fatalf("insert: %v", r.Err)
				}
				m.Submit(replica.Task{Op: coord.Op{Txn: txn, Kind: coord.OpCommit}, Barrier: barrier})
				return <-results
			}
			if r := commit(1, 1, 10); !replica.IsLostTerm(r.Err) {
				t.Fatalf("commit at epoch 1 under fence 2: %v, want the lost term", r.Err)
			}
			if r := commit(2, 2, 11); r.Err != nil {
				t.Fatalf("commit at epoch 2: %v", r.Err)
			}
			a, err := c.Exec(ctx, driver.Query{SQL: "SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM " + replica.LogTable + "), (SELECT max(epoch) FROM " + replica.LogTable + ")", ReturnsRows: true, Verb: "SELECT"})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Rows[0][0].Text + " " + a.Rows[0][1].Text + " " + a.Rows[0][2].Text; got != "1 1 2" {
				t.Fatalf("rows, log rows, epoch: %s, want 1 1 2", got)
			}
		})
	}
}
