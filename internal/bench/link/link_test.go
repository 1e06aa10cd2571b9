package link

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoServer answers every connection with what it receives, until the
// client closes its side.
func echoServer(t *testing.T) string {
	t.Helper()
	return server(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

// server serves each connection with handle on a free loopback port,
// until the test ends.
func server(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

func listen(t *testing.T, target string, cfg Config) *Proxy {
	t.Helper()
	p, err := Listen(target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// TestRoundTripDelay sends messages one at a time through a link to an
// echo server: each comes back intact, and no earlier than two one-way
// delays after it was sent.
func TestRoundTripDelay(t *testing.T) {
	for _, delay := range []time.Duration{250 * time.Microsecond, 3 * time.Millisecond} {
		p := listen(t, echoServer(t), Config{Delay: delay})
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(delay)))
		var fastest time.Duration
		for i := range 50 {
			msg := make([]byte, 1+r.IntN(3000))
			for j := range msg {
				msg[j] = byte(r.Uint32())
			}
			start := time.Now()
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			rtt := time.Since(start)
			if !bytes.Equal(got, msg) {
				t.Fatalf("delay %v, message %d: %d bytes came back changed", delay, i, len(msg))
			}
			if rtt < 2*delay {
				t.Errorf("delay %v, message %d: round trip %v, below two delays", delay, i, rtt)
			}
			if i == 0 || rtt < fastest {
				fastest = rtt
			}
		}
		c.Close()
		d := p.Delays()
		if d.P50 < delay {
			t.Errorf("delay %v: chunks held %v (median)", delay, d.P50)
		}
		t.Logf("delay %v: fastest round trip %v; chunks held p50 %v p99 %v", delay, fastest, d.P50, d.P99)
	}
}

// TestIntactUnderJitter streams megabytes both ways at once through a
// link with jitter: the echo comes back byte for byte, in order.
func TestIntactUnderJitter(t *testing.T) {
	p := listen(t, echoServer(t), Config{Delay: 100 * time.Microsecond, Jitter: 500 * time.Microsecond, Seed: 3})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 4<<20)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	werr := make(chan error, 1)
	go func() {
		// Odd-sized writes, so chunk boundaries fall anywhere.
		rest := data
		for len(rest) > 0 {
			n := min(len(rest), 1+r.IntN(70000))
			if _, err := c.Write(rest[:n]); err != nil {
				werr <- err
				return
			}
			rest = rest[n:]
		}
		werr <- c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		n := 0
		for n < min(len(got), len(data)) && got[n] == data[n] {
			n++
		}
		t.Fatalf("echo of %d bytes came back as %d bytes, first difference at %d", len(data), len(got), n)
	}
}

// TestBandwidth sends a megabyte through a link of 8 MB/s to a server
// that answers with the count once the sender is done: the answer cannot
// come before the megabyte has crossed at that pace.
func TestBandwidth(t *testing.T) {
	const size, bw = 1 << 20, 8 << 20
	target := server(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		_ = binary.Write(c, binary.BigEndian, n)
	})
	p := listen(t, target, Config{Bandwidth: bw})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := binary.Read(c, binary.BigEndian, &n); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if n != size {
		t.Errorf("server received %d bytes, want %d", n, size)
	}
	if min := time.Duration(size) * time.Second / bw; el < min {
		t.Errorf("a megabyte crossed in %v, below %v at %d bytes/s", el, min, bw)
	}
}

// TestCloseCutsConnections: Close ends a connection in use (its reader
// sees the end) and every goroutine of the proxy (TestMain's leak check).
func TestCloseCutsConnections(t *testing.T) {
	p, err := Listen(echoServer(t), Config{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(buf); err == nil {
		t.Errorf("read after Close: %d bytes, no error", n)
	}
}

func TestConfigCheck(t *testing.T) {
	if _, err := Listen("127.0.0.1:1", Config{Delay: -time.Millisecond}); err == nil {
		t.Error("a negative delay is accepted")
	}
	if !(Config{}).Zero() || (Config{Jitter: 1}).Zero() {
		t.Error("Zero")
	}
}
