package session

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// TestAdmissionLockHolder: with max_transactions 1, A holds a
// session-level advisory lock between transactions; B holds the one slot
// in its block and waits for A's lock. A's next statement is admitted
// past the cap (it would otherwise wait for B's slot while B waits for
// its lock, until a timeout), and once A lets go B goes on.
func TestAdmissionLockHolder(t *testing.T) {
	e := fakeengine.New("p", driver.Locking, driver.Postgres)
	c := cluster.New(cluster.Options{Mode: coord.Passthrough, MaxTransactions: 1, ProbeInterval: -1},
		[]cluster.Replica{{Name: "p", Engine: e}})
	t.Cleanup(c.Close)
	cache := sqlan.NewCache(16, map[driver.Dialect][]string{driver.Postgres: {"p"}}, nil)
	shared := NewShared()
	a := New(c, cache, shared, pgwire.StartupInfo{User: "u", Database: "d"})
	b := New(c, cache, shared, pgwire.StartupInfo{User: "u", Database: "d"})
	t.Cleanup(func() {
		a.Close(context.Background())
		b.Close(context.Background())
	})
	query(t, a, "CREATE TABLE r (id int PRIMARY KEY)")
	query(t, a, "SELECT pg_advisory_lock(1)")
	query(t, b, "BEGIN")
	query(t, b, "INSERT INTO r VALUES (1)")
	if held, _ := c.Admitted(); held != 1 {
		t.Fatalf("%d slots held, want B's 1", held)
	}
	done := make(chan error, 1)
	go func() {
		if err := exec(b, "SELECT pg_advisory_lock(1)"); err != nil {
			done <- err
			return
		}
		done <- exec(b, "COMMIT")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Query(ctx, "INSERT INTO r VALUES (2)", func(*answer.Answer) error { return nil }); err != nil {
		t.Fatalf("A, holding the lock B waits for: %v", err)
	}
	query(t, a, "SELECT pg_advisory_unlock(1)")
	if err := <-done; err != nil {
		t.Fatalf("B: %v", err)
	}
}
