package pgcatalog

import (
	"context"
	"errors"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestQueryLimits: the engine answers one catalog query at a time, so a
// hostile one (pg_class crossed with itself) must not run or grow
// without bound while every other session's catalog queries wait. One
// that runs past the engine's time limit, or whose answer passes its
// size limit, fails with 54000 naming the limit; one whose client
// cancels fails with 57014; the engine answers the next query as before.
func TestQueryLimits(t *testing.T) {
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	stuck := false // a query still runs: Close would wait for it
	defer func() {
		if !stuck {
			e.Close()
		}
	}()
	e.timeout, e.maxBytes = 300*time.Millisecond, 1<<20
	snap := snapshotOf(t, testDDL)
	// ask runs sql; a query still running after a minute (far beyond the
	// limit) fails the test rather than hanging it.
	ask := func(ctx context.Context, sql string) (*answer.Answer, error) {
		t.Helper()
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			a   *answer.Answer
			err error
		}
		done := make(chan result, 1)
		go func() {
			a, err := e.Query(ctx, tree.Stmts[0].Stmt, nil, snap, Session{User: "app"})
			done <- result{a, err}
		}()
		select {
		case r := <-done:
			return r.a, r.err
		case <-time.After(time.Minute):
			stuck = true
			t.Fatalf("%s: still running after a minute", sql)
			return nil, nil
		}
	}
	code := func(err error) string {
		var pe *pgerr.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		return ""
	}
	const cross = " FROM pg_class a, pg_class b, pg_class c, pg_class d, pg_class e"
	for _, c := range []struct{ name, sql string }{
		// All the work before the first row.
		{"count", "SELECT count(*)" + cross},
		// The first row at once, the next one after all the work: the
		// limit holds between rows too.
		{"second row", "SELECT 1 AS x UNION ALL SELECT count(*)" + cross},
	} {
		if _, err := ask(context.Background(), c.sql); code(err) != pgerr.ProgramLimitExceeded {
			t.Errorf("%s: %v, want 54000 (the time limit)", c.name, err)
		}
	}
	// An answer past the size limit: rows cheap to make, but many.
	if _, err := ask(context.Background(), "SELECT a.relname, b.relname, c.relname FROM pg_class a, pg_class b, pg_class c"); code(err) != pgerr.ProgramLimitExceeded {
		t.Errorf("a large answer: %v, want 54000 (the size limit)", err)
	}
	// The client's cancel.
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(50*time.Millisecond, cancel)
	defer stop.Stop()
	e.timeout = time.Hour
	if _, err := ask(ctx, "SELECT count(*)"+cross); code(err) != pgerr.QueryCanceled {
		t.Errorf("cancelled: %v, want 57014", err)
	}
	// The engine goes on; answers in order are kept.
	e.timeout = 300 * time.Millisecond
	a, err := ask(context.Background(), "SELECT relname FROM pg_class WHERE relnamespace = 2200 ORDER BY relname DESC")
	if err != nil || len(a.Rows) != 7 || a.Rows[0][0].Text != "b_pkey" || a.Rows[6][0].Text != "a" {
		t.Fatalf("a query after the limits: %+v, %v", a, err)
	}
}
