package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/latency"
)

// Conn is one client session on a database: what the workloads need of
// it. *pgx.Conn satisfies it, and so does the in-process direct session
// of package bench/direct.
type Conn interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Close(ctx context.Context) error
}

// Dialer opens a session on one database.
type Dialer func(ctx context.Context) (Conn, error)

// Txn is one transaction drawn by a client's generator.
type Txn struct {
	// Kind names the transaction type ("transfer", "NewOrder").
	Kind string
	// Run runs the transaction once, BEGIN to COMMIT, on c. It reports
	// whether the transaction rolled back on purpose (a TPC-C NewOrder
	// with an unknown item), which counts as finished.
	Run func(ctx context.Context, c Conn) (rolledBack bool, err error)
}

// Generator draws a client's transactions. Each client has its own.
type Generator interface {
	Next() Txn
}

// Workload is a benchmark workload: a schema with its data, and a
// generator of transactions per client.
type Workload interface {
	// Name is the workload's name ("tpcc", "bank").
	Name() string
	// Kinds lists the transaction kinds in report order.
	Kinds() []string
	// Load creates the workload's tables on c (dropping any left over)
	// and fills them.
	Load(ctx context.Context, c Conn) error
	// Generator returns client i's generator; seed makes the sequence.
	Generator(i int, seed uint64) Generator
	// Check verifies the workload's invariants on c after a run.
	Check(ctx context.Context, c Conn) error
}

// Options configure Run.
type Options struct {
	// Clients is the number of concurrent clients (at least 1).
	Clients int
	// WarmUp runs before measuring; Duration is the measured time.
	WarmUp, Duration time.Duration
	// Think is the mean of an exponentially distributed pause after each
	// transaction (cut off at ten times the mean); zero runs flat out.
	Think time.Duration
	// Seed seeds the generators and think times: client i uses stream i.
	Seed uint64
	// MaxRetries bounds how often a transaction aborted with a retryable
	// error (class 40, 55P03) is run again before it counts as failed
	// (default 20).
	MaxRetries int
	// Progress, if set, is called about once a second with the run's
	// state, from a goroutine of its own.
	Progress func(Progress)
}

// Progress is the state of a running benchmark.
type Progress struct {
	Elapsed  time.Duration // since the start, warm-up included
	Total    time.Duration // warm-up plus duration
	WarmUp   bool          // still warming up
	Finished int64         // transactions finished since the start
	// Rate is the throughput over the last interval, transactions per
	// second.
	Rate float64
}

// Result is what one run measured. Only transactions that finished inside
// the measured window count.
type Result struct {
	Clients  int           `json:"clients"`
	Measured time.Duration `json:"measured_ns"`
	// Finished counts transactions that finished (committed, or rolled
	// back on purpose).
	Finished int64 `json:"finished"`
	// RolledBack counts the deliberate rollbacks among them.
	RolledBack int64 `json:"rolled_back"`
	// Aborted counts attempts that failed with a retryable error (run
	// again or, after MaxRetries, given up).
	Aborted int64 `json:"aborted"`
	// Failed counts transactions given up after MaxRetries.
	Failed int64 `json:"failed"`
	// Throughput is Finished per second of Measured.
	Throughput float64 `json:"throughput"`
	// ProcessCPU is the CPU time (user and system) this process used
	// during the measured window: the clients, and the shepherd or the
	// in-process translation when the system runs here; not the engines,
	// which run in processes of their own.
	ProcessCPU time.Duration `json:"process_cpu_ns"`
	// Statements counts the statements (BEGIN and COMMIT included) of
	// the finished transactions, on the first database of each client.
	Statements int64           `json:"statements"`
	Latency    latency.Summary `json:"latency"`
	// Kinds breaks the numbers down by transaction kind.
	Kinds map[string]KindResult `json:"kinds"`
	// Aborts counts aborted attempts by SQLSTATE.
	Aborts map[string]int64 `json:"aborts,omitempty"`
	// hist and kindHist hold every latency, for merging results of
	// several rounds.
	hist     latency.Histogram
	kindHist map[string]*latency.Histogram
}

// Merge adds the numbers of o (another run of the same system and
// clients, such as a later round) to r: counts and measured time add up,
// latencies are merged, throughput is over the sum.
func (r *Result) Merge(o *Result) {
	r.Measured += o.Measured
	r.ProcessCPU += o.ProcessCPU
	r.Finished += o.Finished
	r.Statements += o.Statements
	r.RolledBack += o.RolledBack
	r.Aborted += o.Aborted
	r.Failed += o.Failed
	r.hist.Merge(&o.hist)
	r.Latency = r.hist.Summary()
	if r.Measured > 0 {
		r.Throughput = float64(r.Finished) / r.Measured.Seconds()
	}
	if r.Kinds == nil {
		r.Kinds = map[string]KindResult{}
	}
	for name, k := range o.Kinds {
		mine := r.Kinds[name]
		mine.Finished += k.Finished
		mine.RolledBack += k.RolledBack
		mine.Aborted += k.Aborted
		mine.Failed += k.Failed
		if h := o.kindHist[name]; h != nil {
			if r.kindHist == nil {
				r.kindHist = map[string]*latency.Histogram{}
			}
			if r.kindHist[name] == nil {
				r.kindHist[name] = &latency.Histogram{}
			}
			r.kindHist[name].Merge(h)
			mine.Latency = r.kindHist[name].Summary()
		}
		r.Kinds[name] = mine
	}
	if r.Aborts == nil {
		r.Aborts = map[string]int64{}
	}
	for code, n := range o.Aborts {
		r.Aborts[code] += n
	}
}

// KindResult are the numbers of one transaction kind.
type KindResult struct {
	Finished   int64           `json:"finished"`
	RolledBack int64           `json:"rolled_back,omitempty"`
	Aborted    int64           `json:"aborted,omitempty"`
	Failed     int64           `json:"failed,omitempty"`
	Latency    latency.Summary `json:"latency"`
}

// CPUPerTxn returns ProcessCPU per finished transaction (zero when
// nothing finished).
func (r *Result) CPUPerTxn() time.Duration {
	if r.Finished == 0 {
		return 0
	}
	return r.ProcessCPU / time.Duration(r.Finished)
}

// CPUPerStatement returns ProcessCPU per statement (zero when none).
func (r *Result) CPUPerStatement() time.Duration {
	if r.Statements == 0 {
		return 0
	}
	return r.ProcessCPU / time.Duration(r.Statements)
}

// StatementsPerTxn returns the mean number of statements of a finished
// transaction, its last attempt's (BEGIN and COMMIT included).
func (r *Result) StatementsPerTxn() float64 {
	if r.Finished == 0 {
		return 0
	}
	return float64(r.Statements) / float64(r.Finished)
}

// AbortRate returns aborted attempts over all attempts.
func (r *Result) AbortRate() float64 {
	attempts := r.Finished + r.Aborted
	if attempts == 0 {
		return 0
	}
	return float64(r.Aborted) / float64(attempts)
}

const defaultMaxRetries = 20

// Retryable reports whether err aborted a transaction that may simply run
// again: SQLSTATE class 40 (serialization failure, deadlock, shepherd's
// "replicas disagreed") or 55P03 (lock not available).
func Retryable(err error) bool {
	code := SQLState(err)
	return strings.HasPrefix(code, "40") || code == "55P03"
}

// SQLState returns the SQLSTATE err carries, or "".
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Run runs w with opts: each client opens one session per dialer and
// runs its transactions on all of them at once, waiting for every one to
// finish (with one dialer, that is an ordinary client; with several, the
// same load on several databases without any coordination). A
// non-retryable error stops the run and is returned, with what was
// measured so far.
func Run(ctx context.Context, w Workload, dialers []Dialer, opts Options) (*Result, error) {
	if opts.Clients < 1 {
		return nil, errors.New("bench: at least one client")
	}
	if opts.Duration <= 0 || opts.WarmUp < 0 || opts.Think < 0 {
		return nil, errors.New("bench: duration must be positive, warm-up and think time not negative")
	}
	if len(dialers) == 0 {
		return nil, errors.New("bench: no database to run on")
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = defaultMaxRetries
	}
	conns := make([][]Conn, opts.Clients)
	defer func() {
		for _, cs := range conns {
			for _, c := range cs {
				c.Close(context.Background())
			}
		}
	}()
	for i := range conns {
		for j, d := range dialers {
			c, err := d(ctx)
			if err != nil {
				return nil, fmt.Errorf("bench: client %d, database %d: connect: %w", i, j+1, err)
			}
			if j == 0 {
				c = &countingConn{Conn: c}
			}
			conns[i] = append(conns[i], c)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	win := window{from: start.Add(opts.WarmUp), to: start.Add(opts.WarmUp + opts.Duration)}
	var finished atomic.Int64
	cpuCtx, stopCPU := context.WithCancel(ctx)
	defer stopCPU()
	cpu := measureCPU(cpuCtx, win)
	stopProgress := make(chan struct{})
	var progressDone sync.WaitGroup
	if opts.Progress != nil {
		progressDone.Go(func() { report(opts, start, &finished, stopProgress) })
	}
	tallies := make([]*tally, opts.Clients)
	var wg sync.WaitGroup
	for i := range opts.Clients {
		cl := &client{
			gen:     w.Generator(i, opts.Seed),
			conns:   conns[i],
			opts:    &opts,
			win:     win,
			rng:     rand.New(rand.NewPCG(opts.Seed, uint64(i)^0x7468696e6b)), // "think"
			t:       newTally(),
			counter: &finished,
		}
		tallies[i] = cl.t
		wg.Go(func() {
			if err := cl.run(ctx); err != nil {
				cancel(fmt.Errorf("bench: client %d: %w", i, err))
			}
		})
	}
	wg.Wait()
	close(stopProgress)
	progressDone.Wait()
	total := newTally()
	for _, t := range tallies {
		total.merge(t)
	}
	res := total.result(w.Kinds(), opts.Clients, opts.Duration)
	if err := context.Cause(ctx); err != nil {
		measured := min(max(time.Since(win.from), 0), opts.Duration)
		res = total.result(w.Kinds(), opts.Clients, measured)
		return res, err
	}
	res.ProcessCPU = cpu()
	return res, nil
}

// measureCPU samples the process's CPU time at the start and the end of
// the window; the returned function waits for the end (which the caller
// has reached) and returns the difference. Cancelling ctx ends the
// sampling early (the difference is then zero).
func measureCPU(ctx context.Context, win window) func() time.Duration {
	var d time.Duration
	done := make(chan struct{})
	at := func(t time.Time) bool {
		timer := time.NewTimer(time.Until(t))
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		}
	}
	go func() {
		defer close(done)
		if !at(win.from) {
			return
		}
		from := processCPU()
		if at(win.to) {
			d = processCPU() - from
		}
	}()
	return func() time.Duration {
		<-done
		return d
	}
}

// processCPU returns the user and system CPU time the process used so
// far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report calls opts.Progress once a second until stop is closed.
func report(opts Options, start time.Time, finished *atomic.Int64, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := int64(0), start
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			n := finished.Load()
			rate := float64(n-last) / now.Sub(lastAt).Seconds()
			last, lastAt = n, now
			el := now.Sub(start)
			opts.Progress(Progress{Elapsed: el, Total: opts.WarmUp + opts.Duration,
				WarmUp: el < opts.WarmUp, Finished: n, Rate: rate})
		}
	}
}

// window is the measured time.
type window struct{ from, to time.Time }

// tally is what one client counted.
type tally struct {
	statements int64
	all        latency.Histogram
	kinds      map[string]*kindTally
	aborts     map[string]int64
}

type kindTally struct {
	KindResult
	hist latency.Histogram
}

func newTally() *tally {
	return &tally{kinds: map[string]*kindTally{}, aborts: map[string]int64{}}
}

func (t *tally) kind(name string) *kindTally {
	k := t.kinds[name]
	if k == nil {
		k = &kindTally{}
		t.kinds[name] = k
	}
	return k
}

func (t *tally) merge(o *tally) {
	t.all.Merge(&o.all)
	t.statements += o.statements
	for name, ok := range o.kinds {
		k := t.kind(name)
		k.Finished += ok.Finished
		k.RolledBack += ok.RolledBack
		k.Aborted += ok.Aborted
		k.Failed += ok.Failed
		k.hist.Merge(&ok.hist)
	}
	for code, n := range o.aborts {
		t.aborts[code] += n
	}
}

func (t *tally) result(kinds []string, clients int, measured time.Duration) *Result {
	r := &Result{Clients: clients, Measured: measured, Latency: t.all.Summary(),
		Kinds: map[string]KindResult{}, Aborts: maps.Clone(t.aborts)}
	r.hist.Merge(&t.all)
	r.Statements = t.statements
	names := slices.Sorted(maps.Keys(t.kinds))
	for _, name := range append(slices.Clone(kinds), names...) {
		k, ok := t.kinds[name]
		if !ok {
			continue
		}
		if _, done := r.Kinds[name]; done {
			continue
		}
		kr := k.KindResult
		kr.Latency = k.hist.Summary()
		r.Kinds[name] = kr
		if r.kindHist == nil {
			r.kindHist = map[string]*latency.Histogram{}
		}
		h := &latency.Histogram{}
		h.Merge(&k.hist)
		r.kindHist[name] = h
		r.Finished += kr.Finished
		r.RolledBack += kr.RolledBack
		r.Aborted += kr.Aborted
		r.Failed += kr.Failed
	}
	if measured > 0 {
		r.Throughput = float64(r.Finished) / measured.Seconds()
	}
	return r
}

// client is one simulated user: a generator and a session per database.
type client struct {
	gen     Generator
	conns   []Conn
	opts    *Options
	win     window
	rng     *rand.Rand
	t       *tally
	counter *atomic.Int64
}

func (c *client) run(ctx context.Context) error {
	for ctx.Err() == nil && time.Now().Before(c.win.to) {
		txn := c.gen.Next()
		counter := c.conns[0].(*countingConn)
		counter.n = 0
		start := time.Now()
		out, err := c.everywhere(ctx, txn)
		if err != nil {
			if ctx.Err() != nil {
				return nil // stopped by another client, or by the caller
			}
			return fmt.Errorf("%s: %w", txn.Kind, err)
		}
		done := time.Now()
		c.counter.Add(1)
		if !done.Before(c.win.from) && done.Before(c.win.to) {
			k := c.t.kind(txn.Kind)
			k.Aborted += int64(len(out.aborts))
			for _, code := range out.aborts {
				c.t.aborts[code]++
			}
			if out.failed {
				k.Failed++
			} else {
				k.Finished++
				c.t.statements += counter.n
				if out.rolledBack {
					k.RolledBack++
				}
				k.hist.Add(done.Sub(start))
				c.t.all.Add(done.Sub(start))
			}
		}
		if !c.think(ctx) {
			return nil
		}
	}
	return nil
}

// think pauses after a transaction; it reports whether to go on.
func (c *client) think(ctx context.Context) bool {
	if c.opts.Think <= 0 {
		return true
	}
	mean := float64(c.opts.Think)
	d := time.Duration(math.Min(c.rng.ExpFloat64()*mean, 10*mean))
	if time.Now().Add(d).After(c.win.to) {
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

// outcome is how one transaction ended on every database.
type outcome struct {
	rolledBack bool
	failed     bool
	aborts     []string // SQLSTATEs of aborted attempts
}

// everywhere runs txn on each of the client's sessions at once, each with
// its own retries, and waits for all of them.
func (c *client) everywhere(ctx context.Context, txn Txn) (outcome, error) {
	if len(c.conns) == 1 {
		return c.retried(ctx, txn, c.conns[0])
	}
	outs := make([]outcome, len(c.conns))
	errs := make([]error, len(c.conns))
	var wg sync.WaitGroup
	for i, conn := range c.conns {
		wg.Go(func() { outs[i], errs[i] = c.retried(ctx, txn, conn) })
	}
	wg.Wait()
	var all outcome
	for i, o := range outs {
		if errs[i] != nil {
			return all, fmt.Errorf("database %d: %w", i+1, errs[i])
		}
		all.rolledBack = all.rolledBack || o.rolledBack
		all.failed = all.failed || o.failed
		all.aborts = append(all.aborts, o.aborts...)
	}
	return all, nil
}

// retried runs txn on conn until it finishes, fails for good, or has
// been aborted more than MaxRetries times.
func (c *client) retried(ctx context.Context, txn Txn, conn Conn) (outcome, error) {
	var o outcome
	for attempt := 0; ; attempt++ {
		rb, err := txn.Run(ctx, conn)
		if err == nil {
			o.rolledBack = rb
			return o, nil
		}
		if !Retryable(err) {
			return o, err
		}
		o.aborts = append(o.aborts, SQLState(err))
		if attempt >= c.opts.MaxRetries {
			o.failed = true
			return o, nil
		}
	}
}

// countingConn counts the statements run through it and through the
// transactions it begins (BEGIN, COMMIT and ROLLBACK included), for the
// statements per transaction and the CPU per statement. The count is
// reset before each transaction and read after it finished: the last
// attempt's statements.
type countingConn struct {
	Conn
	n int64
}

func (c *countingConn) Begin(ctx context.Context) (pgx.Tx, error) {
	return c.BeginTx(ctx, pgx.TxOptions{})
}

func (c *countingConn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	c.n = 1
	tx, err := c.Conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &countingTx{Tx: tx, n: &c.n}, nil
}

func (c *countingConn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.n++
	return c.Conn.Exec(ctx, sql, args...)
}

func (c *countingConn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.n++
	return c.Conn.Query(ctx, sql, args...)
}

func (c *countingConn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c.n++
	return c.Conn.QueryRow(ctx, sql, args...)
}

type countingTx struct {
	pgx.Tx
	n *int64
}

func (t *countingTx) Commit(ctx context.Context) error {
	*t.n++
	return t.Tx.Commit(ctx)
}

func (t *countingTx) Rollback(ctx context.Context) error {
	*t.n++
	return t.Tx.Rollback(ctx)
}

func (t *countingTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	*t.n++
	return t.Tx.Exec(ctx, sql, args...)
}

func (t *countingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	*t.n++
	return t.Tx.Query(ctx, sql, args...)
}

func (t *countingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	*t.n++
	return t.Tx.QueryRow(ctx, sql, args...)
}
