package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// copyTable is the table the COPY tests fill, one column of each family.
const copyTable = `CREATE TABLE ct (id serial PRIMARY KEY, a int, b text, c numeric(8,2), d date, e bool,
	f bytea, g timestamptz, h float8, u uuid, v varchar(10))`

// copyColumns are ct's columns but the generated key, whose values differ
// after a failed COPY (PostgreSQL consumed keys for the rows it read).
const copyColumns = "a, b, c, d, e, f, g, h, u, v"

// copyStep is one statement of a COPY script: a COPY FROM sends in as its
// data, a COPY TO returns its output, anything else runs as is.
type copyStep struct {
	sql string
	in  string
}

// copySteps exercise COPY FROM and TO in text, CSV and binary, with their
// options and errors, as clients send them.
var copySteps = []copyStep{
	{sql: copyTable},
	// Text: escapes, NULL, every type, a value of "\." (not the end).
	{sql: "COPY ct (" + copyColumns + ") FROM STDIN", in: "1\thello\t1.5\t2020-01-02\tt\t\\\\x0102ff\t2020-01-02 03:04:05+02\t1.5\ta0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\tshort\n" +
		"2\ttab\\there\\nnew \\\\ back\\x41\\101\t-3\t1999-12-31\tf\t\\N\t2000-01-01 00:00:00+00\t-0.25\t\\N\t\\N\n" +
		"\\N\t\\\\.\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\n"},
	// Defaults and SERIAL filled as INSERT fills them; the end marker.
	{sql: "COPY ct (a) FROM STDIN", in: "3\n4\n\\.\n"},
	{sql: "COPY ct (a, b) FROM STDIN WITH (DELIMITER '|', NULL 'nil')", in: "5|x|y\n"},
	{sql: "COPY ct (a, b) FROM STDIN WITH (DELIMITER '|', NULL 'nil')", in: "5|nil\n6|a\\|b\n"},
	// CSV with its options, a quoted line break, the old syntax.
	{sql: "COPY ct (a, b, v) FROM STDIN (FORMAT csv, HEADER, DELIMITER ';', NULL 'NA', FORCE_NULL (v))",
		in: "a;b;v\n10;\"semi;colon\";x\n11;\"multi\nline\";NA\n12;\"\";\"\"\n13;NA;\"NA\"\n14;\"quote \"\"inside\"\"\";y\n"},
	{sql: "COPY ct (a, b) FROM STDIN WITH CSV", in: "20,\n21,\"\"\r\n"},
	{sql: "COPY ct (a, b) FROM STDIN (FORMAT csv, HEADER match)", in: "a,b\n22,z\n"},
	{sql: "COPY ct (a, b) FROM STDIN (FORMAT csv, HEADER match)", in: "a,c\n23,z\n"},
	{sql: "COPY ct (a, b) FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\\', FORCE_NOT_NULL (b))", in: "24,'it\\'s'\n25,\n"},
	// Bad data: PostgreSQL's error and CONTEXT, and nothing written.
	{sql: "COPY ct (a, b) FROM STDIN", in: "30\tok\nx\tfoo\n"},
	{sql: "COPY ct (a, b) FROM STDIN", in: "31\tok\n32\n"},
	{sql: "COPY ct (a, b) FROM STDIN", in: "33\tb\tc\n"},
	{sql: "COPY ct (a, d) FROM STDIN", in: "34\t2020-13-45\n"},
	{sql: "COPY ct (a, u) FROM STDIN", in: "35\tnot-a-uuid\n"},
	{sql: "COPY ct (a, b) FROM STDIN (FORMAT csv)", in: "36,\"open\n"},
	{sql: "COPY ct (a, b) FROM STDIN", in: "37\tx\r\n38\ty\n"},
	{sql: "COPY ct (a, zz) FROM STDIN"},
	{sql: "COPY ct (a, a) FROM STDIN"},
	{sql: "COPY nope FROM STDIN"},
	{sql: "COPY ct TO STDOUT (FORMAT xml)"},
	{sql: "COPY ct FROM STDIN (FORMAT csv, DELIMITER '||')"},
	{sql: "COPY ct (a) FROM STDIN (FORMAT binary, HEADER)"},
	{sql: "COPY ct (a) TO STDOUT (FORMAT csv, FORCE_QUOTE (b))"},
	{sql: "COPY ct (a) TO STDOUT (QUOTE '\"')"},
	{sql: "COPY ct (a) FROM STDIN (FREEZE)", in: "40\n"},
	{sql: "BEGIN READ ONLY"},
	{sql: "COPY (SELECT a FROM ct WHERE a = 1) TO STDOUT"},
	{sql: "COPY ct (a) FROM STDIN", in: "41\n"},
	{sql: "COPY (SELECT a FROM ct WHERE a = 1) TO STDOUT"},
	{sql: "ROLLBACK"},
	{sql: "COPY ct (a) TO STDOUT WHERE a > 1"},
	{sql: "COPY (INSERT INTO ct (a) VALUES (42)) TO STDOUT"},
	{sql: "CREATE VIEW cv AS SELECT a FROM ct"},
	{sql: "COPY cv TO STDOUT"},
	{sql: "COPY cv FROM STDIN", in: "1\n"},
	{sql: "COPY (SELECT a FROM cv WHERE a = 1) TO STDOUT (FORMAT csv, HEADER)"},
	{sql: "SELECT count(*) FROM ct"},
	// COPY TO in each format.
	{sql: "COPY ct (" + copyColumns + ") TO STDOUT"},
	{sql: "COPY ct (" + copyColumns + ") TO STDOUT (FORMAT csv, HEADER)"},
	{sql: "COPY (SELECT a, b, v FROM ct WHERE a IS NOT NULL ORDER BY a) TO STDOUT (FORMAT csv, FORCE_QUOTE *, NULL 'N')"},
	{sql: "COPY (SELECT b FROM ct WHERE a IS NULL) TO STDOUT (FORMAT csv)"},
	{sql: "COPY (SELECT a, b, d, e, f, u, v FROM ct ORDER BY a) TO STDOUT (FORMAT binary)"},
	{sql: "COPY (SELECT a, b FROM ct ORDER BY a LIMIT 3) TO STDOUT WITH (HEADER, DELIMITER ',')"},
	{sql: "COPY (SELECT a FROM ct WHERE a < 0) TO STDOUT"},
}

// runCopyStep runs one step on c and renders what the client saw.
func runCopyStep(ctx context.Context, c *pgconn.PgConn, s copyStep) string {
	upper := strings.ToUpper(s.sql)
	var tag pgconn.CommandTag
	var err error
	var out bytes.Buffer
	switch {
	case strings.HasPrefix(upper, "COPY") && strings.Contains(upper, "FROM STDIN"):
		tag, err = c.CopyFrom(ctx, strings.NewReader(s.in), s.sql)
	case strings.HasPrefix(upper, "COPY"):
		tag, err = c.CopyTo(ctx, &out, s.sql)
	default:
		var rs []*pgconn.Result
		rs, err = c.Exec(ctx, s.sql).ReadAll()
		if err == nil {
			for _, r := range rs {
				for _, row := range r.Rows {
					for _, v := range row {
						fmt.Fprintf(&out, "%s|", v)
					}
				}
				tag = r.CommandTag
			}
		}
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return fmt.Sprintf("ERROR %s %s | %s", pe.Code, pe.Message, pe.Where)
		}
		return "ERROR " + err.Error()
	}
	return fmt.Sprintf("%s\n%q", tag, out.String())
}

// pgconnUTC connects to dsn with the session settings shepherd reports.
func pgconnUTC(t *testing.T, dsn string) *pgconn.PgConn {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["timezone"] = "UTC"
	c, err := pgconn.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestCopyAsPostgres runs the same COPY script against PostgreSQL 15 and
// shepherd (the embedded default, and a MariaDB + PostgreSQL + SQLite CBS
// cluster): every step must give the same command tag, COPY TO output
// bytes, or error (SQLSTATE, message and CONTEXT), and the tables must
// end alike; in the cluster, every replica holds the same rows.
func TestCopyAsPostgres(t *testing.T) {
	ctx := context.Background()
	pg := pgconnUTC(t, testenv.Postgres(t))
	var want []string
	for _, s := range copySteps {
		want = append(want, runCopyStep(ctx, pg, s))
	}
	for _, setup := range []string{"embedded", "cbs"} {
		t.Run(setup, func(t *testing.T) {
			cfg := embedded(t)
			if setup == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			c := pgconnUTC(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
			for i, s := range copySteps {
				if got := runCopyStep(ctx, c, s); got != want[i] {
					t.Errorf("%s\nshepherd:      %s\nPostgreSQL 15: %s", s.sql, got, want[i])
				}
			}
			if setup == "cbs" {
				if err := srv.Cluster().Idle(ctx); err != nil {
					t.Fatal(err)
				}
				assertIdentical(t, cfg, "SELECT id, "+copyColumns+" FROM ct ORDER BY id")
			}
		})
	}
}

// copyWireScript drives COPY message by message: the formats of
// CopyInResponse and CopyOutResponse, CopyFail, COPY in the extended
// protocol (where the Sync sent ahead of the data is ignored, as
// PostgreSQL ignores it), and in a transaction block.
func copyWireScript(t *testing.T, dsn string) []string {
	c := dialWire(t, dsn)
	var got []string
	step := func(last string, msgs ...pgproto3.FrontendMessage) {
		c.send(msgs...)
		got = append(got, c.until(last)...)
	}
	step("ReadyForQuery", &pgproto3.Query{String: "CREATE TABLE w (a int, b text)"})
	// CopyFail, then stray COPY messages, which are ignored.
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("1\tx\n")}, &pgproto3.CopyFail{Message: "client gave up"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("2\ty\n")}, &pgproto3.CopyDone{},
		&pgproto3.Query{String: "SELECT count(*) FROM w"})
	// Binary, in the extended protocol, with Flush and Sync ahead of the
	// data.
	step("CopyInResponse", &pgproto3.Parse{Query: "COPY w (a) FROM STDIN (FORMAT binary)"}, &pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Flush{}, &pgproto3.Sync{})
	bin := append([]byte("PGCOPY\n\377\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 0, 1, 0, 0, 0, 4, 0, 0, 0, 7, 0xff, 0xff)
	step("CommandComplete", &pgproto3.CopyData{Data: bin[:7]}, &pgproto3.CopyData{Data: bin[7:]}, &pgproto3.CopyDone{}, &pgproto3.Flush{})
	step("ReadyForQuery", &pgproto3.Sync{})
	// COPY TO in the extended protocol.
	step("ReadyForQuery", &pgproto3.Parse{Query: "COPY (SELECT a, b FROM w ORDER BY a) TO STDOUT (FORMAT csv)"}, &pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	// Bad data in a block fails the block; ROLLBACK undoes a good COPY.
	step("ReadyForQuery", &pgproto3.Query{String: "BEGIN"})
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("8\tok\n")}, &pgproto3.CopyDone{})
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("nine\tbad\n")}, &pgproto3.CopyDone{})
	step("ReadyForQuery", &pgproto3.Query{String: "SELECT 1"})
	step("ReadyForQuery", &pgproto3.Query{String: "ROLLBACK"})
	step("ReadyForQuery", &pgproto3.Query{String: "BEGIN"})
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("10\tok\n")}, &pgproto3.CopyDone{})
	step("ReadyForQuery", &pgproto3.Query{String: "ROLLBACK"})
	step("ReadyForQuery", &pgproto3.Query{String: "COPY (SELECT a, b FROM w ORDER BY a) TO STDOUT"})
	// FREEZE on a table truncated in the same transaction (pgbench -i).
	step("ReadyForQuery", &pgproto3.Query{String: "BEGIN; TRUNCATE w"})
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN WITH (FREEZE on)"})
	step("ReadyForQuery", &pgproto3.CopyData{Data: []byte("11\tfrozen\n")}, &pgproto3.CopyDone{})
	step("ReadyForQuery", &pgproto3.Query{String: "COMMIT; COPY w TO STDOUT"})
	// A statement that is not COPY data in the middle of a COPY ends the
	// connection.
	step("CopyInResponse", &pgproto3.Query{String: "COPY w FROM STDIN"})
	step("ErrorResponse 08P01 terminating", &pgproto3.Query{String: "SELECT 1"})
	return got
}

// TestCopyWire: the message-level COPY script gives the same messages on
// PostgreSQL 15 and shepherd.
func TestCopyWire(t *testing.T) {
	want := copyWireScript(t, testenv.Postgres(t))
	addr, _ := start(t, embedded(t))
	got := copyWireScript(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shepherd:\n  %s\nPostgreSQL 15:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestCopyClients: pgx's CopyFrom (binary), psql's \copy both ways and
// psycopg2's copy_expert give the same tables and files on PostgreSQL 15
// and on shepherd (embedded and a CBS cluster, whose replicas end
// identical).
func TestCopyClients(t *testing.T) {
	run := func(t *testing.T, dsn, host, port, user, db string) string {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "CREATE TABLE cc (id serial PRIMARY KEY, n int, s text, x numeric(10,3), ok bool, at timestamptz, d date, b bytea, u uuid, f float8)"); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2024, 2, 29, 23, 59, 58, 123456000, time.UTC)
		rows := [][]any{
			{int32(1), "one", "1.5", true, at, at, []byte{0, 1, 255}, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 0.1},
			{nil, "tab\there", nil, false, nil, nil, nil, nil, nil},
			{int32(3), nil, "-2.125", nil, at.Add(-time.Hour * 24 * 400), at.Add(time.Hour), []byte{}, nil, -1e300},
		}
		n, err := c.CopyFrom(ctx, pgx.Identifier{"cc"}, []string{"n", "s", "x", "ok", "at", "d", "b", "u", "f"}, pgx.CopyFromRows(rows))
		if err != nil || n != 3 {
			t.Fatalf("pgx CopyFrom: %d, %v", n, err)
		}
		var out strings.Builder
		dir := t.TempDir()
		psql := "/usr/lib/postgresql/15/bin/psql"
		if _, err := os.Stat(psql); err == nil {
			in := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(in, []byte("n,s\n10,\"from psql\"\n11,\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(dir, "out.txt")
			cmd := exec.Command(psql, "-X", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", user, "-d", db,
				"-c", `\copy cc (n, s) from '`+in+`' with (format csv, header)`,
				"-c", `\copy (select n, s, x, ok, at, d, b, u, f from cc order by id) to '`+to+`'`)
			cmd.Env = append(os.Environ(), "PGTZ=UTC")
			msg, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("psql: %v\n%s", err, msg)
			}
			data, err := os.ReadFile(to)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "psql: %s\n%s", msg, data)
		} else {
			t.Log("no psql 15: skipped")
		}
		if py := pythonWithPsycopg2(); py != "" {
			script := `
import sys, io, psycopg2
c = psycopg2.connect(sys.argv[1])
cur = c.cursor()
cur.copy_expert("COPY cc (n, s) FROM STDIN", io.StringIO("20\tpy\n21\t\\N\n"))
print(cur.rowcount)
c.commit()
buf = io.StringIO()
cur.copy_expert("COPY (SELECT n, s FROM cc ORDER BY id) TO STDOUT WITH CSV HEADER", buf)
print(buf.getvalue())
try:
    cur.copy_expert("COPY cc (n) FROM STDIN", io.StringIO("x\n"))
except psycopg2.Error as e:
    print(e.pgcode, e.diag.message_primary, e.diag.context)
c.rollback()
`
			cmd := exec.Command(py, "-c", script, fmt.Sprintf("host=%s port=%s user=%s dbname=%s", host, port, user, db))
			msg, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, msg)
			}
			fmt.Fprintf(&out, "psycopg2: %s", msg)
		} else {
			t.Log("no python3 with psycopg2: skipped")
		}
		return out.String()
	}
	pgDSN := testenv.Postgres(t)
	pcfg, err := pgconn.ParseConfig(pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	want := run(t, pgDSN, pcfg.Host, fmt.Sprint(pcfg.Port), pcfg.User, pcfg.Database)
	for _, setup := range []string{"embedded", "cbs"} {
		t.Run(setup, func(t *testing.T) {
			cfg := embedded(t)
			if setup == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			host, port, _ := strings.Cut(addr, ":")
			got := run(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr), host, port, "app", "app")
			if got != want {
				t.Errorf("shepherd:\n%s\nPostgreSQL 15:\n%s", got, want)
			}
			if setup == "cbs" {
				if err := srv.Cluster().Idle(context.Background()); err != nil {
					t.Fatal(err)
				}
				assertIdentical(t, cfg, "SELECT id, n, s, x, ok, at, d, b, u, f FROM cc ORDER BY id")
			}
		})
	}
}

// pythonWithPsycopg2 returns a Python that imports psycopg2 (Debian's
// python3-psycopg2 for /usr/bin/python3), or "".
func pythonWithPsycopg2() string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import psycopg2").Run() == nil {
			return py
		}
	}
	return ""
}

// TestCopyFileRefused: COPY to or from a server file or program is refused
// as PostgreSQL 15 refuses it to a role that is not a superuser, message
// and hint alike; shepherd's replicas' files are no client's business.
func TestCopyFileRefused(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.Postgres(t)
	admin := pgconnUTC(t, dsn)
	if _, err := admin.Exec(ctx, "CREATE ROLE copy_nobody LOGIN; CREATE TABLE t (a int); GRANT ALL ON t TO copy_nobody").ReadAll(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP TABLE t; DROP ROLE copy_nobody").ReadAll() })
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User = "copy_nobody"
	pg, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	addr, _ := start(t, embedded(t))
	c := pgconnUTC(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if _, err := c.Exec(ctx, "CREATE TABLE t (a int)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	render := func(err error) string {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return fmt.Sprint(err)
		}
		return pe.Code + " " + pe.Message + " / " + pe.Hint
	}
	for _, q := range []string{"COPY t FROM '/etc/passwd'", "COPY t TO '/tmp/t'", "COPY t TO PROGRAM 'ls'", "COPY t FROM PROGRAM 'ls'"} {
		_, perr := pg.Exec(ctx, q).ReadAll()
		_, serr := c.Exec(ctx, q).ReadAll()
		if want, got := render(perr), render(serr); got != want || perr == nil {
			t.Errorf("%s\nshepherd:      %s\nPostgreSQL 15: %s", q, got, want)
		}
	}
}

// TestCopyNumericDiverse: COPY FROM into a numeric(p,s) column on the
// diverse embedded cluster answers as PostgreSQL, where the values went
// to DuckDB as 'v'::numeric, a numeric without a precision it refuses
// (0A000), and so failed every COPY into a table with such a column.
func TestCopyNumericDiverse(t *testing.T) {
	steps := []copyStep{
		{sql: "CREATE TABLE cn (id int PRIMARY KEY, p numeric(10,2))"},
		{sql: "COPY cn (id, p) FROM STDIN (FORMAT csv)", in: "1,0.25\n2,3.14159\n3,\n"},
		{sql: "COPY cn FROM STDIN", in: "4\t-7.005\n"},
		{sql: "COPY cn FROM STDIN", in: "6\tabc\n"},
		{sql: "SELECT id, p FROM cn ORDER BY id"},
	}
	ctx := context.Background()
	pg := pgconnUTC(t, testenv.Postgres(t))
	var want []string
	for _, s := range steps {
		want = append(want, runCopyStep(ctx, pg, s))
	}
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	c := pgconnUTC(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	for i, s := range steps {
		if got := runCopyStep(ctx, c, s); got != want[i] {
			t.Errorf("%s\nshepherd:      %s\nPostgreSQL 15: %s", s.sql, got, want[i])
		}
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}
