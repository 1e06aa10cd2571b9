package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// serveEnv makes the test binary run 'shepherd serve' with the arguments
// in it (TestMain), so that a test can start shepherd as a subprocess and
// send it signals.
const serveEnv = "SHEPHERD_TEST_SERVE_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(serveEnv); args != "" {
		os.Exit(run(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// reloadConf is a configuration of three embedded SQLite replicas with
// one user whose password is pw; level is the log's.
func reloadConf(dir, pw, mode string) string {
	return fmt.Sprintf(`listen = "127.0.0.1:0"
data_dir = %q
mode = %q
f = 1

[log]
level = "info"

[repair]
mode = "off"

[[users]]
name = "app"
password = %q

[[replicas]]
name = "lite1"
driver = "sqlite"
dsn = "lite1.db"

[[replicas]]
name = "lite2"
driver = "sqlite-cgo"
dsn = "lite2.db"

[[replicas]]
name = "lite3"
driver = "sqlite"
dsn = "lite3.db"
`, filepath.Join(dir, "data"), mode, pw)
}

// TestSIGHUPReload starts shepherd as a subprocess, rewrites its
// configuration file with another password and sends it SIGHUP: the old
// password is refused from then on, the new one accepted, and a session
// opened before goes on. A second SIGHUP with a changed mode is refused
// with a log line naming the key, and the password in force stays.
func TestSIGHUPReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shepherd.toml")
	if err := os.WriteFile(path, []byte(reloadConf(dir, "old-pw", "cbs")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"=serve\n--config\n"+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	logLines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case logLines <- sc.Text():
			default: // nobody waits for it
			}
		}
		close(logLines)
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			t.Error("shepherd did not stop on SIGTERM")
		}
	}()
	// The first line says where it listens (after SIGHUP is handled).
	first, err := bufio.NewReader(stdout).ReadString('\n')
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	if err != nil {
		t.Fatalf("shepherd did not start: %v", err)
	}
	_, rest, ok := strings.Cut(first, "listening on ")
	addr, _, _ := strings.Cut(rest, ",")
	if !ok || addr == "" {
		t.Fatalf("start line: %q", first)
	}
	ctx := context.Background()
	connect := func(pw string) (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("postgres://app:%s@%s/app?sslmode=disable", pw, addr))
	}
	before, err := connect("old-pw")
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close(ctx)

	// waitLog waits for a log line holding want.
	waitLog := func(want string) string {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			select {
			case line, ok := <-logLines:
				if !ok {
					t.Fatalf("shepherd's log ended before %q", want)
				}
				if strings.Contains(line, want) {
					return line
				}
			case <-deadline:
				t.Fatalf("no log line with %q", want)
			}
		}
	}
	if err := os.WriteFile(path, []byte(reloadConf(dir, "new-pw", "cbs")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog("configuration reloaded")
	if c, err := connect("old-pw"); err == nil {
		c.Close(ctx)
		t.Fatal("the old password still works after SIGHUP")
	} else if pe, ok := err.(*pgconn.ConnectError); !ok || !strings.Contains(pe.Error(), "28P01") {
		t.Fatalf("old password after SIGHUP: %v, want 28P01", err)
	}
	after, err := connect("new-pw")
	if err != nil {
		t.Fatalf("new password after SIGHUP: %v", err)
	}
	after.Close(ctx)
	if _, err := before.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("a session opened before the reload: %v", err)
	}

	// A key that needs a restart: refused, named, and nothing applied.
	if err := os.WriteFile(path, []byte(reloadConf(dir, "third-pw", "serial")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if line := waitLog("configuration reload refused"); !strings.Contains(line, "key=mode") {
		t.Errorf("refusal does not name the key: %s", line)
	}
	c, err := connect("new-pw")
	if err != nil {
		t.Fatalf("the password in force changed with a refused reload: %v", err)
	}
	c.Close(ctx)
}
