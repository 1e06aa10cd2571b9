package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
)

// TLS is the [tls] table: TLS to clients. With cert and key set, a client
// that asks for TLS (SSLRequest) gets it; with require, a client that does
// not is refused (28000), as a PostgreSQL whose pg_hba.conf has hostssl
// lines only refuses it.
type TLS struct {
	// Cert and Key are PEM files: the server's certificate (chain) and its
	// private key.
	Cert string `toml:"cert"`
	Key  string `toml:"key"`
	// ClientCA, when set, is a PEM file of the certificate authorities
	// client certificates must be signed by: every client must then
	// present one (and so use TLS) besides authenticating as a user.
	ClientCA string `toml:"client_ca"`
	// Require refuses clients that do not use TLS.
	Require bool `toml:"require"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" }

// Config reads the files [tls] names and returns the TLS configuration
// clients are served with, or nil when TLS is not configured. Errors name
// the field at fault.
func (t TLS) Config() (*tls.Config, error) {
	switch {
	case !t.Enabled():
		if t.Require {
			return nil, fieldErr("tls.require", "needs tls.cert and tls.key")
		}
		if t.ClientCA != "" {
			return nil, fieldErr("tls.client_ca", "needs tls.cert and tls.key")
		}
		return nil, nil
	case t.Cert == "":
		return nil, fieldErr("tls.cert", "missing (tls.key is set)")
	case t.Key == "":
		return nil, fieldErr("tls.key", "missing (tls.cert is set)")
	}
	if _, err := os.Stat(t.Cert); err != nil {
		return nil, fieldErr("tls.cert", "%v", err)
	}
	if _, err := os.Stat(t.Key); err != nil {
		return nil, fieldErr("tls.key", "%v", err)
	}
	pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fieldErr("tls.cert", "with tls.key: %v", err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{pair},
		// PostgreSQL's default ssl_min_protocol_version.
		MinVersion: tls.VersionTLS12,
	}
	if t.ClientCA != "" {
		pem, err := os.ReadFile(t.ClientCA)
		if err != nil {
			return nil, fieldErr("tls.client_ca", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fieldErr("tls.client_ca", "no PEM certificate in %s", t.ClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// RequireTLS reports whether a client must use TLS: require is set, or
// client certificates are asked for.
func (t TLS) RequireTLS() bool { return t.Require || t.ClientCA != "" }

// DefaultMaxConnections is MaxConnections when unset: PostgreSQL's default.
const DefaultMaxConnections = 100

// MaxConnectionsLimit bounds max_connections.
const MaxConnectionsLimit = 1 << 20

// Connections returns max_connections with its default applied.
func (c *Config) Connections() int {
	if c.MaxConnections == 0 {
		return DefaultMaxConnections
	}
	return c.MaxConnections
}

// DefaultMaxTransactions is MaxTransactions when unset. A transaction
// holds one engine connection on each replica from its first statement
// until every replica is done with it; shepherd's own work (liveness
// probes, catch-up, repair, DDL intents, log-table trims) takes a few
// more per replica. 64 stays clear of PostgreSQL's default
// max_connections (100, 3 of them reserved) and MariaDB's (151).
const DefaultMaxTransactions = 64

// Transactions returns max_transactions with its default applied.
func (c *Config) Transactions() int {
	if c.MaxTransactions == 0 {
		return DefaultMaxTransactions
	}
	return c.MaxTransactions
}

// DefaultReservedConnections is ReservedConnections when unset (but
// fewer than max_connections): PostgreSQL's superuser_reserved_connections.
const DefaultReservedConnections = 3

// Reserved returns reserved_connections with its default applied: the
// slots of max_connections only admin users may take.
func (c *Config) Reserved() int {
	if c.ReservedConnections == nil {
		return min(DefaultReservedConnections, c.Connections()-1)
	}
	return *c.ReservedConnections
}

// Admins returns the names of the users who may open the admin console,
// and whether every user may (no [[users]] configured: any name is let in
// by trust, from loopback only).
func (c *Config) Admins() (names map[string]bool, everyone bool) {
	if len(c.Users) == 0 {
		return nil, true
	}
	names = map[string]bool{}
	for _, u := range c.Users {
		if u.Admin {
			names[u.Name] = true
		}
	}
	return names, false
}

// checkAccess validates [tls], max_connections, max_transactions and who may log in from
// where.
func (c *Config) checkAccess() error {
	if _, err := c.TLS.Config(); err != nil {
		return err
	}
	if c.MaxConnections < 0 || c.MaxConnections > MaxConnectionsLimit {
		return fieldErr("max_connections", "must be between 1 and %d (0 or unset: %d), not %d",
			MaxConnectionsLimit, DefaultMaxConnections, c.MaxConnections)
	}
	if c.MaxTransactions < 0 || c.MaxTransactions > MaxConnectionsLimit {
		return fieldErr("max_transactions", "must be between 1 and %d (0 or unset: %d), not %d",
			MaxConnectionsLimit, DefaultMaxTransactions, c.MaxTransactions)
	}
	if r := c.ReservedConnections; r != nil && (*r < 0 || *r >= c.Connections()) {
		return fieldErr("reserved_connections", "must be at least 0 and less than max_connections (%d), not %d", c.Connections(), *r)
	}
	if IsLoopback(c.Listen) {
		return nil
	}
	for i, u := range c.Users {
		if u.Password == "" {
			return fieldErr(fmt.Sprintf("users[%d].password", i),
				"user %q has no password, so anyone could log in as it by trust, and listen = %q reaches beyond loopback: set a password, or listen on a loopback address",
				u.Name, c.Listen)
		}
	}
	return nil
}

// IsLoopback reports whether the listen address addr (host:port) accepts
// connections from this host only: a loopback IP, or localhost. An empty
// host, an unspecified address or any other name listens beyond.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
