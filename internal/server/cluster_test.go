package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestClusterNotServedYet: until the replicas' fence is run (issue 19),
// a [cluster] table is refused at start, naming it, rather than served
// unsafely or ignored by a node that would then run alone.
func TestClusterNotServedYet(t *testing.T) {
	cfg := embedded(t)
	cfg.Cluster = config.Cluster{Node: "a", Endpoints: []string{"http://127.0.0.1:1"}}
	srv, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Field != "cluster" {
		if srv != nil {
			srv.close()
		}
		t.Fatalf("Open with a [cluster] table: %v, want a refusal naming cluster", err)
	}
}

// TestClusterNeedsLog: a node of a cluster takes over from the log of
// decided transactions, so a [cluster] in a mode without one is refused,
// naming the mode.
func TestClusterNeedsLog(t *testing.T) {
	unfencedCluster = true
	t.Cleanup(func() { unfencedCluster = false })
	cfg := embedded(t)
	cfg.Mode = "serial"
	cfg.Cluster = config.Cluster{Node: "a", Endpoints: []string{"http://127.0.0.1:1"}}
	srv, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Field != "cluster" || !strings.Contains(ce.Msg, "mode cbs or ss") {
		if srv != nil {
			srv.close()
		}
		t.Fatalf("Open with a [cluster] in mode %s: %v, want a refusal naming the mode", cfg.Mode, err)
	}
}
