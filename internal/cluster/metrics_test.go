package cluster

import (
	"testing"
	"time"
)

// TestDecisionClock: the lag in seconds of a replica is the age of the
// oldest decided transaction it has yet to commit; the clock forgets
// what every replica committed, and stays bounded when one never does.
func TestDecisionClock(t *testing.T) {
	base := time.Unix(1000, 0)
	at := base
	now := func() time.Time { return at }
	var d decisionClock
	d.note(3, now) // barriers 0, 1, 2 decided at 1000
	at = base.Add(5 * time.Second)
	d.note(3, now) // nothing new
	d.note(5, now) // 3, 4 at 1005
	later := base.Add(10 * time.Second)
	for _, tc := range []struct {
		b    int
		want time.Duration
	}{{0, 10 * time.Second}, {2, 10 * time.Second}, {3, 5 * time.Second}, {4, 5 * time.Second}, {5, 0}} {
		if got := d.since(tc.b, later); got != tc.want {
			t.Errorf("since(%d) = %v, want %v", tc.b, got, tc.want)
		}
	}
	d.trim(3)
	if d.first != 3 || len(d.at) != 2 {
		t.Errorf("after trim(3): first %d, %d kept; want 3, 2", d.first, len(d.at))
	}
	if got := d.since(1, later); got != 5*time.Second {
		t.Errorf("since a forgotten barrier = %v, want the oldest kept (5s)", got)
	}
	d.note(5+2*maxDecisionTimes, now)
	if len(d.at) > maxDecisionTimes {
		t.Errorf("%d times kept, more than %d", len(d.at), maxDecisionTimes)
	}
	if d.first+len(d.at) != 5+2*maxDecisionTimes {
		t.Errorf("the newest barrier kept is %d, want %d", d.first+len(d.at)-1, 4+2*maxDecisionTimes)
	}
}
