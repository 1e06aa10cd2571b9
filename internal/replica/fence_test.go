package replica_test

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/mysql"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// fenceEngines are the engines a cluster of shepherd nodes shares, each
// with a query counting this database's sessions that wait for a lock.
var fenceEngines = []struct {
	name    string
	open    func(ctx context.Context, t *testing.T) (driver.Engine, error)
	waiting string
}{
	{"postgres", func(ctx context.Context, t *testing.T) (driver.Engine, error) {
		return postgres.Open(ctx, driver.Spec{Name: "pg", DSN: testenv.Postgres(t)})
	}, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"},
	{"mariadb", func(ctx context.Context, t *testing.T) (driver.Engine, error) {
		return mysql.Open(ctx, driver.Spec{Name: "maria", DSN: testenv.MariaDB(t)})
	}, "SELECT count(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id " +
		"WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()"},
}

// TestFenceOrdersCommits runs the fence statements on the real engines,
// at the isolation the replica workers use, in both orders of a deposed
// term's commit and a new term's raise: a commit that checked the fence
// first makes the raise wait for its COMMIT; a commit that checks after
// a raise waits for it and is refused (IsFenced), through the pipelined
// commit the worker uses where the driver has one. A stale raise changes
// nothing, and an older table gains the epoch column without losing its
// rows.
func TestFenceOrdersCommits(t *testing.T) {
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
			conn := func() driver.Conn {
				c, err := e.Connect(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			c0, c1, c2 := conn(), conn(), conn()
			exec := func(c driver.Conn, q driver.Query) int64 {
				t.Helper()
				a, err := c.Exec(ctx, q)
				if err != nil {
					t.Fatalf("%s: %v", q.SQL, err)
				}
				return a.RowsAffected
			}
			sql := func(s string) driver.Query { return driver.Query{SQL: s} }
			query := func(s string) []string {
				t.Helper()
				a, err := c0.Exec(ctx, driver.Query{SQL: s, ReturnsRows: true, Verb: "SELECT"})
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				var out []string
				for _, r := range a.Rows {
					for _, v := range r {
						out = append(out, v.Text)
					}
				}
				return out
			}
			// A replica a single-node shepherd wrote to: its log table has
			// no epoch column yet.
			exec(c0, sql(replica.LogCreate))
			exec(c0, replica.LogInsert(d, 1))
			exec(c0, sql(replica.LogAddEpoch))
			exec(c0, sql(replica.LogAddEpoch)) // again: nothing to do
			exec(c0, sql(replica.FenceCreate))
			exec(c0, replica.FenceInit(d))
			exec(c0, replica.FenceInit(d)) // again: the row stays
			exec(c0, sql("CREATE TABLE d (k INT PRIMARY KEY)"))
			// waitForLockWait returns once one session waits for a lock;
			// it fails if the operation that should wait (finished) ended
			// without waiting.
			waitForLockWait := func(finished <-chan struct{}) {
				t.Helper()
				var last []string
				for {
					n := query(fe.waiting)
					if len(n) == 1 && n[0] == "1" {
						return
					}
					last = n
					select {
					case <-finished:
						t.Fatalf("the operation that had to wait for the fence row's lock went ahead (sessions seen waiting: %v)", last)
					case <-ctx.Done():
						t.Fatal("no session came to wait for the fence row's lock")
					case <-time.After(150 * time.Millisecond):
						// Not sooner: InnoDB refreshes what INNODB_TRX
						// shows only when it was last read over 100 ms
						// ago, so a faster poll reads a stale list for
						// ever (and saw no waiting session for 50 s).
					}
				}
			}

			// 1. Term 1 checks the fence first: term 2's raise waits until
			// term 1's commit is in.
			if err := c1.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			exec(c1, sql("INSERT INTO d VALUES (2)"))
			exec(c1, replica.LogInsertFenced(d, 2, 1))
			raised := make(chan int64, 1)
			raiseDone := make(chan struct{})
			go func() {
				defer close(raiseDone)
				var n int64 = -1
				if err := c2.Begin(ctx, driver.TxOptions{}); err == nil {
					if a, err := c2.Exec(ctx, replica.FenceRaise(d, 2)); err == nil {
						n = a.RowsAffected
					}
				}
				raised <- n
			}()
			waitForLockWait(raiseDone)
			if err := c1.Commit(ctx); err != nil {
				t.Fatalf("term 1's commit, checked before the raise: %v", err)
			}
			if n := <-raised; n != 1 {
				t.Fatalf("the raise changed %d rows, want 1", n)
			}
			if err := c2.Commit(ctx); err != nil {
				t.Fatal(err)
			}

			// 2. Term 3 raises first; term 2's check waits for it and is
			// refused, through the pipelined commit where there is one.
			if err := c2.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := exec(c2, replica.FenceRaise(d, 3)); n != 1 {
				t.Fatalf("raise to 3 changed %d rows", n)
			}
			refused := make(chan error, 1)
			checkDone := make(chan struct{})
			go func() {
				defer close(checkDone)
				err := c1.Begin(ctx, driver.TxOptions{})
				if err == nil {
					_, err = c1.Exec(ctx, sql("INSERT INTO d VALUES (3)"))
				}
				if err == nil {
					q := replica.LogInsertFenced(d, 3, 2)
					if cm, ok := c1.(driver.Committer); ok {
						err = cm.ExecCommit(ctx, q)
					} else if _, err = c1.Exec(ctx, q); err == nil {
						err = c1.Commit(ctx)
					}
				}
				refused <- err
			}()
			waitForLockWait(checkDone)
			if err := c2.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-refused; !replica.IsFenced(err) {
				t.Fatalf("term 2's commit after term 3's raise: %v, want the fence's refusal", err)
			}
			if err := c1.Rollback(ctx); err != nil {
				t.Fatal(err)
			}

			// 3. Term 3 commits; a stale raise and a single-node commit
			// (epoch 0) are refused; a raise to the fence's own epoch counts.
			if err := c2.Begin(ctx, driver.TxOptions{}); err != nil {
				t.Fatal(err)
			}
			exec(c2, sql("INSERT INTO d VALUES (4)"))
			exec(c2, replica.LogInsertFenced(d, 4, 3))
			if err := c2.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := exec(c0, replica.FenceRaise(d, 2)); n != 0 {
				t.Fatalf("a stale raise changed %d rows", n)
			}
			if n := exec(c0, replica.FenceRaise(d, 3)); n != 1 {
				t.Fatalf("a raise to the fence's own epoch changed %d rows, want 1", n)
			}
			if _, err := c0.Exec(ctx, replica.LogInsertFenced(d, 5, 0)); !replica.IsFenced(err) {
				t.Fatalf("a single-node commit on a fenced replica: %v, want the fence's refusal", err)
			}

			if got := query(replica.FenceRead); len(got) != 1 || got[0] != "3" {
				t.Fatalf("fence %v, want 3", got)
			}
			var log []string
			for _, v := range query("SELECT barrier, epoch FROM " + replica.LogTable + " ORDER BY barrier") {
				log = append(log, v)
			}
			if want := []string{"1", "0", "2", "1", "4", "3"}; !equal(log, want) {
				t.Fatalf("log table (barrier, epoch) %v, want %v", log, want)
			}
			if got, want := query("SELECT k FROM d ORDER BY k"), []string{"2", "4"}; !equal(got, want) {
				t.Fatalf("data %v, want %v: a refused commit left rows", got, want)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
