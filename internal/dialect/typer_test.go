package dialect

import (
	"fmt"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestNestedSubqueriesTypedOnce: a result column's name and type both
// need its scalar subquery's columns; typing the subquery once for each
// took 2^depth steps (25 levels, 233 bytes, froze the cluster).
func TestNestedSubqueriesTypedOnce(t *testing.T) {
	const depth = 30
	q := "SELECT " + strings.Repeat("(SELECT 1 + ", depth) + "1::int8" + strings.Repeat(")", depth)
	tree, err := pg_query.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	ty := &typer{}
	r := ty.stmtRel(tree.Stmts[0].Stmt)
	if r == nil || len(r.cols) != 1 || r.cols[0].t.name != "int8" || r.cols[0].name != "?column?" {
		t.Fatalf("columns %+v", r)
	}
	if ty.selects != depth+1 {
		t.Errorf("typed %d SELECTs for %d", ty.selects, depth+1)
	}
}

// TestNestedDerivedTablesTypedOnce: the writer types the derived tables
// of each query level it writes with the typer, which types those nested
// in them too; typing them again at each level took time quadratic in
// the nesting. Each SELECT is typed once.
func TestNestedDerivedTablesTypedOnce(t *testing.T) {
	const depth = 30
	q := "SELECT 1 AS x"
	for i := range depth {
		q = fmt.Sprintf("SELECT x + 1 AS x FROM (%s) s%d", q, i)
	}
	w := &writer{d: driver.SQLite}
	if _, err := write(w, parse(t, q)); err != nil {
		t.Fatal(err)
	}
	if w.typedSelects != depth {
		t.Errorf("typed %d SELECTs for %d", w.typedSelects, depth)
	}
}
