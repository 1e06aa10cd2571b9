package ha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// ErrDeposed is wrapped by every failure that comes from this node no
// longer being the leader it was: its lease expired or was revoked, or it
// resigned, and another node may lead (with a higher epoch) already.
var ErrDeposed = errors.New("ha: this node is no longer the leader")

// ErrNoLeader is returned by Node.Leader when no node leads.
var ErrNoLeader = errors.New("ha: no leader")

// DefaultLease is the lease a leader holds when the configuration names
// none: a standby takes over at most this long (plus an etcd election
// when the etcd leader went down with the node) after the leader stopped
// renewing it.
const DefaultLease = 3 * time.Second

// MinLease is the shortest lease: etcd grants leases in whole seconds and
// raises a TTL below its own floor (one and a half election timeouts) to
// that floor, which for the default timings is 2 s.
const MinLease = 2 * time.Second

// Options are a node's settings, the same for all its campaigns.
type Options struct {
	// Name is the node's name, unique in the cluster: the leader key's
	// value, shown to operators.
	Name string
	// Prefix is the etcd key prefix of this shepherd cluster; "" means
	// DefaultPrefix. Several shepherd clusters may share an etcd cluster
	// under different prefixes.
	Prefix string
	// Lease is how long the leader's lease lasts without renewal; 0
	// means DefaultLease. It is rounded up to whole seconds.
	Lease time.Duration
	// Address is where this node serves clients (host:port), published
	// with its leadership so that standbys can name, or forward to, the
	// leader.
	Address string
}

// DefaultPrefix is Options.Prefix when unset.
const DefaultPrefix = "/shepherd/"

// Node is one shepherd node's handle on the coordination store: it
// campaigns for leadership and tells who leads.
type Node struct {
	cli    *clientv3.Client
	name   string
	addr   string
	prefix string
	ttl    int // seconds
}

// NewNode returns a node that uses cli. cli stays the caller's: Close it
// after the node's last use.
func NewNode(cli *clientv3.Client, o Options) (*Node, error) {
	if o.Name == "" {
		return nil, errors.New("ha: a node needs a name")
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Lease < MinLease {
		return nil, fmt.Errorf("ha: lease %v is shorter than %v", o.Lease, MinLease)
	}
	p := o.Prefix
	if p == "" {
		p = DefaultPrefix
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return &Node{cli: cli, name: o.Name, addr: o.Address, prefix: p, ttl: int(math.Ceil(o.Lease.Seconds()))}, nil
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Client is the node's etcd client.
func (n *Node) Client() *clientv3.Client { return n.cli }

// Prefix is the cluster's key prefix, ending in "/".
func (n *Node) Prefix() string { return n.prefix }

// electionPrefix holds one key per campaigning node, "<prefix>leader/<lease
// id in hex>", its value the node's LeaderInfo in JSON (readable with
// etcdctl); the key with the lowest create revision is the leader's.
func (n *Node) electionPrefix() string { return n.prefix + "leader/" }

// Leadership is one term of this node as the leader. Its Epoch is the
// create revision of its leader key: etcd's revisions grow with every
// write, and a node's key becomes the leader's only after every key
// created before it is gone, so each term's epoch is above every earlier
// term's, on every node's view.
type Leadership struct {
	Node    string
	Epoch   uint64
	key     string
	session *concurrency.Session
	elect   *concurrency.Election
}

// Campaign waits until this node leads and returns its term. It holds a
// lease of its own, renewed in the background; when a renewal fails for
// the lease's length, the lease is gone and Lost closes. A ctx that ends
// first withdraws the candidacy. Failures of the store that pass by
// themselves (its own leader changing) do not end the candidacy: it
// starts again.
func (n *Node) Campaign(ctx context.Context) (*Leadership, error) {
	for {
		l, err := n.campaign(ctx)
		switch {
		case err == nil && l != nil:
			return l, nil
		case err != nil && (!transient(err) || ctx.Err() != nil):
			return nil, err
		}
		// A store that is electing its own leader, or a key of ours that
		// vanished while we waited: campaign again after a pause.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ha: node %s: campaign: %w", n.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// campaign is one candidacy: the term, or nil if the key vanished before
// it led, or an error.
func (n *Node) campaign(ctx context.Context) (*Leadership, error) {
	// The lease is granted under ctx, but renewed under the client's
	// own context: the term must outlive the call that won it.
	g, err := n.cli.Grant(ctx, int64(n.ttl))
	if err != nil {
		return nil, fmt.Errorf("ha: node %s: lease: %w", n.name, err)
	}
	s, err := concurrency.NewSession(n.cli, concurrency.WithTTL(n.ttl), concurrency.WithLease(g.ID))
	if err != nil {
		return nil, fmt.Errorf("ha: node %s: lease: %w", n.name, err)
	}
	e := concurrency.NewElection(s, n.electionPrefix())
	if err := e.Campaign(ctx, n.value()); err != nil {
		closeSession(s)
		return nil, fmt.Errorf("ha: node %s: campaign: %w", n.name, err)
	}
	l := &Leadership{Node: n.name, Epoch: uint64(e.Rev()), key: e.Key(), session: s, elect: e}
	// Campaign also returns when this node's own key vanished while it
	// waited (its lease expired): check that the key is there and first,
	// with a linearizable read, before claiming the term.
	ok, err := n.leads(ctx, l)
	if err != nil || !ok {
		closeSession(s)
		return nil, err
	}
	return l, nil
}

// transient reports whether a failure of the store may pass by itself:
// its leader changed or is being elected, or it is briefly unhealthy.
// A candidate campaigns again after one.
func transient(err error) bool {
	return retryable(err) || errors.Is(err, rpctypes.ErrUnhealthy)
}

// leads reports whether l's key is still the first of the election.
func (n *Node) leads(ctx context.Context, l *Leadership) (bool, error) {
	r, err := n.cli.Get(ctx, n.electionPrefix(), clientv3.WithFirstCreate()...)
	if err != nil {
		return false, fmt.Errorf("ha: node %s: reading the leader: %w", n.name, err)
	}
	return len(r.Kvs) == 1 && string(r.Kvs[0].Key) == l.key && uint64(r.Kvs[0].CreateRevision) == l.Epoch, nil
}

// Check asks the store, with a linearizable read, whether l still holds:
// nil if so, ErrDeposed if not. The log's appends check the same in their
// own transaction; Check is for what is not an append.
func (n *Node) Check(ctx context.Context, l *Leadership) error {
	ok, err := n.leads(ctx, l)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: term %d of %s ended", ErrDeposed, l.Epoch, l.Node)
	}
	return nil
}

// LeaderInfo is what a term publishes: the node, where it serves
// clients, and the term's epoch.
type LeaderInfo struct {
	Node    string `json:"node"`
	Address string `json:"address,omitempty"`
	Epoch   uint64 `json:"-"`
}

// value is the leader key's value for this node.
func (n *Node) value() string {
	b, _ := json.Marshal(LeaderInfo{Node: n.name, Address: n.addr}) // cannot fail
	return string(b)
}

// leaderInfo decodes a leader key.
func leaderInfo(kv *mvccpb.KeyValue) (LeaderInfo, error) {
	var li LeaderInfo
	if err := json.Unmarshal(kv.Value, &li); err != nil || li.Node == "" {
		return LeaderInfo{}, fmt.Errorf("ha: the leader key %s holds %q, not a node", kv.Key, kv.Value)
	}
	li.Epoch = uint64(kv.CreateRevision)
	return li, nil
}

// Leader returns the leading node and its epoch (ErrNoLeader when no node
// leads), as a linearizable read sees it.
func (n *Node) Leader(ctx context.Context) (LeaderInfo, error) {
	r, err := n.cli.Get(ctx, n.electionPrefix(), clientv3.WithFirstCreate()...)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("ha: reading the leader: %w", err)
	}
	if len(r.Kvs) == 0 {
		return LeaderInfo{}, ErrNoLeader
	}
	return leaderInfo(r.Kvs[0])
}

// Observe sends the leader each time it changes, the current one first
// (LeaderInfo{} while none leads), until ctx ends; then the channel
// closes. A standby uses it to name, or forward clients to, the leader.
// Terms that follow each other quickly may be skipped; the latest is
// always sent. A failed read or watch is retried until ctx ends.
func (n *Node) Observe(ctx context.Context) <-chan LeaderInfo {
	out := make(chan LeaderInfo)
	go func() {
		defer close(out)
		last, sent := LeaderInfo{}, false
		for ctx.Err() == nil {
			wctx, cancel := context.WithCancel(ctx)
			r, err := n.cli.Get(wctx, n.electionPrefix(), clientv3.WithFirstCreate()...)
			if err == nil {
				var li LeaderInfo
				if len(r.Kvs) > 0 {
					li, err = leaderInfo(r.Kvs[0])
				}
				if err == nil && (!sent || li != last) {
					select {
					case out <- li:
						last, sent = li, true
					case <-ctx.Done():
					}
				}
			}
			if err == nil {
				// Any change under the prefix may change the first key:
				// wait for one, then read again.
				w := n.cli.Watch(wctx, n.electionPrefix(), clientv3.WithPrefix(), clientv3.WithRev(r.Header.Revision+1))
				wr, ok := <-w
				if ok && wr.Err() != nil {
					err = wr.Err()
				}
			}
			cancel()
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(250 * time.Millisecond):
				}
			}
		}
	}()
	return out
}

// Lost closes when the term's lease is no longer renewed: it expired,
// was revoked, or the term was resigned. A node whose Lost closed must
// stop committing; the store refuses its appends anyway (ErrDeposed),
// and may have done so before Lost closes, since the store's clock, not
// this node's, ends the lease.
func (l *Leadership) Lost() <-chan struct{} { return l.session.Done() }

// guard is the comparison that holds exactly while the term does: the
// leader key exists with the term's create revision. Every write of the
// leader carries it in the same etcd transaction.
func (l *Leadership) guard() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", int64(l.Epoch))
}

// Resign ends the term: the leader key is deleted and the lease revoked,
// so a standby takes over at once instead of after the lease.
func (l *Leadership) Resign(ctx context.Context) error {
	err := l.elect.Resign(ctx)
	closeSession(l.session)
	return err
}

// Abandon stops renewing the lease without deleting anything, as a
// crashed node would: the term ends when the store lets the lease
// expire. For tests and for a node that cannot reach the store.
func (l *Leadership) Abandon() { l.session.Orphan() }

// closeSession revokes a session's lease, bounded by the lease itself
// (Close does that).
func closeSession(s *concurrency.Session) { _ = s.Close() }

// quietLogger is the etcd client's logger: shepherd reports the errors
// the client returns, and the client's own chatter about reconnecting
// would only repeat them.
func quietLogger() *zap.Logger { return zap.NewNop() }
