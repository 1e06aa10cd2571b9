package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/drivertest"
	_ "github.com/shepherd-db/shepherd/internal/driver/sqlite"
)

func open(t *testing.T, name string, spec driver.Spec) driver.Engine {
	t.Helper()
	openFunc, ok := driver.Lookup(name)
	if !ok {
		t.Fatalf("driver %q is not registered", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := openFunc(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			drivertest.Run(t, func(t *testing.T) driver.Engine {
				return open(t, name, driver.Spec{Name: name, DSN: "db/replica.sqlite", DataDir: t.TempDir()})
			})
		})
	}
}

func TestRelativePathUnderDataDir(t *testing.T) {
	dir := t.TempDir()
	e := open(t, "sqlite", driver.Spec{Name: "lite", DSN: "sub/dir/r.db", DataDir: dir})
	defer e.Close()
	if _, err := os.Stat(filepath.Join(dir, "sub/dir/r.db")); err != nil {
		t.Errorf("database file not created under DataDir: %v", err)
	}
}
