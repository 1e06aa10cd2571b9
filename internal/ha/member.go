package ha

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Peer is one member of an etcd cluster whose members shepherd nodes run
// in process: its name and the URLs it listens on, for the other members
// (PeerURL) and for clients (ClientURL).
type Peer struct {
	Name      string
	PeerURL   string
	ClientURL string
}

// MemberConfig says how to start this node's etcd member.
type MemberConfig struct {
	// Name is this member's name; it must be one of Peers.
	Name string
	// Dir is the member's data directory. A directory that already holds
	// a member's data restarts that member (its cluster is taken from the
	// data, Peers only say where to listen); an empty one bootstraps a new
	// cluster from Peers.
	Dir string
	// Peers are every member of the cluster, this one included, the same
	// list on every node.
	Peers []Peer
	// Join says the member joins a running cluster that already knows it
	// (AddMember); Peers then are the running members and this one. A
	// member restarting from its Dir needs neither: its data say which
	// cluster it is in.
	Join bool
	// Token distinguishes clusters bootstrapped from the same peer list
	// (etcd's initial-cluster-token); "" means "shepherd".
	Token string
	// LogLevel is etcd's own log level (debug, info, warn, error); ""
	// means error: shepherd logs what matters to it itself.
	LogLevel string
	// StartTimeout bounds the wait for the member to join its cluster; 0
	// means one minute. A new cluster needs a majority of its members
	// started before any of them is ready.
	StartTimeout time.Duration
}

// MaxRequestBytes is the largest request an embedded member accepts, and
// so, less the keys and the guard, the most one append of records may
// carry. etcd's default is 1.5 MiB; its documentation advises against
// more than 10 MiB.
const MaxRequestBytes = 10 << 20

// Member is an etcd member running in this process.
type Member struct {
	etcd *embed.Etcd
	cfg  MemberConfig
}

// StartMember starts this node's etcd member and waits until it serves
// clients, which for a new cluster means a majority of the members are
// up (ErrMemberStart wrapping the cause otherwise).
func StartMember(cfg MemberConfig) (*Member, error) {
	self, err := checkPeers(cfg.Name, cfg.Peers)
	if err != nil {
		return nil, err
	}
	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = cfg.Dir
	pu, _ := url.Parse(self.PeerURL) // checkPeers parsed them
	cu, _ := url.Parse(self.ClientURL)
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	var initial []string
	for _, p := range cfg.Peers {
		initial = append(initial, p.Name+"="+p.PeerURL)
	}
	ec.InitialCluster = strings.Join(initial, ",")
	ec.InitialClusterToken = cfg.Token
	if ec.InitialClusterToken == "" {
		ec.InitialClusterToken = "shepherd"
	}
	ec.ClusterState = embed.ClusterStateFlagNew
	if cfg.Join {
		ec.ClusterState = embed.ClusterStateFlagExisting
	}
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "error"
	}
	ec.LogOutputs = []string{"stderr"}
	ec.MaxRequestBytes = MaxRequestBytes
	// The replicated log deletes what every replica applied; etcd keeps
	// old revisions until compacted, so compact them away regularly.
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = "5m"
	ec.ListenMetricsUrls = nil
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("%w: member %s: %w", ErrMemberStart, cfg.Name, err)
	}
	wait := cfg.StartTimeout
	if wait <= 0 {
		wait = time.Minute
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return &Member{etcd: e, cfg: cfg}, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("%w: member %s: %w", ErrMemberStart, cfg.Name, err)
	case <-t.C:
		e.Close()
		return nil, fmt.Errorf("%w: member %s: not ready after %v (is a majority of %d members started?)",
			ErrMemberStart, cfg.Name, wait, len(cfg.Peers))
	}
}

// ErrMemberStart is wrapped by StartMember's failures.
var ErrMemberStart = errors.New("ha: the etcd member did not start")

// Name is the member's name.
func (m *Member) Name() string { return m.cfg.Name }

// ClientURL is where the member serves clients.
func (m *Member) ClientURL() string {
	for _, p := range m.cfg.Peers {
		if p.Name == m.cfg.Name {
			return p.ClientURL
		}
	}
	return ""
}

// Err reports a failure of the running member (its listeners failed).
func (m *Member) Err() <-chan error { return m.etcd.Err() }

// Close stops the member: it leaves the cluster's quorum (not its
// membership) until started again from the same directory.
func (m *Member) Close() { m.etcd.Close() }

// checkPeers checks a peer list and returns the entry named self.
func checkPeers(self string, peers []Peer) (Peer, error) {
	var me Peer
	seen := map[string]bool{}
	for i, p := range peers {
		if p.Name == "" {
			return Peer{}, fmt.Errorf("ha: peer %d has no name", i)
		}
		if seen[p.Name] {
			return Peer{}, fmt.Errorf("ha: peer %q listed twice", p.Name)
		}
		seen[p.Name] = true
		for _, u := range []string{p.PeerURL, p.ClientURL} {
			if err := checkURL(u); err != nil {
				return Peer{}, fmt.Errorf("ha: peer %q: %w", p.Name, err)
			}
		}
		if p.Name == self {
			me = p
		}
	}
	if me.Name == "" {
		return Peer{}, fmt.Errorf("ha: this member %q is not among the peers", self)
	}
	return me, nil
}

// checkURL accepts http or https URLs of a host and a port, the form etcd
// listens on and dials.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Port() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q is not an http(s)://host:port URL", s)
	}
	return nil
}

// Connect returns a client of the etcd cluster at endpoints (client
// URLs of some or all of its members; embedded or external alike). It
// checks that the cluster answers within timeout (0: five seconds) before
// it returns: a linearizable read needs its quorum.
func Connect(ctx context.Context, endpoints []string, timeout time.Duration) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("ha: no etcd endpoints")
	}
	for _, e := range endpoints {
		if err := checkURL(e); err != nil {
			return nil, fmt.Errorf("ha: endpoint: %w", err)
		}
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: timeout,
		// Without keepalives a client whose member vanished notices only
		// when a request times out.
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: timeout,
		Logger:               quietLogger(),
	})
	if err != nil {
		return nil, fmt.Errorf("ha: connecting to %s: %w", strings.Join(endpoints, ","), err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := cli.Get(cctx, "health"); err != nil {
		cli.Close()
		return nil, fmt.Errorf("ha: etcd at %s does not answer: %w", strings.Join(endpoints, ","), err)
	}
	return cli, nil
}

// AddMember tells the cluster that cli reaches about a new member, which
// may then start with MemberConfig.Join. Until it has started, the
// cluster counts it in its quorum: add one member at a time, and start
// it before adding the next. etcd refuses the change while a member has
// only just (re)connected, since the quorum would then hang on it; that
// refusal is retried until ctx ends.
func AddMember(ctx context.Context, cli *clientv3.Client, p Peer) error {
	if err := checkURL(p.PeerURL); err != nil {
		return fmt.Errorf("ha: adding member %s: %w", p.Name, err)
	}
	for {
		_, err := cli.MemberAdd(ctx, []string{p.PeerURL})
		if err == nil {
			return nil
		}
		if !errors.Is(err, rpctypes.ErrUnhealthy) {
			return fmt.Errorf("ha: adding member %s: %w", p.Name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ha: adding member %s: %w (%w)", p.Name, err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// RemoveMember removes the member named name from the cluster that cli
// reaches (the member's process should be stopped after; a running
// removed member stops serving by itself). A member that answers for its
// own removal may stop before its answer is sent: the removal is then
// confirmed from the member list, through the others.
func RemoveMember(ctx context.Context, cli *clientv3.Client, name string) error {
	id, found, err := memberID(ctx, cli, name)
	if err != nil {
		return fmt.Errorf("ha: removing member %s: %w", name, err)
	}
	if !found {
		return fmt.Errorf("ha: removing member %s: no member of that name", name)
	}
	for {
		_, err := cli.MemberRemove(ctx, id)
		if err == nil || errors.Is(err, rpctypes.ErrMemberNotFound) {
			return nil
		}
		if !transient(err) && !errors.Is(err, rpctypes.ErrStopped) {
			return fmt.Errorf("ha: removing member %s: %w", name, err)
		}
		if _, still, lerr := memberID(ctx, cli, name); lerr == nil && !still {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ha: removing member %s: %w (%w)", name, err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// memberID finds a member by name.
func memberID(ctx context.Context, cli *clientv3.Client, name string) (id uint64, found bool, err error) {
	r, err := cli.MemberList(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, m := range r.Members {
		if m.Name == name {
			return m.ID, true, nil
		}
	}
	return 0, false, nil
}

// Members lists the members of the cluster that cli reaches, by name
// (empty for a member added but not yet started), in the store's order.
func Members(ctx context.Context, cli *clientv3.Client) ([]Peer, error) {
	r, err := cli.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("ha: listing members: %w", err)
	}
	out := make([]Peer, 0, len(r.Members))
	for _, m := range r.Members {
		p := Peer{Name: m.Name}
		if len(m.PeerURLs) > 0 {
			p.PeerURL = m.PeerURLs[0]
		}
		if len(m.ClientURLs) > 0 {
			p.ClientURL = m.ClientURLs[0]
		}
		out = append(out, p)
	}
	return out, nil
}
