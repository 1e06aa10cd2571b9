package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// errStandby is how a standby shepherd node refuses a client.
func errStandby() error {
	return pgerr.New(pgerr.CannotConnectNow, "the database system is not accepting connections").
		WithDetail("This shepherd node is a standby.").Fatal()
}

// TestAdmitRefusal: a StartupMessage Admit refuses gets its error, FATAL,
// before authentication (as PostgreSQL's 57P03), and no session; a
// multi-host connection string moves on from it to the next host, as it
// must from a standby shepherd node to the leader: pgx's, and libpq's
// (psql, when installed).
func TestAdmitRefusal(t *testing.T) {
	standby := startServer(t, func(s *Server) { s.Admit = errStandby })
	leader := startServer(t, nil)

	c := standby.dial(t)
	c.sendStartup(map[string]string{"user": "alice", "database": "db"})
	checkScript(t, c.untilClosed(), "ErrorResponse FATAL 57P03 the database system is not accepting connections / This shepherd node is a standby.")
	if n := len(standby.h.allSessions()); n != 0 {
		t.Fatalf("%d sessions on the standby, want 0", n)
	}

	sh, sp, _ := net.SplitHostPort(standby.addr)
	lh, lp, _ := net.SplitHostPort(leader.addr)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()

	// The standby alone: the client sees the refusal, SQLSTATE included.
	_, err := pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=alice database=db sslmode=disable", sh, sp))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != pgerr.CannotConnectNow {
		t.Fatalf("connecting to the standby alone: %v, want 57P03", err)
	}

	// Standby first, leader second: the client ends on the leader.
	conn, err := pgx.Connect(ctx, fmt.Sprintf("host=%s,%s port=%s,%s user=alice database=db sslmode=disable", sh, lh, sp, lp))
	if err != nil {
		t.Fatalf("multi-host connection: %v", err)
	}
	defer conn.Close(ctx)
	if got := conn.PgConn().Conn().RemoteAddr().String(); got != leader.addr {
		t.Fatalf("connected to %s, want the leader %s", got, leader.addr)
	}
	if n := len(leader.h.allSessions()); n != 1 {
		t.Fatalf("%d sessions on the leader, want 1", n)
	}
}

// TestAdmitRefusalLibpq: libpq (through psql) moves on from a host that
// refuses with 57P03 to the next one of a multi-host connection string.
func TestAdmitRefusalLibpq(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql (libpq) is not installed")
	}
	standby := startServer(t, func(s *Server) { s.Admit = errStandby })
	leader := startServer(t, nil)
	sh, sp, _ := net.SplitHostPort(standby.addr)
	lh, lp, _ := net.SplitHostPort(leader.addr)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	none := t.TempDir() + "/none" // no password or service file
	run := func(conninfo string) (string, error) {
		cmd := exec.CommandContext(ctx, psql, "-X", "-A", "-t", "-c", "insert", conninfo)
		cmd.Env = append(os.Environ(), "PGPASSFILE="+none, "PGSERVICEFILE="+none)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run(fmt.Sprintf("host=%s port=%s user=alice dbname=db sslmode=disable", sh, sp))
	if err == nil || !strings.Contains(out, "the database system is not accepting connections") {
		t.Fatalf("psql to the standby alone: %v, %q; want the refusal", err, out)
	}
	out, err = run(fmt.Sprintf("host=%s,%s port=%s,%s user=alice dbname=db sslmode=disable", sh, lh, sp, lp))
	if err != nil || out != "INSERT 0 1" {
		t.Fatalf("psql over both hosts: %v, %q; want INSERT 0 1 from the leader", err, out)
	}
}
