package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// stmtOutcome is what a client sees of one query string, in full: each
// result's command tag and rows, then the error's SQLSTATE, message,
// DETAIL and HINT, and the transaction status.
func stmtOutcome(ctx context.Context, conn *pgconn.PgConn, sql string) string {
	rs, err := conn.Exec(ctx, sql).ReadAll()
	parts := resultLines(rs)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		parts = append(parts, fmt.Sprintf("ERROR %s: %s", pe.Code, pe.Message))
		if pe.Detail != "" {
			parts = append(parts, "DETAIL: "+pe.Detail)
		}
		if pe.Hint != "" {
			parts = append(parts, "HINT: "+pe.Hint)
		}
	case err != nil:
		parts = append(parts, "connection: "+err.Error())
	}
	return fmt.Sprintf("%s [%c]", strings.Join(parts, "; "), conn.TxStatus())
}

// stepsAsPostgres runs setup, then steps, on PostgreSQL 15 alone and
// through shepherd over the embedded default and over MariaDB +
// PostgreSQL + SQLite in cbs: every step must give what PostgreSQL gives
// (tags, rows, SQLSTATE, message, DETAIL, HINT, status). It returns the
// configurations' servers' addresses and configurations, by name, for
// checks after.
func stepsAsPostgres(t *testing.T, setup, steps []string) {
	t.Helper()
	ctx := context.Background()
	pg := postgresAlone(t)
	for _, s := range setup {
		if o := stmtOutcome(ctx, pg, s); strings.Contains(o, "ERROR") {
			t.Fatalf("PostgreSQL: %s: %s", s, o)
		}
	}
	want := make([]string, len(steps))
	for i, s := range steps {
		want[i] = stmtOutcome(ctx, pg, s)
		if testing.Verbose() {
			t.Logf("PostgreSQL: %s: %s", s, want[i])
		}
	}
	for _, name := range []string{"embedded", "cbs"} {
		t.Run(name, func(t *testing.T) {
			cfg := embedded(t)
			if name == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			sh := shepherdConn(t, addr)
			for _, s := range setup {
				if o := stmtOutcome(ctx, sh, s); strings.Contains(o, "ERROR") {
					t.Fatalf("%s: %s", s, o)
				}
			}
			for i, s := range steps {
				qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				got := stmtOutcome(qctx, sh, s)
				cancel()
				if got != want[i] {
					t.Errorf("%s\n shepherd:   %s\n PostgreSQL: %s", s, got, want[i])
				}
			}
			if err := srv.Cluster().Idle(ctx); err != nil {
				t.Fatal(err)
			}
			assertReplicas(t, addr, len(cfg.Replicas))
		})
	}
}

// TestDropSeveralTablesAsPostgres (issue 15): DROP TABLE of several
// tables in one statement (pgbench -i, Django's flush, test teardown),
// with IF EXISTS and CASCADE, runs on every engine (SQLite's DROP takes
// one name) and fails as PostgreSQL does, all or nothing: 42P01 naming
// the first missing table, 42809 for a view, 2BP01 for a table another
// one's foreign key references. The catalog follows.
func TestDropSeveralTablesAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"CREATE TABLE d3 (id int PRIMARY KEY)",
		"CREATE VIEW dv AS SELECT id FROM d3",
		"INSERT INTO d1 VALUES (1)",
		"INSERT INTO d2 VALUES (1, 1)",
		"INSERT INTO d3 VALUES (1)",
	}
	steps := []string{
		"DROP TABLE d3, nosuch1, d1, nosuch2",
		"SELECT count(*) FROM d3",
		"DROP TABLE d1",
		"DROP TABLE d2, dv",
		"DROP VIEW d3",
		"DROP VIEW dv",
		"DROP TABLE d3, d1",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
		"DROP TABLE d1, d2, d3",
		"SELECT count(*) FROM d1",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"INSERT INTO d1 VALUES (1)",
		"INSERT INTO d2 VALUES (1, 1)",
		// pgbench -i's form: IF EXISTS, some missing.
		"DROP TABLE IF EXISTS d1, pgbench_nosuch, d2",
		"SELECT count(*) FROM d2",
		"CREATE TABLE d1 (id int PRIMARY KEY)",
		"CREATE TABLE d2 (id int PRIMARY KEY, p int REFERENCES d1)",
		"DROP TABLE d2, d1 CASCADE",
		"CREATE TABLE d1 (id int)",
		"INSERT INTO d1 VALUES (7)",
		"SELECT id FROM d1",
		"DROP TABLE d1 CASCADE",
		"SELECT relname FROM pg_class WHERE relname IN ('d1', 'd2', 'd3', 'dv') ORDER BY 1",
	}
	stepsAsPostgres(t, setup, steps)
}

// TestLockTableAsPostgres (issue 15): LOCK TABLE in every mode is
// accepted inside a block and refused outside one (25P01) as PostgreSQL
// does, fails for a relation that does not exist (42P01), and pg_dump's
// form (schema-qualified, ACCESS SHARE) works.
func TestLockTableAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE lk (id int PRIMARY KEY, v text)",
		"CREATE TABLE lk2 (id int PRIMARY KEY)",
		"INSERT INTO lk VALUES (1, 'one')",
	}
	steps := []string{
		"LOCK TABLE lk IN ACCESS SHARE MODE",
		"LOCK lk",
		"BEGIN",
		"LOCK TABLE public.lk IN ACCESS SHARE MODE",
		"LOCK TABLE lk IN ROW SHARE MODE",
		"LOCK TABLE lk IN ROW EXCLUSIVE MODE",
		"LOCK TABLE lk IN SHARE UPDATE EXCLUSIVE MODE",
		"LOCK TABLE lk IN SHARE MODE",
		"LOCK TABLE lk, lk2 IN SHARE ROW EXCLUSIVE MODE",
		"LOCK TABLE ONLY lk IN EXCLUSIVE MODE NOWAIT",
		"LOCK lk",
		"SELECT id, v FROM lk",
		"UPDATE lk SET v = 'uno' WHERE id = 1",
		"LOCK TABLE nosuch IN ACCESS SHARE MODE",
		"SELECT 1",
		"ROLLBACK",
		"BEGIN",
		"LOCK TABLE lk2, nosuch",
		"COMMIT",
		"LOCK TABLE lk IN ACCESS EXCLUSIVE MODE; INSERT INTO lk VALUES (2, 'two')",
		"SELECT id, v FROM lk ORDER BY id",
		"BEGIN; LOCK TABLE lk IN SHARE MODE; SELECT count(*) FROM lk; COMMIT",
	}
	stepsAsPostgres(t, setup, steps)
}

// TestLockTableConflicts: shepherd holds LOCK TABLE's locks until the
// block ends, across sessions, with PostgreSQL's conflicts: NOWAIT of a
// conflicting mode fails with 55P03 (and aborts the block), a mode that
// does not conflict is granted, and the holder's COMMIT lets go. (The
// waits and deadlocks: session.TestTableLocks.)
func TestLockTableConflicts(t *testing.T) {
	ctx := context.Background()
	addr, _ := start(t, embedded(t))
	a, b := connect(t, addr, "app"), connect(t, addr, "app")
	mustExec(t, a, "CREATE TABLE lk (id int PRIMARY KEY)")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "LOCK TABLE lk IN EXCLUSIVE MODE")

	mustExec(t, b, "BEGIN")
	mustExec(t, b, "LOCK TABLE lk IN ACCESS SHARE MODE") // no conflict with EXCLUSIVE
	_, err := b.Exec(ctx, "LOCK TABLE lk IN ROW SHARE MODE NOWAIT")
	if sqlstate(err) != "55P03" || !strings.Contains(err.Error(), `could not obtain lock on relation "lk"`) {
		t.Fatalf("NOWAIT: %v", err)
	}
	if _, err := b.Exec(ctx, "SELECT 1"); sqlstate(err) != "25P02" {
		t.Fatalf("after the failed LOCK: %v", err)
	}
	mustExec(t, b, "ROLLBACK")
	mustExec(t, b, "BEGIN")
	if _, err := b.Exec(ctx, "LOCK TABLE lk IN ACCESS EXCLUSIVE MODE NOWAIT"); sqlstate(err) != "55P03" {
		t.Fatalf("NOWAIT: %v", err)
	}
	mustExec(t, b, "ROLLBACK")
	mustExec(t, a, "COMMIT")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "LOCK TABLE lk IN ACCESS EXCLUSIVE MODE NOWAIT")
	mustExec(t, b, "COMMIT")
}

// TestPrepareExecuteAsPostgres (issue 15): SQL-level PREPARE (declared
// and inferred parameter types), EXECUTE (arguments read as the
// parameters' types), DEALLOCATE [PREPARE] name/ALL and DISCARD ALL
// give PostgreSQL's answers and errors (26000 unknown name, 42P05
// duplicate, 42601 wrong number of arguments, 22P02 a bad argument); a
// PREPARE outlives the ROLLBACK of its block.
func TestPrepareExecuteAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{"CREATE TABLE pp (id int PRIMARY KEY, v text)"}
	steps := []string{
		"PREPARE ins (int, text) AS INSERT INTO pp VALUES ($1, $2)",
		"EXECUTE ins(1, 'one')",
		"EXECUTE ins (2, 'two')",
		"PREPARE sel AS SELECT id, v FROM pp WHERE id > $1 ORDER BY id",
		"EXECUTE sel(0)",
		"EXECUTE sel('1')",
		"EXECUTE sel",
		"EXECUTE sel(1, 2)",
		"EXECUTE sel('x')",
		"EXECUTE nosuch",
		"EXECUTE nosuch(1)",
		"PREPARE sel AS SELECT 1",
		"DEALLOCATE sel",
		"EXECUTE sel(0)",
		"DEALLOCATE sel",
		"PREPARE q AS SELECT count(*) FROM pp",
		"BEGIN",
		"EXECUTE ins(3, 'three')",
		"EXECUTE q",
		"PREPARE r AS SELECT v FROM pp WHERE id = $1",
		"EXECUTE nosuch",
		"EXECUTE q",
		"ROLLBACK",
		"EXECUTE q",
		"EXECUTE r(1)",
		"PREPARE m AS UPDATE pp SET v = $2 WHERE id = $1; EXECUTE m(2, 'deux'); EXECUTE r(2)",
		"DEALLOCATE PREPARE m",
		"DEALLOCATE ALL",
		"EXECUTE q",
		"PREPARE d AS SELECT id FROM pp ORDER BY id",
		"EXECUTE d",
		"DISCARD ALL",
		"EXECUTE d",
	}
	stepsAsPostgres(t, setup, steps)
}

// notifyTranscript runs LISTEN/NOTIFY traffic between a listener and a
// notifier connected by connect, and returns what the listener received
// (channel, payload, who sent it) and the errors, in order. A
// notification that must not arrive is checked by a later one that must:
// notifications arrive in commit order.
func notifyTranscript(t *testing.T, connect func() *pgx.Conn) []string {
	ctx := context.Background()
	l, n := connect(), connect()
	var out []string
	exec := func(c *pgx.Conn, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			if len(sql) > 40 {
				sql = sql[:40] + "..."
			}
			var pe *pgconn.PgError
			errors.As(err, &pe)
			out = append(out, fmt.Sprintf("%s: %s %s", sql, sqlstate(err), pe.Message))
		}
	}
	receive := func() {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		m, err := l.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		who := "?"
		switch m.PID {
		case n.PgConn().PID():
			who = "notifier"
		case l.PgConn().PID():
			who = "listener"
		}
		out = append(out, fmt.Sprintf("%s %q from %s", m.Channel, m.Payload, who))
	}
	exec(l, "LISTEN ch")
	exec(l, "LISTEN other")
	exec(n, "NOTIFY ch, 'a'")
	receive()
	exec(n, "BEGIN")
	exec(n, "NOTIFY ch, 'b'")
	exec(n, "NOTIFY ch, 'b'")
	exec(n, "NOTIFY ch, 'c'")
	exec(n, "SELECT pg_notify('ch', 'b')")
	exec(n, "SELECT pg_notify('other', 'x')")
	exec(n, "COMMIT")
	receive()
	receive()
	receive()
	exec(n, "BEGIN; NOTIFY ch, 'rolled back'; ROLLBACK")
	exec(n, "BEGIN")
	exec(n, "NOTIFY ch, 'failed block'")
	exec(n, "SELECT 1/0")
	exec(n, "COMMIT")
	exec(n, "NOTIFY ch")
	receive()
	// Not delivered while the listener's transaction is open.
	exec(l, "BEGIN")
	exec(n, "NOTIFY ch, 'while in a block'")
	exec(l, "SELECT 1")
	exec(l, "COMMIT")
	receive()
	// UNLISTEN rolled back keeps listening; one committed stops.
	exec(l, "BEGIN; UNLISTEN ch; ROLLBACK")
	exec(n, "NOTIFY ch, 'still'")
	receive()
	exec(l, "UNLISTEN ch")
	exec(n, "NOTIFY ch, 'gone'")
	exec(n, "NOTIFY other, 'y'")
	receive()
	// LISTEN in a block takes effect at commit; the listener hears
	// itself.
	exec(l, "BEGIN; LISTEN self; NOTIFY self, 'me'; COMMIT")
	receive()
	exec(n, "NOTIFY ch, '"+strings.Repeat("x", 8000)+"'")
	exec(n, "SELECT pg_notify('', 'x')")
	// DISCARD ALL unlistens everything.
	exec(l, "DISCARD ALL")
	exec(l, "LISTEN sentinel")
	exec(n, "NOTIFY other, 'z'; NOTIFY self, 'z'")
	exec(n, "NOTIFY sentinel, 's'")
	receive()
	// Several listeners; pgx's pool reset form.
	l2 := connect()
	exec(l2, "LISTEN sentinel")
	exec(n, "NOTIFY sentinel, 'both'")
	receive()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if m, err := l2.WaitForNotification(wctx); err != nil || m.Payload != "both" {
		t.Fatalf("second listener: %v %v", m, err)
	}
	exec(l2, "UNLISTEN *")
	return out
}

// TestListenNotifyAsPostgres (issue 15): LISTEN, UNLISTEN, NOTIFY and
// pg_notify() through shepherd deliver what PostgreSQL 15 delivers, to
// pgx's WaitForNotification: at the notifying transaction's commit (none
// at ROLLBACK or a failed block), duplicates in a transaction folded,
// while the listener is idle or as its own transaction ends, LISTEN and
// UNLISTEN at commit, to the notifying session too, with PostgreSQL's
// errors.
func TestListenNotifyAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	want := notifyTranscript(t, func() *pgx.Conn {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	})
	if testing.Verbose() {
		t.Logf("PostgreSQL:\n%s", strings.Join(want, "\n"))
	}
	for _, name := range []string{"embedded", "cbs"} {
		t.Run(name, func(t *testing.T) {
			cfg := embedded(t)
			if name == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, _ := start(t, cfg)
			got := notifyTranscript(t, func() *pgx.Conn { return connect(t, addr, "app") })
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("shepherd:\n%s\nPostgreSQL:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestPrepareSharesProtocolNames: SQL PREPARE and the protocol's Parse
// name statements in one namespace, as in PostgreSQL: a statement
// PREPAREd in SQL is bound by the protocol, one Parsed by the protocol is
// EXECUTEd in SQL, and SQL DEALLOCATE drops either (26000 after).
func TestPrepareSharesProtocolNames(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	ctx := context.Background()
	run := func(c *pgconn.PgConn) []string {
		var out []string
		note := func(what string, err error) {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				what += " " + pe.Code + " " + pe.Message
			} else if err != nil {
				what += " " + err.Error()
			}
			out = append(out, what)
		}
		outcome := func(sql string) { out = append(out, stmtOutcome(ctx, c, sql)) }
		outcome("CREATE TABLE ps (id int PRIMARY KEY, v text)")
		outcome("PREPARE ins (int, text) AS INSERT INTO ps VALUES ($1, $2)")
		r := c.ExecPrepared(ctx, "ins", [][]byte{[]byte("1"), []byte("one")}, nil, nil).Read()
		note("bound "+r.CommandTag.String(), r.Err)
		_, err := c.Prepare(ctx, "sel", "SELECT v FROM ps WHERE id = $1", nil)
		note("parsed", err)
		outcome("EXECUTE sel(1)")
		_, err = c.Prepare(ctx, "ins", "SELECT 1", nil)
		note("parse of a name taken", err)
		outcome("DEALLOCATE sel")
		r = c.ExecPrepared(ctx, "sel", [][]byte{[]byte("1")}, nil, nil).Read()
		note("bound after DEALLOCATE", r.Err)
		outcome("DEALLOCATE ins")
		outcome("EXECUTE ins(2, 'two')")
		return out
	}
	want := run(postgresAlone(t))
	addr, _ := start(t, realCluster(t, "cbs"))
	got := run(shepherdConn(t, addr))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shepherd:\n%s\nPostgreSQL:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
