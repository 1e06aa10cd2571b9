package schema

import (
	"slices"
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgtree"
)

// Constraint kinds, as pg_constraint.contype spells them.
const (
	ConstraintPrimary = "p"
	ConstraintUnique  = "u"
	ConstraintForeign = "f"
	ConstraintCheck   = "c"
)

// Constraint is one named constraint of a table: a primary key, a unique
// constraint, a foreign key or a check. Every replica's engine gets it
// under this name (PostgreSQL's default when the client gave none), so
// that an engine's error naming a constraint can be told in PostgreSQL's
// words (see package errform).
type Constraint struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // ConstraintPrimary ...
	// Columns are the key's columns (the referencing ones for a foreign
	// key); for a check, the columns its expression reads.
	Columns []string `json:"columns,omitempty"`
	// RefTable and RefColumns are what a foreign key references
	// (RefColumns empty: the referenced table's primary key).
	RefTable   string   `json:"ref_table,omitempty"`
	RefColumns []string `json:"ref_columns,omitempty"`
	// OnUpdate, OnDelete and Match are a foreign key's ON UPDATE and ON
	// DELETE actions and MATCH type as pg_constraint codes them
	// (confupdtype, confdeltype, confmatchtype); "" stands for the
	// defaults, see Actions.
	OnUpdate string `json:"on_update,omitempty"`
	OnDelete string `json:"on_delete,omitempty"`
	Match    string `json:"match,omitempty"`
	// Deferrable and InitiallyDeferred are DEFERRABLE and INITIALLY
	// DEFERRED.
	Deferrable        bool `json:"deferrable,omitempty"`
	InitiallyDeferred bool `json:"initially_deferred,omitempty"`
	// Expr is a check's expression as PostgreSQL's parser writes it back
	// (pg_get_constraintdef shows it in CHECK ((...))).
	Expr string `json:"expr,omitempty"`
}

// Actions returns a foreign key's ON UPDATE and ON DELETE actions and
// MATCH type as pg_constraint codes them: 'a' (NO ACTION), 'r', 'c',
// 'n', 'd'; 's' (SIMPLE), 'f' (FULL), 'p'.
func (c *Constraint) Actions() (onUpdate, onDelete, match byte) {
	code := func(s string, def byte) byte {
		if s == "" {
			return def
		}
		return s[0]
	}
	return code(c.OnUpdate, 'a'), code(c.OnDelete, 'a'), code(c.Match, 's')
}

// ForeignKeys returns the table's foreign keys, in the order they were
// made.
func (t *Table) ForeignKeys() []*Constraint {
	var out []*Constraint
	for i := range t.Constraints {
		if t.Constraints[i].Kind == ConstraintForeign {
			out = append(out, &t.Constraints[i])
		}
	}
	return out
}

// Parents returns the tables the table's foreign keys reference, in the
// order of the keys (a table once per key referencing it).
func (t *Table) Parents() []string {
	var out []string
	for _, c := range t.ForeignKeys() {
		out = append(out, c.RefTable)
	}
	return out
}

// Refs returns the column lists of the table's foreign keys (MariaDB
// needs an index starting with each).
func (t *Table) Refs() [][]string {
	var out [][]string
	for _, c := range t.ForeignKeys() {
		out = append(out, c.Columns)
	}
	return out
}

// CountChecks returns how many CHECK constraints the table has
// (pg_class.relchecks).
func (t *Table) CountChecks() int {
	n := 0
	for _, c := range t.Constraints {
		if c.Kind == ConstraintCheck {
			n++
		}
	}
	return n
}

// Constraint returns the table's constraint of that name, or nil.
func (t *Table) Constraint(name string) *Constraint {
	for i := range t.Constraints {
		if t.Constraints[i].Name == name {
			return &t.Constraints[i]
		}
	}
	return nil
}

// nameDataLen is PostgreSQL's NAMEDATALEN: names are at most 63 bytes.
const nameDataLen = 64

// makeObjectName is PostgreSQL's makeObjectName: name1_name2_label,
// shortening the longer of name1 and name2 until it fits in 63 bytes.
func makeObjectName(name1, name2, label string) string {
	overhead := 0
	if label != "" {
		overhead += len(label) + 1
	}
	if name2 != "" {
		overhead++
	}
	avail := nameDataLen - 1 - overhead
	n1, n2 := len(name1), len(name2)
	for n1+n2 > avail {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	n1, n2 = clipUTF8(name1, n1), clipUTF8(name2, n2)
	s := name1[:n1]
	if name2 != "" {
		s += "_" + name2[:n2]
	}
	if label != "" {
		s += "_" + label
	}
	return s
}

// clipUTF8 returns the largest length <= n that does not cut a UTF-8
// character of s (pg_mbcliplen).
func clipUTF8(s string, n int) int {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

// nameAddition is PostgreSQL's ChooseIndexNameAddition (and
// ChooseForeignKeyConstraintNameAddition): the column names joined by
// underscores, cut once past 63 bytes.
func nameAddition(cols []string) string {
	buf := ""
	for _, c := range cols {
		if buf != "" {
			buf += "_"
		}
		buf += c
		if len(buf) >= nameDataLen {
			return buf[:clipUTF8(buf, nameDataLen-1)]
		}
	}
	return buf
}

// chooseName is PostgreSQL's ChooseConstraintName within one table: the
// first of name1_name2_label, ..._label1, ..._label2 that used does not
// hold; it is added to used.
func chooseName(name1, name2, label string, used map[string]bool) string {
	mod := label
	for pass := 1; ; pass++ {
		name := makeObjectName(name1, name2, mod)
		if !used[name] {
			used[name] = true
			return name
		}
		mod = label + strconv.Itoa(pass)
	}
}

// checkColumns returns the distinct columns a CHECK expression reads, in
// order of appearance.
func checkColumns(n *pg_query.Node) []string {
	var out []string
	seen := map[string]bool{}
	if n == nil {
		return nil
	}
	pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok && len(cr.Fields) > 0 {
			if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil && !seen[s.Sval] {
				seen[s.Sval] = true
				out = append(out, s.Sval)
			}
		}
		return true
	})
	return out
}

// constraintOf describes con, a constraint of table (col is the column a
// column constraint is written on, "" for a table constraint), without
// its name; ok is false for kinds that are not named constraints.
func constraintOf(con *pg_query.Constraint, col string) (c Constraint, ok bool) {
	keys := func(l []*pg_query.Node) []string {
		if col != "" {
			return []string{col}
		}
		return names(l)
	}
	switch con.Contype {
	case pg_query.ConstrType_CONSTR_PRIMARY:
		c = Constraint{Kind: ConstraintPrimary, Columns: keys(con.Keys)}
	case pg_query.ConstrType_CONSTR_UNIQUE:
		c = Constraint{Kind: ConstraintUnique, Columns: keys(con.Keys)}
	case pg_query.ConstrType_CONSTR_FOREIGN:
		c = Constraint{Kind: ConstraintForeign, Columns: keys(con.FkAttrs), RefColumns: names(con.PkAttrs)}
		if con.Pktable != nil {
			c.RefTable = con.Pktable.Relname
		}
		// The parser leaves the defaults ("a", "a", "s") empty.
		c.OnUpdate, c.OnDelete, c.Match = con.FkUpdAction, con.FkDelAction, con.FkMatchtype
	case pg_query.ConstrType_CONSTR_CHECK:
		c = Constraint{Kind: ConstraintCheck, Columns: checkColumns(con.RawExpr), Expr: exprText(con.RawExpr)}
	default:
		return c, false
	}
	c.Deferrable, c.InitiallyDeferred = con.Deferrable, con.Initdeferred
	return c, true
}

// nameConstraint gives c the name the client gave, or the one PostgreSQL
// chooses for table, avoiding the names in used (and adding it there).
func nameConstraint(c *Constraint, given, table string, used map[string]bool) {
	if given != "" {
		c.Name = given
		used[given] = true
		return
	}
	switch c.Kind {
	case ConstraintPrimary:
		c.Name = chooseName(table, "", "pkey", used)
	case ConstraintUnique:
		c.Name = chooseName(table, nameAddition(c.Columns), "key", used)
	case ConstraintForeign:
		c.Name = chooseName(table, nameAddition(c.Columns), "fkey", used)
	case ConstraintCheck:
		col := ""
		if len(c.Columns) == 1 {
			col = c.Columns[0]
		}
		c.Name = chooseName(table, col, "check", used)
	}
}

// ConstraintNames returns the constraints a CREATE TABLE declares, each
// with its name (the client's, or the one PostgreSQL 15 chooses), keyed
// by the parse node, and in the order PostgreSQL names them: checks
// first (when the table is made), then the primary key and unique
// constraints (their indexes), then foreign keys.
func ConstraintNames(cs *pg_query.CreateStmt) (map[*pg_query.Constraint]string, []Constraint) {
	type item struct {
		con *pg_query.Constraint
		c   Constraint
	}
	var items []item
	for _, e := range cs.TableElts {
		if cd := e.GetColumnDef(); cd != nil {
			for _, n := range cd.Constraints {
				if con := n.GetConstraint(); con != nil {
					if c, ok := constraintOf(con, cd.Colname); ok {
						items = append(items, item{con, c})
					}
				}
			}
		} else if con := e.GetConstraint(); con != nil {
			if c, ok := constraintOf(con, ""); ok {
				items = append(items, item{con, c})
			}
		}
	}
	used := map[string]bool{}
	for _, it := range items {
		if it.con.Conname != "" {
			used[it.con.Conname] = true
		}
	}
	byNode := map[*pg_query.Constraint]string{}
	var out []Constraint
	for _, kinds := range []string{ConstraintCheck, ConstraintPrimary + ConstraintUnique, ConstraintForeign} {
		for _, it := range items {
			if !containsKind(kinds, it.c.Kind) {
				continue
			}
			c := it.c
			if it.con.Conname != "" {
				c.Name = it.con.Conname
			} else {
				nameConstraint(&c, "", cs.Relation.Relname, used)
			}
			byNode[it.con] = c.Name
			out = append(out, c)
		}
	}
	return byNode, out
}

func containsKind(kinds, k string) bool {
	for i := 0; i < len(kinds); i++ {
		if kinds[i:i+1] == k {
			return true
		}
	}
	return false
}

// AddedConstraint returns the constraint ALTER TABLE adds to t, named as
// PostgreSQL names it: ADD CONSTRAINT (col ""), or a constraint of
// column col in ADD COLUMN. ok is false for a kind that is not a named
// constraint.
func AddedConstraint(t *Table, con *pg_query.Constraint, col string) (Constraint, bool) {
	c, ok := constraintOf(con, col)
	if !ok {
		return c, false
	}
	used := map[string]bool{}
	for _, o := range t.Constraints {
		used[o.Name] = true
	}
	nameConstraint(&c, con.Conname, t.Name, used)
	return c, true
}

// references reports whether one of t's foreign keys references table.
func (t *Table) references(table string) bool {
	for _, c := range t.Constraints {
		if c.Kind == ConstraintForeign && c.RefTable == table {
			return true
		}
	}
	return false
}

// renameConstraintColumn returns a copy of cs, the constraints of a
// table (table itself when own), with column old of table renamed to
// new: in the constraints of table itself, and in what foreign keys
// referencing table name. Constraint names stay, as in PostgreSQL.
func renameConstraintColumn(cs []Constraint, own bool, table, old, new string) []Constraint {
	rename := func(l []string) []string {
		l = slices.Clone(l)
		for j, n := range l {
			if n == old {
				l[j] = new
			}
		}
		return l
	}
	out := make([]Constraint, len(cs))
	for i, c := range cs {
		if own {
			c.Columns = rename(c.Columns)
		}
		if c.RefTable == table {
			c.RefColumns = rename(c.RefColumns)
		}
		out[i] = c
	}
	return out
}
