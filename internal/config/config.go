// Package config reads and checks shepherd's TOML configuration. Every
// problem is reported with the name of the field at fault, before anything
// starts.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the whole configuration file.
type Config struct {
	// Listen is the address clients connect to.
	Listen string `toml:"listen"`
	// DataDir holds shepherd's files (embedded replicas, later its log).
	DataDir string `toml:"data_dir"`
	// Database is the name clients connect to for the configured
	// replicas' database; any other name is a database made with CREATE
	// DATABASE, or does not exist (3D000). "" lets every name that is not
	// a created database reach the configured one.
	Database string `toml:"database"`
	// Mode is the replication mode: passthrough, serial, cbs or ss.
	Mode string `toml:"mode"`
	// F is the number of faulty replicas tolerated; replicas must number
	// at least 2F+1.
	F int `toml:"f"`
	// DigestRows: in cbs and ss, a secondary keeps only the digest of an
	// answer of more rows than this (the vote needs no more; clients get
	// the primary's rows). -1 keeps every answer whole. Unset means
	// DefaultDigestRows.
	DigestRows *int `toml:"digest_rows"`
	// PrimaryTimeout is how long the primary (cbs, ss) may leave work
	// unanswered, answering nothing else, before another replica takes
	// its role: a duration ("5s"), or "off". Each view change doubles it
	// for the next primary; stable progress brings it back.
	PrimaryTimeout string `toml:"primary_timeout"`
	// ProbeInterval is how often shepherd asks each replica's engine a
	// trivial question on a connection of its own (cbs, ss), and
	// ProbeTimeout how long the engine has to answer before it counts as
	// hung and is taken out (a primary's role passes on). A primary whose
	// engine answers is never replaced for one slow statement. Durations;
	// unset means 1s and 2s (at most a third of primary_timeout, and
	// primary_timeout); probe_interval "off" turns probes off.
	ProbeInterval string `toml:"probe_interval"`
	ProbeTimeout  string `toml:"probe_timeout"`
	// OpTimeout (cbs, ss) is how long the primary may leave one statement
	// unanswered while it answers probes and other work before it is
	// suspected of withholding it (selective silence, HRDB paper 3.4)
	// and replaced: a duration, or "" / "off" for never (the default: a
	// legitimate statement may run or wait for a lock that long).
	OpTimeout string `toml:"op_timeout"`
	// CursorMemoryMB bounds, in MiB, the rows one session's cursors keep
	// together (shepherd runs a cursor's query at DECLARE and keeps its
	// answer). 0 or unset means DefaultCursorMemoryMB.
	CursorMemoryMB int `toml:"cursor_memory_mb"`
	// AnswerMemoryMB bounds, in MiB, the rows of one statement's answer
	// shepherd holds in memory (a session runs one statement at a time).
	// Past it, rows that go to the client as they are (a query's answer,
	// COPY TO, a cursor's query) are spilled to an unlinked file in
	// data_dir and read back as they are sent; a statement whose rows
	// shepherd needs itself fails with 53200. 0 or unset means
	// DefaultAnswerMemoryMB.
	AnswerMemoryMB int `toml:"answer_memory_mb"`
	// MemoryLimitMB is a soft bound, in MiB, on the memory shepherd's Go
	// runtime uses (runtime/debug.SetMemoryLimit, as GOMEMLIMIT): near
	// it the garbage collector runs as often as it must to stay under.
	// It does not refuse work: the limits on statements, connections,
	// transactions and cursors bound what that work can take. 0 or
	// unset means none (GOMEMLIMIT applies, if set).
	MemoryLimitMB int `toml:"memory_limit_mb"`
	// MaxConnections caps the client connections served at once
	// (access.go); 0 or unset means DefaultMaxConnections.
	MaxConnections int `toml:"max_connections"`
	// ReservedConnections of them are kept for admin users (access.go).
	ReservedConnections *int `toml:"reserved_connections"`
	// MaxTransactions caps the client transactions live at once, each of
	// which holds an engine connection on every replica; one more waits
	// for a slot (access.go); 0 or unset means DefaultMaxTransactions.
	MaxTransactions int `toml:"max_transactions"`
	// ClientWriteTimeout bounds one write to a client that makes no
	// progress (a client that never reads its answers would otherwise
	// hold its transaction, locks and answer forever): a duration of at
	// least 1s, or "off"; unset means 5m (pgwire.DefaultWriteTimeout).
	ClientWriteTimeout string `toml:"client_write_timeout"`
	// TLS is TLS to clients (access.go).
	TLS TLS `toml:"tls"`
	// Repair is the background compare-and-repair of the replicas.
	Repair Repair `toml:"repair"`
	// Cluster is the [cluster] table (cluster.go): standby nodes on etcd.
	// Absent, shepherd is one node.
	Cluster Cluster `toml:"cluster"`
	// Metrics and Log are the [metrics] and [log] tables (ops.go).
	Metrics  Metrics   `toml:"metrics"`
	Log      Log       `toml:"log"`
	Users    []User    `toml:"users"`
	Replicas []Replica `toml:"replicas"`
}

// Repair is the [repair] table: how shepherd looks for rows on which the
// replicas differ, in the background, and heals them.
type Repair struct {
	// Mode is "repair" (rewrite rows f+1 replicas agree on to the
	// others), "check" (only report) or "off". "" means "repair".
	Mode string `toml:"mode"`
	// Every is the pause between background passes ("1h"). "" means
	// DefaultRepairEvery.
	Every string `toml:"every"`
	// Rate is the most rows per second a background pass compares; 0
	// means DefaultRepairRate.
	Rate int `toml:"rate"`
}

// RepairModes are the values repair.mode accepts.
var RepairModes = []string{"", "repair", "check", "off"}

// Defaults of [repair].
const (
	DefaultRepairEvery = time.Hour
	DefaultRepairRate  = 5000
)

// RepairEvery returns repair.every with its default applied.
func (c *Config) RepairEvery() (time.Duration, error) {
	if c.Repair.Every == "" {
		return DefaultRepairEvery, nil
	}
	d, err := time.ParseDuration(c.Repair.Every)
	if err != nil || d < 10*time.Millisecond {
		return 0, fmt.Errorf("%q is not a duration of at least 10ms", c.Repair.Every)
	}
	return d, nil
}

// RepairRate returns repair.rate with its default applied.
func (c *Config) RepairRate() int {
	if c.Repair.Rate == 0 {
		return DefaultRepairRate
	}
	return c.Repair.Rate
}

// User is a client login. A user without password is let in by trust.
type User struct {
	Name     string `toml:"name"`
	Password string `toml:"password"`
	// Admin lets the user open the admin console (database shepherd).
	Admin bool `toml:"admin"`
}

// Replica is one database behind shepherd.
type Replica struct {
	Name   string `toml:"name"`
	Driver string `toml:"driver"`
	DSN    string `toml:"dsn"`
	// Fault makes the replica misbehave on purpose, for tests and demos.
	Fault Fault `toml:"fault"`
	// Schedule is how the replica runs as a cbs secondary: "concurrent"
	// (under the ordering rules) or "sequential" (one transaction at a
	// time, in commit order). "" picks by class: concurrent for locking
	// engines, sequential for MVCC and serial ones.
	Schedule string `toml:"schedule"`
}

// Fault is a replica's [replicas.fault] table: faults injected on
// purpose (package driver/fault). The zero Fault injects nothing.
type Fault struct {
	// WrongAnswerRate is the probability that an answer with rows is
	// corrupted.
	WrongAnswerRate float64 `toml:"wrong_answer_rate"`
	// WrongCountRate is the probability that a write reports one row
	// more than it changed.
	WrongCountRate float64 `toml:"wrong_count_rate"`
	// StallRate is the probability that a statement waits StallMS first.
	StallRate float64 `toml:"stall_rate"`
	StallMS   int     `toml:"stall_ms"`
	// MisorderRate is the probability that an answer's rows come in
	// reverse order.
	MisorderRate float64 `toml:"misorder_rate"`
	// Seed seeds the replica's fault decisions: the same seed and the same
	// statements give the same faults.
	Seed int64 `toml:"seed"`
	// Isolation overrides the isolation level of a mysql replica, e.g.
	// "read-uncommitted" to make it block too little (the HRDB paper's
	// Figure 5). "" keeps the driver's SERIALIZABLE.
	Isolation string `toml:"isolation"`
}

// Active reports whether f injects any fault (as fault.Config.Active):
// only then is the replica's engine wrapped to inject them.
func (f Fault) Active() bool {
	return f.WrongAnswerRate > 0 || f.WrongCountRate > 0 || (f.StallRate > 0 && f.StallMS > 0) || f.MisorderRate > 0
}

// Schedules are the values replicas[].schedule accepts.
var Schedules = []string{"", "concurrent", "sequential"}

// MaxStallMS bounds fault.stall_ms: one hour.
const MaxStallMS = 3_600_000

// Isolations are the values fault.isolation accepts besides "".
var Isolations = []string{"read-uncommitted", "read-committed", "repeatable-read", "serializable"}

// Defaults for fields the file leaves out.
const (
	DefaultListen  = "127.0.0.1:6543"
	DefaultDataDir = "./shepherd-data"
	DefaultMode    = "cbs"
	// DefaultDigestRows is DigestRows when unset.
	DefaultDigestRows = 64
	// DefaultCursorMemoryMB is CursorMemoryMB when unset.
	DefaultCursorMemoryMB = 256
	// DefaultAnswerMemoryMB is AnswerMemoryMB when unset.
	DefaultAnswerMemoryMB = 32
)

// Modes lists the modes this build implements.
var Modes = []string{"passthrough", "serial", "cbs", "ss"}

// Error is a configuration error about one field.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return "config: " + e.Msg
	}
	return "config: " + e.Field + ": " + e.Msg
}

func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Load reads and checks the file at path. knownDrivers are the driver
// names this binary has.
func Load(path string, knownDrivers []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	return Parse(string(data), knownDrivers)
}

// Parse reads and checks a configuration given as text.
func Parse(text string, knownDrivers []string) (*Config, error) {
	var c Config
	md, err := toml.Decode(text, &c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Msg: fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)}
		}
		return nil, typeError(err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fieldErr(und[0].String(), "unknown key")
	}
	c.applyDefaults()
	if err := c.Check(knownDrivers); err != nil {
		return nil, err
	}
	return &c, nil
}

// typeError turns a decoding error (a value of the wrong type) into a
// field error; BurntSushi/toml names the key in its message.
func typeError(err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "toml: ")
	return &Error{Msg: msg}
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
}

// DefaultPrimaryTimeout is PrimaryTimeout when unset.
const DefaultPrimaryTimeout = 5 * time.Second

// PrimaryTimeoutDuration returns PrimaryTimeout with its default applied;
// 0 means never.
func (c *Config) PrimaryTimeoutDuration() (time.Duration, error) {
	switch c.PrimaryTimeout {
	case "":
		return DefaultPrimaryTimeout, nil
	case "off":
		return 0, nil
	}
	d, err := time.ParseDuration(c.PrimaryTimeout)
	if err != nil || d < 100*time.Millisecond {
		return 0, fmt.Errorf("%q is not a duration of at least 100ms (or \"off\")", c.PrimaryTimeout)
	}
	return d, nil
}

// Probes returns ProbeInterval and ProbeTimeout as durations: 0 for the
// defaults (the cluster fits them to the primary timeout), and an interval
// of -1 for "off".
func (c *Config) Probes() (every, deadline time.Duration, err error) {
	parse := func(field, v string) (time.Duration, error) {
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Millisecond {
			return 0, fieldErr(field, "%q is not a duration of at least 10ms", v)
		}
		return d, nil
	}
	if c.ProbeInterval == "off" {
		every = -1
	} else if every, err = parse("probe_interval", c.ProbeInterval); err != nil {
		return 0, 0, err
	}
	deadline, err = parse("probe_timeout", c.ProbeTimeout)
	return every, deadline, err
}

// OpTimeoutDuration returns OpTimeout; 0 means never.
func (c *Config) OpTimeoutDuration() (time.Duration, error) {
	if c.OpTimeout == "" || c.OpTimeout == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.OpTimeout)
	if err != nil || d < time.Second {
		return 0, fieldErr("op_timeout", "%q is not a duration of at least 1s (or \"off\")", c.OpTimeout)
	}
	return d, nil
}

// ClientWriteTimeoutDuration returns ClientWriteTimeout as
// pgwire.Server.WriteTimeout takes it: 0 for the default, negative for
// none.
func (c *Config) ClientWriteTimeoutDuration() (time.Duration, error) {
	switch c.ClientWriteTimeout {
	case "":
		return 0, nil
	case "off":
		return -1, nil
	}
	d, err := time.ParseDuration(c.ClientWriteTimeout)
	if err != nil || d < time.Second {
		return 0, fieldErr("client_write_timeout", "%q is not a duration of at least 1s (or \"off\")", c.ClientWriteTimeout)
	}
	return d, nil
}

// CursorMemory returns CursorMemoryMB in bytes, with its default applied.
func (c *Config) CursorMemory() int64 {
	if c.CursorMemoryMB <= 0 {
		return DefaultCursorMemoryMB << 20
	}
	return int64(c.CursorMemoryMB) << 20
}

// AnswerMemory returns AnswerMemoryMB in bytes, with its default applied.
func (c *Config) AnswerMemory() int64 {
	if c.AnswerMemoryMB <= 0 {
		return DefaultAnswerMemoryMB << 20
	}
	return int64(c.AnswerMemoryMB) << 20
}

// Digests returns DigestRows with its default applied.
func (c *Config) Digests() int {
	if c.DigestRows == nil {
		return DefaultDigestRows
	}
	return *c.DigestRows
}

// Check validates a complete configuration.
func (c *Config) Check(knownDrivers []string) error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fieldErr("listen", "%q is not host:port", c.Listen)
	}
	if c.Database == "shepherd" {
		return fieldErr("database", "%q is the admin console's name", c.Database)
	}
	if !slices.Contains(Modes, c.Mode) {
		return fieldErr("mode", "unknown mode %q; use one of %s", c.Mode, strings.Join(Modes, ", "))
	}
	if c.F < 0 {
		return fieldErr("f", "must be 0 or more, not %d", c.F)
	}
	if _, err := c.PrimaryTimeoutDuration(); err != nil {
		return fieldErr("primary_timeout", "%v", err)
	}
	if _, _, err := c.Probes(); err != nil {
		return err
	}
	if _, err := c.ClientWriteTimeoutDuration(); err != nil {
		return err
	}
	if _, err := c.OpTimeoutDuration(); err != nil {
		return err
	}
	if err := c.checkOps(); err != nil {
		return err
	}
	if err := c.checkCluster(); err != nil {
		return err
	}
	if !slices.Contains(RepairModes, c.Repair.Mode) {
		return fieldErr("repair.mode", "unknown mode %q; use repair, check or off", c.Repair.Mode)
	}
	if _, err := c.RepairEvery(); err != nil {
		return fieldErr("repair.every", "%v", err)
	}
	if c.Repair.Rate < 0 {
		return fieldErr("repair.rate", "must be 0 (the default, %d rows/s) or more, not %d", DefaultRepairRate, c.Repair.Rate)
	}
	if c.CursorMemoryMB < 0 || c.CursorMemoryMB > 1<<20 {
		return fieldErr("cursor_memory_mb", "must be between 0 (the default, %d) and %d, not %d", DefaultCursorMemoryMB, 1<<20, c.CursorMemoryMB)
	}
	if c.AnswerMemoryMB < 0 || c.AnswerMemoryMB > 1<<20 {
		return fieldErr("answer_memory_mb", "must be between 0 (the default, %d) and %d, not %d", DefaultAnswerMemoryMB, 1<<20, c.AnswerMemoryMB)
	}
	if c.MemoryLimitMB < 0 || c.MemoryLimitMB > 1<<24 {
		return fieldErr("memory_limit_mb", "must be between 0 (the default: no limit) and %d, not %d", 1<<24, c.MemoryLimitMB)
	}
	if c.DigestRows != nil && *c.DigestRows < -1 {
		return fieldErr("digest_rows", "must be -1 (keep every answer) or more, not %d", *c.DigestRows)
	}
	users := map[string]bool{}
	for i, u := range c.Users {
		f := fmt.Sprintf("users[%d].name", i)
		if u.Name == "" {
			return fieldErr(f, "missing")
		}
		if users[u.Name] {
			return fieldErr(f, "user %q listed twice", u.Name)
		}
		users[u.Name] = true
	}
	if err := c.checkAccess(); err != nil {
		return err
	}
	if len(c.Replicas) == 0 {
		return fieldErr("replicas", "at least one [[replicas]] entry is needed")
	}
	names := map[string]bool{}
	for i, r := range c.Replicas {
		p := fmt.Sprintf("replicas[%d]", i)
		switch {
		case r.Name == "":
			return fieldErr(p+".name", "missing")
		case names[r.Name]:
			return fieldErr(p+".name", "replica %q listed twice", r.Name)
		case r.Driver == "":
			return fieldErr(p+".driver", "missing (one of %s)", strings.Join(knownDrivers, ", "))
		case !slices.Contains(knownDrivers, r.Driver):
			return fieldErr(p+".driver", "unknown driver %q (one of %s)", r.Driver, strings.Join(knownDrivers, ", "))
		case r.DSN == "":
			return fieldErr(p+".dsn", "missing")
		}
		if !slices.Contains(Schedules, r.Schedule) {
			return fieldErr(p+".schedule", "unknown schedule %q; use concurrent or sequential", r.Schedule)
		}
		if err := r.Fault.check(p+".fault", r.Driver); err != nil {
			return err
		}
		names[r.Name] = true
	}
	n := len(c.Replicas)
	if c.Mode == "passthrough" {
		if n != 1 {
			return fieldErr("replicas", "mode passthrough takes exactly one replica, not %d", n)
		}
		if c.F != 0 {
			return fieldErr("f", "mode passthrough tolerates no faulty replica: f must be 0, not %d", c.F)
		}
		return nil
	}
	if n < 2*c.F+1 {
		return fieldErr("replicas", "f = %d needs at least 2f+1 = %d replicas, not %d", c.F, 2*c.F+1, n)
	}
	return nil
}

// check validates a fault table; p is its field path.
func (f Fault) check(p, driverName string) error {
	for _, r := range []struct {
		key  string
		rate float64
	}{
		{"wrong_answer_rate", f.WrongAnswerRate},
		{"wrong_count_rate", f.WrongCountRate},
		{"stall_rate", f.StallRate},
		{"misorder_rate", f.MisorderRate},
	} {
		if !(r.rate >= 0 && r.rate <= 1) { // NaN too
			return fieldErr(p+"."+r.key, "must be between 0 and 1")
		}
	}
	switch {
	case f.StallMS < 0 || f.StallMS > MaxStallMS:
		return fieldErr(p+".stall_ms", "must be between 0 and %d", MaxStallMS)
	case f.StallRate > 0 && f.StallMS == 0:
		return fieldErr(p+".stall_ms", "must be more than 0 when stall_rate is set")
	case f.Isolation != "" && driverName != "mysql":
		return fieldErr(p+".isolation", "only a mysql replica takes an isolation override, not %s", driverName)
	case f.Isolation != "" && !slices.Contains(Isolations, f.Isolation):
		return fieldErr(p+".isolation", "unknown level %q; use one of %s", f.Isolation, strings.Join(Isolations, ", "))
	}
	return nil
}

// Embedded returns the configuration used when no file is given:
// EmbeddedReplicas, f = 1, the default mode (cbs), trust for any user
// on loopback.
func Embedded() *Config {
	return EmbeddedWith(EmbeddedReplicas())
}

// EmbeddedWith is Embedded with other replicas (EmbeddedSQLite,
// EmbeddedDiverse).
func EmbeddedWith(replicas []Replica) *Config {
	return &Config{
		Listen:   DefaultListen,
		DataDir:  DefaultDataDir,
		Mode:     DefaultMode,
		F:        1,
		Replicas: replicas,
	}
}

// EmbeddedReplicas returns the replicas of the embedded default.
func EmbeddedReplicas() []Replica { return EmbeddedSQLite() }

// EmbeddedSQLite returns three embedded SQLite replicas from two builds
// of the engine (modernc's Go translation and the C source through cgo).
// A logic bug of SQLite itself hits all three.
func EmbeddedSQLite() []Replica {
	return []Replica{
		{Name: "lite1", Driver: "sqlite", DSN: "lite1.db"},
		{Name: "lite2", Driver: "sqlite-cgo", DSN: "lite2.db"},
		{Name: "lite3", Driver: "sqlite", DSN: "lite3.db"},
	}
}

// EmbeddedDiverse returns two embedded SQLite replicas (the two builds)
// and a DuckDB one, an engine written independently of SQLite: a logic
// bug of one engine is out-voted by the other.
func EmbeddedDiverse() []Replica {
	return []Replica{
		{Name: "lite1", Driver: "sqlite", DSN: "lite1.db"},
		{Name: "lite2", Driver: "sqlite-cgo", DSN: "lite2.db"},
		{Name: "duck", Driver: "duckdb", DSN: "duck.duckdb"},
	}
}
