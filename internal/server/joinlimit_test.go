package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// joinQuery counts the rows of n copies of t cross joined (each copy is
// one table of the join for the engines; written with JOIN, which
// PostgreSQL plans in groups of join_collapse_limit, where a list of 64
// tables in FROM takes it 20 s).
func joinQuery(n int) string {
	from := []string{"t AS t1"}
	for i := 2; i <= n; i++ {
		from = append(from, fmt.Sprintf("t AS t%d", i))
	}
	return "SELECT count(*) FROM " + strings.Join(from, " CROSS JOIN ")
}

// TestJoinLimitAsPostgres runs joins at the engines' limits on the real
// engines: MariaDB joins at most 61 tables, SQLite 64, PostgreSQL has no
// limit. Up to the limit shepherd answers as PostgreSQL; past it, it
// refuses with 0A000 naming the limit. Before, select5.test of
// sqllogictest got MariaDB's "Too many tables" as XX000.
func TestJoinLimitAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	ctx := context.Background()
	alone, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)
	setup := func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, "CREATE TABLE t (a int); INSERT INTO t VALUES (1)", pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	setup(alone)
	for _, c := range []struct {
		name    string
		cfg     *config.Config
		limit   int
		replica string
	}{
		{"cbs", realCluster(t, "cbs"), 61, "MariaDB"},
		{"embedded", embedded(t), 64, "SQLite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, srv := start(t, c.cfg)
			sh := connect(t, addr, "app")
			setup(sh)
			var want, got int64
			q := joinQuery(c.limit)
			if err := alone.QueryRow(ctx, q).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if err := sh.QueryRow(ctx, q).Scan(&got); err != nil || got != want {
				t.Errorf("%d tables: %d, %v; PostgreSQL %d", c.limit, got, err, want)
			}
			_, err := sh.Exec(ctx, joinQuery(c.limit+1))
			if sqlstate(err) != "0A000" || !strings.Contains(err.Error(), fmt.Sprintf("at most %d) for %s", c.limit, c.replica)) {
				t.Errorf("%d tables: %v, want 0A000 naming %s's limit", c.limit+1, err, c.replica)
			}
			// Every replica ran the join at the limit alike.
			idle, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := srv.Cluster().Idle(idle); err != nil {
				t.Fatal(err)
			}
			assertReplicas(t, addr, 3)
		})
	}
}
