package schema

import (
	"slices"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TestConstraintsFollowRenames: constraint names stay when a table or
// column is renamed (as in PostgreSQL), what they name follows, and
// DROP COLUMN drops the constraints on the column.
func TestConstraintsFollowRenames(t *testing.T) {
	c, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE p (id int PRIMARY KEY, u int UNIQUE)",
		"CREATE TABLE c (id int, pid int REFERENCES p (id), CHECK (id > 0))",
		"ALTER TABLE p RENAME COLUMN id TO pk",
		"ALTER TABLE p RENAME TO parent",
		"ALTER TABLE parent DROP COLUMN u",
	} {
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Apply(tree.Stmts[0].Stmt); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := c.Snapshot()
	p, ch := s.Table("parent"), s.Table("c")
	if len(p.Constraints) != 1 || p.Constraints[0].Name != "p_pkey" || !slices.Equal(p.Constraints[0].Columns, []string{"pk"}) {
		t.Errorf("parent: %+v", p.Constraints)
	}
	fk := ch.Constraint("c_pid_fkey")
	if fk == nil || fk.RefTable != "parent" || !slices.Equal(fk.RefColumns, []string{"pk"}) || ch.Constraint("c_id_check") == nil {
		t.Errorf("c: %+v", ch.Constraints)
	}
}

// TestObjectNamesFit: a generated name is at most 63 bytes and never
// cuts a UTF-8 character.
func TestObjectNamesFit(t *testing.T) {
	long := strings.Repeat("é", 40)
	for _, n := range []string{makeObjectName(long, long, "key"), makeObjectName(long, "", "pkey"), nameAddition([]string{long, long})} {
		if len(n) > 63 || !utf8Valid(n) {
			t.Errorf("%q (%d bytes)", n, len(n))
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
