// Package server assembles shepherd from its parts: it opens the replicas
// named in the configuration, builds the cluster, and serves the
// PostgreSQL wire front, routing the database "shepherd" to the admin
// console and every other database to the replicated session.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/shepherd-db/shepherd/internal/admin"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	_ "github.com/shepherd-db/shepherd/internal/driver/all" // every driver
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/session"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// statementCacheSize bounds the analysed statements kept for reuse.
const statementCacheSize = 10_000

// Server is a running shepherd.
type Server struct {
	cfg     *config.Config
	log     *slog.Logger
	cluster *cluster.Cluster
	engines []driver.Engine
	cache   *sqlan.Cache
	front   *pgwire.Server
}

// Open opens every replica (checking each is reachable) and builds the
// cluster. Errors name the replica at fault.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
	}
	s := &Server{cfg: cfg, log: log, cache: sqlan.NewCache(statementCacheSize)}
	var reps []cluster.Replica
	for i, r := range cfg.Replicas {
		open, ok := driver.Lookup(r.Driver)
		if !ok {
			s.closeEngines()
			return nil, &config.Error{Field: fmt.Sprintf("replicas[%d].driver", i), Msg: fmt.Sprintf("unknown driver %q", r.Driver)}
		}
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			s.closeEngines()
			return nil, &config.Error{Field: fmt.Sprintf("replicas[%d] (%s)", i, r.Name), Msg: "cannot open: " + err.Error()}
		}
		s.engines = append(s.engines, e)
		reps = append(reps, cluster.Replica{Name: r.Name, Engine: e})
	}
	mode := coord.Serial
	if cfg.Mode == "passthrough" {
		mode = coord.Passthrough
	}
	s.cluster = cluster.New(cluster.Options{Mode: mode, F: cfg.F, Log: log}, reps)
	users := map[string]string{}
	for _, u := range cfg.Users {
		users[u.Name] = u.Password
	}
	s.front = &pgwire.Server{Handler: handler{s}, Users: users, Logger: log, ServerVersion: session.ServerVersion}
	return s, nil
}

// Cluster returns the cluster, for tests and the admin console.
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }

// Serve accepts clients on ln until ctx ends, then closes everything.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.close()
	err := s.front.Serve(ctx, ln)
	if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *Server) close() {
	s.cluster.Close()
	s.closeEngines()
}

func (s *Server) closeEngines() {
	for _, e := range s.engines {
		e.Close()
	}
	s.engines = nil
}

type handler struct{ s *Server }

// NewSession implements pgwire.Handler.
func (h handler) NewSession(ctx context.Context, info pgwire.StartupInfo) (pgwire.Session, error) {
	if info.Database == admin.Database {
		return admin.New(h.s.cluster), nil
	}
	return session.New(h.s.cluster, h.s.cache, info), nil
}
