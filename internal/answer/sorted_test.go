package answer

import "testing"

// TestDigestSortedVote votes three replicas' answers to a query whose
// ORDER BY (on column 0) has ties, as the cluster does: two correct
// replicas that order the rows within a tie differently agree, and a
// primary that returns a row out of the ORDER BY order gets a digest no
// other replica endorses, where comparing as a multiset endorsed it
// (issue 14, item 3).
func TestDigestSortedVote(t *testing.T) {
	cols := []Column{{Name: "g", Type: Int}, {Name: "name", Type: Text}}
	ans := func(rows ...[2]string) *Answer {
		a := &Answer{Columns: cols, Tag: Tag("SELECT", int64(len(rows))), RowsAffected: int64(len(rows))}
		for _, r := range rows {
			a.Rows = append(a.Rows, []Value{{Type: Int, Text: r[0]}, {Type: Text, Text: r[1]}})
		}
		return a
	}
	// ORDER BY g: the two rows with g = 1 may come in either order.
	secondaryA := ans([2]string{"1", "x"}, [2]string{"1", "y"}, [2]string{"2", "z"})
	secondaryB := ans([2]string{"1", "y"}, [2]string{"1", "x"}, [2]string{"2", "z"})
	misordered := ans([2]string{"1", "x"}, [2]string{"2", "z"}, [2]string{"1", "y"})
	reversed := ans([2]string{"2", "z"}, [2]string{"1", "y"}, [2]string{"1", "x"})
	otherTie := ans([2]string{"1", "x"}, [2]string{"1", "w"}, [2]string{"2", "z"})
	keys := []int{0}

	if secondaryA.DigestSorted(keys, nil) != secondaryB.DigestSorted(keys, nil) {
		t.Error("two orders the ORDER BY allows give different digests")
	}
	for name, primary := range map[string]*Answer{"misordered": misordered, "reversed": reversed, "other tie": otherTie} {
		d := primary.DigestSorted(keys, nil)
		if d == secondaryA.DigestSorted(keys, nil) || d == secondaryB.DigestSorted(keys, nil) {
			t.Errorf("%s primary endorsed by a correct secondary", name)
		}
	}
	// Without keys it is the multiset comparison.
	if misordered.DigestSorted(nil, nil) != secondaryA.Digest(false) {
		t.Error("no keys: not the multiset digest")
	}
	// Ties are compared canonically: 1 and 1.0 in a numeric key tie.
	num := func(rows ...[2]string) *Answer {
		a := ans(rows...)
		for _, r := range a.Rows {
			r[0].Type = Numeric
		}
		return a
	}
	if num([2]string{"1", "x"}, [2]string{"1.0", "y"}).DigestSorted(keys, nil) !=
		num([2]string{"1.0", "y"}, [2]string{"1", "x"}).DigestSorted(keys, nil) {
		t.Error("equal keys written differently do not tie")
	}
}
