package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// awayFor is how long a killed database server stays down in the crash
// tests; SHEPHERD_REPLICA_AWAY sets it (the long mode: 10s).
func awayFor(t *testing.T) time.Duration {
	if v := os.Getenv("SHEPHERD_REPLICA_AWAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SHEPHERD_REPLICA_AWAY=%q: %v", v, err)
		}
		return d
	}
	return 2 * time.Second
}

// moneyLoad is 16 clients moving money between 50 accounts, each
// transfer recorded in moved under a unique id, until stopped.
type moneyLoad struct {
	mu       sync.Mutex
	acked    map[int64]time.Time // id -> when its COMMIT was acknowledged
	next     int64
	failures map[string]int
	stop     chan struct{}
	wg       sync.WaitGroup
}

const loadAccounts, loadInitial = 50, 1000

func startLoad(t *testing.T, addr string) *moneyLoad {
	t.Helper()
	ctx := context.Background()
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	mustExec(t, setup, "CREATE TABLE moved (id bigint PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount bigint NOT NULL)")
	for i := 1; i <= loadAccounts; i++ {
		mustExec(t, setup, "INSERT INTO acc VALUES ($1, $2)", i, loadInitial)
	}
	l := &moneyLoad{acked: map[int64]time.Time{}, failures: map[string]int{}, stop: make(chan struct{})}
	for c := range bankClients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close(ctx)
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.mu.Lock()
				l.next++
				id := l.next
				l.mu.Unlock()
				from, to := 1+(c+i)%loadAccounts, 1+(c*7+i*3+1)%loadAccounts
				if from == to {
					to = 1 + to%loadAccounts
				}
				err := moveMoney(ctx, conn, id, from, to, 1+int64(i%5))
				l.mu.Lock()
				if err == nil {
					l.acked[id] = time.Now()
				} else {
					l.failures[sqlstate(err)]++
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// tally returns the transfers committed and the attempts that failed.
func (l *moneyLoad) tally() (commits, failures int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.failures {
		failures += n
	}
	return len(l.acked), failures
}

func (l *moneyLoad) commits() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// firstAfter returns when the first commit after t was acknowledged.
func (l *moneyLoad) firstAfter(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, at := range l.acked {
		if at.After(t) && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// finish stops the clients and checks what they did: only retryable
// failures, the total unchanged, every acknowledged transfer present, and
// the replicas identical.
func (l *moneyLoad) finish(t *testing.T, srv *Server, addr string, cfg *config.Config, allowed ...string) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	ctx := context.Background()
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	ok := map[string]bool{"40001": true, "40P01": true}
	for _, a := range allowed {
		ok[a] = true
	}
	for code, n := range l.failures {
		if !ok[code] {
			t.Errorf("%d transfers failed with %s", n, code)
		}
	}
	c := connect(t, addr, "app")
	var sum int64
	retry40(t, func() error { return c.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum) })
	if sum != loadAccounts*loadInitial {
		t.Errorf("total %d, want %d", sum, loadAccounts*loadInitial)
	}
	found := map[int64]bool{}
	retry40(t, func() error {
		rows, err := c.Query(ctx, "SELECT id FROM moved")
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			found[id] = true
		}
		return rows.Err()
	})
	for id := range l.acked {
		if !found[id] {
			t.Errorf("acknowledged transfer %d is missing", id)
		}
	}
	assertIdentical(t, cfg, "SELECT id, bal FROM acc ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, src, dst, amount FROM moved ORDER BY id")
}

// waitFor polls cond (shepherd's state, not a stand-in for an event)
// until it holds, for at most a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killRounds is how many kill-and-restart rounds the replica crash
// tests run; SHEPHERD_CRASH_ROUNDS raises it (long mode).
func killRounds(t *testing.T) int {
	if v := os.Getenv("SHEPHERD_CRASH_ROUNDS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("SHEPHERD_CRASH_ROUNDS=%q", v)
		}
		return n
	}
	return 2
}

// TestReplicaKill9 kills the PostgreSQL server of a secondary with
// SIGKILL under 16 clients moving money, starts it again a moment later,
// and again, and checks that clients saw no error but retryable aborts,
// that the replica came back by itself each time (replaying from the
// write-ahead log what it missed), and that afterwards the three replicas
// hold the same rows and every acknowledged transfer.
func TestReplicaKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a PostgreSQL server (not in -short)")
	}
	away := awayFor(t)
	// Small log segments, so that the log is truncated (and the log
	// tables trimmed) during the run.
	walOptions.SegmentBytes = 64 << 10
	defer func() { walOptions.SegmentBytes = 0 }()
	pg := testenv.OwnPostgres(t)
	cfg := realCluster(t, "cbs")
	cfg.Replicas[1].DSN = pg.DSN() // its own server, which the test kills
	addr, srv := start(t, cfg)
	load := startLoad(t, addr)
	waitFor(t, "100 commits", func() bool { return load.commits() >= 100 })
	for round := range killRounds(t) {
		pg.Kill()
		killedAt, before := time.Now(), load.commits()
		waitFor(t, "pg taken out", func() bool { return replicaState(srv, "pg") == "down" })
		waitFor(t, "commits while pg is away", func() bool { return load.commits() >= before+100 })
		for time.Since(killedAt) < away {
			time.Sleep(10 * time.Millisecond) // the server stays away this long
		}
		pg.Start()
		restarted, atRestart := time.Now(), load.commits()
		waitFor(t, "pg back", func() bool { return replicaState(srv, "pg") == "up" })
		back, during := time.Since(restarted), load.commits()-atRestart
		t.Logf("round %d: pg away %v; back %v after its restart, while %d commits went on", round+1, away, back.Round(time.Millisecond), during)
		// Enough commits with every replica up for the log to be
		// truncated (it tries every 1024 barriers).
		waitFor(t, "commits with pg back", func() bool { return load.commits() >= atRestart+during+2500 })
	}
	load.finish(t, srv, addr, cfg)
	t.Logf("failures by SQLSTATE: %v", load.failures)
	// The log kept only what some replica might still need, and the log
	// tables only what the log keeps.
	segs, err := filepath.Glob(filepath.Join(cfg.DataDir, "wal", "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	// Read on the primary itself: clients may not read shepherd_log.
	var rows int
	a := replicaQuery(t, cfg, "maria", driver.Query{SQL: "SELECT count(*) FROM shepherd_log", ReturnsRows: true, Verb: "SELECT"})
	fmt.Sscan(a.Rows[0][0].Text, &rows)
	t.Logf("%d commits; %d log segments left; %d rows in shepherd_log", load.commits(), len(segs), rows)
	if rows >= load.commits() {
		t.Errorf("shepherd_log holds %d rows after %d commits: never trimmed", rows, load.commits())
	}
}

// TestPrimaryKill9 kills the primary's MariaDB server with SIGKILL under
// load, twice: each time the view changes to the next replica fit to be
// primary, clients go on after a short pause with only retryable aborts,
// and nothing acknowledged is lost; the killed server, started again,
// comes back as a secondary.
func TestPrimaryKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills MariaDB servers (not in -short)")
	}
	m1, m2 := testenv.OwnMariaDB(t), testenv.OwnMariaDB(t)
	cfg := &config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "cbs", F: 1,
		Replicas: []config.Replica{
			{Name: "maria1", Driver: "mysql", DSN: m1.DSN()},
			{Name: "maria2", Driver: "mysql", DSN: m2.DSN()},
			{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
			{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		},
	}
	addr, srv := start(t, cfg)
	load := startLoad(t, addr)
	waitFor(t, "100 commits", func() bool { return load.commits() >= 100 })
	for _, k := range []struct {
		name   string
		server *testenv.MariaDBServer
	}{{"maria1", m1}, {"maria2", m2}} {
		if r := replicaRole(srv, k.name); r != "primary" {
			t.Fatalf("%s is %s, not primary", k.name, r)
		}
		killedAt := time.Now()
		k.server.Kill()
		// The next one fit to be primary: maria2 first; then lite, or
		// maria1 if it has run every statement maria2 answered (back as
		// a concurrent secondary, it often has: no transaction aborts).
		var next string
		waitFor(t, "a new primary", func() bool {
			next = primaryName(srv)
			return next != "" && next != k.name
		})
		views := srv.Cluster().Views()
		since := views[len(views)-1].Since // when the new view began
		waitFor(t, "a commit in the new view", func() bool { return !load.firstAfter(since).IsZero() })
		pause := load.firstAfter(since).Sub(killedAt)
		atNew := load.commits()
		waitFor(t, "commits in the new view", func() bool { return load.commits() >= atNew+100 })
		k.server.Start()
		waitFor(t, k.name+" back", func() bool { return replicaState(srv, k.name) == "up" })
		if r := replicaRole(srv, k.name); r != "secondary" {
			t.Errorf("%s came back as %s", k.name, r)
		}
		t.Logf("%s killed: %s primary %v later, first commit in the new view %v after the kill",
			k.name, next, since.Sub(killedAt).Round(time.Millisecond), pause.Round(time.Millisecond))
		atBack := load.commits()
		waitFor(t, "commits with "+k.name+" back", func() bool { return load.commits() >= atBack+100 })
	}
	load.finish(t, srv, addr, cfg)
	t.Logf("failures by SQLSTATE: %v", load.failures)
}

func replicaState(srv *Server, name string) string {
	for _, r := range srv.Cluster().Replicas() {
		if r.Name == name {
			return r.State
		}
	}
	return ""
}

// primaryName returns the name of the primary, "" when none is.
func primaryName(srv *Server) string {
	for _, r := range srv.Cluster().Replicas() {
		if r.Role == "primary" {
			return r.Name
		}
	}
	return ""
}

func replicaRole(srv *Server, name string) string {
	for _, r := range srv.Cluster().Replicas() {
		if r.Name == name {
			return r.Role
		}
	}
	return ""
}
