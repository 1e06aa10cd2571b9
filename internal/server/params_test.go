package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// paramOutcome runs sql with text parameters of unspecified type (as
// pgjdbc, node-postgres and Sequelize send them: PostgreSQL infers the
// type from the statement) and renders the outcome: the rows' text, or
// the error's SQLSTATE and message.
func paramOutcome(ctx context.Context, c *pgconn.PgConn, sql string, params ...string) string {
	vals := make([][]byte, len(params))
	for i, p := range params {
		vals[i] = []byte(p)
	}
	r := c.ExecParams(ctx, sql, vals, nil, nil, nil).Read()
	if r.Err != nil {
		if pe, ok := r.Err.(*pgconn.PgError); ok {
			return "ERROR " + pe.Code + " " + pe.Message
		}
		return "ERROR " + r.Err.Error()
	}
	var rows []string
	for _, row := range r.Rows {
		var vs []string
		for _, v := range row {
			vs = append(vs, string(v))
		}
		rows = append(rows, strings.Join(vs, "|"))
	}
	return strings.Join(rows, "; ")
}

// TestDateTimeParamsAsPostgreSQL: date, time and timestamp parameters in
// the forms client libraries send (a zone suffix after a date, offsets
// with and without minutes, more than six decimals) are read as
// PostgreSQL 15 reads them, on every replica; a text PostgreSQL refuses
// fails with its SQLSTATE and message, before any replica sees it. The
// outcomes are compared with PostgreSQL's own, and the replicas (MariaDB
// the primary) stay up and identical.
func TestDateTimeParamsAsPostgreSQL(t *testing.T) {
	cases := []struct{ col, in string }{
		{"d", "2024-02-29 +00"},                // pgjdbc setDate
		{"d", "2024-02-29 +00:00"},             // Sequelize DATEONLY
		{"d", "2024-02-29 12:34:56-11"},        // a time and an offset are ignored
		{"d", "2024-02-29T23:59:59.999+05:30"}, // node-postgres
		{"d", " 2024-02-29 "},
		{"d", "epoch"},
		{"d", "2024-02-30"},
		{"d", "2023-02-29 +00"},
		{"d", "2024-13-01"},
		{"d", "nope"},
		{"d", "2024-02-29 +00 junk"},
		{"ts", "2024-02-29 12:34:56+00"},         // pgjdbc setTimestamp
		{"ts", "2024-02-29 12:34:56.123 +00:00"}, // Sequelize
		{"ts", "2024-02-29T12:34:56.123+01:00"},  // node-postgres
		{"ts", "2024-02-29 12:34:56.123456-05"},  // the offset is ignored
		{"ts", "2024-02-29 12:34:56.1234565"},    // rounded to microseconds
		{"ts", "2024-02-29 23:59:59.9999999"},    // into the next day
		{"ts", "2024-02-29 12:34"},
		{"ts", "epoch"},
		{"ts", "2024-02-29 25:00:00"},
		{"ts", "2024-02-29 12:34:56+25"},
		{"ts", "2024-02-29 12:3x"},
		{"tz", "2024-02-29 12:34:56+00"},
		{"tz", "2024-02-29 12:34:56.123 +00:00"},
		{"tz", "2024-02-29 12:34:56.123456-05"}, // converted to UTC
		{"tz", "2024-02-29T01:02:03.5+05:30"},   // back into the day before
		{"tz", "2024-02-29 +00"},
		{"tz", "2024-02-29 12:34:56Z"},
		{"tz", "epoch"},
		{"tz", "2024-02-29 12:34:56 +1"},
		{"t", "12:34:56+00"},
		{"t", "12:34:56.1234567"},
		{"t", "12:34:56.123-05:00"},
		{"t", "2024-02-29 12:34:56"},
		{"t", "12:61"},
		{"t", "noon"},
	}
	ctx := context.Background()
	run := func(dsn string, setup ...string) []string {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		for _, s := range append(setup, "CREATE TABLE dt (id int PRIMARY KEY, d date, t time, ts timestamp, tz timestamptz)") {
			if _, err := c.Exec(ctx, s).ReadAll(); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		var out []string
		for i, tc := range cases {
			ins := paramOutcome(ctx, c, fmt.Sprintf("INSERT INTO dt (id, %s) VALUES ($1, $2)", tc.col), fmt.Sprint(i), tc.in)
			// A WHERE comparison reads the parameter the same way.
			sel := paramOutcome(ctx, c, fmt.Sprintf("SELECT id, %s FROM dt WHERE %s = $1", tc.col, tc.col), tc.in)
			out = append(out, fmt.Sprintf("%s %q: insert %s; select %s", tc.col, tc.in, ins, sel))
		}
		out = append(out, paramOutcome(ctx, c, "SELECT id, d, t, ts, tz FROM dt ORDER BY id"))
		return out
	}
	// Words read from the clock would differ between replicas: shepherd
	// refuses them (0A000) where PostgreSQL reads them.
	clockWords := []struct{ col, in string }{{"d", "today"}, {"ts", "now"}, {"tz", " Tomorrow "}}
	want := run(testenv.Postgres(t), "SET TimeZone = 'UTC'")
	cfg := realCluster(t, "serial")
	addr, srv := start(t, cfg)
	got := run(fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("shepherd:      %s\nPostgreSQL 15: %s", got[i], want[i])
		}
	}
	c := connect(t, addr, "app")
	for _, w := range clockWords {
		_, err := c.Exec(ctx, fmt.Sprintf("INSERT INTO dt (id, %s) VALUES (100, $1)", w.col), w.in)
		if sqlstate(err) != "0A000" {
			t.Errorf("%s %q: got %v, want SQLSTATE 0A000", w.col, w.in, err)
		}
	}
	assertReplicas(t, addr, 3)
	// A sequential secondary may still be applying what the client
	// was answered for (f+1 replicas suffice): read them once idle.
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, d, t, ts, tz FROM dt ORDER BY id")
}
