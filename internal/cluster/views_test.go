package cluster

import "testing"

// TestViewHistoryBounded (issue 18): the history SHOW VIEW prints keeps
// the latest MaxViews views, however often the primary changes.
func TestViewHistoryBounded(t *testing.T) {
	var v views
	const n = 3*MaxViews + 7
	for i := range n {
		v.add(View{Number: i})
	}
	if len(v.list) != MaxViews {
		t.Fatalf("%d views kept, want %d", len(v.list), MaxViews)
	}
	for i, x := range v.list {
		if want := n - MaxViews + i; x.Number != want {
			t.Fatalf("view %d is number %d, want %d", i, x.Number, want)
		}
	}
}
