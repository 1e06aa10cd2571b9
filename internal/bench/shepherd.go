package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/server"
)

// PGDialer returns a dialer of a PostgreSQL-wire URL: a shepherd, or a
// PostgreSQL server.
func PGDialer(url string) (Dialer, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return func(ctx context.Context) (Conn, error) {
		return pgx.ConnectConfig(ctx, cfg.Copy())
	}, nil
}

// Shepherd is a shepherd served in this process on a free loopback port.
type Shepherd struct {
	srv    *server.Server
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// StartShepherd opens cfg and serves it on 127.0.0.1 at a free port,
// ignoring cfg.Listen. log may be nil (nothing is logged).
func StartShepherd(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Shepherd, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Check(driver.Names()); err != nil {
		return nil, err
	}
	if err := server.Check(cfg); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	srv, err := server.Open(ctx, cfg, log)
	if err != nil {
		cancel()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, err
	}
	s := &Shepherd{srv: srv, addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ctx, ln) }()
	return s, nil
}

// URL returns the URL clients connect to (database app).
func (s *Shepherd) URL() string {
	return "postgres://bench@" + s.addr + "/app?sslmode=disable"
}

// Dialer returns a dialer of the shepherd.
func (s *Shepherd) Dialer() Dialer {
	d, err := PGDialer(s.URL())
	if err != nil {
		panic(err) // the URL is ours
	}
	return d
}

// Idle waits until every replica has applied every committed transaction.
func (s *Shepherd) Idle(ctx context.Context) error { return s.srv.Cluster().Idle(ctx) }

// Replicas returns the replicas' state (roles, mismatches, re-runs).
func (s *Shepherd) Replicas() []cluster.ReplicaStatus { return s.srv.Cluster().Replicas() }

// Close stops the shepherd: it waits for trailing replicas, then closes
// them.
func (s *Shepherd) Close() error {
	s.cancel()
	err := <-s.done
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
