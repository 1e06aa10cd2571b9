package ha

import (
	"errors"
	"fmt"
)

// The fencing rule on the replicas (docs/DESIGN.md, "Standby shepherds").
// It is pure: the same inputs give the same verdict, with no clock, no
// store and no engine, so that a simulator or a deterministic test can
// run it on every interleaving.
//
// Each replica keeps a fence: the highest epoch a leader has raised on
// it. A leader raises the fence to its own epoch on a replica before it
// sends that replica anything it commits (replay included), in an engine
// transaction of its own that takes the fence row's exclusive lock. Every
// commit checks, in its own engine transaction and just before COMMIT,
// the fence under a shared lock (or a write that conflicts with the
// raise, on an engine without row locks), and goes ahead only if its
// epoch is not below it; its shepherd_log row records its epoch. A commit
// whose check came first holds the shared lock until its COMMIT, so the
// raise, and with it every commit of the new term, waits for it; a check
// that comes after the raise sees the new epoch and refuses. So on every
// replica, no commit of an older term follows the first commit of a
// newer one.

// ErrFenced is wrapped by a refusal of the fencing rule: a commit or a
// raise by a term older than one the replica has seen.
var ErrFenced = errors.New("ha: fenced off: a newer leader has raised the replica's fence")

// Admit is the check of a commit by term epoch on a replica whose fence
// is fence: nil if it may commit, ErrFenced if a newer term has raised
// the fence. Epoch 0 is the single-node shepherd, which runs no terms
// and is admitted only by a replica no term has fenced.
func Admit(fence, epoch uint64) error {
	if epoch < fence {
		return fmt.Errorf("%w: the commit's term %d is older than the replica's fence %d", ErrFenced, epoch, fence)
	}
	return nil
}

// Raise is a leader's raise of a replica's fence to its epoch: the new
// fence, or ErrFenced if the replica has seen a newer term (this node
// was deposed, and must stop). Raising to the fence's own value changes
// nothing and is no error (a leader raises again after reconnecting).
func Raise(fence, epoch uint64) (uint64, error) {
	if epoch < fence {
		return fence, fmt.Errorf("%w: the raise by term %d comes after term %d's", ErrFenced, epoch, fence)
	}
	return epoch, nil
}
