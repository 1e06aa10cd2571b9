package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noSync skips fsync, for tests that cut and reopen logs by the hundred
// and do not test durability itself.
var noSync = Options{Sync: func(*os.File) error { return nil }}

// testRecord returns a record for barrier b whose shape varies with b.
func testRecord(b uint64) Record {
	r := Record{Txn: 1000 + 7*b, Barrier: b}
	for i := range int(b % 4) {
		st := Statement{
			SQL:     fmt.Sprintf("UPDATE accounts SET balance = balance + $1 WHERE id = %d", b*10+uint64(i)),
			Writes:  i%2 == 0,
			Barrier: b / 2,
		}
		for j := range i {
			st.Args = append(st.Args, Value{Null: j == 1, Type: uint8(j), Text: map[bool]string{true: "", false: fmt.Sprint(b)}[j == 1]})
		}
		r.Statements = append(r.Statements, st)
	}
	return r
}

func testRecords(from, to uint64) []Record {
	var rs []Record
	for b := from; b < to; b++ {
		rs = append(rs, testRecord(b))
	}
	return rs
}

func open(t *testing.T, dir string, opts Options) (*Log, []Record) {
	t.Helper()
	l, recs, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l, recs
}

func appendAll(t *testing.T, l *Log, rs []Record) {
	t.Helper()
	for _, r := range rs {
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatalf("Append barrier %d: %v", r.Barrier, err)
		}
	}
}

func closeLog(t *testing.T, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// writeLog creates a log holding rs and returns its directory.
func writeLog(t *testing.T, opts Options, rs []Record) string {
	t.Helper()
	dir := t.TempDir()
	l, _ := open(t, dir, opts)
	appendAll(t, l, rs)
	closeLog(t, l)
	return dir
}

func segmentFiles(t *testing.T, dir string) []segment {
	t.Helper()
	segs, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

// frameOffsets returns where each frame of a segment's data starts.
func frameOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	var offs []int
	for off := 0; off < len(data); {
		_, size, damage := nextFrame(data[off:])
		if damage != "" {
			t.Fatalf("damage %q at %d", damage, off)
		}
		offs = append(offs, off)
		off += size
	}
	return offs
}

func TestRoundTripAndReopen(t *testing.T) {
	dir := t.TempDir()
	l, recs := open(t, dir, Options{})
	if len(recs) != 0 {
		t.Fatalf("new log returned %d records", len(recs))
	}
	want := append(sampleRecords()[:3:3], testRecords(301, 340)...)
	appendAll(t, l, want)
	if st := l.Stats(); st.Records != uint64(len(want)) {
		t.Fatalf("Stats.Records %d, want %d", st.Records, len(want))
	}
	closeLog(t, l)

	l, recs = open(t, dir, Options{})
	sameRecords(t, recs, want)
	if r, ok := l.Repaired(); ok {
		t.Fatalf("intact log repaired: %v", r)
	}
	more := testRecords(340, 350)
	appendAll(t, l, more)
	closeLog(t, l)

	l, recs = open(t, dir, Options{})
	sameRecords(t, recs, append(want, more...))
	closeLog(t, l)
	if segs := segmentFiles(t, dir); len(segs) != 1 || segs[0].first != 0 {
		t.Fatalf("segments %v, want one named 0", segs)
	}
	if _, err := os.Stat(filepath.Join(dir, "00000000000000000000.wal")); err != nil {
		t.Fatal(err)
	}
}

// TestTornTail cuts the last record at every byte offset: Open drops it,
// says so, and the log takes the next record and reopens clean.
func TestTornTail(t *testing.T) {
	for _, n := range []uint64{1, 5} { // with 1 the segment empties and goes
		rs := testRecords(11, 11+n)
		src := writeLog(t, noSync, rs)
		seg := segmentFiles(t, src)[0]
		data, err := os.ReadFile(seg.path)
		if err != nil {
			t.Fatal(err)
		}
		offs := frameOffsets(t, data)
		lastStart := offs[len(offs)-1]
		for cut := lastStart; cut < len(data); cut++ {
			dir := t.TempDir()
			path := filepath.Join(dir, filepath.Base(seg.path))
			if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			l, recs := open(t, dir, noSync)
			sameRecords(t, recs, rs[:n-1])
			rep, ok := l.Repaired()
			switch {
			case n == 1 && (!ok || !rep.Removed):
				t.Fatalf("cut %d: repair %+v %v, want the segment removed", cut, rep, ok)
			case cut > lastStart && (!ok || rep.Offset != int64(lastStart) || rep.DroppedBytes != int64(cut-lastStart)):
				t.Fatalf("cut %d: repair %+v %v, want %d bytes dropped at %d", cut, rep, ok, cut-lastStart, lastStart)
			case n > 1 && cut == lastStart && ok:
				t.Fatalf("cut at a frame boundary reported a repair: %v", rep)
			}
			if fi, err := os.Stat(path); n > 1 && (err != nil || fi.Size() != int64(lastStart)) {
				t.Fatalf("cut %d: file not cut back to %d: %v %v", cut, lastStart, fi, err)
			}
			appendAll(t, l, rs[n-1:])
			closeLog(t, l)
			l, recs = open(t, dir, noSync)
			sameRecords(t, recs, rs)
			if rep, ok := l.Repaired(); ok {
				t.Fatalf("cut %d: second open repaired again: %v", cut, rep)
			}
			closeLog(t, l)
		}
	}
}

// TestGarbageTail: bytes that are no frame after the last record (zeros
// from a file system that extended the file, or junk) are dropped.
func TestGarbageTail(t *testing.T) {
	rs := testRecords(1, 6)
	for name, junk := range map[string][]byte{
		"zeros":       make([]byte, 4096),
		"short":       {1, 2, 3},
		"huge length": {0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5},
		"bad crc":     {4, 0, 0, 0, 1, 2, 3, 4, 1, 0, 0, 0},
	} {
		dir := writeLog(t, noSync, rs)
		seg := segmentFiles(t, dir)[0]
		f, err := os.OpenFile(seg.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(junk)
		f.Close()
		l, recs := open(t, dir, noSync)
		sameRecords(t, recs, rs)
		if rep, ok := l.Repaired(); !ok || rep.DroppedBytes != int64(len(junk)) {
			t.Fatalf("%s: repair %+v %v, want %d bytes dropped", name, rep, ok, len(junk))
		}
		closeLog(t, l)
	}
}

// TestBitFlipLastRecord flips every bit of the last record in turn: the
// record is dropped as a torn tail.
func TestBitFlipLastRecord(t *testing.T) {
	rs := testRecords(1, 5)
	src := writeLog(t, noSync, rs)
	seg := segmentFiles(t, src)[0]
	data, _ := os.ReadFile(seg.path)
	offs := frameOffsets(t, data)
	lastStart := offs[len(offs)-1]
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.Base(seg.path))
	for bit := lastStart * 8; bit < len(data)*8; bit++ {
		flipped := append([]byte(nil), data...)
		flipped[bit/8] ^= 1 << (bit % 8)
		if err := os.WriteFile(path, flipped, 0o644); err != nil {
			t.Fatal(err)
		}
		l, recs := open(t, dir, noSync)
		sameRecords(t, recs, rs[:len(rs)-1])
		if rep, ok := l.Repaired(); !ok || rep.Offset != int64(lastStart) {
			t.Fatalf("bit %d: repair %+v %v", bit, rep, ok)
		}
		closeLog(t, l)
	}
}

// TestBitFlipEarlierSegment: damage in a segment other than the last is
// ErrCorrupt, located, and Open leaves every file as it was.
func TestBitFlipEarlierSegment(t *testing.T) {
	rs := testRecords(1, 40)
	opts := Options{SegmentBytes: 512, Sync: noSync.Sync}
	src := writeLog(t, opts, rs)
	segs := segmentFiles(t, src)
	if len(segs) < 3 {
		t.Fatalf("only %d segments", len(segs))
	}
	data, _ := os.ReadFile(segs[1].path)
	offs := frameOffsets(t, data)
	lastStart := offs[len(offs)-1]
	// The length, checksum and payload of the first record, and the last
	// record of the segment: its damage is no torn tail, the segment is
	// not the last.
	for _, pos := range []int{0, 3, 5, 9, len(data) / 2, lastStart, lastStart + 4, len(data) - 1} {
		flipped := append([]byte(nil), data...)
		flipped[pos] ^= 0x10
		if err := os.WriteFile(segs[1].path, flipped, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Open(src, opts)
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.File != segs[1].path {
			t.Fatalf("flip at %d: err %v, want ErrCorrupt in %s", pos, err, segs[1].path)
		}
		if after, _ := os.ReadFile(segs[1].path); !reflect.DeepEqual(after, flipped) {
			t.Fatalf("flip at %d: Open changed the damaged file", pos)
		}
		if n := len(segmentFiles(t, src)); n != len(segs) {
			t.Fatalf("flip at %d: Open left %d segments of %d", pos, n, len(segs))
		}
	}
	// A cut in an earlier segment is no torn tail either.
	if err := os.WriteFile(segs[1].path, data[:len(data)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(src, opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("cut earlier segment: err %v, want ErrCorrupt", err)
	}
}

// TestBitFlipInsideLastSegment pins down the documented limit: damage in
// the last segment ends the log there, even if intact records follow.
func TestBitFlipInsideLastSegment(t *testing.T) {
	rs := testRecords(1, 6)
	dir := writeLog(t, noSync, rs)
	seg := segmentFiles(t, dir)[0]
	data, _ := os.ReadFile(seg.path)
	offs := frameOffsets(t, data)
	data[offs[2]+frameHeaderBytes] ^= 1
	os.WriteFile(seg.path, data, 0o644)
	l, recs := open(t, dir, noSync)
	sameRecords(t, recs, rs[:2])
	if rep, ok := l.Repaired(); !ok || rep.Reason != string(damageChecksum) || rep.DroppedBytes != int64(len(data)-offs[2]) {
		t.Fatalf("repair %+v %v", rep, ok)
	}
	closeLog(t, l)
}

func TestCorruptRecordOrder(t *testing.T) {
	// Intact frames whose barriers go backwards are no torn tail.
	dir := t.TempDir()
	var data []byte
	for _, b := range []uint64{5, 7, 6} {
		r := testRecord(b)
		data = appendFrame(data, &r)
	}
	os.WriteFile(segmentPath(dir, 5), data, 0o644)
	if _, _, err := Open(dir, noSync); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("backward barrier: err %v, want ErrCorrupt", err)
	}
	// A segment whose first record disagrees with its name.
	dir = t.TempDir()
	os.WriteFile(segmentPath(dir, 4), data, 0o644)
	if _, _, err := Open(dir, noSync); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("misnamed segment: err %v, want ErrCorrupt", err)
	}
}

func TestRotation(t *testing.T) {
	const segBytes = 600
	rs := testRecords(1, 120)
	big := testRecord(120)
	big.Statements = []Statement{{SQL: string(make([]byte, 2*segBytes)), Writes: true}}
	rs = append(rs, big)
	rs = append(rs, testRecords(121, 130)...)
	opts := Options{SegmentBytes: segBytes}
	dir := writeLog(t, opts, rs)

	segs := segmentFiles(t, dir)
	if len(segs) < 5 {
		t.Fatalf("%d segments, want rotation", len(segs))
	}
	var all []Record
	for _, seg := range segs {
		data, _ := os.ReadFile(seg.path)
		var order barrierOrder
		s, err := scanSegment(data, seg, &order)
		if err != nil || s.damage != "" {
			t.Fatalf("%s: %v %q", seg.path, err, s.damage)
		}
		if len(data) > segBytes && len(s.records) != 1 {
			t.Fatalf("%s: %d bytes in %d records, over the limit", seg.path, len(data), len(s.records))
		}
		all = append(all, s.records...)
	}
	sameRecords(t, all, rs)

	l, recs := open(t, dir, opts)
	sameRecords(t, recs, rs)
	closeLog(t, l)
}

func TestTruncateBefore(t *testing.T) {
	opts := Options{SegmentBytes: 600}
	rs := testRecords(1, 100)
	dir := t.TempDir()
	l, _ := open(t, dir, opts)
	appendAll(t, l, rs)
	segs := segmentFiles(t, dir)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}

	// Below the second segment's first barrier nothing can go.
	if err := l.TruncateBefore(segs[1].first - 1); err != nil {
		t.Fatal(err)
	}
	if got := segmentFiles(t, dir); len(got) != len(segs) {
		t.Fatalf("removed %d segments too early", len(segs)-len(got))
	}
	// One past the third segment's first: the first two go, the third
	// holds the barrier just below the cut and stays.
	cut := segs[2].first + 1
	if err := l.TruncateBefore(cut); err != nil {
		t.Fatal(err)
	}
	if got := segmentFiles(t, dir); !reflect.DeepEqual(got, segs[2:]) {
		t.Fatalf("after TruncateBefore(%d): %v, want %v", cut, got, segs[2:])
	}
	// Everything: the last segment stays, and appending goes on.
	if err := l.TruncateBefore(^uint64(0)); err != nil {
		t.Fatal(err)
	}
	last := segs[len(segs)-1]
	if got := segmentFiles(t, dir); !reflect.DeepEqual(got, []segment{last}) {
		t.Fatalf("after truncating everything: %v", got)
	}
	more := testRecords(100, 110)
	appendAll(t, l, more)
	closeLog(t, l)
	if err := l.TruncateBefore(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("TruncateBefore after Close: %v", err)
	}

	l, recs := open(t, dir, opts)
	want := append(rs[last.first-1:], more...)
	sameRecords(t, recs, want)
	closeLog(t, l)
}

// TestGroupCommit runs 32 appenders that take their barriers under one
// lock, as the coordinator will, and wait outside it. The sync hook
// counts data syncs and takes 2ms, like a disk: records arriving during a
// sync share the next one.
func TestGroupCommit(t *testing.T) {
	for _, c := range []struct {
		name  string
		delay time.Duration
	}{{"fsync", 0}, {"fsync+2ms", 2 * time.Millisecond}} {
		t.Run(c.name, func(t *testing.T) {
			const appenders, each = 32, 25
			var syncs atomic.Int64
			opts := Options{Sync: func(f *os.File) error {
				if fi, err := f.Stat(); err == nil && !fi.IsDir() {
					syncs.Add(1)
				}
				time.Sleep(c.delay)
				return f.Sync()
			}}
			dir := t.TempDir()
			l, _ := open(t, dir, opts)

			var (
				mu      sync.Mutex
				barrier uint64
				wg      sync.WaitGroup
				failed  atomic.Value
			)
			start := time.Now()
			for range appenders {
				wg.Go(func() {
					for range each {
						mu.Lock()
						barrier++
						p, err := l.Enqueue(testRecord(barrier))
						mu.Unlock()
						if err == nil {
							err = p.Wait(context.Background())
						}
						if err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			if err := failed.Load(); err != nil {
				t.Fatal(err)
			}
			st := l.Stats()
			closeLog(t, l)
			const total = appenders * each
			t.Logf("%d records, %d data fsyncs, %d batches: %.1f records per fsync, %v (%.0f records/s)",
				total, syncs.Load(), st.Batches, float64(total)/float64(syncs.Load()), elapsed.Round(time.Millisecond),
				float64(total)/elapsed.Seconds())
			if st.Records != total || syncs.Load() != int64(st.Batches) {
				t.Fatalf("stats %+v, syncs %d", st, syncs.Load())
			}
			if syncs.Load() >= total/2 {
				t.Fatalf("%d fsyncs for %d records: no batching", syncs.Load(), total)
			}
			l, recs := open(t, dir, Options{})
			sameRecords(t, recs, testRecords(1, total+1))
			closeLog(t, l)
		})
	}
}

func TestBarrierOrder(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, noSync)
	ctx := context.Background()
	if err := l.Append(ctx, testRecord(5)); err != nil {
		t.Fatal(err)
	}
	for _, b := range []uint64{5, 3, 0} {
		if err := l.Append(ctx, testRecord(b)); !errors.Is(err, ErrBarrierOrder) {
			t.Fatalf("barrier %d after 5: err %v, want ErrBarrierOrder", b, err)
		}
	}
	bad := testRecord(6)
	bad.Statements[0].Barrier = 7
	if err := l.Append(ctx, bad); err == nil {
		t.Fatal("statement barrier above the record's accepted")
	}
	if err := l.Append(ctx, testRecord(6)); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)

	// The order survives a restart.
	l, _ = open(t, dir, noSync)
	if err := l.Append(ctx, testRecord(6)); !errors.Is(err, ErrBarrierOrder) {
		t.Fatalf("barrier 6 after reopen: err %v, want ErrBarrierOrder", err)
	}
	if err := l.Append(ctx, testRecord(9)); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
}

// TestCancel: a cancelled Append returns at once, and its record still
// reaches the log.
func TestCancel(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	opts := Options{Sync: func(f *os.File) error {
		if fi, err := f.Stat(); err == nil && !fi.IsDir() {
			<-release
		}
		return nil
	}}
	dir := t.TempDir()
	l, _ := open(t, dir, opts)
	defer once.Do(func() { close(release) })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Append(ctx, testRecord(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Append: err %v, want DeadlineExceeded", err)
	}
	once.Do(func() { close(release) })
	closeLog(t, l)
	l, recs := open(t, dir, noSync)
	sameRecords(t, recs, testRecords(1, 2))
	closeLog(t, l)
}

// TestTooLarge: a record over Options.MaxRecordBytes is refused with
// ErrTooLarge, and the log goes on with the next one.
func TestTooLarge(t *testing.T) {
	l, _ := open(t, t.TempDir(), Options{Sync: noSync.Sync, MaxRecordBytes: 100})
	ctx := context.Background()
	big := Record{Txn: 1, Barrier: 1, Statements: []Statement{{SQL: strings.Repeat("x", 200), Writes: true}}}
	if err := l.Append(ctx, big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append of %d bytes: err %v, want ErrTooLarge", len(big.Statements[0].SQL), err)
	}
	if err := l.Append(ctx, Record{Txn: 2, Barrier: 2}); err != nil {
		t.Fatalf("Append after a refusal: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSyncFailure: once a sync fails the log refuses everything, since
// the kernel may have dropped the dirty pages it could not write.
func TestSyncFailure(t *testing.T) {
	boom := errors.New("disk on fire")
	var fail atomic.Bool
	opts := Options{Sync: func(*os.File) error {
		if fail.Load() {
			return boom
		}
		return nil
	}}
	l, _ := open(t, t.TempDir(), opts)
	ctx := context.Background()
	appendAll(t, l, testRecords(1, 3))
	fail.Store(true)
	if err := l.Append(ctx, testRecord(3)); !errors.Is(err, boom) {
		t.Fatalf("Append: err %v, want %v", err, boom)
	}
	fail.Store(false)
	if err := l.Append(ctx, testRecord(4)); !errors.Is(err, boom) || !errors.Is(err, ErrFailed) {
		t.Fatalf("Append after failure: err %v, want %v wrapped in ErrFailed", err, boom)
	}
	if err := l.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: err %v, want %v", err, boom)
	}
}

func TestLockAndClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "wal")
	l, _ := open(t, dir, noSync)
	if _, _, err := Open(dir, noSync); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err %v, want ErrLocked", err)
	}
	closeLog(t, l)
	closeLog(t, l) // twice is fine
	if err := l.Append(context.Background(), testRecord(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: err %v, want ErrClosed", err)
	}
	l, _ = open(t, dir, noSync) // the lock went with Close
	closeLog(t, l)
}

func TestEmptyLastSegmentRemoved(t *testing.T) {
	// A crash after a new segment's directory entry was synced but before
	// its first record was: the empty file goes, the previous segment
	// takes the next record.
	opts := Options{SegmentBytes: 400, Sync: noSync.Sync}
	rs := testRecords(1, 30)
	dir := writeLog(t, opts, rs)
	segs := segmentFiles(t, dir)
	empty := segmentPath(dir, 30)
	os.WriteFile(empty, nil, 0o644)
	l, recs := open(t, dir, opts)
	sameRecords(t, recs, rs)
	if rep, ok := l.Repaired(); !ok || !rep.Removed || rep.File != empty {
		t.Fatalf("repair %+v %v", rep, ok)
	}
	if got := segmentFiles(t, dir); !reflect.DeepEqual(got, segs) {
		t.Fatalf("segments %v, want %v", got, segs)
	}
	appendAll(t, l, testRecords(31, 32))
	closeLog(t, l)

	// An empty segment that is not the last is corruption.
	os.WriteFile(segmentPath(dir, 1000), nil, 0o644)
	os.WriteFile(segmentPath(dir, 1001), func() []byte { r := testRecord(1001); return appendFrame(nil, &r) }(), 0o644)
	if _, _, err := Open(dir, opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty middle segment: err %v, want ErrCorrupt", err)
	}
}

// BenchmarkAppendParallel runs 32×GOMAXPROCS appenders and reports the
// group commit factor with real fsyncs.
func BenchmarkAppendParallel(b *testing.B) {
	l, _, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var barrier uint64
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			barrier++
			p, err := l.Enqueue(testRecord(barrier))
			mu.Unlock()
			if err == nil {
				err = p.Wait(context.Background())
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	st := l.Stats()
	b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/fsync")
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// TestTruncateWhileAppending races TruncateBefore against rotation: what
// is left on disk is always a gapless suffix of the log.
func TestTruncateWhileAppending(t *testing.T) {
	opts := Options{SegmentBytes: 300, Sync: noSync.Sync}
	dir := t.TempDir()
	l, _ := open(t, dir, opts)
	const total = 400
	var held atomic.Uint64 // barriers below this may go
	done := make(chan struct{})
	go func() {
		defer close(done)
		for b := uint64(1); b <= total; b++ {
			if err := l.Append(context.Background(), testRecord(b)); err != nil {
				t.Error(err)
				return
			}
			held.Store(b / 2)
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		if err := l.TruncateBefore(held.Load()); err != nil {
			t.Fatal(err)
		}
	}
	closeLog(t, l)
	l, recs := open(t, dir, opts)
	defer closeLog(t, l)
	if len(recs) == 0 || len(recs) == total {
		t.Fatalf("%d records left of %d", len(recs), total)
	}
	sameRecords(t, recs, testRecords(total-uint64(len(recs))+1, total+1))
	if first := recs[0].Barrier; first > total/2 {
		t.Fatalf("records from %d on kept, but only those below %d were held", first, total/2)
	}
}

// TestReadFrom: records appended to an open log can be read back from a
// barrier on, across segments, while the log stays open.
func TestReadFrom(t *testing.T) {
	l, _, err := Open(t.TempDir(), Options{SegmentBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for b := uint64(1); b <= 40; b++ {
		r := Record{Txn: b, Barrier: b, Statements: []Statement{{SQL: "UPDATE t SET a = a + 1", Writes: true}}}
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.ReadFrom(17)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 24 || got[0].Barrier != 17 || got[23].Barrier != 40 {
		t.Fatalf("read %d records from 17, first %v", len(got), got[0].Barrier)
	}
	if err := l.TruncateBefore(30); err != nil {
		t.Fatal(err)
	}
	got, err = l.ReadFrom(30)
	if err != nil || len(got) != 11 {
		t.Fatalf("after truncation: %d records, %v", len(got), err)
	}
}

// TestTruncateKeepsADurableRecord: truncating before barrier b keeps the
// segment that holds b-1, which every replica applied and so is durable,
// even when b opens the last segment. Otherwise a crash before the
// record at b was synced would leave the log empty once its torn segment
// is removed, and an empty log would look like one that never held a
// record (start-up takes that to mean an open DDL intent never
// committed: cluster.Intent.Logged).
func TestTruncateKeepsADurableRecord(t *testing.T) {
	opts := Options{SegmentBytes: 600}
	dir := t.TempDir()
	l, _ := open(t, dir, opts)
	// Append until a record opens a new segment: the last one holds
	// that record alone.
	for b := uint64(1); len(segmentFiles(t, dir)) < 3; b++ {
		appendAll(t, l, []Record{testRecord(b)})
	}
	segs := segmentFiles(t, dir)
	last := segs[len(segs)-1]
	// Every replica applied everything below last.first; the record at
	// last.first may not be synced yet.
	if err := l.TruncateBefore(last.first); err != nil {
		t.Fatal(err)
	}
	closeLog(t, l)
	// The crash: last.first's record was never durable.
	if err := os.Truncate(last.path, 0); err != nil {
		t.Fatal(err)
	}
	l, recs := open(t, dir, opts)
	defer closeLog(t, l)
	if len(recs) == 0 || recs[len(recs)-1].Barrier != last.first-1 {
		t.Fatalf("after truncating before %d and losing it: %d records, want the one at %d kept", last.first, len(recs), last.first-1)
	}
}
