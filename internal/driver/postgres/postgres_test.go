package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func open(t *testing.T, dsn string) (driver.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return postgres.Open(ctx, driver.Spec{Name: "pg1", DSN: dsn})
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Engine {
		e, err := open(t, testenv.Postgres(t))
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

func TestOpenUnreachable(t *testing.T) {
	_, err := open(t, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
	if !pgerr.IsConnection(err) {
		t.Fatalf("open of a closed port: %v, want a class 08 error", err)
	}
	if pe := pgerr.From(err); pe.Replica != "pg1" {
		t.Errorf("error does not name the replica: %v", err)
	}
}

// TestCommitOfFailedTransaction: PostgreSQL answers COMMIT in a failed
// transaction with the tag ROLLBACK and no error; the driver must not
// report that as a commit.
func TestCommitOfFailedTransaction(t *testing.T) {
	e, err := open(t, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Exec(ctx, driver.Query{SQL: "SELECT 1 / 0", ReturnsRows: true, Verb: "SELECT"})
	if got := pgerr.Code(err); got != pgerr.DivisionByZero {
		t.Fatalf("1 / 0: SQLSTATE %s (%v), want 22012", got, err)
	}
	_, err = c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"})
	if got := pgerr.Code(err); got != pgerr.InFailedSQLTransaction {
		t.Errorf("statement in failed transaction: SQLSTATE %s, want 25P02", got)
	}
	if got := pgerr.Code(c.Commit(ctx)); got != pgerr.InFailedSQLTransaction {
		t.Errorf("COMMIT of a failed transaction: SQLSTATE %q, want 25P02", got)
	}
	if _, err := c.Exec(ctx, driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"}); err != nil {
		t.Errorf("session after the failed transaction: %v", err)
	}
}
