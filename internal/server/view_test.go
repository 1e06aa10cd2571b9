package server

import (
	"context"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/config"
)

// TestSilentPrimaryReplaced: a primary that leaves a statement unanswered,
// answering nothing else, for primary_timeout is suspected and replaced;
// the client retries its transaction on the new primary, and SHOW VIEW
// tells the story.
func TestSilentPrimaryReplaced(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.PrimaryTimeout = "300ms"
	// Every statement on MariaDB, the primary, waits 2 s first.
	cfg.Replicas[0].Fault = config.Fault{StallRate: 1, StallMS: 2000}
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	var n int
	retry40(t, func() error { return c.QueryRow(ctx, "SELECT 41 + 1").Scan(&n) })
	if n != 42 {
		t.Errorf("got %d", n)
	}
	views := srv.Cluster().Views()
	if len(views) < 2 {
		t.Fatalf("views %+v: the primary was not replaced", views)
	}
	last := views[len(views)-1]
	if last.Primary == "maria" || !strings.Contains(last.Why, "maria: no answer") {
		t.Errorf("view %+v", last)
	}
	a := connect(t, addr, "shepherd")
	var view int
	var primary, since, why string
	if err := a.QueryRow(ctx, "SHOW VIEW").Scan(&view, &primary, &since, &why); err != nil {
		t.Fatal(err)
	}
	if view != 0 || primary != "maria" {
		t.Errorf("SHOW VIEW first row: view %d primary %s", view, primary)
	}
}
