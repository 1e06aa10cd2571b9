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

// TestIsolationOverride: an engine pinned at READ UNCOMMITTED lets a
// reader see another session's uncommitted write at once, even inside a
// transaction that asked for SERIALIZABLE, and still reports Locking.
func TestIsolationOverride(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := mysql.Opener(mysql.Options{Isolation: "read-uncommitted"})(ctx, driver.Spec{Name: "maria1", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Class() != driver.Locking {
		t.Errorf("class %v, want locking", e.Class())
	}
	writer, reader := connect(t, e), connect(t, e)
	for _, sql := range []string{"CREATE TABLE t (id INT PRIMARY KEY)", "BEGIN", "INSERT INTO t VALUES (1)"} {
		var err error
		if sql == "BEGIN" {
			err = writer.Begin(ctx, driver.TxOptions{})
		} else {
			_, err = run(writer, "", sql)
		}
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if err := reader.Begin(ctx, driver.TxOptions{Isolation: "serializable"}); err != nil {
		t.Fatal(err)
	}
	// At SERIALIZABLE this read would wait for the writer's lock.
	short, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	a, err := reader.Exec(short, driver.Query{SQL: "SELECT count(*) FROM t", ReturnsRows: true, Verb: "SELECT"})
	if err != nil {
		t.Fatalf("read beside an uncommitted write: %v", err)
	}
	if got := a.Rows[0][0].Text; got != "1" {
		t.Errorf("read saw %s rows, want the uncommitted 1", got)
	}
}

func TestIsolationOverrideUnknown(t *testing.T) {
	ctx := context.Background()
	_, err := mysql.Opener(mysql.Options{Isolation: "chaos"})(ctx, driver.Spec{Name: "maria1", DSN: "nobody:x@tcp(127.0.0.1:1)/none"})
	if pgerr.Code(err) != pgerr.InvalidParameterValue {
		t.Errorf("unknown isolation level: %v, want SQLSTATE %s", err, pgerr.InvalidParameterValue)
	}
}

// TestSessionComparesByteWise checks that text that is not a column's —
// constants, parameters — compares byte-wise and without padding in a
// session, as under PostgreSQL's C collation and as the columns shepherd
// creates (utf8mb4_nopad_bin): the connection's default collation,
// utf8mb4_general_ci, says 'a' = 'A' and 'a' = 'a '.
func TestSessionComparesByteWise(t *testing.T) {
	e, err := open(t, testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := connect(t, e)
	a, err := run(c, "SELECT", "SELECT 'a' = 'A', 'a' < 'B', 'a' = 'a ', ? = 'A'", driver.Arg{Text: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range a.Rows[0] {
		if v.Text != "0" {
			t.Errorf("comparison %d: %s, want 0 (false) as in PostgreSQL's C collation", i+1, v.Text)
		}
	}
}

// TestDeepRecursiveCTE: a recursive CTE runs as many iterations as its
// query asks for, as in PostgreSQL. MariaDB 10.11 stops one after 1,000
// iterations (max_recursive_iterations) with only a warning, and answered
// 1,001 rows where PostgreSQL and SQLite answer 5,000: outvoted as a
// primary, it took every open transaction down with it (40001 "the
// primary replica failed", the failure issue 18 saw next to a forged
// CancelRequest).
func TestDeepRecursiveCTE(t *testing.T) {
	e, err := open(t, testenv.MariaDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c := connect(t, e)
	a, err := run(c, "SELECT", "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000) SELECT count(*) FROM n")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Rows[0][0].Text; got != "5000" {
		t.Fatalf("count of 5,000 iterations: %s", got)
	}
}
