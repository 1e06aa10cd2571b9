package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// SweepConfig configures Sweep.
type SweepConfig struct {
	Workload Workload
	Engines  *Engines
	// Modes are the systems measured (see Modes), Clients the client
	// counts; every mode runs at every count.
	Modes   []string
	Clients []int
	// Rounds repeats the whole grid (default 1).
	Rounds int
	// Options are every run's; Clients and Progress are set per run.
	Options Options
	// Check runs the workload's check after each run.
	Check bool
	// Log receives the in-process shepherds' logs (nil: none).
	Log *slog.Logger
	// Started is called before each run and Done after it, for
	// reporting; Progress is passed on to Run. All may be nil.
	Started  func(step, steps int, mode string, clients, round int)
	Done     func(RunRecord)
	Progress func(Progress)
}

// RunRecord is one run of a sweep.
type RunRecord struct {
	Mode    string `json:"mode"`
	Clients int    `json:"clients"`
	Round   int    `json:"round"`
	// Result is nil when the run failed before measuring anything.
	Result *Result `json:"result,omitempty"`
	// LoadTime is how long loading the databases took.
	LoadTime time.Duration `json:"load_ns"`
	// Replicas are the shepherd's replicas after the run (none for
	// direct modes).
	Replicas []ReplicaState `json:"replicas,omitempty"`
	// Check is "ok", the check's error, or "" when not checked.
	Check string `json:"check,omitempty"`
	// Error is why the run failed, "" when it did not.
	Error string `json:"error,omitempty"`
}

// ReplicaState is a shepherd replica's state after a run.
type ReplicaState struct {
	Name       string `json:"name"`
	Class      string `json:"class"`
	Role       string `json:"role"`
	State      string `json:"state"`
	Mismatches int64  `json:"mismatches"`
	Reruns     int64  `json:"reruns"`
}

// Point is the summary of one mode at one client count, over all rounds.
type Point struct {
	Mode      string  `json:"mode"`
	Clients   int     `json:"clients"`
	Runs      int     `json:"runs"`   // runs that measured something
	Failed    int     `json:"failed"` // runs that ended in an error
	Result    *Result `json:"result"`
	AbortRate float64 `json:"abort_rate"`
	// VsDirect and VsBound are the throughput over that of ModeDirect
	// and ModeBound at the same client count (0 when not measured).
	VsDirect float64 `json:"vs_direct,omitempty"`
	VsBound  float64 `json:"vs_bound,omitempty"`
}

// Sweep runs every mode at every client count, Rounds times. Within a
// client count the modes alternate (each round starts with the next
// mode), so slow drifts of a shared machine spread over all of them.
// Each run gets fresh databases, loaded anew. A run that fails is
// recorded and the sweep goes on; only a cancelled ctx stops it.
func Sweep(ctx context.Context, cfg SweepConfig) ([]RunRecord, []Point, error) {
	if len(cfg.Modes) == 0 || len(cfg.Clients) == 0 {
		return nil, nil, errors.New("bench: a sweep needs modes and client counts")
	}
	if err := cfg.Engines.CheckModes(cfg.Modes); err != nil {
		return nil, nil, err
	}
	rounds := max(cfg.Rounds, 1)
	steps := rounds * len(cfg.Clients) * len(cfg.Modes)
	var runs []RunRecord
	step := 0
	for round := range rounds {
		for _, clients := range cfg.Clients {
			for k := range cfg.Modes {
				mode := cfg.Modes[(k+round)%len(cfg.Modes)]
				step++
				if cfg.Started != nil {
					cfg.Started(step, steps, mode, clients, round+1)
				}
				rec := runOne(ctx, cfg, mode, clients, round+1)
				runs = append(runs, rec)
				if cfg.Done != nil {
					cfg.Done(rec)
				}
				if err := ctx.Err(); err != nil {
					return runs, Summarise(runs), err
				}
			}
		}
	}
	return runs, Summarise(runs), nil
}

// runOne opens, loads, runs, checks and closes one system.
func runOne(ctx context.Context, cfg SweepConfig, mode string, clients, round int) RunRecord {
	rec := RunRecord{Mode: mode, Clients: clients, Round: round}
	sys, err := cfg.Engines.Open(ctx, mode, fmt.Sprintf("%s_%s_c%d_r%d", cfg.Workload.Name(), mode, clients, round), cfg.Log)
	if err != nil {
		rec.Error = err.Error()
		return rec
	}
	defer func() {
		if err := sys.Close(context.WithoutCancel(ctx)); err != nil && rec.Error == "" {
			rec.Error = "close: " + err.Error()
		}
	}()
	start := time.Now()
	if err := sys.Load(ctx, cfg.Workload); err != nil {
		rec.Error = "load: " + err.Error()
		return rec
	}
	rec.LoadTime = time.Since(start)
	opts := cfg.Options
	opts.Clients = clients
	opts.Progress = cfg.Progress
	res, err := Run(ctx, cfg.Workload, sys.Dialers, opts)
	rec.Result = res
	if err != nil {
		rec.Error = err.Error()
	}
	if cfg.Check && err == nil {
		if err := sys.Check(ctx, cfg.Workload); err != nil {
			rec.Check = err.Error()
		} else {
			rec.Check = "ok"
		}
	}
	for _, r := range sys.Replicas() {
		rec.Replicas = append(rec.Replicas, ReplicaState{Name: r.Name, Class: r.Class, Role: r.Role,
			State: r.State, Mismatches: r.Mismatches, Reruns: r.Reruns})
	}
	return rec
}

// Summarise merges the runs of each mode and client count, and works out
// the ratios to direct and to the bound. Points come ordered by client
// count, then in the order the modes first appear in runs.
func Summarise(runs []RunRecord) []Point {
	type key struct {
		mode    string
		clients int
	}
	var order []key
	points := map[key]*Point{}
	for _, r := range runs {
		k := key{r.Mode, r.Clients}
		p := points[k]
		if p == nil {
			p = &Point{Mode: r.Mode, Clients: r.Clients, Result: &Result{Clients: r.Clients}}
			points[k] = p
			order = append(order, k)
		}
		if r.Error != "" {
			p.Failed++
			continue
		}
		if r.Result != nil {
			p.Runs++
			p.Result.Merge(r.Result)
		}
	}
	var modes []string
	for _, k := range order {
		if !slices.Contains(modes, k.mode) {
			modes = append(modes, k.mode)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if a.clients != b.clients {
			return a.clients - b.clients
		}
		return slices.Index(modes, a.mode) - slices.Index(modes, b.mode)
	})
	out := make([]Point, 0, len(order))
	for _, k := range order {
		p := points[k]
		p.AbortRate = p.Result.AbortRate()
		if d := points[key{ModeDirect, k.clients}]; d != nil && d.Runs > 0 && d.Result.Throughput > 0 && p.Runs > 0 {
			p.VsDirect = p.Result.Throughput / d.Result.Throughput
		}
		if b := points[key{ModeBound, k.clients}]; b != nil && b.Runs > 0 && b.Result.Throughput > 0 && p.Runs > 0 {
			p.VsBound = p.Result.Throughput / b.Result.Throughput
		}
		out = append(out, *p)
	}
	return out
}
