package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// clusterTestNode is one shepherd node of TestClusterTakeover, run in
// this process: Open waits while the node stands by (refusing clients on
// its address itself), and Serve listens once it leads.
type clusterTestNode struct {
	name   string
	addr   string
	cancel context.CancelFunc
	led    chan struct{} // closed once Open returned: the node leads
	done   chan error    // Open's or Serve's error once it stopped
}

// TestClusterTakeover: three shepherd nodes, each with an etcd member in
// process, over MariaDB and two PostgreSQL databases that live outside
// them. A standby refuses clients with 57P03 naming the leader. A client with a multi-host connection string (libpq's form,
// target_session_attrs=read-write) commits through the leader; the leader
// is stopped; the client's next connection reaches the new leader, which
// took over from the replicated log, and sees every acknowledged commit,
// then commits more. The replicas' fence is not run yet, so the server
// serves [cluster] here only through unfencedCluster.
func TestClusterTakeover(t *testing.T) {
	unfencedCluster = true
	t.Cleanup(func() { unfencedCluster = false })
	replicas := []config.Replica{
		{Name: "maria", Driver: "mysql", DSN: testenv.MariaDB(t)},
		{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
		{Name: "pg2", Driver: "postgres", DSN: testenv.Postgres(t)},
	}
	var members []config.ClusterMember
	names := []string{"a", "b", "c"}
	for _, n := range names {
		members = append(members, config.ClusterMember{Name: n,
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))})
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var nodes []*clusterTestNode
	var hosts, ports []string
	for _, name := range names {
		port := freePort(t)
		n := &clusterTestNode{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), led: make(chan struct{}), done: make(chan error, 1)}
		hosts, ports = append(hosts, "127.0.0.1"), append(ports, fmt.Sprint(port))
		cfg := &config.Config{Listen: n.addr, DataDir: filepath.Join(t.TempDir(), name), Mode: "cbs", F: 1, Replicas: replicas,
			Cluster: config.Cluster{Node: name, Lease: "2s", Members: members}}
		if err := cfg.Check(driver.Names()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		n.cancel = cancel
		go func() {
			srv, err := Open(ctx, cfg, log.With("node", name))
			if err != nil {
				n.done <- err
				return
			}
			close(n.led)
			ln, err := net.Listen("tcp", n.addr)
			if err != nil {
				srv.closeAll()
				n.done <- err
				return
			}
			n.done <- srv.Serve(ctx, ln)
		}()
		nodes = append(nodes, n)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.cancel()
		}
		for _, n := range nodes {
			<-n.done
		}
	})
	dsn := fmt.Sprintf("host=%s port=%s user=app dbname=app sslmode=disable target_session_attrs=read-write connect_timeout=5",
		strings.Join(hosts, ","), strings.Join(ports, ","))

	// leader waits for one node among those not yet stopped to lead.
	stopped := map[*clusterTestNode]bool{}
	leader := func() *clusterTestNode {
		t.Helper()
		deadline := time.After(2 * time.Minute)
		for {
			for _, n := range nodes {
				if stopped[n] {
					continue
				}
				select {
				case <-n.led:
					return n
				case err := <-n.done:
					t.Fatalf("node %s stopped: %v", n.name, err)
				default:
				}
			}
			select {
			case <-time.After(20 * time.Millisecond): // poll the nodes again
			case <-deadline:
				t.Fatal("no node leads after 2 minutes")
			}
		}
	}
	// connectAny connects through the multi-host string, retrying while
	// the leader has not started listening yet.
	connectAny := func(want *clusterTestNode) *pgx.Conn {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, err := pgx.Connect(ctx, dsn)
			cancel()
			if err == nil {
				if got := c.PgConn().Conn().RemoteAddr().String(); got != want.addr {
					t.Fatalf("connected to %s, want the leader %s at %s", got, want.name, want.addr)
				}
				t.Cleanup(func() { c.Close(context.Background()) })
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("connecting through %q: %v", dsn, err)
			}
			time.Sleep(50 * time.Millisecond) // the leader's listener comes up after Open
		}
	}
	ctx := context.Background()

	first := leader()
	c := connectAny(first)
	// A standby refuses, before authentication, with PostgreSQL's 57P03,
	// naming the leader: what the multi-host string moved on from.
	for _, n := range nodes {
		if n != first {
			checkStandbyRefuses(t, n, first)
		}
	}
	mustExec(t, c, "CREATE TABLE acked (id int PRIMARY KEY, v text NOT NULL)")
	const n1 = 50
	for i := 1; i <= n1; i++ {
		mustExec(t, c, fmt.Sprintf("INSERT INTO acked VALUES (%d, 'v%d')", i, i))
	}
	c.Close(ctx)

	// Stop the leader: it resigns, and a standby takes over.
	first.cancel()
	if err := <-first.done; err != nil {
		t.Fatalf("stopping leader %s: %v", first.name, err)
	}
	first.done <- nil // for the cleanup
	stopped[first] = true

	second := leader()
	if second == first {
		t.Fatal("the stopped node leads again")
	}
	c = connectAny(second)
	checkAcked(t, c, n1)
	for i := n1 + 1; i <= 2*n1; i++ {
		mustExec(t, c, fmt.Sprintf("INSERT INTO acked VALUES (%d, 'v%d')", i, i))
	}
	checkAcked(t, c, 2*n1)
	// A created database would need a log and a term of its own.
	if _, err := c.Exec(ctx, "CREATE DATABASE other"); sqlstate(err) != "0A000" {
		t.Fatalf("CREATE DATABASE on a cluster node: %v, want 0A000", err)
	}
}

// checkAcked checks that acked holds exactly rows 1..n.
func checkAcked(t *testing.T, c *pgx.Conn, n int) {
	t.Helper()
	var count, sum int
	if err := c.QueryRow(context.Background(), "SELECT count(*), coalesce(sum(id), 0) FROM acked").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != n*(n+1)/2 {
		t.Fatalf("acked holds %d rows summing %d, want %d summing %d", count, sum, n, n*(n+1)/2)
	}
}

// checkStandbyRefuses connects to standby alone (retrying while its
// listener is not up yet) and expects 57P03 naming leader.
func checkStandbyRefuses(t *testing.T, standby, leader *clusterTestNode) {
	t.Helper()
	host, port, _ := net.SplitHostPort(standby.addr)
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=app dbname=app sslmode=disable", host, port))
		cancel()
		if err == nil {
			c.Close(context.Background())
			t.Fatalf("standby %s accepted a client", standby.name)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			want := fmt.Sprintf("the leader is %s at %s", leader.name, leader.addr)
			if pe.Code != "57P03" || !strings.Contains(pe.Detail, want) {
				t.Fatalf("standby %s: %v (detail %q), want 57P03 saying %q", standby.name, err, pe.Detail, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby %s: %v, want 57P03", standby.name, err)
		}
		time.Sleep(50 * time.Millisecond) // its listener comes up once its member has
	}
}
