package server

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/repair"
)

// compareRows is the size of TestCompareCost's table (small under
// make test's race detector, which slows the in-process SQLite tenfold);
// SHEPHERD_COMPARE_ROWS raises it (the figure is 1,000,000).
func compareRows(t *testing.T) int {
	if v := os.Getenv("SHEPHERD_COMPARE_ROWS"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1000 {
			t.Fatalf("SHEPHERD_COMPARE_ROWS=%q", v)
		}
		return n
	}
	return 20_000
}

// replicaExec runs one statement directly on the named replica and
// returns its answer's row count or rows affected, and how long it took.
func replicaExec(t *testing.T, cfg *config.Config, name string, q driver.Query) (int64, time.Duration) {
	t.Helper()
	start := time.Now()
	a := replicaQuery(t, cfg, name, q)
	if q.ReturnsRows {
		return int64(len(a.Rows)), time.Since(start)
	}
	return a.RowsAffected, time.Since(start)
}

// replicaQuery runs one statement directly on the named replica, behind
// shepherd's back, and returns its answer.
func replicaQuery(t *testing.T, cfg *config.Config, name string, q driver.Query) *answer.Answer {
	t.Helper()
	ctx := context.Background()
	for _, r := range cfg.Replicas {
		if r.Name != name {
			continue
		}
		open, _ := driver.Lookup(r.Driver)
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a, err := c.Exec(ctx, q)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, q.SQL, err)
		}
		return a
	}
	t.Fatalf("no replica %s", name)
	return nil
}

// TestCompareCost compares two... three identical tables (MariaDB,
// PostgreSQL, SQLite) of compareRows rows, loaded directly into each
// engine, and reports the time and rows per second next to reading the
// table once from every replica; then it changes one row on one replica
// and checks that the pass finds exactly that row, in a few rounds.
func TestCompareCost(t *testing.T) {
	n := compareRows(t)
	cfg := realCluster(t, "cbs")
	cfg.Repair.Mode = "off"
	addr, srv := start(t, cfg)
	ctx := context.Background()
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE big (id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2), at timestamptz)")
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	loads := map[string]string{
		"pg": fmt.Sprintf(`INSERT INTO big SELECT g, 'name ' || g, (g %% 100000) / 100.0,
			'2026-01-01 00:00:00+00'::timestamptz + g * interval '1 second' FROM generate_series(1, %d) g`, n),
		"maria": fmt.Sprintf(`INSERT INTO big SELECT seq, CONCAT('name ', seq), (seq %% 100000) / 100,
			'2026-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_%d`, n),
		"lite": fmt.Sprintf(`WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < %d)
			INSERT INTO big SELECT g, 'name ' || g, (g %% 100000) / 100.0,
			strftime('%%Y-%%m-%%d %%H:%%M:%%S', '2026-01-01 00:00:00', '+' || g || ' seconds') FROM s`, n),
	}
	for name, sql := range loads {
		if got, _ := replicaExec(t, cfg, name, driver.Query{SQL: sql, Verb: "INSERT"}); got != int64(n) {
			t.Fatalf("%s: loaded %d rows, want %d", name, got, n)
		}
	}
	// Reading the table once from each replica, one after the other:
	// what streaming every row into shepherd would cost at least.
	var read time.Duration
	for _, r := range cfg.Replicas {
		got, d := replicaExec(t, cfg, r.Name, driver.Query{SQL: "SELECT id, name, amount, at FROM big", ReturnsRows: true, Verb: "SELECT"})
		if got != int64(n) {
			t.Fatalf("%s: read %d rows", r.Name, got)
		}
		read += d
	}
	rep, err := srv.Repair().Run(ctx, repair.Options{Table: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 || rep.Rows != n {
		t.Fatalf("identical tables: %d rows compared, findings %v", rep.Rows, rep.Findings)
	}
	t.Logf("%d identical rows compared in %v (%.0f rows/s, %d steps); reading them once from the three replicas took %v (compare/read %.2f)",
		n, rep.Elapsed.Round(time.Millisecond), float64(n)/rep.Elapsed.Seconds(), rep.Steps, read.Round(time.Millisecond),
		rep.Elapsed.Seconds()/read.Seconds())

	bad := n/2 + 17
	if got, _ := replicaExec(t, cfg, "pg", driver.Query{SQL: fmt.Sprintf("UPDATE big SET name = 'flipped' WHERE id = %d", bad), Verb: "UPDATE"}); got != 1 {
		t.Fatalf("damaged %d rows", got)
	}
	rep, err = srv.Repair().Run(ctx, repair.Options{Table: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Replica != "pg" || rep.Findings[0].Key != fmt.Sprint(bad) {
		t.Fatalf("one bad row: findings %v", rep.Findings)
	}
	t.Logf("one bad row among %d found in %d rounds (%d steps, %v)", n, rep.Rounds, rep.Steps, rep.Elapsed.Round(time.Millisecond))
	// The chunk's hash, two descents of 16 and the rows of the last range.
	if rep.Rounds > 4 {
		t.Errorf("%d rounds to locate one row, want at most 4", rep.Rounds)
	}
}
