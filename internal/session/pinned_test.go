package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// TestPinnedCommitCatalogFollowsOutcome: the primary speaks MariaDB's
// dialect, so it commits CREATE TABLE as it runs it; both secondaries are
// held back, and the client gives up during COMMIT. It gets 57014 at
// once, and the transaction goes on (it is pinned). The schema catalog
// must follow what then happens, not record the table at once with no
// barrier: if the secondaries refuse the DDL, the transaction rolls back
// (the primary is retired) and the catalog must not hold a table no
// replica in use has; if it commits, the catalog holds the table with
// the transaction's log barrier, so that the next start does not apply
// it from the log a second time.
func TestPinnedCommitCatalogFollowsOutcome(t *testing.T) {
	for _, refused := range []bool{false, true} {
		name := "commits"
		if refused {
			name = "refused"
		}
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			dir := t.TempDir()
			p := fakeengine.New("p", driver.Locking, driver.MySQL)
			s1 := fakeengine.New("s1", driver.Locking, driver.Postgres)
			s2 := fakeengine.New("s2", driver.Locking, driver.Postgres)
			held := fakeengine.NewLatch()
			defer held.Release()
			for _, e := range []*fakeengine.Engine{s1, s2} {
				r := e.On(fakeengine.Exec, "CREATE TABLE child").Block(held)
				if refused {
					r.Fail(pgerr.DuplicateTable, `relation "child" already exists`)
				}
			}
			w, _, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cat, err := schema.Open(filepath.Join(dir, "catalog.json"))
			if err != nil {
				t.Fatal(err)
			}
			cache := sqlan.NewCache(16, map[driver.Dialect][]string{driver.MySQL: {"p"}, driver.Postgres: {"s1", "s2"}}, cat)
			c := cluster.New(cluster.Options{Mode: coord.CBS, F: 1, WAL: w, Base: 1, Cache: cache, Tick: time.Millisecond,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
				[]cluster.Replica{{Name: "p", Engine: p}, {Name: "s1", Engine: s1}, {Name: "s2", Engine: s2}})
			defer w.Close()
			defer c.Close()
			s := New(c, cache, nil, pgwire.StartupInfo{User: "u", Database: "d"})
			defer s.Close(context.Background())

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- s.Query(ctx, "CREATE TABLE child (a int)", func(*answer.Answer) error { return nil })
			}()
			<-held.Reached() // the primary ran it; the secondaries wait
			cancel()
			var pe *pgerr.Error
			if err := <-done; !errors.As(err, &pe) || pe.Code != pgerr.QueryCanceled {
				t.Fatalf("the client's cancelled CREATE TABLE: %v, want 57014", err)
			}
			if cat.Snapshot().Table("child") != nil {
				t.Errorf("the catalog holds the table before the transaction's outcome is known")
			}
			held.Release()
			idle, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			if err := c.Idle(idle); err != nil {
				t.Fatal(err)
			}

			if refused {
				if cat.Snapshot().Table("child") != nil {
					t.Errorf("the catalog holds table child, which the transaction that was refused created")
				}
				if st := c.Replicas()[0]; st.State != "retired" {
					t.Errorf("p, which holds the DDL the others rolled back, is %s, want retired", st.State)
				}
				return
			}
			records, err := w.ReadFrom(0)
			if err != nil || len(records) != 1 {
				t.Fatalf("log: %d records (%v), want the CREATE TABLE's", len(records), err)
			}
			if cat.Snapshot().Table("child") == nil {
				t.Errorf("the catalog lacks table child, which committed")
			}
			if b := records[0].Barrier; !cat.Mark().Holds(b) {
				t.Errorf("the catalog does not record barrier %d, the CREATE TABLE's: the next start would apply it again (mark %+v)", b, cat.Mark())
			}
		})
	}
}
