package answer

import (
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestSpoolSpillsAndReadsBack: rows past the memory bound go to disk and
// come back in order with their NULLs and types; without spilling the
// bound is an error.
func TestSpoolSpillsAndReadsBack(t *testing.T) {
	var rows [][]Value
	for i := range 1000 {
		rows = append(rows, []Value{V(Int, strconv.Itoa(i)), Null, V(Text, "row "+strconv.Itoa(i)), {Text: ""}})
	}
	s := NewSpool(10*RowSize(rows[0]), true, t.TempDir())
	for _, r := range rows {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if s.Size() > 10*RowSize(rows[0]) {
		t.Fatalf("%d bytes kept in memory past the bound", s.Size())
	}
	mem, sp, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if len(mem) != 10 || sp.Len() != 990 {
		t.Fatalf("memory %d rows, disk %d rows, want 10 and 990", len(mem), sp.Len())
	}
	got := slices.Clone(mem)
	for {
		r, err := sp.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !slices.EqualFunc(got, rows, slices.Equal) {
		t.Fatal("rows read back differ from those added")
	}

	full := NewSpool(RowSize(rows[0]), false, "")
	if err := full.Add(rows[0]); err != nil {
		t.Fatal(err)
	}
	if err := full.Add(rows[1]); err != ErrSpoolFull {
		t.Fatalf("past the bound without spilling: %v, want ErrSpoolFull", err)
	}
}

// TestDigesterStreamsAsWhole: rows fed one at a time give the digest of
// the whole answer, in every mode, and a multiset digest is the same in
// any row order while an ordered one is not.
func TestDigesterStreamsAsWhole(t *testing.T) {
	cols := []Column{{Type: Int}, {Type: Text}}
	a := &Answer{Columns: cols, Tag: "SELECT 200", RowsAffected: 200}
	for i := range 200 {
		a.Rows = append(a.Rows, []Value{V(Int, strconv.Itoa(i/10)), V(Text, strconv.Itoa(i))})
	}
	for _, mode := range []struct {
		ordered bool
		keys    []int
	}{{false, nil}, {true, nil}, {false, []int{0}}} {
		d := NewDigester(mode.ordered, mode.keys, nil)
		for _, r := range a.Rows {
			d.Row(cols, r)
		}
		if d.Sum(a) != a.digest(mode.ordered, mode.keys, nil) {
			t.Errorf("ordered %v keys %v: streamed digest differs from the whole answer's", mode.ordered, mode.keys)
		}
	}
	shuffled := *a
	shuffled.Rows = slices.Clone(a.Rows)
	rand.Shuffle(len(shuffled.Rows), func(i, j int) { shuffled.Rows[i], shuffled.Rows[j] = shuffled.Rows[j], shuffled.Rows[i] })
	if shuffled.Digest(false) != a.Digest(false) {
		t.Error("multiset digest depends on row order")
	}
	if shuffled.Digest(true) == a.Digest(true) {
		t.Error("ordered digest ignores row order")
	}
	// Within ties on the key the order is free; across them it is not.
	within := *a
	within.Rows = slices.Clone(a.Rows)
	within.Rows[0], within.Rows[9] = within.Rows[9], within.Rows[0]
	if within.DigestSorted([]int{0}, nil) != a.DigestSorted([]int{0}, nil) {
		t.Error("rows swapped within a tie changed the sorted digest")
	}
	within.Rows[0], within.Rows[10] = within.Rows[10], within.Rows[0]
	if within.DigestSorted([]int{0}, nil) == a.DigestSorted([]int{0}, nil) {
		t.Error("a row out of the ORDER BY order kept the sorted digest")
	}
	// A row replaced by another (same count) changes the multiset digest.
	other := *a
	other.Rows = slices.Clone(a.Rows)
	other.Rows[5] = []Value{V(Int, "0"), V(Text, "x")}
	if other.Digest(false) == a.Digest(false) {
		t.Error("a changed row kept the multiset digest")
	}
}
