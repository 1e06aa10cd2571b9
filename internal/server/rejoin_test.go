package server

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestReplicaKill9 kills the PostgreSQL server of a secondary with
// SIGKILL under 16 clients moving money, starts it again a moment later,
// and checks that clients saw no error but retryable aborts, that the
// replica came back by itself (replaying from the write-ahead log what it
// missed), and that afterwards the three replicas hold the same rows and
// every acknowledged transfer.
func TestReplicaKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a PostgreSQL server (not in -short)")
	}
	away := 2 * time.Second
	if v := os.Getenv("SHEPHERD_REPLICA_AWAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SHEPHERD_REPLICA_AWAY=%q: %v", v, err)
		}
		away = d
	}
	pg := testenv.OwnPostgres(t)
	cfg := &config.Config{
		Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "cbs", F: 1,
		Replicas: []config.Replica{
			{Name: "maria", Driver: "mysql", DSN: testenv.MariaDB(t)},
			{Name: "pg", Driver: "postgres", DSN: pg.DSN()},
			{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		},
	}
	addr, srv := start(t, cfg)
	ctx := context.Background()
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	mustExec(t, setup, "CREATE TABLE moved (id bigint PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount bigint NOT NULL)")
	const accounts, initial = 50, 1000
	for i := 1; i <= accounts; i++ {
		mustExec(t, setup, "INSERT INTO acc VALUES ($1, $2)", i, initial)
	}

	var mu sync.Mutex
	acked := map[int64]bool{}
	var next int64
	failures := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range bankClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
			if err != nil {
				t.Error(err)
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
				mu.Lock()
				if err == nil {
					acked[id] = true
				} else {
					failures[sqlstate(err)]++
				}
				mu.Unlock()
			}
		}()
	}
	commits := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling shepherd's state, not standing in for an event
		}
	}
	waitFor("100 commits", func() bool { return commits() >= 100 })
	pg.Kill()
	killedAt, before := time.Now(), commits()
	waitFor("pg taken out", func() bool { return replicaState(srv, "pg") == "down" })
	waitFor("commits while pg is away", func() bool { return commits() >= before+100 })
	for time.Since(killedAt) < away {
		time.Sleep(10 * time.Millisecond) // the replica stays away this long
	}
	pg.Start()
	restarted, atRestart := time.Now(), commits()
	waitFor("pg back", func() bool { return replicaState(srv, "pg") == "up" })
	back := time.Since(restarted)
	waitFor("commits with pg back", func() bool { return commits() >= atRestart+100 })
	close(stop)
	wg.Wait()
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transfers acknowledged; pg away %v, back %v after its restart (%d commits meanwhile); failures by SQLSTATE: %v",
		commits(), away, back.Round(time.Millisecond), commits()-atRestart, failures)
	for code, n := range failures {
		if code != "40001" && code != "40P01" {
			t.Errorf("%d transfers failed with %s", n, code)
		}
	}
	var sum int64
	retry40(t, func() error { return setup.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum) })
	if sum != accounts*initial {
		t.Errorf("total %d, want %d", sum, accounts*initial)
	}
	var found int
	retry40(t, func() error { return setup.QueryRow(ctx, "SELECT count(*) FROM moved").Scan(&found) })
	if found < len(acked) {
		t.Errorf("%d transfers found, %d acknowledged", found, len(acked))
	}
	assertIdentical(t, cfg, "SELECT id, bal FROM acc ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, src, dst, amount FROM moved ORDER BY id")
}

func replicaState(srv *Server, name string) string {
	for _, r := range srv.Cluster().Replicas() {
		if r.Name == name {
			return r.State
		}
	}
	return ""
}
