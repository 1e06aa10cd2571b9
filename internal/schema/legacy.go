package schema

import (
	"encoding/json"
	"slices"
	"strings"
)

// tableFields is Table without its methods (UnmarshalJSON among them).
type tableFields Table

// legacyTable is what the catalog files of older shepherds kept of a
// table's constraints besides (or, older still, instead of)
// Table.Constraints.
type legacyTable struct {
	// Refs are the foreign keys' columns, Parents the tables they
	// reference, RefColumns the columns referenced (nil: the primary
	// key), RefNames their names ("" for PostgreSQL's default) and
	// RefOptions their confupdtype, confdeltype, confmatchtype then "D"
	// when DEFERRABLE and "I" when INITIALLY DEFERRED; all parallel.
	Refs       [][]string `json:"refs"`
	Parents    []string   `json:"parents"`
	RefColumns [][]string `json:"ref_columns"`
	RefNames   []string   `json:"ref_names"`
	RefOptions []string   `json:"ref_options"`
	// KeyName is the primary key's name ("" for the default).
	KeyName string         `json:"key_name"`
	Uniques []legacyUnique `json:"uniques"`
	Checks  []legacyCheck  `json:"checks"`
}

type legacyUnique struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// legacyCheck is a check: Columns as relationsOf lists them (sorted,
// "*" for a star).
type legacyCheck struct {
	Name    string   `json:"name"`
	Expr    string   `json:"expr"`
	Columns []string `json:"columns"`
}

// UnmarshalJSON reads a table from the catalog file, also one an older
// shepherd wrote: its own records of foreign keys, unique constraints and
// checks become Constraints when it has none (named as PostgreSQL named
// them), and otherwise supply what Constraints then lacked (a check's
// expression, a foreign key's actions).
func (t *Table) UnmarshalJSON(b []byte) error {
	var v struct {
		*tableFields
		legacyTable
	}
	v.tableFields = (*tableFields)(t)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(t.Constraints) == 0 {
		t.Constraints = v.legacyTable.constraints(t)
	} else {
		v.legacyTable.complete(t.Constraints)
	}
	return nil
}

// constraints converts the old records of t's constraints, in the order
// PostgreSQL makes them (checks, keys, foreign keys), giving the unnamed
// ones PostgreSQL's default names.
func (l *legacyTable) constraints(t *Table) []Constraint {
	used := map[string]bool{}
	for _, n := range l.RefNames {
		used[n] = true
	}
	used[l.KeyName] = true
	for _, u := range l.Uniques {
		used[u.Name] = true
	}
	for _, c := range l.Checks {
		used[c.Name] = true
	}
	delete(used, "")
	var out []Constraint
	for _, c := range l.Checks {
		k := Constraint{Kind: ConstraintCheck, Columns: slices.DeleteFunc(slices.Clone(c.Columns), func(s string) bool { return s == "*" }), Expr: c.Expr}
		nameConstraint(&k, c.Name, t.Name, used)
		out = append(out, k)
	}
	if len(t.Key) > 0 {
		k := Constraint{Kind: ConstraintPrimary, Columns: slices.Clone(t.Key)}
		nameConstraint(&k, l.KeyName, t.Name, used)
		out = append(out, k)
	}
	for _, u := range l.Uniques {
		k := Constraint{Kind: ConstraintUnique, Columns: u.Columns}
		nameConstraint(&k, u.Name, t.Name, used)
		out = append(out, k)
	}
	for i, cols := range l.Refs {
		if i >= len(l.Parents) {
			break
		}
		k := Constraint{Kind: ConstraintForeign, Columns: cols, RefTable: l.Parents[i]}
		if i < len(l.RefColumns) {
			k.RefColumns = l.RefColumns[i]
		}
		if i < len(l.RefOptions) {
			setOptions(&k, l.RefOptions[i])
		}
		name := ""
		if i < len(l.RefNames) {
			name = l.RefNames[i]
		}
		nameConstraint(&k, name, t.Name, used)
		out = append(out, k)
	}
	return out
}

// complete fills in, from the old records, the check expressions and
// foreign key options cs lacks: a check found by name, else the first
// not yet taken that reads the same columns; a foreign key by name, else
// by its columns and referenced table.
func (l *legacyTable) complete(cs []Constraint) {
	taken := make([]bool, len(l.Checks))
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Kind == ConstraintCheck && c.Expr == "":
			j := slices.IndexFunc(l.Checks, func(o legacyCheck) bool { return o.Name == c.Name })
			for k := 0; j < 0 && k < len(l.Checks); k++ {
				if !taken[k] && sameSet(l.Checks[k].Columns, c.Columns) {
					j = k
				}
			}
			if j >= 0 {
				c.Expr, taken[j] = l.Checks[j].Expr, true
			}
		case c.Kind == ConstraintForeign && c.OnUpdate == "" && c.OnDelete == "" && c.Match == "" && !c.Deferrable:
			j := slices.Index(l.RefNames, c.Name)
			for k := 0; j < 0 && k < len(l.Refs) && k < len(l.Parents); k++ {
				if slices.Equal(l.Refs[k], c.Columns) && l.Parents[k] == c.RefTable {
					j = k
				}
			}
			if j >= 0 && j < len(l.RefOptions) {
				setOptions(c, l.RefOptions[j])
			}
		}
	}
}

// setOptions reads a foreign key's options as legacyTable.RefOptions
// wrote them.
func setOptions(c *Constraint, opts string) {
	if len(opts) < 3 {
		return
	}
	c.OnUpdate, c.OnDelete, c.Match = opts[0:1], opts[1:2], opts[2:3]
	c.Deferrable = strings.Contains(opts[3:], "D")
	c.InitiallyDeferred = strings.Contains(opts[3:], "I")
}

func sameSet(a, b []string) bool {
	a = slices.DeleteFunc(slices.Clone(a), func(s string) bool { return s == "*" })
	b = slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
