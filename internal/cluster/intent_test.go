package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// TestShellDDLIntent: with a replica that commits DDL as it runs it, a
// DDL statement is on disk as an intent, with every dialect's form,
// before the core gets it; the intent goes once the transaction
// committed, and, when it is refused, before its client hears of it. A
// crash right after the intent (the hook) leaves it on disk for start-up.
func TestShellDDLIntent(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dc := newDDLCluster(t)
	path := filepath.Join(dc.dir, "ddl-intents.json")
	c, stop := dc.start(t)
	defer stop()
	onDisk := func() []Intent {
		t.Helper()
		in, err := LoadIntents(path)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}

	var seen []Intent
	c.SetIntentHook(func(uint64) error { seen = onDisk(); return nil })
	if err := autocommit(ctx, c, dc.stmt(t, "CREATE TABLE x (a int)")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !seen[0].Lone || len(seen[0].Replicas) != 1 || seen[0].Replicas[0] != "p" {
		t.Fatalf("intent on disk before the core got CREATE TABLE: %+v, want one lone intent naming p", seen)
	}
	rec := seen[0].Record(7)
	for _, d := range []driver.Dialect{driver.MySQL, driver.Postgres} {
		if _, ok := rec.Statements[0].FormFor(uint8(d)); !ok {
			t.Fatalf("the intent holds no form for %s", d)
		}
	}
	// Committed: its log record is durable, the intent is gone (by the
	// time the transaction is finished; it may linger a moment after the
	// client heard, harmlessly: the log record resolves it).
	idle := func() {
		t.Helper()
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := c.Idle(ictx); err != nil {
			t.Fatal(err)
		}
	}
	idle()
	if in := onDisk(); len(in) != 0 {
		t.Fatalf("intents after the commit: %+v, want none", in)
	}

	// Refused by the secondaries: rolled back, p retired, and the
	// intent gone before the client hears of it.
	for _, e := range dc.engines[1:] {
		e.On(fakeengine.Exec, "CREATE TABLE y").Fail("42P07", `relation "y" already exists`)
	}
	if err := autocommit(ctx, c, dc.stmt(t, "CREATE TABLE y (a int)")); sqlState(err) != "40001" {
		t.Fatalf("CREATE TABLE the secondaries refused: %v, want 40001", err)
	}
	if in := onDisk(); len(in) != 0 {
		t.Fatalf("intents when the client heard of the refusal: %+v, want none", in)
	}

	// A crash right after the intent was written: it stays.
	c.SetIntentHook(func(uint64) error { return errors.New("crash") })
	txn := begin(t, c)
	if _, err := txn.ExecSingle(ctx, dc.stmt(t, "CREATE TABLE z (a int)"), nil); err == nil {
		t.Fatal("the statement went on past the crash")
	}
	if in := onDisk(); len(in) != 1 {
		t.Fatalf("intents after the crash: %+v, want one", in)
	}
	c.SetIntentHook(nil)
	txn.Rollback()
	idle()
}

// TestIntentLogged: whether start-up can tell from the log that an open
// intent's transaction committed. The log tells when it reaches back to
// the intent's From: its record, if any, would be there. An empty log
// tells only for an intent recorded while nothing was durable (From 1:
// barriers start at 1): a log that held a record is never empty again
// (wal.TruncateBefore keeps a durable one), so nothing was ever logged
// after it. Any other empty log may have lost the record (truncated), so
// it cannot tell.
func TestIntentLogged(t *testing.T) {
	recs := func(from, to uint64, txn map[uint64]uint64) []wal.Record {
		var rs []wal.Record
		for b := from; b <= to; b++ {
			rs = append(rs, wal.Record{Txn: txn[b], Barrier: b})
		}
		return rs
	}
	for _, tc := range []struct {
		name          string
		in            Intent
		records       []wal.Record
		logged, known bool
	}{
		{"logged", Intent{From: 5, Txn: 9}, recs(3, 12, map[uint64]uint64{7: 9}), true, true},
		{"not logged, log reaches back", Intent{From: 5, Txn: 9}, recs(5, 12, nil), false, true},
		{"log truncated past From", Intent{From: 5, Txn: 9}, recs(6, 12, nil), false, false},
		{"empty log, nothing durable at the intent", Intent{From: 1, Txn: 9}, nil, false, true},
		{"empty log, records were durable at the intent", Intent{From: 5, Txn: 9}, nil, false, false},
	} {
		logged, known := tc.in.Logged(tc.records)
		if logged != tc.logged || known != tc.known {
			t.Errorf("%s: Logged = %v, %v; want %v, %v", tc.name, logged, known, tc.logged, tc.known)
		}
	}
}
