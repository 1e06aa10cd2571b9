package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// pgDumpSchema is the schema TestPgDumpAsPostgres dumps: SERIAL keys, a
// CREATE SEQUENCE one (set, not called), a unique and a foreign key, CHECKs PostgreSQL prints back with implicit
// casts, an index and views.
var pgDumpSchema = []string{
	"CREATE TABLE dept (id serial PRIMARY KEY, name text NOT NULL UNIQUE)",
	"CREATE TABLE emp (id serial PRIMARY KEY, dept_id integer NOT NULL REFERENCES dept(id), name text NOT NULL, salary numeric(10,2) CHECK (salary > 0), grade varchar(2) CHECK (grade <> 'x' OR grade IS NULL))",
	"CREATE INDEX emp_dept_idx ON emp (dept_id)",
	"CREATE VIEW big_dept AS SELECT dept_id, count(*) AS n FROM emp GROUP BY dept_id",
	"CREATE VIEW rich AS SELECT e.name, e.salary FROM emp e WHERE e.salary > 4500 ORDER BY e.name",
	"CREATE SEQUENCE ticket START 100",
	"SELECT setval('ticket', 150, false)",
	"INSERT INTO dept (name) VALUES ('r&d'), ('sales')",
	"INSERT INTO emp (dept_id, name, salary) VALUES (1, 'ann', 5000.50), (2, 'bob', 4000)",
}

// dumpNoise is what differs between two dumps of the same database:
// the \restrict key pg_dump draws at random, and the server's version.
var dumpNoise = regexp.MustCompile(`(?m)^(\\(?:un)?restrict) \S+$|^(-- Dumped from database version) .*$`)

// TestPgDumpAsPostgres runs pg_dump 15 through shepherd and against
// PostgreSQL 15 alone over the same schema and rows: the schema dump and
// the data dump must be the same text, but for the \restrict key and the
// server version line; then the data dump, restored by psql into
// shepherd after its rows are deleted (pg_dump's SET lines, set_config,
// COPY ... FROM stdin, setval), gives back the rows and the sequences.
// On the embedded default and on a MariaDB + PostgreSQL + SQLite cluster.
func TestPgDumpAsPostgres(t *testing.T) {
	const bin = "/usr/lib/postgresql/15/bin/"
	if _, err := os.Stat(bin + "pg_dump"); err != nil {
		t.Skip("pg_dump 15 is not installed (Debian package postgresql-client-15)")
	}
	t.Run("embedded", func(t *testing.T) { pgDumpAsPostgres(t, bin, embedded(t)) })
	t.Run("cbs", func(t *testing.T) { pgDumpAsPostgres(t, bin, realCluster(t, "cbs")) })
}

func pgDumpAsPostgres(t *testing.T, bin string, cfg *config.Config) {
	ctx := context.Background()
	addr, _ := start(t, cfg)
	pcfg, err := pgx.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	alone, err := pgx.ConnectConfig(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)
	// The same database and user on both: the dump names them.
	db, user := pcfg.Database, pcfg.User
	scfg, err := pgx.ParseConfig("postgres://" + user + "@" + addr + "/" + db + "?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	shep, err := pgx.ConnectConfig(ctx, scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shep.Close(ctx)
	for _, q := range pgDumpSchema {
		mustExec(t, shep, q)
		if _, err := alone.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL alone: %s: %v", q, err)
		}
	}
	host, port, _ := strings.Cut(addr, ":")
	run := func(host string, port string, prog string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin+prog, append([]string{"-X", "-h", host, "-p", port, "-U", user}, args...)...)
		if prog == "pg_dump" {
			cmd.Args = append(cmd.Args[:1], cmd.Args[2:]...) // pg_dump has no -X
		}
		cmd.Env = append(os.Environ(), "PGPASSWORD="+pcfg.Password)
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("%s %v on %s:%s: %v\n%s", prog, args, host, port, err, msg)
		}
		return dumpNoise.ReplaceAllString(string(out), "$1$2 X")
	}
	for _, args := range [][]string{{"--schema-only"}, {"--data-only", "--table=dept", "--table=emp", "--table=ticket"}} {
		want := run(pcfg.Host, strconv.Itoa(int(pcfg.Port)), "pg_dump", append(args, db)...)
		got := run(host, port, "pg_dump", append(args, db)...)
		if got != want {
			t.Errorf("pg_dump %v through shepherd:\n%s\nwant (PostgreSQL):\n%s", args, got, want)
		}
	}
	data := filepath.Join(t.TempDir(), "data.sql")
	if err := os.WriteFile(data, []byte(run(host, port, "pg_dump", "--data-only", "--table=dept", "--table=emp", db)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, shep, "DELETE FROM emp")
	mustExec(t, shep, "DELETE FROM dept")
	run(host, port, "psql", "-v", "ON_ERROR_STOP=1", "-q", "-f", data, db)
	var sum string
	var next int
	if err := shep.QueryRow(ctx, "SELECT sum(salary)::text FROM emp").Scan(&sum); err != nil || sum != "9000.50" {
		t.Fatalf("after the restore: salaries sum to %s (%v), want 9000.50", sum, err)
	}
	if err := shep.QueryRow(ctx, "SELECT nextval('dept_id_seq')").Scan(&next); err != nil || next != 3 {
		t.Fatalf("after the restore: nextval('dept_id_seq') = %d (%v), want 3", next, err)
	}
}
