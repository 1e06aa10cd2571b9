package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// sessionSetups are the shepherds the session tests run against: the
// embedded default and a MariaDB + PostgreSQL + SQLite cbs cluster.
func sessionSetups(t *testing.T) map[string]func(t *testing.T) *config.Config {
	return map[string]func(t *testing.T) *config.Config{
		"embedded": embedded,
		"cbs":      func(t *testing.T) *config.Config { return realCluster(t, "cbs") },
	}
}

// answerOf is what a client sees of one statement: the columns (name and
// type OID), the rows in text form, or the error (SQLSTATE and message).
type answerOf struct {
	names []string
	oids  []uint32
	rows  [][]string
	err   *pgconn.PgError
	other error
}

func (a answerOf) String() string {
	if a.err != nil {
		return fmt.Sprintf("ERROR %s: %s", a.err.Code, a.err.Message)
	}
	if a.other != nil {
		return "error " + a.other.Error()
	}
	return fmt.Sprintf("%v %v %q", a.names, a.oids, a.rows)
}

// ask runs sql on c in the simple protocol (text rows) or, with
// extended, the extended one (Parse, Describe, Bind, Execute; rows read
// as text through pgx's decoding).
func ask(ctx context.Context, c *pgx.Conn, sql string, extended bool, args ...any) answerOf {
	mode := pgx.QueryExecModeSimpleProtocol
	if extended {
		mode = pgx.QueryExecModeDescribeExec
	}
	rows, err := c.Query(ctx, sql, append([]any{mode}, args...)...)
	var out answerOf
	if err == nil {
		for _, f := range rows.FieldDescriptions() {
			out.names = append(out.names, f.Name)
			out.oids = append(out.oids, f.DataTypeOID)
		}
		for rows.Next() {
			vals, verr := rows.Values()
			if verr != nil {
				err = verr
				break
			}
			var row []string
			for _, v := range vals {
				if v == nil {
					row = append(row, "NULL")
				} else if b, ok := v.(bool); ok {
					row = append(row, map[bool]string{true: "t", false: "f"}[b])
				} else {
					row = append(row, fmt.Sprint(v))
				}
			}
			out.rows = append(out.rows, row)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			out.err = pe
		} else {
			out.other = err
		}
	}
	return out
}

// versionForm is version()'s form, which clients parse (SQLAlchemy,
// TypeORM, Hibernate): "PostgreSQL <major>.<minor> (...) on <platform>,
// compiled by ..., <n>-bit".
var versionForm = regexp.MustCompile(`^PostgreSQL 15\.\d+ \([^)]*\) on [^,]+, compiled by .+, \d+-bit$`)

// TestSessionFunctionsAsPostgres runs session functions and session
// statements on PostgreSQL 15 and through shepherd (the embedded default
// and a MariaDB + PostgreSQL + SQLite cluster), in both protocols: the
// columns (names, type OIDs), the values and the errors (SQLSTATE,
// message) must be PostgreSQL's. Values that differ by nature (the
// version text, the process id, the user and database names, the port)
// are compared by form or with what the connection itself knows. Before,
// every one of these statements was refused (issue 15, items 2 and 5).
func TestSessionFunctionsAsPostgres(t *testing.T) {
	ctx := context.Background()
	pgDSN := testenv.Postgres(t)
	for name, setup := range sessionSetups(t) {
		t.Run(name, func(t *testing.T) {
			addr, _ := start(t, setup(t))
			for _, extended := range []bool{false, true} {
				pg, err := pgx.Connect(ctx, pgDSN)
				if err != nil {
					t.Fatal(err)
				}
				defer pg.Close(ctx)
				sh := connect(t, addr, "app")
				compareSession(t, ctx, pg, sh, extended)
			}
		})
	}
}

// sessionCase is one statement of compareSession; check, when set,
// compares the values itself (given the connection's user, database,
// pid and port), else they must equal PostgreSQL's.
type sessionCase struct {
	sql   string
	args  []any
	check func(got answerOf, who connFacts) error
}

type connFacts struct {
	user, database string
	pid            uint32
	port           int
}

func facts(c *pgx.Conn) connFacts {
	cfg := c.Config()
	return connFacts{user: cfg.User, database: cfg.Database, pid: c.PgConn().PID(), port: int(cfg.Port)}
}

func compareSession(t *testing.T, ctx context.Context, pg, sh *pgx.Conn, extended bool) {
	same := func(want ...string) func(answerOf, connFacts) error {
		return func(a answerOf, who connFacts) error {
			if len(a.rows) != 1 {
				return fmt.Errorf("rows %q", a.rows)
			}
			for i, w := range want {
				switch w {
				case "$user":
					w = who.user
				case "$db":
					w = who.database
				case "$pid":
					w = strconv.Itoa(int(who.pid))
				case "$port":
					w = strconv.Itoa(who.port)
				case "$version":
					if !versionForm.MatchString(a.rows[0][i]) {
						return fmt.Errorf("version() %q is not PostgreSQL's form", a.rows[0][i])
					}
					continue
				case "$int":
					if _, err := strconv.ParseInt(a.rows[0][i], 10, 64); err != nil {
						return fmt.Errorf("column %d: %q is not an integer", i, a.rows[0][i])
					}
					continue
				}
				if a.rows[0][i] != w {
					return fmt.Errorf("column %d: %q, want %q", i, a.rows[0][i], w)
				}
			}
			return nil
		}
	}
	cases := []sessionCase{
		{sql: "SELECT version()", check: same("$version")},
		{sql: "SELECT pg_catalog.version() AS v", check: same("$version")},
		{sql: "SELECT current_user, session_user, user, current_role, current_catalog, current_database()",
			check: same("$user", "$user", "$user", "$user", "$db", "$db")},
		{sql: "SELECT current_schema, current_schema(), pg_catalog.current_schema()"},
		{sql: "SELECT pg_backend_pid()", check: same("$pid")},
		{sql: "SELECT * FROM current_schema()"},
		{sql: "SELECT * FROM current_database()", check: same("$db")},
		{sql: "SELECT * FROM current_database() AS d", check: same("$db")},
		{sql: "SELECT * FROM version() v(x)", check: same("$version")},
		{sql: "SELECT * FROM pg_advisory_lock(5)"},
		{sql: "SELECT * FROM pg_advisory_unlock(5) AS u"},
		{sql: "SELECT inet_server_addr(), inet_server_port()", check: same("127.0.0.1/32", "$port")},
		{sql: "SELECT current_setting('standard_conforming_strings'), current_setting('nope', true), current_setting('DateStyle')"},
		{sql: "SELECT current_setting('nope')"},
		{sql: "SELECT current_setting($1)", args: []any{"integer_datetimes"}},
		{sql: "SELECT set_config('application_name', 'x', false), current_setting('application_name')"},
		{sql: "SELECT set_config('my.var', 'v', false)"},
		{sql: "SHOW my.var"},
		{sql: "SELECT set_config('nope', 'x', false)"},
		{sql: "SELECT set_config('server_version', 'x', false)"},
		{sql: "SELECT pg_sleep(0), pg_sleep(0.001)"},
		{sql: "SELECT pg_advisory_lock(1), pg_try_advisory_lock(1), pg_advisory_unlock(1), pg_advisory_unlock(1), pg_advisory_unlock(1)"},
		{sql: "SELECT pg_advisory_lock(1, 2), pg_advisory_unlock(1, 2), pg_advisory_unlock(1, 2)"},
		{sql: "SELECT pg_advisory_lock_shared(3), pg_try_advisory_lock_shared(3), pg_advisory_unlock_shared(3)"},
		{sql: "SELECT pg_try_advisory_xact_lock(5), pg_advisory_xact_lock(5)"},
		{sql: "SELECT pg_advisory_lock($1)", args: []any{int64(9)}},
		{sql: "SELECT pg_advisory_unlock_all()"},
		{sql: "SELECT pg_advisory_unlock(9)"},
		{sql: "SELECT pg_advisory_lock('x')"},
		{sql: "SELECT pg_advisory_lock(1.5)"},
		{sql: "SELECT pg_advisory_lock(1, 2, 3)"},
		{sql: "SELECT pg_advisory_lock(NULL), current_setting(NULL)"},
		{sql: "SELECT txid_current() AS x", check: same("$int")},
		{sql: "SELECT pg_current_xact_id() AS x", check: same("$int")},
		{sql: "DEALLOCATE ALL"},
		{sql: "DEALLOCATE PREPARE ALL"},
		{sql: "DEALLOCATE nope"},
		{sql: "DISCARD PLANS"},
		{sql: "DISCARD SEQUENCES"},
		{sql: "DISCARD TEMP"},
		{sql: "DISCARD ALL"},
		{sql: "CLOSE ALL"},
		{sql: "CLOSE nope"},
		{sql: "UNLISTEN *"},
		{sql: "UNLISTEN chan"},
		{sql: "RESET ALL"},
		{sql: "RESET nope"},
		{sql: "RESET statement_timeout"},
		{sql: "SET nope = 1"},
		{sql: "SET server_version = '1'"},
		{sql: "SET port = 1"},
		{sql: "SET log_connections = on"},
		{sql: "SET enable_seqscan = 'maybe'"},
		{sql: "SET bytea_output = 'nope'"},
		{sql: "SET statement_timeout = 'x'"},
		{sql: "SET statement_timeout = 5000"},
		{sql: "SHOW statement_timeout"},
		{sql: "SET work_mem = '8MB'"},
		{sql: "SHOW work_mem"},
		{sql: "SET enable_seqscan = 0"},
		{sql: "SHOW enable_seqscan"},
		{sql: "SET LOCAL search_path = a"}, // outside a block: warns, does nothing
		{sql: "SHOW search_path"},
		{sql: "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ"},
		{sql: "SHOW default_transaction_isolation"},
		{sql: "SHOW transaction_isolation"},
		{sql: "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE"},
		{sql: "SHOW transaction_isolation"},
		{sql: "SHOW nope"},
		{sql: `SET TIME ZONE LOCAL`},
		{sql: `SET TIME ZONE DEFAULT`},
		{sql: `SET SCHEMA 'public'`},
		{sql: `SHOW search_path`},
		{sql: `SET NAMES 'UTF8'`},
		{sql: `SET work_mem = 65536`},
		{sql: `SHOW work_mem`},
		{sql: `SET statement_timeout = '90s'`},
		{sql: `SHOW statement_timeout`},
		{sql: `SET statement_timeout = '1min'`},
		{sql: `SHOW statement_timeout`},
		{sql: `SET statement_timeout = '1.5min'`},
		{sql: `SHOW statement_timeout`},
		{sql: `SET statement_timeout = -1`},
		{sql: `SET statement_timeout = 0`},
		{sql: `SHOW statement_timeout`},
		{sql: `SET extra_float_digits = 3`},
		{sql: `SHOW extra_float_digits`},
		{sql: `SET extra_float_digits = 4`},
		{sql: `SET search_path = "$user", public`},
		{sql: `SHOW search_path`},
		{sql: `SET search_path TO DEFAULT`},
		{sql: `SHOW search_path`},
		{sql: `SET XML OPTION DOCUMENT`},
		{sql: `SET transaction_isolation = 'read committed'`},
		{sql: `SET default_transaction_isolation = 'read committed'`},
		{sql: `SHOW default_transaction_isolation`},
		{sql: `SHOW transaction_isolation`},
		{sql: `SET default_transaction_isolation = 'nope'`},
		{sql: `SET lock_timeout = '10s'`},
		{sql: `SHOW lock_timeout`},
		{sql: `SET client_min_messages = warning`},
		{sql: `SHOW client_min_messages`},
		{sql: `SET jit = off`},
		{sql: `SHOW jit`},
		{sql: `SET row_security = off`},
		{sql: `SET synchronous_commit = true`},
		{sql: `SHOW synchronous_commit`},
		{sql: `SET session_replication_role = replica`},
		{sql: `SHOW session_replication_role`},
		{sql: `SET vacuum_cost_delay = 2.5`},
		{sql: `SHOW vacuum_cost_delay`},
		{sql: `SET vacuum_cost_delay = '1s'`},
		{sql: `SET vacuum_cost_delay = 101`},
		{sql: `SET statement_timeout = '5 parsecs'`},
		{sql: `SET work_mem = '1GB'`},
		{sql: `SHOW work_mem`},
		{sql: `SET work_mem = '1.5GB'`},
		{sql: `SHOW work_mem`},
		{sql: `SET search_path = "MySchema", public, 'a b'`},
		{sql: `SHOW search_path`},
		{sql: `SELECT set_config('search_path', 'x, "Y"', false)`},
		{sql: `SHOW search_path`},
		{sql: "SET LOCAL nope = 1"},
		{sql: "SET LOCAL statement_timeout = 'x'"},
		{sql: "SELECT set_config('search_path', 'f', true), set_config('statement_timeout', '5000', true)"},
		{sql: "SHOW search_path"},
		{sql: "SELECT pg_is_in_recovery(), pg_client_encoding()"},
		{sql: "SELECT pg_postmaster_start_time() < now() AS started"},
		{sql: "SET default_with_oids = false"},
		{sql: "SET default_with_oids = true"},
		{sql: "SHOW default_with_oids"},
		{sql: "SHOW seed"},
		{sql: "SET ssl_renegotiation_limit = 5"},
		// pg_dump's session set-up.
		{sql: "SET DATESTYLE = ISO"},
		{sql: "SET INTERVALSTYLE = POSTGRES"},
		{sql: "SET extra_float_digits TO 3"},
		{sql: "SET synchronize_seqscans TO off"},
		{sql: "SET idle_in_transaction_session_timeout = 0"},
		{sql: "SET row_security = off"},
		{sql: "SET quote_all_identifiers = true"},
		{sql: "SELECT pg_catalog.set_config('search_path', '', false)"},
		{sql: "SHOW search_path"},
		{sql: "SELECT current_schema()"},
		{sql: "RESET ALL"},
	}
	cases = append(cases, sessionCase{sql: "SHOW server_version_num", check: func(a answerOf, _ connFacts) error {
		if len(a.rows) != 1 || !regexp.MustCompile(`^150\d\d\d$`).MatchString(a.rows[0][0]) {
			return fmt.Errorf("server_version_num %q", a.rows)
		}
		return nil
	}})
	for _, s := range []string{"standard_conforming_strings", "client_encoding", "DateStyle",
		"TimeZone", "integer_datetimes", "search_path", "IntervalStyle", "extra_float_digits", "lock_timeout",
		"bytea_output", "max_identifier_length", "server_encoding", "transaction_read_only", "default_transaction_read_only"} {
		cases = append(cases, sessionCase{sql: "SHOW " + s})
	}
	for _, tc := range cases {
		want := ask(ctx, pg, tc.sql, extended, tc.args...)
		got := ask(ctx, sh, tc.sql, extended, tc.args...)
		label := fmt.Sprintf("%s (extended %v)", tc.sql, extended)
		switch {
		case want.other != nil:
			t.Fatalf("%s: PostgreSQL: %v", label, want.other)
		case (want.err == nil) != (got.err == nil) || got.other != nil:
			t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", label, want, got)
		case want.err != nil:
			if want.err.Code != got.err.Code || want.err.Message != got.err.Message {
				t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", label, want, got)
			}
		case fmt.Sprint(want.names, want.oids) != fmt.Sprint(got.names, got.oids):
			t.Errorf("%s: columns\n  PostgreSQL: %v %v\n  shepherd:   %v %v", label, want.names, want.oids, got.names, got.oids)
		case tc.check != nil:
			if err := tc.check(want, facts(pg)); err != nil {
				t.Errorf("%s: PostgreSQL itself: %v", label, err)
			}
			if err := tc.check(got, facts(sh)); err != nil {
				t.Errorf("%s: shepherd: %v", label, err)
			}
		case fmt.Sprint(want.rows) != fmt.Sprint(got.rows):
			t.Errorf("%s: rows\n  PostgreSQL: %q\n  shepherd:   %q", label, want.rows, got.rows)
		}
	}
}

// TestSessionStatementsAsPostgres runs, on PostgreSQL 15 and through
// shepherd, sequences of statements whose effect lasts beyond one
// statement: settings undone by ROLLBACK, SET LOCAL, DISCARD ALL inside a
// block, asyncpg's pool reset string, DEALLOCATE of protocol-level
// prepared statements (psycopg 3 sends DEALLOCATE ALL on rollback after
// auto-preparing, then prepares again under the same names), session
// functions inside statements the replicas run.
func TestSessionStatementsAsPostgres(t *testing.T) {
	ctx := context.Background()
	pgDSN := testenv.Postgres(t)
	for name, setup := range sessionSetups(t) {
		t.Run(name, func(t *testing.T) {
			addr, _ := start(t, setup(t))
			pg, err := pgx.Connect(ctx, pgDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer pg.Close(ctx)
			sh := connect(t, addr, "app")
			// Each step runs in the simple protocol as one query string;
			// the answer compared is the last statement's.
			steps := []string{
				"DROP TABLE IF EXISTS who",
				"CREATE TABLE who (id int PRIMARY KEY, u text, d text, s text, v text)",
				"INSERT INTO who VALUES (1, current_user, current_database(), current_setting('search_path'), version())",
				"SELECT count(*) FROM who WHERE u = current_user AND d = current_database() AND s = '\"$user\", public' AND v = version()",
				"SELECT current_schema() || '.x' AS q",
				"SELECT current_user = u AS mine, current_setting('DateStyle') AS ds, id FROM who",
				"SELECT current_user AS cu, session_user, current_database() AS db, pg_backend_pid() AS p, version() AS v, inet_server_port() AS port, txid_current() AS x FROM who WHERE id < 0",
				"UPDATE who SET s = current_setting('DateStyle') WHERE u = current_user",
				"SELECT s FROM who",
				"BEGIN; SET search_path = b; SHOW search_path",
				"ROLLBACK; SHOW search_path",
				"BEGIN; SET LOCAL search_path = c; SHOW search_path",
				"SET search_path = d; SHOW search_path",
				"COMMIT; SHOW search_path",
				"BEGIN; SET search_path = e; COMMIT; SHOW search_path",
				"BEGIN; SELECT set_config('search_path', 'f', true); SHOW search_path",
				"COMMIT; SHOW search_path",
				"RESET search_path; SHOW search_path",
				"BEGIN; DISCARD ALL",
				"ROLLBACK",
				"SELECT 1; DISCARD ALL",
				"SELECT pg_advisory_lock(77); SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL;",
				"SELECT pg_advisory_unlock(77)",
				"SET application_name = 'reset me'; RESET ALL; SHOW application_name",
				"BEGIN; SELECT pg_advisory_xact_lock(8); SELECT pg_advisory_unlock(8)",
				"COMMIT",
				"BEGIN; SELECT current_setting('nope')",
				"SHOW search_path",
				"ROLLBACK",
				"BEGIN ISOLATION LEVEL REPEATABLE READ; SHOW transaction_isolation",
				"COMMIT",
				"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY; SHOW transaction_read_only",
				"SHOW default_transaction_read_only",
				"BEGIN; SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; ROLLBACK; SHOW default_transaction_read_only",
				"RESET default_transaction_read_only; SHOW default_transaction_read_only",
				// Cursors: DECLARE, FETCH and MOVE in every direction, NO SCROLL,
				// WITH HOLD, CLOSE, and the end of their transaction.
				`DROP TABLE IF EXISTS cur`,
				`CREATE TABLE cur (id int PRIMARY KEY, s text)`,
				`INSERT INTO cur VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e')`,
				`DECLARE c CURSOR FOR SELECT id, s FROM cur ORDER BY id`,
				`BEGIN`,
				`DECLARE c SCROLL CURSOR FOR SELECT id, s FROM cur ORDER BY id`,
				`FETCH c`,
				`FETCH 2 FROM c`,
				`FETCH NEXT IN c`,
				`FETCH PRIOR c`,
				`FETCH 0 c`,
				`FETCH RELATIVE 0 c`,
				`MOVE 0 c`,
				`FETCH ABSOLUTE 2 c`,
				`FETCH ABSOLUTE -1 c`,
				`FETCH LAST c`,
				`FETCH FIRST c`,
				`FETCH BACKWARD 2 c`,
				`FETCH ALL c`,
				`FETCH c`,
				`FETCH BACKWARD ALL c`,
				`MOVE FORWARD ALL c`,
				`MOVE BACKWARD ALL c`,
				`MOVE RELATIVE 3 c`,
				`FETCH RELATIVE -2 c`,
				`FETCH -1 c`,
				`FETCH ABSOLUTE 10 c`,
				`FETCH ABSOLUTE 0 c`,
				`FETCH RELATIVE 7 c`,
				`FETCH ABSOLUTE 6 c`,
				`MOVE BACKWARD ALL c`,
				`FETCH FORWARD ALL c`,
				`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM cur ORDER BY id`,
				`FETCH 2 n`,
				`FETCH ABSOLUTE 4 n`,
				`FETCH PRIOR n`,
				`ROLLBACK`,
				`BEGIN`,
				`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM cur ORDER BY id`,
				`FETCH ABSOLUTE 1 n`,
				`FETCH ABSOLUTE 1 n`,
				`ROLLBACK`,
				`BEGIN`,
				`DECLARE h CURSOR WITH HOLD FOR SELECT id FROM cur WHERE id > 3 ORDER BY id`,
				`DECLARE w CURSOR WITHOUT HOLD FOR SELECT id FROM cur ORDER BY id`,
				`COMMIT`,
				`FETCH h`,
				`FETCH w`,
				`CLOSE h`,
				`FETCH h`,
				`CLOSE h`,
				`DECLARE h2 CURSOR WITH HOLD FOR SELECT count(*) FROM cur`,
				`FETCH ALL h2`,
				`BEGIN`,
				`DECLARE r CURSOR WITH HOLD FOR SELECT 1 AS one`,
				`ROLLBACK`,
				`FETCH r`,
				`CLOSE ALL`,
				`FETCH h2`,
				`BEGIN`,
				`DECLARE p CURSOR FOR SELECT id FROM cur WHERE id < 3 ORDER BY id`,
				`UPDATE cur SET s = 'z' WHERE id = 1`,
				`DECLARE q CURSOR FOR SELECT s FROM cur WHERE id = 1`,
				`FETCH ALL p`,
				`FETCH ALL q`,
				`CLOSE p`,
				`FETCH p`,
				`ROLLBACK`,
				// Django's TestCase: every constraint is immediate.
				"BEGIN; SET CONSTRAINTS ALL IMMEDIATE",
				"SET CONSTRAINTS ALL DEFERRED",
				"COMMIT",
				"DECLARE x CURSOR WITH HOLD FOR SELECT id FROM cur FOR UPDATE",
				"BEGIN; DECLARE x SCROLL CURSOR FOR SELECT id FROM cur FOR UPDATE",
				"ROLLBACK",
				"BEGIN; DECLARE x CURSOR FOR SELECT id FROM cur ORDER BY id FOR UPDATE; FETCH 2 x",
				"ROLLBACK",
				"SELECT pg_sleep(0) FROM who",
				"SELECT pg_advisory_lock(id) FROM who",
			}
			for _, q := range steps {
				want := lastAnswer(ctx, pg, q)
				got := lastAnswer(ctx, sh, q)
				if strings.HasPrefix(q, "SELECT pg_sleep(0) FROM") || strings.HasPrefix(q, "SELECT pg_advisory_lock(id) FROM") {
					// shepherd refuses a state-changing function inside a
					// statement replicas run, clearly.
					if got.err == nil || got.err.Code != "0A000" {
						t.Errorf("%s: shepherd %v, want 0A000", q, got)
					}
					continue
				}
				if want.String() != got.String() {
					t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", q, want, got)
				}
			}

			// Settings that would change how values are written or read
			// are refused where shepherd could not follow them (it
			// formats every answer itself), rather than taken and not
			// honoured; the setting stays as it was.
			for _, q := range []string{
				"SET DateStyle = 'SQL, DMY'", "SET DateStyle = 'German'", "SET IntervalStyle = 'iso_8601'",
				"SET bytea_output = 'escape'", "SET standard_conforming_strings = off", "SET TIME ZONE 'Europe/Paris'",
				"SET client_encoding = 'LATIN1'", "SET ROLE someone_else", "SET SESSION AUTHORIZATION someone_else",
			} {
				if got := lastAnswer(ctx, sh, q); got.err == nil || got.err.Code != "0A000" {
					t.Errorf("%s: %v, want 0A000", q, got)
				}
			}
			// No replica receives a SELECT of session functions.
			if got := lastAnswer(ctx, sh, "EXPLAIN (SHEPHERD) SELECT version(), current_user"); got.err != nil || len(got.rows) != 0 {
				t.Errorf("EXPLAIN (SHEPHERD) SELECT version(): %v, want no rows", got)
			}
			if got := lastAnswer(ctx, sh, "SELECT current_setting('DateStyle'), current_setting('bytea_output'), current_setting('TimeZone')"); fmt.Sprint(got.rows) != "[[ISO, MDY hex UTC]]" {
				t.Errorf("settings after refusals: %v", got)
			}

			// PostgreSQL 15's reported parameters are all reported at
			// startup, and follow SET, ROLLBACK and RESET
			// (ParameterStatus before ReadyForQuery).
			for _, p := range []string{"application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
				"in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser", "server_encoding", "server_version",
				"session_authorization", "standard_conforming_strings", "TimeZone"} {
				if sh.PgConn().ParameterStatus(p) == "" && p != "application_name" {
					t.Errorf("%s not reported at startup", p)
				}
			}
			for _, q := range []string{
				"SET application_name = 'x1'",
				"BEGIN; SET application_name = 'x2'",
				"ROLLBACK",
				"SELECT set_config('application_name', 'x3', false)",
				"SET DateStyle = 'iso, mdy'",
				"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
				"BEGIN; SET default_transaction_read_only = off",
				"ROLLBACK",
				"RESET ALL",
			} {
				lastAnswer(ctx, pg, q)
				lastAnswer(ctx, sh, q)
				for _, p := range []string{"application_name", "DateStyle", "default_transaction_read_only", "in_hot_standby"} {
					if w, g := pg.PgConn().ParameterStatus(p), sh.PgConn().ParameterStatus(p); w != g {
						t.Errorf("after %s: %s reported %q, PostgreSQL %q", q, p, g, w)
					}
				}
			}

			// Protocol-level prepared statements, as psycopg 3 uses them.
			for _, c := range []*pgx.Conn{pg, sh} {
				label := "PostgreSQL"
				if c == sh {
					label = "shepherd"
				}
				if _, err := c.Prepare(ctx, "_pg3_0", "SELECT 1"); err != nil {
					t.Fatalf("%s: prepare: %v", label, err)
				}
				if _, err := c.Exec(ctx, "DEALLOCATE ALL", pgx.QueryExecModeExec); err != nil {
					t.Fatalf("%s: DEALLOCATE ALL: %v", label, err)
				}
				c.PgConn().Exec(ctx, "SELECT 1").Close() // pgx forgets nothing by itself; check the server's side
				if _, err := c.PgConn().Prepare(ctx, "_pg3_0", "SELECT 2", nil); err != nil {
					t.Errorf("%s: preparing again after DEALLOCATE ALL: %v", label, err)
				}
				if _, err := c.Exec(ctx, "DEALLOCATE _pg3_0", pgx.QueryExecModeSimpleProtocol); err != nil {
					t.Errorf("%s: DEALLOCATE _pg3_0: %v", label, err)
				}
				_, err := c.Exec(ctx, "DEALLOCATE _pg3_0", pgx.QueryExecModeSimpleProtocol)
				if pe := pgError(err); pe == nil || pe.Code != "26000" {
					t.Errorf("%s: DEALLOCATE of a deallocated statement: %v, want 26000", label, err)
				}
			}
		})
	}
}

// lastAnswer runs q as one simple query string and returns its last
// statement's answer (or the error).
func lastAnswer(ctx context.Context, c *pgx.Conn, q string) answerOf {
	results, err := c.PgConn().Exec(ctx, q).ReadAll()
	var out answerOf
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			out.err = pe
		} else {
			out.other = err
		}
		return out
	}
	if len(results) == 0 {
		return out
	}
	r := results[len(results)-1]
	for _, f := range r.FieldDescriptions {
		out.names = append(out.names, f.Name)
		out.oids = append(out.oids, f.DataTypeOID)
	}
	for _, row := range r.Rows {
		var vals []string
		for _, v := range row {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, string(v))
			}
		}
		out.rows = append(out.rows, vals)
	}
	out.names = append(out.names, r.CommandTag.String())
	return out
}

// TestAdvisoryLocksAsPostgres: advisory locks taken through different
// sessions exclude each other as in PostgreSQL, whichever replica
// answers: a held lock is not granted to another session (try: false), a
// waiting pg_advisory_lock is cancellable (57014) and granted once the
// holder lets go, transaction locks go at COMMIT, a session's locks go
// when it ends, and a cycle of waits is a deadlock (40P01) for one of
// them, after which the other is granted once the victim lets go.
func TestAdvisoryLocksAsPostgres(t *testing.T) {
	ctx := context.Background()
	pgDSN := testenv.Postgres(t)
	targets := map[string]func(t *testing.T) func() *pgx.Conn{
		"postgres": func(t *testing.T) func() *pgx.Conn {
			return func() *pgx.Conn {
				c, err := pgx.Connect(ctx, pgDSN)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close(ctx) })
				return c
			}
		},
		"shepherd": func(t *testing.T) func() *pgx.Conn {
			addr, _ := start(t, embedded(t))
			return func() *pgx.Conn { return connect(t, addr, "app") }
		},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			open := target(t)
			a, b := open(), open()
			try := func(c *pgx.Conn, key int) bool {
				t.Helper()
				var got bool
				if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
					t.Fatal(err)
				}
				return got
			}
			mustExec(t, a, "SELECT pg_advisory_lock(1)")
			if try(b, 1) {
				t.Fatal("b got lock 1, which a holds")
			}
			// A waiting lock is cancelled with the statement.
			wait, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := b.Exec(wait, "SELECT pg_advisory_lock(1)")
				done <- err
			}()
			cancel()
			if err := <-done; err == nil {
				t.Fatal("b's wait for lock 1 ended without error on cancel")
			}
			b = open() // pgx closes a connection whose statement was cancelled by context
			// Granted once the holder lets go.
			go func() {
				_, err := b.Exec(ctx, "SELECT pg_advisory_lock(1)")
				done <- err
			}()
			mustExec(t, a, "SELECT pg_advisory_unlock(1)")
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if try(a, 1) {
				t.Fatal("a got lock 1, which b holds")
			}
			mustExec(t, b, "SELECT pg_advisory_unlock_all()")

			// Shared locks share; exclusive excludes them.
			mustExec(t, a, "SELECT pg_advisory_lock_shared(2)")
			var got bool
			if err := b.QueryRow(ctx, "SELECT pg_try_advisory_lock_shared(2)").Scan(&got); err != nil || !got {
				t.Fatalf("b's shared lock 2: %v %v", got, err)
			}
			if try(b, 2) {
				t.Fatal("b got lock 2 exclusively while a shares it")
			}
			mustExec(t, a, "SELECT pg_advisory_unlock_all()")
			mustExec(t, b, "SELECT pg_advisory_unlock_all()")

			// Transaction locks last until COMMIT.
			mustExec(t, a, "BEGIN")
			mustExec(t, a, "SELECT pg_advisory_xact_lock(3)")
			if try(b, 3) {
				t.Fatal("b got lock 3 inside a's transaction")
			}
			mustExec(t, a, "COMMIT")
			if !try(b, 3) {
				t.Fatal("lock 3 still held after a's COMMIT")
			}
			// A session's locks go with it.
			c := open()
			mustExec(t, c, "SELECT pg_advisory_lock(4)")
			if try(b, 4) {
				t.Fatal("b got lock 4, which c holds")
			}
			c.Close(ctx)
			deadline := time.Now().Add(30 * time.Second)
			for !try(b, 4) {
				// The server notices the closed connection on its own
				// time; PostgreSQL too.
				if time.Now().After(deadline) {
					t.Fatal("lock 4 still held 30s after its session ended")
				}
				mustExec(t, b, "SELECT pg_sleep(0.01)")
			}
			mustExec(t, b, "SELECT pg_advisory_unlock_all()")

			// pg_sleep ends with 57014 on a CancelRequest; a cancel that
			// comes before the sleep began is lost (PostgreSQL's rule
			// too), so it is sent until the sleep ends.
			slept := make(chan error, 1)
			go func() { _, err := b.Exec(ctx, "SELECT pg_sleep(60)"); slept <- err }()
			deadline = time.Now().Add(30 * time.Second)
		sleeping:
			for {
				select {
				case err := <-slept:
					if sqlstate(err) != "57014" {
						t.Fatalf("cancelled pg_sleep: %v, want 57014", err)
					}
					break sleeping
				case <-time.After(20 * time.Millisecond):
					if time.Now().After(deadline) {
						t.Fatal("pg_sleep(60) not cancelled in 30s")
					}
					if err := b.PgConn().CancelRequest(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}

			// A deadlock: one of the two is refused with 40P01.
			mustExec(t, a, "SELECT pg_advisory_lock(10)")
			mustExec(t, b, "SELECT pg_advisory_lock(11)")
			type end struct {
				who string
				err error
			}
			ends := make(chan end, 2)
			go func() { _, err := b.Exec(ctx, "SELECT pg_advisory_lock(10)"); ends <- end{"b", err} }()
			go func() { _, err := a.Exec(ctx, "SELECT pg_advisory_lock(11)"); ends <- end{"a", err} }()
			first := <-ends
			if sqlstate(first.err) != "40P01" {
				t.Fatalf("first to end of a deadlocked pair (%s): %v, want 40P01", first.who, first.err)
			}
			// The victim still holds its own lock; letting go of it
			// grants the other's wait.
			if first.who == "a" {
				mustExec(t, a, "SELECT pg_advisory_unlock(10)")
			} else {
				mustExec(t, b, "SELECT pg_advisory_unlock(11)")
			}
			if second := <-ends; second.err != nil {
				t.Fatalf("the survivor of the deadlock (%s): %v", second.who, second.err)
			}
		})
	}
}

// shepherdSettings are the parameters whose values are shepherd's, not a
// stock PostgreSQL's: its version, the serializable isolation it gives
// every transaction, the user it presents (not a superuser), and the
// server's files and addresses, which a client of shepherd has no use
// for.
var shepherdSettings = map[string]bool{
	"server_version": true, "server_version_num": true, "is_superuser": true,
	"transaction_isolation": true, "default_transaction_isolation": true, "application_name": true,
	"port": true, "listen_addresses": true, "unix_socket_directories": true, "data_directory": true,
	"config_file": true, "hba_file": true, "ident_file": true, "krb_server_keyfile": true,
	// testenv's server settings (postgres -c ...), not PostgreSQL's defaults.
	"fsync": true, "full_page_writes": true, "max_connections": true, "logging_collector": true,
	"log_timezone": true, "synchronous_commit": true, "shared_memory_size": true, "shared_memory_size_in_huge_pages": true,
}

// TestShowAllAsPostgres compares SHOW ALL through shepherd with
// PostgreSQL 15's: the same parameters (SET and SHOW know the same names
// as PostgreSQL), in the same order, with the same descriptions and, but
// for shepherdSettings, the same values.
func TestShowAllAsPostgres(t *testing.T) {
	ctx := context.Background()
	pg, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	addr, _ := start(t, embedded(t))
	sh := connect(t, addr, "app")
	// psql's and pgx's own startup settings aside: both connections are
	// pgx's, with the same startup packet.
	want := ask(ctx, pg, "SHOW ALL", false)
	got := ask(ctx, sh, "SHOW ALL", false)
	if want.err != nil || got.err != nil || want.other != nil || got.other != nil {
		t.Fatalf("SHOW ALL: PostgreSQL %v; shepherd %v", want, got)
	}
	if fmt.Sprint(want.names, want.oids) != fmt.Sprint(got.names, got.oids) {
		t.Errorf("columns: PostgreSQL %v %v, shepherd %v %v", want.names, want.oids, got.names, got.oids)
	}
	var wantNames, gotNames []string
	for _, r := range want.rows {
		wantNames = append(wantNames, r[0])
	}
	for _, r := range got.rows {
		gotNames = append(gotNames, r[0])
	}
	if strings.Join(wantNames, " ") != strings.Join(gotNames, " ") {
		t.Fatalf("parameters:\n  PostgreSQL: %v\n  shepherd:   %v", wantNames, gotNames)
	}
	for i, w := range want.rows {
		g := got.rows[i]
		if w[2] != g[2] {
			t.Errorf("%s: description %q, PostgreSQL's %q", w[0], g[2], w[2])
		}
		if w[1] != g[1] && !shepherdSettings[strings.ToLower(w[0])] {
			t.Errorf("%s = %q, PostgreSQL's %q", w[0], g[1], w[1])
		}
	}
}

// TestPythonClientSessions runs testdata/clients/sessions.py (asyncpg's
// pool reset, psycopg 3's DEALLOCATE ALL after auto-prepared statements,
// server-side cursors of psycopg 3 and psycopg2, advisory locks, SET
// LOCAL, version parsing) against PostgreSQL 15 and
// through shepherd, on the embedded default and a cbs cluster. It needs
// a Python with asyncpg, psycopg 3 and psycopg2: $SHEPHERD_PYTHON, else
// python3 (python3 -m venv v && v/bin/pip install asyncpg 'psycopg[binary]'
// psycopg2-binary).
func TestPythonClientSessions(t *testing.T) {
	python := os.Getenv("SHEPHERD_PYTHON")
	if python == "" {
		python = "python3"
	}
	if out, err := exec.Command(python, "-c", "import asyncpg, psycopg, psycopg2").CombinedOutput(); err != nil {
		t.Skipf("%s has no asyncpg, psycopg 3 and psycopg2 (set SHEPHERD_PYTHON): %v %s", python, err, out)
	}
	run := func(t *testing.T, dsn string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, python, "testdata/clients/sessions.py", dsn).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("sessions.py: %v\n%s", err, out)
		}
	}
	t.Run("postgres", func(t *testing.T) { run(t, testenv.Postgres(t)) })
	for name, setup := range sessionSetups(t) {
		t.Run(name, func(t *testing.T) {
			addr, _ := start(t, setup(t))
			run(t, fmt.Sprintf("postgresql://app@%s/app", addr))
		})
	}
}
