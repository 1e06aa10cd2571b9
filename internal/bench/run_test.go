package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// fakeConn is a session that runs nothing: the fake workload's
// transactions only look at which session they were given.
type fakeConn struct {
	id     int
	closed *atomic.Int64
}

func (c *fakeConn) Begin(context.Context) (pgx.Tx, error) { return nil, errors.New("fake") }
func (c *fakeConn) BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error) {
	return nil, errors.New("fake")
}
func (c *fakeConn) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.NewCommandTag("SELECT 1"), nil
}
func (c *fakeConn) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("fake")
}
func (c *fakeConn) QueryRow(context.Context, string, ...any) pgx.Row { return nil }
func (c *fakeConn) Close(context.Context) error                      { c.closed.Add(1); return nil }

// fakeWorkload draws "ok" transactions, and every third one "flaky",
// which is aborted twice with 40001 on each session before it commits;
// with fatal set, the tenth transaction of client 0 fails for good.
type fakeWorkload struct {
	fatal bool
	mu    sync.Mutex
	ran   map[int]int // transactions run per session id
}

func (w *fakeWorkload) Name() string                           { return "fake" }
func (w *fakeWorkload) Kinds() []string                        { return []string{"ok", "flaky"} }
func (w *fakeWorkload) Load(context.Context, Conn) error       { return nil }
func (w *fakeWorkload) Check(context.Context, Conn) error      { return nil }
func (w *fakeWorkload) Generator(i int, seed uint64) Generator { return &fakeGen{w: w, client: i} }

type fakeGen struct {
	w      *fakeWorkload
	client int
	n      int
}

func (g *fakeGen) Next() Txn {
	g.n++
	n := g.n
	if g.w.fatal && g.client == 0 && n == 10 {
		return Txn{Kind: "ok", Run: func(context.Context, Conn) (bool, error) {
			return false, &pgconn.PgError{Code: "23505", Message: "boom"}
		}}
	}
	if n%3 == 0 {
		tries := map[int]int{}
		var mu sync.Mutex
		return Txn{Kind: "flaky", Run: func(_ context.Context, c Conn) (bool, error) {
			id := connID(c)
			mu.Lock()
			tries[id]++
			t := tries[id]
			mu.Unlock()
			if t <= 2 {
				return false, &pgconn.PgError{Code: "40001", Message: "try again"}
			}
			g.w.count(id)
			return false, nil
		}}
	}
	return Txn{Kind: "ok", Run: func(ctx context.Context, c Conn) (bool, error) {
		g.w.count(connID(c))
		_, err := c.Exec(ctx, "SELECT 1")
		return n%5 == 0, err
	}}
}

// connID returns the id of the fake session under c.
func connID(c Conn) int {
	if cc, ok := c.(*countingConn); ok {
		c = cc.Conn
	}
	return c.(*fakeConn).id
}

func (w *fakeWorkload) count(id int) {
	w.mu.Lock()
	w.ran[id]++
	w.mu.Unlock()
}

func fakeDialers(n int, closed *atomic.Int64) []Dialer {
	var ds []Dialer
	var next atomic.Int64
	for range n {
		ds = append(ds, func(context.Context) (Conn, error) {
			return &fakeConn{id: int(next.Add(1)), closed: closed}, nil
		})
	}
	return ds
}

// TestRunCounts: finished, rolled back and aborted attempts add up; with
// three databases every transaction runs on each session of its client;
// every session is closed at the end.
func TestRunCounts(t *testing.T) {
	for _, dbs := range []int{1, 3} {
		w := &fakeWorkload{ran: map[int]int{}}
		var closed atomic.Int64
		res, err := Run(context.Background(), w, fakeDialers(dbs, &closed),
			Options{Clients: 4, Duration: 100 * time.Millisecond, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if closed.Load() != int64(4*dbs) {
			t.Errorf("%d databases: %d sessions closed, want %d", dbs, closed.Load(), 4*dbs)
		}
		ok, flaky := res.Kinds["ok"], res.Kinds["flaky"]
		if ok.Finished == 0 || flaky.Finished == 0 || res.Finished != ok.Finished+flaky.Finished {
			t.Fatalf("%d databases: %+v", dbs, res)
		}
		if flaky.Aborted != 2*int64(dbs)*flaky.Finished {
			t.Errorf("%d databases: %d flaky finished with %d aborts, want 2 per database each", dbs, flaky.Finished, flaky.Aborted)
		}
		if res.Aborts["40001"] != res.Aborted || res.RolledBack == 0 || res.Failed != 0 {
			t.Errorf("%d databases: aborts %v of %d, rolled back %d, failed %d", dbs, res.Aborts, res.Aborted, res.RolledBack, res.Failed)
		}
		if res.Statements != ok.Finished {
			t.Errorf("%d databases: %d statements counted, want one per ok transaction (%d)", dbs, res.Statements, ok.Finished)
		}
		if res.Throughput <= 0 || res.Latency.P99 < res.Latency.P50 {
			t.Errorf("throughput %v, latency %+v", res.Throughput, res.Latency)
		}
		// Each client's sessions ran the same number of transactions
		// (the measured ones, plus what ran after the window).
		w.mu.Lock()
		for c := range 4 {
			first := w.ran[c*dbs+1]
			for k := 2; k <= dbs; k++ {
				if w.ran[c*dbs+k] != first {
					t.Errorf("client %d: sessions ran %v", c, w.ran)
				}
			}
		}
		w.mu.Unlock()
	}
}

// TestRunRetriesBounded: a transaction aborted more often than MaxRetries
// counts as failed, not finished.
func TestRunRetriesBounded(t *testing.T) {
	w := &fakeWorkload{ran: map[int]int{}}
	var closed atomic.Int64
	res, err := Run(context.Background(), w, fakeDialers(1, &closed),
		Options{Clients: 1, Duration: 50 * time.Millisecond, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kinds["flaky"].Finished != 0 || res.Failed == 0 || res.Kinds["flaky"].Failed != res.Failed {
		t.Errorf("%+v", res.Kinds)
	}
}

// TestRunStopsOnError: an error that is not retryable stops every client
// and is returned with the client and the kind.
func TestRunStopsOnError(t *testing.T) {
	w := &fakeWorkload{fatal: true, ran: map[int]int{}}
	var closed atomic.Int64
	res, err := Run(context.Background(), w, fakeDialers(2, &closed),
		Options{Clients: 3, Duration: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "client 0") || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("got %v", err)
	}
	if res == nil || res.Measured >= time.Minute {
		t.Errorf("result %+v", res)
	}
	if closed.Load() != 6 {
		t.Errorf("%d sessions closed", closed.Load())
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	w := &fakeWorkload{ran: map[int]int{}}
	var closed atomic.Int64
	for _, o := range []Options{{Clients: 0, Duration: time.Second}, {Clients: 1}, {Clients: 1, Duration: time.Second, Think: -1}} {
		if _, err := Run(context.Background(), w, fakeDialers(1, &closed), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := Run(context.Background(), w, nil, Options{Clients: 1, Duration: time.Second}); err == nil {
		t.Error("no dialers accepted")
	}
}

// TestSummarise: rounds merge, ratios are against direct and the bound at
// the same client count, failed runs are counted, and the tables and the
// plot come out.
func TestSummarise(t *testing.T) {
	res := func(finished int64) *Result {
		r := &Result{Measured: time.Second, Finished: finished, Throughput: float64(finished),
			Kinds: map[string]KindResult{"x": {Finished: finished}}}
		r.hist.Add(time.Millisecond)
		return r
	}
	runs := []RunRecord{
		{Mode: ModeDirect, Clients: 4, Round: 1, Result: res(1000)},
		{Mode: ModeCBS, Clients: 4, Round: 1, Result: res(600)},
		{Mode: ModeBound, Clients: 4, Round: 1, Result: res(800)},
		{Mode: ModeCBS, Clients: 4, Round: 2, Result: res(400)},
		{Mode: ModeDirect, Clients: 4, Round: 2, Result: res(1000)},
		{Mode: ModeBound, Clients: 4, Round: 2, Result: res(800)},
		{Mode: ModeDirect, Clients: 1, Round: 1, Result: res(100)},
		{Mode: ModeCBS, Clients: 1, Round: 1, Error: "broken"},
	}
	points := Summarise(runs)
	if len(points) != 5 {
		t.Fatalf("%d points: %+v", len(points), points)
	}
	if points[0].Clients != 1 || points[0].Mode != ModeDirect || points[1].Mode != ModeCBS || points[1].Failed != 1 || points[1].Runs != 0 {
		t.Errorf("order or failures: %+v %+v", points[0], points[1])
	}
	cbs := points[3]
	if cbs.Mode != ModeCBS || cbs.Runs != 2 || cbs.Result.Throughput != 500 || cbs.VsDirect != 0.5 || cbs.VsBound != 0.625 {
		t.Errorf("cbs at 4: %+v %+v", cbs, cbs.Result)
	}
	if cbs.Result.Kinds["x"].Finished != 1000 || cbs.Result.Latency.P50 != time.Millisecond {
		t.Errorf("merged %+v", cbs.Result)
	}
	var table, csv, runsCSV bytes.Buffer
	FormatSummary(&table, points)
	if !strings.Contains(table.String(), "| 4 | cbs | 500.0 |") || !strings.Contains(table.String(), "| 1 | cbs | failed |") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := WriteSummaryCSV(&csv, points); err != nil || strings.Count(csv.String(), "\n") != 6 {
		t.Errorf("csv %v:\n%s", err, csv.String())
	}
	if err := WriteRunsCSV(&runsCSV, runs); err != nil || !strings.Contains(runsCSV.String(), "broken") {
		t.Errorf("runs csv %v:\n%s", err, runsCSV.String())
	}
	dir := t.TempDir()
	if err := Plot(points, "test", dir+"/p.png", dir+"/p.svg"); err != nil {
		t.Fatal(err)
	}
}
