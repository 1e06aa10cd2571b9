// Command shepherd-bench measures shepherd, mode by mode, next to the
// databases it runs on: TPC-C and bank transfers against one target or
// swept over every mode and several client counts, and pgbench through
// shepherd, PgBouncer and PostgreSQL. See BENCHMARKS.md. It is a command
// of its own so that the server (cmd/shepherd) does not link the
// benchmark, its plotting stack or its engine starter.
//
//	shepherd-bench tpcc|bank|sweep|pgbench|plot [flags]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/shepherd-db/shepherd/internal/bench"
	"github.com/shepherd-db/shepherd/internal/bench/link"
	"github.com/shepherd-db/shepherd/internal/testenv"
	"github.com/shepherd-db/shepherd/internal/workload/tpcc"
)

const benchUsage = `usage:
  shepherd-bench tpcc  [flags]   TPC-C against one target
  shepherd-bench bank  [flags]   bank transfers against one target
  shepherd-bench sweep [flags]   every mode at several client counts, side by side
  shepherd-bench pgbench [flags] pgbench through passthrough, PgBouncer and
                                 directly on PostgreSQL, alternating
  shepherd-bench plot [--title T] results.json
                                 draw a sweep's plot again (throughput.png, .svg
                                 next to the file)

A target (--target) is a PostgreSQL-wire URL (postgres://..., a running
shepherd or a PostgreSQL server; the workload's tables are dropped and
loaded there unless --load=false) or one of the systems bench builds itself
on fresh databases of the engines (--engines local, or --mariadb,
--postgres, --sqlite-dir):
  direct         MariaDB alone, no proxy (statements translated in process)
  direct-pg      PostgreSQL alone
  direct-sqlite  SQLite alone (translated in process)
  passthrough    shepherd in passthrough mode over MariaDB
  cbs, ss, serial
                 shepherd in that mode over MariaDB (primary), PostgreSQL
                 and SQLite, f=1
  bound          the three-direct bound: each transaction on MariaDB,
                 PostgreSQL and SQLite at once, no coordination
  cbs-locking    cbs over MariaDB, PostgreSQL and a second MariaDB database
                 (a secondary that runs transactions concurrently)

Run 'shepherd-bench tpcc -h' (bank, sweep, pgbench) for the flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the benchmark subcommands.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	switch args[0] {
	case "tpcc", "bank":
		return benchSingle(args[0], args[1:], stdout, stderr)
	case "sweep":
		return benchSweep(args[1:], stdout, stderr)
	case "pgbench":
		return benchPgbench(args[1:], stdout, stderr)
	case "plot":
		return benchPlot(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	fmt.Fprintf(stderr, "shepherd-bench: unknown workload or command %q\n", args[0])
	fmt.Fprint(stderr, benchUsage)
	return 2
}

// benchFlags are the flags every bench command takes.
type benchFlags struct {
	fs *flag.FlagSet
	engineFlags
	// engines
	engines, mariadb, postgres, sqliteDir, sqliteDriver string
	// run
	warmup, duration, think time.Duration
	seed                    uint64
	maxRetries              int
	check, quiet            bool
	logLevel                string
	// tpcc
	warehouses, items, customers, orders int
	loadSeed                             uint64
	// bank
	accounts, hotAccounts int
	hotShare, readOnly    float64
	declareReadOnly       bool
}

func newBenchFlags(name string, stderr io.Writer, workload bool) *benchFlags {
	f := &benchFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(stderr)
	fs.StringVar(&f.engines, "engines", "", `"local": start throw-away MariaDB and PostgreSQL servers (Debian's packages) for the run`)
	fs.StringVar(&f.mariadb, "mariadb", "", "MariaDB server: go-sql-driver DSN of a user that may create databases")
	fs.StringVar(&f.postgres, "postgres", "", "PostgreSQL server: postgres:// URL of a user that may create databases")
	fs.StringVar(&f.sqliteDir, "sqlite-dir", "", "directory for SQLite files (default: a temporary directory)")
	fs.StringVar(&f.sqliteDriver, "sqlite-driver", "sqlite", "shepherd's SQLite driver: sqlite (pure Go) or sqlite-cgo")
	f.engineFlags.register(fs)
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "warm-up before measuring")
	fs.DurationVar(&f.duration, "duration", 30*time.Second, "measured time")
	fs.DurationVar(&f.think, "think", 0, "mean think time after each transaction, exponential (the HRDB paper: 200ms)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the clients' transaction streams")
	fs.IntVar(&f.maxRetries, "max-retries", 20, "retries of an aborted transaction before it counts as failed")
	fs.BoolVar(&f.check, "check", true, "check the workload's invariants after each run")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress line")
	fs.StringVar(&f.logLevel, "log", "", "log in-process shepherds at this level (debug, info, warn, error) to stderr")
	if workload || name == "tpcc" {
		fs.IntVar(&f.warehouses, "warehouses", 1, "tpcc: warehouses")
		fs.IntVar(&f.items, "items", 10000, "tpcc: items (the benchmark: 100000)")
		fs.IntVar(&f.customers, "customers", 300, "tpcc: customers per district (the benchmark: 3000)")
		fs.IntVar(&f.orders, "orders", 300, "tpcc: orders loaded per district, at most --customers (the benchmark: 3000)")
		fs.Uint64Var(&f.loadSeed, "load-seed", 1, "tpcc: seed of the loaded data")
	}
	if workload || name == "bank" {
		fs.IntVar(&f.accounts, "accounts", 10000, "bank: accounts")
		fs.IntVar(&f.hotAccounts, "hot-accounts", 10, "bank: size of the hot spot (accounts 1..N)")
		fs.Float64Var(&f.hotShare, "hot-share", 0, "bank: probability that an account touched is drawn from the hot spot")
		fs.Float64Var(&f.readOnly, "read-only", 0, "bank: share of read-only balance inquiries")
		fs.BoolVar(&f.declareReadOnly, "declare-read-only", false, "bank: start inquiries with BEGIN READ ONLY (breaks cbs/ss replicas today, see BENCHMARKS.md)")
	}
	return f
}

// workload builds the named workload from the flags.
func (f *benchFlags) workload(name string) (bench.Workload, any, error) {
	switch name {
	case "tpcc":
		cfg := bench.TPCCConfig{Scale: tpcc.Scale{Warehouses: f.warehouses, Items: f.items,
			Customers: f.customers, Orders: f.orders}, LoadSeed: f.loadSeed}
		w, err := bench.NewTPCC(cfg)
		return w, cfg, err
	case "bank":
		w, err := bench.NewBank(bench.BankConfig{Accounts: f.accounts, HotAccounts: f.hotAccounts,
			HotShare: f.hotShare, ReadOnly: f.readOnly, DeclareReadOnly: f.declareReadOnly})
		if err != nil {
			return nil, nil, err
		}
		return w, w.Config(), nil
	}
	return nil, nil, fmt.Errorf("unknown workload %q (tpcc or bank)", name)
}

// engineFlags shape the engines of every command: the servers' durability
// and the links to them.
type engineFlags struct {
	durable bool
	link    link.Config
}

func (ef *engineFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&ef.durable, "durable", false, "the servers the benchmark starts sync every commit to disk (PostgreSQL fsync, synchronous_commit and full_page_writes on; MariaDB innodb_flush_log_at_trx_commit=1 and doublewrite); SQLite keeps shepherd's synchronous=NORMAL")
	fs.DurationVar(&ef.link.Delay, "link-delay", 0, "one-way delay of a link (an in-process TCP proxy) in front of MariaDB and PostgreSQL, as if each ran on a machine of its own: 250us for a LAN, 10ms WAN-like")
	fs.DurationVar(&ef.link.Jitter, "link-jitter", 0, "random extra delay of each chunk on a link, uniform below this (chunks are not reordered)")
	fs.Int64Var(&ef.link.Bandwidth, "link-bandwidth", 0, "bytes per second each way on each link (0: unbounded)")
	fs.Uint64Var(&ef.link.Seed, "link-seed", 1, "seed of the links' jitter")
}

// localOptions are the settings of a server the benchmark starts: larger
// caches and more connections than the tests' servers, and, unless
// durable, commits acknowledged before their log is written.
func (ef *engineFlags) localOptions(engine string) testenv.Options {
	o := testenv.Options{Durable: ef.durable}
	switch engine {
	case "postgres":
		o.Settings = map[string]string{"max_connections": "300", "shared_buffers": "256MB"}
		if !ef.durable {
			o.Settings["synchronous_commit"] = "off"
		}
	case "mariadb":
		o.Settings = map[string]string{"innodb-buffer-pool-size": "256M", "max-connections": "400"}
		if !ef.durable {
			o.Settings["innodb-doublewrite"] = "0"
		}
	}
	return o
}

// withLinks puts the links in front of e's servers, if any are asked
// for; cleanup (appended to stops) closes them.
func (ef *engineFlags) withLinks(e *bench.Engines, stderr io.Writer, stops *[]func()) (*bench.Engines, *bench.Links, error) {
	if ef.link.Zero() {
		return e, nil, nil
	}
	le, links, err := e.WithLinks(ef.link)
	if err != nil {
		return nil, nil, err
	}
	*stops = append(*stops, links.Close)
	fmt.Fprintf(stderr, "bench: links to the servers: %s\n", ef.link)
	return le, links, nil
}

// settings adds the engine flags to a report's settings.
func (ef *engineFlags) settings(s *bench.Settings, links *bench.Links) {
	s.Durable = ef.durable
	s.Link = links.Settings()
	s.LinkHeld = links.Held()
}

// reportHeld prints how long the links really held their chunks.
func reportHeld(w io.Writer, links *bench.Links) {
	held := links.Held()
	names := make([]string, 0, len(held))
	for name := range held {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		h := held[name]
		fmt.Fprintf(w, "link to %s (%s): chunks held p50 %v p99 %v max %v\n", name, links.Config, h.P50, h.P99, h.Max)
	}
}

// engineSet resolves the engine flags, starting local servers if asked
// and putting links in front of them; cleanup stops them.
func (f *benchFlags) engineSet(ctx context.Context, stderr io.Writer) (e *bench.Engines, links *bench.Links, cleanup func(), err error) {
	var stops []func()
	cleanup = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (*bench.Engines, *bench.Links, func(), error) {
		cleanup()
		return nil, nil, func() {}, err
	}
	if err := f.link.Check(); err != nil {
		return fail(err)
	}
	e = &bench.Engines{MariaDB: f.mariadb, Postgres: f.postgres, SQLiteDir: f.sqliteDir, SQLiteDriver: f.sqliteDriver}
	switch f.engines {
	case "":
		if f.durable {
			return fail(errors.New("--durable is for the servers --engines local starts; configure your own servers' durability yourself"))
		}
	case "local":
		what := "without fsync"
		if f.durable {
			what = "syncing every commit to disk"
		}
		fmt.Fprintf(stderr, "bench: starting MariaDB and PostgreSQL in temporary directories, %s\n", what)
		if e.MariaDB == "" {
			s, err := testenv.StartMariaDB(ctx, f.localOptions("mariadb"))
			if err != nil {
				return fail(err)
			}
			stops = append(stops, s.Stop)
			e.MariaDB = s.DSN
		}
		if e.Postgres == "" {
			s, err := testenv.StartPostgres(ctx, f.localOptions("postgres"))
			if err != nil {
				return fail(err)
			}
			stops = append(stops, s.Stop)
			e.Postgres = s.DSN
		}
	default:
		return fail(fmt.Errorf(`--engines takes "local", not %q`, f.engines))
	}
	if e.SQLiteDir == "" {
		dir, err := os.MkdirTemp("", "shepherd-bench-sqlite-*")
		if err != nil {
			return fail(err)
		}
		stops = append(stops, func() { os.RemoveAll(dir) })
		e.SQLiteDir = dir
	}
	e, links, err = f.withLinks(e, stderr, &stops)
	if err != nil {
		return fail(err)
	}
	return e, links, cleanup, nil
}

func (f *benchFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	if f.logLevel == "" {
		return nil, nil
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log: %w", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})), nil
}

func (f *benchFlags) options() bench.Options {
	return bench.Options{WarmUp: f.warmup, Duration: f.duration, Think: f.think, Seed: f.seed, MaxRetries: f.maxRetries}
}

// progress returns a progress printer for stderr: a line rewritten in
// place on a terminal, a line every ten seconds otherwise.
func progress(stderr io.Writer, quiet bool, label func() string) (func(bench.Progress), func()) {
	if quiet {
		return nil, func() {}
	}
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	var last time.Duration
	show := func(p bench.Progress) {
		phase := "run"
		if p.WarmUp {
			phase = "warm-up"
		}
		line := fmt.Sprintf("%s %s %3.0fs/%.0fs %s %8d txn %8.1f txn/s", label(), bar(p.Elapsed, p.Total), p.Elapsed.Seconds(),
			p.Total.Seconds(), phase, p.Finished, p.Rate)
		if tty {
			fmt.Fprintf(stderr, "\r%s\x1b[K", line)
			return
		}
		if p.Elapsed-last >= 10*time.Second {
			last = p.Elapsed
			fmt.Fprintln(stderr, line)
		}
	}
	done := func() {
		last = 0
		if tty {
			fmt.Fprint(stderr, "\r\x1b[K")
		}
	}
	return show, done
}

// bar draws a 20-character progress bar.
func bar(el, total time.Duration) string {
	const width = 20
	n := 0
	if total > 0 {
		n = min(int(float64(width)*el.Seconds()/total.Seconds()), width)
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// benchSingle runs one workload against one target.
func benchSingle(name string, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags(name, stderr, false)
	target := f.fs.String("target", "cbs", "what to measure: a postgres:// URL or a mode (see 'shepherd-bench help')")
	clients := f.fs.Int("clients", 8, "concurrent clients")
	load := f.fs.Bool("load", true, "with a URL target: drop and load the workload's tables first")
	jsonOut := f.fs.String("json", "", "also write the result as JSON to this file")
	cpuProfile := f.fs.String("cpuprofile", "", "write a CPU profile of the measured run (this process: clients and an in-process shepherd) to this file")
	memProfile := f.fs.String("memprofile", "", "write an allocation profile (since start) to this file after the run")
	if err := f.fs.Parse(args); err != nil {
		return 2
	}
	if f.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shepherd-bench %s: unexpected arguments %q\n", name, f.fs.Args())
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	w, wcfg, err := f.workload(name)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench:", err)
		return 2
	}
	log, err := f.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench:", err)
		return 2
	}
	report := &bench.Report{Command: os.Args, Started: time.Now(), Workload: name, Config: wcfg, Target: *target,
		Settings: bench.Settings{Clients: []int{*clients}, Rounds: 1, WarmUp: f.warmup, Duration: f.duration,
			Think: f.think, Seed: f.seed}}
	var dialers []bench.Dialer
	var sys *bench.System
	var engines *bench.Engines
	var links *bench.Links
	isURL := strings.HasPrefix(*target, "postgres://") || strings.HasPrefix(*target, "postgresql://")
	if isURL {
		if f.durable || !f.link.Zero() || f.engines != "" {
			fmt.Fprintln(stderr, "shepherd-bench: --engines, --durable and --link-* shape the engines of a mode; a URL target is measured as it is")
			return 2
		}
		d, err := bench.PGDialer(*target)
		if err != nil {
			fmt.Fprintln(stderr, "shepherd-bench:", err)
			return 2
		}
		dialers = []bench.Dialer{d}
	} else {
		e, l, cleanup, err := f.engineSet(ctx, stderr)
		defer cleanup()
		if err != nil {
			fmt.Fprintln(stderr, "shepherd-bench:", err)
			return 1
		}
		engines, links = e, l
		sys, err = e.Open(ctx, *target, name, log)
		if err != nil {
			fmt.Fprintln(stderr, "shepherd-bench:", err)
			return 1
		}
		defer func() {
			if err := sys.Close(context.Background()); err != nil {
				fmt.Fprintln(stderr, "shepherd-bench: close:", err)
			}
		}()
		dialers = sys.Dialers
	}
	report.Machine = bench.ThisMachine(ctx, engines)
	if !isURL || *load {
		fmt.Fprintf(stderr, "bench: loading %s on %s\n", name, *target)
		start := time.Now()
		var err error
		if sys != nil {
			err = sys.Load(ctx, w)
		} else {
			err = loadURL(ctx, dialers[0], w)
		}
		if err != nil {
			fmt.Fprintln(stderr, "shepherd-bench: load:", err)
			return 1
		}
		fmt.Fprintf(stderr, "bench: loaded in %v\n", time.Since(start).Round(time.Millisecond))
	}
	opts := f.options()
	opts.Clients = *clients
	show, done := progress(stderr, f.quiet, func() string { return fmt.Sprintf("%s %s c=%d", name, *target, *clients) })
	opts.Progress = show
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench:", err)
		return 1
	}
	res, runErr := bench.Run(ctx, w, dialers, opts)
	done()
	if err := stopProfile(); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench:", err)
	}
	if *memProfile != "" {
		if err := writeAllocs(*memProfile); err != nil {
			fmt.Fprintln(stderr, "shepherd-bench:", err)
		}
	}
	rec := bench.RunRecord{Mode: *target, Clients: *clients, Round: 1, Result: res}
	if runErr != nil {
		rec.Error = runErr.Error()
	}
	if res != nil {
		fmt.Fprintf(stdout, "%s on %s\n", name, *target)
		bench.FormatResult(stdout, res, w.Kinds())
	}
	code := 0
	if runErr != nil {
		fmt.Fprintln(stderr, "shepherd-bench:", runErr)
		code = 1
	}
	if f.check && runErr == nil {
		var err error
		if sys != nil {
			err = sys.Check(ctx, w)
		} else {
			err = checkURL(ctx, dialers[0], w)
		}
		if err != nil {
			rec.Check = err.Error()
			fmt.Fprintln(stdout, "check: FAILED:", err)
			code = 1
		} else {
			rec.Check = "ok"
			fmt.Fprintln(stdout, "check: ok")
		}
	}
	if sys != nil {
		for _, r := range sys.Replicas() {
			rec.Replicas = append(rec.Replicas, bench.ReplicaState{Name: r.Name, Class: r.Class, Role: r.Role,
				State: r.State, Mismatches: r.Mismatches, Reruns: r.Reruns})
			fmt.Fprintf(stdout, "replica %s (%s, %s): %s, %d mismatches, %d re-runs\n", r.Name, r.Class, r.Role,
				r.State, r.Mismatches, r.Reruns)
		}
	}
	if links != nil {
		reportHeld(stdout, links)
	}
	f.settings(&report.Settings, links)
	report.Runs = []bench.RunRecord{rec}
	report.Summary = bench.Summarise(report.Runs)
	report.Finished = time.Now()
	if *jsonOut != "" {
		if err := report.WriteJSON(*jsonOut); err != nil {
			fmt.Fprintln(stderr, "shepherd-bench:", err)
			return 1
		}
	}
	return code
}

// startCPUProfile starts profiling the CPU into path ("" does nothing);
// the returned function stops it.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return fh.Close()
	}, nil
}

// writeAllocs writes the allocation profile to path.
func writeAllocs(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	err = pprof.Lookup("allocs").WriteTo(fh, 0)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

func loadURL(ctx context.Context, d bench.Dialer, w bench.Workload) error {
	c, err := d(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return w.Load(ctx, c)
}

func checkURL(ctx context.Context, d bench.Dialer, w bench.Workload) error {
	c, err := d(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return w.Check(ctx, c)
}

// benchSweep measures every mode at several client counts.
func benchSweep(args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("sweep", stderr, true)
	workload := f.fs.String("workload", "tpcc", "tpcc or bank")
	modes := f.fs.String("modes", strings.Join(bench.Modes, ","), "modes to measure, comma-separated")
	clientList := f.fs.String("clients", "1,4,8,16,32", "client counts, comma-separated")
	rounds := f.fs.Int("rounds", 1, "times the whole grid is run")
	out := f.fs.String("out", "bench-out", "directory for results.json, results.csv, runs.csv, throughput.png and .svg")
	title := f.fs.String("title", "", "plot title (default: the workload and settings)")
	f.duration = 20 * time.Second
	f.fs.Lookup("duration").DefValue = "20s"
	if err := f.fs.Set("duration", "20s"); err != nil {
		panic(err)
	}
	if err := f.fs.Parse(args); err != nil {
		return 2
	}
	if f.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shepherd-bench sweep: unexpected arguments %q\n", f.fs.Args())
		return 2
	}
	counts, err := parseInts(*clientList)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep: --clients:", err)
		return 2
	}
	modeList := splitList(*modes)
	ctx, stop := signalContext()
	defer stop()
	w, wcfg, err := f.workload(*workload)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 2
	}
	log, err := f.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 1
	}
	e, links, cleanup, err := f.engineSet(ctx, stderr)
	defer cleanup()
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 1
	}
	if err := e.CheckModes(modeList); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 2
	}
	report := &bench.Report{Command: os.Args, Started: time.Now(), Workload: *workload, Config: wcfg,
		Machine: bench.ThisMachine(ctx, e),
		Settings: bench.Settings{Modes: modeList, Clients: counts, Rounds: *rounds, WarmUp: f.warmup,
			Duration: f.duration, Think: f.think, Seed: f.seed}}
	label := ""
	show, done := progress(stderr, f.quiet, func() string { return label })
	opts := f.options()
	runs, points, err := bench.Sweep(ctx, bench.SweepConfig{
		Workload: w, Engines: e, Modes: modeList, Clients: counts, Rounds: *rounds,
		Options: opts, Check: f.check, Log: log, Progress: show,
		Started: func(step, steps int, mode string, clients, round int) {
			label = fmt.Sprintf("[%d/%d] %-11s c=%-3d", step, steps, mode, clients)
			if !f.quiet {
				fmt.Fprintf(stderr, "%s round %d: loading\n", label, round)
			}
		},
		Done: func(rec bench.RunRecord) {
			done()
			line := fmt.Sprintf("%-11s c=%-3d round %d:", rec.Mode, rec.Clients, rec.Round)
			if r := rec.Result; r != nil {
				line += fmt.Sprintf(" %8.1f txn/s p50 %s p99 %s aborts %.2f%% (load %v)", r.Throughput,
					r.Latency.P50.Round(10*time.Microsecond), r.Latency.P99.Round(10*time.Microsecond),
					100*r.AbortRate(), rec.LoadTime.Round(100*time.Millisecond))
			}
			if rec.Check != "" && rec.Check != "ok" {
				line += " CHECK FAILED: " + rec.Check
			}
			for _, r := range rec.Replicas {
				if r.Mismatches > 0 || r.State != "up" {
					line += fmt.Sprintf(" replica %s %s with %d mismatches", r.Name, r.State, r.Mismatches)
				}
			}
			if rec.Error != "" {
				line += " ERROR: " + rec.Error
			}
			fmt.Fprintln(stderr, line)
		},
	})
	report.Runs, report.Summary, report.Finished = runs, points, time.Now()
	f.settings(&report.Settings, links)
	code := 0
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		code = 1
	}
	fmt.Fprintf(stdout, "\n%s, %s per run after %s warm-up, think %s, seed %d, %d round(s)\n\n", *workload, f.duration, f.warmup, f.think, f.seed, *rounds)
	bench.FormatSummary(stdout, points)
	if links != nil {
		fmt.Fprintln(stdout)
		reportHeld(stdout, links)
	}
	if err := writeSweep(*out, report, *title); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench sweep:", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join([]string{"results.json", "results.csv", "runs.csv", "throughput.png", "throughput.svg"}, ", ")+" in "+*out)
	return code
}

func writeSweep(dir string, r *bench.Report, title string) error {
	if err := r.WriteJSON(filepath.Join(dir, "results.json")); err != nil {
		return err
	}
	for name, write := range map[string]func(io.Writer) error{
		"results.csv": func(w io.Writer) error { return bench.WriteSummaryCSV(w, r.Summary) },
		"runs.csv":    func(w io.Writer) error { return bench.WriteRunsCSV(w, r.Runs) },
	} {
		fh, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = write(fh)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return plotReport(dir, r, title)
}

// plotReport draws the report's plot into dir; an empty title says what
// was run.
func plotReport(dir string, r *bench.Report, title string) error {
	if title == "" {
		what := r.Workload
		if cfg, ok := r.Config.(map[string]any); ok {
			if w, ok := cfg["Warehouses"].(float64); ok {
				what += fmt.Sprintf(", %.0f warehouse(s)", w)
			}
		} else if cfg, ok := r.Config.(bench.TPCCConfig); ok {
			what += fmt.Sprintf(", %d warehouse(s)", cfg.Warehouses)
		}
		if l := r.Settings.Link; l != nil {
			what += fmt.Sprintf(", links %v one way", l.Delay)
		}
		if r.Settings.Durable {
			what += ", durable"
		}
		title = fmt.Sprintf("%s, think %v, %v per point, %d CPUs", what, r.Settings.Think, r.Settings.Duration, r.Machine.CPUs)
	}
	return bench.Plot(r.Summary, title, filepath.Join(dir, "throughput.png"), filepath.Join(dir, "throughput.svg"))
}

// benchPlot draws the plot of a sweep's results.json again.
func benchPlot(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	title := fs.String("title", "", "plot title (default: the workload and settings)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: shepherd-bench plot [--title T] results.json")
		return 2
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "shepherd-bench plot:", err)
		return 1
	}
	var r bench.Report
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench plot:", err)
		return 1
	}
	dir := filepath.Dir(fs.Arg(0))
	if err := plotReport(dir, &r, *title); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench plot:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote throughput.png, throughput.svg in %s\n", dir)
	return 0
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range splitList(s) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
