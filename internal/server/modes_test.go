package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
)

func TestCheckPrimary(t *testing.T) {
	names := []string{"pg", "duck"}
	mvcc := []driver.Class{driver.MVCC, driver.MVCC}
	want := "config: replicas: mode cbs needs a primary of class locking or serial (MariaDB/MySQL or SQLite); got pg (mvcc), duck (mvcc)"
	if err := checkPrimary(coord.CBS, names, mvcc); err == nil || err.Error() != want {
		t.Errorf("cbs over two MVCC replicas: %v\nwant %s", err, want)
	}
	if err := checkPrimary(coord.SS, names, mvcc); err == nil || !strings.Contains(err.Error(), "mode ss needs a primary") {
		t.Errorf("ss over two MVCC replicas: %v", err)
	}
	for _, mode := range []coord.Mode{coord.Serial, coord.Passthrough} {
		if err := checkPrimary(mode, names, mvcc); err != nil {
			t.Errorf("%v over two MVCC replicas: %v", mode, err)
		}
	}
	for _, c := range []driver.Class{driver.Locking, driver.Serial} {
		if err := checkPrimary(coord.CBS, []string{"pg", "other"}, []driver.Class{driver.MVCC, c}); err != nil {
			t.Errorf("cbs with a %v replica: %v", c, err)
		}
	}
}

// TestCheck: the checks that need the drivers' classes work on a config
// alone, for check-config.
func TestCheck(t *testing.T) {
	cfg := &config.Config{Mode: "cbs", F: 0, Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: "x"}}}
	if err := Check(cfg); err == nil || !strings.Contains(err.Error(), "got pg (mvcc)") {
		t.Errorf("cbs over PostgreSQL alone: %v", err)
	}
	cfg.Replicas = append(cfg.Replicas, config.Replica{Name: "lite", Driver: "sqlite", DSN: "l.db", Schedule: "concurrent"})
	if err := Check(cfg); err == nil || !strings.Contains(err.Error(), "replicas[1].schedule") {
		t.Errorf("a concurrent serial replica: %v", err)
	}
	cfg.Replicas[1].Schedule = ""
	if err := Check(cfg); err != nil {
		t.Errorf("PostgreSQL and SQLite: %v", err)
	}
}

func TestModeNames(t *testing.T) {
	for _, name := range config.Modes {
		m, ok := modes[name]
		if !ok || m.String() != name {
			t.Errorf("config mode %q maps to %v", name, m)
		}
	}
}

// TestIsolationOnlyForMySQL: Open refuses an isolation override for a
// driver that has none, even for a config that skipped Check.
func TestIsolationOnlyForMySQL(t *testing.T) {
	cfg := embedded(t)
	cfg.Replicas[1].Fault.Isolation = "read-uncommitted"
	_, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "replicas[1].fault.isolation") {
		t.Fatalf("isolation override on sqlite: %v", err)
	}
}

// TestFaultyReplicaOutvoted: a replica that lies in every answer is
// out-voted; the client sees only true answers, and the liar is counted.
func TestFaultyReplicaOutvoted(t *testing.T) {
	cfg := embedded(t)
	cfg.Mode = "serial"
	cfg.Replicas[2].Fault = config.Fault{WrongAnswerRate: 1, WrongCountRate: 1, Seed: 3}
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	if _, err := c.Exec(ctx, "CREATE TABLE items (id int PRIMARY KEY, qty bigint)"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		tag, err := c.Exec(ctx, "INSERT INTO items VALUES ($1, $2)", i, 10*i)
		if err != nil || tag.String() != "INSERT 0 1" {
			t.Fatalf("insert %d: %v %v", i, tag, err)
		}
	}
	tag, err := c.Exec(ctx, "UPDATE items SET qty = qty + 1 WHERE id >= 3")
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("update: %v %v", tag, err)
	}
	var n, sum int64
	if err := c.QueryRow(ctx, "SELECT count(*), sum(qty) FROM items").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 5 || sum != 102 {
		t.Errorf("count %d, sum %d; want 5, 102", n, sum)
	}
	// The client was answered once f+1 replicas agreed; the liar may
	// still be working through its queue, its lies not yet counted.
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Cluster().Replicas() {
		switch {
		case r.Name == "lite3" && r.Mismatches == 0:
			t.Errorf("the faulty replica lite3 lost no vote")
		case r.Name != "lite3" && r.Mismatches != 0:
			t.Errorf("honest replica %s lost %d votes", r.Name, r.Mismatches)
		}
	}
}
