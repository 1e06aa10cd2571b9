package ha

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAdmitRaise(t *testing.T) {
	for _, c := range []struct {
		fence, epoch uint64
		admit        bool
	}{
		{0, 0, true}, // single node, never fenced
		{0, 5, true},
		{5, 5, true},
		{5, 6, true},
		{5, 4, false},
		{5, 0, false}, // a single-node shepherd after a cluster fenced the replica
	} {
		err := Admit(c.fence, c.epoch)
		if (err == nil) != c.admit || (err != nil && !errors.Is(err, ErrFenced)) {
			t.Errorf("Admit(fence %d, epoch %d) = %v, want admitted %v", c.fence, c.epoch, err, c.admit)
		}
		f, err := Raise(c.fence, c.epoch)
		switch {
		case c.admit && (err != nil || f != c.epoch):
			t.Errorf("Raise(%d, %d) = %d, %v; want %d", c.fence, c.epoch, f, err, c.epoch)
		case !c.admit && (!errors.Is(err, ErrFenced) || f != c.fence):
			t.Errorf("Raise(%d, %d) = %d, %v; want the fence kept and ErrFenced", c.fence, c.epoch, f, err)
		}
	}
}

// fenceModel is one replica under two shepherd nodes: the deposed leader
// (term 1) with transactions committing, and the new leader (term 2),
// which raises the fence and then commits. Each engine transaction's
// steps are atomic; between them any other step may run. A committing
// transaction takes the fence row's shared lock, checks the fence with
// Admit, and commits (or rolls back) releasing it; the raise takes the
// exclusive lock, which waits for every shared holder, and commits
// Raise's fence. shared false models a wrong implementation, a check
// that reads the fence without locking it (a snapshot read).
type fenceModel struct {
	shared bool

	fence     uint64
	sHolders  int
	xHeld     bool
	history   []uint64 // epochs of the commits, in commit order
	oldPC     []int    // per old transaction: 0 lock, 1 check, 2 commit, 3 done
	oldOK     []bool   // its check passed
	newPC     int      // 0 lock X, 1 raise+commit, then 2+2i.. the i-th commit's lock/check, done at the end
	newCommit []int    // per new transaction: 0 lock, 1 check, 2 commit, 3 done
	newOK     []bool
}

const oldTerm, newTerm = 1, 2

func (m *fenceModel) clone() *fenceModel {
	c := *m
	c.history = append([]uint64(nil), m.history...)
	c.oldPC = append([]int(nil), m.oldPC...)
	c.oldOK = append([]bool(nil), m.oldOK...)
	c.newCommit = append([]int(nil), m.newCommit...)
	c.newOK = append([]bool(nil), m.newOK...)
	return &c
}

// step advances a committing transaction (pc, ok of epoch) by one step if
// it can; it reports whether it moved.
func (m *fenceModel) step(pc *int, ok *bool, epoch uint64) bool {
	switch *pc {
	case 0:
		if m.shared {
			if m.xHeld {
				return false
			}
			m.sHolders++
		}
		*pc = 1
	case 1:
		*ok = Admit(m.fence, epoch) == nil
		*pc = 2
	case 2:
		if *ok {
			m.history = append(m.history, epoch)
		}
		if m.shared {
			m.sHolders--
		}
		*pc = 3
	default:
		return false
	}
	return true
}

// moves returns the states one step away.
func (m *fenceModel) moves() []*fenceModel {
	var out []*fenceModel
	for i := range m.oldPC {
		c := m.clone()
		if c.step(&c.oldPC[i], &c.oldOK[i], oldTerm) {
			out = append(out, c)
		}
	}
	switch {
	case m.newPC == 0 && !m.xHeld && m.sHolders == 0:
		c := m.clone()
		c.xHeld = true
		c.newPC = 1
		out = append(out, c)
	case m.newPC == 1:
		c := m.clone()
		f, err := Raise(c.fence, newTerm)
		if err == nil {
			c.fence = f
		}
		c.xHeld = false
		c.newPC = 2
		out = append(out, c)
	case m.newPC == 2:
		// The new leader's commits run one after another (program order
		// is all the property needs; they may overlap on the engine).
		for i := range m.newCommit {
			if m.newCommit[i] == 3 {
				continue
			}
			c := m.clone()
			if c.step(&c.newCommit[i], &c.newOK[i], newTerm) {
				out = append(out, c)
			}
			break
		}
	}
	return out
}

// violation says whether an old term's commit follows a new term's.
func (m *fenceModel) violation() bool {
	seenNew := false
	for _, e := range m.history {
		if e == newTerm {
			seenNew = true
		} else if seenNew {
			return true
		}
	}
	return false
}

// explore visits every reachable state and returns the first violating
// history found and how many states it visited.
func explore(m *fenceModel) (bad []uint64, states int) {
	stack := []*fenceModel{m}
	seen := map[string]bool{}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		key := fmt.Sprint(s.fence, s.sHolders, s.xHeld, s.history, s.oldPC, s.oldOK, s.newPC, s.newCommit, s.newOK)
		if seen[key] {
			continue
		}
		seen[key] = true
		states++
		if s.violation() {
			return s.history, states
		}
		stack = append(stack, s.moves()...)
	}
	return nil, states
}

func newFenceModel(shared bool, olds, news int) *fenceModel {
	return &fenceModel{
		shared: shared,
		oldPC:  make([]int, olds), oldOK: make([]bool, olds),
		newCommit: make([]int, news), newOK: make([]bool, news),
	}
}

// TestFenceModel runs the fencing rule on every interleaving of a deposed
// leader's commits with a new leader's raise and commits on one replica:
// no commit of the old term ever follows one of the new term. The same
// exploration with the fence read unlocked finds the violation, so the
// test can fail.
func TestFenceModel(t *testing.T) {
	for olds := 1; olds <= 3; olds++ {
		for news := 1; news <= 2; news++ {
			name := fmt.Sprintf("old%d-new%d", olds, news)
			bad, states := explore(newFenceModel(true, olds, news))
			if bad != nil {
				t.Errorf("%s: an old term's commit after the new term's: commit epochs %v", name, bad)
			}
			if states < 10 {
				t.Errorf("%s: only %d states explored", name, states)
			}
			bad, _ = explore(newFenceModel(false, olds, news))
			if bad == nil {
				t.Errorf("%s: without the shared lock no violation was found; the model checks nothing", name)
			} else if !strings.Contains(fmt.Sprint(bad), "2 1") {
				t.Errorf("%s: the unlocked violation %v is not an old commit after a new one", name, bad)
			}
		}
	}
}
