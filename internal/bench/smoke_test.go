package bench

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/bench/link"
	"github.com/shepherd-db/shepherd/internal/testenv"
	"github.com/shepherd-db/shepherd/internal/workload/tpcc"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testEngines returns the test binary's MariaDB and PostgreSQL servers
// (through the DSNs of fresh testenv databases: Fresh makes its own
// databases next to them) and a temporary SQLite directory.
func testEngines(t *testing.T) *Engines {
	t.Helper()
	return &Engines{MariaDB: testenv.MariaDB(t), Postgres: testenv.Postgres(t), SQLiteDir: t.TempDir()}
}

// TestSmokeModes runs a short bank load through every mode, and TPC-C
// through cbs and the bound, on real engines: each loads, runs a moment
// with a few clients, finishes transactions, and passes its workload's
// check; no shepherd replica is accused.
func TestSmokeModes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs real engines")
	}
	e := testEngines(t)
	ctx := context.Background()
	bank, err := NewBank(BankConfig{Accounts: 200, HotShare: 0.2, ReadOnly: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := NewTPCC(TPCCConfig{Scale: tpcc.Scale{Warehouses: 1, Items: 200, Customers: 20, Orders: 20}, LoadSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []Workload{bank, tp} {
		modes := AllModes
		if w == Workload(tp) {
			modes = []string{ModeCBS, ModeBound}
		}
		for _, mode := range modes {
			t.Run(w.Name()+"/"+mode, func(t *testing.T) {
				sys, err := e.Open(ctx, mode, "smoke_"+mode, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := sys.Close(context.Background()); err != nil {
						t.Errorf("close: %v", err)
					}
				}()
				if err := sys.Load(ctx, w); err != nil {
					t.Fatalf("load: %v", err)
				}
				// A short run; on a loaded machine the first transactions
				// of a cold cluster may take longer, so a run that finished
				// nothing is given more time (up to ten runs) before it
				// counts as stuck.
				var res *Result
				for try := 1; ; try++ {
					res, err = Run(ctx, w, sys.Dialers, Options{Clients: 3, Duration: 300 * time.Millisecond, Seed: 7})
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					if res.Finished > 0 {
						break
					}
					if try == 10 {
						t.Fatalf("nothing finished in %d runs: %+v", try, res)
					}
				}
				if err := sys.Check(ctx, w); err != nil {
					t.Errorf("check: %v", err)
				}
				for _, r := range sys.Replicas() {
					if r.Mismatches > 0 || r.State != "up" {
						t.Errorf("replica %s: %s, %d mismatches", r.Name, r.State, r.Mismatches)
					}
				}
				t.Logf("%s %s: %d finished, %.0f/s, p50 %v, %d aborted", w.Name(), mode, res.Finished, res.Throughput,
					res.Latency.P50, res.Aborted)
			})
		}
	}
}

// TestSmokeLinks runs the bank workload through a direct mode of each
// server engine and through cbs with links of 250 µs one way in front of
// MariaDB and PostgreSQL (WithLinks): each passes its check, every
// transaction paid at least one round trip over a link, and each link
// held its chunks for at least the delay.
func TestSmokeLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("needs real engines")
	}
	const delay = 250 * time.Microsecond
	e, links, err := testEngines(t).WithLinks(link.Config{Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	defer links.Close()
	ctx := context.Background()
	bank, err := NewBank(BankConfig{Accounts: 200, HotShare: 0.2, ReadOnly: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{ModeDirectPG, ModeDirect, ModeCBS} {
		t.Run(mode, func(t *testing.T) {
			sys, err := e.Open(ctx, mode, "link_"+mode, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := sys.Close(context.Background()); err != nil {
					t.Errorf("close: %v", err)
				}
			}()
			if err := sys.Load(ctx, bank); err != nil {
				t.Fatalf("load: %v", err)
			}
			var res *Result
			for try := 1; ; try++ {
				res, err = Run(ctx, bank, sys.Dialers, Options{Clients: 3, Duration: 300 * time.Millisecond, Seed: 7})
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if res.Finished > 0 {
					break
				}
				if try == 10 {
					t.Fatalf("nothing finished in %d runs: %+v", try, res)
				}
			}
			if err := sys.Check(ctx, bank); err != nil {
				t.Errorf("check: %v", err)
			}
			for _, r := range sys.Replicas() {
				if r.Mismatches > 0 || r.State != "up" {
					t.Errorf("replica %s: %s, %d mismatches", r.Name, r.State, r.Mismatches)
				}
			}
			// Each transaction waits for at least one round trip.
			if res.Latency.P50 < 2*delay {
				t.Errorf("median transaction %v, below one round trip of %v", res.Latency.P50, 2*delay)
			}
			t.Logf("%s over links: %d finished, %.0f/s, p50 %v", mode, res.Finished, res.Throughput, res.Latency.P50)
		})
	}
	for name, h := range links.Held() {
		if h.P50 < delay {
			t.Errorf("link to %s held its chunks %v (median), below %v", name, h.P50, delay)
		}
	}
}

// TestWithLinksRefuses: a link needs a server reached over TCP.
func TestWithLinksRefuses(t *testing.T) {
	for _, e := range []Engines{
		{MariaDB: "u:p@unix(/tmp/mysqld.sock)/"},
		{Postgres: "postgres:///db?host=/tmp"},
		{Postgres: "mysql://x"},
	} {
		if _, _, err := e.WithLinks(link.Config{Delay: time.Millisecond}); err == nil {
			t.Errorf("%+v: accepted", e)
		}
	}
}
