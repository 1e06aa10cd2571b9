package fault

import (
	"math/rand/v2"
	"testing"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestChanged: a changed value always has another canonical form, and
// stays text a client could be sent.
func TestChanged(t *testing.T) {
	cases := []struct {
		t          answer.Type
		text, want string
		null       bool
	}{
		{answer.Int, "41", "42", false},
		{answer.Int, "-1", "0", false},
		{answer.Numeric, "12.50", "13.50", false},
		{answer.Numeric, "NaN", "", true},
		{answer.Float, "1.5", "2.5", false},
		{answer.Float, "1e300", "0", false},
		{answer.Float, "NaN", "0", false},
		{answer.Bool, "t", "f", false},
		{answer.Text, "", "x", false},
		{answer.Unknown, "abc", "abcx", false},
		{answer.Bytes, "\x00", "\x00x", false},
		{answer.Date, "2024-02-28", "2024-02-29", false},
		{answer.Timestamp, "2024-12-31 23:59:59.5", "2025-01-01 23:59:59.5", false},
		{answer.TimestampTZ, "2024-01-01 00:00:00+00", "2024-01-02 00:00:00+00", false},
		{answer.TimestampTZ, "infinity", "", true},
		{answer.Time, "23:00:00", "00:00:00", false},
		{answer.UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a10", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", false},
		{answer.JSON, `{"a":1}`, `[{"a":1}]`, false},
		{answer.Interval, "1 day", "", true},
	}
	for _, c := range cases {
		got := changed(answer.V(c.t, c.text), answer.Unknown)
		if got.Null != c.null || got.Text != c.want {
			t.Errorf("changed(%v %q) = %+v, want %q (null %v)", c.t, c.text, got, c.want, c.null)
		}
		if digestOf(answer.V(c.t, c.text)) == digestOf(got) {
			t.Errorf("changed(%v %q): same digest", c.t, c.text)
		}
	}
	for ty := answer.Unknown; ty <= answer.Interval; ty++ {
		if got := changed(answer.Null, ty); got.Null {
			t.Errorf("changed(NULL %v) is NULL", ty)
		}
	}
}

func digestOf(v answer.Value) answer.Digest {
	a := &answer.Answer{Columns: []answer.Column{{Type: answer.Text}}, Rows: [][]answer.Value{{v}}, Tag: "SELECT 1", RowsAffected: 1}
	return a.Digest(false)
}

// TestCorruptRows: every corruption of every shape changes the digest and
// leaves the original rows alone.
func TestCorruptRows(t *testing.T) {
	cols := []answer.Column{{Type: answer.Int}, {Type: answer.Text}}
	shapes := [][][]answer.Value{
		nil,
		{{answer.V(answer.Int, "1"), answer.Null}},
		{{answer.V(answer.Int, "1"), answer.V(answer.Text, "a")}, {answer.V(answer.Int, "1"), answer.V(answer.Text, "a")}},
		{{answer.V(answer.Float, "NaN"), answer.V(answer.Interval, "1 day")}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rows := range shapes {
		for range 50 {
			a := &answer.Answer{Columns: cols, Rows: rows, Tag: answer.Tag("SELECT", int64(len(rows))), RowsAffected: int64(len(rows))}
			before := a.Digest(false)
			orig := digestRows(rows)
			corruptRows(a, rng)
			if a.Digest(false) == before {
				t.Errorf("rows %v: corrupted into the same digest", rows)
			}
			if digestRows(rows) != orig {
				t.Errorf("rows %v: the original answer's rows changed", rows)
			}
			if a.RowsAffected != int64(len(a.Rows)) || a.Tag != answer.Tag("SELECT", a.RowsAffected) {
				t.Errorf("corrupted answer says %q (%d) for %d rows", a.Tag, a.RowsAffected, len(a.Rows))
			}
		}
	}
	// No columns at all: only the row count can change.
	a := &answer.Answer{Columns: []answer.Column{}, Rows: [][]answer.Value{{}}, Tag: "SELECT 1", RowsAffected: 1}
	before := a.Digest(false)
	corruptRows(a, rng)
	if a.Digest(false) == before {
		t.Error("answer without columns: same digest")
	}
}

func digestRows(rows [][]answer.Value) answer.Digest {
	a := &answer.Answer{Rows: rows}
	return a.Digest(true)
}

func TestMiscount(t *testing.T) {
	a := &answer.Answer{Tag: "INSERT 0 3", RowsAffected: 3}
	miscount(a, driver.Query{SQL: "INSERT INTO t VALUES (1)"})
	if a.Tag != "INSERT 0 4" || a.RowsAffected != 4 {
		t.Errorf("miscounted INSERT: %q (%d)", a.Tag, a.RowsAffected)
	}
	a = &answer.Answer{Tag: "SELECT 3", RowsAffected: 3}
	miscount(a, driver.Query{SQL: "SELECT 1"})
	if a.Tag != "SELECT 3" || a.RowsAffected != 3 {
		t.Errorf("miscounted SELECT: %q (%d)", a.Tag, a.RowsAffected)
	}
}
