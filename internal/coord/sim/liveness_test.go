package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// probed is a core fed the shell's liveness probes (coord.Alive,
// coord.Unresponsive; package cluster's liveness.go): after every Tick,
// each replica whose engine runs answers a probe. A replica in hang stops
// answering anything at its crashAt, like a crash, but nobody reports it
// down: only its probes, which go unanswered, tell the core, probeTicks
// ticks later.
type probed struct {
	inner core
	s     *sim
	// alive: probes are answered (false: the shell does not probe).
	alive      bool
	hang       map[coord.ReplicaID]bool
	hungAt     map[coord.ReplicaID]int
	probeTicks int
	downs      []coord.MarkDown
	downTick   map[coord.ReplicaID]int
}

func (p *probed) Step(ev coord.Event) {
	if d, ok := ev.(coord.Down); ok && p.hang[d.R] {
		p.hungAt[d.R] = p.s.tick // it hangs: no one says so
		return
	}
	p.inner.Step(ev)
	if _, ok := ev.(coord.Tick); !ok {
		return
	}
	for r, f := range p.s.fakes {
		id := coord.ReplicaID(r)
		at, hung := p.hungAt[id]
		switch {
		case hung && p.s.tick-at == p.probeTicks:
			p.inner.Step(coord.Unresponsive{R: id, Why: "no answer to a probe"})
		case !f.down && p.alive:
			p.inner.Step(coord.Alive{R: id})
		}
	}
}

func (p *probed) Ready() []coord.Action {
	out := p.inner.Ready()
	for _, a := range out {
		if d, ok := a.(coord.MarkDown); ok {
			p.downs = append(p.downs, d)
			p.downTick[d.R] = p.s.tick
		}
	}
	return out
}

// runProbed runs seed in CBS over three locking replicas, replica bad
// faulty as fl, with the probes p describes.
func runProbed(seed int64, bad int, fl faults, setUp func(*probed)) (Result, *probed) {
	var p *probed
	res := Run(Options{Mode: coord.CBS, Seed: seed,
		tweak: func(s *setup) {
			cluster(s, bad, []driver.Class{driver.Locking, driver.Locking, driver.Locking}, fl)
		},
		wrap: func(s *sim, inner core) core {
			p = &probed{inner: inner, s: s, hang: map[coord.ReplicaID]bool{}, hungAt: map[coord.ReplicaID]int{},
				downTick: map[coord.ReplicaID]int{}}
			setUp(p)
			return p
		}})
	return res, p
}

// TestSimSlowPrimaryAlive: a primary whose answers come up to 2000 ticks
// late (four default primary timeouts) while its engine answers every
// probe is slow, not faulty: it keeps its role in every seed, and every
// check holds. Without probes the same runs replace it (the control), so
// the runs do reach the silence rule.
func TestSimSlowPrimaryAlive(t *testing.T) {
	slow := faults{stall: 0.05, stallMax: 4 * coord.DefaultPrimaryTimeout}
	replaced := 0
	for seed := int64(1); seed <= 8; seed++ {
		res, p := runProbed(seed, 0, slow, func(p *probed) { p.alive = true })
		if res.Err != nil {
			t.Fatalf("seed %d: %v", seed, res.Err)
		}
		for _, d := range p.downs {
			t.Errorf("seed %d: r%d taken out (%s) though it answered every probe", seed, d.R, d.Why)
		}
		res, p = runProbed(seed, 0, slow, func(p *probed) {})
		if res.Err != nil {
			t.Fatalf("seed %d without probes: %v", seed, res.Err)
		}
		for _, d := range p.downs {
			if d.R == 0 && strings.HasPrefix(d.Why, "no answer for") {
				replaced++
			}
		}
	}
	if replaced == 0 {
		t.Fatalf("control: without probes the slow primary was never replaced; the scenario proves nothing")
	}
}

// TestSimHungReplica: a replica whose engine hangs (it stops answering,
// and nobody reports it down) is taken out when its probe goes
// unanswered, probeTicks later, well before the primary timeout; the
// clients go on and every check holds. Primary and secondary alike, at
// several moments of the run (odd seeds: no write-ahead log, so the hung
// replica does not come back).
func TestSimHungReplica(t *testing.T) {
	const probeTicks = 5
	for _, r := range []int{0, 1} {
		for seed := int64(1); seed <= 9; seed += 2 {
			t.Run(fmt.Sprintf("r%d/seed%d", r, seed), func(t *testing.T) {
				hangAt := 500 + 400*int(seed)
				res, p := runProbed(seed, r, faults{crashAt: hangAt}, func(p *probed) {
					p.alive, p.probeTicks = true, probeTicks
					p.hang[coord.ReplicaID(r)] = true
				})
				if res.Err != nil {
					t.Fatal(res.Err)
				}
				at, hung := p.hungAt[coord.ReplicaID(r)]
				if !hung {
					t.Skipf("the run ended before step %d", hangAt)
				}
				down, ok := p.downTick[coord.ReplicaID(r)]
				if !ok {
					t.Fatalf("r%d hung at tick %d and was never taken out", r, at)
				}
				if down-at > probeTicks {
					t.Errorf("r%d hung at tick %d, taken out at tick %d: later than its probe", r, at, down)
				}
				if res.CorrectDown != 0 {
					t.Errorf("%d correct replicas taken out", res.CorrectDown)
				}
			})
		}
	}
}

// TestSimSelectiveSilence: a primary that never answers some of its
// statements while it answers everything else, probes included (selective
// silence, paper 3.4), is replaced once one statement has waited
// Config.OpTicks, and every check holds; no correct replica is taken out
// for it. The control runs the same seeds without the limit: the muted
// statements' clients then wait for ever and some run fails its progress
// check, so the runs do reach the rule.
func TestSimSelectiveSilence(t *testing.T) {
	const opTicks = 400
	mute := faults{mute: 0.01}
	run := func(seed int64, limit int) (Result, *probed) {
		var p *probed
		res := Run(Options{Mode: coord.CBS, Seed: seed,
			tweak: func(s *setup) {
				cluster(s, 0, []driver.Class{driver.Locking, driver.Locking, driver.Locking}, mute)
				s.opTicks = limit
			},
			wrap: func(s *sim, inner core) core {
				p = &probed{inner: inner, s: s, alive: true, hang: map[coord.ReplicaID]bool{}, hungAt: map[coord.ReplicaID]int{},
					downTick: map[coord.ReplicaID]int{}}
				return p
			}})
		return res, p
	}
	replaced, stuck := 0, 0
	for seed := int64(1); seed <= 8; seed++ {
		res, p := run(seed, opTicks)
		if res.Err != nil {
			t.Fatalf("seed %d: %v", seed, res.Err)
		}
		if res.CorrectDown != 0 {
			t.Errorf("seed %d: %d correct replicas taken out", seed, res.CorrectDown)
		}
		for _, d := range p.downs {
			if d.R == 0 {
				replaced++
			}
		}
		if res, _ := run(seed, 0); res.Err != nil {
			stuck++
		}
	}
	t.Logf("muted primary replaced in %d runs; %d of 8 runs without the limit failed", replaced, stuck)
	if replaced == 0 {
		t.Errorf("the muted primary was never replaced")
	}
	if stuck == 0 {
		t.Fatalf("control: without OpTicks every run passed; the scenario proves nothing")
	}
}
