package tpcc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/latency"
)

// RunConfig configures Run.
type RunConfig struct {
	// Scale must be the scale the database was loaded with.
	Scale
	// LoadSeed is the seed the database was loaded with; the run's
	// last-name constant is chosen against the loader's.
	LoadSeed uint64
	// Seed seeds the clients' generators: client i draws from stream i.
	Seed uint64
	// Clients is the number of concurrent clients, each on its own
	// connection (default: 10 per warehouse). Client i's home warehouse
	// is i mod W + 1 and its district (i div W) mod 10 + 1.
	Clients int
	// WarmUp runs before measuring; Duration is the measured time after
	// it (required).
	WarmUp, Duration time.Duration
	// Keying is a pause before each transaction, Think the mean of an
	// exponentially distributed pause after it (cut off at ten times the
	// mean). Both default to zero: clients run flat out.
	Keying, Think time.Duration
	// Mix weighs the transaction types (zero: StandardMix).
	Mix Mix
	// MaxRetries bounds how often a transaction failing with 40001 or
	// 40P01 is run again (default 10; negative: never); after that it
	// counts as failed and the client moves on.
	MaxRetries int
	// TxOptions start every transaction (default: the server's default
	// isolation level).
	TxOptions pgx.TxOptions
}

// Result is what a run measured. Only transactions that finished within
// the measured window (after the warm-up) count.
type Result struct {
	Clients  int
	Measured time.Duration // the measured window
	Types    [NumTxTypes]TxStats
	// Aborts counts failed attempts by SQLSTATE, retried or not.
	Aborts map[string]int64
}

// TxStats are the numbers of one transaction type.
type TxStats struct {
	// Count is the number of transactions that finished: committed, or
	// rolled back on purpose (a NewOrder with an unknown item).
	Count int64
	// RolledBack counts NewOrders rolled back on purpose; they are in
	// Count too.
	RolledBack int64
	// Retries counts attempts run again after 40001 or 40P01.
	Retries int64
	// Failed counts transactions abandoned after MaxRetries retries.
	Failed int64
	// Latency covers the finished transactions.
	Latency latency.Summary
}

// Total returns the number of finished transactions of all types.
func (r *Result) Total() int64 {
	var n int64
	for _, s := range r.Types {
		n += s.Count
	}
	return n
}

// PerSecond returns finished transactions per second over the measured
// window.
func (r *Result) PerSecond() float64 {
	if r.Measured <= 0 {
		return 0
	}
	return float64(r.Total()) / r.Measured.Seconds()
}

// NewOrdersPerMinute returns finished NewOrders per minute, the
// benchmark's headline number (without its pacing rules).
func (r *Result) NewOrdersPerMinute() float64 {
	if r.Measured <= 0 {
		return 0
	}
	return float64(r.Types[NewOrderTx].Count) / r.Measured.Minutes()
}

// String formats the result as a small table.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, %v measured: %.1f txn/s, %.0f new orders/min\n",
		r.Clients, r.Measured, r.PerSecond(), r.NewOrdersPerMinute())
	fmt.Fprintf(&b, "%-12s %8s %6s %7s %6s %9s %9s %9s %9s\n",
		"type", "count", "rbk", "retries", "failed", "p50", "p95", "p99", "max")
	for t, s := range r.Types {
		fmt.Fprintf(&b, "%-12s %8d %6d %7d %6d %9v %9v %9v %9v\n", TxType(t), s.Count, s.RolledBack,
			s.Retries, s.Failed, s.Latency.P50, s.Latency.P95, s.Latency.P99, s.Latency.Max)
	}
	if len(r.Aborts) > 0 {
		b.WriteString("aborts:")
		for _, code := range slices.Sorted(maps.Keys(r.Aborts)) {
			fmt.Fprintf(&b, " %s=%d", code, r.Aborts[code])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const defaultMaxRetries = 10

func (c RunConfig) withDefaults() (RunConfig, error) {
	if err := c.Scale.Validate(); err != nil {
		return c, err
	}
	if c.Duration <= 0 {
		return c, errors.New("tpcc: run duration must be positive")
	}
	if c.WarmUp < 0 || c.Keying < 0 || c.Think < 0 {
		return c, errors.New("tpcc: negative warm-up, keying or think time")
	}
	if c.Clients == 0 {
		c.Clients = c.Warehouses * DistrictsPerWarehouse
	}
	if c.Clients < 0 {
		return c, errors.New("tpcc: negative number of clients")
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = defaultMaxRetries
	}
	c.MaxRetries = max(c.MaxRetries, 0)
	if c.Mix == (Mix{}) {
		c.Mix = StandardMix
	}
	return c, c.Mix.Validate()
}

// Run runs the workload: cfg.Clients clients, each with a connection from
// connect and its own generator, run transactions back to back (with the
// configured pauses) for the warm-up and then the measured duration.
// Transactions failing with 40001 or 40P01 are retried up to MaxRetries
// times; any other error stops the run and is returned, with the
// transaction type, alongside what was measured so far. A cancelled ctx
// stops the run the same way.
func Run(ctx context.Context, connect func(context.Context) (*pgx.Conn, error), cfg RunConfig) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	consts := RunConstants(LoadConstants(cfg.LoadSeed), cfg.Seed)
	gens := make([]*Generator, cfg.Clients)
	for i := range gens {
		gens[i], err = NewGenerator(GeneratorConfig{
			Scale: cfg.Scale, Constants: consts, Mix: cfg.Mix,
			HomeWID: i%cfg.Warehouses + 1, HomeDID: (i/cfg.Warehouses)%DistrictsPerWarehouse + 1,
			Seed: cfg.Seed, Stream: uint64(i),
		})
		if err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	conns := make([]*pgx.Conn, cfg.Clients)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	}()
	for i := range conns {
		if conns[i], err = connect(ctx); err != nil {
			return nil, fmt.Errorf("tpcc: client %d: connect: %w", i, err)
		}
	}
	start := time.Now()
	w := window{from: start.Add(cfg.WarmUp), to: start.Add(cfg.WarmUp + cfg.Duration)}
	tallies := make([]*tally, cfg.Clients)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		tallies[i] = newTally()
		c := &client{cfg: &cfg, gen: gens[i], db: WithTxOptions(conns[i], cfg.TxOptions), w: w, t: tallies[i]}
		wg.Go(func() {
			if err := c.run(ctx); err != nil {
				cancel(fmt.Errorf("tpcc: client %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	res := &Result{Clients: cfg.Clients, Measured: cfg.Duration, Aborts: map[string]int64{}}
	total := newTally()
	for _, t := range tallies {
		total.merge(t)
	}
	total.fill(res)
	if err := context.Cause(ctx); err != nil {
		res.Measured = max(time.Since(w.from), 0)
		res.Measured = min(res.Measured, cfg.Duration)
		return res, err
	}
	return res, nil
}

// window is the measured time.
type window struct{ from, to time.Time }

// tally is one client's counts.
type tally struct {
	stats  [NumTxTypes]TxStats
	lat    [NumTxTypes]latency.Histogram
	aborts map[string]int64
}

func newTally() *tally { return &tally{aborts: map[string]int64{}} }

func (t *tally) merge(o *tally) {
	for i := range t.stats {
		s, os := &t.stats[i], &o.stats[i]
		s.Count += os.Count
		s.RolledBack += os.RolledBack
		s.Retries += os.Retries
		s.Failed += os.Failed
		t.lat[i].Merge(&o.lat[i])
	}
	for code, n := range o.aborts {
		t.aborts[code] += n
	}
}

func (t *tally) fill(r *Result) {
	for i := range t.stats {
		r.Types[i] = t.stats[i]
		r.Types[i].Latency = t.lat[i].Summary()
	}
	maps.Copy(r.Aborts, t.aborts)
}

// client is one connection running transactions.
type client struct {
	cfg *RunConfig
	gen *Generator
	db  DB
	w   window
	t   *tally
}

func (c *client) run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return nil // stopped: the cause is reported by whoever cancelled
		}
		if !time.Now().Before(c.w.to) {
			return nil
		}
		typ := c.gen.Next()
		in := c.gen.Input(typ)
		if !pause(ctx, c.cfg.Keying, c.w.to) {
			return nil
		}
		if err := c.one(ctx, typ, in); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%v: %w", typ, err)
		}
		think := time.Duration(c.gen.exponential(float64(c.cfg.Think)))
		if !pause(ctx, think, c.w.to) {
			return nil
		}
	}
}

// one runs a transaction with retries and counts it.
func (c *client) one(ctx context.Context, typ TxType, in any) error {
	start := time.Now()
	var retries int64
	var aborts []string
	var rolledBack, failed bool
	for attempt := 0; ; attempt++ {
		var err error
		rolledBack, err = execute(ctx, c.db, in)
		if err == nil {
			break
		}
		if !Retryable(err) {
			return err
		}
		aborts = append(aborts, SQLState(err))
		if attempt >= c.cfg.MaxRetries {
			failed = true
			break
		}
		retries++
	}
	done := time.Now()
	if done.Before(c.w.from) || !done.Before(c.w.to) {
		return nil
	}
	s := &c.t.stats[typ]
	s.Retries += retries
	for _, code := range aborts {
		c.t.aborts[code]++
	}
	if failed {
		s.Failed++
		return nil
	}
	s.Count++
	if rolledBack {
		s.RolledBack++
	}
	c.t.lat[typ].Add(done.Sub(start))
	return nil
}

// execute runs the transaction whose input is in.
func execute(ctx context.Context, db DB, in any) (rolledBack bool, err error) {
	switch in := in.(type) {
	case NewOrderInput:
		out, err := NewOrder(ctx, db, in)
		return out.RolledBack, err
	case PaymentInput:
		_, err = Payment(ctx, db, in)
	case OrderStatusInput:
		_, err = OrderStatus(ctx, db, in)
	case DeliveryInput:
		_, err = Delivery(ctx, db, in)
	case StockLevelInput:
		_, err = StockLevel(ctx, db, in)
	default:
		err = fmt.Errorf("tpcc: no transaction takes %T", in)
	}
	return false, err
}

// pause waits d, unless ctx ends first or the wait would pass deadline;
// it reports whether the caller should go on.
func pause(ctx context.Context, d time.Duration, deadline time.Time) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if time.Now().Add(d).After(deadline) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
