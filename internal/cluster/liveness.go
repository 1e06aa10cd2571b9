package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Liveness probes (CBS and SS): the shell asks each replica's engine a
// trivial question, on a connection of its own, every ProbeInterval, and
// tells the coordinator whether it answered within ProbeTimeout
// (coord.Alive, coord.Unresponsive; the why is in package coord's
// liveness.go). Client work cannot tell a slow engine from a hung one; a
// probe that needs no table and no lock can: it is answered at once by an
// engine that runs, whatever its sessions are busy with or wait for.
//
// The probe runs in a goroutine of its own and is waited for with a timer,
// so a driver slow to honour its context's deadline cannot delay the
// verdict; the next probe starts only once the previous one returned.

// Probe defaults: a hung engine is taken out within about
// DefaultProbeInterval + DefaultProbeTimeout (3 s). The timeout is far
// above what a running engine takes to answer SELECT 1 even under load,
// and well below the 5 s default primary timeout.
const (
	DefaultProbeInterval = time.Second
	DefaultProbeTimeout  = 2 * time.Second
)

// probeQuery touches no table and takes no lock on any engine.
var probeQuery = driver.Query{SQL: "SELECT 1 AS shepherd_probe", ReturnsRows: true, Verb: "SELECT"}

// probing is each replica's latest probe outcome (for SHOW REPLICAS).
type probing struct {
	unresponsive []atomic.Bool
	why          []atomic.Pointer[string] // of the latest unanswered probe
}

// probeTimes returns the probe interval and deadline, with defaults
// applied, or ok false when probes are off (Options.ProbeInterval < 0, or
// a mode without a primary). Defaults fit the primary timeout: the
// deadline is at most the timeout, so a hung primary goes within about
// that long, and the interval at most a third of it, so a primary that
// answers probes is heard from several times within any timeout and is
// never suspected for its silence on a long statement.
func (o Options) probeTimes() (every, deadline time.Duration, ok bool) {
	if o.ProbeInterval < 0 || (o.Mode != coord.CBS && o.Mode != coord.SS) {
		return 0, 0, false
	}
	every, deadline = o.ProbeInterval, o.ProbeTimeout
	if every == 0 {
		every = DefaultProbeInterval
		if o.PrimaryTimeout > 0 {
			every = min(every, o.PrimaryTimeout/3)
		}
	}
	if deadline == 0 {
		deadline = DefaultProbeTimeout
		if o.PrimaryTimeout > 0 {
			deadline = min(deadline, o.PrimaryTimeout)
		}
	}
	return max(every, time.Millisecond), max(deadline, time.Millisecond), true
}

// startProbes starts a probe goroutine per replica (see probeTimes). They
// end with Close.
func (c *Cluster) startProbes() {
	c.probing.unresponsive = make([]atomic.Bool, len(c.managers))
	c.probing.why = make([]atomic.Pointer[string], len(c.managers))
	every, deadline, ok := c.opts.probeTimes()
	if !ok {
		return
	}
	for r := range c.managers {
		c.ticker.Add(1)
		go c.probeLoop(coord.ReplicaID(r), every, deadline)
	}
}

// unresponsive reports whether replica r's latest probe went unanswered,
// and what was seen.
func (c *Cluster) unresponsive(r int) (bool, string) {
	if r >= len(c.probing.unresponsive) || !c.probing.unresponsive[r].Load() {
		return false, ""
	}
	why := ""
	if p := c.probing.why[r].Load(); p != nil {
		why = *p
	}
	return true, why
}

// probeLoop probes replica r until the cluster closes.
func (c *Cluster) probeLoop(r coord.ReplicaID, every, deadline time.Duration) {
	defer c.ticker.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a probe under way ends when the cluster closes
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var conn driver.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	pause := time.NewTimer(every)
	defer pause.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-pause.C:
		}
		conn = c.probeOnce(ctx, r, conn, deadline)
		pause.Reset(every)
	}
}

// probeOnce probes replica r's engine once over conn (connecting first
// when conn is nil), reports the outcome to the coordinator, and returns
// the connection to use next time: nil after a failure, since it may be
// broken or still carry a late answer.
//
// The verdict comes at the deadline at the latest, whatever the driver
// does; the probe itself is then waited for (drivers end a call whose
// context ended), so that a connection never serves two goroutines and
// nothing is left running.
func (c *Cluster) probeOnce(ctx context.Context, r coord.ReplicaID, conn driver.Conn, deadline time.Duration) driver.Conn {
	pctx, pcancel := context.WithTimeout(ctx, deadline)
	defer pcancel()
	type result struct {
		conn driver.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		cn, err := conn, error(nil)
		if cn == nil {
			cn, err = c.managers[r].Engine().Connect(pctx)
		}
		if err == nil {
			_, err = cn.Exec(pctx, probeQuery)
		}
		done <- result{cn, err}
	}()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	var res result
	select {
	case res = <-done:
		if pctx.Err() != nil && res.err == nil {
			res.err = pctx.Err() // answered, but too late to count
		}
		c.probeReport(r, res.err, pctx.Err() != nil, deadline)
	case <-timer.C:
		c.probeReport(r, context.DeadlineExceeded, true, deadline)
		pcancel()
		res = <-done
	}
	if res.err == nil {
		return res.conn
	}
	if res.conn != nil {
		res.conn.Close()
	}
	return nil
}

// probeReport tells the coordinator the outcome of a probe of replica r:
// err nil (it answered in time), or why not (late: the deadline passed).
// Nothing is reported once the cluster is closing.
func (c *Cluster) probeReport(r coord.ReplicaID, err error, late bool, deadline time.Duration) {
	select {
	case <-c.stop:
		return
	default:
	}
	name := c.managers[r].Name()
	was := c.probing.unresponsive[r].Load()
	if err != nil && !late && !pgerr.IsConnection(err) {
		// The engine answered, with an error (too many connections, a
		// restart under way): it is not hung, and its sessions' own
		// errors take it out if it is truly unusable. (A probe that
		// misses its deadline takes the replica out at once: the next
		// probe cannot start until the hung one returns.)
		c.log.Warn("a probe failed", "replica", name, "err", err)
		return
	}
	c.mu.Lock()
	if err == nil {
		c.mu.core.Step(coord.Alive{R: r})
	} else {
		why := fmt.Sprintf("no answer to a probe within %v", deadline)
		if !late {
			why = "a probe failed: " + err.Error()
		}
		// SHOW REPLICAS says unresponsive for an engine that hangs; one
		// that refuses or drops the probe's connection is shown down,
		// as its sessions' errors take it out anyway.
		c.probing.why[r].Store(&why)
		c.probing.unresponsive[r].Store(late)
		c.mu.core.Step(coord.Unresponsive{R: r, Why: why})
		if !was && late {
			c.log.Warn("replica does not answer probes", "replica", name, "why", why)
		}
	}
	c.applyLocked()
	c.mu.Unlock()
	if err == nil && was {
		c.probing.unresponsive[r].Store(false)
		c.log.Warn("replica answers probes again", "replica", name)
	}
}
