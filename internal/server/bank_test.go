package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// realCluster configures PostgreSQL, MariaDB and SQLite replicas, each
// real and started by the test.
func realCluster(t testing.TB, mode string) *config.Config {
	return &config.Config{
		Listen:  "127.0.0.1:0",
		DataDir: t.TempDir(),
		Mode:    mode,
		F:       1,
		Replicas: []config.Replica{
			{Name: "maria", Driver: "mysql", DSN: testenv.MariaDB(t)},
			{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
			{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		},
	}
}

const (
	bankAccounts = 100
	bankInitial  = 1000
	bankClients  = 16
	bankRounds   = 40 // transfers per client
)

// TestBankSerial runs 16 concurrent clients of transfers between 100
// accounts through serial mode over PostgreSQL, MariaDB and SQLite. Money
// is neither created nor lost, concurrent readers always see the full
// total, and the three replicas end with identical contents.
func TestBankSerial(t *testing.T) {
	cfg := realCluster(t, "serial")
	addr, srv := start(t, cfg)
	ctx := context.Background()
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	var vals []string
	for i := 1; i <= bankAccounts; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", i, bankInitial))
	}
	mustExec(t, setup, "INSERT INTO acc VALUES "+strings.Join(vals, ", "))
	const total = bankAccounts * bankInitial

	var wg sync.WaitGroup
	errs := make(chan error, bankClients+2)
	for c := range bankClients {
		conn := connect(t, addr, "app")
		rng := rand.New(rand.NewPCG(uint64(c), 42))
		wg.Go(func() {
			for range bankRounds {
				from, to := rng.IntN(bankAccounts)+1, rng.IntN(bankAccounts)+1
				amount := int64(rng.IntN(50) + 1)
				if err := transfer(ctx, conn, from, to, amount); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// Readers check the invariant while transfers run.
	for range 2 {
		conn := connect(t, addr, "app")
		wg.Go(func() {
			for range bankRounds {
				var sum int64
				if err := conn.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum); err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				if sum != total {
					errs <- fmt.Errorf("reader saw total %d, want %d", sum, total)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assertCount(t, setup, "SELECT sum(bal) FROM acc", total)
	assertReplicas(t, addr, 3)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, bal FROM acc ORDER BY id")
}

// transfer moves amount between two accounts in one transaction,
// retrying when the cluster asks for it (SQLSTATE class 40).
func transfer(ctx context.Context, c *pgx.Conn, from, to int, amount int64) error {
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "UPDATE acc SET bal = bal - $1 WHERE id = $2", amount, from); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE acc SET bal = bal + $1 WHERE id = $2", amount, to)
			return err
		})
		if err == nil {
			return nil
		}
		if code := sqlstate(err); !strings.HasPrefix(code, "40") || attempt >= 5 {
			return fmt.Errorf("transfer %d -> %d: %w", from, to, err)
		}
	}
}

// assertIdentical reads every replica directly, through its driver, and
// checks that they hold the same rows.
func assertIdentical(t *testing.T, cfg *config.Config, query string) {
	t.Helper()
	ctx := context.Background()
	var first answer.Digest
	for i, r := range cfg.Replicas {
		open, _ := driver.Lookup(r.Driver)
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Exec(ctx, driver.Query{SQL: query, ReturnsRows: true, Verb: "SELECT"})
		c.Close()
		e.Close()
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		d := a.Digest(true)
		if i == 0 {
			first = d
			if len(a.Rows) == 0 {
				t.Errorf("%s: no rows", r.Name)
			}
		} else if d != first {
			t.Errorf("replica %s differs from %s", r.Name, cfg.Replicas[0].Name)
		}
	}
}
