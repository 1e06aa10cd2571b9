package server

import (
	"context"
	"testing"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/testenv"
	"github.com/shepherd-db/shepherd/internal/wal"
)

func TestZZReviewReplayBlockDDL(t *testing.T) {
	ctx := context.Background()
	open, _ := driver.Lookup("mysql")
	e, err := open(ctx, driver.Spec{Name: "maria", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	my := func(sql string) []wal.Form { return []wal.Form{{Dialect: uint8(driver.MySQL), SQL: sql}} }
	if _, err := c.Exec(ctx, driver.Query{SQL: "CREATE TABLE t (a int)"}); err != nil {
		t.Fatal(err)
	}
	have, _, err := replica.LogRead(ctx, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	rec := []wal.Record{{Txn: 1, Barrier: 5, Statements: []wal.Statement{
		{SQL: "INSERT INTO t VALUES (1)", Writes: true, Forms: my("INSERT INTO t (a) VALUES (1)")},
		{SQL: "ALTER TABLE t ADD c int", Writes: true, DDL: true, Forms: my("ALTER TABLE t ADD c int")},
		{SQL: "INSERT INTO t VALUES (2, 2)", Writes: true, Forms: my("INSERT INTO nosuch VALUES (2, 2)")}, // a failure after the DDL (stands for a crash / lost connection)
	}}}
	for try := 0; try < 2; try++ {
		_, err := cluster.Replay(ctx, c, driver.MySQL, rec, have)
		t.Logf("replay %d: %v", try, err)
	}
	a, err := c.Exec(ctx, driver.Query{SQL: "SELECT count(*) FROM t", ReturnsRows: true, Verb: "SELECT"})
	t.Logf("rows in t after two failed replays: %v %v", a.Rows, err)
}
