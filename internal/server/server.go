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
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	_ "github.com/shepherd-db/shepherd/internal/driver/all" // every driver
	"github.com/shepherd-db/shepherd/internal/driver/fault"
	"github.com/shepherd-db/shepherd/internal/driver/mysql"
	"github.com/shepherd-db/shepherd/internal/metrics"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/repair"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/session"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// walOptions are the write-ahead log's options (tests shrink segments).
var walOptions = wal.Options{}

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
	wal     *wal.Log     // cbs and ss, one node
	node    *clusterNode // cbs and ss, a node of a [cluster] (node.go)
	repair  *repair.Service
	shared  *session.Shared // advisory locks
	dbs     *databases      // created databases (databases.go); nil in theirs

	// metrics are observed by the cluster and the log and exported on
	// metricsLn ([metrics] listen; nil: not served). live is the
	// configuration in force (cfg as reloaded, ops.go); runner runs the
	// background compare-and-repair; logging, when set, is the log a
	// reload changes.
	metrics   *metrics.Metrics
	metricsLn net.Listener
	live      atomic.Pointer[config.Config]
	reloadMu  sync.Mutex
	runner    repairRunner
	logging   *Logging
	// memLimit is the Go runtime's memory limit before Serve set
	// memory_limit_mb (see applyMemoryLimit); -1 while not serving.
	memLimit atomic.Int64
}

// open opens every replica (checking each is reachable) and builds the
// cluster of one database. Errors name the replica at fault.
func open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Server, error) {
	mode, ok := modes[cfg.Mode]
	if !ok {
		return nil, &config.Error{Field: "mode", Msg: fmt.Sprintf("unknown mode %q", cfg.Mode)}
	}
	if cfg.Cluster.Enabled() {
		// A node of a cluster (node.go) needs the log to take over, and
		// the replicas' fence to be safe against a deposed leader that
		// is only partitioned; until the fence runs (docs/DESIGN.md
		// section 9), a [cluster] table is refused rather than served
		// unsafely, and rather than ignored by a node that would then
		// run alone.
		switch {
		case !unfencedCluster:
			return nil, &config.Error{Field: "cluster", Msg: "standby nodes are not served yet (issue 19): the replicas' fence against a deposed leader is not run yet; remove the [cluster] table to run one node"}
		case mode != coord.CBS && mode != coord.SS:
			return nil, &config.Error{Field: "cluster", Msg: fmt.Sprintf("mode %s has no log of decided transactions to take over from: a [cluster] needs mode cbs or ss", cfg.Mode)}
		}
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
	}
	tlsConfig, err := cfg.TLS.Config()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, shared: session.NewShared()}
	s.live.Store(cfg)
	s.memLimit.Store(-1) // not serving
	s.metrics = metrics.New(s.snapshot)
	s.shared.CursorMemory = cfg.CursorMemory()
	var reps []cluster.Replica
	var names []string
	var classes []driver.Class
	for i, r := range cfg.Replicas {
		// With a log, a replica whose server is unreachable is left out
		// and brought back later; without one, it could not catch up.
		late := mode == coord.CBS || mode == coord.SS
		e, err := openReplica(ctx, i, r, cfg.DataDir, late, log)
		if err != nil {
			s.closeEngines()
			return nil, err
		}
		s.engines = append(s.engines, e)
		rep := cluster.Replica{Name: r.Name, Engine: e}
		if r.Schedule != "" {
			conc := r.Schedule == "concurrent"
			if conc && e.Class() == driver.Serial {
				s.closeEngines()
				return nil, &config.Error{Field: fmt.Sprintf("replicas[%d].schedule", i),
					Msg: fmt.Sprintf("replica %s is of class serial: it runs one transaction at a time", r.Name)}
			}
			rep.Concurrent = &conc
		}
		reps = append(reps, rep)
		names = append(names, r.Name)
		classes = append(classes, e.Class())
	}
	if err := checkPrimary(mode, names, classes); err != nil {
		s.closeEngines()
		return nil, err
	}
	catalog, err := schema.Open(filepath.Join(cfg.DataDir, "catalog.json"))
	if err != nil {
		s.closeEngines()
		return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
	}
	dialects := map[driver.Dialect][]string{}
	for i, e := range s.engines {
		dialects[e.Dialect()] = append(dialects[e.Dialect()], names[i])
	}
	s.cache = sqlan.NewCache(statementCacheSize, dialects, catalog)
	ptimeout, _ := cfg.PrimaryTimeoutDuration() // checked by cfg.Check
	copts := cluster.Options{Mode: mode, F: cfg.F, Log: log, DigestRows: cfg.Digests(), PrimaryTimeout: ptimeout, Metrics: s.metrics}
	copts.ProbeInterval, copts.ProbeTimeout, _ = cfg.Probes() // checked by cfg.Check
	copts.OpTimeout, _ = cfg.OpTimeoutDuration()              // checked by cfg.Check
	copts.MaxTransactions = cfg.Transactions()
	copts.AnswerMemory, copts.SpillDir = cfg.AnswerMemory(), cfg.DataDir
	// Replicas retired in an earlier run stay out (cluster.Retirement):
	// never replayed to, never taken back without an operator.
	copts.RetiredFile = filepath.Join(cfg.DataDir, "retired.json")
	if copts.Retired, err = cluster.LoadRetired(copts.RetiredFile); err != nil {
		s.closeEngines()
		return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
	}
	retired := map[int]error{}
	for i, n := range names {
		if r, ok := copts.Retired[n]; ok {
			retired[i] = fmt.Errorf("retired: %s", r.Why)
		}
	}
	// out holds the replicas left out at start, with why.
	var out map[int]error
	if mode == coord.CBS || mode == coord.SS {
		var w *wal.Log
		var records []wal.Record
		var more map[string]cluster.Retirement
		if cfg.Cluster.Enabled() {
			// The replicated log in place of the local one: a standby
			// waits in joinCluster until it leads. The DDL intents of a
			// replica that commits DDL as it runs it are not kept (they
			// would be on this node's disk only).
			s.node, records, err = joinCluster(ctx, cfg, log)
			if err != nil {
				s.closeEngines()
				return nil, err
			}
			copts.MaxTxnBytes = s.node.maxRecord - recordSlack
		} else {
			w, records, err = wal.Open(filepath.Join(cfg.DataDir, "wal"), s.walOptions())
			if err != nil {
				s.closeEngines()
				return nil, &config.Error{Field: "data_dir", Msg: "write-ahead log: " + err.Error()}
			}
			if r, ok := w.Repaired(); ok {
				log.Warn("write-ahead log had a torn tail, dropped", "repair", r.String())
			}
			// Schema changes a replica that commits DDL as it runs it may
			// hold without the log: completed, or that replica retired.
			copts.IntentFile = filepath.Join(cfg.DataDir, "ddl-intents.json")
			records, more, err = resolveIntents(ctx, w, records, copts.IntentFile, copts.RetiredFile, s.engines, names, log)
			if err != nil {
				w.Close()
				s.closeEngines()
				return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
			}
		}
		if more != nil {
			copts.Retired = more
			for i, n := range names {
				if r, ok := more[n]; ok {
					retired[i] = fmt.Errorf("retired: %s", r.Why)
				}
			}
		}
		if err := recoverCatalog(s.cache, records, log); err != nil {
			s.closeLog(w)
			s.closeEngines()
			return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
		}
		rec, err := recoverReplicas(ctx, s.engines, names, cfg.F, records, retired, log)
		if err != nil {
			s.closeLog(w)
			s.closeEngines()
			return nil, err
		}
		copts.Base, copts.Cache = rec.base, s.cache
		if s.node != nil {
			copts.WAL = s.node.log
		} else {
			s.wal, copts.WAL = w, w
		}
		out = rec.out
	}
	// classes: cluster.New reads them from the engines itself and the
	// coordinator picks the primary among them; checkPrimary made sure
	// there is one.
	s.cluster = cluster.New(copts, reps)
	for i := range len(reps) {
		if _, ok := retired[i]; ok {
			continue // out already: cluster.New kept it out
		}
		if why, ok := out[i]; ok {
			log.Warn("replica left out at start: it is tried again, and catches up from the log once usable", "replica", names[i], "why", why)
			s.cluster.StartOut(i)
		}
	}
	s.repair = repair.NewService(repair.New(s.cluster, catalog, log))
	users := map[string]string{}
	for _, u := range cfg.Users {
		users[u.Name] = u.Password
	}
	s.front = &pgwire.Server{Handler: handler{s}, Users: users, Logger: log, ServerVersion: session.ServerVersion,
		TLS: tlsConfig, RequireTLS: cfg.TLS.RequireTLS(), MaxConnections: cfg.Connections(),
		ReservedConnections: cfg.Reserved(), Reserved: s.isAdmin, OnError: s.onError}
	s.front.WriteTimeout, _ = cfg.ClientWriteTimeoutDuration() // checked by cfg.Check
	return s, nil
}

// modes maps the configuration's mode names onto the coordinator's.
var modes = map[string]coord.Mode{
	"passthrough": coord.Passthrough,
	"serial":      coord.Serial,
	"cbs":         coord.CBS,
	"ss":          coord.SS,
}

// openReplica opens replica i of the configuration, with the isolation
// override and the injected faults its fault table asks for.
//
// With late, a server replica that cannot be reached is not an error: it
// is returned as an engine that opens on its first successful Connect,
// and start-up leaves it out.
func openReplica(ctx context.Context, i int, r config.Replica, dataDir string, late bool, log *slog.Logger) (driver.Engine, error) {
	field := fmt.Sprintf("replicas[%d]", i)
	open, ok := driver.Lookup(r.Driver)
	if !ok {
		return nil, &config.Error{Field: field + ".driver", Msg: fmt.Sprintf("unknown driver %q", r.Driver)}
	}
	if iso := r.Fault.Isolation; iso != "" {
		if r.Driver != mysql.Name {
			return nil, &config.Error{Field: field + ".fault.isolation", Msg: "only a mysql replica takes an isolation override, not " + r.Driver}
		}
		open = mysql.Opener(mysql.Options{Isolation: iso})
		log.Warn("replica runs at a faulty isolation level on purpose", "replica", r.Name, "isolation", iso)
	}
	spec := driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: dataDir}
	e, err := open(ctx, spec)
	if d, ok := lateDialects[r.Driver]; ok && err != nil && late && unreachable(err) {
		class, _ := driver.ClassOf(r.Driver)
		log.Warn("replica unreachable at start", "replica", r.Name, "err", err)
		e, err = &lateEngine{spec: spec, name: r.Driver, class: class, dialect: d, open: open}, nil
	}
	if err != nil {
		return nil, &config.Error{Field: fmt.Sprintf("%s (%s)", field, r.Name), Msg: "cannot open: " + err.Error()}
	}
	fc := faultConfig(r)
	if !fc.Active() {
		return e, nil
	}
	log.Warn("replica injects faults on purpose", "replica", r.Name,
		"wrong_answer_rate", fc.WrongAnswerRate, "wrong_count_rate", fc.WrongCountRate,
		"stall_rate", fc.StallRate, "stall_ms", fc.StallMS, "misorder_rate", fc.MisorderRate, "seed", fc.Seed)
	return fault.Wrap(e, fc), nil
}

// Check validates what config.Check cannot know without the drivers: a
// replica fit to be primary for cbs and ss, and no concurrent schedule on
// a serial-class replica. Open checks the same against the engines
// themselves.
func Check(cfg *config.Config) error {
	mode, ok := modes[cfg.Mode]
	if !ok {
		return &config.Error{Field: "mode", Msg: fmt.Sprintf("unknown mode %q", cfg.Mode)}
	}
	var names []string
	var classes []driver.Class
	for i, r := range cfg.Replicas {
		class, ok := driver.ClassOf(r.Driver)
		if !ok {
			return &config.Error{Field: fmt.Sprintf("replicas[%d].driver", i), Msg: fmt.Sprintf("unknown driver %q", r.Driver)}
		}
		if r.Schedule == "concurrent" && class == driver.Serial {
			return &config.Error{Field: fmt.Sprintf("replicas[%d].schedule", i),
				Msg: fmt.Sprintf("replica %s is of class serial: it runs one transaction at a time", r.Name)}
		}
		names = append(names, r.Name)
		classes = append(classes, class)
	}
	return checkPrimary(mode, names, classes)
}

// checkPrimary refuses a mode that needs a primary (cbs, ss) when no
// replica's class may be one (DESIGN.md, "Replicas are not all two-phase
// locking"). names and classes are the replicas', in config order.
func checkPrimary(mode coord.Mode, names []string, classes []driver.Class) error {
	if mode != coord.CBS && mode != coord.SS {
		return nil
	}
	var got []string
	for i, c := range classes {
		if c.MayBePrimary() {
			return nil
		}
		got = append(got, fmt.Sprintf("%s (%s)", names[i], c))
	}
	return &config.Error{Field: "replicas", Msg: fmt.Sprintf(
		"mode %s needs a primary of class %s or %s (MariaDB/MySQL or SQLite); got %s",
		mode, driver.Locking, driver.Serial, strings.Join(got, ", "))}
}

// Cluster returns the cluster, for tests and the admin console.
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }

// Repair returns the compare-and-repair service, for tests and the admin
// console.
func (s *Server) Repair() *repair.Service { return s.repair }

// Serve accepts clients on ln until ctx ends, then closes everything. The
// background compare-and-repair runs meanwhile (config [repair]).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.memLimit.Store(debug.SetMemoryLimit(-1))
	s.applyMemoryLimit(s.live.Load())
	defer func() { debug.SetMemoryLimit(s.memLimit.Swap(-1)) }()
	s.runner.mu.Lock()
	s.runner.ctx = ctx
	s.startRepairLocked(s.live.Load())
	s.runner.mu.Unlock()
	var metricsDone chan struct{}
	if s.metricsLn != nil {
		metricsDone = make(chan struct{})
		go func() {
			defer close(metricsDone)
			if err := s.metrics.Serve(ctx, s.metricsLn); err != nil {
				s.log.Error("metrics endpoint stopped", "err", err)
			}
		}()
	}
	defer func() {
		s.runner.mu.Lock()
		s.stopRepairLocked()
		s.runner.ctx = nil
		s.runner.mu.Unlock()
		if metricsDone != nil {
			<-metricsDone
		}
		s.close()
	}()
	err := s.front.Serve(ctx, ln)
	if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *Server) close() {
	// Every client is gone, so every transaction has ended; replicas that
	// trail (sequential secondaries) may still be applying committed
	// ones. Stopping them now would leave them without transactions the
	// clients saw committed, and nothing would bring those back.
	if s.dbs != nil {
		s.dbs.closeAll()
	}
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	if err := s.cluster.Idle(ctx); err != nil {
		behind := []string{}
		for _, r := range s.cluster.Replicas() {
			if r.State != "down" && r.State != "unresponsive" {
				behind = append(behind, r.Name)
			}
		}
		s.log.Error("stopping before every replica applied every committed transaction; compare them before serving again",
			"waited", drainTimeout, "replicas", strings.Join(behind, ", "))
	}
	s.cluster.Close()
	if s.wal != nil {
		if err := s.wal.Close(); err != nil {
			s.log.Error("closing the write-ahead log", "err", err)
		}
	}
	s.node.close(s.log)
	s.closeEngines()
}

// closeLog closes w, the local log, or the cluster node's term, for a
// start-up that fails.
func (s *Server) closeLog(w *wal.Log) {
	if w != nil {
		w.Close()
	}
	s.node.close(s.log)
	s.node = nil
}

// applyMemoryLimit sets the Go runtime's memory limit to cfg's
// memory_limit_mb, or back to what it was before Serve when that is 0.
// The limit is the process's: only a serving Server sets it.
func (s *Server) applyMemoryLimit(cfg *config.Config) {
	before := s.memLimit.Load()
	switch {
	case before < 0:
	case cfg.MemoryLimitMB > 0:
		debug.SetMemoryLimit(int64(cfg.MemoryLimitMB) << 20)
	default:
		debug.SetMemoryLimit(before)
	}
}

// drainTimeout bounds how long shutdown waits for trailing replicas.
const drainTimeout = time.Minute

func (s *Server) closeEngines() {
	for _, e := range s.engines {
		e.Close()
	}
	s.engines = nil
}

type handler struct{ s *Server }

// NewSession implements pgwire.Handler.
func (h handler) NewSession(ctx context.Context, info pgwire.StartupInfo) (pgwire.Session, error) {
	return h.s.newSession(info)
}
