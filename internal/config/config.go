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

	"github.com/BurntSushi/toml"
)

// Config is the whole configuration file.
type Config struct {
	// Listen is the address clients connect to.
	Listen string `toml:"listen"`
	// DataDir holds shepherd's files (embedded replicas, later its log).
	DataDir string `toml:"data_dir"`
	// Mode is the replication mode: passthrough or serial.
	Mode string `toml:"mode"`
	// F is the number of faulty replicas tolerated; replicas must number
	// at least 2F+1.
	F        int       `toml:"f"`
	Users    []User    `toml:"users"`
	Replicas []Replica `toml:"replicas"`
}

// User is a client login. A user without password is let in by trust.
type User struct {
	Name     string `toml:"name"`
	Password string `toml:"password"`
}

// Replica is one database behind shepherd.
type Replica struct {
	Name   string `toml:"name"`
	Driver string `toml:"driver"`
	DSN    string `toml:"dsn"`
}

// Defaults for fields the file leaves out.
const (
	DefaultListen  = "127.0.0.1:6543"
	DefaultDataDir = "./shepherd-data"
	DefaultMode    = "serial"
)

// Modes lists the modes this build implements.
var Modes = []string{"passthrough", "serial"}

// plannedModes are modes users may know from the docs that are not built yet.
var plannedModes = []string{"cbs", "ss"}

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

// Check validates a complete configuration.
func (c *Config) Check(knownDrivers []string) error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fieldErr("listen", "%q is not host:port", c.Listen)
	}
	switch {
	case slices.Contains(Modes, c.Mode):
	case slices.Contains(plannedModes, c.Mode):
		return fieldErr("mode", "%q is not implemented yet; use one of %s", c.Mode, strings.Join(Modes, ", "))
	default:
		return fieldErr("mode", "unknown mode %q; use one of %s", c.Mode, strings.Join(Modes, ", "))
	}
	if c.F < 0 {
		return fieldErr("f", "must be 0 or more, not %d", c.F)
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

// Embedded returns the configuration used when no file is given: three
// embedded SQLite replicas from two independent builds of the engine,
// f = 1, serial mode, trust for any user on loopback.
func Embedded() *Config {
	return &Config{
		Listen:  DefaultListen,
		DataDir: DefaultDataDir,
		Mode:    DefaultMode,
		F:       1,
		Replicas: []Replica{
			{Name: "lite1", Driver: "sqlite", DSN: "lite1.db"},
			{Name: "lite2", Driver: "sqlite-cgo", DSN: "lite2.db"},
			{Name: "lite3", Driver: "sqlite", DSN: "lite3.db"},
		},
	}
}
