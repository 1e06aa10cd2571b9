package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/admin"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver/mysql"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/repair"
	"github.com/shepherd-db/shepherd/internal/session"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Databases created with CREATE DATABASE.
//
// Each is a shepherd of its own: its own cluster (coordinator, replica
// managers), write-ahead log, schema catalog, retired list and statement
// cache, under data_dir/databases/<name>/, over one database per replica
// made for it: on a PostgreSQL or MariaDB replica the database
// <configured database>_<name> on the same server, on an SQLite replica a
// file of the configured file's name in that directory. Nothing is shared
// with the configured database but the configuration, so everything that
// makes the configured database correct holds for each of them unchanged.
//
// The list is kept in data_dir/databases.json, written (and fsynced)
// before and after each step that touches the replicas, so that a crash
// in the middle is finished at the next start: a database still
// "creating" is undone (its replica databases dropped, which is safe
// because CREATE first made sure none existed), one "dropping" is
// dropped again. A CREATE that fails on any replica is undone on all and
// refused: a database never starts with a replica short of its database.

// maxDatabases bounds the databases CREATE DATABASE makes: each holds
// connections, goroutines and a log of its own.
const maxDatabases = 32

// SQLSTATEs of CREATE and DROP DATABASE, as PostgreSQL gives them.
const (
	codeDuplicateDatabase = "42P04"
	codeObjectInUse       = "55006"
	codeInsufficient      = "53000"
	codeSystemError       = "58000"
)

// databaseNames is what shepherd accepts as the name of a database it
// creates: one that every engine takes as is, inside a longer name.
var databaseNames = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Database states in databases.json.
const (
	dbCreating = "creating"
	dbReady    = "ready"
	dbDropping = "dropping"
)

type dbEntry struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

type dbFile struct {
	Databases []dbEntry `json:"databases"`
}

// databases is the top server's list of created databases.
type databases struct {
	top  *Server
	file string // data_dir/databases.json
	// op serialises CREATE and DROP DATABASE (held across the replicas'
	// work; they are rare).
	op sync.Mutex

	mu      sync.Mutex // guards what follows
	entries []dbEntry  // as in the file
	open    map[string]*database
	// left is closed (and replaced) whenever a session of a created
	// database ends, for a DROP waiting for them to go.
	left chan struct{}
}

// dropWait is how long DROP DATABASE waits for the database's other
// sessions to end before it fails with 55006: PostgreSQL's 5 seconds, so
// that a client that just closed its connection to it is not refused.
const dropWait = 5 * time.Second

// database is one created database while it is served.
type database struct {
	name     string
	srv      *Server
	conns    int  // sessions connected to it
	dropping bool // DROP DATABASE under way: no new sessions
	stopBG   context.CancelFunc
	bgDone   chan struct{}
}

// Open opens every replica of the configured database (checking each is
// reachable), builds its cluster, and opens the databases CREATE DATABASE
// made in earlier runs (finishing a CREATE or DROP a crash interrupted).
// Errors name the replica or database at fault.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger) (*Server, error) {
	s, err := open(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if err := s.listenMetrics(); err != nil {
		s.closeAll()
		return nil, err
	}
	dbs := &databases{top: s, file: filepath.Join(cfg.DataDir, "databases.json"), open: map[string]*database{}, left: make(chan struct{})}
	if err := dbs.load(ctx); err != nil {
		dbs.closeAll()
		s.closeAll()
		return nil, &config.Error{Field: "data_dir", Msg: err.Error()}
	}
	s.dbs = dbs
	return s, nil
}

// closeAll closes what open opened, for a start-up that fails later.
func (s *Server) closeAll() {
	s.cluster.Close()
	if s.wal != nil {
		s.wal.Close()
	}
	s.node.close(s.log)
	s.closeEngines()
}

// DatabaseNames lists the databases a client may connect to, for
// pg_database (session.Databases): the configured one under its
// configured name (with none configured, under from, the name the
// session connected with, unless that is a created database), then the
// created ones in the order they were created. The admin console
// "shepherd" is not one.
func (dbs *databases) DatabaseNames(from string) []string {
	dbs.mu.Lock()
	defer dbs.mu.Unlock()
	var names []string
	main := dbs.top.cfg.Database
	if _, created := dbs.open[from]; main == "" && !created {
		main = from
	}
	if main != "" {
		names = append(names, main)
	}
	for _, e := range dbs.entries {
		if d, ok := dbs.open[e.Name]; ok && !d.dropping {
			names = append(names, e.Name)
		}
	}
	return names
}

// Database returns the server of a created database, for tests; nil when
// there is none of that name.
func (s *Server) Database(name string) *Server {
	if s.dbs == nil {
		return nil
	}
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	if d, ok := s.dbs.open[name]; ok {
		return d.srv
	}
	return nil
}

// newSession routes a client to its database: the admin console, a
// created database, or the configured one.
func (s *Server) newSession(info pgwire.StartupInfo) (pgwire.Session, error) {
	if info.Database == admin.Database {
		if !s.isAdmin(info.User) {
			// PostgreSQL's answer to a user without CONNECT on a database.
			return nil, pgerr.New(pgerr.InsufficientPrivilege, "permission denied for database %q", admin.Database).
				WithDetail("User does not have CONNECT privilege.").Fatal()
		}
		return admin.New(s.cluster, s.repair), nil
	}
	dbs := s.dbs
	if dbs == nil { // a created database's own server is never served
		return session.New(s.cluster, s.cache, s.shared, info), nil
	}
	dbs.mu.Lock()
	d, ok := dbs.open[info.Database]
	if ok && !d.dropping {
		d.conns++
		dbs.mu.Unlock()
		sess := session.New(d.srv.cluster, d.srv.cache, d.srv.shared, info)
		var once sync.Once
		sess.SetDatabases(dbs, func() { once.Do(func() { dbs.release(d) }) })
		return sess, nil
	}
	dbs.mu.Unlock()
	if ok || !s.isMain(info.Database) {
		return nil, notExist(info.Database).Fatal()
	}
	sess := session.New(s.cluster, s.cache, s.shared, info)
	sess.SetDatabases(dbs, nil)
	return sess, nil
}

// isAdmin says whether user may open the admin console: a user marked
// admin in the configuration, or anyone when no user is configured (then
// only loopback clients get in at all).
func (s *Server) isAdmin(user string) bool {
	cfg := s.cfg
	if live := s.live.Load(); live != nil {
		cfg = live // admin flags change with a reload, as passwords do
	}
	names, everyone := cfg.Admins()
	return everyone || names[user]
}

// isMain says whether name reaches the configured database: its
// configured name, or, with none configured, any name that is not a
// created database.
func (s *Server) isMain(name string) bool {
	return s.cfg.Database == "" || name == s.cfg.Database
}

func notExist(name string) *pgerr.Error {
	return pgerr.New(pgerr.InvalidCatalogName, "database %q does not exist", name)
}

func (dbs *databases) release(d *database) {
	dbs.mu.Lock()
	d.conns--
	close(dbs.left)
	dbs.left = make(chan struct{})
	dbs.mu.Unlock()
}

// CreateDatabase implements session.Databases.
func (dbs *databases) CreateDatabase(ctx context.Context, from string, st *sqlan.DatabaseStmt) error {
	name := st.Name
	if dbs.top.cfg.Cluster.Enabled() {
		// Its cluster would need a log of its own in the store, and its
		// own term: not built yet.
		return pgerr.New(pgerr.FeatureNotSupported, "CREATE DATABASE is not supported on a node of a [cluster] yet")
	}
	dbs.op.Lock()
	defer dbs.op.Unlock()
	dbs.mu.Lock()
	_, exists := dbs.open[name]
	var dropping bool
	for _, e := range dbs.entries {
		if e.Name == name && e.State == dbDropping {
			dropping = true
		}
	}
	n := len(dbs.open)
	dbs.mu.Unlock()
	switch {
	case exists || name == admin.Database || name == dbs.top.cfg.Database:
		return pgerr.New(codeDuplicateDatabase, "database %q already exists", name)
	case dbs.top.cfg.Database == "" && name == from:
		// Every name reaches the configured database, this one too.
		return pgerr.New(codeDuplicateDatabase, "database %q already exists", name)
	case dropping:
		return pgerr.New(codeObjectInUse, "database %q is still being dropped on some replica", name).
			WithDetail("shepherd drops its replica databases again at its next start.")
	case !databaseNames.MatchString(name):
		return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support CREATE DATABASE of %q: a database name it creates is lowercase letters, digits and underscores", name)
	case n >= maxDatabases:
		return pgerr.New(codeInsufficient, "shepherd serves at most %d created databases", maxDatabases)
	}
	specs, err := dbs.specs(name)
	if err != nil {
		return err
	}
	// None of the replica databases may exist yet: shepherd never adopts
	// a database it did not make, and undoing a CREATE drops only what
	// this CREATE made.
	for _, sp := range specs {
		if ok, err := sp.exists(ctx); err != nil {
			return pgerr.New(codeSystemError, "replica %s: cannot check for its database %s: %v", sp.replica, sp.engineDB, err)
		} else if ok {
			return pgerr.New(codeDuplicateDatabase, "database %q already exists", name).
				WithDetail("Replica %s already has a database %s, which shepherd did not create.", sp.replica, sp.engineDB)
		}
	}
	if err := dbs.setState(name, dbCreating); err != nil {
		return err
	}
	var made []replicaDB
	for _, sp := range specs {
		if err := sp.create(ctx); err != nil {
			dbs.undo(made, name)
			return pgerr.New(codeSystemError, "replica %s could not create its database %s, so nothing was created: %v", sp.replica, sp.engineDB, err)
		}
		made = append(made, sp)
	}
	srv, err := open(ctx, dbs.subConfig(name, specs), dbs.top.log.With("database", name))
	if err != nil {
		dbs.undo(made, name)
		return pgerr.New(codeSystemError, "database %q could not be opened on its replicas, so nothing was created: %v", name, err)
	}
	if err := dbs.setState(name, dbReady); err != nil {
		srv.closeAll()
		dbs.undo(made, name)
		return err
	}
	dbs.serve(name, srv)
	return nil
}

// undo drops the replica databases a failed CREATE made and forgets the
// database; what cannot be dropped stays "creating", for the next start.
func (dbs *databases) undo(made []replicaDB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	ok := true
	for _, sp := range made {
		if err := sp.drop(ctx); err != nil {
			ok = false
			dbs.top.log.Error("undoing CREATE DATABASE: cannot drop a replica database; retried at the next start", "database", name, "replica", sp.replica, "err", err)
		}
	}
	if err := os.RemoveAll(dbs.dir(name)); err != nil {
		ok = false
	}
	if ok {
		if err := dbs.setState(name, ""); err != nil {
			dbs.top.log.Error("undoing CREATE DATABASE", "database", name, "err", err)
		}
	}
}

// serve starts serving a database that is ready.
func (dbs *databases) serve(name string, srv *Server) {
	d := &database{name: name, srv: srv}
	cfg := dbs.top.cfg
	if mode := cfg.Repair.Mode; mode != "off" && len(cfg.Replicas) > 1 {
		every, _ := cfg.RepairEvery() // checked by cfg.Check
		bg, stop := context.WithCancel(context.Background())
		d.stopBG, d.bgDone = stop, make(chan struct{})
		go func() {
			defer close(d.bgDone)
			srv.repair.Background(bg, repair.Background{Repair: mode != "check", Every: every, Rate: cfg.RepairRate()})
		}()
	}
	dbs.mu.Lock()
	dbs.open[name] = d
	dbs.mu.Unlock()
}

// stop stops serving d: its background repair, then its cluster, once
// its last committed transactions reached the replicas.
func (d *database) stop() {
	if d.stopBG != nil {
		d.stopBG()
		<-d.bgDone
	}
	d.srv.close()
}

// DropDatabase implements session.Databases.
func (dbs *databases) DropDatabase(ctx context.Context, from string, st *sqlan.DatabaseStmt) error {
	name := st.Name
	dbs.op.Lock()
	defer dbs.op.Unlock()
	dbs.mu.Lock()
	d, ok := dbs.open[name]
	if ok && name != from && d.conns > 0 {
		// As PostgreSQL, give sessions that are ending time to end.
		end := time.Now().Add(dropWait)
		for d.conns > 0 {
			wait := time.Until(end)
			if wait <= 0 || ctx.Err() != nil {
				break
			}
			left := dbs.left
			dbs.mu.Unlock()
			timer := time.NewTimer(wait)
			select {
			case <-left:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
			dbs.mu.Lock()
		}
	}
	switch {
	case name == from:
		dbs.mu.Unlock()
		return pgerr.New(codeObjectInUse, "cannot drop the currently open database")
	case !ok && (name == admin.Database || name == dbs.top.cfg.Database && name != ""):
		dbs.mu.Unlock()
		return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not drop the database %q it is configured with", name)
	case !ok:
		dbs.mu.Unlock()
		if st.IfExists {
			return nil // PostgreSQL's NOTICE "does not exist, skipping" is not sent
		}
		return notExist(name)
	case d.conns > 0:
		n := d.conns
		dbs.mu.Unlock()
		if st.Force {
			return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support DROP DATABASE ... WITH (FORCE) while other sessions use the database")
		}
		detail := "There is 1 other session using the database."
		if n > 1 {
			detail = fmt.Sprintf("There are %d other sessions using the database.", n)
		}
		return pgerr.New(codeObjectInUse, "database %q is being accessed by other users", name).WithDetail("%s", detail)
	}
	d.dropping = true
	dbs.mu.Unlock()
	if err := dbs.setState(name, dbDropping); err != nil {
		dbs.mu.Lock()
		d.dropping = false
		dbs.mu.Unlock()
		return err
	}
	// From here the database is gone for clients; what is left is
	// cleaning up, which the next start finishes if it fails now.
	d.stop()
	dbs.mu.Lock()
	delete(dbs.open, name)
	dbs.mu.Unlock()
	dbs.dropReplicas(ctx, name)
	return nil
}

// dropReplicas drops every replica database of name and its directory,
// then forgets it; if any fails it stays "dropping", for the next start.
func (dbs *databases) dropReplicas(ctx context.Context, name string) {
	specs, err := dbs.specs(name)
	ok := err == nil
	for _, sp := range specs {
		if err := sp.drop(ctx); err != nil {
			ok = false
			dbs.top.log.Error("DROP DATABASE: cannot drop a replica database; retried at the next start", "database", name, "replica", sp.replica, "err", err)
		}
	}
	if err := os.RemoveAll(dbs.dir(name)); err != nil {
		ok = false
		dbs.top.log.Error("DROP DATABASE: cannot remove the database's directory; retried at the next start", "database", name, "err", err)
	}
	if ok {
		if err := dbs.setState(name, ""); err != nil {
			dbs.top.log.Error("DROP DATABASE", "database", name, "err", err)
		}
	}
}

// load reads databases.json, finishes what a crash interrupted and opens
// the ready databases.
func (dbs *databases) load(ctx context.Context) error {
	b, err := os.ReadFile(dbs.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var f dbFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", dbs.file, err)
	}
	dbs.entries = f.Databases
	for _, e := range slices.Clone(f.Databases) {
		switch e.State {
		case dbCreating:
			dbs.top.log.Warn("undoing a CREATE DATABASE that shepherd stopped in", "database", e.Name)
			specs, err := dbs.specs(e.Name)
			if err != nil {
				return err
			}
			dbs.undo(specs, e.Name)
		case dbDropping:
			dbs.top.log.Warn("finishing a DROP DATABASE", "database", e.Name)
			dbs.dropReplicas(ctx, e.Name)
		case dbReady:
			specs, err := dbs.specs(e.Name)
			if err != nil {
				return err
			}
			srv, err := open(ctx, dbs.subConfig(e.Name, specs), dbs.top.log.With("database", e.Name))
			if err != nil {
				return fmt.Errorf("database %q: %w", e.Name, err)
			}
			dbs.serve(e.Name, srv)
		default:
			return fmt.Errorf("%s: database %q in unknown state %q", dbs.file, e.Name, e.State)
		}
	}
	return nil
}

// closeAll stops serving every created database (shutdown).
func (dbs *databases) closeAll() {
	dbs.mu.Lock()
	all := make([]*database, 0, len(dbs.open))
	for _, d := range dbs.open {
		all = append(all, d)
	}
	dbs.open = map[string]*database{}
	dbs.mu.Unlock()
	for _, d := range all {
		d.stop()
	}
}

// setState records name in state ("" forgets it) in databases.json,
// durably: a temporary file, fsynced, renamed over the old one.
func (dbs *databases) setState(name, state string) error {
	dbs.mu.Lock()
	entries := slices.Clone(dbs.entries)
	i := slices.IndexFunc(entries, func(e dbEntry) bool { return e.Name == name })
	switch {
	case state == "" && i >= 0:
		entries = slices.Delete(entries, i, i+1)
	case state != "" && i >= 0:
		entries[i].State = state
	case state != "":
		entries = append(entries, dbEntry{Name: name, State: state})
	}
	dbs.mu.Unlock()
	b, err := json.MarshalIndent(dbFile{Databases: entries}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeDurably(dbs.file, b); err != nil {
		return pgerr.New(codeSystemError, "cannot record the list of databases: %v", err)
	}
	dbs.mu.Lock()
	dbs.entries = entries
	dbs.mu.Unlock()
	return nil
}

func writeDurably(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// dir is a created database's data directory.
func (dbs *databases) dir(name string) string {
	return filepath.Join(dbs.top.cfg.DataDir, "databases", name)
}

// subConfig is the configuration of a created database: the configured
// one with its own data directory and each replica's DSN pointing at the
// replica database made for it.
func (dbs *databases) subConfig(name string, specs []replicaDB) *config.Config {
	c := *dbs.top.cfg
	c.DataDir = dbs.dir(name)
	c.Replicas = slices.Clone(c.Replicas)
	for i := range c.Replicas {
		c.Replicas[i].DSN = specs[i].dsn
	}
	return &c
}

// replicaDB is one replica's database for a created database.
type replicaDB struct {
	replica  string
	driver   string
	adminDSN string // the configured DSN: where CREATE and DROP run
	dsn      string // the replica database's DSN
	engineDB string // its name on the engine (the file for SQLite)
}

// specs names every replica's database for the created database name.
func (dbs *databases) specs(name string) ([]replicaDB, error) {
	var out []replicaDB
	for _, r := range dbs.top.cfg.Replicas {
		sp := replicaDB{replica: r.Name, driver: r.Driver, adminDSN: r.DSN}
		switch r.Driver {
		case postgres.Name:
			cfg, err := pgconn.ParseConfig(r.DSN)
			if err != nil {
				return nil, pgerr.New(codeSystemError, "replica %s: %v", r.Name, err)
			}
			sp.engineDB = cfg.Database + "_" + name
			if u, err := url.Parse(r.DSN); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
				u.Path, u.RawPath = "/"+sp.engineDB, ""
				sp.dsn = u.String()
			} else {
				sp.dsn = r.DSN + " dbname=" + sp.engineDB // the last dbname counts
			}
		case mysql.Name:
			cfg, err := mysqldrv.ParseDSN(r.DSN)
			if err != nil {
				return nil, pgerr.New(codeSystemError, "replica %s: %v", r.Name, err)
			}
			sp.engineDB = cfg.DBName + "_" + name
			cfg.DBName = sp.engineDB
			sp.dsn = cfg.FormatDSN()
		default: // sqlite, sqlite-cgo: a file path
			sp.dsn = r.DSN
			if filepath.IsAbs(r.DSN) {
				sp.dsn = filepath.Base(r.DSN)
			}
			sp.engineDB = filepath.Join(dbs.dir(name), sp.dsn)
		}
		if r.Driver == postgres.Name || r.Driver == mysql.Name {
			if len(sp.engineDB) > 63 {
				return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support a database name this long: replica %s would need a database named %s, longer than 63 bytes", r.Name, sp.engineDB)
			}
		}
		out = append(out, sp)
	}
	return out, nil
}

// exists says whether the replica database exists already.
func (sp replicaDB) exists(ctx context.Context) (bool, error) {
	switch sp.driver {
	case postgres.Name:
		var found bool
		err := sp.pg(ctx, func(c *pgconn.PgConn) error {
			rr := c.ExecParams(ctx, "SELECT 1 FROM pg_database WHERE datname = $1", [][]byte{[]byte(sp.engineDB)}, nil, nil, nil)
			res := rr.Read()
			found = len(res.Rows) > 0
			return res.Err
		})
		return found, err
	case mysql.Name:
		var found bool
		err := sp.my(ctx, func(db *sql.DB) error {
			var one int
			err := db.QueryRowContext(ctx, "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?", sp.engineDB).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			found = err == nil
			return err
		})
		return found, err
	default:
		_, err := os.Stat(filepath.Dir(sp.engineDB))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
}

// create makes the replica database: empty, UTF-8, byte-order collation
// (the C locale shepherd requires of PostgreSQL replicas).
func (sp replicaDB) create(ctx context.Context) error {
	switch sp.driver {
	case postgres.Name:
		return sp.pg(ctx, func(c *pgconn.PgConn) error {
			_, err := c.Exec(ctx, "CREATE DATABASE "+quoteIdent(sp.engineDB)+" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'").ReadAll()
			return err
		})
	case mysql.Name:
		return sp.my(ctx, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, "CREATE DATABASE `"+sp.engineDB+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
			return err
		})
	default:
		return os.MkdirAll(filepath.Dir(sp.engineDB), 0o755)
	}
}

// drop drops the replica database if it exists. On PostgreSQL, WITH
// (FORCE) ends the backends of connections shepherd closed that the
// server has not reaped yet.
func (sp replicaDB) drop(ctx context.Context) error {
	switch sp.driver {
	case postgres.Name:
		return sp.pg(ctx, func(c *pgconn.PgConn) error {
			_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(sp.engineDB)+" WITH (FORCE)").ReadAll()
			return err
		})
	case mysql.Name:
		return sp.my(ctx, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+sp.engineDB+"`")
			return err
		})
	default:
		return nil // the directory goes with the database's
	}
}

func (sp replicaDB) pg(ctx context.Context, f func(*pgconn.PgConn) error) error {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	c, err := pgconn.Connect(cctx, sp.adminDSN)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return f(c)
}

func (sp replicaDB) my(ctx context.Context, f func(*sql.DB) error) error {
	cfg, err := mysqldrv.ParseDSN(sp.adminDSN)
	if err != nil {
		return err
	}
	conn, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := db.PingContext(cctx); err != nil {
		return err
	}
	return f(db)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
