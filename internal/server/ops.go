package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver/fault"
	"github.com/shepherd-db/shepherd/internal/metrics"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/repair"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// Logging is shepherd's log ([log]): a slog.Logger, text or JSON, whose
// level changes on reload, and whose output never holds a configured
// secret (a DSN with its password, a password): each is replaced by
// redacted wherever it appears, in the message or any value.
type Logging struct {
	Logger *slog.Logger
	level  slog.LevelVar
	redact atomic.Pointer[strings.Replacer]
}

// redacted replaces a secret in the log.
const redacted = "[redacted]"

// NewLogging returns the log cfg asks for, written to w.
func NewLogging(w io.Writer, cfg *config.Config) *Logging {
	l := &Logging{}
	l.Apply(cfg)
	opts := &slog.HandlerOptions{Level: &l.level, ReplaceAttr: l.replace}
	if cfg.Log.Format == "json" {
		l.Logger = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		l.Logger = slog.New(slog.NewTextHandler(w, opts))
	}
	return l
}

// Apply takes cfg's level and secrets (a reload).
func (l *Logging) Apply(cfg *config.Config) {
	l.level.Set(cfg.Log.SlogLevel())
	var pairs []string
	for _, s := range cfg.Secrets() {
		pairs = append(pairs, s, redacted)
	}
	l.redact.Store(strings.NewReplacer(pairs...))
}

// replace is the handlers' ReplaceAttr: it redacts secrets in strings,
// errors and anything else printed as text (the message too).
func (l *Logging) replace(_ []string, a slog.Attr) slog.Attr {
	r := l.redact.Load()
	if r == nil {
		return a
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); r.Replace(s) != s {
			a.Value = slog.StringValue(r.Replace(s))
		}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		case []byte:
			s = string(x)
		default:
			s = fmt.Sprint(x)
		}
		if red := r.Replace(s); red != s {
			a.Value = slog.StringValue(red)
		}
	}
	return a
}

// maxLoggedStatement bounds the text of a statement in the log.
const maxLoggedStatement = 2048

// onError logs and counts an error sent to a client (pgwire's OnError):
// a statement shepherd refuses (0A000, or a limit: class 54) at info
// with [log] refused, every error at debug otherwise.
func (s *Server) onError(e pgwire.ErrorEvent) {
	s.metrics.ClientError(e.Err.Code)
	refused := e.Err.Code == "0A000" || strings.HasPrefix(e.Err.Code, "54")
	msg, level := "statement failed", slog.LevelDebug
	if refused {
		msg = "statement refused"
		if s.live.Load().Log.Refused {
			level = slog.LevelInfo
		}
	}
	ctx := context.Background()
	if !s.log.Enabled(ctx, level) {
		return
	}
	sql := e.SQL
	if len(sql) > maxLoggedStatement {
		sql = sql[:maxLoggedStatement] + "…"
	}
	remote := ""
	if e.Remote != nil {
		remote = e.Remote.String()
	}
	s.log.Log(ctx, level, msg, "user", e.User, "database", e.Database, "remote", remote,
		"sqlstate", e.Err.Code, "error", e.Err.Message, "statement", sql)
}

// snapshot reads what a metrics scrape exports.
func (s *Server) snapshot() metrics.Snapshot {
	var snap metrics.Snapshot
	snap.Replicas, snap.ViewChanges = s.cluster.Metrics()
	snap.Active = s.cluster.Active()
	_, snap.Waiting = s.cluster.Admitted()
	snap.RepairPasses = s.repair.Status().Passes
	for _, r := range s.cfg.Replicas {
		repaired, left := s.repair.Totals(r.Name)
		snap.Repairs = append(snap.Repairs, metrics.Repair{Replica: r.Name, Repaired: repaired, Unrepaired: left})
	}
	return snap
}

// MetricsAddr returns the address the metrics endpoint listens on ("" when
// [metrics] listen is unset).
func (s *Server) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// listenMetrics opens the metrics endpoint's listener, if configured.
func (s *Server) listenMetrics() error {
	if s.cfg.Metrics.Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Metrics.Listen)
	if err != nil {
		return &config.Error{Field: "metrics.listen", Msg: err.Error()}
	}
	s.metricsLn = ln
	return nil
}

// repairRunner runs the background compare-and-repair with the settings
// of the configuration in force, restarted when a reload changes them.
type repairRunner struct {
	mu   sync.Mutex
	ctx  context.Context // Serve's; nil before Serve and after it ends
	stop context.CancelFunc
	done chan struct{}
}

// start runs the background passes cfg asks for (none for repair.mode
// off, or a single replica), after stopping those running. r.mu is held.
func (s *Server) startRepairLocked(cfg *config.Config) {
	r := &s.runner
	s.stopRepairLocked()
	if r.ctx == nil || cfg.Repair.Mode == "off" || len(cfg.Replicas) < 2 {
		return
	}
	every, _ := cfg.RepairEvery() // checked by cfg.Check
	bg := repair.Background{Repair: cfg.Repair.Mode != "check", Every: every, Rate: cfg.RepairRate()}
	ctx, stop := context.WithCancel(r.ctx)
	done := make(chan struct{})
	r.stop, r.done = stop, done
	go func() {
		defer close(done)
		s.repair.Background(ctx, bg)
	}()
}

// stopRepairLocked stops the background passes and waits for them.
// s.runner.mu is held.
func (s *Server) stopRepairLocked() {
	r := &s.runner
	if r.stop != nil {
		r.stop()
		<-r.done
		r.stop, r.done = nil, nil
	}
}

// SetLogging gives the server the log it logs to, so that a reload can
// change its level and secrets.
func (s *Server) SetLogging(l *Logging) {
	s.logging = l
}

// Reload applies cfg, a configuration read again (SIGHUP), to the running
// server: the users and their passwords (sessions already open stay),
// [repair], the log's level and [log] refused, cursor_memory_mb and the
// replicas' fault tables. A change to any other key needs a restart: the
// reload is then refused with an error naming the key, and nothing of cfg
// is applied. cfg must have passed config.Check.
func (s *Server) Reload(cfg *config.Config) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.live.Load()
	if key := config.RestartNeeded(old, cfg); key != "" {
		s.metrics.Reload("refused")
		return &config.Error{Field: key, Msg: "changed, but takes effect only at a restart: the configuration in force is kept (change it back, or restart)"}
	}
	for i, r := range cfg.Replicas {
		if r.Fault.Active() && !s.cfg.Replicas[i].Fault.Active() {
			// Its engine was not wrapped at start (openReplica).
			s.metrics.Reload("refused")
			return &config.Error{Field: fmt.Sprintf("replicas[%d].fault", i),
				Msg: "faults for a replica that injected none at start take effect only at a restart: the configuration in force is kept"}
		}
	}
	if err := Check(cfg); err != nil {
		s.metrics.Reload("error")
		return err
	}
	users := map[string]string{}
	for _, u := range cfg.Users {
		users[u.Name] = u.Password
	}
	s.front.SetUsers(users)
	s.front.SetConnectionLimits(cfg.Connections(), cfg.Reserved())
	if d, err := cfg.ClientWriteTimeoutDuration(); err == nil { // checked by Check
		s.front.SetWriteTimeout(d)
	}
	s.shared.SetCursorMemory(cfg.CursorMemory())
	s.cluster.SetMaxTransactions(cfg.Transactions())
	s.applyMemoryLimit(cfg)
	for _, e := range s.engines {
		s.setFaults(e, cfg)
	}
	if s.dbs != nil {
		s.dbs.mu.Lock()
		for _, d := range s.dbs.open {
			d.srv.shared.SetCursorMemory(cfg.CursorMemory())
			d.srv.cluster.SetMaxTransactions(cfg.Transactions())
			for _, e := range d.srv.engines {
				s.setFaults(e, cfg)
			}
		}
		s.dbs.mu.Unlock()
	}
	if s.logging != nil {
		s.logging.Apply(cfg)
	}
	if cfg.Repair != old.Repair {
		s.runner.mu.Lock()
		s.startRepairLocked(cfg)
		s.runner.mu.Unlock()
	}
	s.live.Store(cfg)
	s.metrics.Reload("ok")
	s.log.Info("configuration reloaded", "users", len(cfg.Users), "repair", cfg.Repair.Mode,
		"log_level", cfg.Log.SlogLevel().String(), "cursor_memory_mb", cfg.CursorMemory()>>20)
	return nil
}

// ReloadFailed counts a reload whose file did not load or check
// (shepherd_config_reloads_total{result="error"}).
func (s *Server) ReloadFailed() { s.metrics.Reload("error") }

// setFaults gives a fault-injecting engine its replica's fault table
// from cfg (by replica name).
func (s *Server) setFaults(e any, cfg *config.Config) {
	fe, ok := e.(*fault.Engine)
	if !ok {
		return
	}
	cur := fe.Config()
	for _, r := range cfg.Replicas {
		if r.Name == cur.Replica {
			fe.SetConfig(faultConfig(r))
			if fc := faultConfig(r); fc != cur {
				s.log.Warn("replica injects faults on purpose (reloaded)", "replica", r.Name,
					"wrong_answer_rate", fc.WrongAnswerRate, "wrong_count_rate", fc.WrongCountRate,
					"stall_rate", fc.StallRate, "stall_ms", fc.StallMS, "misorder_rate", fc.MisorderRate, "seed", fc.Seed)
			}
		}
	}
}

// faultConfig is the fault table of replica r.
func faultConfig(r config.Replica) fault.Config {
	return fault.Config{
		WrongAnswerRate: r.Fault.WrongAnswerRate,
		WrongCountRate:  r.Fault.WrongCountRate,
		StallRate:       r.Fault.StallRate,
		StallMS:         r.Fault.StallMS,
		MisorderRate:    r.Fault.MisorderRate,
		Seed:            r.Fault.Seed,
		Replica:         r.Name,
	}
}

// walOptions returns the write-ahead log's options with the metrics'
// observers: each fsync's time, each batch's size.
func (s *Server) walOptions() wal.Options {
	o := walOptions
	sync := o.Sync
	if sync == nil {
		sync = (*os.File).Sync
	}
	o.Sync = func(f *os.File) error {
		start := time.Now()
		err := sync(f)
		s.metrics.Fsync(time.Since(start))
		return err
	}
	o.Batch = s.metrics.Batch
	return o
}
