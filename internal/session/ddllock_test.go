package session

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// newSessions returns n sessions on one cluster of one SQLite replica,
// sharing the statement cache, the catalog and the lock table, as a
// server's sessions do.
func newSessions(t *testing.T, n int) []*Session {
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
	shared := NewShared()
	var out []*Session
	for range n {
		s := New(c, cache, shared, pgwire.StartupInfo{User: "u", Database: "d"})
		t.Cleanup(func() { s.Close(context.Background()) })
		out = append(out, s)
	}
	return out
}

// exec runs one statement and returns its error.
func exec(s *Session, sql string) error {
	return s.Query(context.Background(), sql, func(*answer.Answer) error { return nil })
}

// TestDDLLockRebuild: a second ALTER TABLE of a table SQLite rebuilds,
// sent while the first one's block is open, waits for the block's end in
// shepherd's lock table and is written from the definition the first
// committed. Without the DDL lock, its rebuild was written from the
// definition before (the statement was analysed as it arrived) and
// dropped the first's NOT NULL.
func TestDDLLockRebuild(t *testing.T) {
	ss := newSessions(t, 2)
	a, b := ss[0], ss[1]
	query(t, a, "CREATE TABLE t (id int PRIMARY KEY, a int, b int)")
	query(t, a, "BEGIN")
	query(t, a, "ALTER TABLE t ALTER COLUMN a SET NOT NULL")
	done := make(chan error, 1)
	go func() { done <- exec(b, "ALTER TABLE t ADD CONSTRAINT t_b_check CHECK (b > 0)") }()
	deadline := time.Now().Add(10 * time.Second) // a bound to fail by, not a synchronisation
	for a.shared.Waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the second ALTER TABLE did not wait for the first's block: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second ALTER TABLE does not wait in shepherd's lock table")
		}
		runtime.Gosched()
	}
	query(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := exec(a, "INSERT INTO t VALUES (1, NULL, 1)"); pgerr.Code(err) != pgerr.NotNullViolation {
		t.Errorf("NULL into the NOT NULL column: %v, want 23502", err)
	}
	if err := exec(a, "INSERT INTO t VALUES (1, 1, -1)"); pgerr.Code(err) != pgerr.CheckViolation {
		t.Errorf("a row the check refuses: %v, want 23514", err)
	}
}

// TestDDLLockTimeout: a DDL statement waiting for another block's DDL
// lock ends with lock_timeout (55P03) or statement_timeout (57014), as
// on PostgreSQL, fails its block, and holds nothing afterwards.
func TestDDLLockTimeout(t *testing.T) {
	ss := newSessions(t, 2)
	a, b := ss[0], ss[1]
	query(t, a, "CREATE TABLE t (id int PRIMARY KEY, a int)")
	query(t, a, "BEGIN")
	query(t, a, "ALTER TABLE t ALTER COLUMN a SET NOT NULL")
	for _, c := range []struct{ set, code, msg string }{
		{"SET lock_timeout = '50ms'", pgerr.LockNotAvailable, "canceling statement due to lock timeout"},
		{"SET statement_timeout = 50", pgerr.QueryCanceled, "canceling statement due to statement timeout"},
	} {
		query(t, b, "RESET ALL")
		query(t, b, c.set)
		query(t, b, "BEGIN")
		err := exec(b, "ALTER TABLE t ADD COLUMN c int")
		if pe := pgerr.From(err); pe == nil || pe.Code != c.code || pe.Message != c.msg {
			t.Errorf("%s: %v, want %s %q", c.set, err, c.code, c.msg)
		}
		if b.TxStatus() != 'E' {
			t.Errorf("%s: the block is not failed", c.set)
		}
		query(t, b, "ROLLBACK")
	}
	query(t, a, "ROLLBACK")
	query(t, b, "RESET ALL")
	query(t, b, "ALTER TABLE t ADD COLUMN c int")
}

// TestDDLRelations: what a DDL statement locks.
func TestDDLRelations(t *testing.T) {
	s := newSession(t)
	query(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	query(t, s, "CREATE TABLE c (id int PRIMARY KEY, p_id int REFERENCES p)")
	query(t, s, "CREATE TABLE u (id int PRIMARY KEY)")
	query(t, s, "CREATE INDEX c_p ON c (p_id)")
	snap, err := s.visibleSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"ALTER TABLE u ADD COLUMN x int", []string{"u"}},
		{"ALTER TABLE c ALTER COLUMN p_id SET NOT NULL", []string{"c", "p"}},
		{"ALTER TABLE p RENAME TO q", []string{"c", "p"}},
		{"DROP TABLE u, p CASCADE", []string{"c", "p", "u"}},
		{"DROP INDEX c_p", []string{"c", "c_p", "p"}},
		{"CREATE INDEX u_id ON u (id)", []string{"u"}},
		{"CREATE TABLE n (id int REFERENCES u)", []string{"n", "u"}},
	} {
		sts, err := sqlan.ParseIn(c.sql, &sqlan.Env{Schema: snap})
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if got := ddlRelations(sts[0].Tree(), snap); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.sql, got, c.want)
		}
	}
}

// TestAdvisoryEngineCycle: A holds an advisory lock and waits for the
// SQLite replica's one transaction slot, which B holds; B asking for A's
// lock closes a cycle no one would end: after deadlock_timeout B gets
// 40P01 (before, both waited for good), and A goes on once B rolled
// back.
func TestAdvisoryEngineCycle(t *testing.T) {
	ss := newSessions(t, 2)
	a, b := ss[0], ss[1]
	query(t, a, "CREATE TABLE r (id int PRIMARY KEY, v int)")
	query(t, a, "INSERT INTO r VALUES (1, 0)")
	query(t, a, "BEGIN")
	query(t, a, "SELECT pg_advisory_xact_lock(1)")
	query(t, b, "BEGIN")
	query(t, b, "UPDATE r SET v = 1 WHERE id = 1")
	done := make(chan error, 1)
	go func() { done <- exec(a, "UPDATE r SET v = 2 WHERE id = 1") }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := b.Query(ctx, "SELECT pg_advisory_xact_lock(1)", func(*answer.Answer) error { return nil })
	if pgerr.Code(err) != pgerr.DeadlockDetected {
		t.Fatalf("B asking for A's lock: %v, want 40P01", err)
	}
	query(t, b, "ROLLBACK")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	query(t, a, "COMMIT")
}
