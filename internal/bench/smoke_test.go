package bench

import (
	"context"
	"testing"
	"time"

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
