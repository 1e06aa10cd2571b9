package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func open(t *testing.T, dsn string) (driver.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return postgres.Open(ctx, driver.Spec{Name: "pg1", DSN: dsn})
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Engine {
		e, err := open(t, testenv.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

func TestOpenUnreachable(t *testing.T) {
	_, err := open(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	if !pgerr.IsConnection(err) {
		t.Fatalf("open of a closed port: %v, want a class 08 error", err)
	}
	if pe := pgerr.From(err); pe.Replica != "pg1" {
		t.Errorf("error does not name the replica: %v", err)
	}
}

// TestCommitOfFailedTransaction: PostgreSQL answers COMMIT in a failed
// transaction with the tag ROLLBACK and no error; the driver must not
// report that as a commit.
func TestCommitOfFailedTransaction(t *testing.T) {
	e, err := open(t, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, driver.Query{SQL: "SELECT 1 / 0", ReturnsRows: true, Verb: "SELECT"})
	if got := pgerr.Code(err); got != pgerr.DivisionByZero {
		t.Fatalf("1 / 0: SQLSTATE %s (%v), want 22012", got, err)
	}
	_, err = c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"})
	if got := pgerr.Code(err); got != pgerr.InFailedSQLTransaction {
		t.Errorf("statement in failed transaction: SQLSTATE %s, want 25P02", got)
	}
	if got := pgerr.Code(c.Commit(ctx)); got != pgerr.InFailedSQLTransaction {
		t.Errorf("COMMIT of a failed transaction: SQLSTATE %q, want 25P02", got)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"}); err != nil {
		t.Errorf("session after the failed transaction: %v", err)
	}
}

// TestPreparedStatementsFollowSchema: DML with parameters runs as
// statements prepared per connection; a schema change on any connection
// of the engine, or outside it, must never leave a connection running a
// statement prepared against the old schema.
func TestPreparedStatementsFollowSchema(t *testing.T) {
	dsn := testenv.Postgres(t)
	e, err := open(t, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connect := func() driver.Conn {
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	exec := func(c driver.Conn, verb, sql string, args ...driver.Arg) *answer.Answer {
		t.Helper()
		a, err := c.Exec(ctx, driver.Query{SQL: sql, Args: args, Verb: verb, ReturnsRows: verb == "SELECT"})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return a
	}
	user, admin := connect(), connect()
	const sel = "SELECT * FROM t WHERE a = $1"
	one := driver.Arg{Type: answer.Int, Text: "1"}
	wantCols := func(what string, a *answer.Answer, n int) {
		t.Helper()
		if len(a.Columns) != n || len(a.Rows) != 1 || len(a.Rows[0]) != n {
			t.Fatalf("%s: %d columns, rows %v; want %d columns, one row", what, len(a.Columns), a.Rows, n)
		}
	}

	exec(admin, "CREATE TABLE", "CREATE TABLE t (a int PRIMARY KEY, b text)")
	exec(admin, "INSERT", "INSERT INTO t VALUES ($1, 'x')", one)
	wantCols("before any change", exec(user, "SELECT", sel, one), 2)
	wantCols("prepared, again", exec(user, "SELECT", sel, one), 2)

	// A column added on another connection changes the result type.
	exec(admin, "ALTER TABLE", "ALTER TABLE t ADD COLUMN c int")
	wantCols("after ALTER TABLE on another connection", exec(user, "SELECT", sel, one), 3)

	// Dropped and created again with another type: the parameter's type,
	// inferred when the statement was prepared, changes too.
	exec(admin, "DROP TABLE", "DROP TABLE t")
	exec(admin, "CREATE TABLE", "CREATE TABLE t (a text PRIMARY KEY, b int)")
	exec(admin, "INSERT", "INSERT INTO t VALUES ('x1', 2)")
	a := exec(user, "SELECT", sel, driver.Arg{Text: "x1"})
	wantCols("after DROP and CREATE", a, 2)
	if a.Rows[0][1].Text != "2" {
		t.Errorf("after DROP and CREATE: row %v, want [x1 2]", a.Rows[0])
	}

	// DDL in a transaction: a statement another connection prepares
	// before the COMMIT is not used after it. Here the new table shadows
	// one of the search path, which PostgreSQL's own plan invalidation
	// does not notice.
	exec(admin, "CREATE SCHEMA", "CREATE SCHEMA s2")
	exec(admin, "CREATE TABLE", "CREATE TABLE x (v int)")
	exec(admin, "INSERT", "INSERT INTO x VALUES (1)")
	exec(user, "SET", "SET search_path = s2, public")
	if err := admin.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	exec(admin, "CREATE TABLE", "CREATE TABLE s2.x (v int)")
	exec(admin, "INSERT", "INSERT INTO s2.x VALUES (2)")
	const selX = "SELECT v FROM x WHERE v > $1"
	zero := driver.Arg{Type: answer.Int, Text: "0"}
	if a := exec(user, "SELECT", selX, zero); len(a.Rows) != 1 || a.Rows[0][0].Text != "1" {
		t.Fatalf("before the COMMIT: %v, want public.x's row 1", a.Rows)
	}
	if err := admin.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if a := exec(user, "SELECT", selX, zero); len(a.Rows) != 1 || a.Rows[0][0].Text != "2" {
		t.Fatalf("after the COMMIT: %v, want s2.x's row 2", a.Rows)
	}

	// A change made outside the engine's connections: the server refuses
	// the stale statement; outside a transaction the driver prepares it
	// again and the client never sees the refusal.
	wantCols("prepared before the outside change", exec(user, "SELECT", sel, driver.Arg{Text: "x1"}), 2)
	outside, err := open(t, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	oc, err := outside.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	exec(oc, "ALTER TABLE", "ALTER TABLE t ADD COLUMN d int")
	wantCols("after an outside ALTER TABLE, autocommit", exec(user, "SELECT", sel, driver.Arg{Text: "x1"}), 3)
	exec(oc, "ALTER TABLE", "ALTER TABLE t DROP COLUMN d")
	if err := user.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = user.Exec(ctx, driver.Query{SQL: sel, Args: []driver.Arg{{Text: "x1"}}, Verb: "SELECT", ReturnsRows: true})
	if got := pgerr.Code(err); got != pgerr.FeatureNotSupported {
		t.Fatalf("stale statement in a transaction: %v, want 0A000", err)
	}
	if err := user.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wantCols("after the failed transaction", exec(user, "SELECT", sel, driver.Arg{Text: "x1"}), 2)

	// The same text with other parameter types is prepared apart.
	wantCols("typed parameter", exec(user, "SELECT", "SELECT $1 AS v", one), 1)
	a = exec(user, "SELECT", "SELECT $1 AS v", driver.Arg{Text: "abc"})
	if a.Rows[0][0].Text != "abc" || a.Columns[0].OID != answer.OIDText {
		t.Errorf("untyped parameter after a typed one: %v %+v, want abc as text", a.Rows, a.Columns)
	}

	// The cache is bounded, and what it evicts is deallocated.
	for i := range 300 {
		exec(user, "SELECT", fmt.Sprintf("SELECT %d + $1", i), one)
	}
	a = exec(user, "SELECT", "SELECT count(*) FROM pg_prepared_statements")
	if n, _ := strconv.Atoi(a.Rows[0][0].Text); n > 256 {
		t.Errorf("%d statements prepared on the server, want at most 256", n)
	}
}

// TestExecBatch: a batch answers as that many Exec calls would, in one
// round trip; a failing statement stops it in its place, the statements
// before it having run, and fails the transaction.
func TestExecBatch(t *testing.T) {
	e, err := open(t, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := c.(driver.Batcher)
	arg := func(n int) []driver.Arg { return []driver.Arg{{Type: answer.Int, Text: strconv.Itoa(n)}} }
	ins := func(n int) driver.Query {
		return driver.Query{SQL: "INSERT INTO t VALUES ($1)", Args: arg(n), Verb: "INSERT"}
	}
	sel := func(n int) driver.Query {
		return driver.Query{SQL: "SELECT v FROM t WHERE v >= $1 ORDER BY v", Args: arg(n), Verb: "SELECT", ReturnsRows: true}
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: "CREATE TABLE t (v int PRIMARY KEY)", Verb: "CREATE TABLE"}); err != nil {
		t.Fatal(err)
	}

	// Outside a transaction the statements run one at a time, each
	// committed by itself.
	as, err := b.ExecBatch(ctx, []driver.Query{ins(1), ins(1)})
	if len(as) != 1 || pgerr.Code(err) != pgerr.UniqueViolation {
		t.Fatalf("batch without a transaction: %d answers, %v; want 1 and 23505", len(as), err)
	}

	// In one: statements prepared before, prepared in the pipeline (twice
	// the same text), unnamed, and a SELECT without rows keeps its columns.
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	qs := []driver.Query{ins(2), ins(3), sel(2), sel(10), {SQL: "SELECT count(*) FROM t", Verb: "SELECT", ReturnsRows: true}, ins(4), sel(4)}
	as, err = b.ExecBatch(ctx, qs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		s := a.Tag
		for _, r := range a.Rows {
			s += " " + r[0].Text
		}
		got = append(got, fmt.Sprintf("%s/%d", s, len(a.Columns)))
	}
	want := []string{"INSERT 0 1/0", "INSERT 0 1/0", "SELECT 2 2 3/1", "SELECT 0/1", "SELECT 1 3/1", "INSERT 0 1/0", "SELECT 1 4/1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batch answers %v, want %v", got, want)
	}
	// A failure in the middle: the statements before it ran, none after.
	as, err = b.ExecBatch(ctx, []driver.Query{ins(5), ins(2), ins(6)})
	if len(as) != 1 || pgerr.Code(err) != pgerr.UniqueViolation {
		t.Fatalf("batch with a duplicate key: %d answers, %v; want 1 and 23505", len(as), err)
	}
	if _, err := c.Exec(ctx, sel(0)); pgerr.Code(err) != pgerr.InFailedSQLTransaction {
		t.Errorf("statement after the failed batch: %v, want 25P02", err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := c.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM pg_prepared_statements", Verb: "SELECT", ReturnsRows: true})
	if err != nil || a.Rows[0][0].Text != "2" {
		t.Errorf("statements prepared on the server: %v %v, want 2 (the INSERT and the SELECT)", a, err)
	}
	a, err = c.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM t", Verb: "SELECT", ReturnsRows: true})
	if err != nil || a.Rows[0][0].Text != "1" {
		t.Errorf("rows after the rollback: %v %v, want 1", a, err)
	}
}

// TestDeferredBeginAndExecCommit: BEGIN travels with the transaction's
// first statement and the log row with COMMIT; what the caller sees is
// what separate round trips gave.
func TestDeferredBeginAndExecCommit(t *testing.T) {
	e, err := open(t, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cm := c.(driver.Committer)
	ins := func(n int) driver.Query {
		return driver.Query{SQL: "INSERT INTO t VALUES ($1)", Args: []driver.Arg{{Type: answer.Int, Text: strconv.Itoa(n)}}, Verb: "INSERT"}
	}
	count := func() string {
		t.Helper()
		a, err := other.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM t", Verb: "SELECT", ReturnsRows: true})
		if err != nil {
			t.Fatal(err)
		}
		return a.Rows[0][0].Text
	}
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = c.Exec(ctx, driver.Query{SQL: "CREATE TABLE t (v int PRIMARY KEY)", Verb: "CREATE TABLE"})
	step("create", err)

	// Begun and ended without a statement.
	step("begin", c.Begin(ctx, driver.TxOptions{}))
	step("commit of nothing", c.Commit(ctx))
	step("begin", c.Begin(ctx, driver.TxOptions{}))
	step("rollback of nothing", c.Rollback(ctx))

	// A statement and the COMMIT together, behind the BEGIN.
	step("begin", c.Begin(ctx, driver.TxOptions{}))
	step("insert and commit", cm.ExecCommit(ctx, ins(1)))
	if n := count(); n != "1" {
		t.Fatalf("after ExecCommit: %s rows, want 1", n)
	}
	// A BEGIN inside the transaction is answered as PostgreSQL does.
	step("begin", c.Begin(ctx, driver.TxOptions{}))
	_, err = c.Exec(ctx, ins(2))
	step("insert", err)
	step("nested begin", c.Begin(ctx, driver.TxOptions{}))
	step("commit", c.Commit(ctx))
	if n := count(); n != "2" {
		t.Fatalf("after a transaction: %s rows, want 2", n)
	}

	// A failing statement in ExecCommit: nothing committed, the
	// transaction open and failed until rolled back.
	step("begin", c.Begin(ctx, driver.TxOptions{}))
	_, err = c.Exec(ctx, ins(3))
	step("insert", err)
	if err := cm.ExecCommit(ctx, ins(1)); pgerr.Code(err) != pgerr.UniqueViolation {
		t.Fatalf("ExecCommit of a duplicate key: %v, want 23505", err)
	}
	if err := c.Commit(ctx); pgerr.Code(err) != pgerr.InFailedSQLTransaction {
		t.Fatalf("COMMIT after the failed ExecCommit: %v, want 25P02", err)
	}
	if n := count(); n != "2" {
		t.Fatalf("after the failed transaction: %s rows, want 2", n)
	}

	// The options of the deferred BEGIN hold: READ ONLY refuses a write.
	step("begin", c.Begin(ctx, driver.TxOptions{ReadOnly: true}))
	if _, err := c.Exec(ctx, ins(4)); pgerr.Code(err) != "25006" {
		t.Fatalf("write in a READ ONLY transaction: %v, want 25006", err)
	}
	step("rollback", c.Rollback(ctx))
	if err := c.Begin(ctx, driver.TxOptions{Isolation: "serializable"}); err != nil {
		t.Fatal(err)
	}
	a, err := c.Exec(ctx, driver.Query{SQL: "SHOW transaction_isolation", Verb: "SHOW", ReturnsRows: true})
	step("show", err)
	if a.Rows[0][0].Text != "serializable" {
		t.Errorf("isolation of the deferred BEGIN: %s, want serializable", a.Rows[0][0].Text)
	}
	step("rollback", c.Rollback(ctx))
}

// TestLostBeginNeverAutocommits: when the deferred BEGIN never took
// effect (the first statement's round trip failed before it ran), the
// statements after it must fail rather than run, and commit, one by one
// outside any transaction: a rolled-back attempt would leave their
// writes behind.
func TestLostBeginNeverAutocommits(t *testing.T) {
	e, err := open(t, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, driver.Query{SQL: "CREATE TABLE lost (v int PRIMARY KEY)", Verb: "CREATE TABLE"}); err != nil {
		t.Fatal(err)
	}
	ins := func(n int) driver.Query {
		return driver.Query{SQL: "INSERT INTO lost VALUES ($1)", Args: []driver.Arg{{Type: answer.Int, Text: strconv.Itoa(n)}}, Verb: "INSERT"}
	}
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	dead, kill := context.WithCancel(ctx)
	kill()
	if _, err := c.Exec(dead, ins(1)); err == nil {
		t.Fatal("a statement with a cancelled context ran")
	}
	_, err = c.Exec(ctx, ins(2))
	_, berr := c.(driver.Batcher).ExecBatch(ctx, []driver.Query{ins(3), ins(4)})
	_ = c.Rollback(ctx)
	if err == nil || berr == nil {
		t.Errorf("statements after a lost BEGIN ran: %v, %v", err, berr)
	}
	other, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	a, err := other.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM lost", Verb: "SELECT", ReturnsRows: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := a.Rows[0][0].Text; n != "0" {
		t.Errorf("%s rows left behind by a rolled-back transaction", n)
	}
}

// TestRefusesNonCCollation checks that a replica whose database does not
// compare and case-map text as the C locale does is refused at open,
// naming the replica and the locale, and that a C database is accepted.
// The SQL writer assumes C: byte-wise order (as MariaDB's
// utf8mb4_nopad_bin and SQLite's BINARY), and case mapping of ASCII
// letters only (as SQLite's). Each refused locale is shown to differ.
func TestRefusesNonCCollation(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := open(t, dsn)
	if err != nil {
		t.Fatalf("C database refused: %v", err)
	}
	e.Close()

	admin, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	one := func(c *pgconn.PgConn, sql string) string {
		t.Helper()
		rs, err := c.Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return string(rs[0].Rows[0][0])
	}
	// The probe of each locale's difference from C, and C's answer.
	const probe = "SELECT (upper('é') = 'é')::text || ' ' || ('a' < 'B')::text"
	if got := one(admin, probe); got != "true false" {
		t.Fatalf("C database: %s gives %q, want \"true false\"", probe, got)
	}
	for _, tc := range []struct{ name, options, locale string }{
		// C.UTF-8 sorts by code point, which is byte order in UTF-8, but
		// maps the case of every letter: upper('é') is 'É'.
		{"cutf8", "LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'", "C.UTF-8"},
		// ICU's en-US sorts 'a' before 'B'.
		{"icu", "LOCALE_PROVIDER icu ICU_LOCALE 'en-US'", "en-US"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
			if _, err := admin.Exec(ctx, "CREATE DATABASE "+db+" TEMPLATE template0 ENCODING 'UTF8' "+tc.options).ReadAll(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)").ReadAll()
			})
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			u.Path = "/" + db
			other, err := pgconn.Connect(ctx, u.String())
			if err != nil {
				t.Fatal(err)
			}
			got := one(other, probe)
			other.Close(context.Background())
			if got == "true false" {
				t.Fatalf("%s: %s gives %q as C does: nothing to refuse", tc.locale, probe, got)
			}
			_, err = open(t, u.String())
			pe := pgerr.From(err)
			if err == nil || pe.Code != pgerr.FeatureNotSupported || pe.Replica != "pg1" ||
				!strings.Contains(pe.Message, "pg1") || !strings.Contains(pe.Message, tc.locale) {
				t.Errorf("open of a %s database: %v, want 0A000 naming pg1 and %s", tc.locale, err, tc.locale)
			}
		})
	}
}
