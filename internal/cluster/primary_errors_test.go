package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestPrimaryErrorVoted (issue 14, item 11): an error the primary gives
// for a statement's own reasons reaches the client only when f
// secondaries give it too. A primary that fails an INSERT the
// secondaries accept is taken out and the client gets 40001, never the
// unbacked 23505; when every replica fails it, the client gets the
// primary's error as it is. In autocommit and in a block, CBS and SS.
func TestPrimaryErrorVoted(t *testing.T) {
	for _, mode := range []coord.Mode{coord.CBS, coord.SS} {
		for _, single := range []bool{true, false} {
			name := mode.String() + "/block"
			if single {
				name = mode.String() + "/autocommit"
			}
			t.Run(name+"/contradicted", func(t *testing.T) {
				defer goleak.VerifyNone(t)
				fc := newFakeCluster(t, Options{Mode: mode, DigestRows: -1})
				defer fc.Close()
				fc.engines[0].On(fakeengine.Exec, "INSERT INTO t").Fail(pgerr.UniqueViolation, "duplicate key value violates unique constraint")
				err := primaryErrorInsert(t, fc, single)
				if code := sqlState(err); code != pgerr.SerializationFailure {
					t.Fatalf("insert failed only on the primary: got %v (%s), want 40001", err, code)
				}
				fc.idle(t)
				if st := fc.Replicas(); st[0].State == "up" || st[0].State == "suspect" {
					t.Errorf("the primary whose error f+1 replicas contradicted is %s, want out", st[0].State)
				}
			})
			t.Run(name+"/confirmed", func(t *testing.T) {
				defer goleak.VerifyNone(t)
				fc := newFakeCluster(t, Options{Mode: mode, DigestRows: -1})
				defer fc.Close()
				for i, e := range fc.engines {
					e.On(fakeengine.Exec, "INSERT INTO t").Fail(pgerr.UniqueViolation, "duplicate key value violates unique constraint on "+fc.Replicas()[i].Name)
				}
				err := primaryErrorInsert(t, fc, single)
				if code := sqlState(err); code != pgerr.UniqueViolation {
					t.Fatalf("insert failed everywhere: got %v (%s), want 23505", err, code)
				}
				// The primary's error itself, as PostgreSQL gave it.
				if pe := (*pgerr.Error)(nil); errors.As(err, &pe) && pe.Message != "duplicate key value violates unique constraint on p" {
					t.Errorf("the client got %q, want the primary's message", pe.Message)
				}
				fc.idle(t)
				for i, st := range fc.Replicas() {
					if st.State != "up" {
						t.Errorf("replica %d is %s after an error every replica gave", i, st.State)
					}
				}
			})
		}
	}
}

// primaryErrorInsert runs an INSERT, alone or after an UPDATE in a block,
// rolls the transaction back, and returns the INSERT's error.
func primaryErrorInsert(t *testing.T, fc *fakeCluster, single bool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := begin(t, fc)
	defer txn.Rollback()
	if single {
		_, err := txn.ExecSingle(ctx, fc.stmt(t, "INSERT INTO t VALUES (1)"), nil)
		return err
	}
	if _, err := txn.Exec(ctx, fc.stmt(t, "UPDATE t SET v = 1"), nil); err != nil {
		t.Fatalf("update: %v", err)
	}
	_, err := txn.Exec(ctx, fc.stmt(t, "INSERT INTO t VALUES (1)"), nil)
	return err
}
