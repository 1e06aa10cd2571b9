package coord

import "github.com/shepherd-db/shepherd/internal/quorum"

// ballot collects the votes of the replicas on one operation (serial and
// passthrough modes). Whether f+1 agree is quorum's rule, as everywhere.
type ballot struct {
	votes   quorum.Votes[Vote] // by replica; nil = not answered yet
	decided bool
	// failed marks a ballot decided without any answer reaching the
	// quorum: late answers then accuse nobody.
	failed  bool
	outcome Vote
	// openedAt is the Coordinator's tick when the op went out (a
	// survey's statement waits so long for every replica).
	openedAt int
}

// pending returns how many live replicas have not answered yet.
func (b *ballot) pending(live []bool) int {
	n := 0
	for i, v := range b.votes {
		if v == nil && live[i] {
			n++
		}
	}
	return n
}
