package server

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// diverseAsPostgres runs steps, in order and in one session each, on
// PostgreSQL 15 and on the diverse embedded cluster (SQLite, SQLite (cgo)
// and DuckDB): every answer (rows as text, or the SQLSTATE) must be
// PostgreSQL's; then, once the cluster is idle, every replica must be up
// with no mismatch (a DuckDB replica that answered otherwise than the
// others lost a vote) and hold the same rows.
func diverseAsPostgres(t *testing.T, steps []string) {
	t.Helper()
	ctx := context.Background()
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	pg, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	sh := connect(t, addr, "app")
	for _, sql := range steps {
		want, got := ask(ctx, pg, sql, false), ask(ctx, sh, sql, false)
		if !sameAnswer(want, got) {
			t.Errorf("%s:\n got %s\nwant %s", sql, got, want)
		}
	}
	idle, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// sameAnswer compares two answers by rows, or by SQLSTATE.
func sameAnswer(a, b answerOf) bool {
	if (a.err == nil) != (b.err == nil) || a.other != nil || b.other != nil {
		return false
	}
	if a.err != nil {
		return a.err.Code == b.err.Code
	}
	if len(a.rows) != len(b.rows) {
		return false
	}
	for i := range a.rows {
		if len(a.rows[i]) != len(b.rows[i]) {
			return false
		}
		for j := range a.rows[i] {
			if a.rows[i][j] != b.rows[i][j] {
				return false
			}
		}
	}
	return true
}

// TestEmbeddedDiverseAgrees: statements the corpus found the DuckDB
// replica answering otherwise than the SQLite ones (each took it out with
// a failed COMMIT, 40001): an operator over NULL PostgreSQL folds without
// evaluating a division by zero in it; a numeric product beyond 64 bits
// of DECIMAL digits; a GROUP BY of a primary key with its table's other
// columns used ungrouped.
func TestEmbeddedDiverseAgrees(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE emp (id int PRIMARY KEY, grade smallint, salary numeric(10,2) NOT NULL)",
		"INSERT INTO emp VALUES (1, 3, 6000), (2, NULL, 4000), (3, 2, 7000.50)",
		"CREATE TABLE nums (id int PRIMARY KEY, x numeric(10,3))",
		"INSERT INTO nums VALUES (1, 2.5), (2, -1.25), (3, NULL)",
		"SELECT id, grade / 0 = NULL, NULL IN (grade / (grade - grade)), grade % 0 + NULL::integer FROM emp WHERE grade / 0 > NULL OR id < 3 ORDER BY id",
		"SELECT id, x * (30000 / 1.5), x * 20000.000000000000 + 99999999999999.5, -x - 999999999.25 FROM nums ORDER BY id",
		"SELECT sum(x * 4000000000000.000) FROM nums",
		"SELECT id, count(*) FROM emp GROUP BY id HAVING salary > 5000 AND grade IS NOT NULL ORDER BY id",
		"SELECT e.id, e.salary, count(*) FROM emp e JOIN nums n ON n.id = e.id GROUP BY e.id ORDER BY e.salary",
		"SELECT id, grade / 0 FROM emp",
	})
}
