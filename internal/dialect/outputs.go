package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// Typed is the PostgreSQL type of one result column ("" when unknown).
type Typed struct {
	Name string
	Type string
	Mods []int32
}

// OutputTypes returns the PostgreSQL types of the result columns of a
// SELECT or of a RETURNING list, as PostgreSQL's typing gives them from
// the schema: what a client of PostgreSQL would be told, whatever the
// engine that answered says (MariaDB has no boolean, SQLite types
// values, not columns). It returns nil when the columns cannot be known
// (a * over a table shepherd does not know).
func OutputTypes(n *pg_query.Node, s *schema.Snapshot) (out []Typed) {
	w := &writer{schema: s}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(refusal); !ok {
				panic(r)
			}
			out = nil
		}
	}()
	var targets []*pg_query.Node
	switch {
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		for sel.Op != pg_query.SetOperation_SETOP_NONE {
			sel = sel.Larg
		}
		if len(sel.ValuesLists) > 0 {
			return nil
		}
		w.pushScope(sel.FromClause)
		targets = sel.TargetList
	case n.GetInsertStmt() != nil:
		w.pushTable(n.GetInsertStmt().Relation, nil)
		targets = n.GetInsertStmt().ReturningList
	case n.GetUpdateStmt() != nil:
		u := n.GetUpdateStmt()
		w.pushTable(u.Relation, u.FromClause)
		targets = u.ReturningList
	case n.GetDeleteStmt() != nil:
		d := n.GetDeleteStmt()
		w.pushTable(d.Relation, d.UsingClause)
		targets = d.ReturningList
	default:
		return nil
	}
	for _, t := range targets {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			qual := ""
			if len(cr.Fields) == 2 {
				qual = cr.Fields[0].GetString_().GetSval()
			}
			cols, ok := w.star(qual)
			if !ok {
				return nil
			}
			out = append(out, cols...)
			continue
		}
		typed := Typed{Name: rt.Name}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			if c, _ := w.column(refFields(cr)); c != nil {
				typed.Type, typed.Mods = c.Type, c.Mods
				if typed.Name == "" {
					typed.Name = c.Name
				}
			}
		} else {
			typed.Type = w.typeOf(rt.Val)
			if tc := rt.Val.GetTypeCast(); tc != nil {
				_, typed.Mods, _, _ = schema.TypeOf(tc.TypeName)
			}
		}
		out = append(out, typed)
	}
	return out
}

// star lists the columns of * (or alias.*) over the innermost scope.
func (w *writer) star(qual string) ([]Typed, bool) {
	var out []Typed
	sc := w.scopes[len(w.scopes)-1]
	if sc.merged {
		return nil, false
	}
	for _, it := range sc.items {
		if qual != "" && it.alias != qual {
			continue
		}
		if it.table == nil || it.table.View {
			return nil, false
		}
		for _, c := range it.table.Columns {
			out = append(out, Typed{Name: c.Name, Type: c.Type, Mods: c.Mods})
		}
	}
	return out, len(out) > 0
}
