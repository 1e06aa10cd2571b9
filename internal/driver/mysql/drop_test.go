package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestDropAfterGrace: a cancelled statement that KILL QUERY does not stop
// (here the KILL names no session) loses its connection once cancelGrace
// is over, and the caller hears 08006 then, not when the statement ends.
func TestDropAfterGrace(t *testing.T) {
	defer func(g time.Duration) { cancelGrace = g }(cancelGrace)
	cancelGrace = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := Open(ctx, driver.Spec{Name: "maria1", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dc, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	c := dc.(*Conn)
	if c.nc == nil {
		t.Fatal("the session's network connection was not recorded")
	}
	c.threadID = 0 // KILL QUERY 0 fails: the statement runs on
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	start := time.Now()
	_, err = c.Exec(short, driver.Query{SQL: "SELECT SLEEP(20)", ReturnsRows: true, Verb: "SELECT"})
	if got := pgerr.Code(err); got != pgerr.ConnectionFailure {
		t.Fatalf("statement past the grace: SQLSTATE %s (%v), want 08006", got, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("dropped after %v, want about 500ms", d)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"}); !pgerr.IsConnection(err) {
		t.Errorf("statement on the dropped connection: %v, want a class 08 error", err)
	}
}
