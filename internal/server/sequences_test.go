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

// sequenceScript is run on PostgreSQL 15 and through shepherd; every
// answer and error must be the same. (A sequence lives in shepherd's
// catalog alone; replicas receive the values it hands out.)
var sequenceScript = []string{
	"CREATE SEQUENCE s",
	"SELECT currval('s')",
	"SELECT lastval()",
	"SELECT nextval('s')",
	"SELECT nextval('s'), currval('s'), lastval()",
	"SELECT nextval('public.s'), nextval('S'), nextval('s'::regclass)",
	`SELECT nextval('"s"') AS id`,
	"CREATE SEQUENCE s",
	"CREATE SEQUENCE IF NOT EXISTS s",
	"CREATE SEQUENCE s2 INCREMENT BY 5 START 10 MAXVALUE 20",
	"SELECT currval('s2')",
	"SELECT nextval('s2')",
	"SELECT nextval('s2')",
	"SELECT nextval('s2')",
	"SELECT nextval('s2')",
	"SELECT currval('s2'), lastval()",
	"CREATE SEQUENCE s3 INCREMENT -2 MINVALUE -5 MAXVALUE 0 CYCLE",
	"SELECT nextval('s3')",
	"SELECT nextval('s3')",
	"SELECT nextval('s3')",
	"SELECT nextval('s3')",
	"CREATE SEQUENCE s4 AS smallint",
	"SELECT nextval('s4')",
	"ALTER SEQUENCE s4 RESTART WITH 100",
	"SELECT nextval('s4')",
	"ALTER SEQUENCE s4 INCREMENT BY 10",
	"SELECT nextval('s4')",
	"SELECT setval('s4', 500)",
	"SELECT nextval('s4')",
	"SELECT setval('s4', 7, false)",
	"SELECT nextval('s4')",
	"SELECT setval('s4', 40000)",
	"ALTER SEQUENCE s4 RESTART",
	"SELECT nextval('s4')",
	"ALTER SEQUENCE s4 MAXVALUE 5",
	"ALTER SEQUENCE nosuch RESTART",
	"ALTER SEQUENCE IF EXISTS nosuch RESTART",
	// Sequence DDL in a block is undone by ROLLBACK (nextval() is not).
	"BEGIN",
	"CREATE SEQUENCE blk START 5",
	"SELECT nextval('blk'), nextval('s4'), nextval('s3')",
	"ALTER SEQUENCE s4 RESTART WITH 3",
	"SELECT nextval('s4')",
	"DROP SEQUENCE s3",
	"ROLLBACK",
	"SELECT nextval('blk')",
	"SELECT nextval('s4'), nextval('s3'), currval('s4')",
	"BEGIN",
	"CREATE SEQUENCE blk2",
	"SELECT 1/0",
	"COMMIT",
	"SELECT nextval('blk2')",
	"BEGIN",
	"CREATE SEQUENCE blk3 INCREMENT 2",
	"ALTER SEQUENCE s4 INCREMENT 2",
	"COMMIT",
	"SELECT nextval('blk3'), nextval('blk3'), nextval('s4')",
	"BEGIN READ ONLY",
	"SELECT currval('s4')",
	"SELECT nextval('s4')",
	"ROLLBACK",
	"BEGIN READ ONLY",
	"SELECT setval('s4', 2)",
	"ROLLBACK",
	"BEGIN READ ONLY",
	"CREATE SEQUENCE ro",
	"ROLLBACK",
	"BEGIN READ ONLY",
	"DROP SEQUENCE s4",
	"ROLLBACK",
	"SET default_transaction_read_only = on",
	"SELECT nextval('s4')",
	"ALTER SEQUENCE s4 RESTART",
	"RESET default_transaction_read_only",
	// CACHE is accepted; shepherd hands values out one by one, which a
	// single session cannot tell from a cache.
	"CREATE SEQUENCE cached CACHE 20",
	"SELECT nextval('cached'), nextval('cached')",
	"CREATE SEQUENCE s5 AS smallint MAXVALUE 40000",
	"CREATE SEQUENCE nosuch.s5",
	"CREATE SEQUENCE public.s5 START 3",
	"SELECT nextval('s5')",
	"DROP SEQUENCE public.s5",
	"CREATE SEQUENCE s5 INCREMENT 0",
	"CREATE SEQUENCE s5 MINVALUE 10 MAXVALUE 5",
	"CREATE SEQUENCE s5 START 0",
	"CREATE SEQUENCE s5 CACHE 0",
	"CREATE SEQUENCE s5 AS text",
	"SELECT nextval('nosuch')",
	"SELECT currval('nosuch')",
	"SELECT setval('nosuch', 1)",
	"DROP SEQUENCE nosuch",
	"DROP SEQUENCE IF EXISTS nosuch",
	// Column defaults (CREATE TABLE ... DEFAULT nextval('t_seq'), as
	// Hibernate's SEQUENCE ids and schema tools write them).
	"CREATE TABLE items (id bigint DEFAULT nextval('s') PRIMARY KEY, name text)",
	"CREATE TABLE bad (id bigint DEFAULT nextval('nosuch'))",
	"CREATE TABLE s (id int)",
	"INSERT INTO items (name) VALUES ('a'), ('b') RETURNING id",
	"INSERT INTO items VALUES (nextval('s'), 'c'), (nextval('s'), 'd') RETURNING id",
	"INSERT INTO items (id, name) VALUES (DEFAULT, 'e') RETURNING id",
	"INSERT INTO items DEFAULT VALUES RETURNING id",
	"SELECT currval('s')",
	"INSERT INTO items (id, name) VALUES (1, 'dup')",
	"SELECT nextval('s')",
	"BEGIN",
	"SELECT nextval('s')",
	"INSERT INTO items (name) VALUES ('rolled back') RETURNING id",
	"ROLLBACK",
	"SELECT nextval('s'), currval('s')",
	"DROP SEQUENCE s",
	"SELECT id, name FROM items ORDER BY id",
	// OWNED BY: the sequence goes with its table.
	"CREATE TABLE owner (id int PRIMARY KEY)",
	"CREATE SEQUENCE owned OWNED BY owner.id",
	"CREATE SEQUENCE owned2 OWNED BY owner.nosuch",
	"SELECT nextval('owned')",
	"SELECT nextval('owned')",
	"TRUNCATE owner RESTART IDENTITY",
	"SELECT nextval('owned')",
	"DROP TABLE owner",
	"SELECT nextval('owned')",
	// The sequence PostgreSQL gives a SERIAL column.
	"CREATE TABLE st (id serial PRIMARY KEY, v text)",
	"SELECT currval('st_id_seq')",
	"INSERT INTO st (v) VALUES ('a') RETURNING id",
	"SELECT currval('st_id_seq'), lastval()",
	"SELECT nextval('st_id_seq')",
	"SELECT setval('st_id_seq', 100)",
	"SELECT setval('st_id_seq', 0)",
	"SELECT setval('st_id_seq', 2147483648)",
	"DISCARD SEQUENCES",
	"SELECT currval('st_id_seq')",
	"SELECT lastval()",
	"SELECT pg_catalog.nextval('st_id_seq'::regclass)",
	"INSERT INTO st (v) VALUES ('b') RETURNING id",
	"ALTER SEQUENCE st_id_seq RESTART WITH 50",
	"INSERT INTO st (v) VALUES ('c') RETURNING id",
	"ALTER SEQUENCE st_id_seq RESTART WITH 0",
	"ALTER SEQUENCE st_id_seq RESTART",
	"SELECT nextval('st_id_seq')",
	"SELECT setval('st_id_seq', 1000)",
	"SELECT nextval('items')",
	"CREATE SEQUENCE ks INCREMENT 10 START 100",
	"CREATE TABLE keep (id bigint DEFAULT nextval('ks') PRIMARY KEY, v text)",
	"INSERT INTO keep (v) VALUES ('a'), ('b'), ('c')",
	"INSERT INTO keep VALUES (nextval('ks'), 'd')",
	"INSERT INTO keep (v) SELECT v FROM (VALUES ('e'), ('f')) AS x(v)",
	"INSERT INTO keep (id, v) SELECT p0, p1 FROM (VALUES (nextval('ks'), 'g', 1), (nextval('ks'), 'h', 0)) AS x(p0, p1, sen) ORDER BY sen RETURNING id, v",
	"SELECT id, v FROM keep ORDER BY id",
	"DROP TABLE items",
	"DROP SEQUENCE s, s2",
	"SELECT nextval('s')",
	"SELECT lastval()",
}

// TestSequencesAsPostgres runs sequenceScript on PostgreSQL 15 and
// through shepherd, on the embedded default and on a MariaDB +
// PostgreSQL + SQLite CBS cluster, and compares every answer and error;
// then reads the replicas directly: they hold the same keys.
func TestSequencesAsPostgres(t *testing.T) {
	for _, setup := range []string{"embedded", "cbs"} {
		t.Run(setup, func(t *testing.T) {
			ctx := context.Background()
			var cfg *config.Config
			if setup == "embedded" {
				cfg = embedded(t)
			} else {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			c := connect(t, addr, "app")
			alone, err := pgx.Connect(ctx, testenv.Postgres(t))
			if err != nil {
				t.Fatal(err)
			}
			defer alone.Close(ctx)
			for _, q := range sequenceScript {
				want := seqRun(ctx, alone, q)
				got := seqRun(ctx, c, q)
				if want != got {
					t.Errorf("%s:\n  PostgreSQL: %s\n  shepherd:   %s", q, want, got)
				}
			}
			idle, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := srv.Cluster().Idle(idle); err != nil {
				t.Fatalf("cluster not idle: %v", err)
			}
			assertIdentical(t, cfg, "SELECT id, v FROM st ORDER BY id")
			assertIdentical(t, cfg, "SELECT id, v FROM keep ORDER BY id")
		})
	}
}

// TestSequencesRefused: nextval() where the number of calls depends on
// rows is refused with 0A000 naming the construct, and changes nothing.
func TestSequencesRefused(t *testing.T) {
	ctx := context.Background()
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE SEQUENCE s")
	mustExec(t, c, "CREATE TABLE t (id bigint DEFAULT nextval('s') PRIMARY KEY, n int)")
	mustExec(t, c, "INSERT INTO t (n) VALUES (1), (2)")
	for _, q := range []string{
		"UPDATE t SET n = nextval('s')",
		"INSERT INTO t (id, n) SELECT nextval('s'), n FROM t",
		"SELECT nextval('s') FROM t",
		"SELECT nextval('s') WHERE false",
		"INSERT INTO t (n) VALUES (nextval('s'))",
		"SELECT n FROM t WHERE id < nextval('s')",
	} {
		_, err := c.Exec(ctx, q)
		if sqlstate(err) != "0A000" || !strings.Contains(err.Error(), "nextval") && !strings.Contains(err.Error(), "fills in") {
			t.Errorf("%s: %v, want 0A000 naming nextval()", q, err)
		}
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT nextval('s')").Scan(&n); err != nil || n != 3 {
		t.Errorf("nextval after the refusals: %d, %v; want 3", n, err)
	}
}

// TestSequencesRestart: after shepherd restarts, sequences (named and a
// SERIAL column's) continue above every value handed out before; none is
// handed out again.
func TestSequencesRestart(t *testing.T) {
	ctx := context.Background()
	cfg := embedded(t)
	addr, _, stop := startServer(t, cfg)
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "CREATE SEQUENCE up INCREMENT 3")
	mustExec(t, c, "CREATE SEQUENCE down INCREMENT -1")
	mustExec(t, c, "CREATE TABLE t (id bigint DEFAULT nextval('up') PRIMARY KEY, d bigint)")
	seen := map[int64]bool{}
	var lastUp, lastDown int64
	for i := 0; i < 5; i++ {
		if err := c.QueryRow(ctx, "INSERT INTO t (d) VALUES (nextval('down')) RETURNING id, d").Scan(&lastUp, &lastDown); err != nil {
			t.Fatal(err)
		}
		seen[lastUp] = true
	}
	mustExec(t, c, "SELECT setval('down', -100)")
	c.Close(ctx)
	stop()

	addr, _ = start(t, cfg)
	c = connect(t, addr, "app")
	if _, err := c.Exec(ctx, "SELECT currval('up')"); sqlstate(err) != "55000" {
		t.Errorf("currval in a new session: %v, want 55000", err)
	}
	var up, down int64
	if err := c.QueryRow(ctx, "INSERT INTO t (d) VALUES (nextval('down')) RETURNING id, d").Scan(&up, &down); err != nil {
		t.Fatal(err)
	}
	if up <= lastUp || seen[up] || (up-1)%3 != 0 {
		t.Errorf("after restart: id %d, last before %d (increment 3 from 1)", up, lastUp)
	}
	if down > -101 {
		t.Errorf("after restart: down gave %d, want at most -101 (setval -100 before)", down)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 6 {
		t.Errorf("rows: %d, %v", n, err)
	}
}

// seqRun runs q in simple protocol and gives its answer (rows as text)
// or its error (SQLSTATE and message) as one string.
func seqRun(ctx context.Context, c *pgx.Conn, q string) string {
	rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return seqErrText(err)
	}
	var b strings.Builder
	for rows.Next() {
		for i, v := range rows.RawValues() {
			if i > 0 {
				b.WriteString("|")
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.Write(v)
			}
		}
		b.WriteString("; ")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return seqErrText(err)
	}
	for _, f := range rows.FieldDescriptions() {
		b.WriteString(f.Name + " ")
	}
	return b.String() + rows.CommandTag().String()
}

func seqErrText(err error) string {
	if pe := pgError(err); pe != nil {
		s := "ERROR " + pe.Code + " " + pe.Message
		if pe.Detail != "" {
			s += " DETAIL " + pe.Detail
		}
		return s
	}
	return "error " + err.Error()
}

// TestSequencesExtendedProtocol: a prepared nextval() and a prepared
// INSERT filling a DEFAULT nextval('s') column get fresh values at every
// execution (pgx's default mode prepares and caches statements, as
// pgjdbc and Hibernate do), and a parameter may name the sequence.
func TestSequencesExtendedProtocol(t *testing.T) {
	ctx := context.Background()
	addr, _ := start(t, embedded(t))
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE SEQUENCE hibernate_seq START 1 INCREMENT 50")
	mustExec(t, c, "CREATE TABLE e (id bigint DEFAULT nextval('hibernate_seq') PRIMARY KEY, n int)")
	var got []int64
	for i := 0; i < 3; i++ {
		var v int64
		if err := c.QueryRow(ctx, "select nextval('hibernate_seq')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
		if err := c.QueryRow(ctx, "INSERT INTO e (n) VALUES ($1) RETURNING id", i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	var v int64
	if err := c.QueryRow(ctx, "SELECT nextval($1)", "hibernate_seq").Scan(&v); err != nil {
		t.Fatal(err)
	}
	got = append(got, v)
	want := []int64{1, 51, 101, 151, 201, 251, 301}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("values %v, want %v", got, want)
	}
	// COPY fills the column from the sequence too, row by row.
	n, err := c.CopyFrom(ctx, pgx.Identifier{"e"}, []string{"n"}, pgx.CopyFromRows([][]any{{int32(7)}, {int32(8)}}))
	if err != nil || n != 2 {
		t.Fatalf("COPY: %d, %v", n, err)
	}
	var ids []int64
	rows, err := c.Query(ctx, "SELECT id FROM e WHERE n >= 7 ORDER BY n")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || fmt.Sprint(ids) != "[351 401]" {
		t.Errorf("COPY's ids %v, %v; want [351 401]", ids, rows.Err())
	}
}
