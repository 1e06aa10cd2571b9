package mysql_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
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
// QUERY ends the wait, the session survives, and the lock holder is not
// disturbed.
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
