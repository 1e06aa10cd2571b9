package coord

// ballot collects the votes of the replicas on one operation.
type ballot struct {
	votes   []*Vote // by replica; nil = not answered yet
	decided bool
	// failed marks a ballot decided without any answer reaching the
	// quorum: late answers then accuse nobody.
	failed  bool
	outcome Vote
	// openedAt is the Coordinator's tick when the op went out (a
	// survey's statement waits so long for every replica).
	openedAt int
}

// leader returns a vote that at least q replicas gave, with the lowest
// replica that gave it, if there is one.
func (b *ballot) leader(q int) (Vote, ReplicaID, bool) {
	for i, v := range b.votes {
		if v != nil && b.count(*v) >= q {
			return *v, ReplicaID(i), true
		}
	}
	return Vote{}, -1, false
}

// reachable reports whether some vote could still gather q votes once the
// live replicas that have not answered do.
func (b *ballot) reachable(q int, live []bool) bool {
	missing := 0
	for i, v := range b.votes {
		if v == nil && live[i] {
			missing++
		}
	}
	best := 0
	for _, v := range b.votes {
		if v != nil {
			best = max(best, b.count(*v))
		}
	}
	return best+missing >= q
}

// count returns how many replicas gave vote v.
func (b *ballot) count(v Vote) int {
	n := 0
	for _, w := range b.votes {
		if w != nil && *w == v {
			n++
		}
	}
	return n
}
