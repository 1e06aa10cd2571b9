package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCancelRequest: a client's cancel stops the statement on every
// replica; the client gets 57014 and the session goes on.
func TestCancelRequest(t *testing.T) {
	addr, srv := start(t, embedded(t))
	c := connect(t, addr, "app")
	done := make(chan error, 1)
	go func() {
		// Minutes of counting without the cancel.
		_, err := c.Exec(context.Background(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000000) SELECT count(*) FROM n")
		done <- err
	}()
	waitBusy(t, srv)
	if err := c.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := sqlstate(err); code != "57014" {
			t.Fatalf("cancelled statement: got %v, want 57014", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("statement was not cancelled within 30 s")
	}
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertCount(t, c, "SELECT 1", 1)
	assertReplicas(t, addr, 3)
}

// waitBusy waits until the cluster has a transaction running.
func waitBusy(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Cluster().Busy(ctx); err != nil {
		t.Fatal("no transaction started: ", err)
	}
}

// TestPgbench runs pgbench custom scripts through the embedded default in
// each query mode with 8 clients: no transaction may fail.
func TestPgbench(t *testing.T) {
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Skip("pgbench is not installed (Debian package postgresql-client); make test installs it")
	}
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	mustExec(t, c, "INSERT INTO acc WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 100) SELECT i, 1000 FROM g")
	script := filepath.Join(t.TempDir(), "transfer.sql")
	if err := os.WriteFile(script, []byte(`\set a random(1, 100)
\set b random(1, 100)
\set d random(1, 20)
BEGIN;
UPDATE acc SET bal = bal - :d WHERE id = :a;
UPDATE acc SET bal = bal + :d WHERE id = :b;
SELECT bal FROM acc WHERE id = :a;
COMMIT;
`), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(addr, ":")
	for _, mode := range []string{"simple", "extended", "prepared"} {
		out, err := exec.Command(pgbench, "-h", host, "-p", port, "-U", "app", "-n", "-f", script,
			"-M", mode, "-c", "8", "-T", "2", "app").CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench -M %s: %v\n%s", mode, err, out)
		}
		m := regexp.MustCompile(`number of failed transactions: (\d+)`).FindSubmatch(out)
		p := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindSubmatch(out)
		if m == nil || p == nil || string(m[1]) != "0" || string(p[1]) == "0" {
			t.Errorf("pgbench -M %s:\n%s", mode, out)
		}
		t.Logf("pgbench -M %s: %s transactions", mode, p[1])
	}
	assertCount(t, c, "SELECT sum(bal) FROM acc", 100*1000)
	assertReplicas(t, addr, 3)
}
