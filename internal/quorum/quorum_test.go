package quorum

import "testing"

func votes(vs ...string) Votes[string] {
	out := make(Votes[string], len(vs))
	for i, v := range vs {
		if v != "-" {
			out[i] = &v
		}
	}
	return out
}

func TestAgreed(t *testing.T) {
	for _, c := range []struct {
		name  string
		votes Votes[string]
		f     int
		want  string
		from  int
		ok    bool
	}{
		{"f+1 of three", votes("a", "b", "a"), 1, "a", 0, true},
		{"lowest replica that gave it", votes("b", "a", "a"), 1, "a", 1, true},
		{"three answers", votes("a", "b", "c"), 1, "", -1, false},
		{"one vote in", votes("a", "-", "-"), 1, "", -1, false},
		{"missing votes do not count", votes("-", "a", "a"), 1, "a", 1, true},
		{"two and two of four", votes("a", "b", "b", "a"), 1, "", -1, false},
		{"three against two of five", votes("b", "a", "a", "b", "a"), 2, "a", 1, true},
		{"plurality short of f+1", votes("a", "a", "b", "c", "d"), 2, "", -1, false},
		{"f = 0 takes the majority", votes("a", "b", "a"), 0, "a", 0, true},
		{"f = 0, a tie", votes("a", "b"), 0, "", -1, false},
		{"f = 0, alone", votes("a"), 0, "a", 0, true},
		{"nobody", votes("-", "-", "-"), 1, "", -1, false},
	} {
		got, from, ok := c.votes.Agreed(c.f)
		if got != c.want || from != c.from || ok != c.ok {
			t.Errorf("%s: Agreed = %q, %d, %v; want %q, %d, %v", c.name, got, from, ok, c.want, c.from, c.ok)
		}
	}
}

func TestReachable(t *testing.T) {
	for _, c := range []struct {
		name    string
		votes   Votes[string]
		f       int
		pending int
		want    bool
	}{
		{"two to come", votes("a", "-", "-"), 1, 2, true},
		{"split, one to come", votes("a", "b", "-"), 1, 1, true},
		{"split, none to come", votes("a", "b", "c"), 1, 0, false},
		{"nothing yet", votes("-", "-", "-"), 1, 3, true},
		{"too few left", votes("-", "-", "-"), 1, 1, false},
	} {
		if got := c.votes.Reachable(c.f, c.pending); got != c.want {
			t.Errorf("%s: Reachable = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSupport(t *testing.T) {
	if !(Support{For: 2}).Won(1) || (Support{For: 1, Open: 5}).Won(1) {
		t.Error("Won: f+1 replicas must have given the answer")
	}
	if !(Support{For: 1, Open: 1}).Reachable(1) || (Support{For: 1}).Reachable(1) {
		t.Error("Reachable: f+1 must be within reach of those given and open")
	}
}
