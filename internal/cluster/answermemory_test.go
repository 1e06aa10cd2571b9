package cluster

import (
	"context"
	"io"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/driver/fakeengine"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestShellAnswerMemory (issue 18, item 2): an answer past
// Options.AnswerMemory reaches a client that reads it as it is
// (WithSpill) whole, the rows past the bound spilled to disk and read
// back in order; any other caller gets 53200 and nothing of the
// answer. Every row is voted on either way: a secondary whose answer
// differs only in its last row, far past the bound, loses its vote, and
// the transaction still commits on the other two.
func TestShellAnswerMemory(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 2000
	fc := newFakeCluster(t, Options{DigestRows: 0, AnswerMemory: 4 << 10, SpillDir: t.TempDir()})
	defer fc.Close()
	ctx := context.Background()
	rows := func(last string) [][]string {
		var rs [][]string
		for i := range n - 1 {
			rs = append(rs, []string{strconv.Itoa(i), "row " + strconv.Itoa(i)})
		}
		return append(rs, []string{last, "last"})
	}
	want := rows("end")
	for _, e := range fc.engines {
		e.On(fakeengine.Exec, "SELECT k, v FROM t").Rows([]string{"k", "v"}, want...)
	}
	fc.engines[2].On(fakeengine.Exec, "SELECT k, v FROM t").Rows([]string{"k", "v"}, rows("other")...)
	st := fc.stmt(t, "SELECT k, v FROM t")

	txn := begin(t, fc)
	a, err := txn.Exec(WithSpill(ctx), st, nil)
	if err != nil {
		t.Fatalf("select: %v", err)
	}
	if a.More == nil || len(a.Rows) >= n/2 {
		t.Fatalf("%d rows kept in memory, spilled %v: want most past the 4 kB bound spilled", len(a.Rows), a.More != nil)
	}
	if a.RowCount() != n {
		t.Fatalf("answer has %d rows, want %d", a.RowCount(), n)
	}
	got := a.Rows
	for {
		r, err := a.More.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	a.More.Close()
	for i, r := range got {
		if r[0].Text != want[i][0] || r[1].Text != want[i][1] {
			t.Fatalf("row %d is %v, want %v", i, r, want[i])
		}
	}
	if err := txn.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	fc.idle(t)
	if st := fc.Replicas(); st[2].Mismatches != 1 || st[1].Mismatches != 0 || st[0].Mismatches != 0 {
		t.Errorf("mismatches %d %d %d, want 0 0 1: the last row was not voted on", st[0].Mismatches, st[1].Mismatches, st[2].Mismatches)
	}

	txn = begin(t, fc)
	if _, err := txn.Exec(ctx, st, nil); sqlState(err) != pgerr.OutOfMemory {
		t.Fatalf("answer past the bound for a caller that keeps it: %v, want 53200", err)
	}
	txn.Rollback()
	fc.idle(t)
}
