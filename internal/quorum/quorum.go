// Package quorum is shepherd's one rule for "f+1 replicas agree": with
// at most f replicas faulty, an answer f+1 replicas gave was given by at
// least one correct replica. The coordinator's modes (package coord:
// serial voting, the CBS commit and error votes) and compare-and-repair
// (package repair) decide with it, so they cannot drift apart.
//
// Where more than 2f+1 replicas vote, two answers may each have f+1
// votes; then neither is agreed: at least one of them was given by a
// correct replica on another state or by more than f faulty ones, and
// picking either could be the wrong one. With 2f+1 replicas it cannot
// happen.
package quorum

// Size is how many replicas make a quorum when f may be faulty: f+1.
func Size(f int) int { return f + 1 }

// Votes holds the votes of the replicas on one question, by replica
// index: nil for a replica that has not voted, or whose vote does not
// count.
type Votes[V comparable] []*V

// Count returns how many replicas gave answer v.
func (vs Votes[V]) Count(v V) int {
	n := 0
	for _, w := range vs {
		if w != nil && *w == v {
			n++
		}
	}
	return n
}

// Agreed returns the answer that at least f+1 replicas gave, provided no
// other answer was given by as many, and the lowest replica that gave it.
func (vs Votes[V]) Agreed(f int) (v V, from int, ok bool) {
	best, tied := 0, false
	from = -1
	for i, w := range vs {
		if w == nil {
			continue
		}
		switch n := vs.Count(*w); {
		case n > best:
			v, from, best, tied = *w, i, n, false
		case n == best && *w != v:
			tied = true
		}
	}
	if best < Size(f) || tied {
		var zero V
		return zero, -1, false
	}
	return v, from, true
}

// Reachable reports whether some answer could still be given by f+1
// replicas once the pending replicas, which may still vote, did.
func (vs Votes[V]) Reachable(f, pending int) bool {
	best := 0
	for _, w := range vs {
		if w != nil {
			best = max(best, vs.Count(*w))
		}
	}
	return Support{For: best, Open: pending}.Reachable(f)
}

// Support counts the replicas behind one answer: For gave it, Open may
// still give it (they have not answered yet).
type Support struct{ For, Open int }

// Won reports whether f+1 replicas gave the answer.
func (s Support) Won(f int) bool { return s.For >= Size(f) }

// Reachable reports whether f+1 replicas could still give the answer.
func (s Support) Reachable(f int) bool { return s.For+s.Open >= Size(f) }
