package sim

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
)

var (
	flagSeed  = flag.Int64("sim.seed", -1, "replay this one seed verbosely (in each mode of -sim.modes)")
	flagTxns  = flag.Int("sim.txns", 40000, "transactions to simulate per mode, over as many seeds as that takes")
	flagFirst = flag.Int64("sim.first", 1, "first seed of the sweep")
	flagScen  = flag.String("sim.scenario", "", "use this named cluster instead of the drawn one (see Scenarios)")
	flagScenN = flag.Int("sim.scenario.seeds", 8, "seeds TestScenarios runs per scenario and mode")
	flagModes = flag.String("sim.modes", defaultModes(), "comma-separated modes to simulate: serial, cbs, ss "+
		"(default from $SHEPHERD_SIM_MODES, else all three)")
)

// defaultModes is every mode the core has a scheduler for, unless
// SHEPHERD_SIM_MODES (or -sim.modes) names fewer.
func defaultModes() string {
	if m := os.Getenv("SHEPHERD_SIM_MODES"); m != "" {
		return m
	}
	return "serial,cbs,ss"
}

func parseModes(t *testing.T) []coord.Mode {
	var modes []coord.Mode
	for _, name := range strings.Split(*flagModes, ",") {
		m, ok := map[string]coord.Mode{"serial": coord.Serial, "cbs": coord.CBS, "ss": coord.SS}[strings.TrimSpace(name)]
		if !ok {
			t.Fatalf("-sim.modes: unknown mode %q", name)
		}
		modes = append(modes, m)
	}
	return modes
}

// TestSim sweeps seeds in each mode of -sim.modes until -sim.txns
// transactions ran, or replays -sim.seed with a full trace.
//
//	go test ./internal/coord/sim                                  sweep, 40,000 per mode
//	go test ./internal/coord/sim -sim.txns=100000                 long sweep
//	go test ./internal/coord/sim -sim.modes=cbs                   CBS only
//	go test ./internal/coord/sim -run 'TestSim$' -sim.modes=cbs -sim.seed=17 -v
//	go test ./internal/coord/sim -run 'TestSim$' -sim.modes=cbs -sim.scenario=broken-primary -sim.seed=1 -v
func TestSim(t *testing.T) {
	for _, m := range parseModes(t) {
		t.Run(m.String(), func(t *testing.T) {
			if *flagSeed >= 0 {
				replay(t, m, *flagScen, *flagSeed)
				return
			}
			var seeds []int64
			planned := 0
			for seed := *flagFirst; planned < *flagTxns; seed++ {
				seeds = append(seeds, seed)
				planned += PlannedTxns(seed)
			}
			sweep(t, m, *flagScen, seeds)
		})
	}
}

// TestScenarios runs every named scenario on a few seeds in each mode.
func TestScenarios(t *testing.T) {
	if *flagSeed >= 0 {
		t.Skip("-sim.seed replays in TestSim")
	}
	var seeds []int64
	for seed := range int64(*flagScenN) {
		seeds = append(seeds, *flagFirst+seed)
	}
	for _, m := range parseModes(t) {
		for _, sc := range Scenarios() {
			t.Run(m.String()+"/"+sc, func(t *testing.T) { sweep(t, m, sc, seeds) })
		}
	}
}

func replay(t *testing.T, m coord.Mode, scenario string, seed int64) {
	w := bufio.NewWriter(os.Stdout)
	res := Run(Options{Mode: m, Scenario: scenario, Seed: seed, Log: w})
	w.Flush()
	t.Log(summary(res))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
}

// sweep runs the seeds on every CPU and reports the failing ones.
func sweep(t *testing.T, m coord.Mode, scenario string, seeds []int64) {
	start := time.Now()
	results := runAll(m, scenario, seeds)
	var total Result
	var failures []Result
	for _, r := range results {
		total.Txns += r.Txns
		total.Commits += r.Commits
		total.Refused += r.Refused
		total.RolledBack += r.RolledBack
		total.Aborts += r.Aborts
		total.Steps += r.Steps
		total.CorrectAccused += r.CorrectAccused
		total.CorrectDown += r.CorrectDown
		total.Lagging += r.Lagging
		total.Rejoined += r.Rejoined
		total.Restarts += r.Restarts
		total.Lost += r.Lost
		total.LostCommits += r.LostCommits
		total.Completed += r.Completed
		total.IntentRetired += r.IntentRetired
		total.Swaps += r.Swaps
		total.Replayed += r.Replayed
		total.SurveyFound += r.SurveyFound
		if r.Err != nil {
			failures = append(failures, r)
		}
	}
	t.Logf("%v: %d seeds (%d..%d), %d txns: %d committed, %d commits refused, %d rolled back; %d aborts, %d steps; "+
		"correct replicas accused %d times, taken out %d times; %d txns left to lagging faulty replicas; %d crashed replicas rejoined; "+
		"%d restarts (%d txns lost with them, %d of which committed; %d open DDL completed, %d replicas retired for one); %d txns replayed from the log; %d name swaps; %d faulty replicas found by surveys; %v",
		m, len(seeds), seeds[0], seeds[len(seeds)-1], total.Txns, total.Commits, total.Refused, total.RolledBack,
		total.Aborts, total.Steps, total.CorrectAccused, total.CorrectDown, total.Lagging, total.Rejoined,
		total.Restarts, total.Lost, total.LostCommits, total.Completed, total.IntentRetired, total.Replayed, total.Swaps, total.SurveyFound, time.Since(start).Round(time.Millisecond))
	if len(failures) == 0 {
		return
	}
	var list []string
	for _, r := range failures {
		list = append(list, fmt.Sprint(r.Seed))
	}
	t.Errorf("%v: %d of %d seeds failed: %s", m, len(failures), len(seeds), strings.Join(list, " "))
	for _, r := range failures[:min(3, len(failures))] {
		t.Errorf("%v", r.Err)
	}
	for _, r := range failures[min(3, len(failures)):] {
		if f, ok := r.Err.(*Failure); ok {
			t.Errorf("seed %d: %s", r.Seed, f.Msg)
		}
	}
}

// runAll runs the seeds on every CPU; each run is single-threaded.
func runAll(m coord.Mode, scenario string, seeds []int64) []Result {
	results := make([]Result, len(seeds))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				results[i] = Run(Options{Mode: m, Scenario: scenario, Seed: seeds[i]})
			}
		})
	}
	for i := range seeds {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func summary(r Result) string {
	return fmt.Sprintf("seed %d mode %v: %s\n%d txns: %d committed, %d refused, %d rolled back; %d aborts; %d steps, %d ticks; correct accused %d, correct down %d; lagging %d",
		r.Seed, r.Mode, r.Setup, r.Txns, r.Commits, r.Refused, r.RolledBack, r.Aborts, r.Steps, r.Ticks, r.CorrectAccused, r.CorrectDown, r.Lagging)
}
