package session

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	_ "github.com/shepherd-db/shepherd/internal/driver/all" // the sqlite driver
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// newSession returns a session on a cluster of one SQLite replica.
func newSession(t *testing.T) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open, ok := driver.Lookup("sqlite")
	if !ok {
		t.Fatal("no sqlite driver")
	}
	e, err := open(ctx, driver.Spec{Name: "lite", DSN: "s.db", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.New(cluster.Options{Mode: coord.Passthrough}, []cluster.Replica{{Name: "lite", Engine: e}})
	t.Cleanup(func() {
		c.Close()
		e.Close()
	})
	cache := sqlan.NewCache(16, map[driver.Dialect][]string{driver.SQLite: {"lite"}}, nil)
	s := New(c, cache, nil, pgwire.StartupInfo{User: "u", Database: "d"})
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// query runs sql and returns its answers.
func query(t *testing.T, s *Session, sql string) []*answer.Answer {
	t.Helper()
	var out []*answer.Answer
	err := s.Query(context.Background(), sql, func(a *answer.Answer) error {
		out = append(out, a)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// TestTags: command tags are PostgreSQL's.
func TestTags(t *testing.T) {
	s := newSession(t)
	for _, c := range []struct{ sql, tag string }{
		{"START TRANSACTION ISOLATION LEVEL SERIALIZABLE", "START TRANSACTION"},
		{"START TRANSACTION", "START TRANSACTION"}, // nested: PostgreSQL warns
		{"BEGIN", "BEGIN"},
		{"COMMIT", "COMMIT"},
		{"BEGIN", "BEGIN"},
		{"END", "COMMIT"},
		{"START TRANSACTION READ ONLY", "START TRANSACTION"},
		{"ABORT", "ROLLBACK"},
		{"ROLLBACK", "ROLLBACK"},
		{"SET application_name = 'x'", "SET"},
		{"RESET application_name", "RESET"},
		{"SHOW TimeZone", "SHOW"},
	} {
		if a := query(t, s, c.sql); len(a) != 1 || a[0].Tag != c.tag {
			t.Errorf("%s: tag %q, want %q", c.sql, a[0].Tag, c.tag)
		}
	}
}

// TestShowNames: SHOW names its column by the parameter's canonical
// spelling, however the client wrote it, also in Describe.
func TestShowNames(t *testing.T) {
	s := newSession(t)
	for sql, want := range map[string]string{
		"SHOW TimeZone":                    "TimeZone",
		"show timezone":                    "TimeZone",
		"SHOW TIME ZONE":                   "TimeZone",
		"SHOW datestyle":                   "DateStyle",
		"SHOW IntervalStyle":               "IntervalStyle",
		"SHOW Application_Name":            "application_name",
		"SHOW TRANSACTION ISOLATION LEVEL": "transaction_isolation",
	} {
		a := query(t, s, sql)
		if len(a[0].Columns) != 1 || a[0].Columns[0].Name != want || a[0].Columns[0].OID != answer.OIDText {
			t.Errorf("%s: columns %+v, want %s (text)", sql, a[0].Columns, want)
		}
		ps, err := s.Prepare(context.Background(), sql, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, cols, err := s.Describe(context.Background(), ps)
		if err != nil || len(cols) != 1 || cols[0].Name != want {
			t.Errorf("describe %s: %+v, %v; want %s", sql, cols, err, want)
		}
	}
}

// TestDescribeColumns: Describe tells PostgreSQL's names and types, from
// the statement and the schema when they tell everything, else from the
// describe form run with NULL parameters.
func TestDescribeColumns(t *testing.T) {
	s := newSession(t)
	query(t, s, "CREATE TABLE emp (id integer PRIMARY KEY, name varchar(20), salary numeric(10,2), bonus numeric(10,2))")
	query(t, s, "INSERT INTO emp VALUES (1, 'a', 10, NULL), (2, 'b', 20, NULL), (3, 'c', 30, 5)")
	type col struct {
		name string
		oid  uint32
		mod  int32
	}
	for _, c := range []struct {
		sql  string
		want []col
	}{
		{"SELECT id, name, salary FROM emp WHERE id = $1",
			[]col{{"id", answer.OIDInt4, -1}, {"name", answer.OIDVarchar, 24}, {"salary", answer.OIDNumeric, 10<<16 | 2 + 4}}},
		{"SELECT id FROM emp ORDER BY id LIMIT $1 OFFSET $2", []col{{"id", answer.OIDInt4, -1}}},
		{"SELECT count(*), sum(salary), NULLIF(id, 1) FROM emp WHERE bonus IS NOT DISTINCT FROM $1 GROUP BY id",
			[]col{{"count", answer.OIDInt8, -1}, {"sum", answer.OIDNumeric, -1}, {"nullif", answer.OIDInt4, -1}}},
		{"VALUES (1, 'a'), (2, 'b')", []col{{"column1", answer.OIDInt4, -1}, {"column2", answer.OIDText, -1}}},
		// Not all known from the text: the probe runs.
		{"SELECT id, $1 AS p FROM emp", []col{{"id", answer.OIDInt4, -1}, {"p", 0, 0}}},
	} {
		ps, err := s.Prepare(context.Background(), c.sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		_, cols, err := s.Describe(context.Background(), ps)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if len(cols) != len(c.want) {
			t.Errorf("%s: %d columns, want %d", c.sql, len(cols), len(c.want))
			continue
		}
		for i, w := range c.want {
			got := cols[i]
			if got.Name != w.name || w.oid != 0 && (got.OID != w.oid || got.Mod != w.mod) {
				t.Errorf("%s: column %d = %s oid %d mod %d, want %s oid %d mod %d", c.sql, i+1, got.Name, got.OID, got.Mod, w.name, w.oid, w.mod)
			}
		}
	}
	if s.TxStatus() != 'I' {
		t.Errorf("transaction status %c after Describe, want I", s.TxStatus())
	}
}

// TestCancelReachesOnlyTheRunningCall: a call's context serves the next
// call unless it was cancelled; Cancel between calls reaches nothing, and
// one during a call ends that call only.
func TestCancelReachesOnlyTheRunningCall(t *testing.T) {
	s := newSession(t)
	parent := context.Background()
	s.Cancel() // no call running: nothing to reach
	query(t, s, "SELECT 1")

	ctx := s.cancellable(parent)
	s.Cancel()
	if ctx.Err() == nil {
		t.Fatal("Cancel during a call did not end its context")
	}
	s.endCall()
	next := s.cancellable(parent)
	if next.Err() != nil {
		t.Fatal("the call after a cancelled one starts cancelled")
	}
	s.endCall()
	s.Cancel()
	if next.Err() != nil {
		t.Fatal("Cancel between calls ended the last call's context")
	}
	if again := s.cancellable(parent); again != next {
		t.Error("a context not cancelled is not used again")
	}
	s.endCall()
	other, stop := context.WithCancel(parent)
	defer stop()
	if c := s.cancellable(other); c == next {
		t.Error("a call with another parent context got the old one")
	}
	s.endCall()
	query(t, s, "SELECT 1")
}
