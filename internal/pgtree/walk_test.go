package pgtree

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestWalk: every ColumnRef of a statement is visited, in order, and a
// subtree whose visit says no is not entered.
func TestWalk(t *testing.T) {
	tree, err := pg_query.Parse("SELECT a, b FROM t WHERE c IN (SELECT d FROM u)")
	if err != nil {
		t.Fatal(err)
	}
	cols := func(skipSubLinks bool) []string {
		var out []string
		Walk(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return !skipSubLinks
			case *pg_query.ColumnRef:
				out = append(out, x.Fields[len(x.Fields)-1].GetString_().GetSval())
			}
			return true
		})
		return out
	}
	if got := cols(false); len(got) != 4 || got[0] != "a" || got[3] != "d" {
		t.Errorf("all columns: %v", got)
	}
	if got := cols(true); len(got) != 2 || got[1] != "b" { // c is the SubLink's test expression
		t.Errorf("outside the subquery: %v", got)
	}
}
