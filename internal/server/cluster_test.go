package server

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestClusterNotServedYet: until the server runs as a node of a cluster
// (issue 19), a [cluster] table is refused at start, naming it, rather
// than ignored by a node that would then run alone.
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
