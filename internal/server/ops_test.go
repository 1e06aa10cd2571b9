package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/repair"
)

// scrape reads the metrics endpoint over HTTP and returns each sample's
// value by its line's name and labels (`name{a="b"}`).
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape: line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetricsScrape scrapes the Prometheus endpoint over HTTP while
// statements run on three SQLite replicas in cbs: commits, statements,
// the log's fsyncs and batches and the replicas' votes won are counted,
// an error a client gets is counted by SQLSTATE, and a replica taken out
// changes state.
func TestMetricsScrape(t *testing.T) {
	if _, srv := start(t, embedded(t)); srv.MetricsAddr() != "" {
		t.Fatalf("metrics served at %s without [metrics] listen", srv.MetricsAddr())
	}
	cfg := embedded(t)
	cfg.Metrics.Listen = "127.0.0.1:0"
	addr, srv := start(t, cfg)
	maddr := srv.MetricsAddr()
	if maddr == "" {
		t.Fatal("no metrics endpoint")
	}
	before := scrape(t, maddr)
	for _, r := range []string{"lite1", "lite2", "lite3"} {
		if v := before[`shepherd_replica_state{replica="`+r+`",state="up"}`]; v != 1 {
			t.Fatalf("replica %s: state up = %v at start", r, v)
		}
	}
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE m (id int PRIMARY KEY, v text)")
	for i := range 5 {
		mustExec(t, c, "INSERT INTO m VALUES ($1, 'x')", i)
	}
	if _, err := c.Exec(context.Background(), "SELECT * FROM no_such_table"); err == nil {
		t.Fatal("a bad statement ran")
	}
	after := scrape(t, maddr)
	grew := func(key string, by float64) {
		t.Helper()
		if after[key]-before[key] < by {
			t.Errorf("%s: %v -> %v, want a rise of at least %v", key, before[key], after[key], by)
		}
	}
	grew(`shepherd_commit_duration_seconds_count{outcome="ok"}`, 6)
	grew(`shepherd_statement_duration_seconds_count{outcome="ok"}`, 6)
	grew(`shepherd_wal_fsync_duration_seconds_count`, 6)
	grew(`shepherd_wal_batch_records_count`, 1)
	grew(`shepherd_wal_batch_records_sum`, 6)
	for _, r := range []string{"lite1", "lite2", "lite3"} {
		grew(`shepherd_replica_votes_won_total{replica="`+r+`"}`, 1)
	}
	var errs float64
	for k, v := range after {
		if strings.HasPrefix(k, "shepherd_client_errors_total{") {
			errs += v
		}
	}
	if errs < 1 {
		t.Errorf("shepherd_client_errors_total: %v, want at least 1", errs)
	}

	if err := srv.Cluster().TakeDown("lite3"); err != nil {
		t.Fatal(err)
	}
	down := scrape(t, maddr)
	if down[`shepherd_replica_state{replica="lite3",state="up"}`] != 0 || down[`shepherd_replica_state{replica="lite3",state="down"}`] != 1 {
		t.Errorf("lite3 taken out: up=%v down=%v", down[`shepherd_replica_state{replica="lite3",state="up"}`],
			down[`shepherd_replica_state{replica="lite3",state="down"}`])
	}
	// The others commit on; the one out falls behind.
	mustExec(t, c, "INSERT INTO m VALUES (100, 'y')")
	late := scrape(t, maddr)
	if late[`shepherd_replica_lag_transactions{replica="lite3"}`] < 1 || late[`shepherd_replica_lag_seconds{replica="lite3"}`] <= 0 {
		t.Errorf("lite3 out: lag %v transactions, %v s; want both above 0",
			late[`shepherd_replica_lag_transactions{replica="lite3"}`], late[`shepherd_replica_lag_seconds{replica="lite3"}`])
	}
}

// TestMetricsVotesLost: a replica that answers wrongly loses votes, and
// the endpoint says so.
func TestMetricsVotesLost(t *testing.T) {
	cfg := embedded(t)
	cfg.Mode = "serial"
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Replicas[2].Fault = config.Fault{WrongAnswerRate: 1, Seed: 1}
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE v (id int PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO v VALUES (1)")
	assertCount(t, c, "SELECT count(*) FROM v", 1)
	got := scrape(t, srv.MetricsAddr())
	if got[`shepherd_replica_votes_lost_total{replica="lite3"}`] < 1 || got[`shepherd_replica_votes_lost_total{replica="lite1"}`] != 0 {
		t.Errorf("votes lost: lite3 %v, lite1 %v; want lite3 at least 1, lite1 0",
			got[`shepherd_replica_votes_lost_total{replica="lite3"}`], got[`shepherd_replica_votes_lost_total{replica="lite1"}`])
	}
}

// connectAs connects with a user and password, returning the error.
func connectAs(addr, user, password string) (*pgx.Conn, error) {
	return pgx.Connect(context.Background(), fmt.Sprintf("postgres://%s:%s@%s/app?sslmode=disable", user, password, addr))
}

// TestReloadPassword: a reload changes a user's password live: the old
// one is refused from then on, the new one accepted, and a session
// opened before goes on.
func TestReloadPassword(t *testing.T) {
	cfg := embedded(t)
	cfg.Users = []config.User{{Name: "app", Password: "old-pw"}}
	addr, srv := start(t, cfg)
	before, err := connectAs(addr, "app", "old-pw")
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close(context.Background())
	mustExec(t, before, "CREATE TABLE r (id int)")

	next := *cfg
	next.Users = []config.User{{Name: "app", Password: "new-pw"}}
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if c, err := connectAs(addr, "app", "old-pw"); err == nil {
		c.Close(context.Background())
		t.Fatal("the old password still works after the reload")
	} else if sqlstate(err) != "28P01" {
		t.Fatalf("old password: %v, want 28P01", err)
	}
	after, err := connectAs(addr, "app", "new-pw")
	if err != nil {
		t.Fatalf("new password: %v", err)
	}
	defer after.Close(context.Background())
	mustExec(t, after, "INSERT INTO r VALUES (1)")
	assertCount(t, before, "SELECT count(*) FROM r", 1) // the old session goes on
}

// TestReloadRefusesRestartKeys: a change that needs a restart is refused
// naming the key, and nothing of the new file is applied (the users stay
// as they were).
func TestReloadRefusesRestartKeys(t *testing.T) {
	cfg := embedded(t)
	cfg.Users = []config.User{{Name: "app", Password: "pw"}}
	addr, srv := start(t, cfg)
	for _, tc := range []struct {
		key    string
		change func(*config.Config)
	}{
		{"mode", func(c *config.Config) { c.Mode = "serial" }},
		{"f", func(c *config.Config) { c.F = 0 }},
		{"listen", func(c *config.Config) { c.Listen = "127.0.0.1:1" }},
		{"replicas", func(c *config.Config) { c.Replicas = c.Replicas[:2] }},
		{"replicas[1].dsn", func(c *config.Config) { c.Replicas[1].DSN = "other.db" }},
		{"replicas[0].fault", func(c *config.Config) { c.Replicas[0].Fault.WrongAnswerRate = 0.5 }},
		{"metrics.listen", func(c *config.Config) { c.Metrics.Listen = "127.0.0.1:0" }},
		{"log.format", func(c *config.Config) { c.Log.Format = "json" }},
	} {
		next := *cfg
		next.Replicas = append([]config.Replica(nil), cfg.Replicas...)
		next.Users = []config.User{{Name: "app", Password: "changed"}}
		tc.change(&next)
		err := srv.Reload(&next)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Field != tc.key {
			t.Errorf("%s changed: reload said %v, want a refusal naming %s", tc.key, err, tc.key)
		}
	}
	c, err := connectAs(addr, "app", "pw")
	if err != nil {
		t.Fatalf("the refused reloads changed the password: %v", err)
	}
	c.Close(context.Background())
}

// TestLogNeverShowsSecrets: a replica's DSN password and a user's
// password never reach the log, whether in an error of shepherd's (the
// replica unreachable at start) or in a statement a client sent that
// failed (logged at debug).
func TestLogNeverShowsSecrets(t *testing.T) {
	const dsnPW, userPW = "Dsn-S3cret-pw", "User-S3cret-pw"
	dsn := "postgres://shep:" + dsnPW + "@127.0.0.1:1/nowhere?sslmode=disable"
	cfg := embedded(t)
	cfg.Replicas[2] = config.Replica{Name: "pg", Driver: "postgres", DSN: dsn}
	cfg.Users = []config.User{{Name: "app", Password: userPW}}
	cfg.Log.Level = "debug"
	cfg.Log.Format = "json"
	if err := cfg.Check(driver.Names()); err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	lg := NewLogging(&buf, cfg)
	addr, srv, stop := startServerLog(t, cfg, lg.Logger)
	defer stop()
	srv.SetLogging(lg)
	c, err := connectAs(addr, "app", userPW)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, q := range []string{
		"SELECT '" + dsn + "'::int",
		"SELECT '" + userPW + "' FROM no_such_table",
	} {
		if _, err := c.Exec(context.Background(), q); err == nil {
			t.Fatalf("%s: no error", q)
		}
	}
	stop()
	out := buf.String()
	for _, s := range []string{dsnPW, userPW} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds the secret %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, `"statement failed"`) || !strings.Contains(out, redacted) {
		t.Errorf("the failed statements were not logged (redacted) at debug:\n%s", out)
	}
}

// TestLogRefused: [log] refused logs a statement shepherd refuses at
// info, and a reload turns it on.
func TestLogRefused(t *testing.T) {
	cfg := embedded(t)
	if err := cfg.Check(driver.Names()); err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	lg := NewLogging(&buf, cfg)
	addr, srv, stop := startServerLog(t, cfg, lg.Logger)
	defer stop()
	srv.SetLogging(lg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE rf (f float8)")
	refuse := func() {
		t.Helper()
		// A float sum written to a table: refused (0A000), the engines
		// may round it otherwise.
		_, err := c.Exec(context.Background(), "INSERT INTO rf SELECT sum(f) FROM rf")
		if sqlstate(err) != "0A000" {
			t.Fatalf("got %v, want 0A000", err)
		}
	}
	refuse()
	if strings.Contains(buf.String(), "statement refused") {
		t.Fatalf("a refused statement was logged at info without [log] refused:\n%s", buf.String())
	}
	next := *cfg
	next.Log.Refused = true
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	refuse()
	if !strings.Contains(buf.String(), "statement refused") || !strings.Contains(buf.String(), "INSERT INTO rf SELECT sum(f)") {
		t.Errorf("with [log] refused, the refusal was not logged:\n%s", buf.String())
	}

	// Other errors are logged at debug: a reload to level debug shows them.
	if _, err := c.Exec(context.Background(), "SELECT * FROM before_debug"); err == nil {
		t.Fatal("a missing table was found")
	}
	next.Log.Level = "debug"
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(context.Background(), "SELECT * FROM after_debug"); err == nil {
		t.Fatal("a missing table was found")
	}
	if out := buf.String(); strings.Contains(out, "before_debug") || !strings.Contains(out, "after_debug") {
		t.Errorf("log level debug after the reload only: want after_debug logged, before_debug not:\n%s", out)
	}
}

// lockedBuffer is a bytes.Buffer safe for the log's concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*lockedBuffer)(nil)

// TestReloadFaults: a reload changes a replica's injected faults live
// (here, off: its answers stop losing votes); faults for a replica that
// injected none at start are refused, naming it.
func TestReloadFaults(t *testing.T) {
	cfg := embedded(t)
	cfg.Mode = "serial"
	cfg.Replicas[2].Fault = config.Fault{WrongAnswerRate: 1, Seed: 1}
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE rfl (id int PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO rfl VALUES (1)")
	lost := func() int64 {
		t.Helper()
		for _, r := range srv.Cluster().Replicas() {
			if r.Name == "lite3" {
				return r.Mismatches
			}
		}
		t.Fatal("no replica lite3")
		return 0
	}
	assertCount(t, c, "SELECT count(*) FROM rfl", 1)
	// The vote may be decided by the two others before lite3 answers;
	// its lost vote is counted when its answer arrives.
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := lost()
	if before == 0 {
		t.Fatal("the faulty replica lost no vote")
	}
	next := *cfg
	next.Replicas = append([]config.Replica(nil), cfg.Replicas...)
	next.Replicas[2].Fault = config.Fault{}
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		assertCount(t, c, "SELECT count(*) FROM rfl", 1)
	}
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := lost(); after != before {
		t.Errorf("faults off by reload: lite3 lost %d more votes", after-before)
	}
	on := next
	on.Replicas = append([]config.Replica(nil), next.Replicas...)
	on.Replicas[0].Fault = config.Fault{MisorderRate: 1}
	var ce *config.Error
	if err := srv.Reload(&on); !errors.As(err, &ce) || ce.Field != "replicas[0].fault" {
		t.Errorf("faults for a replica without any at start: reload said %v, want a refusal naming replicas[0].fault", err)
	}
}

// TestMetricsRepairFindings: a row changed behind shepherd's back on one
// replica and repaired is counted for that replica.
func TestMetricsRepairFindings(t *testing.T) {
	cfg := embedded(t)
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Repair.Mode = "off"
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE rp (id int PRIMARY KEY, v text)")
	mustExec(t, c, "INSERT INTO rp VALUES (1, 'a'), (2, 'b')")
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	onReplica(t, cfg, "lite2", "UPDATE rp SET v = 'z' WHERE id = 2")
	rep, err := srv.Repair().Run(context.Background(), repair.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings: %+v, want one", rep.Findings)
	}
	got := scrape(t, srv.MetricsAddr())
	if got[`shepherd_repair_findings_total{outcome="repaired",replica="lite2"}`] != 1 ||
		got[`shepherd_repair_findings_total{outcome="repaired",replica="lite1"}`] != 0 ||
		got[`shepherd_repair_passes_total`] != 1 {
		t.Errorf("repair metrics: lite2 repaired %v, lite1 repaired %v, passes %v; want 1, 0, 1",
			got[`shepherd_repair_findings_total{outcome="repaired",replica="lite2"}`],
			got[`shepherd_repair_findings_total{outcome="repaired",replica="lite1"}`], got[`shepherd_repair_passes_total`])
	}
}

// TestMaxTransactionsLive: with max_transactions 1, a transaction waits
// while another holds the slot (shepherd_transactions_waiting shows it);
// one waiting past its statement_timeout gets PostgreSQL's 57014; a
// reload raising the cap lets the waiter in at once.
func TestMaxTransactionsLive(t *testing.T) {
	cfg := embedded(t)
	cfg.MaxTransactions = 1
	cfg.Metrics.Listen = "127.0.0.1:0"
	addr, srv := start(t, cfg)
	ctx := context.Background()
	a := connect(t, addr, "app")
	mustExec(t, a, "CREATE TABLE mt (id int PRIMARY KEY)")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "INSERT INTO mt VALUES (1)")

	c := connect(t, addr, "app")
	mustExec(t, c, "SET statement_timeout = '100ms'")
	_, err := c.Exec(ctx, "SELECT count(*) FROM mt")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || pe.Message != "canceling statement due to statement timeout" {
		t.Fatalf("waiting past statement_timeout: %v, want 57014 canceling statement due to statement timeout", err)
	}

	b := connect(t, addr, "app")
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "INSERT INTO mt VALUES (2)")
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for scrape(t, srv.MetricsAddr())["shepherd_transactions_waiting"] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("shepherd_transactions_waiting never showed B")
		}
		time.Sleep(5 * time.Millisecond) // polls the endpoint
	}
	next := *cfg
	next.MaxTransactions = 2
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	for {
		if held, waiting := srv.Cluster().Admitted(); held == 2 && waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B was not admitted after the reload")
		}
		time.Sleep(5 * time.Millisecond) // polls a condition
	}
	// (SQLite runs one transaction at a time: B's runs once A's ends.)
	mustExec(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("B: %v", err)
	}
	assertCount(t, a, "SELECT count(*) FROM mt", 2)
}

// TestMemoryLimit: memory_limit_mb becomes the Go runtime's memory limit
// while shepherd serves, a reload changes it live, and 0 gives back the
// limit that was in force before (GOMEMLIMIT, or none).
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	cfg := embedded(t)
	cfg.MemoryLimitMB = 3000
	_, srv := start(t, cfg)
	waitFor(t, "memory_limit_mb in force", func() bool { return debug.SetMemoryLimit(-1) == 3000<<20 })
	next := *cfg
	next.MemoryLimitMB = 2000
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 2000<<20 {
		t.Errorf("after a reload to 2000: limit %d, want %d", got, 2000<<20)
	}
	next.MemoryLimitMB = 0
	if err := srv.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after a reload to 0: limit %d, want the one before, %d", got, before)
	}
}
