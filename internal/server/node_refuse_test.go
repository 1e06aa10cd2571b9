package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/ha"
)

// TestStandbyRefuses: while a node stands by, a client connecting to its
// address is refused with 57P03, saying no node leads when the store
// cannot name one, and stop frees the address.
func TestStandbyRefuses(t *testing.T) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	node, err := ha.NewNode(cli, ha.Options{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	stop, err := refuseClients(context.Background(), &config.Config{Listen: addr}, node, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=app dbname=app sslmode=disable", host, port))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57P03" || !strings.Contains(pe.Detail, "(b) is a standby; no node leads now") {
		t.Fatalf("connecting to a standby: %v, want 57P03 saying no node leads", err)
	}
	stop()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address after stop: %v", err)
	}
	ln.Close()
}
