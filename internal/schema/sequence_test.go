package schema

import (
	"math"
	"path/filepath"
	"sync"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func parseOne(t *testing.T, sql string) *pg_query.Node {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].Stmt
}

func seqOf(t *testing.T, sql string) *Sequence {
	t.Helper()
	q, err := SequenceOf(parseOne(t, sql).GetCreateSeqStmt())
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return q
}

// TestSequenceDefaults: CREATE SEQUENCE's defaults are PostgreSQL 15's,
// by type and direction.
func TestSequenceDefaults(t *testing.T) {
	for _, tc := range []struct {
		sql                   string
		min, max, start, incr int64
	}{
		{"CREATE SEQUENCE s", 1, math.MaxInt64, 1, 1},
		{"CREATE SEQUENCE s INCREMENT -1", math.MinInt64, -1, -1, -1},
		{"CREATE SEQUENCE s AS smallint", 1, math.MaxInt16, 1, 1},
		{"CREATE SEQUENCE s AS integer INCREMENT BY -3", math.MinInt32, -1, -1, -3},
		{"CREATE SEQUENCE s MINVALUE 5", 5, math.MaxInt64, 5, 1},
		{"CREATE SEQUENCE s INCREMENT 50 START WITH 1 MAXVALUE 1000", 1, 1000, 1, 50},
	} {
		q := seqOf(t, tc.sql)
		if q.Min != tc.min || q.Max != tc.max || q.Start != tc.start || q.Increment != tc.incr || q.Cache != 1 {
			t.Errorf("%s: %+v", tc.sql, q)
		}
	}
}

// TestSequenceOptionErrors: options PostgreSQL refuses give its SQLSTATE
// and message.
func TestSequenceOptionErrors(t *testing.T) {
	for sql, msg := range map[string]string{
		"CREATE SEQUENCE s INCREMENT 0":                 "INCREMENT must not be zero",
		"CREATE SEQUENCE s MINVALUE 10 MAXVALUE 5":      "MINVALUE (10) must be less than MAXVALUE (5)",
		"CREATE SEQUENCE s START 0":                     "START value (0) cannot be less than MINVALUE (1)",
		"CREATE SEQUENCE s MAXVALUE 5 START 6":          "START value (6) cannot be greater than MAXVALUE (5)",
		"CREATE SEQUENCE s AS smallint MAXVALUE 40000":  "MAXVALUE (40000) is out of range for sequence data type smallint",
		"CREATE SEQUENCE s AS int MINVALUE -3000000000": "MINVALUE (-3000000000) is out of range for sequence data type integer",
		"CREATE SEQUENCE s CACHE 0":                     "CACHE (0) must be greater than zero",
		"CREATE SEQUENCE s AS text":                     "sequence type must be smallint, integer, or bigint",
	} {
		_, err := SequenceOf(parseOne(t, sql).GetCreateSeqStmt())
		if pe := pgerr.From(err); pe == nil || pe.Code != pgerr.InvalidParameterValue || pe.Message != msg {
			t.Errorf("%s: %v, want 22023 %q", sql, err, msg)
		}
	}
}

// TestSequenceNext: nextval()'s arithmetic up to the bounds, with and
// without CYCLE, at the edges of int64 too.
func TestSequenceNext(t *testing.T) {
	run := func(q *Sequence, n int) (vals []int64, err error) {
		st := SeqState{Last: q.Start}
		for i := 0; i < n; i++ {
			var v int64
			v, st, err = q.Next(st)
			if err != nil {
				return vals, err
			}
			vals = append(vals, v)
		}
		return vals, nil
	}
	eq := func(a, b []int64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	for _, tc := range []struct {
		sql  string
		n    int
		want []int64
		err  string
	}{
		{"CREATE SEQUENCE s", 3, []int64{1, 2, 3}, ""},
		{"CREATE SEQUENCE s INCREMENT 5 START 10 MAXVALUE 20", 4, []int64{10, 15, 20}, `nextval: reached maximum value of sequence "s" (20)`},
		{"CREATE SEQUENCE s INCREMENT 7 MAXVALUE 20", 4, []int64{1, 8, 15}, `nextval: reached maximum value of sequence "s" (20)`},
		{"CREATE SEQUENCE s INCREMENT -2 MINVALUE -5 MAXVALUE 0 CYCLE", 5, []int64{0, -2, -4, 0, -2}, ""},
		{"CREATE SEQUENCE s INCREMENT -1 MINVALUE -2 MAXVALUE 0", 4, []int64{0, -1, -2}, `nextval: reached minimum value of sequence "s" (-2)`},
		{"CREATE SEQUENCE s MINVALUE 3 MAXVALUE 4 CYCLE", 4, []int64{3, 4, 3, 4}, ""},
		{"CREATE SEQUENCE s START 9223372036854775806", 3, []int64{9223372036854775806, 9223372036854775807}, `nextval: reached maximum value of sequence "s" (9223372036854775807)`},
		{"CREATE SEQUENCE s INCREMENT 4611686018427387904 START 9223372036854775800", 2, []int64{9223372036854775800}, `nextval: reached maximum value of sequence "s" (9223372036854775807)`},
		{"CREATE SEQUENCE s INCREMENT -9223372036854775807", 3, []int64{-1, math.MinInt64}, `nextval: reached minimum value of sequence "s" (-9223372036854775808)`},
		{"CREATE SEQUENCE s INCREMENT 9223372036854775807 MINVALUE -10 MAXVALUE -5", 2, []int64{-10}, `nextval: reached maximum value of sequence "s" (-5)`},
		{"CREATE SEQUENCE s INCREMENT -9223372036854775808 MINVALUE 5 MAXVALUE 10 CYCLE", 3, []int64{10, 10, 10}, ""},
	} {
		q := seqOf(t, tc.sql)
		vals, err := run(q, tc.n)
		msg := ""
		if err != nil {
			pe := pgerr.From(err)
			if pe.Code != "2200H" {
				t.Errorf("%s: %v, want 2200H", tc.sql, err)
			}
			msg = pe.Message
		}
		if !eq(vals, tc.want) || msg != tc.err {
			t.Errorf("%s: %v %q, want %v %q", tc.sql, vals, msg, tc.want, tc.err)
		}
	}
}

// TestSequenceAheadCovers: the state Ahead gives is at or past every
// value the next k calls give, whatever the increment and bounds.
func TestSequenceAheadCovers(t *testing.T) {
	for _, sql := range []string{
		"CREATE SEQUENCE s", "CREATE SEQUENCE s INCREMENT 3", "CREATE SEQUENCE s INCREMENT -7",
		"CREATE SEQUENCE s MAXVALUE 10", "CREATE SEQUENCE s INCREMENT -2 MINVALUE -9 MAXVALUE 0",
		"CREATE SEQUENCE s START 9223372036854775000 INCREMENT 100",
		"CREATE SEQUENCE s INCREMENT -9223372036854775808 MINVALUE 5 MAXVALUE 10",
		"CREATE SEQUENCE s INCREMENT 9223372036854775807 MINVALUE -9223372036854775808 START -9223372036854775808",
	} {
		q := seqOf(t, sql)
		for _, called := range []bool{false, true} {
			st := SeqState{Last: q.Start, Called: called}
			ahead := q.Ahead(st, 5)
			for i := 0; i < 5; i++ {
				v, next, err := q.Next(st)
				if err != nil {
					break
				}
				if q.Increment > 0 && v > ahead.Last || q.Increment < 0 && v < ahead.Last {
					t.Errorf("%s (called %v): value %d past the saved state %d", sql, called, v, ahead.Last)
				}
				st = next
			}
		}
	}
}

// TestSequenceSet: setval() within the bounds, 22003 outside.
func TestSequenceSet(t *testing.T) {
	q := seqOf(t, "CREATE SEQUENCE s AS smallint")
	if st, err := q.Set(500, false); err != nil || st != (SeqState{Last: 500}) {
		t.Errorf("setval 500 false: %v %v", st, err)
	}
	_, err := q.Set(40000, true)
	if pe := pgerr.From(err); pe == nil || pe.Code != "22003" || pe.Message != `setval: value 40000 is out of bounds for sequence "s" (1..32767)` {
		t.Errorf("setval 40000: %v", err)
	}
}

// TestSequenceName: regclass's reading of a sequence name.
func TestSequenceName(t *testing.T) {
	for in, want := range map[string]string{
		"s": "s", "S": "s", `"S"`: "S", "public.s": "s", `public."a.b"`: "a.b", ` s `: "s", `"a""b"`: `a"b`,
	} {
		if got, err := SequenceName(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", `"s`, "a.b.c.d", "other.s", "s."} {
		if got, err := SequenceName(in); err == nil {
			t.Errorf("%q: %q, want an error", in, got)
		}
	}
}

// TestCatalogSequencesSurviveRestart: values handed out before a restart
// (or a crash: the catalog is reopened without any shutdown) are never
// handed out again; setval() and RESTART are durable at once; DROP
// forgets the sequence, DROP TABLE its OWNED BY sequences.
func TestCatalogSequencesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(c *Catalog, sql string) {
		t.Helper()
		if err := c.Apply(parseOne(t, sql)); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	apply(c, "CREATE SEQUENCE up INCREMENT 2")
	apply(c, "CREATE SEQUENCE down INCREMENT -1 MINVALUE -3000")
	apply(c, "CREATE TABLE t (id int)")
	apply(c, "CREATE SEQUENCE owned OWNED BY t.id")
	seen := map[int64]bool{}
	var last int64
	for i := 0; i < seqReserve+10; i++ {
		v, err := c.SeqNext("up")
		if err != nil {
			t.Fatal(err)
		}
		seen[v], last = true, v
	}
	for i := 0; i < 5; i++ {
		if _, err := c.SeqNext("down"); err != nil {
			t.Fatal(err)
		}
	}
	c, err = Open(path) // as after a crash: nothing was closed
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.SeqNext("up")
	if err != nil || seen[v] || v <= last || v%2 != 1 {
		t.Errorf("after reopening: nextval(up) %d %v, last before %d", v, err, last)
	}
	if v, err := c.SeqNext("down"); err != nil || v > -6 {
		t.Errorf("after reopening: nextval(down) %d %v, want at most -6", v, err)
	}
	if err := c.SeqSet("down", -2990, true); err != nil {
		t.Fatal(err)
	}
	apply(c, "ALTER SEQUENCE up RESTART WITH 7")
	c, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.SeqNext("up"); err != nil || v != 7 {
		t.Errorf("after RESTART WITH 7 and reopening: %d %v", v, err)
	}
	for i, want := range []int64{-2991, -2992} {
		if v, err := c.SeqNext("down"); err != nil || v != want {
			t.Errorf("after setval and reopening, call %d: %d %v, want %d", i, v, err, want)
		}
	}
	apply(c, "ALTER TABLE t RENAME TO t2")
	apply(c, "ALTER TABLE t2 RENAME COLUMN id TO key")
	if q := c.Snapshot().Sequence("owned"); q == nil || q.OwnedBy != "t2.key" {
		t.Errorf("OWNED BY after renames: %+v", q)
	}
	apply(c, "DROP TABLE t2")
	if c.Snapshot().Sequence("owned") != nil {
		t.Error("DROP TABLE t2 left sequence owned (OWNED BY t2.key)")
	}
	apply(c, "DROP SEQUENCE up")
	if _, err := c.SeqNext("up"); pgerr.Code(err) != pgerr.UndefinedTable {
		t.Errorf("nextval of a dropped sequence: %v, want 42P01", err)
	}
	c, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Snapshot().Sequence("up") != nil || c.Snapshot().Sequence("down") == nil {
		t.Errorf("after reopening: sequences %v", c.Snapshot().Sequences)
	}
}

// TestCatalogSequenceConcurrent: sessions calling nextval() at once get
// distinct values, together exactly the sequence's first ones.
func TestCatalogSequenceConcurrent(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(parseOne(t, "CREATE SEQUENCE s")); err != nil {
		t.Fatal(err)
	}
	const workers, calls = 8, 300
	got := make(chan int64, workers*calls)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				v, err := c.SeqNext("s")
				if err != nil {
					t.Error(err)
					return
				}
				got <- v
			}
		}()
	}
	wg.Wait()
	close(got)
	seen := map[int64]bool{}
	for v := range got {
		if seen[v] || v < 1 || v > workers*calls {
			t.Fatalf("value %d handed out twice or out of 1..%d", v, workers*calls)
		}
		seen[v] = true
	}
	if len(seen) != workers*calls {
		t.Errorf("%d values, want %d", len(seen), workers*calls)
	}
}

// TestSequenceDDLRefusals: what shepherd cannot keep is refused, and
// PostgreSQL's own errors keep their SQLSTATE.
func TestSequenceDDLRefusals(t *testing.T) {
	c, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE SEQUENCE s", "CREATE TABLE t (id bigint DEFAULT nextval('s'))", "CREATE TABLE st (id serial)"} {
		if err := c.Apply(parseOne(t, q)); err != nil {
			t.Fatal(err)
		}
	}
	for q, code := range map[string]string{
		"CREATE TEMPORARY SEQUENCE x":               pgerr.FeatureNotSupported,
		"DROP SEQUENCE s CASCADE":                   pgerr.FeatureNotSupported,
		"DROP SEQUENCE s":                           "2BP01",
		"CREATE SEQUENCE other.x":                   "3F000",
		"CREATE SEQUENCE t":                         pgerr.DuplicateTable,
		"CREATE SEQUENCE x OWNED BY u.id":           pgerr.UndefinedTable,
		"ALTER SEQUENCE x RESTART":                  pgerr.UndefinedTable,
		"CREATE SEQUENCE x CYCLE OWNED BY t.nosuch": pgerr.UndefinedColumn,
	} {
		if err := c.Apply(parseOne(t, q)); pgerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
	if len(c.Snapshot().Sequences) != 1 {
		t.Errorf("sequences after the refusals: %v", c.Snapshot().Sequences)
	}
}
