package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/ha"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// unfencedCluster lets open serve a [cluster] table although the
// replicas' fence (docs/DESIGN.md section 9, "Left for the wiring") is
// not run yet: a leader partitioned from the store may still commit on
// the replicas after its successor's first commit. Only tests set it;
// without it a [cluster] table is refused at start, naming why.
var unfencedCluster = false

// clusterNode is this server's part in a [cluster]: its etcd member (with
// [[cluster.members]]), its client of the store, and the term it leads.
type clusterNode struct {
	member *ha.Member
	cli    *clientv3.Client
	node   *ha.Node
	lead   *ha.Leadership
	log    *ha.Log
	// maxRecord is the largest record one append to the store carries.
	maxRecord int
}

// recordSlack is what a record's etcd request carries besides the record.
const recordSlack = 64 << 10

// joinCluster starts this node's etcd member (or connects to the external
// endpoints), campaigns, and returns once this node leads: a standby
// waits here until the leader's term ends (or ctx does), refusing the
// clients that connect to its listen address (refuseClients). It returns the term's log, opened, and every record in it, from
// which open recovers the replicas as a restart recovers them from the
// local log.
func joinCluster(ctx context.Context, cfg *config.Config, log *slog.Logger) (*clusterNode, []wal.Record, error) {
	cl := cfg.Cluster
	n := &clusterNode{maxRecord: 3 << 19}
	endpoints := cl.Endpoints
	if len(cl.Members) > 0 {
		var peers []ha.Peer
		for _, m := range cl.Members {
			peers = append(peers, ha.Peer{Name: m.Name, PeerURL: m.PeerURL, ClientURL: m.ClientURL})
			endpoints = append(endpoints, m.ClientURL)
		}
		m, err := ha.StartMember(ha.MemberConfig{Name: cl.Node, Dir: filepath.Join(cfg.DataDir, "etcd"), Peers: peers})
		if err != nil {
			return nil, nil, &config.Error{Field: "cluster.members", Msg: err.Error()}
		}
		n.member, n.maxRecord = m, ha.MaxRequestBytes
	}
	fail := func(field string, err error) (*clusterNode, []wal.Record, error) {
		n.close(log)
		return nil, nil, &config.Error{Field: field, Msg: err.Error()}
	}
	cli, err := ha.Connect(ctx, endpoints, 0)
	if err != nil {
		return fail("cluster", err)
	}
	n.cli = cli
	lease, _ := cl.LeaseDuration() // checked by cfg.Check
	if n.node, err = ha.NewNode(cli, ha.Options{Name: cl.Node, Prefix: cl.Prefix, Lease: lease, Address: cfg.Listen}); err != nil {
		return fail("cluster", err)
	}
	stopRefusing, err := refuseClients(ctx, cfg, n.node, log)
	if err != nil {
		return fail("listen", err)
	}
	log.Info("standing by: campaigning for leadership", "node", cl.Node)
	n.lead, err = n.node.Campaign(ctx)
	stopRefusing()
	if err != nil {
		return fail("cluster", fmt.Errorf("campaigning: %w", err))
	}
	log.Info("leading the cluster", "node", cl.Node, "epoch", n.lead.Epoch)
	go func(l *ha.Leadership) {
		<-l.Lost()
		log.Error("the lease of this node's term is no longer renewed: its log takes no more commits", "epoch", l.Epoch)
	}(n.lead)
	opts := ha.LogOptions{MaxRequestBytes: n.maxRecord}
	if n.log, err = n.node.OpenLog(ctx, n.lead, opts); err != nil {
		return fail("cluster", err)
	}
	records, err := n.node.ReadLog(ctx, 0)
	if err != nil {
		return fail("cluster", err)
	}
	return n, records, nil
}

// close closes the term's log, resigns the term (so that a standby takes
// over at once rather than after the lease), and stops the member.
func (n *clusterNode) close(log *slog.Logger) {
	if n == nil {
		return
	}
	if n.log != nil {
		n.log.Close()
	}
	if n.lead != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := n.lead.Resign(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("resigning the cluster's leadership", "err", err)
		}
		cancel()
	}
	if n.cli != nil {
		n.cli.Close()
	}
	if n.member != nil {
		n.member.Close()
	}
}

// refuseClients listens on cfg.Listen while this node stands by and
// refuses every client before authentication with 57P03, as PostgreSQL
// refuses connections it cannot serve, naming the leader when the store
// tells it: libpq's and pgx's multi-host connection strings move on to
// the next host. stop closes the listener (and waits for it), so that
// the leader's own listener can take the address.
func refuseClients(ctx context.Context, cfg *config.Config, node *ha.Node, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	tlsConfig, _ := cfg.TLS.Config() // checked by cfg.Check
	refuse := func() error { return standbyRefusal(ctx, node) }
	front := &pgwire.Server{Handler: standbyHandler(refuse), Logger: log, TLS: tlsConfig, Admit: refuse}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := front.Serve(sctx, ln); err != nil {
			ln.Close()
			log.Warn("standby listener stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// standbyRefusal is what a standby tells a client: PostgreSQL's 57P03,
// with the leader in the detail when the store names one.
func standbyRefusal(ctx context.Context, node *ha.Node) error {
	e := pgerr.New(pgerr.CannotConnectNow, "the database system is not accepting connections")
	lctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if l, err := node.Leader(lctx); err == nil && l.Node != "" {
		e = e.WithDetail("This shepherd node (%s) is a standby; the leader is %s at %s.", node.Name(), l.Node, l.Address)
	} else {
		e = e.WithDetail("This shepherd node (%s) is a standby; no node leads now.", node.Name())
	}
	return e.WithHint("List every node in a multi-host connection string with target_session_attrs=read-write.").Fatal()
}

// standbyHandler opens no session: Admit refuses every client first.
type standbyHandler func() error

// NewSession implements pgwire.Handler.
func (h standbyHandler) NewSession(context.Context, pgwire.StartupInfo) (pgwire.Session, error) {
	return nil, h()
}
