package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/shepherd-db/shepherd/internal/bench/direct"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/config"
)

// The systems a benchmark can measure over Engines.
const (
	// ModeDirect is the primary's engine alone (MariaDB), with no proxy:
	// the workload's statements are translated in the client (package
	// bench/direct) and run through shepherd's MariaDB driver.
	ModeDirect = "direct"
	// ModeDirectPG is PostgreSQL alone, over pgx.
	ModeDirectPG = "direct-pg"
	// ModeDirectSQLite is SQLite alone, as ModeDirect.
	ModeDirectSQLite = "direct-sqlite"
	// ModePassthrough is shepherd in passthrough mode over MariaDB.
	ModePassthrough = "passthrough"
	// ModeCBS, ModeSS and ModeSerial are shepherd in that mode over
	// MariaDB (primary), PostgreSQL and SQLite, f = 1.
	ModeCBS    = "cbs"
	ModeSS     = "ss"
	ModeSerial = "serial"
	// ModeCBSLocking is cbs over MariaDB (primary), PostgreSQL and a
	// second MariaDB database on the same server in place of SQLite: a
	// locking secondary runs transactions concurrently, where the default
	// PostgreSQL and SQLite secondaries run one at a time.
	ModeCBSLocking = "cbs-locking"
	// ModeBound is the three-direct bound: every client runs each
	// transaction directly on MariaDB, PostgreSQL and SQLite at once and
	// waits for all three, with no coordination at all — the most any
	// scheme replicating onto these three engines can reach here.
	ModeBound = "bound"
)

// Modes lists every mode, in the order a sweep runs them by default.
var Modes = []string{ModeDirect, ModePassthrough, ModeCBS, ModeSS, ModeSerial, ModeBound}

// AllModes lists the default modes and the single-engine ones.
var AllModes = append(slices.Clone(Modes), ModeDirectPG, ModeDirectSQLite, ModeCBSLocking)

// needs returns the engines a mode runs on.
func needs(mode string) (maria, pg, lite bool, err error) {
	switch mode {
	case ModeDirect, ModePassthrough:
		return true, false, false, nil
	case ModeDirectPG:
		return false, true, false, nil
	case ModeDirectSQLite:
		return false, false, true, nil
	case ModeCBS, ModeSS, ModeSerial, ModeBound:
		return true, true, true, nil
	case ModeCBSLocking:
		return true, true, false, nil
	}
	return false, false, false, fmt.Errorf("bench: unknown mode %q (want one of %s)", mode, strings.Join(AllModes, ", "))
}

// CheckModes reports an unknown mode, or one the engines cannot run.
func (e *Engines) CheckModes(modes []string) error {
	for _, m := range modes {
		maria, pg, lite, err := needs(m)
		if err != nil {
			return err
		}
		var missing []string
		if maria && e.MariaDB == "" {
			missing = append(missing, "MariaDB")
		}
		if pg && e.Postgres == "" {
			missing = append(missing, "PostgreSQL")
		}
		if lite && e.SQLiteDir == "" {
			missing = append(missing, "SQLite")
		}
		if len(missing) > 0 {
			return fmt.Errorf("bench: mode %s needs %s (give --engines local, or --mariadb DSN and --postgres URL)", m, strings.Join(missing, " and "))
		}
	}
	return nil
}

// System is one system under test, open on fresh databases.
type System struct {
	Mode string
	// Dialers open a client's sessions: one for most modes, one per
	// engine for the bound.
	Dialers []Dialer
	// Shepherd is the in-process shepherd, nil for direct modes.
	Shepherd *Shepherd
	dbs      *Databases
	dataDir  string
	closers  []func() error
}

// Open creates fresh databases on the engines and opens mode over them.
// tag names the databases. log receives the shepherd's log (nil: none).
func (e *Engines) Open(ctx context.Context, mode, tag string, log *slog.Logger) (*System, error) {
	if err := e.CheckModes([]string{mode}); err != nil {
		return nil, err
	}
	maria, pg, lite, _ := needs(mode)
	sub := Engines{SQLiteDriver: e.SQLiteDriver}
	if maria {
		sub.MariaDB = e.MariaDB
	}
	if pg {
		sub.Postgres = e.Postgres
	}
	if lite {
		sub.SQLiteDir = e.SQLiteDir
	}
	dbs, err := sub.Fresh(ctx, tag)
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp("", "shepherd-bench-*")
	if err != nil {
		_ = dbs.Drop(context.WithoutCancel(ctx))
		return nil, err
	}
	if mode == ModeCBSLocking {
		// The second MariaDB database.
		more, err := (&Engines{MariaDB: e.MariaDB}).Fresh(ctx, tag+"_2")
		if err != nil {
			_ = dbs.Drop(context.WithoutCancel(ctx))
			os.RemoveAll(dataDir)
			return nil, err
		}
		dbs.SecondMariaDB = more.MariaDB
		dbs.drops = append(dbs.drops, more.drops...)
	}
	s := &System{Mode: mode, dbs: dbs, dataDir: dataDir}
	if err := s.open(ctx, &sub, log); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

func (s *System) open(ctx context.Context, e *Engines, log *slog.Logger) error {
	lite := e.sqliteDriver()
	directDialer := func(drv, dsn, name string) (Dialer, error) {
		db, err := direct.Open(ctx, drv, dsn, s.dataDir+"/"+name)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, db.Close)
		return func(ctx context.Context) (Conn, error) { return db.Connect(ctx) }, nil
	}
	shepherd := func(mode string, f int, reps ...config.Replica) error {
		cfg := &config.Config{Listen: "127.0.0.1:0", DataDir: s.dataDir, Mode: mode, F: f, Replicas: reps}
		sh, err := StartShepherd(ctx, cfg, log)
		if err != nil {
			return err
		}
		s.Shepherd = sh
		s.closers = append(s.closers, sh.Close)
		s.Dialers = []Dialer{sh.Dialer()}
		return nil
	}
	maria := config.Replica{Name: "maria", Driver: "mysql", DSN: s.dbs.MariaDB}
	pg := config.Replica{Name: "pg", Driver: "postgres", DSN: s.dbs.Postgres}
	sqlite := config.Replica{Name: "lite", Driver: lite, DSN: s.dbs.SQLite}
	switch s.Mode {
	case ModeDirect:
		d, err := directDialer("mysql", s.dbs.MariaDB, "maria")
		if err != nil {
			return err
		}
		s.Dialers = []Dialer{d}
	case ModeDirectSQLite:
		d, err := directDialer(lite, s.dbs.SQLite, "lite")
		if err != nil {
			return err
		}
		s.Dialers = []Dialer{d}
	case ModeDirectPG:
		d, err := PGDialer(s.dbs.Postgres)
		if err != nil {
			return err
		}
		s.Dialers = []Dialer{d}
	case ModePassthrough:
		return shepherd("passthrough", 0, maria)
	case ModeCBS, ModeSS, ModeSerial:
		return shepherd(s.Mode, 1, maria, pg, sqlite)
	case ModeCBSLocking:
		return shepherd(ModeCBS, 1, maria, pg, config.Replica{Name: "maria2", Driver: "mysql", DSN: s.dbs.SecondMariaDB})
	case ModeBound:
		dm, err := directDialer("mysql", s.dbs.MariaDB, "maria")
		if err != nil {
			return err
		}
		dp, err := PGDialer(s.dbs.Postgres)
		if err != nil {
			return err
		}
		dl, err := directDialer(lite, s.dbs.SQLite, "lite")
		if err != nil {
			return err
		}
		s.Dialers = []Dialer{dm, dp, dl}
	default:
		return fmt.Errorf("bench: unknown mode %q", s.Mode)
	}
	return nil
}

// Load loads w on every database of the system, in parallel.
func (s *System) Load(ctx context.Context, w Workload) error {
	return s.each(ctx, func(c Conn) error { return w.Load(ctx, c) })
}

// Check checks w's invariants on every database of the system. A
// shepherd is first left to bring every replica up to date.
func (s *System) Check(ctx context.Context, w Workload) error {
	if s.Shepherd != nil {
		if err := s.Shepherd.Idle(ctx); err != nil {
			return err
		}
	}
	return s.each(ctx, func(c Conn) error { return w.Check(ctx, c) })
}

// Replicas returns the in-process shepherd's replica states (nil for a
// direct mode).
func (s *System) Replicas() []cluster.ReplicaStatus {
	if s.Shepherd == nil {
		return nil
	}
	return s.Shepherd.Replicas()
}

func (s *System) each(ctx context.Context, fn func(Conn) error) error {
	errs := make([]error, len(s.Dialers))
	var wg sync.WaitGroup
	for i, d := range s.Dialers {
		wg.Go(func() {
			c, err := d(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close(context.WithoutCancel(ctx))
			errs[i] = fn(c)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops the shepherd (waiting for trailing replicas), closes the
// engines, drops the databases and removes the data directory.
func (s *System) Close(ctx context.Context) error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	errs = append(errs, s.dbs.Drop(ctx), os.RemoveAll(s.dataDir))
	return errors.Join(errs...)
}
