package bench

import (
	"fmt"
	"net"
	"net/url"

	"github.com/go-sql-driver/mysql"

	"github.com/shepherd-db/shepherd/internal/bench/link"
	"github.com/shepherd-db/shepherd/internal/latency"
)

// Links are the delaying links WithLinks put in front of the engines.
type Links struct {
	// Config is every link's.
	Config link.Config
	// Proxies are the links, by engine name ("mariadb", "postgres").
	Proxies map[string]*link.Proxy
}

// Settings returns the links' settings for a report, nil without links.
func (l *Links) Settings() *LinkSettings {
	if l == nil {
		return nil
	}
	return &LinkSettings{Delay: l.Config.Delay, Jitter: l.Config.Jitter, Bandwidth: l.Config.Bandwidth}
}

// Held returns how long each link held its chunks so far, by engine
// name; nil without links.
func (l *Links) Held() map[string]latency.Summary {
	if l == nil {
		return nil
	}
	out := map[string]latency.Summary{}
	for name, p := range l.Proxies {
		out[name] = p.Delays()
	}
	return out
}

// Close closes every link.
func (l *Links) Close() {
	if l == nil {
		return
	}
	for _, p := range l.Proxies {
		_ = p.Close()
	}
}

// WithLinks returns the engines as reached through a link of cfg each
// (package link): MariaDB and PostgreSQL behind a TCP proxy in this
// process that delays every chunk of bytes each way, as if they ran on
// machines of their own; SQLite, an embedded library, stays local.
// Everything that reaches a server goes through its link: shepherd's
// replicas, the direct modes' clients and the bound's (as a client on
// another machine would), and the databases' creation.
func (e *Engines) WithLinks(cfg link.Config) (*Engines, *Links, error) {
	out := *e
	links := &Links{Config: cfg, Proxies: map[string]*link.Proxy{}}
	if e.MariaDB != "" {
		mc, err := mysql.ParseDSN(e.MariaDB)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: MariaDB DSN: %w", err)
		}
		if mc.Net != "tcp" {
			return nil, nil, fmt.Errorf("bench: a link needs MariaDB over TCP, not %q", mc.Net)
		}
		p, err := link.Listen(mc.Addr, cfg)
		if err != nil {
			return nil, nil, err
		}
		links.Proxies["mariadb"] = p
		mc.Addr = p.Addr()
		out.MariaDB = mc.FormatDSN()
	}
	if e.Postgres != "" {
		u, err := url.Parse(e.Postgres)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" || u.Query().Has("host") {
			links.Close()
			return nil, nil, fmt.Errorf("bench: a link needs a postgres:// URL with one TCP host, got %q", e.Postgres)
		}
		target := u.Host
		if u.Port() == "" {
			target = net.JoinHostPort(u.Hostname(), "5432")
		}
		p, err := link.Listen(target, cfg)
		if err != nil {
			links.Close()
			return nil, nil, err
		}
		links.Proxies["postgres"] = p
		u.Host = p.Addr()
		out.Postgres = u.String()
	}
	return &out, links, nil
}
