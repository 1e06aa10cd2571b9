package mysql_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestBlockersUnderPolling: a lock wait that starts while Blockers is
// asked again and again (as a lock_timeout watcher and the deadlock check
// of every waiting session do) is seen within a second. InnoDB refreshes
// the tables behind innodb_lock_waits only when nobody read them in the
// last 100 ms: polled faster, they stayed as they were before the wait
// began, and lock_timeout never fired on a MariaDB primary.
func TestBlockersUnderPolling(t *testing.T) {
	e := engine(t)
	lw, ok := e.(driver.LockWaits)
	if !ok {
		t.Fatal("the mysql engine does not implement driver.LockWaits")
	}
	holder, waiter := connect(t, e), connect(t, e)
	for _, s := range []string{"CREATE TABLE lw (id int PRIMARY KEY, n int)", "INSERT INTO lw VALUES (1, 0)"} {
		if _, err := run(holder, "", s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := holder.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(holder, "UPDATE", "UPDATE lw SET n = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	hb, wb := holder.(driver.Backend).Backend(), waiter.(driver.Backend).Backend()

	// The poller asks every 30 ms from before the wait begins.
	seen := make(chan time.Time, 1)
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go func() {
		for pctx.Err() == nil {
			ids, err := lw.Blockers(pctx, wb)
			if err == nil && slices.Contains(ids, hb) {
				seen <- time.Now()
				return
			}
			time.Sleep(30 * time.Millisecond) // the polling rate under test, not a wait for an event
		}
	}()
	time.Sleep(300 * time.Millisecond) // the poller has read the tables before the wait: the rate under test, not a synchronisation
	waitStart := time.Now()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(wctx, driver.Query{SQL: "UPDATE lw SET n = 2 WHERE id = 1", Verb: "UPDATE"})
		waited <- err
	}()
	select {
	case at := <-seen:
		if d := at.Sub(waitStart); d > time.Second {
			t.Errorf("the wait was seen %v after it began, want within 1s", d)
		}
	case err := <-waited:
		t.Fatalf("the waiter ended before its wait was seen: %v", err)
	}
	wcancel()
	if err := <-waited; pgerr.Code(err) != pgerr.QueryCanceled {
		t.Errorf("the waiter: %v, want 57014", err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
