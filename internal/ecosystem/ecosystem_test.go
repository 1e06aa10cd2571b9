// Package ecosystem is the ecosystem suite of issue 15: real clients
// (drivers, ORMs, migration tools, psql and friends), each with a small
// realistic application in apps/, run unmodified against these setups:
//
//   - postgres: a plain PostgreSQL 15 (the oracle: an app must pass there,
//     which proves the app itself is right);
//   - embedded: shepherd with its embedded default (three SQLite replicas);
//   - cbs: shepherd in cbs mode over MariaDB + PostgreSQL + SQLite;
//   - diverse: shepherd over the diverse embedded cluster, SQLite + SQLite
//     (cgo) + DuckDB (config.EmbeddedDiverse), the candidate default of
//     issue 16; not run unless named (below).
//
// SHEPHERD_ECOSYSTEM_SETUPS=list (comma-separated, e.g. "diverse" or
// "embedded,diverse") chooses the shepherd setups, default "embedded,cbs";
// postgres, the oracle, always runs first.
//
// The engines are started by testenv like in every other test; shepherd is
// the binary built from this tree, started once per app and setup in a
// temporary directory, so apps never see each other's tables.
//
// The clients are installed by scripts/ecosystem-install.sh (make
// test-ecosystem runs it) into $SHEPHERD_ECO_DIR, default .ecosystem/ in
// the repository. An app whose client is not installed is reported as
// "skip", never run.
//
// Known failures are listed in expected.txt with the issue item they wait
// for: the suite fails only when an app that passes on PostgreSQL fails on
// shepherd without being listed (a regression), or fails on PostgreSQL
// itself (a broken app); a listed failure that now passes is reported so
// its line can be removed.
//
// Which apps run: with SHEPHERD_ECOSYSTEM=all (make test-ecosystem) every
// app; with SHEPHERD_ECOSYSTEM=off none; otherwise (go test ./..., make
// test) only the representative ones marked quick, and only if their
// clients are installed, else the test skips saying how to install them.
// SHEPHERD_ECOSYSTEM_RUN=regexp narrows the apps by name (an app marked
// alone, go-tpc, runs only when such a regexp is given and names it);
// SHEPHERD_ECO_SRC=dir builds shepherd from another checkout (to measure
// a branch with this suite unchanged).
package ecosystem

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// appTimeout bounds one app on one setup.
const appTimeout = 4 * time.Minute

// shepherdSetups are the shepherd setups in the table's column order;
// defaultSetups are those run unless SHEPHERD_ECOSYSTEM_SETUPS names
// others, and those "*" stands for in expected.txt.
var (
	shepherdSetups = []string{"embedded", "cbs", "diverse"}
	defaultSetups  = []string{"embedded", "cbs"}
)

// chooseSetups reads SHEPHERD_ECOSYSTEM_SETUPS's value v: the setups to
// run, postgres first, then the named shepherd setups in the table's
// order; an unknown name is an error, not silently nothing.
func chooseSetups(v string) ([]string, error) {
	named := map[string]bool{}
	if strings.TrimSpace(v) == "" {
		for _, st := range defaultSetups {
			named[st] = true
		}
	}
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "postgres" {
			continue
		}
		if !slices.Contains(shepherdSetups, f) {
			return nil, fmt.Errorf("SHEPHERD_ECOSYSTEM_SETUPS: unknown setup %q (want some of %s)", f, strings.Join(shepherdSetups, ", "))
		}
		named[f] = true
	}
	out := []string{"postgres"}
	for _, st := range shepherdSetups {
		if named[st] {
			out = append(out, st)
		}
	}
	return out, nil
}

// runtimeKind says what an app needs installed.
type runtimeKind string

const (
	python runtimeKind = "python"
	node   runtimeKind = "node"
	java   runtimeKind = "java"
	goapp  runtimeKind = "go"
	pgbin  runtimeKind = "pgbin" // PostgreSQL 15's own client programs
	gotpc  runtimeKind = "gotpc" // go-tpc, a Go program installed by go install
)

// app is one client's application.
type app struct {
	name  string // the client, as the table and expected.txt name it
	kind  runtimeKind
	file  string // under apps/<kind>/ (pgbin, gotpc: apps/sh/), or the Go app's name
	quick bool   // part of the representative subset run by make test
	// timeout bounds the app on one setup where appTimeout is too short.
	timeout time.Duration
	// alone: too long for the suite's 30 minutes, so it runs only when
	// SHEPHERD_ECOSYSTEM_RUN is set and names it (make test-go-tpc).
	alone bool
}

// apps is every application of the suite. Each one exits 0 when every
// step passed; on failure it prints a line "FAIL <step>: <error>".
var apps = []app{
	{name: "psycopg2", kind: python, file: "psycopg2_app.py"},
	{name: "psycopg3", kind: python, file: "psycopg3_app.py"},
	{name: "sqlalchemy-psycopg2", kind: python, file: "sqlalchemy_app.py", quick: true},
	{name: "sqlalchemy-psycopg3", kind: python, file: "sqlalchemy_app.py"},
	{name: "alembic", kind: python, file: "alembic_app.py"},
	{name: "django", kind: python, file: "django_app.py", quick: true},
	{name: "django-test", kind: python, file: "django_app.py"},
	{name: "asyncpg", kind: python, file: "asyncpg_app.py"},
	{name: "pg8000", kind: python, file: "pg8000_app.py"},
	{name: "peewee", kind: python, file: "peewee_app.py"},
	{name: "pgx", kind: goapp, file: "pgx"},
	{name: "lib/pq", kind: goapp, file: "pq"},
	{name: "gorm", kind: goapp, file: "gorm"},
	{name: "psql", kind: pgbin, file: "psql.sh", quick: true},
	{name: "pgbench", kind: pgbin, file: "pgbench.sh"},
	{name: "pg_dump", kind: pgbin, file: "pg_dump.sh"},
	{name: "node-postgres", kind: node, file: "pg_app.js"},
	{name: "postgres.js", kind: node, file: "postgresjs_app.js"},
	{name: "knex", kind: node, file: "knex_app.js"},
	{name: "sequelize", kind: node, file: "sequelize_app.js"},
	{name: "typeorm", kind: node, file: "typeorm_app.js"},
	{name: "pgjdbc", kind: java, file: "PgjdbcApp.java", quick: true},
	{name: "hibernate", kind: java, file: "HibernateApp.java"},
	// TPC-C with one warehouse: 500,000 rows to load, and a consistency
	// check whose condition 3.3.2.10 scans history once per customer
	// (minutes on PostgreSQL itself).
	{name: "go-tpc", kind: gotpc, file: "go-tpc.sh", timeout: 40 * time.Minute, alone: true},
}

// target is where an app connects.
type target struct {
	host, port, user, password, database string
}

func (t target) url() string {
	u := "postgresql://" + t.user
	if t.password != "" {
		u += ":" + t.password
	}
	return u + "@" + net.JoinHostPort(t.host, t.port) + "/" + t.database
}

// result is one app on one setup.
type result struct {
	status string // pass, FAIL, xfail, XPASS, skip, broken, -
	first  string // the first error of a failure
	steps  int    // the app's steps that passed ("ok step" lines)
	took   time.Duration
}

// suite holds what every run shares.
type suite struct {
	repo, apps, eco string
	shepherd        string // the built binary
	expected        map[string]expectation
	setups          []string // postgres, then the shepherd setups run
}

func TestEcosystem(t *testing.T) {
	mode := os.Getenv("SHEPHERD_ECOSYSTEM")
	if mode == "off" {
		t.Skip("SHEPHERD_ECOSYSTEM=off")
	}
	s := newSuite(t)
	var err error
	if s.setups, err = chooseSetups(os.Getenv("SHEPHERD_ECOSYSTEM_SETUPS")); err != nil {
		t.Fatal(err)
	}
	var chosen []app
	var missing []string
	filter, err := regexp.Compile(os.Getenv("SHEPHERD_ECOSYSTEM_RUN"))
	if err != nil {
		t.Fatalf("SHEPHERD_ECOSYSTEM_RUN: %v", err)
	}
	for _, a := range apps {
		if mode != "all" && !a.quick {
			continue
		}
		if !filter.MatchString(a.name) || (a.alone && os.Getenv("SHEPHERD_ECOSYSTEM_RUN") == "") {
			continue
		}
		if why := s.installed(a); why != "" {
			missing = append(missing, a.name+" ("+why+")")
		}
		chosen = append(chosen, a)
	}
	if mode != "all" && len(missing) > 0 {
		t.Skipf("ecosystem clients not installed: %s; run `make test-ecosystem` (or scripts/ecosystem-install.sh) once to install them", strings.Join(missing, ", "))
	}
	if len(chosen) == 0 {
		t.Skip("no app chosen")
	}
	s.build(t)

	results := map[string]map[string]result{}
	for _, a := range chosen {
		results[a.name] = map[string]result{}
		if why := s.installed(a); why != "" {
			for _, st := range s.setups {
				results[a.name][st] = result{status: "skip", first: why}
			}
			continue
		}
		for _, st := range s.setups {
			if st != "postgres" && results[a.name]["postgres"].status != "pass" {
				results[a.name][st] = result{status: "-", first: "not run: the app fails on PostgreSQL"}
				continue
			}
			var r result
			t.Run(strings.ReplaceAll(a.name, "/", "-")+"/"+st, func(t *testing.T) {
				r = s.run(t, a, st)
			})
			results[a.name][st] = r
			t.Logf("%s on %s: %s %s (%.1fs)", a.name, st, r.status, r.first, r.took.Seconds())
		}
	}
	s.report(t, chosen, results)
}

func newSuite(t *testing.T) *suite {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Clean(filepath.Join(wd, "../.."))
	eco := os.Getenv("SHEPHERD_ECO_DIR")
	if eco == "" {
		eco = filepath.Join(repo, ".ecosystem")
	}
	exp, err := readExpected(filepath.Join(wd, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return &suite{repo: repo, apps: filepath.Join(wd, "apps"), eco: eco, expected: exp}
}

// pgBinDir is where Debian puts PostgreSQL 15's programs.
const pgBinDir = "/usr/lib/postgresql/15/bin"

// installed says what is missing for a, or "" when it can run.
func (s *suite) installed(a app) string {
	var need string
	switch a.kind {
	case python:
		need = filepath.Join(s.eco, "venv/bin/python")
	case node:
		need = filepath.Join(s.eco, "node/node_modules/pg")
	case java:
		need = filepath.Join(s.eco, "jars")
	case goapp:
		need = filepath.Join(s.eco, "bin/goapps")
	case pgbin:
		need = filepath.Join(pgBinDir, "psql")
	case gotpc:
		need = filepath.Join(s.eco, "bin/go-tpc")
	}
	if _, err := os.Stat(need); err != nil {
		return "not installed: no " + need
	}
	return ""
}

// build builds shepherd from this tree.
func (s *suite) build(t *testing.T) {
	s.shepherd = filepath.Join(t.TempDir(), "shepherd")
	cmd := exec.Command("go", "build", "-o", s.shepherd, "./cmd/shepherd")
	cmd.Dir = s.repo
	if src := os.Getenv("SHEPHERD_ECO_SRC"); src != "" {
		cmd.Dir = src
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// run runs app a on setup st and returns its result.
func (s *suite) run(t *testing.T, a app, st string) result {
	var tg target
	switch st {
	case "postgres":
		tg = pgTarget(t, testenv.Postgres(t))
	case "embedded":
		tg = s.startShepherd(t, "")
	case "cbs":
		conf := fmt.Sprintf(`mode = "cbs"
f = 1
[[replicas]]
name = "maria"
driver = "mysql"
dsn = %q
[[replicas]]
name = "pg"
driver = "postgres"
dsn = %q
[[replicas]]
name = "lite"
driver = "sqlite"
dsn = "lite.db"
`, testenv.MariaDB(t), testenv.Postgres(t))
		tg = s.startShepherd(t, conf)
	case "diverse":
		tg = s.startShepherd(t, diverseConf)
	}
	start := time.Now()
	out, err := s.runApp(t, a, tg)
	r := result{took: time.Since(start), steps: countSteps(out)}
	logf := filepath.Join(s.eco, "logs", strings.ReplaceAll(a.name, "/", "-")+"."+st+".log")
	if err := os.MkdirAll(filepath.Dir(logf), 0o755); err == nil {
		os.WriteFile(logf, out, 0o644)
	}
	exp, listed := s.expected[key(a.name, st)]
	r.status = classify(st, err != nil, listed)
	switch r.status {
	case "XPASS":
		r.first = "listed in expected.txt (" + exp.item + ") but passes now: remove the line"
	case "broken":
		r.first = firstError(out, err)
		t.Errorf("%s fails on PostgreSQL itself (the app is wrong): %s (log: %s)", a.name, r.first, logf)
	case "xfail":
		r.first = firstError(out, err)
	case "FAIL":
		r.first = firstError(out, err)
		t.Errorf("%s fails on %s but passes on PostgreSQL, and expected.txt does not list it: %s (log: %s)", a.name, st, r.first, logf)
	}
	return r
}

// classify names the outcome of an app on setup st: on postgres it must
// pass (else the app is broken); on shepherd a failure expected.txt lists
// is xfail, one it does not is FAIL, and a listed app that passes is
// XPASS. Only broken and FAIL fail the suite.
func classify(st string, failed, listed bool) string {
	switch {
	case !failed && listed && st != "postgres":
		return "XPASS"
	case !failed:
		return "pass"
	case st == "postgres":
		return "broken"
	case listed:
		return "xfail"
	default:
		return "FAIL"
	}
}

func pgTarget(t *testing.T, dsn string) target {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return target{host: cfg.Host, port: fmt.Sprint(cfg.Port), user: cfg.User, password: cfg.Password, database: cfg.Database}
}

// diverseConf is config.EmbeddedDiverse as a configuration file: the
// embedded default's mode with SQLite + SQLite (cgo) + DuckDB, their files
// in the data directory.
const diverseConf = `f = 1
[[replicas]]
name = "lite1"
driver = "sqlite"
dsn = "lite1.db"
[[replicas]]
name = "lite2"
driver = "sqlite-cgo"
dsn = "lite2.db"
[[replicas]]
name = "duck"
driver = "duckdb"
dsn = "duck.duckdb"
`

// startShepherd starts the built binary on a free port in a temporary
// directory, with conf as its configuration ("" for the embedded
// default), and waits until it accepts clients. It is stopped when t ends.
func (s *suite) startShepherd(t *testing.T, conf string) target {
	dir := t.TempDir()
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"serve", "--listen", addr, "--data-dir", dir}
	if conf != "" {
		path := filepath.Join(dir, "shepherd.toml")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	logf, err := os.Create(filepath.Join(dir, "shepherd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.shepherd, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	tg := target{host: "127.0.0.1", port: fmt.Sprint(port), user: "app", database: "app"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := pgx.Connect(ctx, tg.url()+"?sslmode=disable")
		cancel()
		if err == nil {
			c.Close(context.Background())
			return tg
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "shepherd.log"))
			t.Fatalf("shepherd exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("shepherd did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling for the port to open
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runApp runs a against tg and returns its combined output.
func (s *suite) runApp(t *testing.T, a app, tg target) ([]byte, error) {
	limit := appTimeout
	if a.timeout > 0 {
		limit = a.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	work := t.TempDir()
	var cmd *exec.Cmd
	switch a.kind {
	case python:
		cmd = exec.CommandContext(ctx, filepath.Join(s.eco, "venv/bin/python"), filepath.Join(s.apps, "python", a.file))
	case node:
		cmd = exec.CommandContext(ctx, "node", filepath.Join(s.apps, "node", a.file))
	case java:
		src := filepath.Join(s.apps, "java", a.file)
		class := strings.TrimSuffix(a.file, ".java")
		cp := filepath.Join(s.eco, "jars") + "/*"
		if newer(filepath.Join(s.eco, "java-classes", class+".class"), src) {
			cmd = exec.CommandContext(ctx, "java", "-cp", filepath.Join(s.eco, "java-classes")+":"+cp, class)
		} else {
			cmd = exec.CommandContext(ctx, "java", "-cp", cp, src)
		}
	case goapp:
		cmd = exec.CommandContext(ctx, filepath.Join(s.eco, "bin/goapps"), a.file)
	case pgbin, gotpc:
		cmd = exec.CommandContext(ctx, "bash", filepath.Join(s.apps, "sh", a.file))
	}
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"APP_NAME="+a.name,
		"DATABASE_URL="+tg.url(),
		"PGHOST="+tg.host, "PGPORT="+tg.port, "PGUSER="+tg.user, "PGDATABASE="+tg.database,
		"PGPASSWORD="+tg.password,
		"PGSSLMODE=disable",
		"NODE_PATH="+filepath.Join(s.eco, "node/node_modules"),
		"PATH="+pgBinDir+":"+os.Getenv("PATH"),
		"PYTHONDONTWRITEBYTECODE=1",
		"APPS_DIR="+s.apps,
		"WORK_DIR="+work,
		"GO_TPC="+filepath.Join(s.eco, "bin/go-tpc"),
	)
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v", limit)
	}
	return buf.Bytes(), err
}

// countSteps counts the "ok step" lines an app printed.
func countSteps(out []byte) int {
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ok ") {
			n++
		}
	}
	return n
}

// newer says whether file exists and is newer than src.
func newer(file, src string) bool {
	f, err := os.Stat(file)
	if err != nil {
		return false
	}
	g, err := os.Stat(src)
	return err == nil && f.ModTime().After(g.ModTime())
}

// firstError is the app's "FAIL step: error" line, else the last line of
// its output, else err.
func firstError(out []byte, err error) string {
	var last string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "FAIL ") {
			return shorten(strings.TrimPrefix(line, "FAIL "))
		}
		if line != "" {
			last = line
		}
	}
	if last == "" {
		return err.Error()
	}
	return shorten(last)
}

func shorten(s string) string {
	if len(s) > 240 {
		return s[:237] + "..."
	}
	return s
}

// expectation is one line of expected.txt.
type expectation struct{ item, note string }

func key(app, setup string) string { return app + " " + setup }

// readExpected reads lines "app setup item note...", setup one of the
// shepherd setups or "*" for the default ones (embedded and cbs); #
// starts a comment.
func readExpected(path string) (map[string]expectation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, a := range apps {
		known[a.name] = true
	}
	exp := map[string]expectation{}
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 || !known[f[0]] || (f[1] != "*" && !slices.Contains(shepherdSetups, f[1])) {
			return nil, fmt.Errorf("%s:%d: want \"app embedded|cbs|diverse|* issue-item note\" with a known app, got %q", path, i+1, line)
		}
		e := expectation{item: f[2], note: strings.Join(f[3:], " ")}
		for _, st := range shepherdSetups {
			if (f[1] == "*" && slices.Contains(defaultSetups, st)) || f[1] == st {
				exp[key(f[0], st)] = e
			}
		}
	}
	return exp, nil
}

// report prints the table (client × setup) and writes it to
// $SHEPHERD_ECO_DIR/results.txt.
func (s *suite) report(t *testing.T, chosen []app, results map[string]map[string]result) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s", "client")
	for _, st := range s.setups {
		fmt.Fprintf(&b, " %-11s", st)
	}
	b.WriteString(" first error\n")
	counts := map[string]int{}
	for _, a := range chosen {
		fmt.Fprintf(&b, "%-20s", a.name)
		var firsts []string
		for _, st := range s.setups {
			r := results[a.name][st]
			cell := r.status
			// A failure says how far the app got: steps passed of those
			// it passes on PostgreSQL.
			if all := results[a.name]["postgres"]; st != "postgres" && (r.status == "xfail" || r.status == "FAIL") && all.status == "pass" {
				cell = fmt.Sprintf("%s %d/%d", r.status, r.steps, all.steps)
			}
			fmt.Fprintf(&b, " %-11s", cell)
			if st != "postgres" {
				counts[r.status]++
			}
			if r.first != "" && r.status != "-" {
				firsts = append(firsts, st+": "+r.first)
			}
		}
		firsts = dedupe(firsts)
		b.WriteString(" " + strings.Join(firsts, " | ") + "\n")
	}
	var cs []string
	for k, n := range counts {
		cs = append(cs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(cs)
	fmt.Fprintf(&b, "on shepherd: %s (pass: passes; xfail: fails as expected.txt says; FAIL: regression; XPASS: listed but passes; broken: fails on PostgreSQL; n/m: steps passed of m)\n", strings.Join(cs, ", "))
	fmt.Println(b.String())
	if err := os.MkdirAll(s.eco, 0o755); err == nil {
		os.WriteFile(filepath.Join(s.eco, "results.txt"), []byte(b.String()), 0o644)
	}
	var xpass []string
	for _, a := range chosen {
		for _, st := range s.setups {
			if results[a.name][st].status == "XPASS" {
				xpass = append(xpass, a.name+" "+st)
			}
		}
	}
	if len(xpass) > 0 {
		t.Logf("now passing, remove from expected.txt: %s", strings.Join(xpass, ", "))
	}
}

func dedupe(firsts []string) []string {
	// "embedded: X | cbs: X" reads better as "embedded, cbs: X".
	if len(firsts) == 2 {
		a, b := strings.SplitN(firsts[0], ": ", 2), strings.SplitN(firsts[1], ": ", 2)
		if len(a) == 2 && len(b) == 2 && a[1] == b[1] {
			return []string{a[0] + ", " + b[0] + ": " + a[1]}
		}
	}
	return firsts
}
