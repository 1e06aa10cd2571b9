// Package drivertest is the conformance suite every replica driver runs
// against its real engine: connecting, typed values in canonical form,
// command tags, transactions, error classification and cancellation.
//
// A driver's test calls Run with a function that opens an engine on a
// fresh, empty database:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, func(t *testing.T) driver.Engine { ... })
//	}
//
// Where engines really print a value differently, the suite asserts each
// engine's own value and says so in a comment marked "Engines differ";
// those are the differences the voting layer has to normalise.
package drivertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Opener opens an engine on a fresh, empty database. Run closes it.
type Opener func(t *testing.T) driver.Engine

// stepTimeout bounds every statement of the suite but the cancelled one.
const stepTimeout = 30 * time.Second

// Run runs the conformance suite. Each case gets its own engine and
// checks that it leaves no goroutine behind once the engine is closed.
func Run(t *testing.T, open Opener) {
	cases := []struct {
		name string
		f    func(t *testing.T, e driver.Engine)
	}{
		{"Identity", testIdentity},
		{"Values", testValues},
		{"Expressions", testExpressions},
		{"Floats", testFloats},
		{"Tags", testTags},
		{"Transactions", testTransactions},
		{"SecondConnSeesCommitted", testSecondConn},
		{"Errors", testErrors},
		{"Cancel", testCancel},
		{"Sink", testSink},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			e := open(t)
			// Registered before the case's own cleanups, so it runs after
			// them, once every Conn is closed.
			t.Cleanup(func() {
				if err := e.Close(); err != nil {
					t.Errorf("Engine.Close: %v", err)
				}
				goleak.VerifyNone(t, before,
					// testenv's servers start on first use and outlive the case.
					goleak.IgnoreAnyFunction("github.com/shepherd-db/shepherd/internal/testenv.startProcess.func1"),
					goleak.IgnoreAnyFunction("os/exec.(*Cmd).Wait"))
			})
			tc.f(t, e)
		})
	}
}

// dialect holds what the suite writes differently per SQL dialect.
type dialect struct {
	// kindsDDL creates table kinds with one column of each basic type.
	kindsDDL string
	// sleep runs for far longer than any test and can only end by cancel.
	sleep string
}

var dialects = map[driver.Dialect]dialect{
	driver.Postgres: {
		kindsDDL: `CREATE TABLE kinds (id int PRIMARY KEY, big bigint, num numeric(12,2),
			dbl double precision, vc varchar(20), txt text NOT NULL, flag boolean,
			day date, ts timestamp, bin bytea)`,
		sleep: "SELECT pg_sleep(600)",
	},
	driver.MySQL: {
		// MySQL's TIMESTAMP is a UTC instant with odd defaults; DATETIME(6)
		// is the counterpart of PostgreSQL's timestamp.
		kindsDDL: `CREATE TABLE kinds (id int PRIMARY KEY, big bigint, num numeric(12,2),
			dbl double precision, vc varchar(20), txt text NOT NULL, flag boolean,
			day date, ts datetime(6), bin blob)`,
		sleep: "SELECT SLEEP(600)",
	},
	driver.SQLite: {
		kindsDDL: `CREATE TABLE kinds (id int PRIMARY KEY, big bigint, num numeric(12,2),
			dbl double precision, vc varchar(20), txt text NOT NULL, flag boolean,
			day date, ts timestamp, bin blob)`,
		sleep: `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000000)
			SELECT count(*) FROM c`,
	},
	driver.DuckDB: {
		kindsDDL: `CREATE TABLE kinds (id int PRIMARY KEY, big bigint, num numeric(12,2),
			dbl double precision, vc varchar(20), txt text NOT NULL, flag boolean,
			day date, ts timestamp, bin bytea)`,
		sleep: "SELECT count(*) FROM range(1000000000000) a",
	},
}

// placeholders returns n parameter markers in e's dialect, comma-separated.
func placeholders(e driver.Engine, n int) string {
	p := make([]string, n)
	for i := range p {
		if e.Dialect() == driver.Postgres || e.Dialect() == driver.DuckDB {
			p[i] = fmt.Sprintf("$%d", i+1)
		} else {
			p[i] = "?"
		}
	}
	return strings.Join(p, ", ")
}

func connect(t *testing.T, e driver.Engine) driver.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Conn.Close: %v", err)
		}
	})
	return c
}

// try runs one statement and returns its answer or error.
func try(c driver.Conn, verb, sql string, args ...driver.Arg) (*answer.Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	q := driver.Query{SQL: sql, Args: args, Verb: verb, ReturnsRows: verb == "SELECT"}
	return c.Exec(ctx, q)
}

// must runs one statement and fails the test on error.
func must(t *testing.T, c driver.Conn, verb, sql string, args ...driver.Arg) *answer.Answer {
	t.Helper()
	a, err := try(c, verb, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", oneLine(sql), err)
	}
	return a
}

// wantCode checks err is a *pgerr.Error with SQLSTATE code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var pe *pgerr.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want SQLSTATE %s", what, code)
	case !errors.As(err, &pe):
		t.Errorf("%s: error %v (%T) is not a *pgerr.Error", what, err, err)
	case pe.Code != code:
		t.Errorf("%s: SQLSTATE %s (%v), want %s", what, pe.Code, err, code)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cells renders an answer's rows as "family:text" (or NULL), the family
// being the value's own or else its column's.
func cells(a *answer.Answer) [][]string {
	out := make([][]string, len(a.Rows))
	for i, r := range a.Rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			if v.Null {
				out[i][j] = "NULL"
				continue
			}
			typ := v.Type
			if typ == answer.Unknown {
				typ = a.Columns[j].Type
			}
			out[i][j] = typ.String() + ":" + v.Text
		}
	}
	return out
}

func columnTypes(a *answer.Answer) []string {
	out := make([]string, len(a.Columns))
	for i, c := range a.Columns {
		out[i] = c.Type.String()
	}
	return out
}

func checkRows(t *testing.T, what string, a *answer.Answer, want [][]string) {
	t.Helper()
	got := cells(a)
	if len(got) != len(want) {
		t.Errorf("%s: %d rows %q, want %d rows %q", what, len(got), got, len(want), want)
		return
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("%s row %d:\n got %q\nwant %q", what, i, got[i], want[i])
		}
	}
}

func checkTag(t *testing.T, what string, a *answer.Answer, tag string, n int64) {
	t.Helper()
	if a.Tag != tag || a.RowsAffected != n {
		t.Errorf("%s: tag %q, %d rows; want %q, %d", what, a.Tag, a.RowsAffected, tag, n)
	}
}

func testIdentity(t *testing.T, e driver.Engine) {
	if !slices.Contains(driver.Names(), e.Driver()) {
		t.Errorf("driver %q is not registered (have %v)", e.Driver(), driver.Names())
	}
	want := map[driver.Dialect]driver.Class{
		driver.Postgres: driver.MVCC,
		driver.MySQL:    driver.Locking,
		driver.SQLite:   driver.Serial,
		driver.DuckDB:   driver.Serial,
	}
	if got := e.Class(); got != want[e.Dialect()] {
		t.Errorf("%s: class %v, want %v", e.Dialect(), got, want[e.Dialect()])
	}
	c := connect(t, e)
	a := must(t, c, "SELECT", "SELECT 1")
	checkRows(t, "SELECT 1", a, [][]string{{"int:1"}})
	checkTag(t, "SELECT 1", a, "SELECT 1", 1)
}

func typed(ty answer.Type, text string) driver.Arg { return driver.Arg{Type: ty, Text: text} }
func untyped(text string) driver.Arg               { return driver.Arg{Text: text} }

var null = driver.Arg{Null: true}

// tricky holds bytes that survive no careless encoding: NUL, a backslash,
// a quote and a byte that is not UTF-8.
const tricky = "\x00\\x'\xff"

func testValues(t *testing.T, e driver.Engine) {
	d := dialects[e.Dialect()]
	c := connect(t, e)
	must(t, c, "CREATE TABLE", d.kindsDDL)
	insert := "INSERT INTO kinds (id, big, num, dbl, vc, txt, flag, day, ts, bin) VALUES (" + placeholders(e, 10) + ")"
	rows := [][]driver.Arg{
		{typed(answer.Int, "1"), typed(answer.Int, "9000000000"), typed(answer.Numeric, "12.50"),
			typed(answer.Float, "0.1"), typed(answer.Text, "héllo"), typed(answer.Text, `it's \ "q"`),
			typed(answer.Bool, "t"), typed(answer.Date, "2024-01-02"),
			typed(answer.Timestamp, "2024-01-02 03:04:05.25"), typed(answer.Bytes, tricky)},
		// Booleans stay typed: MySQL has no boolean type to coerce 'f' to.
		{untyped("2"), untyped("-5"), untyped("0.00"), untyped("1e+20"), untyped("b"), untyped("x"),
			typed(answer.Bool, "f"), untyped("1999-12-31"), untyped("2000-01-01 00:00:00"), untyped("abc")},
		{typed(answer.Int, "3"), null, null, null, null, untyped("gone"), null, null, null, null},
	}
	for _, r := range rows {
		a := must(t, c, "INSERT", insert, r...)
		checkTag(t, "insert", a, "INSERT 0 1", 1)
	}
	a := must(t, c, "SELECT", "SELECT id, big, num, dbl, vc, txt, flag, day, ts, bin FROM kinds ORDER BY id")
	checkTag(t, "select", a, "SELECT 3", 3)

	want := [][]string{
		{"int:1", "int:9000000000", "numeric:12.50", "float:0.1", "text:héllo", `text:it's \ "q"`,
			"bool:t", "date:2024-01-02", "timestamp:2024-01-02 03:04:05.25", "bytes:" + tricky},
		{"int:2", "int:-5", "numeric:0.00", "float:1e+20", "text:b", "text:x",
			"bool:f", "date:1999-12-31", "timestamp:2000-01-01 00:00:00", "bytes:abc"},
		{"int:3", "NULL", "NULL", "NULL", "NULL", "text:gone", "NULL", "NULL", "NULL", "NULL"},
	}
	wantTypes := []string{"int", "int", "numeric", "float", "text", "text", "bool", "date", "timestamp", "bytes"}
	switch e.Dialect() {
	case driver.MySQL:
		// Engines differ: MySQL's BOOLEAN is TINYINT(1), an integer.
		want[0][6], want[1][6] = "int:1", "int:0"
		wantTypes[6] = "int"
	case driver.SQLite:
		// Engines differ: SQLite keeps decimals as floats or integers
		// (NUMERIC affinity), so numeric(12,2) loses its scale: 12.50 reads
		// back 12.5, and 0.00 is stored as the integer 0. The digests
		// agree all the same (Int and Numeric compare as decimals).
		want[0][2], want[1][2] = "numeric:12.5", "int:0"
		// Engines differ: untyped text bound to a BLOB column stays text in
		// SQLite (no blob affinity); the others convert it to bytes.
		want[1][9] = "text:abc"
	}
	checkRows(t, "kinds", a, want)
	if got := columnTypes(a); !slices.Equal(got, wantTypes) {
		t.Errorf("column types %q, want %q", got, wantTypes)
	}
	if e.Dialect() == driver.Postgres {
		var oids []uint32
		for _, col := range a.Columns {
			oids = append(oids, col.TypeOID())
		}
		want := []uint32{answer.OIDInt4, answer.OIDInt8, answer.OIDNumeric, answer.OIDFloat8, answer.OIDVarchar,
			answer.OIDText, answer.OIDBool, answer.OIDDate, answer.OIDTimestamp, answer.OIDBytea}
		if !slices.Equal(oids, want) {
			t.Errorf("column OIDs %v, want %v", oids, want)
		}
	}
	if names := a.Columns[0].Name + "," + a.Columns[9].Name; names != "id,bin" {
		t.Errorf("column names %s, want id,bin", names)
	}

	// Parameters are compared the way each engine compares them.
	where := "SELECT txt FROM kinds WHERE id = " + placeholders(e, 1)
	checkRows(t, "typed int parameter", must(t, c, "SELECT", where, typed(answer.Int, "2")), [][]string{{"text:x"}})
	checkRows(t, "untyped parameter", must(t, c, "SELECT", where, untyped("3")), [][]string{{"text:gone"}})
}

func testExpressions(t *testing.T, e driver.Engine) {
	c := connect(t, e)
	// MySQL runs with ANSI_QUOTES and PIPES_AS_CONCAT: "x" is a name and
	// || concatenates, as in the other dialects.
	a := must(t, c, "SELECT", `SELECT 1 + 1 AS "two", 'a' || 'b' AS ab, NULL AS n`)
	checkRows(t, "expressions", a, [][]string{{"int:2", "text:ab", "NULL"}})
	if a.Columns[0].Name != "two" {
		t.Errorf("column name %q, want two", a.Columns[0].Name)
	}
	a = must(t, c, "SELECT", "SELECT 1 WHERE 1 = 0")
	checkTag(t, "empty result", a, "SELECT 0", 0)
	if len(a.Columns) != 1 {
		t.Errorf("empty result has %d columns, want 1", len(a.Columns))
	}
}

func testFloats(t *testing.T, e driver.Engine) {
	c := connect(t, e)
	must(t, c, "CREATE TABLE", "CREATE TABLE floats (f double precision)")
	values := []string{"1e-05", "0.0001", "123.456", "1000000", "1e+15", "-2.5", "0.30000000000000004"}
	for _, v := range values {
		must(t, c, "INSERT", "INSERT INTO floats VALUES ("+placeholders(e, 1)+")", typed(answer.Float, v))
	}
	a := must(t, c, "SELECT", "SELECT f FROM floats ORDER BY f")
	// PostgreSQL's float8 output: shortest round-trip digits, exponent
	// form below 1e-4 and from 1e15.
	want := [][]string{{"float:-2.5"}, {"float:1e-05"}, {"float:0.0001"}, {"float:0.30000000000000004"},
		{"float:123.456"}, {"float:1000000"}, {"float:1e+15"}}
	checkRows(t, "floats", a, want)
}

func testTags(t *testing.T, e driver.Engine) {
	c := connect(t, e)
	a := must(t, c, "CREATE TABLE", "CREATE TABLE items (id int PRIMARY KEY, name varchar(20) NOT NULL)")
	checkTag(t, "create", a, "CREATE TABLE", 0)
	a = must(t, c, "INSERT", "INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	checkTag(t, "insert three", a, "INSERT 0 3", 3)
	// Setting a column to its own value still counts the row, as in
	// PostgreSQL (MySQL would count changed rows without CLIENT_FOUND_ROWS).
	a = must(t, c, "UPDATE", "UPDATE items SET name = name WHERE id IN (1, 2)")
	checkTag(t, "update unchanged", a, "UPDATE 2", 2)
	a = must(t, c, "UPDATE", "UPDATE items SET name = 'z' WHERE id = 99")
	checkTag(t, "update none", a, "UPDATE 0", 0)
	a = must(t, c, "DELETE", "DELETE FROM items WHERE id = 3")
	checkTag(t, "delete", a, "DELETE 1", 1)
	a = must(t, c, "SELECT", "SELECT id FROM items ORDER BY id")
	checkTag(t, "select", a, "SELECT 2", 2)
	a = must(t, c, "DROP TABLE", "DROP TABLE items")
	checkTag(t, "drop", a, "DROP TABLE", 0)
}

// count returns the number of rows of items on c.
func count(t *testing.T, c driver.Conn) string {
	t.Helper()
	a := must(t, c, "SELECT", "SELECT count(*) FROM items")
	return a.Rows[0][0].Text
}

func testTransactions(t *testing.T, e driver.Engine) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	c1, c2 := connect(t, e), connect(t, e)
	must(t, c1, "CREATE TABLE", "CREATE TABLE items (id int PRIMARY KEY, name varchar(20) NOT NULL)")

	if err := c1.Rollback(ctx); err != nil {
		t.Errorf("Rollback without a transaction: %v", err)
	}
	if err := c1.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	must(t, c1, "INSERT", "INSERT INTO items VALUES (10, 'ten')")
	if n := count(t, c1); n != "1" {
		t.Errorf("own uncommitted insert: count %s, want 1", n)
	}
	if n := count(t, c2); n != "0" {
		t.Errorf("other session sees an uncommitted insert: count %s, want 0", n)
	}
	if err := c1.Rollback(ctx); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	if n := count(t, c1); n != "0" {
		t.Errorf("after rollback: count %s, want 0", n)
	}

	if err := c1.Begin(ctx, driver.TxOptions{Isolation: "serializable"}); err != nil {
		t.Fatalf("Begin serializable: %v", err)
	}
	must(t, c1, "INSERT", "INSERT INTO items VALUES (11, 'eleven')")
	if err := c1.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if n := count(t, c2); n != "1" {
		t.Errorf("other session after commit: count %s, want 1", n)
	}

	err := c1.Begin(ctx, driver.TxOptions{Isolation: "chaotic"})
	wantCode(t, "Begin with an unknown isolation level", err, pgerr.InvalidParameterValue)
}

func testSecondConn(t *testing.T, e driver.Engine) {
	c1 := connect(t, e)
	must(t, c1, "CREATE TABLE", "CREATE TABLE items (id int PRIMARY KEY, name varchar(20) NOT NULL)")
	must(t, c1, "INSERT", "INSERT INTO items VALUES (1, 'one')")
	c2 := connect(t, e)
	a := must(t, c2, "SELECT", "SELECT id, name FROM items")
	checkRows(t, "second connection", a, [][]string{{"int:1", "text:one"}})
}

func testErrors(t *testing.T, e driver.Engine) {
	c := connect(t, e)
	must(t, c, "CREATE TABLE", "CREATE TABLE items (id int PRIMARY KEY, name varchar(20) NOT NULL)")
	must(t, c, "INSERT", "INSERT INTO items VALUES (1, 'one')")
	// Table-level FOREIGN KEY: MySQL ignores a REFERENCES clause on a column.
	must(t, c, "CREATE TABLE", `CREATE TABLE orders (id int PRIMARY KEY, item int, qty int CHECK (qty > 0),
		FOREIGN KEY (item) REFERENCES items (id))`)
	must(t, c, "INSERT", "INSERT INTO orders VALUES (1, 1, 5)")
	insert := "INSERT INTO items (id, name) VALUES (" + placeholders(e, 2) + ")"
	cases := []struct {
		what, verb, sql string
		args            []driver.Arg
		code            string
	}{
		{"duplicate key", "INSERT", "INSERT INTO items VALUES (1, 'again')", nil, pgerr.UniqueViolation},
		{"syntax", "SELECT", "SELEC 1", nil, pgerr.SyntaxError},
		{"missing table", "SELECT", "SELECT * FROM nowhere", nil, pgerr.UndefinedTable},
		{"missing column", "SELECT", "SELECT nosuchcol FROM items", nil, pgerr.UndefinedColumn},
		{"NOT NULL", "INSERT", insert, []driver.Arg{typed(answer.Int, "2"), null}, pgerr.NotNullViolation},
		{"existing table", "CREATE TABLE", "CREATE TABLE items (id int)", nil, pgerr.DuplicateTable},
		{"foreign key", "INSERT", "INSERT INTO orders VALUES (2, 42, 1)", nil, pgerr.ForeignKeyViolation},
		{"check", "INSERT", "INSERT INTO orders VALUES (2, 1, 0)", nil, pgerr.CheckViolation},
		{"referenced row", "DELETE", "DELETE FROM items WHERE id = 1", nil, pgerr.ForeignKeyViolation},
	}
	for _, tc := range cases {
		_, err := try(c, tc.verb, tc.sql, tc.args...)
		wantCode(t, tc.what, err, tc.code)
		if pgerr.IsConnection(err) {
			t.Fatalf("%s: connection lost: %v", tc.what, err)
		}
		// The session is still usable after a statement error.
		checkRows(t, "after "+tc.what, must(t, c, "SELECT", "SELECT count(*) FROM items"), [][]string{{"int:1"}})
	}
}

func testCancel(t *testing.T, e driver.Engine) {
	c := connect(t, e)
	const after = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), after)
	defer cancel()
	start := time.Now()
	_, err := c.Exec(ctx, driver.Query{SQL: dialects[e.Dialect()].sleep, ReturnsRows: true, Verb: "SELECT"})
	took := time.Since(start)
	wantCode(t, "cancelled statement", err, pgerr.QueryCanceled)
	// Promptly: the engine stopped the statement when asked.
	if took > after+5*time.Second {
		t.Errorf("cancelled statement returned after %v", took)
	}
	// The engine stopped the statement, not the session.
	checkRows(t, "after cancel", must(t, c, "SELECT", "SELECT 1"), [][]string{{"int:1"}})

	_, err = c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"})
	wantCode(t, "statement with an ended ctx", err, pgerr.QueryCanceled)
}

// testSink: rows handed to a Query's Sink one at a time are the rows the
// answer holds without one, with the same columns, tag and count, so the
// digest of either is the same. A driver that does not stream returns
// them in the answer (driver.Query.Sink); none does both.
func testSink(t *testing.T, e driver.Engine) {
	d := dialects[e.Dialect()]
	c := connect(t, e)
	must(t, c, "CREATE TABLE", d.kindsDDL)
	insert := "INSERT INTO kinds (id, big, num, vc, txt, flag) VALUES (" + placeholders(e, 6) + ")"
	for i := range 50 {
		n := strconv.Itoa(i)
		flag := typed(answer.Bool, "t")
		if i%3 == 0 {
			flag = null
		}
		must(t, c, "INSERT", insert, typed(answer.Int, n), typed(answer.Int, n+"000"), typed(answer.Numeric, n+".5"), typed(answer.Text, "v"+n), untyped("t"+n), flag)
	}
	const sel = "SELECT id, big, num, vc, txt, flag FROM kinds ORDER BY id"
	whole := must(t, c, "SELECT", sel)
	var streamed [][]answer.Value
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	a, err := c.Exec(ctx, driver.Query{SQL: sel, Verb: "SELECT", ReturnsRows: true, Sink: func(cols []answer.Column, row []answer.Value) error {
		if len(cols) != len(row) {
			t.Errorf("sink got %d columns for a row of %d", len(cols), len(row))
		}
		streamed = append(streamed, row)
		return nil
	}})
	if err != nil {
		t.Fatalf("select with a sink: %v", err)
	}
	if len(streamed) > 0 && len(a.Rows) > 0 {
		t.Fatalf("rows both streamed (%d) and returned (%d)", len(streamed), len(a.Rows))
	}
	checkTag(t, "select with a sink", a, whole.Tag, whole.RowsAffected)
	got := *a
	got.Rows = append(streamed, a.Rows...)
	if !slices.Equal(columnTypes(&got), columnTypes(whole)) {
		t.Errorf("columns with a sink %v, without %v", columnTypes(&got), columnTypes(whole))
	}
	if !slices.EqualFunc(cells(&got), cells(whole), slices.Equal) {
		t.Errorf("rows with a sink %v, without %v", cells(&got), cells(whole))
	}
	if got.Digest(true) != whole.Digest(true) {
		t.Error("digests differ with and without a sink")
	}
}
