package config

import (
	"log/slog"
	"net"
	"slices"
	"strings"
)

// Metrics is the [metrics] table: the Prometheus endpoint.
type Metrics struct {
	// Listen is the address of the HTTP endpoint serving /metrics in
	// Prometheus' text format. "" (the default) serves none: the metrics
	// name the replicas and tell the load, which an operator shows only
	// where she chooses. A loopback address ("127.0.0.1:9187") is the
	// usual choice next to a local Prometheus agent.
	Listen string `toml:"listen"`
}

// Log is the [log] table: shepherd's own log, on standard error.
type Log struct {
	// Level is the least severe level written: debug, info (the
	// default), warn or error. It changes on reload.
	Level string `toml:"level"`
	// Format is text (the default: key=value) or json (one object a
	// line).
	Format string `toml:"format"`
	// Refused, when true, logs at info every statement shepherd refuses
	// (SQLSTATE 0A000, or a limit: class 54) with its text, user and
	// database; otherwise those, like every other error a client gets,
	// are logged at debug only. It changes on reload.
	Refused bool `toml:"refused"`
}

// LogLevels are the values log.level accepts ("" is info).
var LogLevels = []string{"", "debug", "info", "warn", "error"}

// LogFormats are the values log.format accepts ("" is text).
var LogFormats = []string{"", "text", "json"}

// SlogLevel returns log.level as a slog level.
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// checkOps validates the [metrics] and [log] tables.
func (c *Config) checkOps() error {
	if a := c.Metrics.Listen; a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fieldErr("metrics.listen", "%q is not host:port", a)
		}
	}
	if !slices.Contains(LogLevels, c.Log.Level) {
		return fieldErr("log.level", "unknown level %q; use %s", c.Log.Level, strings.Join(LogLevels[1:], ", "))
	}
	if !slices.Contains(LogFormats, c.Log.Format) {
		return fieldErr("log.format", "unknown format %q; use text or json", c.Log.Format)
	}
	return nil
}
