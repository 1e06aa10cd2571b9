package cluster

import (
	"errors"
	"fmt"
)

// ReplayError is a logged statement a replica's engine refused while
// catching up: the other replicas committed it, this one cannot. Unlike
// a lost connection it does not pass by itself: the same statement fails
// on every attempt, and the replica stays out until an operator acts.
type ReplayError struct {
	Barrier uint64
	SQL     string
	Err     error
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("barrier %d: %s: %v", e.Barrier, e.SQL, e.Err)
}

func (e *ReplayError) Unwrap() error { return e.Err }

// catchUpFailed notes a failed catch-up of replica r (attempt n). When
// the engine refused the same logged statement twice in a row, the
// replica is marked failed (SHOW REPLICAS shows the state and why) and an
// ERROR names the replica and the statement: the cluster has one spare
// less and no retry will bring it back. It returns the barrier of the
// refused statement (0: not a refusal) for the next call.
func (c *Cluster) catchUpFailed(r int, err error, last uint64, attempt int) uint64 {
	var re *ReplayError
	if !errors.As(err, &re) {
		return 0
	}
	if re.Barrier != last {
		return re.Barrier // once may be chance (a deadlock); twice is the statement
	}
	why := fmt.Sprintf("catch-up refused by the engine at barrier %d, which the other replicas committed: %s: %v", re.Barrier, re.SQL, re.Err)
	if old := c.status[r].failure.Swap(&why); old == nil || *old != why || attempt%10 == 0 {
		c.log.Error("replica cannot catch up: its engine refuses a statement the other replicas committed; it stays out until an operator acts",
			"replica", c.managers[r].Name(), "barrier", re.Barrier, "statement", re.SQL, "err", re.Err, "attempts", attempt)
	}
	return re.Barrier
}
