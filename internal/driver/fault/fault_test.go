package fault_test

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	"github.com/shepherd-db/shepherd/internal/driver/fault"
	_ "github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// openSQLite opens the pure-Go SQLite driver on a fresh file; the test
// closes it.
func openSQLite(t *testing.T) driver.Engine {
	t.Helper()
	open, ok := driver.Lookup("sqlite")
	if !ok {
		t.Fatal(`driver "sqlite" is not registered`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := open(ctx, driver.Spec{Name: "lite", DSN: "f.db", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestConformance: with no fault configured the wrapper is a driver like
// any other.
func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Engine {
		return fault.Wrap(openSQLite(t), fault.Config{})
	})
}

// pair is a wrapped engine and a connection to it, with a connection to
// the same database that bypasses the wrapper, to tell true answers.
type pair struct {
	faulty, honest driver.Conn
}

func newPair(t *testing.T, cfg fault.Config) pair {
	t.Helper()
	inner := openSQLite(t)
	e := fault.Wrap(inner, cfg)
	t.Cleanup(func() { e.Close() })
	ctx := context.Background()
	faulty, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { faulty.Close() })
	honest, err := inner.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { honest.Close() })
	p := pair{faulty: faulty, honest: honest}
	p.must(t, p.honest, "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)")
	p.must(t, p.honest, "INSERT INTO t VALUES (1, 1.5, 'one', x'01'), (2, NULL, 'two', NULL), (NULL, -2e300, '', x'')")
	return p
}

func (pair) must(t *testing.T, c driver.Conn, sql string) *answer.Answer {
	t.Helper()
	a, err := c.Exec(context.Background(), query(sql))
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return a
}

func query(sql string) driver.Query {
	q := driver.Query{SQL: sql}
	q.Verb = q.Command()
	q.ReturnsRows = q.Verb == "SELECT"
	return q
}

// selects cover every way an answer can look: several rows, one, none,
// NULLs, every SQLite storage class, no row at all.
var selects = []string{
	"SELECT * FROM t",
	"SELECT i FROM t WHERE i = 1",
	"SELECT s FROM t WHERE s = 'nothing'",
	"SELECT r, b FROM t WHERE i IS NULL",
	"SELECT count(*) FROM t",
	"SELECT NULL",
	"SELECT 'a', 'a' UNION ALL SELECT 'a', 'a'",
}

// differs runs sql on both connections and reports whether the faulty
// answer has another digest.
func (p pair) differs(t *testing.T, sql string) bool {
	t.Helper()
	truth := p.must(t, p.honest, sql)
	got := p.must(t, p.faulty, sql)
	return got.Digest(false) != truth.Digest(false)
}

func TestWrongAnswerAlways(t *testing.T) {
	p := newPair(t, fault.Config{WrongAnswerRate: 1, Seed: 7})
	for range 20 { // every kind of corruption, on every answer shape
		for _, sql := range selects {
			if !p.differs(t, sql) {
				t.Errorf("%s: corrupted answer has the true digest", sql)
			}
		}
	}
	// Statements without rows are left alone.
	truth := p.must(t, p.faulty, "UPDATE t SET s = s WHERE i = 1")
	if truth.Tag != "UPDATE 1" || truth.RowsAffected != 1 {
		t.Errorf("UPDATE answered %q (%d rows) under wrong_answer_rate", truth.Tag, truth.RowsAffected)
	}
}

func TestNoFaultAtRateZero(t *testing.T) {
	p := newPair(t, fault.Config{Seed: 7})
	for range 20 {
		for _, sql := range selects {
			if p.differs(t, sql) {
				t.Errorf("%s: answer changed with every rate 0", sql)
			}
		}
	}
}

func TestWrongAnswerRate(t *testing.T) {
	const n, rate = 1000, 0.3
	p := newPair(t, fault.Config{WrongAnswerRate: rate, Seed: 1})
	wrong := 0
	for range n {
		if p.differs(t, "SELECT * FROM t") {
			wrong++
		}
	}
	// The binomial's standard deviation is about 14.5; allow 5 of them.
	if wrong < 230 || wrong > 370 {
		t.Errorf("%d of %d answers wrong at rate %v", wrong, n, rate)
	}
}

func TestWrongCount(t *testing.T) {
	p := newPair(t, fault.Config{WrongCountRate: 1})
	for _, c := range []struct {
		sql, tag string
		n        int64
	}{
		{"INSERT INTO t (i) VALUES (10)", "INSERT 0 2", 2},
		{"UPDATE t SET s = 'x' WHERE i >= 2", "UPDATE 3", 3},
		{"DELETE FROM t WHERE i = 99", "DELETE 1", 1},
	} {
		a := p.must(t, p.faulty, c.sql)
		if a.Tag != c.tag || a.RowsAffected != c.n {
			t.Errorf("%s: answered %q (%d rows), want %q (%d)", c.sql, a.Tag, a.RowsAffected, c.tag, c.n)
		}
	}
	// Reads and DDL keep their count.
	if p.differs(t, "SELECT * FROM t") {
		t.Error("SELECT changed under wrong_count_rate")
	}
	if a := p.must(t, p.faulty, "CREATE TABLE u (x INTEGER)"); a.Tag != "CREATE" || a.RowsAffected != 0 {
		t.Errorf("CREATE TABLE answered %q (%d rows)", a.Tag, a.RowsAffected)
	}
}

func TestStallHonoursCtx(t *testing.T) {
	p := newPair(t, fault.Config{StallRate: 1, StallMS: 60_000, Replica: "lite"})
	const after = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), after)
	defer cancel()
	start := time.Now()
	_, err := p.faulty.Exec(ctx, query("INSERT INTO t (i) VALUES (42)"))
	if took := time.Since(start); took > after+5*time.Second {
		t.Errorf("stalled statement returned after %v", took)
	}
	if pgerr.Code(err) != pgerr.QueryCanceled {
		t.Fatalf("stalled statement with an ended ctx: %v, want SQLSTATE %s", err, pgerr.QueryCanceled)
	}
	if r := pgerr.From(err).Replica; r != "lite" {
		t.Errorf("error names replica %q, want lite", r)
	}
	// The statement never ran.
	a := p.must(t, p.honest, "SELECT count(*) FROM t WHERE i = 42")
	if a.Rows[0][0].Text != "0" {
		t.Errorf("a cancelled stalled INSERT ran: %v", a.Rows)
	}
}

func TestStallDelays(t *testing.T) {
	const stall = 50 * time.Millisecond
	p := newPair(t, fault.Config{StallRate: 1, StallMS: int(stall.Milliseconds())})
	start := time.Now()
	if p.differs(t, "SELECT * FROM t") {
		t.Error("a stall changed the answer")
	}
	if took := time.Since(start); took < stall {
		t.Errorf("stalled statement answered after %v, want at least %v", took, stall)
	}
}

// TestReproducible: the same seed and statements give the same answers.
func TestReproducible(t *testing.T) {
	cfg := fault.Config{WrongAnswerRate: 0.5, WrongCountRate: 0.5, Seed: 42}
	run := func(cfg fault.Config) []answer.Digest {
		p := newPair(t, cfg)
		var out []answer.Digest
		for range 10 {
			for _, sql := range append(selects, "UPDATE t SET s = s") {
				out = append(out, p.must(t, p.faulty, sql).Digest(true))
			}
		}
		return out
	}
	a, b := run(cfg), run(cfg)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("answer %d differs between two runs with seed %d", i, cfg.Seed)
		}
	}
	cfg.Seed++
	c := run(cfg)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Errorf("seeds %d and %d gave the same %d answers", cfg.Seed-1, cfg.Seed, len(a))
	}
}

func TestPassThrough(t *testing.T) {
	inner := openSQLite(t)
	e := fault.Wrap(inner, fault.Config{WrongAnswerRate: 1})
	defer e.Close()
	if e.Driver() != inner.Driver() || e.Class() != inner.Class() || e.Dialect() != inner.Dialect() {
		t.Errorf("wrapper is %s/%v/%v, inner %s/%v/%v",
			e.Driver(), e.Class(), e.Dialect(), inner.Driver(), inner.Class(), inner.Dialect())
	}
	if (fault.Config{}).Active() || !(fault.Config{StallRate: 0.1, StallMS: 1}).Active() || (fault.Config{StallRate: 1}).Active() {
		t.Error("Config.Active is wrong")
	}
}
