package repair

import (
	"slices"
	"testing"

	"github.com/shepherd-db/shepherd/internal/schema"
)

func TestAgreement(t *testing.T) {
	for _, c := range []struct {
		name   string
		groups map[string][]int
		f      int
		want   string
		ok     bool
	}{
		{"one replica differs", map[string][]int{"a": {0, 2}, "b": {1}}, 1, "a", true},
		{"absent on two", map[string][]int{"": {0, 1}, "a": {2}}, 1, "", true},
		{"three versions", map[string][]int{"a": {0}, "b": {1}, "c": {2}}, 1, "", false},
		{"two and two of five", map[string][]int{"a": {0, 1}, "b": {2, 3}, "c": {4}}, 1, "", false},
		{"f+1 of five", map[string][]int{"a": {0, 1, 2}, "b": {3, 4}}, 2, "a", true},
		{"plurality short of f+1", map[string][]int{"a": {0, 1}, "b": {2}, "c": {3}, "d": {4}}, 2, "", false},
		{"f = 0 takes the majority", map[string][]int{"a": {0, 1}, "b": {2}}, 0, "a", true},
		{"f = 0, a tie", map[string][]int{"a": {0}, "b": {1}}, 0, "", false},
	} {
		got, ok := agreement(c.groups, c.f)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: agreement = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestTableOrder: parents before the tables that reference them, then by
// name; views left out.
func TestTableOrder(t *testing.T) {
	fk := func(parent string) schema.Constraint {
		return schema.Constraint{Name: "fk_" + parent, Kind: schema.ConstraintForeign, Columns: []string{"id"}, RefTable: parent}
	}
	snap := &schema.Snapshot{Tables: map[string]*schema.Table{
		"lines":  {Name: "lines", Constraints: []schema.Constraint{fk("orders"), fk("items")}},
		"orders": {Name: "orders", Constraints: []schema.Constraint{fk("people")}},
		"items":  {Name: "items"},
		"people": {Name: "people"},
		"report": {Name: "report", View: true},
		"audit":  {Name: "audit"},
		"loop":   {Name: "loop", Constraints: []schema.Constraint{fk("loop")}},
	}}
	got := tableOrder(snap)
	want := []string{"audit", "items", "people", "orders", "lines", "loop"}
	if !slices.Equal(got, want) {
		t.Errorf("tableOrder = %v, want %v", got, want)
	}
}

// TestHashedTypes: only types every engine writes alike are hashed inside
// the databases; a table with any other is compared row by row.
func TestHashedTypes(t *testing.T) {
	mk := func(cols ...schema.Column) *schema.Table {
		return &schema.Table{Name: "t", Key: []string{cols[0].Name}, Columns: cols}
	}
	for _, c := range []struct {
		t    *schema.Table
		want bool
	}{
		{mk(schema.Column{Name: "id", Type: "int8"}, schema.Column{Name: "v", Type: "text"}, schema.Column{Name: "at", Type: "timestamptz"}), true},
		{mk(schema.Column{Name: "id", Type: "int4"}, schema.Column{Name: "m", Type: "numeric", Mods: []int32{10, 2}}), true},
		{mk(schema.Column{Name: "id", Type: "int4"}, schema.Column{Name: "m", Type: "numeric"}), false},
		{mk(schema.Column{Name: "id", Type: "int4"}, schema.Column{Name: "x", Type: "float8"}), false},
		{mk(schema.Column{Name: "id", Type: "int4"}, schema.Column{Name: "j", Type: "jsonb"}), false},
	} {
		tb, err := newTable(c.t)
		if err != nil {
			t.Fatal(err)
		}
		if tb.hashed != c.want {
			t.Errorf("%v: hashed = %v, want %v", c.t.Columns, tb.hashed, c.want)
		}
	}
	if _, err := newTable(&schema.Table{Name: "nokey", Columns: []schema.Column{{Name: "a", Type: "int4"}}}); err == nil {
		t.Error("a table without a primary key was accepted")
	}
}
