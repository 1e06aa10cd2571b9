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

// TestBlockersStaleAfterEnd: once a wait has ended, Blockers does not
// report it. A read InnoDB's lock waits older than the call (the latest
// one, kept up to lockWaitsGap to spare InnoDB's cache) made the
// lock_timeout watcher count a wait that had ended and the deadlock check
// build a cycle from an ended edge.
func TestBlockersStaleAfterEnd(t *testing.T) {
	e := engine(t)
	lw := e.(driver.LockWaits)
	holder, waiter := connect(t, e), connect(t, e)
	for _, s := range []string{"CREATE TABLE lw2 (id int PRIMARY KEY, n int)", "INSERT INTO lw2 VALUES (1, 0)"} {
		if _, err := run(holder, "", s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := holder.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(holder, "UPDATE", "UPDATE lw2 SET n = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	hb, wb := holder.(driver.Backend).Backend(), waiter.(driver.Backend).Backend()
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, driver.Query{SQL: "UPDATE lw2 SET n = 2 WHERE id = 1", Verb: "UPDATE"})
		waited <- err
	}()
	for {
		ids, err := lw.Blockers(ctx, wb)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, hb) {
			break
		}
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	// Right away: the latest read, which saw the wait, is younger than
	// lockWaitsGap.
	ids, err := lw.Blockers(ctx, wb)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ids, hb) {
		t.Errorf("after the waiter's statement returned, Blockers still says it waits for the holder")
	}
	// A read that started before a not-before time is not used either.
	ids, err = lw.Blockers(driver.WithNotBefore(ctx, time.Now()), wb)
	if err != nil || slices.Contains(ids, hb) {
		t.Errorf("Blockers with a not-before time = %v, %v; want no holder", ids, err)
	}
}

// TestBlockersEnginesShareServer: engines on one server (each database
// CREATE DATABASE makes opens its own) read InnoDB's lock waits together
// at most every lockWaitsGap: each on its own, polling out of phase, they
// read more often than InnoDB's 100 ms idle rule allows a refresh, and a
// new wait was never seen.
func TestBlockersEnginesShareServer(t *testing.T) {
	e := engine(t)
	lw := e.(driver.LockWaits)
	var others []driver.LockWaits
	for range 7 {
		others = append(others, engine(t).(driver.LockWaits))
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
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	for i, o := range others {
		go func() {
			time.Sleep(time.Duration(30*(i+1)) * time.Millisecond) // out of phase: the polling pattern under test
			for pctx.Err() == nil {
				o.Blockers(pctx, 1)
				time.Sleep(30 * time.Millisecond) // the polling rate under test
			}
		}()
	}
	seen := make(chan time.Time, 1)
	go func() {
		for pctx.Err() == nil {
			ids, err := lw.Blockers(pctx, wb)
			if err == nil && slices.Contains(ids, hb) {
				seen <- time.Now()
				return
			}
			time.Sleep(30 * time.Millisecond) // the polling rate under test
		}
	}()
	time.Sleep(400 * time.Millisecond) // every poller has read before the wait: the pattern under test, not a synchronisation
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
		t.Logf("seen after %v", at.Sub(waitStart))
	case err := <-waited:
		t.Errorf("the waiter ended (%v) after %v before its wait was seen", err, time.Since(waitStart))
	}
	wcancel()
	holder.Rollback(ctx)
}
