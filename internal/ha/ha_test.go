package ha

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/shepherd-db/shepherd/internal/wal"
)

func TestMain(m *testing.M) {
	// A closed member's peer connections end only when their reads time
	// out (etcd's rafthttp sets a 5 s deadline before each read, which
	// net/http's own abort cannot cut short): wait that long for them.
	// goleak's own retries give up after about a second.
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for end := time.Now().Add(15 * time.Second); err != nil && time.Now().Before(end); err = goleak.Find() {
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testLogLevel keeps etcd quiet about the members the tests close (it
// logs their listeners' ends as errors).
const testLogLevel = "panic"

// testLease is the lease of the tests' nodes: etcd's floor.
const testLease = MinLease

// freePorts returns n distinct loopback ports free at the time of the
// call.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// testCluster is n etcd members in this process, started together.
type testCluster struct {
	dir     string
	peers   []Peer
	members []*Member
	closed  []bool
}

func startCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	c := &testCluster{members: make([]*Member, n), closed: make([]bool, n)}
	for i := range n {
		c.peers = append(c.peers, Peer{
			Name:      fmt.Sprintf("m%d", i),
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
		})
	}
	dir := t.TempDir()
	c.dir = dir
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c.members[i], errs[i] = StartMember(MemberConfig{
				Name: c.peers[i].Name, Dir: filepath.Join(dir, c.peers[i].Name), Peers: c.peers,
				StartTimeout: 30 * time.Second, LogLevel: testLogLevel,
			})
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for i, m := range c.members {
			if m != nil && !c.closed[i] {
				m.Close()
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	return c
}

func (c *testCluster) kill(i int) {
	c.closed[i] = true
	c.members[i].Close()
}

// start starts member i (again, from its directory), or a new member
// joining the cluster when i is past the end (after AddMember).
func (c *testCluster) start(t *testing.T, i int, join bool) {
	t.Helper()
	m, err := StartMember(MemberConfig{
		Name: c.peers[i].Name, Dir: filepath.Join(c.dir, c.peers[i].Name), Peers: c.peers,
		Join: join, StartTimeout: 30 * time.Second, LogLevel: testLogLevel,
	})
	if err != nil {
		t.Fatal(err)
	}
	if i == len(c.members) {
		c.members = append(c.members, m)
		c.closed = append(c.closed, false)
		return
	}
	c.members[i], c.closed[i] = m, false
}

func (c *testCluster) endpoints(idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, c.peers[i].ClientURL)
	}
	return out
}

// node connects a node to the members idx.
func (c *testCluster) node(t *testing.T, name string, idx ...int) *Node {
	t.Helper()
	return c.nodeLease(t, name, testLease, idx...)
}

// stableLease is the lease of a leader whose term must outlive a member
// going down under its client: the client's move to another member, and
// an etcd election, can take longer than testLease on a loaded machine.
const stableLease = 8 * time.Second

// nodeLease is node with a lease of its own.
func (c *testCluster) nodeLease(t *testing.T, name string, lease time.Duration, idx ...int) *Node {
	t.Helper()
	cli, err := Connect(context.Background(), c.endpoints(idx...), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	n, err := NewNode(cli, Options{Name: name, Lease: lease, Prefix: "/test/", Address: name + ":6543"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func record(b uint64) wal.Record {
	return wal.Record{Txn: b * 10, Barrier: b, Statements: []wal.Statement{{
		SQL: "INSERT INTO t VALUES ($1)", Writes: true, Barrier: b, Verb: "INSERT",
		Args:  []wal.Value{{Type: 3, Text: fmt.Sprint(b)}},
		Forms: []wal.Form{{Dialect: 1, SQL: "INSERT INTO t VALUES ($1)", Args: []wal.Value{{Type: 3, Text: fmt.Sprint(b)}}}},
	}}}
}

func records(from, to uint64) []wal.Record {
	var out []wal.Record
	for b := from; b <= to; b++ {
		out = append(out, record(b))
	}
	return out
}

// checkLog reads the log through n and wants exactly the barriers given.
func checkLog(t *testing.T, n *Node, want []uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := n.ReadLog(ctx, 0)
	if err != nil {
		t.Fatalf("ReadLog: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("log holds %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Barrier != want[i] || r.Txn != want[i]*10 || len(r.Statements) != 1 || r.Statements[0].Args[0].Text != fmt.Sprint(want[i]) {
			t.Fatalf("record %d is %+v, want barrier %d", i, r, want[i])
		}
	}
}

func span(from, to uint64) []uint64 {
	var out []uint64
	for b := from; b <= to; b++ {
		out = append(out, b)
	}
	return out
}

type won struct {
	node string
	lead *Leadership
	err  error
	at   time.Time
}

// TestTakeover: three members, a node on each, each node's client on its
// own member. The leader appends, then its node dies with its member (no
// resignation: its lease must expire). A standby takes the lease with a
// higher epoch within the lease (plus an etcd election), reads what the
// old leader appended, and appends after it.
func TestTakeover(t *testing.T) {
	c := startCluster(t, 3)
	a, b, d := c.node(t, "a", 0), c.node(t, "b", 1), c.node(t, "c", 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if li, err := b.Leader(ctx); err != nil || li != (LeaderInfo{Node: "a", Address: "a:6543", Epoch: la.Epoch}) {
		t.Fatalf("b sees leader %+v (%v), want a epoch %d", li, err, la.Epoch)
	}
	// A standby watching the leader sees a, then whoever follows.
	octx, ocancel := context.WithCancel(ctx)
	defer ocancel()
	seen := d.Observe(octx)
	if li := <-seen; li.Node != "a" || li.Epoch != la.Epoch {
		t.Fatalf("Observe's first leader %+v, want a", li)
	}
	if err := a.Append(ctx, la, LogOptions{}, records(1, 5)); err != nil {
		t.Fatal(err)
	}

	// The standbys campaign and wait.
	wins := make(chan won, 2)
	sctx, scancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, n := range []*Node{b, d} {
		wg.Go(func() {
			l, err := n.Campaign(sctx)
			wins <- won{node: n.Name(), lead: l, err: err, at: time.Now()}
		})
	}
	defer func() { scancel(); wg.Wait() }()

	// Make sure neither standby got in while a leads.
	if err := a.Check(ctx, la); err != nil {
		t.Fatalf("a lost its term before it died: %v", err)
	}
	killed := time.Now()
	la.Abandon()
	a.Client().Close()
	c.kill(0)

	// The lease, an etcd election (the dead member may have led etcd),
	// and slack for a loaded machine.
	bound := testLease + 4*time.Second
	var w won
	select {
	case w = <-wins:
	case <-time.After(bound + 5*time.Second):
		t.Fatalf("no standby took over %v after the leader died", bound+5*time.Second)
	}
	if w.err != nil {
		t.Fatalf("standby %s: %v", w.node, w.err)
	}
	took := w.at.Sub(killed)
	t.Logf("standby %s took over after %v (lease %v), epoch %d after %d", w.node, took, testLease, w.lead.Epoch, la.Epoch)
	if took > bound {
		t.Errorf("takeover took %v, more than %v", took, bound)
	}
	if w.lead.Epoch <= la.Epoch {
		t.Fatalf("new epoch %d is not above the old %d", w.lead.Epoch, la.Epoch)
	}
	nw := b
	if w.node == "c" {
		nw = d
	}
	checkLog(t, nw, span(1, 5))
	if err := nw.Append(ctx, w.lead, LogOptions{}, records(6, 8)); err != nil {
		t.Fatal(err)
	}
	checkLog(t, nw, span(1, 8))
	// The other standby is still waiting, and leaves when told to.
	select {
	case w2 := <-wins:
		t.Fatalf("a second leader: %+v", w2)
	default:
	}
	if li, err := nw.Leader(ctx); err != nil || li.Node != w.node || li.Address != w.node+":6543" || li.Epoch != w.lead.Epoch {
		t.Fatalf("leader %+v (%v), want %s epoch %d", li, err, w.node, w.lead.Epoch)
	}
	found := false
	for li := range seen {
		if li.Node == w.node && li.Epoch == w.lead.Epoch {
			found = true
			break
		}
		if li.Node != "" {
			t.Fatalf("Observe saw %+v between a and %s", li, w.node)
		}
	}
	if !found {
		t.Fatalf("Observe closed before it saw %s", w.node)
	}
	ocancel()
	for range seen { // it closes
	}
	scancel()
	if w2 := <-wins; !errors.Is(w2.err, context.Canceled) {
		t.Fatalf("the cancelled standby: %+v", w2)
	}
	if err := w.lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDeposedAppendFails: a leader partitioned from the store keeps its
// client but not its term (its lease is revoked, as the store does when
// it expires). A standby takes over; the old leader's appends and
// truncation, alone or through its group-committing Log, change nothing
// and fail with ErrDeposed, before and after it notices.
func TestDeposedAppendFails(t *testing.T) {
	c := startCluster(t, 3)
	a, b := c.node(t, "a", 0, 1, 2), c.node(t, "b", 0, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := a.OpenLog(ctx, la, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	for _, r := range records(1, 3) {
		if err := lg.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	// The store ends a's term (what an expiry does), b wins the next.
	if _, err := b.Client().Revoke(ctx, la.session.Lease()); err != nil {
		t.Fatal(err)
	}
	lb, err := b.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Epoch <= la.Epoch {
		t.Fatalf("epoch %d after %d", lb.Epoch, la.Epoch)
	}

	if err := a.Append(ctx, la, LogOptions{}, records(4, 4)); !errors.Is(err, ErrDeposed) {
		t.Fatalf("deposed Append: %v, want ErrDeposed", err)
	}
	if err := lg.Append(ctx, record(4)); !errors.Is(err, ErrDeposed) {
		t.Fatalf("deposed Log.Append: %v, want ErrDeposed", err)
	}
	if _, err := lg.Enqueue(record(5)); !errors.Is(err, ErrDeposed) || !errors.Is(err, wal.ErrFailed) {
		t.Fatalf("Enqueue after the log failed: %v, want ErrDeposed and wal.ErrFailed", err)
	}
	if err := lg.TruncateBefore(3); !errors.Is(err, ErrDeposed) {
		t.Fatalf("deposed Log.TruncateBefore: %v, want ErrDeposed", err)
	}
	lg.Close()
	if _, err := lg.Enqueue(record(5)); !errors.Is(err, ErrLogClosed) || !errors.Is(err, wal.ErrClosed) {
		t.Fatalf("Enqueue after Close: %v, want ErrLogClosed and wal.ErrClosed", err)
	}
	if err := a.TruncateBefore(ctx, la, 3); !errors.Is(err, ErrDeposed) {
		t.Fatalf("deposed TruncateBefore: %v, want ErrDeposed", err)
	}
	if err := a.Check(ctx, la); !errors.Is(err, ErrDeposed) {
		t.Fatalf("Check of the old term: %v, want ErrDeposed", err)
	}
	select {
	case <-la.Lost():
	case <-time.After(2 * testLease):
		t.Fatal("the old term's Lost did not close after its lease was revoked")
	}
	checkLog(t, b, span(1, 3))

	// The new leader continues the barriers; a reused one is refused.
	if err := b.Append(ctx, lb, LogOptions{}, records(3, 3)); !errors.Is(err, ErrBarrierTaken) {
		t.Fatalf("append at a taken barrier: %v, want ErrBarrierTaken", err)
	}
	lgb, err := b.OpenLog(ctx, lb, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lgb.Close()
	if _, err := lgb.Enqueue(record(3)); !errors.Is(err, wal.ErrBarrierOrder) {
		t.Fatalf("Enqueue at the log's last barrier: %v, want wal.ErrBarrierOrder", err)
	}
	if err := lgb.Append(ctx, record(4)); err != nil {
		t.Fatal(err)
	}
	if first, ok := lgb.First(); !ok || first != 1 {
		t.Fatalf("First: %d, %v; want 1", first, ok)
	}
	if err := lgb.TruncateBefore(3); err != nil {
		t.Fatal(err)
	}
	checkLog(t, b, []uint64{3, 4})
	if first, ok := lgb.First(); !ok || first != 3 {
		t.Fatalf("First after truncation: %d, %v; want 3", first, ok)
	}
	if recs, err := lgb.ReadFrom(4); err != nil || len(recs) != 1 || recs[0].Barrier != 4 {
		t.Fatalf("ReadFrom(4): %v, %v; want the record at 4", recs, err)
	}
	// Truncating past the end keeps the newest record.
	if err := b.TruncateBefore(ctx, lb, 100); err != nil {
		t.Fatal(err)
	}
	checkLog(t, b, []uint64{4})
	if err := lb.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLogSurvivesMemberLoss: many appenders through one Log (group
// commit), then a member goes down: everything appended is read back
// through the others, and appends go on with two of three.
func TestLogSurvivesMemberLoss(t *testing.T) {
	c := startCluster(t, 3)
	a := c.nodeLease(t, "a", stableLease, 0, 1, 2)
	reader := c.node(t, "r", 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := a.OpenLog(ctx, la, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()

	// Appenders take barriers under one lock, as the coordinator decides
	// the order, and wait outside it.
	var order sync.Mutex
	next := uint64(1)
	appendSome := func(n int) {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				order.Lock()
				p, err := lg.Enqueue(record(next))
				next++
				order.Unlock()
				if err == nil {
					err = p.Wait(ctx)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	appendSome(200)
	recs, batches := lg.Stats()
	t.Logf("%d records in %d batches", recs, batches)
	if recs != 200 || batches < 1 || batches > recs {
		t.Fatalf("stats: %d records in %d batches", recs, batches)
	}

	c.kill(0)
	checkLog(t, reader, span(1, 200))
	appendSome(50)
	checkLog(t, reader, span(1, 250))
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAppendChunks: an append larger than one etcd transaction may carry
// is split, and read back whole (also across ReadLog's pages); a record
// larger than a request is refused.
func TestAppendChunks(t *testing.T) {
	c := startCluster(t, 1)
	a := c.node(t, "a", 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, la, LogOptions{MaxTxnOps: 8}, records(1, 600)); err != nil {
		t.Fatal(err)
	}
	checkLog(t, a, span(1, 600))
	if b, ok, err := a.LastBarrier(ctx); err != nil || !ok || b != 600 {
		t.Fatalf("LastBarrier = %d %v %v", b, ok, err)
	}
	big := record(601)
	big.Statements[0].SQL = string(make([]byte, 64<<10))
	if err := a.Append(ctx, la, LogOptions{MaxRequestBytes: 32 << 10}, []wal.Record{big}); !errors.Is(err, wal.ErrTooLarge) {
		t.Fatalf("oversized record: %v, want wal.ErrTooLarge", err)
	}
	// A retry of a chunk whose answer was lost finds its own records and
	// succeeds; a chunk finding other records at its barriers does not.
	chunk := func(recs ...wal.Record) []entry {
		var out []entry
		for _, r := range recs {
			p, err := wal.Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, entry{barrier: r.Barrier, payload: p})
		}
		return out
	}
	again := func(ch []entry) *clientv3.TxnResponse {
		cmps, ops, reads := a.chunkTxn(la, ch)
		r, err := a.cli.Txn(ctx).If(cmps...).Then(ops...).Else(reads...).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mine := chunk(record(5), record(6))
	if err := chunkVerdict(again(mine), la, mine, true); err != nil {
		t.Fatalf("a retry finding its own records: %v", err)
	}
	if err := chunkVerdict(again(mine), la, mine, false); !errors.Is(err, ErrBarrierTaken) {
		t.Fatalf("a first attempt finding the same records: %v, want ErrBarrierTaken", err)
	}
	other := record(6)
	other.Txn++
	theirs := chunk(record(5), other)
	if err := chunkVerdict(again(theirs), la, theirs, true); !errors.Is(err, ErrBarrierTaken) {
		t.Fatalf("a retry finding other records: %v, want ErrBarrierTaken", err)
	}
	if err := a.Append(ctx, la, LogOptions{}, []wal.Record{record(700), record(650)}); !errors.Is(err, wal.ErrBarrierOrder) {
		t.Fatalf("barriers out of order: %v, want wal.ErrBarrierOrder", err)
	}
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestResign: a resigned term ends at once (its Lost closes) and a
// standby takes over without waiting for the lease to expire.
func TestResign(t *testing.T) {
	c := startCluster(t, 1)
	a, b := c.node(t, "a", 0), c.node(t, "b", 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wins := make(chan won, 1)
	go func() {
		l, err := b.Campaign(ctx)
		wins <- won{lead: l, err: err, at: time.Now()}
	}()
	start := time.Now()
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	<-la.Lost()
	w := <-wins
	if w.err != nil {
		t.Fatal(w.err)
	}
	if took := w.at.Sub(start); took >= testLease {
		t.Errorf("takeover after a resignation took %v: as long as the lease, as if it had expired", took)
	}
	if w.lead.Epoch <= la.Epoch {
		t.Fatalf("epoch %d after %d", w.lead.Epoch, la.Epoch)
	}
	if err := a.Check(ctx, la); !errors.Is(err, ErrDeposed) {
		t.Fatalf("Check of the resigned term: %v", err)
	}
	if err := w.lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Leader(ctx); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("Leader with nobody leading: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := NewNode(&clientv3.Client{}, Options{}); err == nil {
		t.Error("a node without a name was accepted")
	}
	if _, err := NewNode(&clientv3.Client{}, Options{Name: "a", Lease: time.Second}); err == nil {
		t.Error("a lease below MinLease was accepted")
	}
	peers := []Peer{{Name: "a", PeerURL: "http://127.0.0.1:1", ClientURL: "http://127.0.0.1:2"}}
	for name, c := range map[string]struct {
		self  string
		peers []Peer
	}{
		"not a peer": {"b", peers},
		"twice":      {"a", append(peers, peers[0])},
		"bad url":    {"a", []Peer{{Name: "a", PeerURL: "127.0.0.1:1", ClientURL: "http://127.0.0.1:2"}}},
		"no port":    {"a", []Peer{{Name: "a", PeerURL: "http://127.0.0.1", ClientURL: "http://127.0.0.1:2"}}},
		"no name":    {"a", []Peer{{PeerURL: "http://127.0.0.1:1", ClientURL: "http://127.0.0.1:2"}}},
	} {
		if _, err := StartMember(MemberConfig{Name: c.self, Dir: t.TempDir(), Peers: c.peers}); err == nil {
			t.Errorf("%s: StartMember accepted %+v", name, c.peers)
		}
	}
	if _, err := Connect(context.Background(), []string{"localhost"}, time.Second); err == nil {
		t.Error("Connect took an endpoint without scheme and port")
	}
}

// TestMembership: a member restarted from its directory catches up on
// what was appended while it was down; a member added to the running
// cluster gets the whole log; a removed member leaves the quorum to the
// others, which keep appending.
func TestMembership(t *testing.T) {
	c := startCluster(t, 3)
	a := c.nodeLease(t, "a", stableLease, 0, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	la, err := a.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, la, LogOptions{}, records(1, 3)); err != nil {
		t.Fatal(err)
	}

	// Restart: m2 misses 4 and 5, and has them once back.
	c.kill(2)
	if err := a.Append(ctx, la, LogOptions{}, records(4, 5)); err != nil {
		t.Fatal(err)
	}
	c.start(t, 2, false)
	checkLog(t, c.node(t, "r2", 2), span(1, 5))

	// Add m3: it joins and holds the whole log.
	ports := freePorts(t, 2)
	p := Peer{Name: "m3", PeerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1])}
	if err := AddMember(ctx, a.Client(), p); err != nil {
		t.Fatal(err)
	}
	c.peers = append(c.peers, p)
	c.start(t, 3, true)
	checkLog(t, c.node(t, "r3", 3), span(1, 5))

	// Remove m0; the other three go on (a's client also reaches m1).
	if err := RemoveMember(ctx, a.Client(), "m0"); err != nil {
		t.Fatal(err)
	}
	c.kill(0)
	if err := a.Append(ctx, la, LogOptions{}, records(6, 6)); err != nil {
		t.Fatal(err)
	}
	checkLog(t, c.node(t, "r3b", 3), span(1, 6))
	ms, err := Members(ctx, a.Client())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"m1", "m2", "m3"}) {
		t.Fatalf("members %v after adding m3 and removing m0", names)
	}
	if err := RemoveMember(ctx, a.Client(), "m9"); err == nil {
		t.Fatal("removing an unknown member succeeded")
	}
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
