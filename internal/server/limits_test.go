package server

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestStatementTooLargeForAReplica: a statement larger than MariaDB's
// max_allowed_packet (1 MiB here; 16 MiB by default, where shepherd takes
// 64 MiB) is refused with 54000 naming the replica and the limit, before
// any replica runs it, whether the bulk is in the text or in a parameter:
// nothing is written anywhere, the view does not change, every replica
// stays up, and the next statement works. MariaDB had dropped the
// connection, the primary was replaced, and its catch-up failed on the
// same statement for ever.
func TestStatementTooLargeForAReplica(t *testing.T) {
	m := testenv.OwnMariaDB(t)
	db, err := sql.Open("mysql", m.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SET GLOBAL max_allowed_packet = 1048576"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := &config.Config{
		Listen:  "127.0.0.1:0",
		DataDir: t.TempDir(),
		Mode:    "cbs",
		F:       1,
		Replicas: []config.Replica{
			{Name: "maria", Driver: "mysql", DSN: m.DSN()},
			{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
			{Name: "lite", Driver: "sqlite", DSN: "lite.db"},
		},
	}
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE big (id int PRIMARY KEY, v text)")
	huge := strings.Repeat("x", 2<<20)
	for what, try := range map[string]func() error{
		"text": func() error {
			_, err := c.Exec(ctx, "INSERT INTO big (id, v) VALUES (1, '"+huge+"')")
			return err
		},
		"parameter": func() error {
			_, err := c.Exec(ctx, "INSERT INTO big (id, v) VALUES ($1, $2)", 2, huge)
			return err
		},
		// Quotes are doubled in the packet: 600 KB of them take 1.2 MB.
		"parameter of quotes": func() error {
			_, err := c.Exec(ctx, "INSERT INTO big (id, v) VALUES ($1, $2)", 6, strings.Repeat("'", 600<<10))
			return err
		},
		"parameter in a transaction": func() error {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "INSERT INTO big (id, v) VALUES (3, 'small')"); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, "INSERT INTO big (id, v) VALUES ($1, $2)", 4, huge)
			return err
		},
	} {
		err := try()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "54000" || !strings.Contains(pe.Message, "maria") || !strings.Contains(pe.Message, "max_allowed_packet") {
			t.Errorf("%s: got %v, want 54000 naming maria and max_allowed_packet", what, err)
		}
	}
	mustExec(t, c, "INSERT INTO big (id, v) VALUES (5, 'small')")
	// Just below the limit: taken, and written everywhere.
	mustExec(t, c, "INSERT INTO big (id, v) VALUES ($1, $2)", 7, strings.Repeat("x", 1<<20-200))
	assertCount(t, c, "SELECT count(*) FROM big", 2)
	// The client has its answer once f+1 replicas committed; the last
	// secondary may still be committing.
	for _, r := range cfg.Replicas {
		waitFor(t, r.Name+" holding both rows", func() bool {
			n, _ := replicaExec(t, cfg, r.Name, driver.Query{SQL: "SELECT id FROM big", ReturnsRows: true, Verb: "SELECT"})
			return n == 2
		})
	}
	if views := srv.Cluster().Views(); len(views) != 1 {
		t.Errorf("views %+v: the primary was replaced", views)
	}
	assertReplicas(t, addr, 3)
}

// TestSelectOneBesideIdleBlocks (issue 18): with max_transactions 8,
// seven sessions idle inside transaction blocks and an eighth block
// waiting for a slot, a SELECT 1 in autocommit still answers at once (it
// waited behind the blocks, here for ever), while the cap holds: the
// waiting block gets in only when one of the seven ends.
func TestSelectOneBesideIdleBlocks(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.MaxTransactions = 8
	addr, srv := start(t, cfg)
	ctx := context.Background()
	var idle []*pgx.Conn
	for range 7 {
		c := connect(t, addr, "app")
		mustExec(t, c, "BEGIN")
		mustExec(t, c, "SELECT 1")
		idle = append(idle, c)
	}
	waiter := connect(t, addr, "app")
	mustExec(t, waiter, "BEGIN")
	admitted := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT 2")
		admitted <- err
	}()
	waitFor(t, "the eighth block waiting for a slot", func() bool {
		held, waiting := srv.Cluster().Admitted()
		return held == 7 && waiting == 1
	})
	other := connect(t, addr, "app")
	for range 3 {
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		var one int
		err := other.QueryRow(qctx, "SELECT 1").Scan(&one)
		cancel()
		if err != nil || one != 1 {
			t.Fatalf("SELECT 1 beside idle blocks: %d, %v", one, err)
		}
	}
	select {
	case err := <-admitted:
		t.Fatalf("the eighth block got in past the cap: %v", err)
	default:
	}
	mustExec(t, idle[0], "COMMIT")
	if err := <-admitted; err != nil {
		t.Fatalf("the eighth block: %v", err)
	}
	for _, c := range append(idle[1:], waiter) {
		mustExec(t, c, "COMMIT")
	}
}
