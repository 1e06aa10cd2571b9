package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// Options shape a server of StartPostgres or StartMariaDB. The zero value
// starts it with the tests' settings.
type Options struct {
	// Durable makes every COMMIT reach the disk before it is
	// acknowledged, as production servers run: PostgreSQL with fsync,
	// synchronous_commit and full_page_writes on; MariaDB with
	// innodb_flush_log_at_trx_commit=1 and the doublewrite buffer.
	// Without it (the tests' servers) commits reach the kernel but are
	// not synced: a killed server loses nothing, a crashed machine may.
	Durable bool
	// Settings are more server settings, by name, applied after
	// testenv's own and Durable's (which they override): PostgreSQL's
	// "-c name=value", MariaDB's "--name=value".
	Settings map[string]string
}

// settings are a server's name=value settings in the order given.
type settings [][2]string

// put sets name to value, in place if name is already set.
func (s *settings) put(name, value string) {
	for i := range *s {
		if (*s)[i][0] == name {
			(*s)[i][1] = value
			return
		}
	}
	*s = append(*s, [2]string{name, value})
}

// putAll puts every setting of m, in name order (the command line is then
// the same from one start to the next).
func (s *settings) putAll(m map[string]string) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		s.put(k, m[k])
	}
}

// Server is a database server started for a program rather than a test:
// the benchmark command (cmd/shepherd-bench) uses the tests' own steps
// through StartPostgres, StartMariaDB and StartPgBouncer. It is not shared
// and not stopped by Stop: its owner calls Stop. Should the program die
// first, the kernel kills the server (Pdeathsig).
type Server struct {
	// DSN reaches the server as a user that may create databases: a
	// postgres:// URL (database postgres) for PostgreSQL and PgBouncer,
	// a go-sql-driver/mysql DSN (no database) for MariaDB.
	DSN string
	s   *server
}

// Stop shuts the server down (killing it if it takes too long) and
// removes its directory.
func (s *Server) Stop() {
	if s != nil && s.s != nil {
		s.s.stop()
	}
}

// StartPostgres starts a PostgreSQL 15 server in a temporary directory of
// its own, on 127.0.0.1 at a free port.
func StartPostgres(ctx context.Context, opts Options) (*Server, error) {
	dir, data, port, who, err := initPostgres()
	if err != nil {
		return nil, err
	}
	srv, err := runPostgres(ctx, dir, data, port, who, nil, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &Server{DSN: srv.dsn("postgres"), s: srv.server}, nil
}

// StartMariaDB starts a MariaDB server in a temporary directory of its
// own, on 127.0.0.1 at a free port, with an account that may do anything
// over TCP.
func StartMariaDB(ctx context.Context, opts Options) (*Server, error) {
	dir, data, port, who, err := initMariaDB()
	if err != nil {
		return nil, err
	}
	srv, err := runMariaDB(ctx, dir, data, port, who, nil, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := srv.createUser(ctx); err != nil {
		srv.stop()
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net = mariaUser, mariaPassword, "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", srv.port)
	return &Server{DSN: cfg.FormatDSN(), s: srv.server}, nil
}

// StartPgBouncer starts Debian's pgbouncer in front of the PostgreSQL
// server at host:port, in session pooling with trust authentication,
// serving database under the same name as user postgres; poolSize bounds
// its server connections. The Server's DSN is a postgres:// URL of that
// database through it.
func StartPgBouncer(ctx context.Context, host string, port int, database string, poolSize int) (*Server, error) {
	bin, err := findBinary("pgbouncer", "pgbouncer", "/usr/sbin/pgbouncer")
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(database, " =\n[]") {
		return nil, fmt.Errorf("testenv: pgbouncer: database name %q", database)
	}
	who, err := lookupRunAs("postgres") // pgbouncer refuses to run as root
	if err != nil {
		return nil, err
	}
	dir, err := who.makeDir("shepherd-pgbouncer-*")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	listen, err := freePort()
	if err != nil {
		return fail(err)
	}
	ini := fmt.Sprintf(`[databases]
%[1]s = host=%[2]s port=%[3]d dbname=%[1]s user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %[4]d
unix_socket_dir = %[5]s
auth_type = trust
auth_file = %[5]s/users.txt
pool_mode = session
max_client_conn = 1000
default_pool_size = %[6]d
logfile = %[5]s/pgbouncer.log
pidfile = %[5]s/pgbouncer.pid
`, database, host, port, listen, dir, poolSize)
	for name, body := range map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return fail(err)
		}
		if err := os.Chown(path, who.uid, who.gid); err != nil {
			return fail(err)
		}
	}
	s, err := startProcess("pgbouncer", dir, exec.Command(bin, filepath.Join(dir, "pgbouncer.ini")), who.cred)
	if err != nil {
		return fail(err)
	}
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", listen, database)
	err = s.waitReady(ctx, func() error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
	if err != nil {
		s.stop()
		return nil, err
	}
	return &Server{DSN: dsn, s: s}, nil
}
