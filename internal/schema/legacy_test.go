package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOldCatalogFiles: catalog files of older shepherds load, their own
// records of constraints converted into Table.Constraints: one from
// before Constraints (foreign keys as refs and parents, the catalog's
// key name, unique constraints and checks), and one that kept both (the
// check expressions and foreign key options only in the old fields).
// Written again, the file has only Constraints.
func TestOldCatalogFiles(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       map[string]string
	}{{
		name: "before constraints",
		file: `{"schema": {"version": 4, "tables": {
 "p": {"name": "p", "columns": [{"name": "id", "type": "int4", "not_null": true}, {"name": "u", "type": "int4"}],
  "key": ["id"], "key_name": "p_pk", "uniques": [{"columns": ["u"]}], "checks": [{"name": "p_u_check", "expr": "u > 0", "columns": ["u"]}]},
 "c": {"name": "c", "columns": [{"name": "id", "type": "int4"}, {"name": "pid", "type": "int4"}],
  "refs": [["pid"]], "parents": ["p"]}},
 "indexes": {}}, "sequences": {}}`,
		want: map[string]string{
			"p": "[{p_u_check c [u] u > 0} {p_pk p [id]} {p_u_key u [u]}]",
			"c": "[{c_pid_fkey f [pid] p [] a a s false false}]",
		},
	}, {
		name: "both records",
		file: `{"schema": {"version": 4, "tables": {
 "p": {"name": "p", "columns": [{"name": "id", "type": "int4", "not_null": true}], "key": ["id"],
  "constraints": [{"name": "p_pkey", "kind": "p", "columns": ["id"]}]},
 "c": {"name": "c", "columns": [{"name": "id", "type": "int4"}, {"name": "pid", "type": "int4"}],
  "refs": [["pid"]], "parents": ["p"], "ref_columns": [null], "ref_names": ["c_pid_fkey"], "ref_options": ["cnsDI"],
  "checks": [{"name": "c_check", "expr": "id > 0 AND pid > 0", "columns": ["id", "pid"]}],
  "constraints": [{"name": "c_check", "kind": "c", "columns": ["id", "pid"]}, {"name": "c_pid_fkey", "kind": "f", "columns": ["pid"], "ref_table": "p"}]}},
 "indexes": {}}, "sequences": {}, "log": {"floor": 7}}`,
		want: map[string]string{
			"p": "[{p_pkey p [id]}]",
			"c": "[{c_check c [id pid] id > 0 AND pid > 0} {c_pid_fkey f [pid] p [] c n s true true}]",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "catalog.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(c *Catalog) {
				t.Helper()
				for table, want := range tc.want {
					if got := describe(c.Snapshot().Table(table).Constraints); got != want {
						t.Errorf("%s: constraints %s, want %s", table, got, want)
					}
				}
				if kids := c.Snapshot().Children("p"); fmt.Sprint(kids) != "[c]" {
					t.Errorf("children of p: %v", kids)
				}
			}
			c, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			check(c)
			apply(t, c, "CREATE INDEX c_id ON c (id)")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, old := range []string{`"refs"`, `"parents"`, `"checks"`, `"uniques"`, `"key_name"`, `"ref_options"`} {
				if strings.Contains(string(b), old) {
					t.Errorf("the file written again has %s", old)
				}
			}
			if c, err = Open(path); err != nil {
				t.Fatal(err)
			}
			check(c)
		})
	}
}

// describe writes constraints short: name, kind, columns, then a check's
// expression or a foreign key's table, columns and options.
func describe(cs []Constraint) string {
	var parts []string
	for _, c := range cs {
		s := fmt.Sprintf("%s %s %v", c.Name, c.Kind, c.Columns)
		switch c.Kind {
		case ConstraintCheck:
			s += " " + c.Expr
		case ConstraintForeign:
			u, d, m := c.Actions()
			s += fmt.Sprintf(" %s %v %c %c %c %v %v", c.RefTable, c.RefColumns, u, d, m, c.Deferrable, c.InitiallyDeferred)
		}
		parts = append(parts, "{"+s+"}")
	}
	return "[" + strings.Join(parts, " ") + "]"
}
