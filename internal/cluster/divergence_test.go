package cluster

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestLosingWriteNeverCommits: a replica that fails a write the others
// agreed on (an engine that refuses what PostgreSQL accepts, a bug, a
// lie) must not commit the rest of that transaction: on MariaDB and
// SQLite a failed statement leaves the transaction open, and committing
// it would leave that replica silently without the write. The client's
// COMMIT succeeds on the f+1 that agree; the loser is rolled back and
// taken out, in every mode.
func TestLosingWriteNeverCommits(t *testing.T) {
	for _, mode := range []coord.Mode{coord.CBS, coord.SS, coord.Serial} {
		t.Run(mode.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			fc := newFakeCluster(t, Options{Mode: mode, DigestRows: -1})
			defer fc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			loser := fc.engines[2]
			loser.On(fakeengine.Exec, "INSERT INTO t").Fail(pgerr.UniqueViolation, "duplicate key value violates unique constraint")
			txn := begin(t, fc)
			if _, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 1"), nil); err != nil {
				t.Fatalf("update: %v", err)
			}
			if _, err := txn.Exec(ctx, fc.stmt(t, "INSERT INTO t VALUES (1)"), nil); err != nil {
				t.Fatalf("insert: %v (p and s1 agree on success)", err)
			}
			if err := txn.Commit(ctx); err != nil {
				t.Fatalf("commit: %v", err)
			}
			fc.idle(t)
			if n := loser.Count(fakeengine.Commit, ""); n != 0 {
				t.Errorf("the replica that failed the insert committed the transaction without it")
			}
			if st := fc.Replicas(); st[2].State == "up" || st[2].State == "suspect" {
				t.Errorf("the replica that lost a write vote is %s, want out", st[2].State)
			}
		})
	}
}
