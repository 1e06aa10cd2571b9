// Package testenv starts real database servers for tests: a PostgreSQL 15
// and a MariaDB server, each in its own temporary directory, listening on
// 127.0.0.1 on a free port.
//
// A server is started the first time a test asks for it and is shared by
// every test of the test binary; each call hands out a fresh, empty
// database on it. The package that uses testenv must stop the servers at
// the end through its TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// (or call testenv.Stop itself after m.Run). Should the test binary die
// without stopping them, the kernel kills the servers too (Pdeathsig).
//
// Missing server binaries fail the test with the Debian package to
// install; they never skip it silently.
//
// It is also the one engine starter outside the tests: the benchmark
// command (cmd/shepherd-bench) starts its servers, and PgBouncer, with
// StartPostgres, StartMariaDB and StartPgBouncer, which take the same
// steps, report errors instead of failing a test, and can start a server
// that syncs every commit to disk (Options.Durable).
package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 90 * time.Second

// stopTimeout bounds how long a server may take to shut down before it is
// killed.
const stopTimeout = 30 * time.Second

var (
	mainCalled atomic.Bool
	dbCounter  atomic.Int64

	serversMu sync.Mutex
	servers   []*server
)

// Main runs the tests of m and then stops every server testenv started,
// and exits with the tests' status. Call it from TestMain.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop shuts down every server testenv started and removes their
// directories. Main calls it; a TestMain that needs more control calls it
// after m.Run (and must still have called MarkMain first).
func Stop() {
	serversMu.Lock()
	all := servers
	servers = nil
	serversMu.Unlock()
	for _, s := range all {
		s.stop()
	}
}

// MarkMain tells testenv that the caller's TestMain will call Stop. Main
// does it by itself.
func MarkMain() { mainCalled.Store(true) }

func requireMain(t testing.TB) {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("testenv: this test package must stop the servers it starts; add\n\tfunc TestMain(m *testing.M) { testenv.Main(m) }")
	}
}

// server is one running database server process.
type server struct {
	name string
	dir  string
	cmd  *exec.Cmd
	log  *os.File
	// exited is closed when the process has ended; waitErr is then set.
	exited  chan struct{}
	waitErr error
}

func register(s *server) {
	serversMu.Lock()
	defer serversMu.Unlock()
	servers = append(servers, s)
}

// startProcess starts cmd as a server whose output goes to dir/server.log.
// The server dies with the test binary.
func startProcess(name, dir string, cmd *exec.Cmd, cred *syscall.Credential) (*server, error) {
	logf, err := os.Create(dir + "/server.log")
	if err != nil {
		return nil, err
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("testenv: start %s: %w", name, err)
	}
	s := &server{name: name, dir: dir, cmd: cmd, log: logf, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// kill kills the server's process group with SIGKILL and waits for it.
func (s *server) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
}

// stop asks the server to shut down, kills it if it will not, and removes
// its directory.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.log.Close()
	_ = os.RemoveAll(s.dir)
}

// waitReady polls ready until it succeeds, the server exits, ctx ends or
// startTimeout passes.
func (s *server) waitReady(ctx context.Context, ready func() error) error {
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testenv: %s not ready after %v: %v\n%s", s.name, startTimeout, err, s.logTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.exited:
			return fmt.Errorf("testenv: %s exited during start-up (%v)\n%s", s.name, s.waitErr, s.logTail())
		case <-tick.C:
		}
	}
}

// logTail returns the end of the server's log, for error messages.
func (s *server) logTail() string {
	b, err := os.ReadFile(s.dir + "/server.log")
	if err != nil {
		return ""
	}
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runAs describes the OS user a server runs as. When the tests run as
// root the server runs as its own system user (neither PostgreSQL nor
// MariaDB wants to run as root); otherwise it runs as the current user.
type runAs struct {
	cred *syscall.Credential // nil: the current user
	uid  int
	gid  int
}

func lookupRunAs(system string) (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	u, err := user.Lookup(system)
	if err != nil {
		return runAs{}, fmt.Errorf("testenv: tests run as root, and the server must run as the %q system user: %w", system, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return runAs{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid: uid, gid: gid}, nil
}

// makeDir creates a private temporary directory owned by who.
func (who runAs) makeDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if err := os.Chown(dir, who.uid, who.gid); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// run runs a set-up command as who and returns its output on failure.
func (who runAs) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: who.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("testenv: %s: %w\n%s", name, err, out)
	}
	return nil
}

// findBinary returns the path of the first candidate that exists, or an
// error naming the Debian package that provides it.
func findBinary(pkg string, candidates ...string) (string, error) {
	for _, c := range candidates {
		if strings.Contains(c, "/") {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c, nil
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("testenv: %s not found; install the Debian package %s (apt-get install %s)", candidates[0], pkg, pkg)
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// databaseName returns a fresh database name derived from the test's name.
func databaseName(t testing.TB) string {
	base := unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_")
	base = strings.Trim(base, "_")
	if len(base) > 40 {
		base = base[:40]
	}
	return fmt.Sprintf("t%d_%s", dbCounter.Add(1), base)
}

// shared memoises the start of one server for the whole test binary: a
// start that failed is not retried, every later caller gets its error.
type shared[T any] struct {
	mu    sync.Mutex
	done  bool
	value T
	err   error
}

func (s *shared[T]) get(start func() (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.value, s.err = start()
		s.done = true
	}
	return s.value, s.err
}

// removeUnlessRegistered removes a server directory whose start failed
// before a server was registered to own it.
func removeUnlessRegistered(dir string, registered *bool) {
	if !*registered {
		_ = os.RemoveAll(dir)
	}
}
