package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// The hostile-input suite (issue 18): input an attacker or a broken client
// can send, each case with another session working meanwhile. Shepherd
// stays up, the other session's SELECT 1 keeps answering promptly, and
// memory stays under the configured bound: the suite's shepherds run with
// memory_limit_mb = hostileMemoryMB, and each case's peak Go heap and
// peak resident set are held against it. Each test prints a table of its
// cases (time, the other session's slowest SELECT 1, peak heap, peak
// RSS) with -v. `make test-hostile` (SHEPHERD_HOSTILE=1) runs all of it;
// make test runs a quick part (depths 20 and 1,000, the protocol cases,
// 10,000 statements, a 10 MB statement).
//
// The numbers are the test process's: it holds shepherd, its clients and
// the in-process SQLite replica, so they bound shepherd's from above.
// Under the race detector (make test) the RSS holds its shadow memory
// too, and only the heap is held to the bound.

// hostileMemoryMB is the suite's memory_limit_mb, and the bound each
// case's peak heap and peak RSS are held to. The largest case is 100,000
// rows of VALUES in one 1.2 MB statement, whose parse trees, dialect forms
// and typing take some 750 MiB.
const hostileMemoryMB = 1024

// hostileLatency bounds another session's SELECT 1 while hostile input
// is served; the issue saw 23 s and minutes. Most cases stay under
// 300 ms, but a loaded two-core machine stretches garbage collection
// after the largest statements to seconds.
const hostileLatency = 10 * time.Second

// memWatch samples the Go heap until stopped and keeps the peak; the
// peak resident set comes from the kernel (VmHWM, reset at the start).
type memWatch struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
	// rss is the largest VmRSS sampled, for a kernel where the peak
	// cannot be reset.
	rss   atomic.Uint64
	reset bool
}

func watchMemory() *memWatch {
	w := &memWatch{stop: make(chan struct{}), done: make(chan struct{})}
	// "5" resets the process's peak resident set (proc(5), clear_refs).
	w.reset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	go func() {
		defer close(w.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > w.peak.Load() {
				w.peak.Store(ms.HeapInuse)
			}
			if r := procStatus("VmRSS:"); r > w.rss.Load() {
				w.rss.Store(r)
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// end stops sampling and returns the peak heap in use.
func (w *memWatch) end() uint64 {
	close(w.stop)
	<-w.done
	return w.peak.Load()
}

// peakRSSBytes returns the peak resident set since watchMemory (after
// end).
func (w *memWatch) peakRSSBytes() uint64 {
	if hwm := procStatus("VmHWM:"); w.reset && hwm > 0 {
		return hwm
	}
	return w.rss.Load()
}

// procStatus returns a "kB" field of /proc/self/status in bytes, or 0.
func procStatus(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// peakRSS is the process's peak resident set (VmHWM), or "?" off Linux.
func peakRSS() string {
	if b := procStatus("VmHWM:"); b > 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return "?"
}

// hostileTable collects a test's cases and prints them as a table when
// the test ends.
type hostileTable struct {
	t    *testing.T
	rows [][]string
}

func newHostileTable(t *testing.T) *hostileTable {
	tb := &hostileTable{t: t}
	t.Cleanup(func() {
		if len(tb.rows) == 0 {
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "memory bound (memory_limit_mb) %d MiB\n", hostileMemoryMB)
		if raceEnabled {
			b.WriteString("race detector on: its shadow memory is in the RSS, which is not held to the bound\n")
		}
		fmt.Fprintf(&b, "| %-44s | %-30s | %9s | %14s | %9s | %9s |\n", "case", "outcome", "took", "SELECT 1 (max)", "heap MiB", "RSS MiB")
		fmt.Fprintf(&b, "|%s|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 46), strings.Repeat("-", 32), strings.Repeat("-", 11), strings.Repeat("-", 16), strings.Repeat("-", 11), strings.Repeat("-", 11))
		for _, r := range tb.rows {
			fmt.Fprintf(&b, "| %-44.44s | %-30.30s | %9s | %14s | %9s | %9s |\n", r[0], r[1], r[2], r[3], r[4], r[5])
		}
		t.Logf("hostile input, %s:\n%s", t.Name(), b.String())
	})
	return tb
}

// add records a case, and fails t if its peak heap or peak RSS passed
// the bound.
func (tb *hostileTable) add(what, outcome string, took, slowest time.Duration, mem *memWatch, heap uint64) {
	tb.t.Helper()
	rss := mem.peakRSSBytes()
	tb.rows = append(tb.rows, []string{what, strings.ReplaceAll(outcome, "\n", " "), took.Round(time.Millisecond).String(),
		slowest.Round(time.Millisecond).String(), fmt.Sprint(heap >> 20), fmt.Sprint(rss >> 20)})
	if heap > hostileMemoryMB<<20 {
		tb.t.Errorf("%s: heap peaked at %d MiB, over memory_limit_mb %d", what, heap>>20, hostileMemoryMB)
	}
	if rss > hostileMemoryMB<<20 && !raceEnabled {
		tb.t.Errorf("%s: resident set peaked at %d MiB, over memory_limit_mb %d", what, rss>>20, hostileMemoryMB)
	}
}

// pinger runs SELECT 1 on its own session until stopped and keeps the
// slowest answer; an error is kept too.
type pinger struct {
	slowest atomic.Int64
	n       atomic.Int64
	err     atomic.Value
	stop    chan struct{}
	done    chan struct{}
}

func startPinger(t *testing.T, addr string) *pinger {
	c := shepherdConn(t, addr)
	p := &pinger{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			began := time.Now()
			_, err := c.Exec(ctx, "SELECT 1").ReadAll()
			took := time.Since(began)
			cancel()
			if err != nil {
				p.err.Store(err)
				return
			}
			p.n.Add(1)
			if int64(took) > p.slowest.Load() {
				p.slowest.Store(int64(took))
			}
			// Not a synchronisation: only keeps the pinger from
			// taking a whole core from the case it watches.
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return p
}

// end stops the pinger and fails t if it saw an error, a slow answer, or
// no answer at all.
func (p *pinger) end(t *testing.T, what string) time.Duration {
	t.Helper()
	close(p.stop)
	<-p.done
	if err, _ := p.err.Load().(error); err != nil {
		t.Errorf("%s: the other session's SELECT 1 failed: %v", what, err)
	}
	slow := time.Duration(p.slowest.Load())
	if slow >= hostileLatency {
		t.Errorf("%s: the other session's SELECT 1 took %v", what, slow)
	}
	return slow
}

// hostileFull reports whether the whole suite runs (make test-hostile),
// not only its quick part; hostileOnly skips t otherwise.
func hostileFull() bool { return os.Getenv("SHEPHERD_HOSTILE") != "" }

func hostileOnly(t *testing.T) {
	if !hostileFull() {
		t.Skip("part of the hostile-input suite: make test-hostile (SHEPHERD_HOSTILE=1)")
	}
}

// hostileCluster is the cluster the suite attacks: MariaDB, PostgreSQL
// and SQLite under CBS, where translation and voting do the most work.
func hostileCluster(t *testing.T) (string, *Server) {
	if testing.Short() {
		t.Skip("real engines")
	}
	cfg := realCluster(t, "cbs")
	cfg.MemoryLimitMB = hostileMemoryMB
	return start(t, cfg)
}

// TestHostileNesting: arithmetic, scalar subqueries, parentheses and CASE
// nested 20, 1,000 and 100,000 deep. Each is answered as PostgreSQL
// answers it or refused with 54001 (stack depth limit exceeded) within
// seconds, the session goes on, and another session's SELECT 1 never
// waits.
func TestHostileNesting(t *testing.T) {
	addr, _ := hostileCluster(t)
	pg := postgresAlone(t)
	sh := shepherdConn(t, addr)
	ctx := context.Background()
	tb := newHostileTable(t)
	kinds := []struct {
		name string
		sql  func(d int) string
	}{
		{"arithmetic", func(d int) string { return "SELECT 1" + strings.Repeat("+1", d) }},
		{"subqueries", func(d int) string { return "SELECT " + nest(d, "(SELECT ", "1", ")") }},
		{"parentheses", func(d int) string { return "SELECT " + nest(d, "(", "1", ")") }},
		{"case", func(d int) string { return "SELECT " + nest(d, "CASE WHEN true THEN ", "1", " ELSE 0 END") }},
		{"boolean", func(d int) string { return "SELECT " + nest(d, "NOT (", "true", ")") }},
	}
	for _, k := range kinds {
		for _, d := range []int{20, 1000, 100_000} {
			if d > 1000 && k.name != "arithmetic" && !hostileFull() {
				continue
			}
			what := fmt.Sprintf("%s %d deep", k.name, d)
			q := k.sql(d)
			want := runText(ctx, pg, q)
			mem := watchMemory()
			p := startPinger(t, addr)
			qctx, cancel := context.WithTimeout(ctx, time.Minute)
			began := time.Now()
			got := runText(qctx, sh, q)
			took := time.Since(began)
			cancel()
			slow := p.end(t, what)
			heap := mem.end()
			tb.add(fmt.Sprintf("%s (%d bytes)", what, len(q)), brief(got), took, slow, mem, heap)
			switch {
			case got.code == "54001":
			case d == 20 && !got.same(want):
				t.Errorf("%s: shepherd %v, PostgreSQL %v", what, got, want)
			case !got.same(want):
				t.Errorf("%s: shepherd %v, want PostgreSQL's %v or 54001", what, got, want)
			}
			if took > 10*time.Second {
				t.Errorf("%s took %v", what, took)
			}
			if o := runText(ctx, sh, "SELECT 1"); o.code != "" {
				t.Fatalf("%s: the session did not go on: %v", what, o)
			}
		}
	}
}

// rawQuery sends one Query message whose body is body as it stands (no
// terminator added: body may hold NULs or bytes that are not UTF-8).
func (c *wireClient) rawQuery(body string) {
	c.t.Helper()
	msg := make([]byte, 5, 5+len(body))
	msg[0] = 'Q'
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(body)))
	msg = append(msg, body...)
	if _, err := c.nc.Write(msg); err != nil {
		c.t.Fatal(err)
	}
}

// answers is until("ReadyForQuery") where the server may also end the
// connection, which ends the list with "(connection closed)".
func (c *wireClient) answers() []string {
	c.t.Helper()
	var out []string
	for {
		if err := c.nc.SetReadDeadline(time.Now().Add(wireAnswerWait)); err != nil {
			c.t.Fatal(err)
		}
		m, err := c.fe.Receive()
		if err != nil {
			return append(out, "(connection closed)")
		}
		s := renderWire(m)
		out = append(out, s)
		if strings.HasPrefix(s, "ReadyForQuery") {
			return out
		}
	}
}

// wireCodes keeps, of an exchange's messages, the errors (code and
// message) and the ReadyForQuery.
func wireCodes(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		if strings.HasPrefix(m, "ErrorResponse") || strings.HasPrefix(m, "ReadyForQuery") || strings.HasPrefix(m, "(") {
			out = append(out, m)
		}
	}
	return out
}

// TestHostileMessages: invalid UTF-8, NUL bytes inside a query string and
// an unknown message type get PostgreSQL 15's answers, and the session
// goes on where PostgreSQL's does; 10,000 statements in one message are
// all answered; a huge statement is answered or refused with 54000 and a
// message beyond the front's limit ends that connection only (08P01).
func TestHostileMessages(t *testing.T) {
	addr, _ := hostileCluster(t)
	shDSN := fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)
	pgDSN := testenv.Postgres(t)
	ctx := context.Background()
	tb := newHostileTable(t)

	for _, tc := range []struct{ name, body string }{
		{"invalid UTF-8", "SELECT 'a\xffb'\x00"},
		{"invalid UTF-8 in an identifier", "SELECT 1 AS \"\xc3\x28\"\x00"},
		{"truncated UTF-8", "SELECT '\xe2\x82'\x00"},
		{"NUL inside", "SELECT 1\x00SELECT 2\x00"},
		{"no terminator", "SELECT 1"},
		{"only NULs", "\x00\x00\x00"},
	} {
		var got [2][]string
		var took, slow time.Duration
		var mem *memWatch
		var heap uint64
		for i, dsn := range []string{pgDSN, shDSN} {
			var p *pinger
			if dsn == shDSN {
				mem, p = watchMemory(), startPinger(t, addr)
			}
			began := time.Now()
			c := dialWire(t, dsn)
			c.rawQuery(tc.body)
			out := wireCodes(c.answers())
			// The session goes on if the server says so.
			if out[len(out)-1] == "ReadyForQuery I" {
				c.send(&pgproto3.Query{String: "SELECT 1"})
				out = append(out, wireCodes(c.answers())...)
			}
			got[i] = out
			if p != nil {
				took, slow, heap = time.Since(began), p.end(t, tc.name), mem.end()
			}
		}
		tb.add(tc.name, strings.Join(got[1], "; "), took, slow, mem, heap)
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Errorf("%s:\n shepherd:   %q\n PostgreSQL: %q", tc.name, got[1], got[0])
		}
	}

	// Extended protocol: a parameter that is not UTF-8.
	{
		var got [2][]string
		for i, dsn := range []string{pgDSN, shDSN} {
			c := dialWire(t, dsn)
			c.send(&pgproto3.Parse{Query: "SELECT $1::text"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("a\xffb")}},
				&pgproto3.Execute{}, &pgproto3.Sync{})
			got[i] = wireCodes(c.answers())
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Errorf("parameter not UTF-8:\n shepherd:   %q\n PostgreSQL: %q", got[1], got[0])
		}
	}

	sh := shepherdConn(t, addr)
	// 10,000 statements in one message.
	{
		p := startPinger(t, addr)
		mem := watchMemory()
		began := time.Now()
		rs, err := sh.Exec(ctx, strings.Repeat("SELECT 1;", 10_000)).ReadAll()
		took := time.Since(began)
		heap := mem.end()
		slow := p.end(t, "10,000 statements")
		tb.add("10,000 statements in one message", fmt.Sprintf("%d results, err %v", len(rs), err), took, slow, mem, heap)
		if err != nil || len(rs) != 10_000 {
			t.Errorf("10,000 statements: %d results, %v", len(rs), err)
		}
	}
	// Huge statements: 10 MB and 60 MB of literal (under the front's 64
	// MiB message limit; MariaDB's max_allowed_packet may refuse them
	// with 54000), and 100,000 rows of VALUES.
	for _, tc := range []struct {
		name string
		sql  string
		want string
	}{
		{"10 MB literal", "SELECT length('" + strings.Repeat("x", 10<<20) + "')", fmt.Sprint(10 << 20)},
		{"60 MB literal (full suite)", "SELECT length('" + strings.Repeat("x", 60<<20) + "')", fmt.Sprint(60 << 20)},
		{"100,000 VALUES rows (full suite)", "SELECT count(*) FROM (VALUES " + strings.Repeat("(1, 'abc'),", 99_999) + "(1, 'abc')) v(a, b)", "100000"},
	} {
		if strings.HasSuffix(tc.name, "(full suite)") && !hostileFull() {
			continue
		}
		p := startPinger(t, addr)
		mem := watchMemory()
		began := time.Now()
		got := runText(ctx, sh, tc.sql)
		took := time.Since(began)
		heap := mem.end()
		slow := p.end(t, tc.name)
		tb.add(tc.name, brief(got), took, slow, mem, heap)
		if got.code != "54000" && (got.code != "" || firstValue(got) != tc.want) {
			t.Errorf("%s: %.200v, want %s or 54000", tc.name, got, tc.want)
		}
		if o := runText(ctx, sh, "SELECT 1"); o.code != "" {
			t.Fatalf("%s: the session did not go on: %v", tc.name, o)
		}
	}
	// A message beyond the front's limit (64 MiB): that connection ends
	// with 08P01, without shepherd reading it whole.
	{
		p := startPinger(t, addr)
		mem := watchMemory()
		began := time.Now()
		c := dialWire(t, shDSN)
		hdr := []byte{'Q', 0, 0, 0, 0}
		binary.BigEndian.PutUint32(hdr[1:], 200<<20)
		if _, err := c.nc.Write(hdr); err != nil {
			t.Fatal(err)
		}
		out := c.until("ErrorResponse")
		took := time.Since(began)
		heap := mem.end()
		tb.add("a 200 MiB message header", out[len(out)-1], took, p.end(t, "a 200 MiB message"), mem, heap)
		if last := out[len(out)-1]; !strings.HasPrefix(last, "ErrorResponse 08P01") {
			t.Errorf("a 200 MiB message: %q, want 08P01", out)
		}
	}
	if o := runText(ctx, sh, "SELECT 1"); o.code != "" {
		t.Fatalf("after the hostile messages: %v", o)
	}
}

// TestHostileConnections: 2,000 clients connect at once and each runs a
// read and a transaction while holding its connection; with
// max_connections at 2,000 the next gets 53300 "sorry, too many clients
// already", and sessions already in keep working. The 2,000 transactions
// at once wait for slots of max_transactions (64) rather than open 2,000
// engine connections per replica: every one commits (conflicts retried),
// the primary stays, and no slot is left held.
func TestHostileConnections(t *testing.T) {
	hostileOnly(t)
	if testing.Short() {
		t.Skip("real engines")
	}
	const n = 2000
	cfg := realCluster(t, "cbs")
	cfg.MemoryLimitMB = hostileMemoryMB
	cfg.MaxConnections = n + 2 // and the set-up session and the pinger
	zero := 0
	cfg.ReservedConnections = &zero
	addr, srv := start(t, cfg)
	ctx := context.Background()
	sh := shepherdConn(t, addr)
	if o := runText(ctx, sh, "CREATE TABLE hc (k int PRIMARY KEY, v int)"); o.code != "" {
		t.Fatal(o)
	}
	var rows []string
	for k := 1; k <= 100; k++ {
		rows = append(rows, fmt.Sprintf("(%d, 0)", k))
	}
	if o := runText(ctx, sh, "INSERT INTO hc VALUES "+strings.Join(rows, ", ")); o.code != "" {
		t.Fatal(o)
	}
	tb := newHostileTable(t)
	mem := watchMemory()
	p := startPinger(t, addr)
	conns := make([]*pgconn.PgConn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			conns[i], errs[i] = pgconn.Connect(cctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable&connect_timeout=120", addr))
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close(context.Background())
			}
		}
	})
	connected := 0
	for i, err := range errs {
		if err == nil {
			connected++
		} else if connected < 3 {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	t.Logf("%d of %d connected in %v", connected, n, time.Since(began).Round(time.Millisecond))
	if connected != n {
		t.Fatalf("%d of %d connected", connected, n)
	}
	// One more: 53300.
	if _, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)); sqlstate(err) != "53300" {
		t.Errorf("connection %d: %v, want 53300", n+3, err)
	}
	// Every one of them runs a read and a transaction, all at once.
	began = time.Now()
	var failed, retries atomic.Int64
	var firstErr atomic.Value
	byWhat := struct {
		sync.Mutex
		m map[string]int
	}{m: map[string]int{}}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			q := fmt.Sprintf("SELECT v FROM hc WHERE k = %d; BEGIN; UPDATE hc SET v = v + 1 WHERE k = %d; COMMIT", i%100+1, i%100+1)
			for attempt := 1; ; attempt++ {
				res, err := c.Exec(qctx, q).ReadAll()
				if err == nil {
					break
				}
				code := sqlstate(err)
				byWhat.Lock()
				byWhat.m[fmt.Sprintf("%s at statement %d", code, len(res)+1)]++
				byWhat.Unlock()
				// A conflict (class 40) is retried, as a real client
				// does; a failed primary is not a conflict.
				if !strings.HasPrefix(code, "40") || strings.Contains(err.Error(), "primary replica failed") || attempt == 10 {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					break
				}
				retries.Add(1)
				if _, err := c.Exec(qctx, "ROLLBACK").ReadAll(); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					break
				}
			}
		}()
	}
	wg.Wait()
	slow := p.end(t, "2,000 connections")
	heap := mem.end()
	tb.add("2,000 connections, each a read and an update", fmt.Sprintf("%d failed, %d retried", failed.Load(), retries.Load()), time.Since(began), slow, mem, heap)
	t.Logf("2,000 sessions each ran a read and an update in %v: %d failed (first: %v), %d retried; other session's slowest SELECT 1 %v; heap peak %d MiB; peak RSS %s",
		time.Since(began).Round(time.Millisecond), failed.Load(), firstErr.Load(), retries.Load(), slow.Round(time.Millisecond), heap>>20, peakRSS())
	// The SELECT and the UPDATE of one row are one transaction (BEGIN in
	// a query string turns its implicit block into a block), and the
	// primary, MariaDB at SERIALIZABLE, holds the SELECT's share lock:
	// two of them upgrading at once is a deadlock (40P01; PostgreSQL at
	// serializable says 40001), a conflict the client retries.
	t.Logf("errors by SQLSTATE and statement (1 SELECT, 2 BEGIN, 3 UPDATE, 4 COMMIT): %v", byWhat.m)
	if failed.Load() > 0 {
		// Before the admission cap (max_transactions) each of the
		// 2,000 transactions took an engine connection of its own on
		// every replica, exceeding MariaDB's max_connections (300
		// here): the primary was taken out, and 421 got 40001 "the
		// primary replica failed".
		t.Errorf("%d of %d sessions failed, first: %v", failed.Load(), n, firstErr.Load())
	}
	if o := runText(ctx, sh, "SELECT sum(v) FROM hc"); o.code != "" || firstValue(o) != fmt.Sprint(int64(n)-failed.Load()) {
		t.Errorf("sum after the updates: %v, want %d", o, int64(n)-failed.Load())
	}
	if v := srv.Cluster().Views(); len(v) != 1 {
		t.Errorf("views %+v: the primary was replaced", v)
	}
	idle, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatalf("replicas not idle: %v", err)
	}
	if held, waiting := srv.Cluster().Admitted(); held != 0 || waiting != 0 {
		t.Errorf("after every transaction ended: %d slots held, %d waiting", held, waiting)
	}
}

// TestHostileIdleClients: a client idle inside a transaction holding a
// row lock, and a client inside a transaction that asks for large answers
// and never reads them: other sessions keep reading and writing what does
// not conflict, the heap stays bounded, and the client that never reads
// loses its connection after the front's write timeout, which frees its
// locks (a session then takes the row it had locked).
func TestHostileIdleClients(t *testing.T) {
	hostileOnly(t)
	addr, srv := hostileCluster(t)
	srv.front.SetWriteTimeout(2 * time.Second)
	ctx := context.Background()
	sh := shepherdConn(t, addr)
	for _, s := range []string{
		"CREATE TABLE ic (k int PRIMARY KEY, v int)",
		"INSERT INTO ic VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0)",
		"CREATE TABLE icb (k int PRIMARY KEY)",
		"INSERT INTO icb VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15), (16), (17), (18), (19), (20)",
	} {
		if o := runText(ctx, sh, s); o.code != "" {
			t.Fatal(o)
		}
	}
	tb := newHostileTable(t)
	mem := watchMemory()
	// Idle in a transaction, holding the lock on row 1.
	idle := shepherdConn(t, addr)
	if _, err := idle.Exec(ctx, "BEGIN; UPDATE ic SET v = v + 1 WHERE k = 1").ReadAll(); err != nil {
		t.Fatal(err)
	}
	// Holds the lock on row 10, then never reads: 32 MB of answer (20^4
	// rows of 200 bytes), ten times over.
	deaf := dialWire(t, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	deaf.send(&pgproto3.Query{String: "BEGIN; UPDATE ic SET v = v + 100 WHERE k = 10"})
	if out := deaf.until("ReadyForQuery"); out[len(out)-1] != "ReadyForQuery T" {
		t.Fatalf("the deaf client's update: %q", out)
	}
	for range 10 {
		deaf.send(&pgproto3.Query{String: "SELECT repeat('x', 200) FROM icb a, icb b, icb c, icb d"})
	}
	p := startPinger(t, addr)
	began := time.Now()
	for i := range 20 {
		k := i%8 + 2
		if o := runText(ctx, sh, fmt.Sprintf("BEGIN; UPDATE ic SET v = v + 1 WHERE k = %d; COMMIT", k)); o.code != "" {
			t.Fatalf("update %d next to idle clients, after %v: %v", i, time.Since(began), o)
		}
		// Rows 2 to 8 only: on a MariaDB primary (SERIALIZABLE, so
		// reads take shared locks) a read of the rows the idle
		// transaction wrote waits innodb_lock_wait_timeout (50 s) and
		// fails with 40001, where PostgreSQL answers at once.
		if o := runText(ctx, sh, "SELECT count(*) FROM ic WHERE k BETWEEN 2 AND 8"); o.code != "" || firstValue(o) != "7" {
			t.Fatalf("read %d next to idle clients, after %v: %v", i, time.Since(began), o)
		}
	}
	// Row 10 is free once the deaf client's connection is gone.
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if o := runText(qctx, sh, "UPDATE ic SET v = v + 1 WHERE k = 10"); o.code != "" {
		t.Fatalf("row 10 after the deaf client: %v", o)
	}
	took := time.Since(began)
	slow := p.end(t, "idle clients")
	heap := mem.end()
	tb.add("idle in a transaction + a client never reading", "20 txns and reads; row freed", took, slow, mem, heap)
	if o := runText(ctx, sh, "SELECT sum(v) FROM ic WHERE k > 1"); o.code != "" || firstValue(o) != "21" {
		t.Errorf("sum: %v, want 21 (the deaf client's update rolled back)", o)
	}
	// The idle client is still in its transaction and commits.
	if _, err := idle.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		t.Errorf("the idle client's COMMIT: %v", err)
	}
}

// brief says what an outcome was, for the table: the SQLSTATE, or the
// first value answered.
func brief(o textOutcome) string {
	if o.code != "" {
		return "error " + o.code
	}
	return fmt.Sprintf("%.24s (%d rows)", firstValue(o), len(o.rows))
}

// firstValue is the first column of an outcome's first row, or "".
func firstValue(o textOutcome) string {
	if len(o.rows) == 0 || len(o.rows[0]) == 0 {
		return ""
	}
	return o.rows[0][0]
}
