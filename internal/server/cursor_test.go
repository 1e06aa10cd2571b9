package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// cursorSteps are DECLARE / FETCH / MOVE / CLOSE sequences whose every
// answer (rows, column names and types, command tag, SQLSTATE and
// message) must be PostgreSQL 15's: the edges of every direction on
// SCROLL, NO SCROLL and default cursors, empty cursors, counts beyond
// either end, negative counts, the errors, and how transactions end
// cursors.
var cursorSteps = []string{
	`DROP TABLE IF EXISTS curs`,
	`CREATE TABLE curs (id int PRIMARY KEY, s text, n numeric(6,2), b boolean, t timestamp)`,
	`INSERT INTO curs VALUES (1,'a',1.5,true,'2024-01-02 03:04:05'),(2,'b',NULL,false,NULL),(3,'c',3.25,NULL,'1999-12-31 23:59:59'),(4,'d',-4,true,'2000-02-29 00:00:00'),(5,NULL,0,false,'2024-06-30 12:00:00')`,
	// Errors outside and inside a block.
	`DECLARE c CURSOR WITHOUT HOLD FOR SELECT id FROM curs`,
	`FETCH c`,
	`FETCH NEXT FROM nosuch`,
	`MOVE nosuch`,
	`CLOSE nosuch`,
	`BEGIN`,
	`DECLARE c CURSOR FOR SELECT * FROM curs ORDER BY id`,
	`DECLARE c CURSOR FOR SELECT 1`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE c CURSOR FOR SELECT * FROM curs ORDER BY id`,
	`FETCH nosuch`,
	`FETCH c`,
	`COMMIT`,
	`FETCH c`,
	// Every direction, counts beyond the ends, negative counts.
	`BEGIN`,
	`DECLARE c SCROLL CURSOR FOR SELECT * FROM curs ORDER BY id`,
	`MOVE FORWARD 10 IN c`,
	`FETCH PRIOR c`,
	`MOVE BACKWARD 10 IN c`,
	`FETCH NEXT c`,
	`FETCH FORWARD -1 c`,
	`FETCH BACKWARD -2 c`,
	`FETCH ABSOLUTE -10 c`,
	`FETCH NEXT c`,
	`FETCH ABSOLUTE -5 c`,
	`FETCH ABSOLUTE 5 c`,
	`FETCH ABSOLUTE 6 c`,
	`FETCH PRIOR c`,
	`FETCH RELATIVE 0 c`,
	`FETCH RELATIVE -10 c`,
	`FETCH RELATIVE 0 c`,
	`MOVE RELATIVE 0 c`,
	`MOVE ABSOLUTE 3 c`,
	`MOVE RELATIVE -1 c`,
	`FETCH 0 c`,
	`MOVE LAST c`,
	`MOVE FIRST c`,
	`MOVE NEXT c`,
	`MOVE PRIOR c`,
	`MOVE PRIOR c`,
	`MOVE ALL c`,
	`MOVE ALL c`,
	`FETCH ALL c`,
	`MOVE BACKWARD ALL c`,
	`MOVE BACKWARD ALL c`,
	`FETCH BACKWARD c`,
	`FETCH FORWARD c`,
	`FETCH FORWARD ALL c`,
	`FETCH BACKWARD ALL c`,
	`FETCH BACKWARD 0 c`,
	`MOVE FORWARD 0 c`,
	`FETCH 3 c`,
	`FETCH -2 c`,
	`MOVE -2 c`,
	`FETCH 2 c`,
	`MOVE ABSOLUTE 0 c`,
	`MOVE ABSOLUTE -1 c`,
	`MOVE ABSOLUTE 7 c`,
	`FETCH LAST c`,
	`CLOSE c`,
	`FETCH c`,
	`ROLLBACK`,
	// An empty cursor.
	`BEGIN`,
	`DECLARE e SCROLL CURSOR FOR SELECT id, s FROM curs WHERE id > 100`,
	`FETCH e`,
	`FETCH PRIOR e`,
	`FETCH LAST e`,
	`FETCH FIRST e`,
	`FETCH 0 e`,
	`MOVE ALL e`,
	`MOVE 0 e`,
	`FETCH ABSOLUTE 1 e`,
	`FETCH ABSOLUTE -1 e`,
	`FETCH ALL e`,
	`ROLLBACK`,
	// NO SCROLL: forward only.
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH ABSOLUTE 0 n`,
	`FETCH FIRST n`,
	`FETCH 0 n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`MOVE 0 n`,
	`FETCH RELATIVE 0 n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH FIRST n`,
	`FETCH ABSOLUTE 3 n`,
	`MOVE FORWARD 0 n`,
	`FETCH FORWARD 10 n`,
	`FETCH n`,
	`FETCH LAST n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH LAST n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`MOVE BACKWARD ALL n`,
	`FETCH BACKWARD 0 n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH 2 n`,
	`FETCH BACKWARD 0 n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH 2 n`,
	`FETCH -1 n`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH 2 n`,
	`MOVE ABSOLUTE 0 n`,
	`ROLLBACK`,
	// After an error the block is aborted: FETCH and CLOSE give 25P02.
	`BEGIN`,
	`DECLARE n NO SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH PRIOR n`,
	`FETCH n`,
	`CLOSE n`,
	`COMMIT`,
	`FETCH n`,
	// WITH HOLD outside a block, and across COMMIT; the others end.
	`DECLARE h1 SCROLL CURSOR WITH HOLD FOR SELECT id, s FROM curs ORDER BY id`,
	`UPDATE curs SET s = 'changed' WHERE id = 1`,
	`FETCH h1`,
	`FETCH ABSOLUTE 1 h1`,
	`BEGIN`,
	`FETCH h1`,
	`DECLARE h2 INSENSITIVE CURSOR WITH HOLD FOR SELECT s FROM curs WHERE id = 1`,
	`DECLARE w ASENSITIVE NO SCROLL CURSOR WITHOUT HOLD FOR SELECT s FROM curs WHERE id = 1`,
	`UPDATE curs SET s = 'again' WHERE id = 1`,
	`COMMIT`,
	`FETCH ALL h2`,
	`FETCH w`,
	`BEGIN`,
	`FETCH h1`,
	`ROLLBACK`,
	`FETCH h1`,
	`BEGIN`,
	`DECLARE h3 CURSOR WITH HOLD FOR SELECT 1 AS x`,
	`SELECT 1/0`,
	`ROLLBACK`,
	`FETCH h3`,
	`DECLARE h1 CURSOR WITH HOLD FOR SELECT 1`,
	// A held cursor whose FETCH fails, and one used in a block that
	// rolls back.
	`DECLARE f NO SCROLL CURSOR WITH HOLD FOR SELECT id FROM curs ORDER BY id`,
	`FETCH 2 f`,
	`FETCH PRIOR f`,
	`FETCH f`,
	`CLOSE f`,
	`FETCH f`,
	`DECLARE f2 SCROLL CURSOR WITH HOLD FOR SELECT id FROM curs ORDER BY id`,
	`FETCH 2 f2`,
	`BEGIN`,
	`FETCH f2`,
	`SELECT 1/0`,
	`ROLLBACK`,
	`FETCH f2`,
	`BEGIN`,
	`CLOSE f2`,
	`ROLLBACK`,
	`FETCH f2`,
	`CLOSE ALL`,
	`FETCH h1`,
	`FETCH h2`,
	`CLOSE ALL`,
	// Several statements in one query string form one implicit block.
	`DECLARE i CURSOR FOR SELECT id FROM curs ORDER BY id; FETCH 2 i`,
	`FETCH i`,
	`DECLARE i2 CURSOR WITH HOLD FOR SELECT id FROM curs ORDER BY id DESC; FETCH 2 i2`,
	`FETCH i2`,
	`CLOSE i2`,
	`DECLARE ih CURSOR WITH HOLD FOR SELECT 1 AS x; SELECT 1/0`,
	`FETCH ih`,
	`DECLARE ih CURSOR WITH HOLD FOR SELECT 1 AS x; SELECT 2`,
	`FETCH ih`,
	`CLOSE ih; BEGIN; DECLARE ih CURSOR FOR SELECT 3 AS y; FETCH ih; COMMIT; FETCH ih`,
	// Column names and types of expressions.
	`BEGIN`,
	`DECLARE x CURSOR FOR SELECT id + 1 AS next, upper(s), n * 2, count(*) OVER () AS total, NULL AS nothing FROM curs ORDER BY id`,
	`FETCH 2 x`,
	`MOVE 10 x`,
	`FETCH x`,
	`ROLLBACK`,
	// Default cursors: scrollable when PostgreSQL's plan can run
	// backward.
	`BEGIN`,
	`DECLARE d1 CURSOR FOR SELECT 1 AS one`,
	`FETCH d1`,
	`FETCH PRIOR d1`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d2 CURSOR FOR SELECT count(*) FROM curs`,
	`FETCH d2`,
	`FETCH PRIOR d2`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d3 CURSOR FOR VALUES (1), (2)`,
	`FETCH 2 d3`,
	`FETCH PRIOR d3`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d4 CURSOR FOR SELECT a.id FROM curs a JOIN curs b ON a.id = b.id`,
	`MOVE 2 d4`,
	`FETCH PRIOR d4`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d5 CURSOR FOR SELECT s, count(*) FROM curs GROUP BY s`,
	`MOVE 2 d5`,
	`FETCH PRIOR d5`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d6 CURSOR FOR SELECT id FROM curs WHERE id > 1`,
	`FETCH 2 d6`,
	`FETCH PRIOR d6`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d7 CURSOR FOR SELECT DISTINCT s FROM curs`,
	`MOVE 2 d7`,
	`FETCH PRIOR d7`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d8 CURSOR FOR SELECT id, sum(id) OVER (ORDER BY id) FROM curs`,
	`FETCH 2 d8`,
	`FETCH PRIOR d8`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d9 CURSOR FOR SELECT id FROM curs UNION ALL SELECT 7`,
	`MOVE 2 d9`,
	`FETCH PRIOR d9`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d10 CURSOR FOR SELECT id FROM curs ORDER BY s LIMIT 3`,
	`FETCH 2 d10`,
	`FETCH PRIOR d10`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d12 CURSOR FOR VALUES (1)`,
	`FETCH d12`,
	`FETCH PRIOR d12`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d13 CURSOR FOR SELECT id FROM curs WHERE id < 3 UNION ALL SELECT id FROM curs WHERE id > 3`,
	`MOVE 3 d13`,
	`MOVE PRIOR d13`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d14 CURSOR FOR SELECT id FROM curs UNION SELECT id FROM curs`,
	`MOVE 3 d14`,
	`MOVE PRIOR d14`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d15 CURSOR FOR SELECT id FROM curs ORDER BY id FOR UPDATE`,
	`FETCH 2 d15`,
	`FETCH PRIOR d15`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d16 CURSOR FOR SELECT a.id FROM curs a, curs b WHERE a.id = b.id AND a.id < 3`,
	`MOVE 2 d16`,
	`MOVE PRIOR d16`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d17 CURSOR FOR SELECT id, (SELECT count(*) FROM curs) FROM curs WHERE id < 3`,
	`MOVE 2 d17`,
	`MOVE PRIOR d17`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d18 SCROLL CURSOR FOR SELECT count(*) FROM curs`,
	`FETCH d18`,
	`FETCH PRIOR d18`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE d11 CURSOR WITH HOLD FOR SELECT count(*) FROM curs`,
	`COMMIT`,
	`FETCH d11`,
	`FETCH PRIOR d11`,
	`CLOSE d11`,
	// Names as PostgreSQL folds them; counts at the edges of the
	// grammar; what a cursor's query may not be.
	`BEGIN`,
	`DECLARE "Mixed" SCROLL CURSOR FOR SELECT id FROM curs ORDER BY id`,
	`FETCH mixed`,
	`FETCH "Mixed"`,
	`DECLARE MiXeD CURSOR FOR SELECT 2`,
	`FETCH MIXED`,
	`FETCH 2147483647 FROM "Mixed"`,
	`FETCH -2147483647 FROM "Mixed"`,
	`MOVE 2147483648 IN "Mixed"`,
	`MOVE ABSOLUTE -2147483648 IN "Mixed"`,
	`FETCH FORWARD 9223372036854775807 FROM "Mixed"`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE w CURSOR FOR WITH d AS (DELETE FROM curs WHERE id = 5 RETURNING id) SELECT id FROM d`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE w CURSOR FOR SELECT id INTO newtab FROM curs`,
	`ROLLBACK`,
	`DECLARE w CURSOR WITH HOLD FOR SELECT id FROM curs FOR SHARE`,
	`DECLARE w SCROLL CURSOR WITH HOLD FOR SELECT id FROM curs FOR NO KEY UPDATE`,
	`DECLARE w INSENSITIVE CURSOR WITH HOLD FOR SELECT id FROM curs FOR KEY SHARE`,
	`BEGIN`,
	`DECLARE w INSENSITIVE CURSOR FOR SELECT id FROM curs FOR UPDATE`,
	`ROLLBACK`,
	`BEGIN`,
	`DECLARE w CURSOR FOR INSERT INTO curs VALUES (9)`,
	`ROLLBACK`,
	`SELECT count(*) FROM curs`,
	// Other forms of the query.
	`BEGIN`,
	`DECLARE t1 CURSOR FOR TABLE curs`,
	`MOVE ALL t1`,
	`DECLARE t2 CURSOR FOR (SELECT id FROM curs ORDER BY id DESC LIMIT 2)`,
	`FETCH ALL t2`,
	`DECLARE t3 CURSOR FOR SELECT current_setting('DateStyle') AS ds, 1 + 1 AS two`,
	`FETCH ALL t3`,
	`DECLARE t4 SCROLL CURSOR FOR SELECT id, now() = now() AS same FROM curs WHERE id IN (SELECT id FROM curs WHERE id > 3) ORDER BY id`,
	`FETCH LAST t4`,
	`FETCH FIRST t4`,
	`ROLLBACK`,
	// psycopg2's named cursor.
	`BEGIN`,
	`DECLARE "c_1" CURSOR WITHOUT HOLD FOR SELECT id, s FROM curs ORDER BY id`,
	`FETCH FORWARD 2 FROM "c_1"`,
	`FETCH FORWARD 2 FROM "c_1"`,
	`FETCH FORWARD 2 FROM "c_1"`,
	`FETCH FORWARD 2 FROM "c_1"`,
	`MOVE ABSOLUTE 1 FROM "c_1"`,
	`FETCH FORWARD 1 FROM "c_1"`,
	`CLOSE "c_1"`,
	`COMMIT`,
}

// TestCursorsAsPostgres runs cursorSteps on PostgreSQL 15 and through
// shepherd (embedded default and a MariaDB + PostgreSQL + SQLite cbs
// cluster), each step as one simple query string, and compares the last
// statement's answer; then FETCH through the extended protocol (Parse,
// Describe, Bind, Execute) and a DECLARE whose query takes a parameter.
func TestCursorsAsPostgres(t *testing.T) {
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
			for _, q := range cursorSteps {
				want := lastAnswer(ctx, pg, q)
				got := lastAnswer(ctx, sh, q)
				if want.String() != got.String() {
					t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", q, want, got)
				}
			}
			// A known difference: shepherd runs the query at DECLARE,
			// so an error in the third row fails the DECLARE, where
			// PostgreSQL fails the FETCH that reaches the row. The
			// block fails either way.
			for _, q := range []string{"BEGIN", "DECLARE z CURSOR FOR SELECT 1/(id-3) FROM curs ORDER BY id", "FETCH z", "ROLLBACK"} {
				got := lastAnswer(ctx, sh, q)
				switch {
				case strings.HasPrefix(q, "DECLARE") && (got.err == nil || got.err.Code != "22012"):
					t.Errorf("%s: %v, want 22012", q, got)
				case strings.HasPrefix(q, "FETCH") && (got.err == nil || got.err.Code != "25P02"):
					t.Errorf("%s: %v, want 25P02", q, got)
				}
			}
			// A BINARY cursor answers FETCH in binary format in the
			// simple protocol: the formats and bytes are PostgreSQL's.
			for _, q := range []string{
				"BEGIN; DECLARE bc BINARY SCROLL CURSOR FOR SELECT id, s, n, b, t, id::bigint AS big, id::float8 / 4 AS f FROM curs ORDER BY id; FETCH 3 bc",
				"FETCH PRIOR bc",
				"MOVE LAST IN bc",
				"FETCH ALL bc",
				"ROLLBACK",
			} {
				want, got := rawAnswer(ctx, pg, q), rawAnswer(ctx, sh, q)
				if want != got {
					t.Errorf("%s:\n  PostgreSQL: %s\n  shepherd:   %s", q, want, got)
				}
			}
			// The extended protocol: DECLARE with a parameter, FETCH
			// and MOVE as prepared statements.
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{"BEGIN", nil},
				{"DECLARE p SCROLL CURSOR FOR SELECT id, s FROM curs WHERE id > $1 ORDER BY id", []any{1}},
				{"FETCH 2 FROM p", nil},
				{"FETCH PRIOR p", nil},
				{"MOVE LAST IN p", nil},
				{"FETCH BACKWARD ALL p", nil},
				{"FETCH nosuch", nil},
				{"ROLLBACK", nil},
				{"DECLARE p CURSOR WITH HOLD FOR SELECT n, t, b FROM curs WHERE id <= $1 ORDER BY id", []any{3}},
				{"FETCH ALL p", nil},
				{"CLOSE p", nil},
				{"CLOSE p", nil},
			} {
				want := ask(ctx, pg, q.sql, true, q.args...)
				got := ask(ctx, sh, q.sql, true, q.args...)
				if want.String() != got.String() {
					t.Errorf("extended %s %v:\n  PostgreSQL: %v\n  shepherd:   %v", q.sql, q.args, want, got)
				}
			}
			for _, c := range []*pgx.Conn{pg, sh} {
				c.PgConn().Exec(ctx, "ROLLBACK; CLOSE ALL").ReadAll()
			}
			// A FETCH prepared before its cursor exists is described as
			// returning nothing (PostgreSQL looks the cursor up at
			// Describe, and leaves a missing one to Execute).
			prepared := func(c *pgx.Conn) string {
				sd, err := c.PgConn().Prepare(ctx, "later_fetch", "FETCH 2 FROM later", nil)
				if err != nil {
					return "prepare: " + err.Error()
				}
				defer func() { c.PgConn().Exec(ctx, "DEALLOCATE later_fetch; ROLLBACK").ReadAll() }()
				out := fmt.Sprintf("fields %d; ", len(sd.Fields))
				r := c.PgConn().ExecPrepared(ctx, "later_fetch", nil, nil, nil).Read()
				out += fmt.Sprintf("before DECLARE: %v %s; ", r.Err, r.CommandTag)
				c.PgConn().Exec(ctx, "BEGIN; DECLARE later CURSOR FOR SELECT id FROM curs ORDER BY id").ReadAll()
				r = c.PgConn().ExecPrepared(ctx, "later_fetch", nil, nil, nil).Read()
				return out + fmt.Sprintf("after: %v %q %s", r.Err, r.Rows, r.CommandTag)
			}
			pg2, err := pgx.Connect(ctx, pgDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer pg2.Close(ctx)
			if want, got := prepared(pg2), prepared(connect(t, addr, "app")); want != got {
				t.Errorf("FETCH prepared before DECLARE:\n  PostgreSQL: %s\n  shepherd:   %s", want, got)
			}
		})
	}
}

// rawAnswer runs q as one simple query string and prints its last
// statement's answer as the wire carried it: each column's name, type and
// format, each value's bytes, the command tag, or the error.
func rawAnswer(ctx context.Context, c *pgx.Conn, q string) string {
	results, err := c.PgConn().Exec(ctx, q).ReadAll()
	if err != nil {
		if pe := pgError(err); pe != nil {
			return "ERROR " + pe.Code + ": " + pe.Message
		}
		return "error " + err.Error()
	}
	if len(results) == 0 {
		return ""
	}
	r := results[len(results)-1]
	var b strings.Builder
	for _, f := range r.FieldDescriptions {
		fmt.Fprintf(&b, "%s %d/%d; ", f.Name, f.DataTypeOID, f.Format)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "%x ", row)
	}
	return b.String() + r.CommandTag.String()
}

// TestPythonCursors runs testdata/clients/cursors.py (psycopg2's named
// cursors: iteration, fetchmany, scroll, SCROLL and NO SCROLL, WITH HOLD;
// psycopg 3's server-side cursors, binary too, and SQLAlchemy's
// stream_results when installed) against PostgreSQL 15 and through
// shepherd (the embedded default and a cbs cluster); the printed
// observations must be the same. It needs psycopg2 for $SHEPHERD_PYTHON
// (python3 by default; PYTHONPATH may point at a pip --target directory).
func TestPythonCursors(t *testing.T) {
	python := os.Getenv("SHEPHERD_PYTHON")
	if python == "" {
		python = "python3"
	}
	if out, err := exec.Command(python, "-c", "import psycopg2").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import psycopg2 (pip install psycopg2-binary, then set PYTHONPATH or SHEPHERD_PYTHON): %v %s", python, err, out)
	}
	run := func(t *testing.T, dsn string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, python, "testdata/clients/cursors.py", dsn).CombinedOutput()
		if err != nil {
			t.Fatalf("cursors.py: %v\n%s", err, out)
		}
		return string(out)
	}
	want := run(t, testenv.Postgres(t))
	if !strings.Contains(want, "'iter'") {
		t.Fatalf("cursors.py printed no psycopg2 observations: %s", want)
	}
	t.Logf("PostgreSQL 15:\n%s", want)
	for name, setup := range sessionSetups(t) {
		t.Run(name, func(t *testing.T) {
			addr, _ := start(t, setup(t))
			got := run(t, fmt.Sprintf("postgresql://app@%s/app", addr))
			if got != want {
				wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
				for i := 0; i < max(len(wl), len(gl)); i++ {
					var w, g string
					if i < len(wl) {
						w = wl[i]
					}
					if i < len(gl) {
						g = gl[i]
					}
					if w != g {
						t.Errorf("line %d:\n  PostgreSQL: %s\n  shepherd:   %s", i+1, w, g)
					}
				}
			}
		})
	}
}

// TestCursorMemoryConfigured: cursor_memory_mb bounds what a session's
// cursors keep: a DECLARE over more fails with 54000 naming the cursor,
// and the session goes on (the block fails as after any error).
func TestCursorMemoryConfigured(t *testing.T) {
	ctx := context.Background()
	cfg := embedded(t)
	cfg.CursorMemoryMB = 1
	addr, _ := start(t, cfg)
	sh := connect(t, addr, "app")
	big := strings.Repeat("x", 100<<10)
	for _, q := range []string{
		"DROP TABLE IF EXISTS bigrows",
		"CREATE TABLE bigrows (id int PRIMARY KEY, s text)",
	} {
		if got := lastAnswer(ctx, sh, q); got.err != nil || got.other != nil {
			t.Fatalf("%s: %v", q, got)
		}
	}
	for i := 1; i <= 12; i++ {
		if _, err := sh.Exec(ctx, "INSERT INTO bigrows VALUES ($1, $2)", i, big); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct{ sql, want string }{
		{"BEGIN", ""},
		{"DECLARE small CURSOR FOR SELECT id, s FROM bigrows WHERE id <= 5", ""},
		{"DECLARE large CURSOR FOR SELECT id, s FROM bigrows WHERE id > 5", "54000"},
		{"FETCH small", "25P02"},
		{"ROLLBACK", ""},
		{"BEGIN", ""},
		{"DECLARE large CURSOR FOR SELECT id, s FROM bigrows WHERE id > 5", ""},
		{"MOVE ALL large", ""},
		{"COMMIT", ""},
	}
	for _, s := range steps {
		got := lastAnswer(ctx, sh, s.sql)
		code := ""
		if got.err != nil {
			code = got.err.Code
			if code == "54000" && !strings.Contains(got.err.Message, `cursor "large"`) {
				t.Errorf("%s: %q does not name the cursor", s.sql, got.err.Message)
			}
		} else if got.other != nil {
			t.Fatalf("%s: %v", s.sql, got.other)
		}
		if code != s.want {
			t.Errorf("%s: SQLSTATE %q (%d rows), want %q", s.sql, code, len(got.rows), s.want)
		}
	}
}
