package config

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Cluster is the [cluster] table: several shepherd nodes serving one set
// of replicas, one active and the others standing by, coordinated through
// etcd (package ha, docs/DESIGN.md "Standby shepherds"). Without the
// table (Node "") shepherd is the single node it always was, with its
// local write-ahead log.
type Cluster struct {
	// Node is this node's name, unique among the nodes; it names the
	// leader to operators and, with embedded members, this node's member.
	Node string `toml:"node"`
	// Lease is how long the active node's lease lasts without renewal,
	// and so about how long after its death a standby takes over: a
	// duration of whole seconds, at least 2s; "" means DefaultClusterLease.
	Lease string `toml:"lease"`
	// Prefix is the etcd key prefix of this shepherd cluster, so that
	// several can share one etcd; "" means "/shepherd/".
	Prefix string `toml:"prefix"`
	// Endpoints are the client URLs of an external etcd cluster
	// ("http://10.0.0.1:2379"). Give these or Members, not both.
	Endpoints []string `toml:"endpoints"`
	// Members are the etcd members the nodes run in process, one per
	// node, the same list on every node; this node runs the one named
	// Node, with its data under data_dir/etcd.
	Members []ClusterMember `toml:"members"`
}

// ClusterMember is one [[cluster.members]] entry: an etcd member run
// inside a shepherd node.
type ClusterMember struct {
	// Name is the member's name, the name of the node that runs it.
	Name string `toml:"name"`
	// PeerURL is where the member listens for the other members.
	PeerURL string `toml:"peer_url"`
	// ClientURL is where it listens for the nodes' clients.
	ClientURL string `toml:"client_url"`
}

// DefaultClusterLease is cluster.lease when unset: a standby takes over
// within about 3 s of the active node's death (plus an etcd election when
// its etcd member was the etcd leader).
const DefaultClusterLease = 3 * time.Second

// Enabled reports whether the [cluster] table asks for several nodes.
func (c Cluster) Enabled() bool { return c.Node != "" }

// LeaseDuration returns cluster.lease with its default applied.
func (c Cluster) LeaseDuration() (time.Duration, error) {
	if c.Lease == "" {
		return DefaultClusterLease, nil
	}
	d, err := time.ParseDuration(c.Lease)
	if err != nil || d < 2*time.Second || d != time.Duration(math.Round(d.Seconds()))*time.Second {
		return 0, fieldErr("cluster.lease", "%q is not a duration of whole seconds, at least 2s (etcd grants leases in seconds)", c.Lease)
	}
	return d, nil
}

// nodeName is what a node and member name may be: etcd takes any
// string, but a name operators type in connection checks and logs is
// better plain.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// inProcessDrivers are the drivers whose replica lives inside the
// shepherd process (a file it opens): no other node can reach it.
var inProcessDrivers = []string{"sqlite", "sqlite-cgo", "duckdb"}

// checkCluster validates the [cluster] table.
func (c *Config) checkCluster() error {
	cl := c.Cluster
	if !cl.Enabled() {
		if cl.Lease != "" || cl.Prefix != "" || len(cl.Endpoints) > 0 || len(cl.Members) > 0 {
			return fieldErr("cluster.node", "missing: a [cluster] table needs this node's name")
		}
		return nil
	}
	if !nodeName.MatchString(cl.Node) {
		return fieldErr("cluster.node", "%q is not a name of letters, digits, '.', '_' and '-' (at most 63)", cl.Node)
	}
	if _, err := cl.LeaseDuration(); err != nil {
		return err
	}
	if cl.Prefix != "" && !strings.HasPrefix(cl.Prefix, "/") {
		return fieldErr("cluster.prefix", "%q does not start with /", cl.Prefix)
	}
	switch {
	case len(cl.Endpoints) > 0 && len(cl.Members) > 0:
		return fieldErr("cluster.endpoints", "give either endpoints (an external etcd) or [[cluster.members]] (etcd members the nodes run), not both")
	case len(cl.Endpoints) == 0 && len(cl.Members) == 0:
		return fieldErr("cluster.members", "missing: give [[cluster.members]] (etcd members the nodes run) or endpoints (an external etcd)")
	}
	urls := map[string]string{}
	seenURL := func(field, u string) error {
		if err := checkClusterURL(u); err != nil {
			return fieldErr(field, "%v", err)
		}
		if prev, ok := urls[u]; ok {
			return fieldErr(field, "%q is also %s", u, prev)
		}
		urls[u] = field
		return nil
	}
	for i, e := range cl.Endpoints {
		if err := seenURL(fmt.Sprintf("cluster.endpoints[%d]", i), e); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for i, m := range cl.Members {
		p := fmt.Sprintf("cluster.members[%d]", i)
		switch {
		case m.Name == "":
			return fieldErr(p+".name", "missing")
		case !nodeName.MatchString(m.Name):
			return fieldErr(p+".name", "%q is not a name of letters, digits, '.', '_' and '-' (at most 63)", m.Name)
		case names[m.Name]:
			return fieldErr(p+".name", "member %q listed twice", m.Name)
		}
		names[m.Name] = true
		if err := seenURL(p+".peer_url", m.PeerURL); err != nil {
			return err
		}
		if err := seenURL(p+".client_url", m.ClientURL); err != nil {
			return err
		}
	}
	if len(cl.Members) > 0 && !names[cl.Node] {
		return fieldErr("cluster.node", "%q is not among [[cluster.members]]: each node runs the member of its name", cl.Node)
	}
	for i, r := range c.Replicas {
		if slices.Contains(inProcessDrivers, r.Driver) {
			return fieldErr(fmt.Sprintf("replicas[%d].driver", i),
				"a %s replica lives inside one shepherd process, which the other nodes of a [cluster] cannot reach; use replicas every node reaches (postgres, mysql)", r.Driver)
		}
	}
	return nil
}

// checkClusterURL accepts http(s)://host:port, the form etcd listens on
// and dials.
func checkClusterURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Port() == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an http(s)://host:port URL", s)
	}
	return nil
}
