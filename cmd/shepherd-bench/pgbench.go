package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/bench"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// pgbenchTarget is one system pgbench runs against.
type pgbenchTarget struct {
	Name string    `json:"name"`
	URL  string    `json:"-"`
	TPS  []float64 `json:"tps"` // one per round
}

func (t *pgbenchTarget) mean() float64 {
	if len(t.TPS) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range t.TPS {
		sum += x
	}
	return sum / float64(len(t.TPS))
}

// benchPgbench compares shepherd's passthrough mode with PgBouncer and
// with PostgreSQL itself under pgbench, alternating the three in one run.
func benchPgbench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pgbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pgURL := fs.String("postgres", "", "PostgreSQL server (postgres:// URL of a user that may create databases; default: start one)")
	clients := fs.Int("clients", 8, "pgbench clients (-c)")
	threads := fs.Int("threads", 2, "pgbench threads (-j)")
	secs := fs.Int("seconds", 10, "seconds per pgbench run (-T)")
	rounds := fs.Int("rounds", 3, "rounds; each runs direct, PgBouncer and passthrough once")
	scale := fs.Int("scale", 1, "pgbench scale (-s)")
	protocol := fs.String("protocol", "prepared", "pgbench query protocol (-M): simple, extended or prepared")
	script := fs.String("builtin", "select-only", "pgbench built-in script (-b): select-only, simple-update, tpcb-like")
	jsonOut := fs.String("json", "", "also write the result as JSON to this file")
	noBouncer := fs.Bool("no-pgbouncer", false, "leave PgBouncer out")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the in-process shepherd during its pgbench runs to this file")
	var ef engineFlags
	ef.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "shepherd-bench pgbench:", err)
		return 1
	}
	if err := ef.link.Check(); err != nil {
		fmt.Fprintln(stderr, "shepherd-bench pgbench:", err)
		return 2
	}
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		return fail(fmt.Errorf("pgbench not found (Debian's postgresql-client): %w", err))
	}
	ctx, stop := signalContext()
	defer stop()
	if *pgURL == "" {
		fmt.Fprintln(stderr, "bench: starting PostgreSQL in a temporary directory")
		s, err := testenv.StartPostgres(ctx, ef.localOptions("postgres"))
		if err != nil {
			return fail(err)
		}
		defer s.Stop()
		*pgURL = s.DSN
	} else if ef.durable {
		fmt.Fprintln(stderr, "shepherd-bench pgbench: --durable is for the server it starts; configure your own server's durability yourself")
		return 2
	}
	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	// Every system reaches PostgreSQL through the link: pgbench itself
	// (direct), PgBouncer and shepherd.
	e, links, err := ef.withLinks(&bench.Engines{Postgres: *pgURL}, stderr, &stops)
	if err != nil {
		return fail(err)
	}
	dbs, err := e.Fresh(ctx, "pgbench")
	if err != nil {
		return fail(err)
	}
	defer dbs.Drop(context.Background())
	u, err := url.Parse(dbs.Postgres)
	if err != nil {
		return fail(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	fmt.Fprintf(stderr, "bench: pgbench -i -s %d\n", *scale)
	if out, err := exec.CommandContext(ctx, pgbench, "-i", "-q", "-s", strconv.Itoa(*scale), dbs.Postgres).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgbench -i: %v\n%s", err, out))
	}
	targets := []*pgbenchTarget{{Name: "direct", URL: dbs.Postgres}}
	if !*noBouncer {
		port, _ := strconv.Atoi(u.Port())
		b, err := testenv.StartPgBouncer(ctx, u.Hostname(), port, dbName, *clients)
		if err != nil {
			return fail(err)
		}
		defer b.Stop()
		targets = append(targets, &pgbenchTarget{Name: "pgbouncer", URL: b.DSN})
	}
	dataDir, err := os.MkdirTemp("", "shepherd-bench-pgbench-*")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dataDir)
	sh, err := bench.StartShepherd(ctx, &config.Config{Listen: "127.0.0.1:0", DataDir: dataDir, Mode: "passthrough",
		Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: dbs.Postgres}}}, nil)
	if err != nil {
		return fail(err)
	}
	defer sh.Close()
	targets = append(targets, &pgbenchTarget{Name: "passthrough", URL: sh.URL()})
	tpsRe := regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)
	var profile *os.File
	if *cpuProfile != "" {
		if profile, err = os.Create(*cpuProfile); err != nil {
			return fail(err)
		}
		defer profile.Close()
	}
	started := time.Now()
	for round := range *rounds {
		for k := range targets {
			t := targets[(k+round)%len(targets)]
			profiling := profile != nil && t.Name == "passthrough"
			if profiling {
				// Only shepherd runs in this process: profile its runs alone.
				if err := pprof.StartCPUProfile(profile); err != nil {
					return fail(err)
				}
			}
			out, err := exec.CommandContext(ctx, pgbench, "-n", "-b", *script, "-M", *protocol,
				"-c", strconv.Itoa(*clients), "-j", strconv.Itoa(*threads), "-T", strconv.Itoa(*secs), t.URL).CombinedOutput()
			if profiling {
				pprof.StopCPUProfile()
				profile = nil // a profile file holds one profile: the first run's
			}
			m := tpsRe.FindSubmatch(out)
			if err != nil || m == nil {
				return fail(fmt.Errorf("pgbench against %s: %v\n%s", t.Name, err, out))
			}
			tps, _ := strconv.ParseFloat(string(m[1]), 64)
			t.TPS = append(t.TPS, tps)
			fmt.Fprintf(stderr, "round %d %-11s %9.0f tps\n", round+1, t.Name, tps)
		}
	}
	fmt.Fprintf(stdout, "pgbench -b %s -M %s -c %d -j %d, %d s per run, %d rounds, scale %d\n\n",
		*script, *protocol, *clients, *threads, *secs, *rounds, *scale)
	fmt.Fprintln(stdout, "| system | tps (mean) | × direct | × PgBouncer |")
	fmt.Fprintln(stdout, "|---|---:|---:|---:|")
	direct := targets[0].mean()
	var bouncer float64
	if !*noBouncer {
		bouncer = targets[1].mean()
	}
	for _, t := range targets {
		vsB := "-"
		if bouncer > 0 {
			vsB = fmt.Sprintf("%.2f", t.mean()/bouncer)
		}
		fmt.Fprintf(stdout, "| %s | %.0f | %.2f | %s |\n", t.Name, t.mean(), t.mean()/direct, vsB)
	}
	if links != nil {
		fmt.Fprintln(stdout)
		reportHeld(stdout, links)
	}
	if *jsonOut != "" {
		rep := map[string]any{
			"command": os.Args, "started": started, "finished": time.Now(),
			"machine": bench.ThisMachine(ctx, e),
			"settings": map[string]any{"builtin": *script, "protocol": *protocol, "clients": *clients,
				"threads": *threads, "seconds": *secs, "rounds": *rounds, "scale": *scale,
				"durable": ef.durable, "link": links.Settings(), "link_held": links.Held()},
			"targets": targets,
		}
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(err)
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return fail(err)
		}
	}
	return 0
}
