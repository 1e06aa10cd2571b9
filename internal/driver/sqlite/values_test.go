package sqlite_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func exec(t *testing.T, c driver.Conn, verb, sql string) (*answer.Answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Exec(ctx, driver.Query{SQL: sql, Verb: verb, ReturnsRows: verb == "SELECT"})
}

// TestSQLiteValues covers SQLite's per-value typing, in both builds: the
// libraries turn some stored values into Go bools and times, which must
// print as the text the other builds print.
func TestSQLiteValues(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "v.db", DataDir: t.TempDir()})
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			stmts := []string{
				"CREATE TABLE v (b boolean, ts timestamp, dt datetime, tz timestamptz, d date, n numeric, anything)",
				"INSERT INTO v VALUES (1, '2024-01-02T03:04:05Z', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+00', '2024-01-02', 7, 2.5)",
				"INSERT INTO v VALUES (0, '2024-01-02 03:04:05+02:00', '2024-01-02', NULL, NULL, 1.25, 'x')",
			}
			for _, s := range stmts {
				if _, err := exec(t, c, "", s); err != nil {
					t.Fatal(err)
				}
			}
			a, err := exec(t, c, "SELECT", "SELECT b, ts, dt, tz, d, n, anything FROM v ORDER BY b DESC")
			if err != nil {
				t.Fatal(err)
			}
			want := [][]string{
				{"bool:t", "timestamp:2024-01-02 03:04:05", "timestamp:2024-01-02 03:04:05.123456",
					"timestamptz:2024-01-02 03:04:05+00", "date:2024-01-02", "int:7", "float:2.5"},
				{"bool:f", "timestamp:2024-01-02 03:04:05", "timestamp:2024-01-02 00:00:00",
					"NULL", "NULL", "numeric:1.25", "text:x"},
			}
			for i, r := range a.Rows {
				var got []string
				for _, v := range r {
					if v.Null {
						got = append(got, "NULL")
					} else {
						got = append(got, v.Type.String()+":"+v.Text)
					}
				}
				if !slices.Equal(got, want[i]) {
					t.Errorf("row %d:\n got %q\nwant %q", i, got, want[i])
				}
			}
			// A column with no declared type takes its first value's family.
			if got := a.Columns[6].Type; got != answer.Float {
				t.Errorf("untyped column: family %v, want float", got)
			}
		})
	}
}

// TestWriterWaitsForWriter: a second writer that cannot get the
// write lock within the busy timeout gets 40001; with a shorter ctx, the
// wait ends with 57014.
func TestWriterWaitsForWriter(t *testing.T) {
	e := open(t, "sqlite", driver.Spec{Name: "lite", DSN: "w.db", DataDir: t.TempDir()})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c1, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c1.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	err = c2.Begin(short, driver.TxOptions{})
	if code := pgerr.Code(err); code != pgerr.QueryCanceled && code != pgerr.SerializationFailure {
		t.Errorf("BEGIN IMMEDIATE while another writer holds the lock: %v, want 57014 or 40001", err)
	}
	if err := c1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c2.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Errorf("BEGIN IMMEDIATE once the lock is free: %v", err)
	}
	if err := c2.Rollback(ctx); err != nil {
		t.Error(err)
	}
}

// TestSQLiteDeclaredTypes: the declared types of the translator's type
// mapping make both builds print stored values as PostgreSQL prints the
// type they came from, and agree with each other digest for digest.
func TestSQLiteDeclaredTypes(t *testing.T) {
	stmts := []string{
		`CREATE TABLE d (id int, b BOOLEAN, r REAL, dbl DOUBLE PRECISION, n NUMERIC(10,2), ch CHAR(5), vc VARCHAR(9),
			day DATE TEXT, tod TIME TEXT, ts TIMESTAMP TEXT, tz TIMESTAMPTZ TEXT, u UUID, j JSONTEXT)`,
		`INSERT INTO d VALUES (1, 't', 3.14159265, 3.14159265, 1.50, 'é', 'ab ',
			'0044-03-15 BC', '10:00', '2026-01-01T12:00:00.500+02:00', '2026-01-01 12:00:00.5+02', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"a": 1}')`,
		`INSERT INTO d VALUES (2, 'false', 'NaN', '-Infinity', 'Infinity', 'abcdef', NULL,
			'infinity', '23:59:60', '2026-01-01 12:00:00+02', '2026-01-01 10:00:00', 'not a uuid', 'null')`,
		`INSERT INTO d VALUES (3, 0, -2e300, 0.1, 3, '', '',
			'2026-02-30', '10:00:00.123456', '10000-01-01 00:00:00', '2026-01-01T10:00:00Z', NULL, NULL)`,
	}
	want := [][]string{
		{"int:1", "bool:t", "float:3.1415927", "float:3.14159265", "numeric:1.5", "text:é    ", "text:ab ",
			"date:0044-03-15 BC", "time:10:00:00", "timestamp:2026-01-01 12:00:00.5", "timestamptz:2026-01-01 10:00:00.5+00",
			"uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", `json:{"a": 1}`},
		{"int:2", "bool:f", "float:NaN", "float:-Infinity", "numeric:Infinity", "text:abcdef", "NULL",
			"date:infinity", "time:24:00:00", "timestamp:2026-01-01 12:00:00", "timestamptz:2026-01-01 10:00:00+00",
			"uuid:not a uuid", "json:null"},
		// Out of real's range, SQLite's double stays a double; a date
		// that is none stays the text it is.
		{"int:3", "bool:f", "float:-2e+300", "float:0.1", "int:3", "text:     ", "text:",
			"date:2026-02-30", "time:10:00:00.123456", "timestamp:10000-01-01 00:00:00", "timestamptz:2026-01-01 10:00:00+00",
			"NULL", "NULL"},
	}
	wantOIDs := []uint32{0, 0, answer.OIDFloat4, 0, 0, answer.OIDBPChar, answer.OIDVarchar, 0, 0, 0, 0, 0, 0}
	var digests []answer.Digest
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		e := open(t, name, driver.Spec{Name: name, DSN: "d.db", DataDir: t.TempDir()})
		defer e.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, s := range stmts {
			if _, err := exec(t, c, "", s); err != nil {
				t.Fatalf("%s: %s: %v", name, s, err)
			}
		}
		a, err := exec(t, c, "SELECT", "SELECT * FROM d ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range a.Rows {
			var got []string
			for _, v := range r {
				if v.Null {
					got = append(got, "NULL")
				} else {
					got = append(got, v.Type.String()+":"+v.Text)
				}
			}
			if !slices.Equal(got, want[i]) {
				t.Errorf("%s row %d:\n got %q\nwant %q", name, i, got, want[i])
			}
		}
		var oids []uint32
		for _, col := range a.Columns {
			oids = append(oids, col.OID)
		}
		if !slices.Equal(oids, wantOIDs) {
			t.Errorf("%s: column OIDs %v, want %v", name, oids, wantOIDs)
		}
		digests = append(digests, a.Digest(true))
	}
	if digests[0] != digests[1] {
		t.Error("the two builds' answers have different digests")
	}
}
