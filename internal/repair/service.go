package repair

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// maxHistory bounds the findings a Service remembers for SHOW REPAIRS.
const maxHistory = 1000

// maxLag is how many decided transactions a replica may have left to
// commit before background work waits: a survey waits for every replica,
// so it would otherwise hold client commits behind a lagging one.
const maxLag = 8

// maxLagWait bounds one wait for lagging replicas: under an overload that
// never lets them catch up, the pass goes on, slowly.
const maxLagWait = 30 * time.Second

// Service runs passes on demand and in the background, one at a time, and
// remembers what they found.
type Service struct {
	k   *Checker
	log *slog.Logger
	run sync.Mutex // held for a whole pass

	mu       sync.Mutex
	history  []Finding
	open     map[string]int // replica → unrepaired findings of its latest pass
	repaired map[string]int // replica → rows repaired so far
	left     map[string]int // replica → findings not repaired, so far (metrics)
	passes   int
	current  string // what the running pass is doing, "" when idle
	last     *Report
	lastWhat string
	lastEnd  time.Time
}

// NewService returns a service over checker k.
func NewService(k *Checker) *Service {
	return &Service{k: k, log: k.log, open: map[string]int{}, repaired: map[string]int{}, left: map[string]int{}}
}

// Run makes one pass now, after any pass still running.
func (s *Service) Run(ctx context.Context, opts Options) (*Report, error) {
	s.run.Lock()
	defer s.run.Unlock()
	what := "checking"
	if opts.Repair {
		what = "repairing"
	}
	if opts.Table != "" {
		what += " table " + opts.Table
	}
	s.setCurrent(what)
	defer s.setCurrent("")
	if opts.Pace == nil {
		// On demand: as fast as it goes, but each step still waits for
		// lagging replicas, which it would otherwise wait for holding
		// its locks (or leave out).
		opts.Pace = s.pacer(0)
	}
	rep, err := s.k.Run(ctx, opts)
	if rep != nil {
		s.record(rep, opts.Table == "" && err == nil)
		s.mu.Lock()
		s.last, s.lastWhat, s.lastEnd = rep, what, time.Now()
		s.mu.Unlock()
		s.log.Info("compare pass done", "what", what, "tables", rep.Tables, "rows", rep.Rows,
			"steps", rep.Steps, "rounds", rep.Rounds, "findings", len(rep.Findings),
			"remaining", rep.Remaining(), "elapsed", rep.Elapsed.Round(time.Millisecond))
	}
	return rep, err
}

func (s *Service) setCurrent(what string) {
	s.mu.Lock()
	s.current = what
	s.mu.Unlock()
}

// record keeps a pass's findings; a complete pass replaces the open
// counts.
func (s *Service) record(rep *Report, complete bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes++
	if complete {
		s.open = map[string]int{}
	}
	for _, f := range rep.Findings {
		if f.Action == Repaired {
			s.repaired[f.Replica]++
		} else {
			s.open[f.Replica]++
			s.left[f.Replica]++
		}
	}
	s.history = append(s.history, rep.Findings...)
	if n := len(s.history) - maxHistory; n > 0 {
		s.history = append([]Finding(nil), s.history[n:]...)
	}
}

// History returns the findings remembered, oldest first.
func (s *Service) History() []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Finding(nil), s.history...)
}

// Counts returns, for replica name, the findings of the latest complete
// pass left unrepaired and the rows repaired so far.
func (s *Service) Counts(name string) (open, repaired int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[name], s.repaired[name]
}

// Totals returns, for replica name, the findings of every pass so far:
// repaired, and left as they were (metrics).
func (s *Service) Totals(name string) (repaired, left int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repaired[name], s.left[name]
}

// Status is where compare-and-repair stands.
type Status struct {
	// Running says what the running pass does ("" when none runs).
	Running string
	// Passes counts the passes made; Last is the latest one's report
	// (nil before the first), LastWhat what it did, LastEnd when it ended.
	Passes   int
	Last     *Report
	LastWhat string
	LastEnd  time.Time
}

// Status returns where compare-and-repair stands.
func (s *Service) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Running: s.current, Passes: s.passes, Last: s.last, LastWhat: s.lastWhat, LastEnd: s.lastEnd}
}

// Background are the settings of the background runner.
type Background struct {
	// Repair rewrites what it finds; otherwise it only reports.
	Repair bool
	// Every is the pause between the end of a pass and the next.
	Every time.Duration
	// Rate is the most rows per second compared (0: no limit).
	Rate int
}

// Background runs passes until ctx ends: one every b.Every, at most
// b.Rate rows per second, each step waiting while a replica lags behind
// the clients' commits.
func (s *Service) Background(ctx context.Context, b Background) {
	for {
		t := time.NewTimer(b.Every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		opts := Options{Repair: b.Repair, Pace: s.pacer(b.Rate)}
		if _, err := s.Run(ctx, opts); err != nil && ctx.Err() == nil {
			s.log.Warn("background compare pass failed", "err", err)
		}
	}
}

// pacer returns an Options.Pace holding steps to rate rows per second
// (0: no limit) and back while the replicas lag, for up to maxLagWait at
// a time.
func (s *Service) pacer(rate int) func(context.Context, int) error {
	var next time.Time
	return func(ctx context.Context, rows int) error {
		for start := time.Now(); s.k.c.Lag() > maxLag && time.Since(start) < maxLagWait; {
			if err := sleep(ctx, 20*time.Millisecond); err != nil {
				return err
			}
		}
		if rate <= 0 {
			return nil
		}
		now := time.Now()
		if next.After(now) {
			if err := sleep(ctx, next.Sub(now)); err != nil {
				return err
			}
			now = next
		}
		next = now.Add(time.Duration(float64(rows) / float64(rate) * float64(time.Second)))
		return nil
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
