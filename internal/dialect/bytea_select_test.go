package dialect

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestBytesSelect: a string constant an INSERT ... SELECT stores into a
// bytea column is bytea input to PostgreSQL ('\x00ff' is two bytes) and
// text to MariaDB and SQLite (six): refused for them; cast to bytea, or
// in VALUES, it is written as its bytes.
func TestBytesSelect(t *testing.T) {
	s := &schema.Snapshot{Tables: map[string]*schema.Table{"b": {Name: "b", Key: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Type: "int4"}, {Name: "v", Type: "bytea"},
	}}}}
	write := func(sql string, d driver.Dialect) error {
		tree, err := pg_query.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Write(tree.Stmts[0].Stmt, d, s)
		return err
	}
	for _, d := range []driver.Dialect{driver.SQLite, driver.MySQL} {
		for _, sql := range []string{`INSERT INTO b SELECT 1, '\x00ff'`, `INSERT INTO b (v, id) SELECT 'ab', 1 UNION ALL SELECT 'c', 2`} {
			if err := write(sql, d); pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "bytea column") {
				t.Errorf("%v: %s: %v, want 0A000 naming the bytea column", d, sql, err)
			}
		}
		for _, sql := range []string{`INSERT INTO b SELECT 1, '\x00ff'::bytea`, `INSERT INTO b VALUES (1, '\x00ff')`, `INSERT INTO b SELECT id, v FROM b`} {
			if err := write(sql, d); err != nil {
				t.Errorf("%v: %s: %v", d, sql, err)
			}
		}
	}
}
