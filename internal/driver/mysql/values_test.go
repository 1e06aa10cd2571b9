package mysql_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func connect(t *testing.T, e driver.Engine) driver.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(c driver.Conn, verb, sql string, args ...driver.Arg) (*answer.Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Exec(ctx, driver.Query{SQL: sql, Args: args, Verb: verb, ReturnsRows: verb == "SELECT"})
}

func engine(t *testing.T) driver.Engine {
	e, err := open(t, testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestMySQLTypes covers the MySQL types the conformance suite does not.
func TestMySQLTypes(t *testing.T) {
	c := connect(t, engine(t))
	if _, err := run(c, "CREATE TABLE", `CREATE TABLE more (f float, b bit(10), tm time(3), y year,
		u bigint unsigned, dt datetime, j json, e enum('x','y'))`); err != nil {
		t.Fatal(err)
	}
	_, err := run(c, "INSERT", "INSERT INTO more VALUES (3.14, b'1000000001', '12:34:56.500', 2024, 18446744073709551615, '2024-01-02 03:04:05', '{\"a\": 1}', 'y')")
	if err != nil {
		t.Fatal(err)
	}
	for _, viaArgs := range []bool{false, true} {
		// With arguments go-sql-driver uses the binary protocol, without
		// them the text protocol; both must read the same.
		q := "SELECT f, b, tm, y, u, dt, j, e FROM more"
		var args []driver.Arg
		if viaArgs {
			q += " WHERE 1 = ?"
			args = []driver.Arg{{Type: answer.Int, Text: "1"}}
		}
		a, err := run(c, "SELECT", q, args...)
		if err != nil {
			t.Fatal(err)
		}
		var got, types []string
		for i, v := range a.Rows[0] {
			got = append(got, v.Text)
			types = append(types, a.Columns[i].Type.String())
		}
		want := []string{"3.14", "513", "12:34:56.5", "2024", "18446744073709551615", "2024-01-02 03:04:05", `{"a": 1}`, "y"}
		if !slices.Equal(got, want) {
			t.Errorf("args=%v: values %q, want %q", viaArgs, got, want)
		}
		wantTypes := []string{"float", "int", "time", "int", "numeric", "timestamp", "text", "text"}
		if !slices.Equal(types, wantTypes) {
			t.Errorf("args=%v: types %q, want %q", viaArgs, types, wantTypes)
		}
	}
}

func TestMySQLDataErrors(t *testing.T) {
	c := connect(t, engine(t))
	if _, err := run(c, "CREATE TABLE", "CREATE TABLE d (i int, day date, s varchar(3), n numeric(3,0))"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		what, sql string
		code      string
	}{
		{"bad integer", "INSERT INTO d (i) VALUES ('abc')", pgerr.InvalidTextRepresentation},
		{"bad date", "INSERT INTO d (day) VALUES ('2024-13-45')", "22007"},
		{"too long", "INSERT INTO d (s) VALUES ('abcd')", pgerr.StringDataRightTruncation},
		{"out of range", "INSERT INTO d (n) VALUES (12345)", pgerr.NumericValueOutOfRange},
		{"division by zero", "INSERT INTO d (i) VALUES (1 / 0)", pgerr.DivisionByZero},
	}
	for _, tc := range cases {
		_, err := run(c, "INSERT", tc.sql)
		if got := pgerr.Code(err); got != tc.code {
			t.Errorf("%s: SQLSTATE %s (%v), want %s", tc.what, got, err, tc.code)
		}
	}
}

// TestCancelLockWait cancels a statement waiting for a row lock: KILL
// QUERY ends the wait with PostgreSQL's 57014, the session survives, and
// the lock holder is not disturbed.
func TestCancelLockWait(t *testing.T) {
	e := engine(t)
	holder, waiter := connect(t, e), connect(t, e)
	for _, s := range []string{"CREATE TABLE acct (id int PRIMARY KEY, n int)", "INSERT INTO acct VALUES (1, 0)"} {
		if _, err := run(holder, "", s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := holder.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(holder, "UPDATE", "UPDATE acct SET n = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer stop()
	_, err := waiter.Exec(short, driver.Query{SQL: "UPDATE acct SET n = 2 WHERE id = 1", Verb: "UPDATE"})
	if got := pgerr.Code(err); got != pgerr.QueryCanceled {
		t.Fatalf("cancelled lock wait: SQLSTATE %s (%v), want 57014", got, err)
	}
	// The client sees PostgreSQL's words, not MariaDB's "Query execution
	// was interrupted".
	if msg := pgerr.From(err).Message; msg != "canceling statement due to user request" {
		t.Errorf("cancelled lock wait: message %q, want PostgreSQL's", msg)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := run(waiter, "SELECT", "SELECT n FROM acct")
	if err != nil {
		t.Fatalf("session after cancel: %v", err)
	}
	if v := a.Rows[0][0].Text; v != "1" {
		t.Errorf("n = %s, want 1 (the cancelled update must not apply)", v)
	}
}

// engineSet is one database on each engine the canonical-form test
// compares: PostgreSQL, MariaDB and both SQLite builds.
type engineSet struct {
	names []string
	conns []driver.Conn
	// dialect index per conn: 0 PostgreSQL, 1 MariaDB, 2 SQLite.
	dialects []int
}

func openEngineSet(t *testing.T) engineSet {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var set engineSet
	add := func(name string, dialect int, e driver.Engine, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { e.Close() })
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { c.Close() })
		set.names = append(set.names, name)
		set.conns = append(set.conns, c)
		set.dialects = append(set.dialects, dialect)
	}
	// The database's own defaults print values otherwise (escaped bytea,
	// SQL DateStyle, another time zone, 15-digit floats): the driver's
	// session settings must win.
	pg, err := postgres.Open(ctx, driver.Spec{Name: "pg", DSN: testenv.Postgres(t)})
	if err != nil {
		t.Fatal(err)
	}
	setup, err := pg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = setup.Exec(ctx, driver.Query{SQL: `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET bytea_output = escape', current_database());
		EXECUTE format('ALTER DATABASE %I SET DateStyle = ''SQL, DMY''', current_database());
		EXECUTE format('ALTER DATABASE %I SET TimeZone = ''Asia/Kolkata''', current_database());
		EXECUTE format('ALTER DATABASE %I SET extra_float_digits = 0', current_database());
		END $$`, Verb: "DO"})
	setup.Close()
	if err != nil {
		t.Fatal(err)
	}
	add("postgres", 0, pg, nil)
	maria, err := open(t, testenv.MariaDB(t))
	add("mariadb", 1, maria, err)
	dir := t.TempDir()
	for _, name := range []string{sqlite.Pure, sqlite.CGo} {
		openLite, ok := driver.Lookup(name)
		if !ok {
			t.Fatalf("driver %s not registered", name)
		}
		e, err := openLite(ctx, driver.Spec{Name: name, DSN: name + ".db", DataDir: dir})
		add(name, 2, e, err)
	}
	return set
}

// lit is a value written as an SQL literal per dialect (PostgreSQL,
// MariaDB, SQLite), as the DDL/DML translator writes it; one entry
// stands for all three.
type lit []string

func (l lit) in(dialect int) string {
	if len(l) == 1 {
		return l[0]
	}
	return l[dialect]
}

// canonColumn is a column of the type mapping the translator follows,
// with a value, values that mean the same, and one that means
// something slightly different.
type canonColumn struct {
	name      string
	types     [3]string // PostgreSQL, MariaDB, SQLite
	base      lit
	same      []lit
	diff      lit
	needsHint bool // MariaDB cannot tell the PostgreSQL type by itself
}

var canonColumns = []canonColumn{
	{name: "flag", types: [3]string{"boolean", "BOOLEAN", "BOOLEAN"}, base: lit{"TRUE"},
		same: []lit{{"'t'", "1", "'true'"}}, diff: lit{"FALSE"}},
	{name: "small", types: [3]string{"smallint", "SMALLINT", "SMALLINT"}, base: lit{"7"}, diff: lit{"8"}},
	{name: "big", types: [3]string{"bigint", "BIGINT", "BIGINT"}, base: lit{"9000000000"}, diff: lit{"9000000001"}},
	{name: "num", types: [3]string{"numeric(12,2)", "DECIMAL(12,2)", "NUMERIC(12,2)"}, base: lit{"1.50"},
		same: []lit{{"1.5"}}, diff: lit{"1.49"}},
	{name: "whole", types: [3]string{"numeric(12,2)", "DECIMAL(12,2)", "NUMERIC(12,2)"}, base: lit{"3.00"},
		same: []lit{{"3"}}, diff: lit{"3.01"}},
	// real: PostgreSQL keeps a float32; MariaDB's FLOAT prints only six
	// digits, so the translator uses DOUBLE and the digest a float4 hint.
	{name: "r", types: [3]string{"real", "DOUBLE", "REAL"}, base: lit{"3.14159265"},
		same: []lit{{"3.1415927"}}, diff: lit{"3.1415925"}, needsHint: true},
	{name: "dbl", types: [3]string{"double precision", "DOUBLE", "DOUBLE PRECISION"}, base: lit{"1e20"},
		same: []lit{{"100000000000000000000"}}, diff: lit{"2e20"}},
	{name: "zero", types: [3]string{"double precision", "DOUBLE", "DOUBLE PRECISION"}, base: lit{"0"},
		same: []lit{{"-0.0"}}, diff: lit{"5e-324"}},
	{name: "txt", types: [3]string{"text", "LONGTEXT", "TEXT"}, base: lit{"'héllo '"}, diff: lit{"'héllo'"}},
	{name: "vc", types: [3]string{"varchar(20)", "VARCHAR(20)", "VARCHAR(20)"}, base: lit{"'ab'"}, diff: lit{"'ab '"}},
	{name: "ch", types: [3]string{"char(5)", "CHAR(5)", "CHAR(5)"}, base: lit{"'ab'"},
		same: []lit{{"'ab  '"}}, diff: lit{"' ab'"}},
	{name: "empty", types: [3]string{"text", "LONGTEXT", "TEXT"}, base: lit{"''"}, diff: lit{"'NULL'"}},
	{name: "bin", types: [3]string{"bytea", "LONGBLOB", "BLOB"}, base: lit{`'\x00ff'`, "x'00ff'", "x'00ff'"},
		diff: lit{`'\x00fe'`, "x'00fe'", "x'00fe'"}},
	{name: "day", types: [3]string{"date", "DATE", "DATE TEXT"}, base: lit{"'2026-01-01'"}, diff: lit{"'2026-01-02'"}},
	{name: "tod", types: [3]string{"time", "TIME(6)", "TIME TEXT"}, base: lit{"'10:00:00.5'"},
		same: []lit{{"'10:00:00.500'"}}, diff: lit{"'10:00:00.500001'"}},
	{name: "ts", types: [3]string{"timestamp", "DATETIME(6)", "TIMESTAMP TEXT"}, base: lit{"'2026-01-01 10:00:00.5'"},
		same: []lit{{"'2026-01-01 10:00:00.5'", "'2026-01-01 10:00:00.5'", "'2026-01-01T10:00:00.500'"}},
		diff: lit{"'2026-01-01 10:00:00.500001'"}},
	// timestamptz: MariaDB stores the UTC time (the session's zone is
	// +00:00); SQLite keeps the text with its offset.
	{name: "tstz", types: [3]string{"timestamptz", "DATETIME(6)", "TIMESTAMPTZ TEXT"},
		base: lit{"'2026-01-01 12:00:00.5+02'", "'2026-01-01 10:00:00.5'", "'2026-01-01 12:00:00.5+02'"},
		same: []lit{{"'2026-01-01 10:00:00.5+00'", "'2026-01-01 10:00:00.5'", "'2026-01-01T11:00:00.5+01:00'"}},
		diff: lit{"'2026-01-01 12:00:00.5+03'", "'2026-01-01 09:00:00.5'", "'2026-01-01 12:00:00.5+03'"}},
	// uuid: MariaDB keeps the canonical text, which shepherd writes for
	// every uuid before MariaDB sees it.
	{name: "u", types: [3]string{"uuid", "CHAR(36)", "UUID"},
		base: lit{"'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'"},
		same: []lit{{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}}, diff: lit{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'"}},
	// MariaDB reports a JSON column as text: the digest needs a hint.
	{name: "j", types: [3]string{"jsonb", "JSON", "JSONTEXT"}, base: lit{`'{"b": [1, 2.0], "a": "x"}'`},
		same: []lit{{`'{"a":"x","b":[1,2]}'`}}, diff: lit{`'{"b": [1, 2.5], "a": "x"}'`}, needsHint: true},
}

// TestCanonicalAcrossEngines creates the translator's type mapping on
// PostgreSQL, MariaDB and both SQLite builds, inserts the same values
// (and other spellings of them) everywhere, and checks every row has the
// same digest on every engine, while a row with one value changed has
// another. Hints are what PostgreSQL says the columns are.
func TestCanonicalAcrossEngines(t *testing.T) {
	set := openEngineSet(t)
	var ddl [3][]string
	for _, c := range canonColumns {
		for d := range 3 {
			ddl[d] = append(ddl[d], c.name+" "+c.types[d])
		}
	}
	// Rows: 0 the base values, then per column its other spellings
	// (same digest as row 0) and its changed value (another digest).
	type row struct {
		id     int
		vals   []lit
		sameAs int // the row whose digest it must equal, -1 for "differs from 0"
		what   string
		column int // the column it varies, -1 for none
	}
	base := make([]lit, len(canonColumns))
	for i, c := range canonColumns {
		base[i] = c.base
	}
	rows := []row{{id: 0, vals: base, sameAs: 0, what: "base", column: -1}}
	nullRow := make([]lit, len(canonColumns))
	for i := range nullRow {
		nullRow[i] = lit{"NULL"}
	}
	rows = append(rows, row{id: 1, vals: nullRow, sameAs: -1, what: "all NULL", column: -1})
	for i, c := range canonColumns {
		for _, s := range c.same {
			vals := slices.Clone(base)
			vals[i] = s
			rows = append(rows, row{id: len(rows), vals: vals, sameAs: 0, what: c.name + " = " + s.in(0), column: i})
		}
		vals := slices.Clone(base)
		vals[i] = c.diff
		rows = append(rows, row{id: len(rows), vals: vals, sameAs: -1, what: c.name + " = " + c.diff.in(0), column: i})
	}
	var names []string
	for _, c := range canonColumns {
		names = append(names, c.name)
	}
	for k, c := range set.conns {
		d := set.dialects[k]
		if _, err := run(c, "CREATE TABLE", "CREATE TABLE canon (id int PRIMARY KEY, "+strings.Join(ddl[d], ", ")+")"); err != nil {
			t.Fatalf("%s: %v", set.names[k], err)
		}
		for _, r := range rows {
			var vals []string
			for _, v := range r.vals {
				vals = append(vals, v.in(d))
			}
			sql := fmt.Sprintf("INSERT INTO canon (id, %s) VALUES (%d, %s)", strings.Join(names, ", "), r.id, strings.Join(vals, ", "))
			if _, err := run(c, "INSERT", sql); err != nil {
				t.Fatalf("%s: %s: %v", set.names[k], sql, err)
			}
		}
	}
	// The digest of one row per engine, with hints from PostgreSQL's
	// columns, and without for the columns that need none.
	var plain []string
	for _, c := range canonColumns {
		if !c.needsHint {
			plain = append(plain, c.name)
		}
	}
	digests := func(id int, cols []string, hinted bool) ([]answer.Digest, []*answer.Answer) {
		q := fmt.Sprintf("SELECT %s FROM canon WHERE id = %d", strings.Join(cols, ", "), id)
		var ds []answer.Digest
		var as []*answer.Answer
		var hints []answer.Column
		for k, c := range set.conns {
			a, err := run(c, "SELECT", q)
			if err != nil {
				t.Fatalf("%s: %s: %v", set.names[k], q, err)
			}
			if k == 0 && hinted {
				hints = a.Columns
			}
			ds = append(ds, a.DigestWith(true, hints))
			as = append(as, a)
		}
		return ds, as
	}
	if _, as := digests(0, names, true); testing.Verbose() {
		for k, a := range as {
			t.Logf("base row on %s:%s", set.names[k], show(a))
		}
	}
	for _, hinted := range []bool{true, false} {
		cols := names
		if !hinted {
			cols = plain
		}
		baseDigests, _ := digests(0, cols, hinted)
		for _, r := range rows {
			if !hinted && r.column >= 0 && canonColumns[r.column].needsHint {
				continue // the column is not selected
			}
			ds, as := digests(r.id, cols, hinted)
			for k := 1; k < len(ds); k++ {
				if ds[k] != ds[0] {
					t.Errorf("hints=%v, row %q: %s and %s disagree:\n%s\n%s", hinted, r.what, set.names[0], set.names[k], show(as[0]), show(as[k]))
				}
			}
			for k := range ds {
				switch {
				case r.sameAs == 0 && ds[k] != baseDigests[k]:
					t.Errorf("hints=%v, row %q on %s: another digest than the base row:\n%s", hinted, r.what, set.names[k], show(as[k]))
				case r.sameAs < 0 && ds[k] == baseDigests[k]:
					t.Errorf("hints=%v, row %q on %s: the base row's digest", hinted, r.what, set.names[k])
				}
			}
		}
	}
	// Without a hint, MariaDB's JSON text and DOUBLE do not pass for
	// PostgreSQL's jsonb and real: that is what the hints are for.
	for _, c := range canonColumns {
		if !c.needsHint {
			continue
		}
		if ds, _ := digests(0, []string{c.name}, false); ds[0] == ds[1] {
			t.Errorf("%s: MariaDB agrees without a hint; drop needsHint", c.name)
		}
	}
}

// TestCanonicalExpressions: values computed by expressions, which SQLite
// does not type, agree across engines: booleans against integers (a
// BOOLEAN column in MariaDB is TINYINT(1): comparisons, NOT, OR,
// COALESCE and WHERE on it answer as PostgreSQL's boolean does), numeric
// against float arithmetic; a timestamp that is text in SQLite needs the
// hint.
func TestCanonicalExpressions(t *testing.T) {
	set := openEngineSet(t)
	ddl := [3]string{
		"CREATE TABLE x (id int, n numeric(10,2), ts timestamptz, flag boolean)",
		"CREATE TABLE x (id int, n DECIMAL(10,2), ts DATETIME(6), flag BOOLEAN CHECK (flag IN (0, 1)))",
		"CREATE TABLE x (id int, n NUMERIC(10,2), ts TIMESTAMPTZ TEXT, flag BOOLEAN CHECK (flag IN (0, 1)))",
	}
	insert := [3]string{
		"INSERT INTO x VALUES (1, 1.25, '2026-01-01 12:00:00+02', TRUE), (2, 2.50, '2026-01-01 09:00:00+00', FALSE), (3, NULL, NULL, NULL)",
		"INSERT INTO x VALUES (1, 1.25, '2026-01-01 10:00:00', TRUE), (2, 2.50, '2026-01-01 09:00:00', FALSE), (3, NULL, NULL, NULL)",
		"INSERT INTO x VALUES (1, 1.25, '2026-01-01 12:00:00+02', TRUE), (2, 2.50, '2026-01-01 09:00:00Z', FALSE), (3, NULL, NULL, NULL)",
	}
	for k, c := range set.conns {
		for _, s := range []string{ddl[set.dialects[k]], insert[set.dialects[k]]} {
			if _, err := run(c, "", s); err != nil {
				t.Fatalf("%s: %s: %v", set.names[k], s, err)
			}
		}
	}
	queries := []struct {
		sql   string
		hints []answer.Column
	}{
		{"SELECT id, n > 2, n * 2, n + 1, id = 1 FROM x", nil},
		{"SELECT sum(n), count(*), max(id) FROM x", nil},
		{"SELECT 1 > 2, 2 > 1, 1.50, 3.00 * 1", nil},
		{"SELECT ts FROM x WHERE id = 1", nil},
		{"SELECT id, flag, flag = TRUE, NOT flag, flag OR FALSE, flag AND TRUE, COALESCE(flag, FALSE) FROM x", nil},
		{"SELECT count(*) FROM x WHERE flag", nil},
		{"SELECT id FROM x WHERE NOT flag", nil},
		{"SELECT count(flag), count(*) FROM x", nil},
		{"SELECT max(ts) FROM x WHERE id = 1", []answer.Column{{Type: answer.TimestampTZ}}},
	}
	for _, q := range queries {
		var first answer.Digest
		var firstAnswer *answer.Answer
		for k, c := range set.conns {
			a, err := run(c, "SELECT", q.sql)
			if err != nil {
				t.Fatalf("%s: %s: %v", set.names[k], q.sql, err)
			}
			d := a.DigestWith(false, q.hints)
			if k == 0 {
				first, firstAnswer = d, a
			} else if d != first {
				t.Errorf("%s: %s disagrees with %s:\n%s\n%s", q.sql, set.names[k], set.names[0], show(firstAnswer), show(a))
			}
		}
	}
}

// show renders an answer's values with their families for messages.
func show(a *answer.Answer) string {
	var b strings.Builder
	for _, r := range a.Rows {
		for j, v := range r {
			typ := v.Type
			if typ == answer.Unknown && j < len(a.Columns) {
				typ = a.Columns[j].Type
			}
			if v.Null {
				fmt.Fprintf(&b, " NULL")
			} else {
				fmt.Fprintf(&b, " %v:%q", typ, v.Text)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
