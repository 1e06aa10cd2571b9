package coord

import "github.com/shepherd-db/shepherd/internal/quorum"

// Agreement is compare-and-repair's verdict on one row (or, in the
// simulator, one survey's answers): groups maps each state seen to the
// replicas that hold it, and Agreement picks the state that f+1 replicas,
// and more replicas than any other state, hold. With more than 2f+1
// replicas two states may each have f+1: then, as when none has, there is
// no agreement (ok false) and nothing may be repaired. The replicas
// outside the agreed state are the ones found different (and repaired);
// since at most f replicas are faulty, a correct one is never among them
// when the state has f+1 replicas and no rival. internal/repair decides
// with it, and the simulator checks it; the count is quorum's, as every
// vote of the coordinator.
func Agreement(groups map[string][]int, f int) (state string, ok bool) {
	n := 0
	for _, members := range groups {
		for _, i := range members {
			n = max(n, i+1)
		}
	}
	votes := make(quorum.Votes[string], n)
	for s, members := range groups {
		for _, i := range members {
			votes[i] = &s
		}
	}
	state, _, ok = votes.Agreed(f)
	return state, ok
}
