package coord

// Agreement is compare-and-repair's verdict on one row (or, in the
// simulator, one survey's answers): groups maps each state seen to the
// replicas that hold it, and Agreement picks the state that f+1 replicas,
// and more replicas than any other state, hold. With more than 2f+1
// replicas two states may each have f+1: then, as when none has, there is
// no agreement (ok false) and nothing may be repaired. The replicas
// outside the agreed state are the ones found different (and repaired);
// since at most f replicas are faulty, a correct one is never among them
// when the state has f+1 replicas and no rival. internal/repair decides
// with it, and the simulator checks it.
func Agreement(groups map[string][]int, f int) (state string, ok bool) {
	most := 0
	for s, members := range groups {
		switch n := len(members); {
		case n > most:
			state, ok, most = s, n >= f+1, n
		case n == most:
			ok = false
		}
	}
	return state, ok
}
