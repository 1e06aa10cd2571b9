package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// walCluster is a CBS cluster of three in-process SQLite replicas, each
// with table t (a int PRIMARY KEY, b text) and the log table, over a
// write-ahead log opened with opts.
type walCluster struct {
	c       *Cluster
	engines []driver.Engine
	log     *wal.Log
}

func newWALCluster(t *testing.T, opts wal.Options) *walCluster {
	t.Helper()
	ctx := context.Background()
	open, ok := driver.Lookup(sqlite.Pure)
	if !ok {
		t.Fatal("no sqlite driver")
	}
	w := &walCluster{}
	var reps []Replica
	for i := range 3 {
		name := fmt.Sprintf("lite%d", i)
		e, err := open(ctx, driver.Spec{Name: name, DSN: name + ".db", DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		conn, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{replica.LogCreate, `CREATE TABLE t (a int PRIMARY KEY, b text)`} {
			if _, err := conn.Exec(ctx, driver.Query{SQL: q, Verb: "CREATE TABLE"}); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
		w.engines = append(w.engines, e)
		reps = append(reps, Replica{Name: name, Engine: e})
	}
	l, _, err := wal.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	w.log = l
	w.c = New(Options{Mode: coord.CBS, F: 1, WAL: l, Base: 1}, reps)
	t.Cleanup(func() {
		w.c.Close()
		l.Close()
	})
	return w
}

// errHung is insert's error for a COMMIT that never returned.
var errHung = errors.New("COMMIT never returned")

// insert runs INSERT INTO t VALUES (a, b) in a transaction and commits
// it, the COMMIT bounded by 30 s: a COMMIT that never returns is the bug
// these tests look for. It may run on any goroutine.
func (w *walCluster) insert(a int, b string) error {
	st, err := sqlan.ParseOne("INSERT INTO t VALUES ($1, $2)")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn, err := w.c.Begin(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	args := []driver.Arg{{Type: answer.Int, Text: fmt.Sprint(a)}, {Type: answer.Text, Text: b}}
	if _, err := txn.Exec(ctx, st, args); err != nil {
		return fmt.Errorf("insert %d: %w", a, err)
	}
	done := make(chan error, 1)
	go func() { done <- txn.Commit(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return errHung
	}
}

// rows returns the keys in t on every replica, once they are idle.
func (w *walCluster) rows(t *testing.T) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.c.Idle(ctx); err != nil {
		t.Fatalf("replicas never idle: %v", err)
	}
	var out [][]string
	for _, e := range w.engines {
		conn, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := conn.Exec(ctx, driver.Query{SQL: "SELECT a FROM t ORDER BY a", ReturnsRows: true, Verb: "SELECT"})
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, r := range a.Rows {
			keys = append(keys, r[0].Text)
		}
		out = append(out, keys)
	}
	return out
}

func noSync(*os.File) error { return nil }

// TestLogRefusalFailsThatCommit: a transaction whose record the log
// refuses (too large) is rolled back everywhere and its client gets
// 54000, at once; the next transaction commits as usual, and its log
// record does not release the refused one (it did: the refused COMMIT
// waited for the next logged transaction, then reached every replica
// and the client with no log record).
func TestLogRefusalFailsThatCommit(t *testing.T) {
	w := newWALCluster(t, wal.Options{Sync: noSync, MaxRecordBytes: 400})
	big := make(chan error, 1)
	go func() { big <- w.insert(1, strings.Repeat("x", 1000)) }()
	select {
	case err := <-big:
		if pgerr.Code(err) != pgerr.ProgramLimitExceeded {
			t.Errorf("COMMIT of a transaction the log refused: %v, want SQLSTATE 54000", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("COMMIT of a transaction the log refused waits (for the next logged one)")
	}
	if err := w.insert(2, "small"); err != nil {
		t.Fatalf("a transaction after the refused one: %v", err)
	}
	select {
	case err := <-big:
		if err == nil {
			t.Error("the transaction the log refused committed once the next one was logged")
		}
	default:
	}
	for r, keys := range w.rows(t) {
		if strings.Join(keys, ",") != "2" {
			t.Errorf("replica %d holds keys %v, want only 2", r, keys)
		}
	}
	records, err := w.log.ReadFrom(0)
	if err != nil || len(records) != 1 {
		t.Errorf("log holds %d records (%v), want 1", len(records), err)
	}
}

// failingSync is a fake fsync that fails once armed, as a disk does that
// lost dirty pages.
type failingSync struct{ armed atomic.Bool }

var errFakeSync = errors.New("fake fsync: input/output error")

func (f *failingSync) sync(*os.File) error {
	if f.armed.Load() {
		return errFakeSync
	}
	return nil
}

// TestLogFailureReleasesClients: once an fsync of the log fails, every
// COMMIT waiting and every later one fails with 58030, nothing commits
// on any replica, and the queue of records does not grow (clients hung
// forever, and the queue grew without bound).
func TestLogFailureReleasesClients(t *testing.T) {
	fs := &failingSync{}
	w := newWALCluster(t, wal.Options{Sync: fs.sync})
	if err := w.insert(1, "before"); err != nil {
		t.Fatal(err)
	}
	fs.armed.Store(true)
	errs := make(chan error, 4)
	for i := range 4 {
		go func() { errs <- w.insert(10+i, "during") }()
	}
	for range 4 {
		select {
		case err := <-errs:
			if pgerr.Code(err) != pgerr.IOError || !errors.Is(err, errFakeSync) {
				t.Errorf("COMMIT after the log failed: %v, want SQLSTATE 58030 naming the fsync failure", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a COMMIT waits for ever after the log failed")
		}
	}
	if err := w.insert(20, "after"); pgerr.Code(err) != pgerr.IOError {
		t.Errorf("COMMIT asked after the log failed: %v, want SQLSTATE 58030", err)
	}
	for r, keys := range w.rows(t) {
		if strings.Join(keys, ",") != "1" {
			t.Errorf("replica %d holds keys %v, want only 1", r, keys)
		}
	}
	w.c.logq.mu.Lock()
	queued := len(w.c.logq.items)
	w.c.logq.mu.Unlock()
	if queued != 0 {
		t.Errorf("%d records still queued for the log", queued)
	}
}

// TestCatchUpChecksBarrier: a replica coming back whose log table claims
// a barrier beyond the last durable one claims transactions the log
// never had, and catch-up refuses it with start-up's rule
// (coord.CheckBarrier, coord.ErrBadBarrier); one that holds the last
// durable barrier passes the check.
func TestCatchUpChecksBarrier(t *testing.T) {
	ctx := context.Background()
	w := newWALCluster(t, wal.Options{})
	if err := w.insert(1, "x"); err != nil {
		t.Fatal(err)
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.c.Idle(ictx); err != nil {
		t.Fatal(err)
	}
	last := w.c.durable.get() - 1
	// Take lite2 out, as if it went away; this test is its recovery.
	w.c.mu.Lock()
	w.c.mu.recovering[2] = true
	w.c.mu.core.Step(coord.Down{R: 2})
	w.c.applyLocked()
	w.c.mu.Unlock()
	claim := func(b uint64) {
		t.Helper()
		conn, err := w.engines[2].Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Exec(ctx, replica.LogInsert(w.engines[2].Dialect(), b)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.c.catchUp(ctx, 2); errors.Is(err, coord.ErrBadBarrier) {
		t.Fatalf("catch-up of a replica holding the last durable barrier %d: %v", last, err)
	}
	claim(last + 1)
	if _, err := w.c.catchUp(ctx, 2); !errors.Is(err, coord.ErrBadBarrier) {
		t.Fatalf("catch-up of a replica claiming barrier %d, beyond the last durable %d: %v, want ErrBadBarrier", last+1, last, err)
	}
}

// TestTxnWritesBounded: the writes a transaction holds until its end
// (statements and arguments in every form the log records) are bounded
// by what the log can record for one transaction (Options.MaxTxnBytes):
// a block of many COPYs or large INSERTs fails with 54000 at the
// statement that passes it, before any replica runs that statement,
// instead of taking memory without bound only to be refused at COMMIT.
// Nothing of the transaction is written; the next one commits.
func TestTxnWritesBounded(t *testing.T) {
	w := newWALCluster(t, wal.Options{Sync: noSync})
	w.c.opts.MaxTxnBytes = 8 << 10
	st, err := sqlan.ParseOne("INSERT INTO t VALUES ($1, $2)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	txn := begin(t, w.c)
	failed := -1
	for i := range 20 {
		args := []driver.Arg{{Type: answer.Int, Text: fmt.Sprint(i)}, {Type: answer.Text, Text: strings.Repeat("x", 1000)}}
		if _, err := txn.Exec(ctx, st, args); err != nil {
			if pgerr.Code(err) != pgerr.ProgramLimitExceeded {
				t.Fatalf("INSERT %d: %v, want 54000", i, err)
			}
			failed = i
			break
		}
	}
	// Each INSERT holds about 2 KB (the client's form and SQLite's).
	if failed < 2 || failed > 5 {
		t.Fatalf("the INSERT that failed: %d, want the one past 8 KB (2 to 5)", failed)
	}
	txn.Rollback()
	if err := w.insert(100, "small"); err != nil {
		t.Fatalf("a transaction after the refused one: %v", err)
	}
	for r, keys := range w.rows(t) {
		if strings.Join(keys, ",") != "100" {
			t.Errorf("replica %d holds keys %v, want only 100", r, keys)
		}
	}
}
