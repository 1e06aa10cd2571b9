package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
)

// crashRounds is how many times TestShepherdKill9 kills shepherd;
// SHEPHERD_KILL_ROUNDS raises it (the long mode asks for 20).
func crashRounds(t *testing.T) int {
	if v := os.Getenv("SHEPHERD_KILL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SHEPHERD_KILL_ROUNDS=%q", v)
		}
		return n
	}
	return 3
}

// TestShepherdKill9 runs the shepherd binary in cbs mode over MariaDB,
// PostgreSQL and SQLite with 16 clients moving money, kills it with
// SIGKILL in the middle, starts it again on the same data directory, and
// checks that every transfer a client saw committed is there, that no
// transfer was applied twice, that the total is unchanged and that the
// three replicas hold the same rows. The write-ahead log is what makes
// this hold: a COMMIT is acknowledged only once logged, and a restart
// replays to each replica what its log table lacks.
func TestShepherdKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the shepherd binary (not in -short)")
	}
	bin, conf, addr, cfg := killableCluster(t)
	ctx := context.Background()
	proc := startShepherd(t, bin, conf, addr)
	setup := dial(t, addr)
	for _, q := range []string{
		"CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)",
		"CREATE TABLE moved (id bigint PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount bigint NOT NULL)",
	} {
		if _, err := setup.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const accounts, initial = 50, 1000
	for i := 1; i <= accounts; i++ {
		if _, err := setup.Exec(ctx, "INSERT INTO acc VALUES ($1, $2)", i, initial); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close(ctx)

	acked := map[int64]bool{}
	var next int64
	for round := range crashRounds(t) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for c := range bankClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
				if err != nil {
					return
				}
				defer conn.Close(ctx)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					next++
					id := next
					mu.Unlock()
					from, to := 1+(c+i)%accounts, 1+(c*7+i*3+1)%accounts
					if from == to {
						to = 1 + to%accounts
					}
					err := moveMoney(ctx, conn, id, from, to, 1+int64(i%5))
					if err == nil {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					} else if conn.IsClosed() {
						return // shepherd is gone
					}
				}
			}()
		}
		// Let transfers commit, then kill shepherd in the middle of them.
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(acked)
			mu.Unlock()
			if n >= (round+1)*100 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling a counter, not waiting for an event
		}
		if err := proc.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		proc.Wait()
		close(stop)
		wg.Wait()
		proc = startShepherd(t, bin, conf, addr)
	}
	check := dial(t, addr)
	defer check.Close(ctx)
	var sum int64
	if err := check.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != accounts*initial {
		t.Errorf("total %d, want %d", sum, accounts*initial)
	}
	rows, err := check.Query(ctx, "SELECT id FROM moved")
	if err != nil {
		t.Fatal(err)
	}
	found := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for id := range acked {
		if !found[id] {
			lost++
		}
	}
	t.Logf("%d kills: %d commits acknowledged, %d found (%d transfers in all)", crashRounds(t), len(acked), len(acked)-lost, len(found))
	if lost > 0 {
		t.Errorf("%d acknowledged transfers are missing", lost)
	}
	// A clean stop (SIGINT, as SIGTERM): drained, log closed, exit 0.
	// Then the replicas, read directly, are identical.
	proc.Process.Signal(os.Interrupt)
	proc.Wait()
	if code := proc.ProcessState.ExitCode(); code != 0 {
		t.Errorf("shepherd exited with %d on SIGINT", code)
	}
	assertIdentical(t, cfg, "SELECT id, bal FROM acc ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, src, dst, amount FROM moved ORDER BY id")
}

// moveMoney is one transfer, recorded in moved under a unique id: a
// transfer applied twice would fail its primary key, or show in the total.
func moveMoney(ctx context.Context, c *pgx.Conn, id int64, from, to int, amount int64) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE acc SET bal = bal - $1 WHERE id = $2", amount, from); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE acc SET bal = bal + $1 WHERE id = $2", amount, to); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO moved VALUES ($1, $2, $3, $4)", id, from, to, amount); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// buildShepherd builds the shepherd binary into a temp dir.
func buildShepherd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shepherd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/shepherd")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startShepherd starts the binary and waits until it accepts clients.
func startShepherd(t *testing.T, bin, conf, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", conf)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://app@%s/app?sslmode=disable&connect_timeout=2", addr))
		if err == nil {
			c.Close(context.Background())
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("shepherd did not start: %v", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) && !isRefused(err) {
			t.Logf("waiting for shepherd: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling for the port to open
	}
}

func isRefused(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

func dial(t *testing.T, addr string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// killableCluster builds the shepherd binary and writes its configuration
// for a cbs cluster of MariaDB, PostgreSQL and SQLite in a temp dir: what
// the tests that kill the binary start (startShepherd) and start again.
func killableCluster(t *testing.T) (bin, conf, addr string, cfg *config.Config) {
	t.Helper()
	bin = buildShepherd(t)
	dir := t.TempDir()
	addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	conf = filepath.Join(dir, "shepherd.toml")
	cfg = realCluster(t, "cbs")
	cfg.DataDir = filepath.Join(dir, "data")
	text := fmt.Sprintf(`listen = %q
data_dir = %q
mode = "cbs"
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
`, addr, cfg.DataDir, cfg.Replicas[0].DSN, cfg.Replicas[1].DSN)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return bin, conf, addr, cfg
}
