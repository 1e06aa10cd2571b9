package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	"github.com/shepherd-db/shepherd/internal/driver/mysql"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func open(t *testing.T, dsn string) (driver.Engine, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return mysql.Open(ctx, driver.Spec{Name: "maria1", DSN: dsn})
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Engine {
		e, err := open(t, testenv.MariaDB(t))
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

func TestOpenUnreachable(t *testing.T) {
	_, err := open(t, "nobody:x@tcp(127.0.0.1:1)/none?timeout=5s")
	if !pgerr.IsConnection(err) {
		t.Fatalf("open of a closed port: %v, want a class 08 error", err)
	}
	if pe := pgerr.From(err); pe.Replica != "maria1" {
		t.Errorf("error does not name the replica: %v", err)
	}
}
