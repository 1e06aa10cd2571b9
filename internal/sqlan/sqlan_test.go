package sqlan

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	_ "github.com/shepherd-db/shepherd/internal/driver/all" // the engines of TestDescribeOnEngines
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		sql     string
		kind    Kind
		verb    string
		rows    bool
		ordered bool
	}{
		{"SELECT 1", Read, "SELECT", true, false},
		{"select a from t order by a", Read, "SELECT", true, true},
		{"SELECT * FROM t WHERE id = 1 FOR UPDATE", Write, "SELECT", true, false},
		{"VALUES (1), (2)", Read, "SELECT", true, false},
		{"INSERT INTO t VALUES (1)", Write, "INSERT", false, false},
		{"INSERT INTO t VALUES (1) RETURNING id", Write, "INSERT", true, false},
		{"UPDATE t SET a = 1", Write, "UPDATE", false, false},
		{"DELETE FROM t", Write, "DELETE", false, false},
		{"CREATE TABLE t (a int)", DDL, "CREATE TABLE", false, false},
		{"DROP TABLE t", DDL, "DROP TABLE", false, false},
		{"CREATE INDEX i ON t (a)", DDL, "CREATE INDEX", false, false},
		{"BEGIN", Begin, "BEGIN", false, false},
		{"START TRANSACTION", Begin, "START TRANSACTION", false, false},
		{"begin isolation level serializable read only", Begin, "BEGIN", false, false},
		{"COMMIT", Commit, "COMMIT", false, false},
		{"END", Commit, "COMMIT", false, false},
		{"ROLLBACK", Rollback, "ROLLBACK", false, false},
		{"ABORT", Rollback, "ROLLBACK", false, false},
		{"SET extra_float_digits = 3", Set, "SET", false, false},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", Set, "SET", false, false},
		{"RESET ALL", Set, "RESET", false, false},
		{"SHOW TimeZone", Show, "SHOW", true, false},
	}
	for _, c := range cases {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		if st.Kind != c.kind || st.Verb != c.verb || st.ReturnsRows != c.rows || st.Ordered != c.ordered {
			t.Errorf("%q: got kind=%v verb=%q rows=%v ordered=%v", c.sql, st.Kind, st.Verb, st.ReturnsRows, st.Ordered)
		}
	}
}

func TestBeginOptions(t *testing.T) {
	st, err := ParseOne("BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY")
	if err != nil {
		t.Fatal(err)
	}
	if st.TxOptions != (driver.TxOptions{Isolation: "serializable", ReadOnly: true}) {
		t.Errorf("options = %+v", st.TxOptions)
	}
	st, _ = ParseOne("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	if !st.SetTransaction || st.TxOptions.Isolation != "read committed" {
		t.Errorf("SET TRANSACTION: %+v", st)
	}
}

// TestSavepointStatements: the three savepoint statements, in every
// spelling, are analysed as Kind Savepoint with the name PostgreSQL's
// parser gives (folded unless quoted) and PostgreSQL's command tags.
func TestSavepointStatements(t *testing.T) {
	for sql, want := range map[string]struct {
		op         SavepointOp
		name, verb string
	}{
		"SAVEPOINT a":                  {SavepointDefine, "a", "SAVEPOINT"},
		"savepoint \"Big Name\"":       {SavepointDefine, "Big Name", "SAVEPOINT"},
		"RELEASE SAVEPOINT A":          {SavepointRelease, "a", "RELEASE"},
		"RELEASE a":                    {SavepointRelease, "a", "RELEASE"},
		"ROLLBACK TO SAVEPOINT a":      {SavepointRollbackTo, "a", "ROLLBACK"},
		"ROLLBACK TO a":                {SavepointRollbackTo, "a", "ROLLBACK"},
		"ROLLBACK WORK TO SAVEPOINT a": {SavepointRollbackTo, "a", "ROLLBACK"},
	} {
		st, err := ParseOne(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if st.Kind != Savepoint || st.SavepointOp != want.op || st.SavepointName != want.name || st.Verb != want.verb {
			t.Errorf("%s: kind %v op %d name %q verb %s", sql, st.Kind, st.SavepointOp, st.SavepointName, st.Verb)
		}
	}
	if got := NewSavepoint(SavepointRollbackTo, `x"y`).SQL; got != `ROLLBACK TO SAVEPOINT "x""y"` {
		t.Errorf("NewSavepoint: %s", got)
	}
}

func TestRefused(t *testing.T) {
	for _, sql := range []string{
		"COPY t FROM STDIN WHERE a > 1", "PREPARE TRANSACTION 'x'",
		"SELECT 1 INTO t2", "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql",
	} {
		_, err := Parse(sql)
		if pgerr.Code(err) != pgerr.FeatureNotSupported {
			t.Errorf("%q: got %v, want 0A000", sql, err)
		}
	}
	if _, err := Parse("SELEC 1"); pgerr.Code(err) != pgerr.SyntaxError {
		t.Errorf("syntax error: got %v", err)
	}
	if _, err := ParseOne("SELECT 1; SELECT 2"); pgerr.Code(err) != pgerr.SyntaxError {
		t.Errorf("two statements in ParseOne: got %v", err)
	}
	// shepherd's log table differs between replicas by design.
	for _, sql := range []string{
		"SELECT * FROM shepherd_log", "SELECT 1 FROM t JOIN public.SHEPHERD_LOG l ON true",
		"INSERT INTO shepherd_log VALUES (1)", "DELETE FROM shepherd_log", "UPDATE shepherd_log SET barrier = 0",
		"CREATE TABLE shepherd_log (x int)", "DROP TABLE shepherd_log", "WITH x AS (SELECT max(barrier) FROM shepherd_log) SELECT * FROM x",
	} {
		if _, err := Parse(sql); pgerr.Code(err) != "42939" {
			t.Errorf("%q: got %v, want 42939", sql, err)
		}
	}
	if _, err := Parse("SELECT 'shepherd_log' AS shepherd_log"); err != nil {
		t.Errorf("the name in a string or alias: %v", err)
	}
}

func TestSplitAndEmpty(t *testing.T) {
	sts, err := Parse("select 1; insert into t values ('a;b');; -- c\n update t set a = 2")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"select 1", "insert into t values ('a;b')", "-- c\n update t set a = 2"}
	if len(sts) != len(want) {
		t.Fatalf("got %d statements", len(sts))
	}
	if my, _ := sts[2].For(driver.MySQL); my != "UPDATE `t` SET `a` = 2" {
		t.Errorf("comment not stripped for MySQL: %q", my)
	}
	for i, st := range sts {
		if st.SQL != want[i] {
			t.Errorf("statement %d = %q, want %q", i, st.SQL, want[i])
		}
	}
	for _, empty := range []string{"", "  ", ";", " ; ; ", "-- only a comment"} {
		sts, err := Parse(empty)
		if err != nil || len(sts) != 0 {
			t.Errorf("%q: got %d statements, %v", empty, len(sts), err)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	st, err := ParseOne("UPDATE t SET a = $2, b = '$1' WHERE id = $1 AND c = $2 -- $3")
	if err != nil {
		t.Fatal(err)
	}
	if st.NumParams != 2 {
		t.Errorf("NumParams = %d", st.NumParams)
	}
	my, order := st.For(driver.MySQL)
	if my != "UPDATE `t` SET `a` = ?, `b` = '$1' WHERE ((`id` = ?) AND (`c` = ?))" {
		t.Errorf("mysql: %q", my)
	}
	if len(order) != 3 || order[0] != 1 || order[1] != 0 || order[2] != 1 {
		t.Errorf("mysql order: %v", order)
	}
	lite, lorder := st.For(driver.SQLite)
	if lite != `UPDATE "t" SET "a" = ?2, "b" = '$1' WHERE (("id" = ?1) AND ("c" = ?2))` || lorder != nil {
		t.Errorf("sqlite: %q %v", lite, lorder)
	}
	pg, porder := st.For(driver.Postgres)
	if pg != st.SQL || porder != nil {
		t.Errorf("postgres: %q", pg)
	}
}

func TestCache(t *testing.T) {
	c := NewCache(2, DefaultEnv.Replicas, nil)
	a1, _ := c.Parse("select 1")
	a2, _ := c.Parse("select 1")
	if a1[0] != a2[0] {
		t.Error("second parse of the same text was not served from the cache")
	}
	c.Parse("select 2")
	c.Parse("select 3") // evicts "select 1"
	a3, _ := c.Parse("select 1")
	if a3[0] == a1[0] {
		t.Error("cache kept more than its capacity")
	}
	if _, err := c.Parse("selec"); err == nil {
		t.Error("syntax error not reported")
	}
}

// TestCacheBlockSchema: a statement analysed against a block's own
// schema (ParseFor) sees that schema's tables and is not remembered, so
// the cache keeps answering from the committed schema, for every session.
func TestCacheBlockSchema(t *testing.T) {
	c := NewCache(8, DefaultEnv.Replicas, nil)
	create, err := Parse("CREATE TABLE blk (id int PRIMARY KEY, v text)")
	if err != nil {
		t.Fatal(err)
	}
	block, err := c.Catalog().Snapshot().Apply(create[0].Tree())
	if err != nil {
		t.Fatal(err)
	}
	const q = "SELECT * FROM blk"
	sts, err := c.ParseFor(q, block)
	if err != nil {
		t.Fatal(err)
	}
	if got := sts[0].Schema(); got != block {
		t.Error("ParseFor did not analyse against the block's schema")
	}
	if len(sts[0].Columns()) != 2 {
		t.Errorf("* over the block's table gave %d columns, want 2", len(sts[0].Columns()))
	}
	if _, ok := c.byKey[q]; ok {
		t.Error("a statement analysed against a block's schema was cached")
	}
	committed, err := c.ParseFor(q, c.Catalog().Snapshot())
	if err == nil && committed[0].Schema() == block {
		t.Error("the committed schema's analysis came from the block's")
	}
}

// pgOnly is the environment of a cluster of PostgreSQL replicas.
var pgOnly = &Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"p"}}}

func TestDescribe(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT a, b FROM t WHERE id = $1 FOR UPDATE":                                "SELECT a, b FROM t WHERE false AND id = $1 LIMIT 0",
		"INSERT INTO t (a) VALUES ($1) RETURNING id, a * 2 AS twice":                 "SELECT id, a * 2 AS twice FROM t WHERE false LIMIT 0",
		"UPDATE acc SET b = b + 1 WHERE id = 3 RETURNING b":                          "SELECT b FROM acc WHERE false LIMIT 0",
		"UPDATE acc a SET b = o.b FROM other o WHERE o.id = a.id RETURNING a.b, o.c": "SELECT a.b, o.c FROM acc a, other o WHERE false LIMIT 0",
		"DELETE FROM acc USING other o WHERE o.id = acc.id RETURNING o.c":            "SELECT o.c FROM acc, other o WHERE false LIMIT 0",
		// The rows do not matter: no order, no offset; the parameters
		// only LIMIT/OFFSET took stay, typed as there.
		"SELECT id FROM emp ORDER BY id LIMIT $1 OFFSET $2":                              "SELECT id FROM emp WHERE false AND $1::bigint IS NULL AND $2::bigint IS NULL LIMIT 0",
		"SELECT id FROM emp ORDER BY abs(id - $1), id":                                   "SELECT id FROM emp WHERE false ORDER BY abs(id - $1) LIMIT 0",
		"SELECT id FROM emp WHERE bonus IS NOT DISTINCT FROM $1 FETCH FIRST 3 ROWS ONLY": "SELECT id FROM emp WHERE false AND bonus IS NOT DISTINCT FROM $1 LIMIT 0",
		// Subqueries keep their LIMIT, as a constant when it took a
		// parameter.
		"SELECT (SELECT max(id) FROM (SELECT id FROM emp ORDER BY id LIMIT $2 OFFSET 1) s) WHERE $1 > 0": "SELECT (SELECT max(id) FROM (SELECT id FROM emp ORDER BY id LIMIT 1 OFFSET 1) s) WHERE false AND $1 > 0 AND $2::bigint IS NULL LIMIT 0",
		"SELECT a FROM t UNION SELECT b FROM u WHERE b > $1 ORDER BY 1 LIMIT $2":                         "SELECT a FROM t WHERE false AND $2::bigint IS NULL UNION SELECT b FROM u WHERE false AND b > $1 LIMIT 0",
		"WITH s AS (SELECT id FROM emp WHERE id = $1) SELECT id FROM s":                                  "WITH s AS (SELECT id FROM emp WHERE id = $1) SELECT id FROM s WHERE false LIMIT 0",
		"VALUES (1, $1), (2, 'b')": "VALUES (1, $1), (2, 'b') LIMIT 0",
	} {
		st, err := ParseOneIn(sql, pgOnly)
		if err != nil {
			t.Fatal(err)
		}
		d := st.Describe()
		if d == nil || d.SQL != want {
			got := "<nil>"
			if d != nil {
				got = d.SQL
			}
			t.Errorf("%q:\ndescribe %q,\nwant     %q", sql, got, want)
		}
	}
	for _, sql := range []string{"INSERT INTO t VALUES (1)", "SHOW TimeZone", "BEGIN",
		// The probe would delete.
		"WITH d AS (DELETE FROM t RETURNING id) SELECT id FROM d",
	} {
		st, err := ParseOneIn(sql, pgOnly)
		if err != nil {
			t.Fatal(err)
		}
		if st.Describe() != nil {
			t.Errorf("%q: a describe form", sql)
		}
	}
}

func TestMain(m *testing.M) { testenv.Main(m) }

// columnsSchema is the schema TestColumnsOnPostgres types its queries
// against, on PostgreSQL and in shepherd's catalog alike.
var columnsSchema = []string{
	`CREATE TABLE ty (id integer PRIMARY KEY, i2 smallint, i4 integer, i8 bigint, n numeric(10,2),
		f4 real, f8 double precision, t text, vc varchar(10), c char(3), d date, ts timestamp,
		tz timestamptz, iv interval, b boolean, u uuid, j json, jb jsonb, bin bytea, tm time)`,
	`CREATE TABLE emp (id integer PRIMARY KEY, name text, dept_id integer, salary numeric(10,2), hired date)`,
	`CREATE TABLE dept (id integer PRIMARY KEY, name varchar(20))`,
	`CREATE TABLE quoted ("MixedCase" integer, plain text)`,
}

// columnsQueries are statements whose result columns shepherd must name
// and type as PostgreSQL does. Each must be fully typed unless it is in
// partlyTyped.
var columnsQueries = []string{
	// Names: FigureColname.
	`SELECT 1, 'a', NULL, 1 + 1, id, ty.i2, public.ty.i4 FROM ty`,
	`SELECT current_time, array[1], ROW(1, 2), $1::text`,
	`SELECT NULLIF(1, 1), NULLIF(1, 2), COALESCE(NULL, NULL, 'x'), GREATEST(1, 2), LEAST('b', 'a')`,
	`SELECT 0.1::real::double precision, '1e3'::float8::int, ' 7 '::int, '123'::int + 1`,
	`SELECT CAST(TIMESTAMP '2024-05-06 07:08:09.5' AS date), CAST(DATE '2024-05-06' AS timestamp)`,
	`SELECT CAST(i4 AS bigint), i4::text, t::varchar(4), t::char, t::char(5), n::numeric(5), 1::numeric FROM ty`,
	`SELECT CASE WHEN b THEN 1 ELSE 2 END, CASE WHEN b THEN 1 ELSE i4 END, CASE WHEN b THEN 'x' END FROM ty`,
	`SELECT (SELECT 1), (SELECT 1)::int, (SELECT 1 AS x)::int, (SELECT i4 FROM ty LIMIT 1), (SELECT max(n) FROM ty)`,
	`SELECT EXISTS (SELECT 1 FROM ty), 1 IN (1, 2), 1 = ANY (SELECT i4 FROM ty), i4 IS NULL, b IS TRUE FROM ty`,
	`SELECT extract(year FROM d), date_part('hour', ts), date_trunc('day', ts), date_trunc('day', d), date_trunc('day', tz) FROM ty`,
	`SELECT trim(t), substring(t FROM 1 FOR 2), position('a' IN t), lower(vc), upper(c), length(c), octet_length(vc) FROM ty`,
	`SELECT current_date, current_timestamp, localtimestamp, localtime, now(), current_user`,
	`SELECT ts AT TIME ZONE 'UTC', tz AT TIME ZONE 'UTC' FROM ty`,
	`SELECT -1, -1.5, 2147483648, 9223372036854775808, 1e3, - i2, + i8 FROM ty`,
	// Arithmetic.
	`SELECT i2 + i2, i2 + i4, i4 + i8, i4 + n, i4 + f4, n + f4, f4 + f4, f4 + f8, n + f8, i2 * i2, i4 / i4, i4 % i4, n % n FROM ty`,
	`SELECT i4 ^ i4, n ^ n, i2 ^ i2, NULL + 1, '1' + 1, '1.5' + 1.0, 1 + NULL::bigint FROM ty`,
	`SELECT d + 1, d - d, d - 1, d + iv, d - iv, ts - ts, tz - tz, iv * 2, iv / 2, d + tm, ts + iv, tz - iv, ts - '2024-01-01', tm - tm FROM ty`,
	`SELECT t || 'x', vc || vc, c || 'x', 'a' || 'b', t || 1, 1 || t, 'a' || 1, jb || jb, bin || bin, j -> 'a', jb ->> 'a', jb -> 0 FROM ty`,
	// Aggregates.
	`SELECT count(*), count(i4), sum(i2), sum(i4), sum(i8), sum(n), sum(f4), sum(f8), sum(iv) FROM ty`,
	`SELECT avg(i2), avg(i8), avg(n), avg(f4), avg(f8), avg(iv), min(t), max(d), min(vc), max(c), min(n), max(i2), min(f4), max(ts), min(tz) FROM ty`,
	`SELECT bool_and(b), bool_or(b), every(b), string_agg(t, ','), stddev(i4), stddev(f4), variance(n), var_pop(i8), bit_and(i2) FROM ty`,
	`SELECT count(DISTINCT i4), sum(DISTINCT n), avg(DISTINCT i2)::numeric(10,2), count(*) FILTER (WHERE b) FROM ty`,
	// Functions.
	`SELECT round(1), round(i2), round(f4), round(n), round(n, 1), ceil(1), ceil(f4), floor(i8), trunc(f8), trunc(n, 1), abs(i2), abs(f4), abs(n) FROM ty`,
	`SELECT sqrt(n), sqrt(i4), power(i4, i4), power(n, 2), exp(n), ln(i4), log(n), log(f8), log(2, 8), mod(i2, i2), mod(i4, i8), mod(n, 2), sign(n), sign(i4) FROM ty`,
	`SELECT pi(), random(), div(n, n), cbrt(i4), degrees(i4), width_bucket(f8, 0, 1, 10), gen_random_uuid() FROM ty`,
	`SELECT concat(1, 2), md5('a'), initcap(vc), repeat('a', 2), split_part('a', 'b', 1), strpos(t, 'a'), ascii(t), chr(65), to_hex(i4), lpad(c, 5), replace(c, 'a', 'b'), left(vc, 1), reverse(vc) FROM ty`,
	`SELECT to_char(ts, 'YYYY'), to_date('2024', 'YYYY'), to_timestamp(1), make_date(1, 2, 3), age(ts, ts), age(tz), justify_days(iv), make_interval(1), make_timestamp(1, 1, 1, 1, 1, 1), isfinite(d) FROM ty`,
	`SELECT to_json(1), json_build_object('a', 1), jsonb_build_object('a', 1), encode(bin, 'hex'), decode('aa', 'hex'), starts_with(t, 'a') FROM ty`,
	// Common types.
	`SELECT coalesce(i2, i4), coalesce(n, f4), coalesce(vc, c), coalesce(c, vc), coalesce(vc, 'x'), coalesce(c, 'x'), coalesce(d, ts), coalesce(ts, tz), coalesce(vc, vc), coalesce(n, n), coalesce(n, 1), coalesce(t, vc), coalesce(vc, t) FROM ty`,
	// CASE puts its ELSE first when choosing the common type: char(n)
	// and varchar cast to each other, so the first wins.
	`SELECT CASE WHEN b THEN c ELSE vc END, CASE WHEN b THEN vc ELSE c END, CASE WHEN b THEN c WHEN b THEN vc END FROM ty`,
	`SELECT CASE WHEN b THEN 1 ELSE 2.5 END, CASE WHEN b THEN vc ELSE 'x' END, greatest(i2, 1), least(vc, c), nullif('a', 'b'), nullif(i2, 1), nullif(n, 1), nullif('1', i8) FROM ty`,
	`SELECT nullif(1, 2.5), nullif(i4, n), nullif(i2, i8), nullif(i8, i2), nullif(f4, f8), nullif(n, f8), nullif(i4, f4), nullif(n, i4), nullif(1, 2.5) / 2 FROM ty`,
	// Windows.
	`SELECT row_number() OVER (), rank() OVER (ORDER BY i4), dense_rank() OVER (ORDER BY i4), percent_rank() OVER (ORDER BY i4), cume_dist() OVER (ORDER BY i4), ntile(2) OVER (ORDER BY i4) FROM ty`,
	`SELECT lag(n) OVER (ORDER BY id), lead(n, 1, 0) OVER (ORDER BY id), first_value(t) OVER (ORDER BY id), sum(i4) OVER (ORDER BY id), avg(f4) OVER () FROM ty`,
	// VALUES, set operations, subqueries, CTEs, joins.
	`VALUES (1, 'a'), (2, 'b')`,
	`VALUES (1, 'a', NULL, NULL), (2.5, 'b', 1, NULL)`,
	`SELECT 1 AS x, 'a' AS y UNION SELECT 2.5, 'b'`,
	`SELECT n FROM ty UNION SELECT n FROM ty`,
	`SELECT vc, c FROM ty UNION ALL SELECT 'x', 'y'`,
	`SELECT * FROM ty`,
	`SELECT e.*, d.name FROM emp e JOIN dept d ON d.id = e.dept_id`,
	`SELECT id, e.name, d.name FROM emp e JOIN dept d USING (id)`,
	// * over a USING or NATURAL join lists the merged columns once,
	// first (the typer listed every table's columns: one too many).
	`SELECT * FROM emp e JOIN dept d USING (id)`,
	`SELECT * FROM emp NATURAL JOIN dept`,
	`SELECT * FROM dept a JOIN dept b USING (name) JOIN emp c ON c.dept_id = a.id`,
	`SELECT * FROM emp c JOIN (dept a JOIN dept b USING (id, name)) USING (id)`,
	`SELECT x, y FROM (SELECT i4 AS x, 'a' AS y FROM ty) AS s`,
	`SELECT a, b FROM (SELECT i4, n FROM ty) AS s (a, b)`,
	`SELECT * FROM (VALUES (1, 'a')) AS v (k, w)`,
	`WITH RECURSIVE r (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 10) SELECT sum(i), count(*) FROM r`,
	`WITH s AS (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) SELECT dept_id, total, total / 2 FROM s`,
	`SELECT d.name, top.name FROM dept d CROSS JOIN LATERAL (SELECT name FROM emp WHERE emp.dept_id = d.id LIMIT 1) AS top`,
	`SELECT name, (SELECT max(salary) FROM emp) - salary AS gap FROM emp`,
	`SELECT g, 'lucky-' || g FROM generate_series(1, 5) AS g`,
	`SELECT e.name FROM emp e WHERE e.salary > (SELECT avg(salary) FROM emp WHERE dept_id = e.dept_id)`,
	`SELECT "MixedCase", q.plain, * FROM quoted q`,
	`SELECT x.*, count(*) AS "Count", (x.a) FROM (SELECT 1 AS a, 2) x GROUP BY 1, 2`,
	`SELECT DISTINCT ON (dept_id) dept_id, name FROM emp ORDER BY dept_id, salary DESC`,
	// RETURNING.
	`INSERT INTO emp (id, name) VALUES (1, 'x') RETURNING id, name, salary * 2, *`,
	`UPDATE emp e SET salary = salary + 1 FROM dept d WHERE d.id = e.dept_id RETURNING e.salary, d.name, d.*`,
	`DELETE FROM emp USING dept WHERE dept.id = emp.dept_id RETURNING emp.hired, dept.name AS dname`,
	`WITH s AS (SELECT 1 AS k) INSERT INTO dept (id, name) SELECT k, 'x' FROM s RETURNING id, upper(name)`,
}

// partlyTyped are queries with columns shepherd leaves to the engine.
var partlyTyped = map[string]bool{
	`SELECT current_time, array[1], ROW(1, 2), $1::text`: true,
}

// TestColumnsOnPostgres checks the names, types and type modifiers
// shepherd tells clients against what PostgreSQL 15 describes.
func TestColumnsOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var snap *schema.Snapshot
	for _, ddl := range columnsSchema {
		if _, err := conn.Exec(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		tree, err := pg_query.Parse(ddl)
		if err != nil {
			t.Fatal(err)
		}
		if snap, err = snap.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatal(err)
		}
	}
	env := &Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"pg"}}, Schema: snap}
	for _, sql := range columnsQueries {
		desc, err := conn.Prepare(ctx, "", sql)
		if err != nil {
			t.Errorf("%s: PostgreSQL: %v", sql, err)
			continue
		}
		st, err := ParseOneIn(sql, env)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		got := st.Columns()
		if len(got) != len(desc.Fields) {
			t.Errorf("%s: %d columns guessed, PostgreSQL has %d", sql, len(got), len(desc.Fields))
			continue
		}
		for i, f := range desc.Fields {
			g := got[i]
			if g.Name != f.Name {
				t.Errorf("%s: column %d named %q, PostgreSQL %q", sql, i+1, g.Name, f.Name)
			}
			if g.Type == answer.Unknown {
				if typeByOID(f.DataTypeOID) != "" && !partlyTyped[sql] {
					t.Errorf("%s: column %d (%s) not typed, PostgreSQL says %s", sql, i+1, f.Name, typeByOID(f.DataTypeOID))
				}
				continue
			}
			if g.OID != f.DataTypeOID {
				t.Errorf("%s: column %d (%s) typed OID %d, PostgreSQL %d", sql, i+1, f.Name, g.OID, f.DataTypeOID)
			}
			mod := g.Mod
			if mod == 0 {
				mod = -1
			}
			if mod != f.TypeModifier {
				t.Errorf("%s: column %d (%s) modifier %d, PostgreSQL %d", sql, i+1, f.Name, mod, f.TypeModifier)
			}
		}
	}
}

// typeByOID names the types of typeByName by OID ("" for others).
func typeByOID(oid uint32) string {
	for name, g := range typeByName {
		if g.OID == oid {
			return name
		}
	}
	return ""
}

// engines is one connection to each of PostgreSQL, MariaDB and SQLite,
// with the schema shepherd knows of them.
type engines struct {
	t     *testing.T
	ctx   context.Context
	env   *Env
	conns []driver.Conn
	dials []driver.Dialect
}

// newEngines connects to fresh databases of the three engines.
func newEngines(t *testing.T, ctx context.Context) *engines {
	en := &engines{t: t, ctx: ctx, env: &Env{Replicas: map[driver.Dialect][]string{
		driver.Postgres: {"pg"}, driver.MySQL: {"maria"}, driver.SQLite: {"lite"},
	}}}
	for _, r := range []struct {
		driver string
		spec   driver.Spec
	}{
		{"postgres", driver.Spec{Name: "pg", DSN: testenv.Postgres(t)}},
		{"mysql", driver.Spec{Name: "maria", DSN: testenv.MariaDB(t)}},
		{"sqlite", driver.Spec{Name: "lite", DSN: "d.db", DataDir: t.TempDir()}},
	} {
		open, ok := driver.Lookup(r.driver)
		if !ok {
			t.Fatalf("no driver %s", r.driver)
		}
		e, err := open(ctx, r.spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		en.conns, en.dials = append(en.conns, c), append(en.dials, e.Dialect())
	}
	return en
}

// run runs st on every engine with NULL parameters and returns the
// answers, PostgreSQL's first (nil for an engine that failed).
func (en *engines) run(st *Stmt) []*answer.Answer {
	out := make([]*answer.Answer, len(en.conns))
	for i, c := range en.conns {
		sql, order := st.For(en.dials[i])
		n := st.NumParams + len(st.Pins)
		if order != nil {
			n = len(order)
		}
		args := make([]driver.Arg, n)
		for j := range args {
			args[j] = driver.Arg{Null: true}
		}
		a, err := c.Exec(en.ctx, driver.Query{SQL: sql, Args: args, ReturnsRows: st.ReturnsRows, Verb: st.Verb})
		if err != nil {
			en.t.Errorf("%s on %v: %s: %v", st.SQL, en.dials[i], sql, err)
			continue
		}
		out[i] = a
	}
	return out
}

// exec parses and runs statements, recording DDL in the schema.
func (en *engines) exec(sqls ...string) {
	for _, sql := range sqls {
		st, err := ParseOneIn(sql, en.env)
		if err != nil {
			en.t.Fatalf("%s: %v", sql, err)
		}
		en.run(st)
		if st.Kind == DDL {
			snap, err := en.env.Schema.Apply(st.Tree())
			if err != nil {
				en.t.Fatal(err)
			}
			en.env = &Env{Replicas: en.env.Replicas, Schema: snap}
		}
	}
}

// TestDescribeOnEngines runs describe forms on PostgreSQL, MariaDB and
// SQLite with every parameter NULL, as the session does: each must run
// and return no rows, even where NULL parameters would make a scalar
// subquery find several rows (MariaDB evaluates uncorrelated subqueries
// while planning), a LIMIT take NULL, or two columns share a name.
func TestDescribeOnEngines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	en := newEngines(t, ctx)
	en.exec(
		`CREATE TABLE emp (id integer PRIMARY KEY, name text, dept_id integer, salary numeric(10,2), bonus numeric(10,2), hired date)`,
		`CREATE TABLE dept (id integer PRIMARY KEY, name text)`,
		`INSERT INTO emp VALUES (1, 'a', 1, 10, NULL, DATE '2020-01-01'), (2, 'b', 1, 20, NULL, DATE '2021-01-01'), (3, 'c', 2, 30, 5, DATE '2022-01-01')`,
		`INSERT INTO dept VALUES (1, 'x'), (2, 'y')`,
	)
	env := en.env
	for _, sql := range []string{
		`SELECT id FROM emp ORDER BY id LIMIT $1 OFFSET $2`,
		`SELECT count(*) FROM emp WHERE bonus IS NOT DISTINCT FROM $1`,
		`SELECT (SELECT id FROM emp WHERE bonus IS NOT DISTINCT FROM $1) AS x`,
		`SELECT id FROM emp WHERE salary = (SELECT salary FROM emp WHERE bonus IS NOT DISTINCT FROM $1)`,
		`SELECT dept_id, count(*) FROM emp GROUP BY dept_id HAVING count(*) > (SELECT count(*) FROM emp WHERE bonus IS NOT DISTINCT FROM $1) - 2`,
		`SELECT e.id, d.id FROM emp e JOIN dept d ON d.id = e.dept_id WHERE e.id = $1`,
		`SELECT 1, 1`,
		`SELECT id FROM (SELECT id FROM emp ORDER BY id LIMIT $1) AS s`,
		`SELECT id FROM emp UNION SELECT id FROM dept ORDER BY 1 LIMIT $1`,
		`SELECT name FROM emp WHERE hired >= $1 ORDER BY name FOR UPDATE`,
		`INSERT INTO dept (id, name) VALUES ($1, $2) RETURNING id, name`,
		`DELETE FROM dept WHERE id = $1 RETURNING name`,
	} {
		st, err := ParseOneIn(sql, env)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		d := st.Describe()
		if d == nil {
			t.Errorf("%s: no describe form", sql)
			continue
		}
		for _, a := range en.run(d) {
			if a != nil && (len(a.Rows) != 0 || len(a.Columns) != len(st.Columns())) {
				t.Errorf("%s: describe form gave %d rows, %d columns; want 0 rows, %d columns", sql, len(a.Rows), len(a.Columns), len(st.Columns()))
			}
		}
	}
}

// FuzzColumns: working out result columns and describe forms never
// panics, whatever the statement.
func FuzzColumns(f *testing.F) {
	for _, s := range columnsQueries {
		f.Add(s)
	}
	f.Add("SELECT (x).y, a[1], t.*, * FROM t, LATERAL (SELECT * FROM u) AS v (a) JOIN w USING (k)")
	f.Add("WITH RECURSIVE r AS (SELECT 1 UNION SELECT 2) SELECT * FROM r, generate_series(1, 2) WITH ORDINALITY")
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := ParseOneIn(sql, pgOnly)
		if err != nil || st == nil {
			return
		}
		st.Columns()
		st.KnownColumns()
		st.DigestHints()
		if d := st.Describe(); d != nil {
			d.Columns()
		}
	})
}

// TestShapeOnEngines: the answers of MariaDB and SQLite, shaped by the
// guesses, read as PostgreSQL's own, text for text, where the engines
// hold the same values: timestamps with time zone with their +00, dates,
// booleans, char(n) padded also where PostgreSQL reports no modifier,
// floats, uuids.
func TestShapeOnEngines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	en := newEngines(t, ctx)
	en.exec(
		`CREATE TABLE ty (id integer PRIMARY KEY, ts timestamp, tz timestamptz, d date, f4 real, f8 double precision, b boolean, n numeric(10,2), c char(3), u uuid)`,
		`INSERT INTO ty VALUES (1, TIMESTAMP '2024-01-01 10:00:00', TIMESTAMPTZ '2024-01-01 10:00:00+02', DATE '2024-01-02', 0.5, 1e20, true, 1.5, 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')`,
		`INSERT INTO ty VALUES (2, TIMESTAMP '2024-01-01 10:00:00.5', TIMESTAMPTZ '2024-01-01 10:00:00.25+00', DATE '2024-02-29', 0.25, 0.1, false, 2, 'xyz', NULL)`,
	)
	for _, sql := range []string{
		`SELECT id, ts, tz, d, f4, f8, b, n, c, u FROM ty ORDER BY id`,
		`SELECT id, max(c), min(c), max(tz), min(d), max(n), NOT b FROM ty GROUP BY id, b ORDER BY id`,
		`SELECT id, lag(c) OVER (ORDER BY id), first_value(tz) OVER (ORDER BY id) FROM ty ORDER BY id`,
		`SELECT sum(n), max(n), min(n * 2), max(n + 1), min(-n), max(abs(n)), max(round(n, 1)), min(n * n) FROM ty`,
		`SELECT id, n * 3, n - 0.125, f8 * 2, f4 + f4 FROM ty ORDER BY id`,
		`SELECT c, tz FROM (SELECT c, tz FROM ty UNION ALL SELECT c, tz FROM ty) AS s ORDER BY c, tz`,
	} {
		st, err := ParseOneIn(sql, en.env)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		answers := en.run(st)
		if answers[0] == nil {
			continue
		}
		want := rowsText(ShapeAnswer(answers[0], st.Columns()))
		for i, a := range answers[1:] {
			if a == nil {
				continue
			}
			if got := rowsText(ShapeAnswer(a, st.Columns())); got != want {
				t.Errorf("%s on %v:\n got %s\nwant %s", sql, en.dials[i+1], got, want)
			}
		}
	}
}

// rowsText prints an answer's rows.
func rowsText(a *answer.Answer) string {
	var b strings.Builder
	for _, row := range a.Rows {
		b.WriteString("(")
		for i, v := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			if v.Null {
				b.WriteString("NULL")
			} else {
				b.WriteString(strconv.Quote(v.Text))
			}
		}
		b.WriteString(") ")
	}
	return b.String()
}

func TestDataModifyingWithIsAWrite(t *testing.T) {
	st, err := ParseOneIn("WITH d AS (DELETE FROM t RETURNING id) SELECT count(*) FROM d",
		&Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"p"}}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != Write {
		t.Errorf("kind %v, want write", st.Kind)
	}
}
