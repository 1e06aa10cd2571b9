package config

import (
	"strings"
	"testing"
	"time"
)

// clusterBase is good without its SQLite replica (no node of a cluster
// could reach it) and with f = 0, so that two replicas suffice.
var clusterBase = strings.Replace(strings.Replace(good, "f = 1", "f = 0", 1),
	"[[replicas]]\nname = \"lite\"\ndriver = \"sqlite\"\ndsn = \"lite.db\"\nschedule = \"sequential\"\n", "", 1)

const clusterMembers = `
[cluster]
node = "a"
lease = "4s"
[[cluster.members]]
name = "a"
peer_url = "http://10.0.0.1:2380"
client_url = "http://10.0.0.1:2379"
[[cluster.members]]
name = "b"
peer_url = "http://10.0.0.2:2380"
client_url = "http://10.0.0.2:2379"
[[cluster.members]]
name = "c"
peer_url = "https://10.0.0.3:2380"
client_url = "https://10.0.0.3:2379"
`

const clusterExternal = `
[cluster]
node = "b"
prefix = "/shop/"
endpoints = ["http://etcd1:2379", "http://etcd2:2379", "http://etcd3:2379"]
`

func TestClusterGood(t *testing.T) {
	c, err := Parse(good, drivers)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Enabled() || Embedded().Cluster.Enabled() {
		t.Fatal("cluster on without a [cluster] table")
	}
	c, err = Parse(clusterBase+clusterMembers, drivers)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := c.Cluster.LeaseDuration()
	if !c.Cluster.Enabled() || c.Cluster.Node != "a" || len(c.Cluster.Members) != 3 || lease != 4*time.Second || err != nil ||
		c.Cluster.Members[2] != (ClusterMember{Name: "c", PeerURL: "https://10.0.0.3:2380", ClientURL: "https://10.0.0.3:2379"}) {
		t.Fatalf("parsed %+v, lease %v %v", c.Cluster, lease, err)
	}
	c, err = Parse(clusterBase+clusterExternal, drivers)
	if err != nil {
		t.Fatal(err)
	}
	lease, err = c.Cluster.LeaseDuration()
	if c.Cluster.Node != "b" || len(c.Cluster.Endpoints) != 3 || c.Cluster.Prefix != "/shop/" || lease != DefaultClusterLease || err != nil {
		t.Fatalf("parsed %+v, lease %v %v", c.Cluster, lease, err)
	}
}

// TestClusterBad: each mistake in [cluster] is refused with an error
// naming the field.
func TestClusterBad(t *testing.T) {
	m := func(old, new string) string { return clusterBase + strings.Replace(clusterMembers, old, new, 1) }
	x := func(old, new string) string { return clusterBase + strings.Replace(clusterExternal, old, new, 1) }
	for field, text := range map[string]string{
		"cluster.node":                    m(`node = "a"`, ``),
		"cluster.node ":                   m(`node = "a"`, `node = "z"`),
		"cluster.node  ":                  m(`node = "a"`, `node = "a b"`),
		"cluster.lease":                   m(`lease = "4s"`, `lease = "1s"`),
		"cluster.lease ":                  m(`lease = "4s"`, `lease = "2500ms"`),
		"cluster.lease  ":                 m(`lease = "4s"`, `lease = "soon"`),
		"cluster.prefix":                  x(`prefix = "/shop/"`, `prefix = "shop"`),
		"cluster.endpoints":               clusterBase + clusterExternal + "[[cluster.members]]\nname = \"b\"\npeer_url = \"http://b:2380\"\nclient_url = \"http://b:2379\"\n",
		"cluster.members":                 x(`endpoints = ["http://etcd1:2379", "http://etcd2:2379", "http://etcd3:2379"]`, ``),
		"cluster.endpoints[1]":            x(`"http://etcd2:2379"`, `"etcd2:2379"`),
		"cluster.endpoints[2]":            x(`"http://etcd3:2379"`, `"http://etcd1:2379"`),
		"cluster.endpoints[0]":            x(`"http://etcd1:2379"`, `"http://etcd1"`),
		"cluster.members[1].name":         m(`name = "b"`, `name = "a"`),
		"cluster.members[1].name ":        m(`name = "b"`, `name = ""`),
		"cluster.members[0].peer_url":     m(`peer_url = "http://10.0.0.1:2380"`, `peer_url = "tcp://10.0.0.1:2380"`),
		"cluster.members[1].client_url":   m(`client_url = "http://10.0.0.2:2379"`, `client_url = "http://10.0.0.1:2379"`),
		"cluster.members[2].client_url":   m(`client_url = "https://10.0.0.3:2379"`, `client_url = "https://10.0.0.3:2379/x"`),
		"cluster.members.peer_urls":       m(`peer_url = "http://10.0.0.1:2380"`, `peer_urls = "http://10.0.0.1:2380"`),
		"cluster.lease   ":                m(`lease = "4s"`, `lease = 4`),
		"replicas[2].driver":              good + clusterMembers,
		"cluster.node   (table w/o node)": clusterBase + "\n[cluster]\nlease = \"3s\"\n",
	} {
		_, err := Parse(text, drivers)
		if err == nil {
			t.Errorf("%s: no error", field)
			continue
		}
		want := strings.Fields(field)[0]
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not name it", field, err)
		}
	}
}
