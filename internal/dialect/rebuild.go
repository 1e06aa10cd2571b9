package dialect

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// rebuildTable is the table a SQLite rebuild keeps the rows in.
const rebuildTable = "shepherd_rebuild"

// rebuild writes, for SQLite, an ALTER TABLE that SQLite cannot do in
// place (a constraint added or dropped, NOT NULL set or dropped, a
// column's type changed) as the table rebuilt, SQLite's own procedure
// ("Making Other Kinds Of Table Schema Changes"): several statements in
// one text, which the SQLite driver runs together in the replica's
// transaction, and which the log replays as they are.
//
// The new definition comes from shepherd's catalog, every constraint
// under the name PostgreSQL knows it by (see package errform). The rows
// go first into a copy with the new definition, which checks them
// against the new constraints; the table is then dropped, made again and
// filled from the copy with foreign keys deferred: dropping a table that
// other rows reference counts violations SQLite only forgets when the
// referenced rows come back, which they do before the deferral ends.
// Indexes are made again by name and columns.
func (w *writer) rebuild(table *schema.Table, cmd *pg_query.AlterTableCmd) {
	if table == nil || table.View {
		w.refuse("ALTER TABLE %s of a table shepherd did not see created", alterWhat(cmd))
	}
	recorded := len(table.Constraints) > 0 || len(table.Key) == 0
	for _, c := range table.Constraints {
		if c.Kind == schema.ConstraintCheck && c.Expr == "" {
			recorded = false
		}
	}
	if !recorded {
		w.refuse("ALTER TABLE %s of a table whose constraints shepherd did not record (created by an older shepherd)", alterWhat(cmd))
	}
	cols := slices.Clone(table.Columns)
	cons := slices.Clone(table.Constraints)
	column := func(name string) *schema.Column {
		for i := range cols {
			if cols[i].Name == name {
				return &cols[i]
			}
		}
		w.fail(pgerr.UndefinedColumn, "column %q of relation %q does not exist", name, table.Name)
		return nil
	}
	inKey := func(name string) bool {
		for _, c := range cons {
			if c.Kind == schema.ConstraintPrimary && slices.Contains(c.Columns, name) {
				return true
			}
		}
		return false
	}
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_AddConstraint:
		con := cmd.Def.GetConstraint()
		if con.SkipValidation {
			w.refuse("ADD CONSTRAINT ... NOT VALID")
		}
		if con.Conname != "" && table.Constraint(con.Conname) != nil {
			if con.Contype == pg_query.ConstrType_CONSTR_UNIQUE || con.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
				// PostgreSQL makes the index first, named as the constraint.
				w.fail(pgerr.DuplicateTable, "relation %q already exists", con.Conname)
			}
			w.fail(pgerr.DuplicateObject, "constraint %q for relation %q already exists", con.Conname, table.Name)
		}
		if (con.Deferrable || con.Initdeferred) && con.Contype != pg_query.ConstrType_CONSTR_FOREIGN {
			w.refuse("DEFERRABLE constraints other than foreign keys")
		}
		if con.Contype == pg_query.ConstrType_CONSTR_UNIQUE || con.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
			w.checkUnique(con)
		}
		if con.Contype == pg_query.ConstrType_CONSTR_CHECK && con.IsNoInherit {
			w.refuse("CHECK ... NO INHERIT")
		}
		if con.Contype == pg_query.ConstrType_CONSTR_FOREIGN && con.FkMatchtype != "" && con.FkMatchtype != "s" {
			w.refuse("MATCH FULL/PARTIAL foreign keys")
		}
		c, ok := schema.AddedConstraint(table, con, "")
		if !ok {
			w.refuse("ADD CONSTRAINT of kind %s", con.Contype.String())
		}
		for _, k := range c.Columns {
			if c.Kind == schema.ConstraintCheck {
				continue
			}
			if !slices.ContainsFunc(cols, func(col schema.Column) bool { return col.Name == k }) {
				if c.Kind == schema.ConstraintForeign {
					w.fail(pgerr.UndefinedColumn, "column %q referenced in foreign key constraint does not exist", k)
				}
				w.fail(pgerr.UndefinedColumn, "column %q named in key does not exist", k)
			}
		}
		if c.Kind == schema.ConstraintForeign {
			w.checkReferenced(table, cols, cons, c)
		}
		if c.Kind == schema.ConstraintPrimary {
			for _, o := range cons {
				if o.Kind == schema.ConstraintPrimary {
					w.fail(invalidTableDefinition, "multiple primary keys for table %q are not allowed", table.Name)
				}
			}
			for _, k := range c.Columns {
				column(k).NotNull = true
			}
		}
		cons = append(cons, c)
	case pg_query.AlterTableType_AT_DropConstraint:
		i := slices.IndexFunc(cons, func(c schema.Constraint) bool { return c.Name == cmd.Name })
		if i < 0 {
			if cmd.MissingOk {
				w.refuse("DROP CONSTRAINT IF EXISTS of a constraint that does not exist")
			}
			w.fail(pgerr.UndefinedObject, "constraint %q of relation %q does not exist", cmd.Name, table.Name)
		}
		cons = slices.Delete(cons, i, i+1)
	case pg_query.AlterTableType_AT_SetNotNull:
		column(cmd.Name).NotNull = true
	case pg_query.AlterTableType_AT_DropNotNull:
		c := column(cmd.Name)
		if inKey(cmd.Name) {
			w.fail(invalidTableDefinition, "column %q is in a primary key", cmd.Name)
		}
		c.NotNull = false
	case pg_query.AlterTableType_AT_AlterColumnType:
		cd := cmd.Def.GetColumnDef()
		c := column(cmd.Name)
		if cd.RawDefault != nil || cd.CollClause != nil {
			w.refuse("ALTER COLUMN ... TYPE with USING or COLLATE")
		}
		typ, mods, serial, ok := schema.TypeOf(cd.TypeName)
		if !ok || serial {
			w.refuse("ALTER COLUMN ... TYPE %s", schema.TypeText(cd.TypeName))
		}
		if !widens(*c, typ, mods) {
			w.refuse("ALTER COLUMN ... TYPE from %s to %s on SQLite (only a change that keeps every value: a longer or unbounded text type, a wider integer)", schema.TypeText(cd.TypeName), typ)
		}
		c.Type, c.Mods = typ, mods
	case pg_query.AlterTableType_AT_ColumnDefault:
		c := column(cmd.Name)
		switch {
		case cmd.Def == nil:
			if c.Fill == schema.FillNone {
				c.Default = ""
			}
		case !schema.IsConstant(cmd.Def):
			w.refuse("SET DEFAULT of an expression that is not a constant")
		default:
			text, err := deparseExpr(cmd.Def)
			if err != nil {
				w.refuse("this SET DEFAULT expression")
			}
			c.Default = text
		}
	default:
		w.refuse("ALTER TABLE %s", cmd.Subtype.String())
	}
	if reflect.DeepEqual(cols, table.Columns) && reflect.DeepEqual(cons, table.Constraints) {
		// The change restates what the table is (Sequelize's sync
		// sets NOT NULL, the type and the default of every column
		// again): nothing to rebuild, and PostgreSQL changes nothing
		// either. An empty savepoint stands for the statement.
		w.str("SAVEPOINT " + rebuildTable + "; RELEASE " + rebuildTable)
		return
	}
	if cmd.Subtype == pg_query.AlterTableType_AT_AddConstraint && cons[len(cons)-1].Kind == schema.ConstraintUnique {
		c := cons[len(cons)-1]
		// A unique constraint is, to SQLite, the unique index it makes
		// for it: one made under the constraint's name holds the rows
		// to it, and fails over duplicates, without a rebuild (which a
		// table another's ON DELETE foreign key references cannot
		// have: Sequelize's sync adds its uniques again). A later
		// rebuild writes the constraint into the table from the
		// catalog, and the old table's index goes with it.
		w.str("CREATE UNIQUE INDEX ")
		w.ident(c.Name)
		w.str(" ON ")
		w.ident(table.Name)
		w.str(" (")
		list(w, c.Columns, func(k string) { w.ident(k) })
		w.str(")")
		return
	}
	// Dropping the table runs the foreign keys' ON DELETE actions on the
	// rows that reference it: refused rather than run.
	for _, o := range w.schema.Tables {
		list := o.Constraints
		if o.Name == table.Name {
			list = cons
		}
		for _, c := range list {
			if c.Kind == schema.ConstraintForeign && c.RefTable == table.Name && onDelete(c) != 'a' {
				w.refuse("ALTER TABLE %s of a table that foreign key %s references with an ON DELETE action", alterWhat(cmd), c.Name)
			}
		}
	}
	var indexes []string
	for ix, t := range w.schema.Indexes {
		if t == table.Name {
			indexes = append(indexes, ix)
		}
	}
	slices.Sort(indexes)
	remade := make([]*pg_query.IndexStmt, len(indexes))
	for i, ix := range indexes {
		remade[i] = w.remadeIndex(ix, table.Name, alterWhat(cmd))
	}

	def := w.tableDefinition(table.Name, cols, cons)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	copyRows := func(to, from string) {
		w.str("INSERT INTO ")
		w.ident(to)
		w.str(" (")
		list(w, names, func(n string) { w.ident(n) })
		w.str(") SELECT ")
		list(w, names, func(n string) { w.ident(n) })
		w.str(" FROM ")
		w.ident(from)
		w.str("; ")
	}
	// A savepoint: a transaction of its own when there is none, so that
	// the deferred foreign keys are checked at its end, not at each
	// statement's.
	w.str("SAVEPOINT " + rebuildTable + "; ")
	w.createDefinition(def, rebuildTable)
	w.str("; ")
	copyRows(rebuildTable, table.Name)
	w.str("PRAGMA defer_foreign_keys = ON; DROP TABLE ")
	w.ident(table.Name)
	w.str("; ")
	w.createDefinition(def, table.Name)
	w.str("; ")
	copyRows(table.Name, rebuildTable)
	w.str("DROP TABLE ")
	w.ident(rebuildTable)
	w.str("; PRAGMA defer_foreign_keys = OFF")
	// The table's indexes go with the old table and come back as
	// PostgreSQL kept them (an ALTER TABLE leaves every index made by
	// CREATE INDEX; those of a dropped constraint are the table's own).
	for _, ix := range remade {
		w.str("; ")
		w.createIndex(ix)
	}
	w.str("; RELEASE " + rebuildTable)
}

// remadeIndex returns the CREATE INDEX that makes index ix of table again
// after a rebuild: its recorded definition (see schema.Snapshot.IndexDefs)
// under its present name, table and column names. An index made by an
// older shepherd has no definition: a plain one is made again by its
// columns, a unique one (whose WHERE shepherd did not keep) is refused.
func (w *writer) remadeIndex(ix, table, what string) *pg_query.IndexStmt {
	cols := w.schema.IndexColumns[ix]
	def, ok := w.schema.IndexDefs[ix]
	if !ok {
		if w.schema.UniqueIndexes[ix] {
			w.refuse("ALTER TABLE %s of a table with a UNIQUE index made by an older shepherd (CREATE UNIQUE INDEX %s)", what, ix)
		}
		stmt := &pg_query.IndexStmt{Idxname: ix, Relation: &pg_query.RangeVar{Relname: table, Inh: true, Relpersistence: "p"}}
		for _, c := range cols {
			stmt.IndexParams = append(stmt.IndexParams, &pg_query.Node{Node: &pg_query.Node_IndexElem{IndexElem: &pg_query.IndexElem{Name: c}}})
		}
		return stmt
	}
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetIndexStmt() == nil {
		w.refuse("rebuilding table %s on SQLite (the definition of index %s does not read back)", table, ix)
	}
	stmt := tree.Stmts[0].Stmt.GetIndexStmt()
	stmt.Idxname = ix
	stmt.Relation.Relname, stmt.Relation.Schemaname = table, ""
	// Columns renamed since: the catalog's names (kept through renames)
	// replace the statement's, in order. A predicate names columns too;
	// one whose columns moved is refused rather than rewritten.
	var elems []*pg_query.IndexElem
	for _, p := range stmt.IndexParams {
		if e := p.GetIndexElem(); e != nil {
			elems = append(elems, e) // an expression's is "", in cols too
		}
	}
	renamed := len(elems) != len(cols)
	for i := 0; !renamed && i < len(elems); i++ {
		renamed = elems[i].Name != cols[i]
	}
	// A WHERE recorded before shepherd renamed the columns a
	// definition names (see schema.Snapshot.IndexNames) may name one
	// the table no longer has: refused rather than failing with 42703.
	if t := w.schema.Table(table); t != nil && stmt.WhereClause != nil {
		walk(stmt.WhereClause.ProtoReflect(), func(m protoreflect.Message) bool {
			if cr, ok := m.Interface().(*pg_query.ColumnRef); ok && len(cr.Fields) > 0 {
				if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil && t.Column(s.Sval) == nil {
					renamed = true
				}
			}
			return true
		})
	}
	if renamed {
		if stmt.WhereClause != nil || len(elems) != len(cols) {
			w.refuse("ALTER TABLE %s of a table with partial index %s on a renamed column", what, ix)
		}
		for i, e := range elems {
			e.Name = cols[i]
		}
	}
	return stmt
}

// checkReferenced fails as PostgreSQL does when foreign key c (of table,
// being rebuilt with cols and cons) references no table or no key: SQLite
// would take the key and fail every later write of the table ("foreign
// key mismatch").
func (w *writer) checkReferenced(table *schema.Table, cols []schema.Column, cons []schema.Constraint, c schema.Constraint) {
	parent := w.schema.Table(c.RefTable)
	parentCons := []schema.Constraint(nil)
	if c.RefTable == table.Name {
		parentCons = cons
	} else if parent == nil || parent.View {
		w.fail(pgerr.UndefinedTable, "relation %q does not exist", c.RefTable)
	} else {
		parentCons = parent.Constraints
	}
	ref := c.RefColumns
	if len(ref) == 0 {
		for _, k := range parentCons {
			if k.Kind == schema.ConstraintPrimary {
				ref = k.Columns
			}
		}
		if len(ref) == 0 {
			w.fail(invalidForeignKey, "there is no primary key for referenced table %q", c.RefTable)
		}
	}
	if len(ref) != len(c.Columns) {
		w.fail(invalidForeignKey, "number of referencing and referenced columns for foreign key disagree")
	}
	sameSet := func(a, b []string) bool {
		return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
	}
	for _, k := range parentCons {
		if (k.Kind == schema.ConstraintPrimary || k.Kind == schema.ConstraintUnique) && sameSet(k.Columns, ref) {
			return
		}
	}
	for ix, t := range w.schema.Indexes {
		if t == c.RefTable && w.schema.UniqueIndexes[ix] && sameSet(w.schema.IndexColumns[ix], ref) {
			return
		}
	}
	w.fail(invalidForeignKey, "there is no unique constraint matching given keys for referenced table %q", c.RefTable)
}

// invalidForeignKey is PostgreSQL's 42830.
const invalidForeignKey = "42830"

// invalidTableDefinition is PostgreSQL's 42P16.
const invalidTableDefinition = "42P16"

func alterWhat(cmd *pg_query.AlterTableCmd) string {
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_AddConstraint:
		return "... ADD CONSTRAINT"
	case pg_query.AlterTableType_AT_DropConstraint:
		return "... DROP CONSTRAINT"
	case pg_query.AlterTableType_AT_SetNotNull:
		return "... ALTER COLUMN ... SET NOT NULL"
	case pg_query.AlterTableType_AT_DropNotNull:
		return "... ALTER COLUMN ... DROP NOT NULL"
	case pg_query.AlterTableType_AT_AlterColumnType:
		return "... ALTER COLUMN ... TYPE"
	case pg_query.AlterTableType_AT_ColumnDefault:
		return "... ALTER COLUMN ... SET/DROP DEFAULT"
	}
	return cmd.Subtype.String()
}

// deparseExpr writes an expression back as PostgreSQL's parser would.
func deparseExpr(n *pg_query.Node) (string, error) {
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(n, -1)}}
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion(), Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	return strings.TrimPrefix(text, "SELECT "), err
}

// widens reports whether changing column c to typ(mods) keeps every value
// as it is, so that SQLite's copy of the rows is PostgreSQL's conversion.
func widens(c schema.Column, typ string, mods []int32) bool {
	if c.Type == typ && slices.Equal(c.Mods, mods) {
		return true
	}
	switch {
	case (c.Type == "text" || c.Type == "varchar") && (typ == "text" || typ == "varchar"):
		// Into text or an unbounded varchar, or a varchar at least as long.
		if typ == "text" || len(mods) == 0 {
			return true
		}
		return c.Type == "varchar" && len(c.Mods) == 1 && mods[0] >= c.Mods[0]
	case schema.IsInteger(c.Type) && schema.IsInteger(typ):
		rank := map[string]int{"int2": 0, "int4": 1, "int8": 2}
		return rank[typ] >= rank[c.Type]
	}
	return false
}

// tableDefinition returns CREATE TABLE name (...) in PostgreSQL's
// syntax for the columns and constraints, every constraint named, parsed.
func (w *writer) tableDefinition(name string, cols []schema.Column, cons []schema.Constraint) *pg_query.CreateStmt {
	var b strings.Builder
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	qs := func(l []string) string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = q(s)
		}
		return "(" + strings.Join(out, ", ") + ")"
	}
	b.WriteString("CREATE TABLE " + q(name) + " (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		if schema.IsArray(c.Type) {
			b.WriteString(q(c.Name) + " pg_catalog." + schema.ArrayElement(c.Type) + "[]")
		} else {
			b.WriteString(q(c.Name) + " pg_catalog." + c.Type)
		}
		if len(c.Mods) > 0 {
			m := make([]string, len(c.Mods))
			for j, v := range c.Mods {
				m[j] = strconv.Itoa(int(v))
			}
			b.WriteString("(" + strings.Join(m, ", ") + ")")
		}
		if c.NotNull {
			b.WriteString(" NOT NULL")
		}
		if c.Fill == schema.FillNone && c.Default != "" {
			b.WriteString(" DEFAULT (" + c.Default + ")")
		}
	}
	for _, c := range cons {
		b.WriteString(", CONSTRAINT " + q(c.Name) + " ")
		switch c.Kind {
		case schema.ConstraintPrimary:
			b.WriteString("PRIMARY KEY " + qs(c.Columns))
		case schema.ConstraintUnique:
			b.WriteString("UNIQUE " + qs(c.Columns))
		case schema.ConstraintCheck:
			b.WriteString("CHECK (" + c.Expr + ")")
		case schema.ConstraintForeign:
			b.WriteString("FOREIGN KEY " + qs(c.Columns) + " REFERENCES " + q(c.RefTable))
			if len(c.RefColumns) > 0 {
				b.WriteString(" " + qs(c.RefColumns))
			}
			actions := map[byte]string{'a': "NO ACTION", 'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}
			upd, del, match := c.Actions()
			if match == 'f' {
				b.WriteString(" MATCH FULL")
			}
			b.WriteString(" ON UPDATE " + actions[upd] + " ON DELETE " + actions[del])
			if c.Deferrable {
				b.WriteString(" DEFERRABLE")
			}
			if c.InitiallyDeferred {
				b.WriteString(" INITIALLY DEFERRED")
			}
		}
	}
	b.WriteString(")")
	tree, err := pg_query.Parse(b.String())
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetCreateStmt() == nil {
		w.refuse("rebuilding table %s on SQLite (its definition does not read back)", name)
	}
	return tree.Stmts[0].Stmt.GetCreateStmt()
}

// createDefinition writes the table definition def under the name name.
func (w *writer) createDefinition(def *pg_query.CreateStmt, name string) {
	def.Relation.Relname = name
	w.createTable(def)
}

// onDelete is a foreign key's ON DELETE action as pg_constraint codes it.
func onDelete(c schema.Constraint) byte {
	_, del, _ := c.Actions()
	return del
}
