// Package local starts throw-away database servers for the benchmark
// command: a PostgreSQL 15 and a MariaDB server, each in a temporary
// directory of its own, listening on 127.0.0.1 at a free port, tuned for
// speed over durability (no fsync), and stopped and removed by Stop.
// Should the benchmark die first, the kernel kills them (Pdeathsig).
//
// It follows the same steps as the tests' package testenv, which cannot
// be used outside tests (it reports through testing.TB).
package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

const (
	startTimeout = 90 * time.Second
	stopTimeout  = 30 * time.Second
	pgBin        = "/usr/lib/postgresql/15/bin"
	mariaUser    = "bench"
	mariaPass    = "bench"
)

// Server is one running database server.
type Server struct {
	// DSN reaches the server as a user allowed to create databases: a
	// postgres:// URL for PostgreSQL, a go-sql-driver DSN for MariaDB.
	DSN    string
	name   string
	dir    string
	cmd    *exec.Cmd
	logf   *os.File
	exited chan struct{}
	err    error
}

// Stop shuts the server down (killing it if it takes too long) and
// removes its directory.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.logf.Close()
	_ = os.RemoveAll(s.dir)
}

// Postgres starts a PostgreSQL 15 server (Debian's postgresql-15).
func Postgres(ctx context.Context) (*Server, error) {
	initdb, err := binary("postgresql-15", filepath.Join(pgBin, "initdb"))
	if err != nil {
		return nil, err
	}
	postgres, err := binary("postgresql-15", filepath.Join(pgBin, "postgres"))
	if err != nil {
		return nil, err
	}
	who, err := account("postgres")
	if err != nil {
		return nil, err
	}
	dir, err := who.tempDir("shepherd-bench-pg-*")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := who.run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8",
		"--locale=C", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(postgres, "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=256MB",
		"-c", "TimeZone=UTC", "-c", "logging_collector=off")
	s, err := start("postgres", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	err = s.waitReady(ctx, func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, s.DSN)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// MariaDB starts a MariaDB server (Debian's mariadb-server) with a user
// that may do anything over TCP.
func MariaDB(ctx context.Context) (*Server, error) {
	installDB, err := binary("mariadb-server", "mariadb-install-db", "/usr/bin/mariadb-install-db")
	if err != nil {
		return nil, err
	}
	mariadbd, err := binary("mariadb-server", "mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, err
	}
	who, err := account("mysql")
	if err != nil {
		return nil, err
	}
	dir, err := who.tempDir("shepherd-bench-maria-*")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := who.run(installDB, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	socket := filepath.Join(dir, "mysqld.sock")
	cmd := exec.Command(mariadbd, "--no-defaults", "--datadir="+data,
		"--port="+strconv.Itoa(port), "--socket="+socket,
		"--pid-file="+filepath.Join(dir, "mysqld.pid"),
		"--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin",
		"--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0", "--max-connections=400",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin")
	s, err := start("mariadbd", dir, cmd, who.cred)
	if err != nil {
		return nil, err
	}
	root := mysql.NewConfig()
	root.User, root.Net, root.Addr, root.Timeout = "root", "unix", socket, 2*time.Second
	err = s.waitReady(ctx, func(ctx context.Context) error { return mariaExec(ctx, root, "SELECT 1") })
	if err == nil {
		err = mariaExec(ctx, root,
			fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", mariaUser, mariaPass),
			fmt.Sprintf("GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'", mariaUser))
	}
	if err != nil {
		s.Stop()
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = mariaUser, mariaPass, "tcp", fmt.Sprintf("127.0.0.1:%d", port)
	s.DSN = cfg.FormatDSN()
	return s, nil
}

func mariaExec(ctx context.Context, cfg *mysql.Config, stmts ...string) error {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// start runs cmd with its output in dir/server.log, in a process group of
// its own, killed when this process dies.
func start(name, dir string, cmd *exec.Cmd, cred *syscall.Credential) (*Server, error) {
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("local: start %s: %w", name, err)
	}
	s := &Server{name: name, dir: dir, cmd: cmd, logf: logf, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// waitReady polls ready until it succeeds, the server exits, ctx ends or
// startTimeout passes.
func (s *Server) waitReady(ctx context.Context, ready func(context.Context) error) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := ready(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("local: %s not ready after %v: %v\n%s", s.name, startTimeout, err, s.logTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.exited:
			return fmt.Errorf("local: %s exited while starting (%v)\n%s", s.name, s.err, s.logTail())
		case <-tick.C:
		}
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// osAccount is who a server runs as: as root, the engine's own system
// user (neither server runs as root); otherwise the current user.
type osAccount struct {
	cred     *syscall.Credential
	uid, gid int
}

func account(system string) (osAccount, error) {
	if os.Geteuid() != 0 {
		return osAccount{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	u, err := user.Lookup(system)
	if err != nil {
		return osAccount{}, fmt.Errorf("local: running as root, the server must run as system user %q: %w", system, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return osAccount{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid: uid, gid: gid}, nil
}

func (a osAccount) tempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if err := os.Chown(dir, a.uid, a.gid); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func (a osAccount) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: a.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("local: %s: %w\n%s", filepath.Base(name), err, out)
	}
	return nil
}

// binary returns the first candidate found, or an error naming the
// Debian package to install.
func binary(pkg string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if filepath.IsAbs(c) {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("local: " + filepath.Base(candidates[0]) + " not found; install Debian's " + pkg + " (apt-get install " + pkg + ", or make engines)")
}

// PgBouncer starts Debian's pgbouncer in front of the PostgreSQL server
// at host:port, in session pooling with trust authentication, serving
// database as the same name; poolSize bounds its server connections. The
// returned server's DSN is a postgres:// URL of that database through
// it.
func PgBouncer(ctx context.Context, host string, port int, database string, poolSize int) (*Server, error) {
	bin, err := binary("pgbouncer", "pgbouncer", "/usr/sbin/pgbouncer")
	if err != nil {
		return nil, err
	}
	who, err := account("postgres") // pgbouncer refuses to run as root
	if err != nil {
		return nil, err
	}
	dir, err := who.tempDir("shepherd-bench-pgbouncer-*")
	if err != nil {
		return nil, err
	}
	listen, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
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
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n"}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := os.Chown(path, who.uid, who.gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	s, err := start("pgbouncer", dir, exec.Command(bin, filepath.Join(dir, "pgbouncer.ini")), who.cred)
	if err != nil {
		return nil, err
	}
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", listen, database)
	err = s.waitReady(ctx, func(ctx context.Context) error {
		c, err := pgx.Connect(ctx, s.DSN)
		if err != nil {
			return err
		}
		return c.Close(ctx)
	})
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}
