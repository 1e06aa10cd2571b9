package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestShepherdKill9DDL runs the shepherd binary in cbs mode over MariaDB
// (the primary, which commits DDL as it runs it), PostgreSQL and SQLite
// with a client creating tables one after another, and kills it with
// SIGKILL a few milliseconds after a CREATE TABLE went out, several
// times: some kills land after MariaDB created the table and before the
// transaction was logged. After each restart the three replicas, read
// directly, must hold the same tables, and all three must be in use.
// Before the DDL intents, MariaDB kept such a table alone.
func TestShepherdKill9DDL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the shepherd binary (not in -short)")
	}
	bin, conf, addr, cfg := killableCluster(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	proc := startShepherd(t, bin, conf, addr)
	next := 0
	for round := range crashRounds(t) + 2 {
		conn := dial(t, addr)
		sent := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				next++
				select {
				case sent <- struct{}{}:
				default:
				}
				if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE d%d (a int PRIMARY KEY, b text)", next)); err != nil && conn.IsClosed() {
					return // shepherd is gone
				}
			}
		}()
		// A few tables in, kill it a moment after the next CREATE TABLE
		// went out: the crash point, not a wait for an event.
		for range 3 + round {
			<-sent
		}
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		if err := proc.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		proc.Wait()
		<-done
		conn.Close(ctx)
		proc = startShepherd(t, bin, conf, addr)
		want := replicaTables(t, cfg, "maria")
		for _, name := range []string{"pg", "lite"} {
			if got := replicaTables(t, cfg, name); !slices.Equal(got, want) {
				t.Fatalf("after kill %d: %s holds tables %v, maria %v", round+1, name, got, want)
			}
		}
		t.Logf("kill %d: %d tables created, %d on every replica", round+1, next, len(want))
	}
	admin := connect(t, addr, "shepherd")
	rows, err := admin.Query(ctx, "SHOW REPLICAS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vals[4] != "up" {
			t.Errorf("replica %v is %v after the kills, want up", vals[0], vals[4])
		}
	}
	rows.Close()
}

// replicaTables lists the tables d<n> that replica name holds, read
// directly, sorted.
func replicaTables(t *testing.T, cfg *config.Config, name string) []string {
	t.Helper()
	q := map[string]string{
		"maria": "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'd%'",
		"pg":    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'd%'",
		"lite":  "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'd%'",
	}[name]
	a := replicaQuery(t, cfg, name, driver.Query{SQL: q, ReturnsRows: true, Verb: "SELECT"})
	var out []string
	for _, r := range a.Rows {
		out = append(out, r[0].Text)
	}
	slices.Sort(out)
	return out
}
