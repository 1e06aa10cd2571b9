// Package link puts a network link between the benchmark and a database
// server on this machine: a TCP proxy in the benchmark's process that
// holds every chunk of bytes for a one-way delay (plus optional jitter)
// and paces it to a bandwidth before passing it on, in each direction.
// A round trip through it costs at least twice the delay, as a round trip
// to a replica on another machine does; bytes arrive intact and in order.
//
// Waits shorter than the Go runtime's timer resolution (about a
// millisecond on Linux) are slept in the kernel (nanosleep with a small
// timer slack), so a 250 µs link is 250 µs plus the kernel's wake-up
// latency, not a millisecond. What each chunk really waited is counted:
// Proxy.Delays reports it, so a run on a busy machine shows how far its
// links were from the configured delay.
package link

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/latency"
)

// Config describes a link, the same in both directions.
type Config struct {
	// Delay is the one-way delay of every chunk of bytes.
	Delay time.Duration
	// Jitter adds to each chunk's delay a uniform random amount below
	// it. Chunks of one direction are never reordered: a chunk is held
	// at least until the one before it is passed on.
	Jitter time.Duration
	// Bandwidth bounds each direction in bytes per second: a chunk of n
	// bytes occupies the link for n/Bandwidth after the ones before it.
	// Zero is unbounded.
	Bandwidth int64
	// Seed seeds the jitter.
	Seed uint64
}

// Zero reports whether the link adds nothing (no proxy is needed).
func (c Config) Zero() bool { return c.Delay == 0 && c.Jitter == 0 && c.Bandwidth == 0 }

// Check reports a negative setting.
func (c Config) Check() error {
	if c.Delay < 0 || c.Jitter < 0 || c.Bandwidth < 0 {
		return fmt.Errorf("link: negative delay, jitter or bandwidth (%v, %v, %d)", c.Delay, c.Jitter, c.Bandwidth)
	}
	return nil
}

func (c Config) String() string {
	s := fmt.Sprintf("%v one way", c.Delay)
	if c.Jitter > 0 {
		s += fmt.Sprintf(" + up to %v jitter", c.Jitter)
	}
	if c.Bandwidth > 0 {
		s += fmt.Sprintf(", %d bytes/s", c.Bandwidth)
	}
	return s
}

// Proxy is a link in front of one TCP server: clients connect to Addr,
// and each connection is carried to the target over a connection of its
// own.
type Proxy struct {
	cfg    Config
	target string
	ln     net.Listener

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closed  bool
	streams uint64 // streams started, for their jitter seeds
	delays  latency.Histogram
	wg      sync.WaitGroup
}

// chunkSize is the most one read takes from a connection.
const chunkSize = 64 << 10

// queueLen is how many chunks one direction holds in flight; more wait
// in the sender's socket, as a full link pushes back.
const queueLen = 256

// Listen starts a proxy to target (host:port) on 127.0.0.1 at a free
// port.
func Listen(target string, cfg Config) (*Proxy, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{cfg: cfg, target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr returns the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Delays summarises how long the chunks passed on so far were held, from
// their arrival to the start of their write.
func (p *Proxy) Delays() latency.Summary {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delays.Summary()
}

// Close stops accepting, cuts every connection and waits until every
// goroutine of the proxy has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// track registers c to be cut by Close; false if the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve carries one client connection to the target and back.
func (p *Proxy) serve(client net.Conn) {
	defer p.untrack(client)
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return // the client sees its connection closed, as with a refused one
	}
	if !p.track(server) {
		server.Close()
		return
	}
	defer p.untrack(server)
	defer server.Close()
	for _, c := range []net.Conn{client, server} {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.carry(server, client) })
	wg.Go(func() { p.carry(client, server) })
	wg.Wait()
}

// chunk is bytes in flight: read at arrived, to be written at due.
type chunk struct {
	b       []byte
	arrived time.Time
	due     time.Time
}

// carry copies src to dst through the link until src ends or either
// side fails; then it closes dst for writing (src's end reaches the other
// side) or, on a failure, both.
func (p *Proxy) carry(dst, src net.Conn) {
	p.mu.Lock()
	p.streams++
	r := rand.New(rand.NewPCG(p.cfg.Seed, p.streams))
	p.mu.Unlock()
	q := make(chan chunk, queueLen)
	failed := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(q)
		var last, free time.Time // the previous chunk's due time; when the link is free again
		for {
			buf := make([]byte, chunkSize)
			n, err := src.Read(buf)
			if n > 0 {
				now := time.Now()
				sent := now
				if p.cfg.Bandwidth > 0 {
					sent = later(now, free).Add(time.Duration(int64(n) * int64(time.Second) / p.cfg.Bandwidth))
					free = sent
				}
				due := sent.Add(p.cfg.Delay)
				if p.cfg.Jitter > 0 {
					due = due.Add(time.Duration(r.Int64N(int64(p.cfg.Jitter))))
				}
				due = later(due, last)
				last = due
				select {
				case q <- chunk{b: buf[:n], arrived: now, due: due}:
				case <-failed:
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	ok := true
	for c := range q {
		if !ok {
			continue // drain, so the reader ends
		}
		waitUntil(c.due)
		p.mu.Lock()
		p.delays.Add(time.Since(c.arrived))
		p.mu.Unlock()
		if _, err := dst.Write(c.b); err != nil {
			ok = false
			close(failed)
			src.Close()
		}
	}
	wg.Wait()
	if tc, isTCP := dst.(*net.TCPConn); ok && isTCP {
		_ = tc.CloseWrite()
	} else {
		dst.Close()
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// waitUntil returns at t or after: a runtime sleep for all but the last
// millisecond or two, the kernel's for the rest.
func waitUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		if d > 2*time.Millisecond {
			time.Sleep(d - time.Millisecond)
			continue
		}
		preciseSleep(d)
	}
}
