package dialect

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// keyTextLen is the VARCHAR length MariaDB gets for a text column that is
// part of a key: InnoDB cannot index TEXT without a prefix, and a prefix
// would change what UNIQUE means.
const keyTextLen = 255

// ddlType writes a column type. keyed marks a column in a key or index.
func (w *writer) ddlType(c schema.Column, keyed bool) {
	mod := func(i int) string { return strconv.Itoa(int(c.Mods[i])) }
	if w.my() {
		switch c.Type {
		case "int2":
			w.str("SMALLINT")
		case "int4":
			w.str("INT")
		case "int8":
			w.str("BIGINT")
		case "numeric":
			switch len(c.Mods) {
			case 2:
				w.str("DECIMAL(" + mod(0) + "," + mod(1) + ")")
			case 1:
				w.str("DECIMAL(" + mod(0) + ",0)")
			default:
				w.refuse("numeric without precision and scale (MariaDB's DECIMAL has a fixed scale)")
			}
		case "float4", "float8":
			// MariaDB prints FLOAT with six digits; DOUBLE keeps a real's
			// value, which the vote then reads as a real.
			w.str("DOUBLE")
		case "bool":
			w.str("BOOLEAN")
		case "text":
			if keyed {
				w.str("VARCHAR(" + strconv.Itoa(keyTextLen) + ")")
			} else {
				w.str("LONGTEXT")
			}
		case "varchar":
			if len(c.Mods) == 1 {
				w.str("VARCHAR(" + mod(0) + ")")
			} else if keyed {
				w.str("VARCHAR(" + strconv.Itoa(keyTextLen) + ")")
			} else {
				w.str("LONGTEXT")
			}
		case "bpchar":
			n := "1"
			if len(c.Mods) == 1 {
				n = mod(0)
			}
			w.str("CHAR(" + n + ")")
		case "bytea":
			if keyed {
				w.refuse("bytea in a key")
			}
			w.str("LONGBLOB")
		case "date":
			w.str("DATE")
		case "time":
			w.str("TIME(6)")
		case "timestamp", "timestamptz":
			w.str("DATETIME(6)")
		case "uuid":
			// Not MariaDB's UUID type, which orders some uuids otherwise
			// than PostgreSQL (it swaps groups of time-based ones) and
			// refuses some PostgreSQL takes: the canonical lower-case text
			// shepherd writes for every uuid (NormalizeUUID), which the
			// table's binary collation orders byte by byte, as PostgreSQL
			// orders uuids.
			w.str("CHAR(36)")
		case "json", "jsonb":
			if keyed {
				w.refuse("json in a key")
			}
			w.str("JSON")
		default:
			if schema.IsArray(c.Type) {
				w.arrayDDLType(c, keyed)
				return
			}
			w.refuse("columns of type %s", c.Type)
		}
		return
	}
	switch c.Type {
	case "int2":
		w.str("SMALLINT")
	case "int4":
		// Not INTEGER: an INTEGER PRIMARY KEY is SQLite's rowid, which
		// takes a NULL as the next number (NOT NULL and CHECK see the
		// number), where PostgreSQL fails with 23502.
		w.str("INT")
	case "int8":
		w.str("BIGINT")
	case "numeric":
		// SQLite keeps numbers as 64-bit floats: exact to 15 digits.
		if len(c.Mods) == 0 || c.Mods[0] > 15 {
			w.refuse("numeric columns of more than 15 digits, or of unlimited precision (SQLite keeps 15 digits exactly); declare numeric(p,s) with p <= 15")
		}
		if len(c.Mods) == 2 {
			w.str("NUMERIC(" + mod(0) + "," + mod(1) + ")")
		} else {
			w.str("NUMERIC(" + mod(0) + ")")
		}
	case "float4":
		w.str("REAL")
	case "float8":
		w.str("DOUBLE PRECISION")
	case "bool":
		// The two SQLite builds read other integers differently.
		w.str("BOOLEAN CHECK (")
		w.ident(c.Name)
		w.str(" IN (0, 1))")
	case "text":
		w.str("TEXT")
	case "varchar":
		if len(c.Mods) == 1 {
			w.str("VARCHAR(" + mod(0) + ")")
		} else {
			w.str("VARCHAR")
		}
	case "bpchar":
		n := "1"
		if len(c.Mods) == 1 {
			n = mod(0)
		}
		w.str("CHAR(" + n + ")")
	case "bytea":
		w.str("BLOB")
	case "date":
		// Not DATE or TIMESTAMP alone: the C build of SQLite turns text
		// it cannot parse in such columns into year 1.
		w.str("DATE TEXT")
	case "time":
		w.str("TIME")
	case "timestamp":
		w.str("TIMESTAMP TEXT")
	case "timestamptz":
		w.str("TIMESTAMPTZ")
	case "uuid":
		w.str("UUID")
	case "json", "jsonb":
		w.str("JSONTEXT")
	default:
		if schema.IsArray(c.Type) {
			w.arrayDDLType(c, keyed)
			return
		}
		w.refuse("columns of type %s", c.Type)
	}
}

func (w *writer) createTable(cs *pg_query.CreateStmt) {
	if cs.Relation.Relpersistence == "t" {
		w.refuse("temporary tables (replicas' sessions are pooled)")
	}
	if cs.Tablespacename != "" || cs.AccessMethod != "" {
		w.refuse("storage options in CREATE TABLE")
	}
	w.storageOptions(cs.Options)
	if cs.Oncommit != pg_query.OnCommitAction_ONCOMMIT_NOOP {
		w.refuse("ON COMMIT")
	}
	t, err := schema.TableOf(cs)
	if err != nil {
		w.refuse("%s", err.Error())
	}
	keyed := keyColumns(cs)
	// MariaDB and SQLite get every constraint by the name PostgreSQL
	// would give it, so that their errors name it as PostgreSQL does
	// (see package errform); PostgreSQL names its own.
	conNames, _ := schema.ConstraintNames(cs)
	if w.pg() {
		conNames = nil
	}
	// The table being created is in scope for its CHECK expressions.
	w.scopes = append(w.scopes, scope{items: []scopeItem{{alias: t.Name, table: t}}})
	defer w.popScope()

	w.str("CREATE TABLE ")
	if cs.IfNotExists {
		w.str("IF NOT EXISTS ")
	}
	w.tableName(cs.Relation)
	w.str(" (")
	first := true
	sep := func() {
		if !first {
			w.str(", ")
		}
		first = false
	}
	type namedCon struct {
		con  *pg_query.Constraint
		name string
	}
	var tableCons []namedCon
	for _, e := range cs.TableElts {
		cd := e.GetColumnDef()
		if cd == nil {
			if con := e.GetConstraint(); con != nil {
				tableCons = append(tableCons, namedCon{con, conNames[con]})
			}
			continue
		}
		col := t.Column(cd.Colname)
		sep()
		w.ident(col.Name)
		w.str(" ")
		w.ddlType(*col, keyed[col.Name])
		if col.NotNull {
			w.str(" NOT NULL")
		}
		for _, n := range cd.Constraints {
			con := n.GetConstraint()
			switch con.Contype {
			case pg_query.ConstrType_CONSTR_DEFAULT:
				if col.Fill == schema.FillNone {
					w.str(" DEFAULT ")
					if w.lite() {
						w.str("(")
					}
					// A numeric(p,s) default is stored as any value is.
					w.assigned(con.RawExpr, col)
					if w.lite() {
						w.str(")")
					}
				}
			case pg_query.ConstrType_CONSTR_PRIMARY:
				w.str(" PRIMARY KEY")
			case pg_query.ConstrType_CONSTR_UNIQUE:
				w.checkUnique(con)
				if w.my() && conNames[con] != "" {
					// A column's UNIQUE takes no name in MariaDB.
					u := &pg_query.Constraint{Contype: con.Contype, Keys: []*pg_query.Node{pg_query.MakeStrNode(col.Name)}}
					tableCons = append(tableCons, namedCon{u, conNames[con]})
					continue
				}
				if w.lite() && conNames[con] != "" {
					w.str(" CONSTRAINT ")
					w.ident(conNames[con])
				}
				w.str(" UNIQUE")
			case pg_query.ConstrType_CONSTR_CHECK, pg_query.ConstrType_CONSTR_FOREIGN:
				if w.my() {
					// MariaDB ignores REFERENCES on a column; both go to
					// the table's constraints.
					if con.Contype == pg_query.ConstrType_CONSTR_FOREIGN && len(con.FkAttrs) == 0 {
						con.FkAttrs = []*pg_query.Node{pg_query.MakeStrNode(col.Name)}
					}
					tableCons = append(tableCons, namedCon{con, conNames[con]})
					continue
				}
				w.str(" ")
				w.constraint(con, true, conNames[con])
			case pg_query.ConstrType_CONSTR_NOTNULL, pg_query.ConstrType_CONSTR_NULL,
				pg_query.ConstrType_CONSTR_IDENTITY:
			default:
				w.refuse("column constraint %s", con.Contype.String())
			}
		}
	}
	for _, nc := range tableCons {
		sep()
		w.constraint(nc.con, false, nc.name)
	}
	w.str(")")
	if w.my() {
		w.str(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin")
	}
}

// storageOptions checks CREATE TABLE's WITH (...) as PostgreSQL does and
// writes nothing of it: fillfactor (pgbench -i gives it) only says how
// full PostgreSQL packs its pages, which no answer shows, and the other
// engines have no such setting. A value PostgreSQL refuses fails here,
// with its error, before any replica runs the statement (one replica
// failing where the others did not would count against it). Other
// options are refused.
func (w *writer) storageOptions(opts []*pg_query.Node) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defnamespace != "" || d.Defname != "fillfactor" {
			w.refuse("storage options in CREATE TABLE other than fillfactor")
		}
		text := ""
		switch {
		case d.Arg == nil:
			w.fail(pgerr.InvalidParameterValue, "invalid value for integer option %q: %s", d.Defname, "true")
		case d.Arg.GetInteger() != nil:
			text = strconv.Itoa(int(d.Arg.GetInteger().Ival))
		case d.Arg.GetString_() != nil:
			text = d.Arg.GetString_().Sval
		case d.Arg.GetFloat() != nil:
			text = d.Arg.GetFloat().Fval
		case d.Arg.GetTypeName() != nil:
			text = schema.TypeText(d.Arg.GetTypeName())
		}
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			w.fail(pgerr.InvalidParameterValue, "invalid value for integer option %q: %s", d.Defname, text)
		}
		if n < 10 || n > 100 {
			panic(failure{pgerr.New(pgerr.InvalidParameterValue, "value %s out of bounds for option %q", text, d.Defname).
				WithDetail("Valid values are between \"10\" and \"100\".")})
		}
	}
}

// numericDefault writes, for SQLite, the default of a numeric(p,s)
// column that ALTER TABLE adds. SQLite fills the rows already there with
// it, so it must be a constant, not a call of the function values are
// stored through: the number is rounded here as PostgreSQL rounds it, and
// one too large for the column fails as there (22003).
func (w *writer) numericDefault(n *pg_query.Node, mods []int32) {
	text, neg := "", false
	for e := n.GetAExpr(); e != nil; e = n.GetAExpr() {
		op := schema.OpName(e.Name)
		if e.Lexpr != nil || op != "-" && op != "+" {
			w.refuse("a default other than a plain number for a numeric(p,s) column added on SQLite")
		}
		neg = neg != (op == "-")
		n = e.Rexpr
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		text = strconv.Itoa(int(c.GetIval().Ival))
	} else if c != nil && c.GetFval() != nil {
		text = c.GetFval().Fval
	}
	scale := int32(0)
	if len(mods) == 2 {
		scale = mods[1]
	}
	r, ok := roundDecimal(strings.TrimPrefix(text, "-"), int(scale))
	if text == "" || strings.ContainsAny(text, "eE") || !ok {
		w.refuse("a default other than a plain number for a numeric(p,s) column added on SQLite")
	}
	if neg != strings.HasPrefix(text, "-") && strings.Trim(r, "0.") != "" {
		r = "-" + r
	}
	if whole, _, _ := strings.Cut(strings.TrimLeft(strings.TrimPrefix(r, "-"), "0"), "."); len(whole) > int(mods[0]-scale) {
		w.fail(pgerr.NumericValueOutOfRange, "numeric field overflow")
	}
	w.str(r)
}

// keyColumns returns the columns of a CREATE TABLE that are in a primary
// key, a unique constraint or a foreign key.
func keyColumns(cs *pg_query.CreateStmt) map[string]bool {
	out := map[string]bool{}
	addAll := func(l []*pg_query.Node) {
		for _, n := range l {
			if s := n.GetString_(); s != nil {
				out[s.Sval] = true
			}
		}
	}
	for _, e := range cs.TableElts {
		if cd := e.GetColumnDef(); cd != nil {
			for _, n := range cd.Constraints {
				switch n.GetConstraint().Contype {
				case pg_query.ConstrType_CONSTR_PRIMARY, pg_query.ConstrType_CONSTR_UNIQUE, pg_query.ConstrType_CONSTR_FOREIGN:
					out[cd.Colname] = true
				}
			}
		}
		if con := e.GetConstraint(); con != nil {
			addAll(con.Keys)
			addAll(con.FkAttrs)
		}
	}
	return out
}

func (w *writer) checkUnique(con *pg_query.Constraint) {
	if con.NullsNotDistinct {
		w.refuse("UNIQUE NULLS NOT DISTINCT")
	}
	if len(con.Including) > 0 || len(con.Options) > 0 || con.Indexspace != "" {
		w.refuse("index options on a constraint")
	}
}

// constraint writes a table constraint (or, with column true, the body of
// a column constraint in SQLite), named name when the client gave it
// none (MariaDB names a primary key PRIMARY whatever it is called).
func (w *writer) constraint(con *pg_query.Constraint, column bool, name string) {
	// A DEFERRABLE foreign key is written for SQLite as an immediate
	// one: SQLite could defer it to the commit, but a replica's COMMIT
	// failing on it is not told as PostgreSQL's error (the replica is
	// taken as failed), while an immediate check only ever refuses
	// earlier, never accepts what PostgreSQL refuses. (Package sqlan
	// makes such keys immediate for every replica before writing.)
	// MariaDB has no deferred checks at all and refuses.
	if (con.Deferrable || con.Initdeferred) && (w.my() || con.Contype != pg_query.ConstrType_CONSTR_FOREIGN) {
		w.refuse("DEFERRABLE constraints")
	}
	if con.Conname != "" {
		name = con.Conname
	}
	if name != "" && !(w.my() && con.Contype == pg_query.ConstrType_CONSTR_PRIMARY) {
		w.str("CONSTRAINT ")
		w.ident(name)
		w.str(" ")
	}
	names := func(l []*pg_query.Node) {
		w.str("(")
		list(w, l, func(n *pg_query.Node) { w.ident(n.GetString_().Sval) })
		w.str(")")
	}
	switch con.Contype {
	case pg_query.ConstrType_CONSTR_PRIMARY:
		w.checkUnique(con)
		w.str("PRIMARY KEY ")
		names(con.Keys)
	case pg_query.ConstrType_CONSTR_UNIQUE:
		w.checkUnique(con)
		w.str("UNIQUE ")
		names(con.Keys)
	case pg_query.ConstrType_CONSTR_CHECK:
		if con.IsNoInherit {
			w.refuse("CHECK ... NO INHERIT")
		}
		w.str("CHECK (")
		w.expr(con.RawExpr)
		w.str(")")
	case pg_query.ConstrType_CONSTR_FOREIGN:
		if !column {
			w.str("FOREIGN KEY ")
			names(con.FkAttrs)
			w.str(" ")
		}
		if con.FkMatchtype != "" && con.FkMatchtype != "s" {
			w.refuse("MATCH FULL/PARTIAL foreign keys")
		}
		w.str("REFERENCES ")
		w.tableName(con.Pktable)
		if len(con.PkAttrs) > 0 {
			w.str(" ")
			names(con.PkAttrs)
		} else if w.my() {
			// MariaDB needs the referenced columns: the primary key.
			pk := w.schema.Table(con.Pktable.Relname)
			if pk == nil || len(pk.Key) == 0 {
				w.refuse("REFERENCES without columns to a table whose key shepherd does not know")
			}
			w.str(" (")
			list(w, pk.Key, func(k string) { w.ident(k) })
			w.str(")")
		}
		w.fkAction(" ON DELETE ", con.FkDelAction)
		w.fkAction(" ON UPDATE ", con.FkUpdAction)
	default:
		w.refuse("constraint %s", con.Contype.String())
	}
}

func (w *writer) fkAction(prefix, a string) {
	switch a {
	case "", "a": // NO ACTION
	case "r":
		w.str(prefix + "RESTRICT")
	case "c":
		w.str(prefix + "CASCADE")
	case "n":
		w.str(prefix + "SET NULL")
	case "d":
		if w.my() {
			w.refuse("ON DELETE/UPDATE SET DEFAULT")
		}
		w.str(prefix + "SET DEFAULT")
	default:
		w.refuse("foreign key action %q", a)
	}
}

func (w *writer) createIndex(ix *pg_query.IndexStmt) {
	if ix.AccessMethod != "" && ix.AccessMethod != "btree" {
		w.refuse("index method %s", ix.AccessMethod)
	}
	if len(ix.IndexIncludingParams) > 0 || len(ix.Options) > 0 || ix.TableSpace != "" || ix.NullsNotDistinct {
		w.refuse("index options (INCLUDE, WITH, TABLESPACE, NULLS NOT DISTINCT)")
	}
	if ix.Concurrent {
		w.refuse("CREATE INDEX CONCURRENTLY")
	}
	if ix.WhereClause != nil && w.my() {
		w.refuse("partial indexes")
	}
	table := w.schema.Table(ix.Relation.Relname)
	w.str("CREATE ")
	if ix.Unique {
		w.str("UNIQUE ")
	}
	w.str("INDEX ")
	if ix.IfNotExists {
		w.str("IF NOT EXISTS ")
	}
	w.ident(schema.IndexName(ix))
	w.str(" ON ")
	w.tableName(ix.Relation)
	w.str(" (")
	list(w, ix.IndexParams, func(n *pg_query.Node) {
		e := n.GetIndexElem()
		if e.Name == "" || e.Expr != nil || len(e.Collation) > 0 || len(e.Opclass) > 0 && (ix.Unique || !patternOps(e.Opclass)) {
			w.refuse("index on an expression, or with a collation or operator class")
		}
		w.ident(e.Name)
		if w.my() && table != nil {
			if c := table.Column(e.Name); c != nil && (c.Type == "text" || c.Type == "varchar" && len(c.Mods) == 0) {
				// A LONGTEXT column is indexed by a prefix: fine for
				// lookups, not for uniqueness.
				if ix.Unique {
					w.refuse("a UNIQUE index on an unbounded text column (declare it UNIQUE in CREATE TABLE, or use varchar(n))")
				}
				w.str("(" + strconv.Itoa(keyTextLen) + ")")
			}
		}
		switch e.Ordering {
		case pg_query.SortByDir_SORTBY_DESC:
			w.str(" DESC")
		case pg_query.SortByDir_SORTBY_ASC:
			w.str(" ASC")
		}
		if e.NullsOrdering != pg_query.SortByNulls_SORTBY_NULLS_DEFAULT {
			w.refuse("NULLS FIRST/LAST in an index")
		}
	})
	w.str(")")
	if ix.WhereClause != nil {
		w.pushTable(ix.Relation, nil)
		w.str(" WHERE ")
		w.expr(ix.WhereClause)
		w.popScope()
	}
}

func (w *writer) createView(v *pg_query.ViewStmt) {
	if v.Replace && w.lite() {
		w.refuse("CREATE OR REPLACE VIEW")
	}
	if v.WithCheckOption != pg_query.ViewCheckOption_NO_CHECK_OPTION || len(v.Options) > 0 {
		w.refuse("view options")
	}
	if v.View.Relpersistence == "t" {
		w.refuse("temporary views")
	}
	w.str("CREATE ")
	if v.Replace {
		w.str("OR REPLACE ")
	}
	w.str("VIEW ")
	w.tableName(v.View)
	if len(v.Aliases) > 0 {
		w.str(" (")
		list(w, v.Aliases, func(n *pg_query.Node) { w.ident(n.GetString_().Sval) })
		w.str(")")
	}
	w.str(" AS ")
	w.selectStmt(v.Query.GetSelectStmt(), true)
}

func (w *writer) drop(d *pg_query.DropStmt) {
	if d.Concurrent {
		w.refuse("DROP INDEX CONCURRENTLY")
	}
	if d.Behavior == pg_query.DropBehavior_DROP_CASCADE && d.RemoveType != pg_query.ObjectType_OBJECT_TABLE && d.RemoveType != pg_query.ObjectType_OBJECT_VIEW {
		// Of a table or view, CASCADE drops nothing more: the analysis
		// (sqlan) refuses it where views or other tables' foreign keys
		// depend on what is dropped.
		w.refuse("DROP ... CASCADE")
	}
	var what string
	switch d.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
		what = "TABLE"
	case pg_query.ObjectType_OBJECT_VIEW:
		what = "VIEW"
	case pg_query.ObjectType_OBJECT_INDEX:
		what = "INDEX"
	default:
		w.refuse("DROP %s", d.RemoveType.String())
	}
	var objs []string
	for _, o := range d.Objects {
		l := o.GetList()
		if l == nil || len(l.Items) == 0 || len(l.Items) > 2 {
			w.refuse("this DROP object")
		}
		if len(l.Items) == 2 && l.Items[0].GetString_().Sval != "public" {
			w.refuse("schema-qualified names in DROP")
		}
		objs = append(objs, l.Items[len(l.Items)-1].GetString_().Sval)
	}
	if len(objs) != 1 && what == "INDEX" {
		w.refuse("DROP of several objects in one statement")
	}
	if len(objs) > 1 && what != "INDEX" {
		// Referencing tables first: SQLite, which drops one table per
		// statement, checks the foreign keys of each drop at once.
		objs = w.childrenFirst(objs)
	}
	if len(objs) > 1 && w.lite() {
		// SQLite's DROP takes one name: one statement each. The
		// analysis checked beforehand that each exists (or IF
		// EXISTS), so none fails part way.
		for i, o := range objs {
			if i > 0 {
				w.str("; ")
			}
			w.str("DROP " + what + " ")
			if d.MissingOk {
				w.str("IF EXISTS ")
			}
			w.ident(o)
		}
		return
	}
	if what == "INDEX" && w.my() {
		if w.dropFKIndex(objs[0], d.MissingOk) {
			return
		}
	}
	w.str("DROP " + what + " ")
	if d.MissingOk {
		w.str("IF EXISTS ")
	}
	list(w, objs, func(o string) { w.ident(o) })
	if what == "INDEX" && w.my() {
		table, ok := w.schema.IndexTable(objs[0])
		if !ok {
			w.refuse("DROP INDEX of an index shepherd did not see created")
		}
		w.str(" ON ")
		w.ident(table)
	}
}

// childrenFirst orders the tables of one DROP so that a table comes
// after every other of the list whose foreign keys reference it, else
// keeping the statement's order.
func (w *writer) childrenFirst(objs []string) []string {
	in := map[string]bool{}
	for _, o := range objs {
		in[o] = true
	}
	out := make([]string, 0, len(objs))
	done := map[string]bool{}
	var visit func(o string, depth int)
	visit = func(o string, depth int) {
		if done[o] || depth > len(objs) { // depth: a cycle of references
			return
		}
		kids := w.schema.Children(o)
		slices.Sort(kids) // Children's order is a map's
		for _, k := range kids {
			if in[k] {
				visit(k, depth+1)
			}
		}
		if !done[o] {
			done[o] = true
			out = append(out, o)
		}
	}
	for _, o := range objs {
		visit(o, 0)
	}
	return out
}

// dropFKIndex writes, for MariaDB, the drop of an index that a foreign
// key may be using: InnoDB keeps an index starting with a foreign key's
// columns and refuses to drop the last one, where PostgreSQL needs none.
// The foreign key gets an index of its own in the same statement. It
// reports whether it wrote the statement.
func (w *writer) dropFKIndex(index string, missingOK bool) bool {
	table, ok := w.schema.IndexTable(index)
	if !ok || missingOK {
		return false
	}
	t := w.schema.Table(table)
	cols := w.schema.IndexColumns[index]
	if t == nil || len(cols) == 0 {
		return false
	}
	for _, ref := range t.Refs() {
		if len(ref) == 0 || len(ref) > len(cols) || !slices.Equal(ref, cols[:len(ref)]) {
			continue
		}
		w.str("ALTER TABLE ")
		w.ident(table)
		w.str(" ADD INDEX ")
		w.ident("shepherd_fk_" + index)
		w.str(" (")
		list(w, ref, func(c string) { w.ident(c) })
		w.str("), DROP INDEX ")
		w.ident(index)
		return true
	}
	return false
}

func (w *writer) alterTable(at *pg_query.AlterTableStmt) {
	if at.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		w.refuse("ALTER %s", at.Objtype.String())
	}
	if len(at.Cmds) != 1 && w.lite() {
		w.refuse("several changes in one ALTER TABLE")
	}
	table := w.schema.Table(at.Relation.Relname)
	if w.lite() && len(at.Cmds) == 1 {
		switch cmd := at.Cmds[0].GetAlterTableCmd(); cmd.Subtype {
		case pg_query.AlterTableType_AT_AddConstraint, pg_query.AlterTableType_AT_DropConstraint,
			pg_query.AlterTableType_AT_SetNotNull, pg_query.AlterTableType_AT_DropNotNull,
			pg_query.AlterTableType_AT_AlterColumnType, pg_query.AlterTableType_AT_ColumnDefault:
			if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				w.refuse("ALTER TABLE ... CASCADE")
			}
			if at.MissingOk {
				w.refuse("ALTER TABLE IF EXISTS %s", alterWhat(cmd))
			}
			w.rebuild(table, cmd)
			return
		}
	}
	if w.my() && len(at.Cmds) == 1 {
		switch cmd := at.Cmds[0].GetAlterTableCmd(); cmd.Subtype {
		case pg_query.AlterTableType_AT_SetNotNull, pg_query.AlterTableType_AT_DropNotNull,
			pg_query.AlterTableType_AT_AlterColumnType:
			w.modifyColumn(at, table, cmd)
			return
		case pg_query.AlterTableType_AT_DropConstraint:
			w.dropConstraint(at, table, cmd)
			return
		}
	}
	w.pushTable(at.Relation, nil)
	defer w.popScope()
	// SQLite does not drop a column an index names (among its columns,
	// or in its WHERE); PostgreSQL drops the index with the column.
	var dropped []string
	if cmd := at.Cmds[0].GetAlterTableCmd(); w.lite() && table != nil && cmd.Subtype == pg_query.AlterTableType_AT_DropColumn && table.Column(cmd.Name) != nil {
		for ix, t := range w.schema.Indexes {
			if t == table.Name && w.schema.IndexNames(ix, cmd.Name) {
				dropped = append(dropped, ix)
			}
		}
		slices.Sort(dropped)
	}
	if len(dropped) > 0 {
		w.str("SAVEPOINT " + rebuildTable + "; ")
		for _, ix := range dropped {
			w.str("DROP INDEX ")
			w.ident(ix)
			w.str("; ")
		}
		defer w.str("; RELEASE " + rebuildTable)
	}
	w.str("ALTER TABLE ")
	w.tableName(at.Relation)
	w.str(" ")
	list(w, at.Cmds, func(n *pg_query.Node) {
		cmd := n.GetAlterTableCmd()
		if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE && (cmd.Subtype != pg_query.AlterTableType_AT_DropColumn || w.referencedColumn(table, cmd.Name)) {
			// DROP COLUMN ... CASCADE drops only what depends on the
			// column: with nothing (package sqlan refuses it when a view
			// may read the column), it is a plain DROP COLUMN. Django
			// removes fields so.
			w.refuse("ALTER TABLE ... CASCADE")
		}
		switch cmd.Subtype {
		case pg_query.AlterTableType_AT_AddColumn:
			cd := cmd.Def.GetColumnDef()
			col, _, err := schema.ColumnOf(cd)
			if err != nil {
				w.refuse("%s", err.Error())
			}
			type namedCheck struct {
				con  *pg_query.Constraint
				name string
			}
			var checks []namedCheck
			w.str("ADD COLUMN ")
			if cmd.MissingOk {
				w.str("IF NOT EXISTS ")
			}
			w.ident(col.Name)
			w.str(" ")
			w.ddlType(col, false)
			if col.NotNull {
				w.str(" NOT NULL")
			}
			for _, cn := range cd.Constraints {
				con := cn.GetConstraint()
				switch con.Contype {
				case pg_query.ConstrType_CONSTR_DEFAULT:
					if col.Fill != schema.FillNone {
						w.refuse("ADD COLUMN with a default shepherd fills in (rows already there would differ)")
					}
					w.str(" DEFAULT ")
					if w.lite() {
						w.str("(")
					}
					if w.lite() && col.Type == "numeric" && len(col.Mods) > 0 {
						w.numericDefault(con.RawExpr, col.Mods)
					} else {
						w.typed(con.RawExpr, col.Type)
					}
					if w.lite() {
						w.str(")")
					}
				case pg_query.ConstrType_CONSTR_NOTNULL, pg_query.ConstrType_CONSTR_NULL:
				case pg_query.ConstrType_CONSTR_CHECK:
					name := ""
					if table != nil && !w.pg() {
						if c, ok := schema.AddedConstraint(table, con, col.Name); ok {
							name = c.Name
						}
					}
					if w.my() && name != "" {
						// MariaDB names no column constraint: added after.
						checks = append(checks, namedCheck{con, name})
						continue
					}
					w.str(" ")
					w.constraint(con, true, name)
				default:
					w.refuse("ADD COLUMN with constraint %s", con.Contype.String())
				}
			}
			for _, c := range checks {
				w.str(", ADD ")
				w.constraint(c.con, false, c.name)
			}
			if col.Fill == schema.FillSerial {
				w.refuse("ADD COLUMN of a SERIAL or IDENTITY column (rows already there would differ)")
			}
		case pg_query.AlterTableType_AT_DropColumn:
			w.str("DROP COLUMN ")
			if cmd.MissingOk && w.my() {
				w.str("IF EXISTS ")
			} else if cmd.MissingOk {
				w.refuse("DROP COLUMN IF EXISTS")
			}
			w.ident(cmd.Name)
		case pg_query.AlterTableType_AT_ColumnDefault:
			w.str("ALTER COLUMN ")
			w.ident(cmd.Name)
			if cmd.Def == nil {
				w.str(" DROP DEFAULT")
				return
			}
			if !schema.IsConstant(cmd.Def) {
				w.refuse("SET DEFAULT of an expression that is not a constant")
			}
			w.str(" SET DEFAULT ")
			t := ""
			if table != nil {
				if c := table.Column(cmd.Name); c != nil {
					t = c.Type
				}
			}
			w.typed(cmd.Def, t)
		case pg_query.AlterTableType_AT_AddConstraint:
			if w.lite() {
				w.refuse("ALTER TABLE ... ADD CONSTRAINT")
			}
			w.str("ADD ")
			con := cmd.Def.GetConstraint()
			name := ""
			if table != nil && !w.pg() {
				if c, ok := schema.AddedConstraint(table, con, ""); ok {
					name = c.Name
				}
			}
			w.constraint(con, false, name)
		default:
			w.refuse("ALTER TABLE %s", cmd.Subtype.String())
		}
	})
}

// modifyColumn writes, for MariaDB, SET NOT NULL, DROP NOT NULL and
// ALTER COLUMN ... TYPE as MODIFY COLUMN with the column's whole new
// definition from shepherd's catalog (MariaDB has no statement that
// changes one attribute alone): its type, NULL or NOT NULL and its
// default. Refused where that definition is not certain to be the one
// the column has on MariaDB, or MariaDB would fail where PostgreSQL does
// not (a failing primary would be taken for a faulty one):
//   - an unbounded text column, whose MariaDB type depends on the keys
//     it was created with (LONGTEXT or VARCHAR);
//   - a type change that does not keep every value (as on SQLite), with
//     USING or COLLATE, or of a column a foreign key uses (MariaDB
//     refuses to change those).
func (w *writer) modifyColumn(at *pg_query.AlterTableStmt, table *schema.Table, cmd *pg_query.AlterTableCmd) {
	if at.MissingOk {
		w.refuse("ALTER TABLE IF EXISTS %s", alterWhat(cmd))
	}
	if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE {
		w.refuse("ALTER TABLE ... CASCADE")
	}
	if table == nil || table.View {
		w.refuse("ALTER TABLE %s of a table shepherd did not see created", alterWhat(cmd))
	}
	old := table.Column(cmd.Name)
	if old == nil {
		w.fail(pgerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Name, table.Name)
	}
	col := *old
	switch cmd.Subtype {
	case pg_query.AlterTableType_AT_SetNotNull:
		col.NotNull = true
	case pg_query.AlterTableType_AT_DropNotNull:
		for _, c := range table.Constraints {
			if c.Kind == schema.ConstraintPrimary && slices.Contains(c.Columns, col.Name) {
				w.fail(invalidTableDefinition, "column %q is in a primary key", col.Name)
			}
		}
		col.NotNull = false
	case pg_query.AlterTableType_AT_AlterColumnType:
		cd := cmd.Def.GetColumnDef()
		if cd.RawDefault != nil || cd.CollClause != nil {
			w.refuse("ALTER COLUMN ... TYPE with USING or COLLATE")
		}
		typ, mods, serial, ok := schema.TypeOf(cd.TypeName)
		if !ok || serial {
			w.refuse("ALTER COLUMN ... TYPE %s", schema.TypeText(cd.TypeName))
		}
		if !widens(col, typ, mods) {
			w.refuse("ALTER COLUMN ... TYPE from %s to %s (only a change that keeps every value: a longer text type, a wider integer)", col.Type, schema.TypeText(cd.TypeName))
		}
		if typ != col.Type || !slices.Equal(mods, col.Mods) {
			if w.foreignKeyUses(table, col.Name) {
				w.refuse("ALTER COLUMN ... TYPE of a column a foreign key uses (MariaDB refuses to change it)")
			}
		}
		col.Type, col.Mods = typ, mods
	}
	if col.Type == "text" || col.Type == "varchar" && len(col.Mods) == 0 {
		w.refuse("ALTER TABLE %s of an unbounded text column (its type on MariaDB depends on the keys it was created with)", alterWhat(cmd))
	}
	w.str("ALTER TABLE ")
	w.tableName(at.Relation)
	w.str(" MODIFY COLUMN ")
	w.ident(col.Name)
	w.str(" ")
	w.ddlType(col, false)
	if col.NotNull || slices.Contains(table.Key, col.Name) {
		w.str(" NOT NULL")
	} else {
		w.str(" NULL")
	}
	if col.Fill == schema.FillNone && col.Default != "" {
		tree, err := pg_query.Parse("SELECT " + col.Default)
		if err != nil || len(tree.Stmts) != 1 || len(tree.Stmts[0].Stmt.GetSelectStmt().GetTargetList()) != 1 {
			w.refuse("ALTER TABLE %s of a column whose default shepherd cannot write again", alterWhat(cmd))
		}
		w.str(" DEFAULT ")
		w.assigned(tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val, &col)
	}
}

// dropConstraint writes, for MariaDB, DROP CONSTRAINT by the kind of
// constraint shepherd's catalog records under the name: MariaDB drops a
// unique constraint as the index it is, a foreign key with DROP FOREIGN
// KEY (the index MariaDB made for it stays: it only serves lookups), a
// check with DROP CONSTRAINT and the primary key with DROP PRIMARY KEY.
func (w *writer) dropConstraint(at *pg_query.AlterTableStmt, table *schema.Table, cmd *pg_query.AlterTableCmd) {
	if at.MissingOk || cmd.MissingOk {
		w.refuse("DROP CONSTRAINT IF EXISTS")
	}
	if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE {
		w.refuse("ALTER TABLE ... CASCADE")
	}
	if table == nil || table.View {
		w.refuse("ALTER TABLE %s of a table shepherd did not see created", alterWhat(cmd))
	}
	i := slices.IndexFunc(table.Constraints, func(c schema.Constraint) bool { return c.Name == cmd.Name })
	if i < 0 {
		w.fail(pgerr.UndefinedObject, "constraint %q of relation %q does not exist", cmd.Name, table.Name)
	}
	c := table.Constraints[i]
	w.str("ALTER TABLE ")
	w.tableName(at.Relation)
	switch c.Kind {
	case schema.ConstraintPrimary:
		if w.referencedKey(table) {
			// PostgreSQL refuses too, naming the foreign key (2BP01);
			// MariaDB would fail otherwise.
			w.refuse("DROP CONSTRAINT of a primary key a foreign key references")
		}
		w.str(" DROP PRIMARY KEY")
	case schema.ConstraintUnique:
		w.str(" DROP INDEX ")
		w.ident(c.Name)
	case schema.ConstraintForeign:
		w.str(" DROP FOREIGN KEY ")
		w.ident(c.Name)
	case schema.ConstraintCheck:
		w.str(" DROP CONSTRAINT ")
		w.ident(c.Name)
	default:
		w.refuse("DROP CONSTRAINT of a %s constraint", c.Kind)
	}
}

// referencedKey reports whether another table's foreign key references
// table's primary key.
func (w *writer) referencedKey(table *schema.Table) bool {
	for _, col := range table.Key {
		if w.referencedColumn(table, col) {
			return true
		}
	}
	return false
}

// foreignKeyUses reports whether a foreign key references column col of
// table (see referencedColumn) or is made of it.
func (w *writer) foreignKeyUses(table *schema.Table, col string) bool {
	if w.referencedColumn(table, col) {
		return true
	}
	for _, c := range table.Constraints {
		if c.Kind == schema.ConstraintForeign && (slices.Contains(c.Columns, col) ||
			c.RefTable == table.Name && (slices.Contains(c.RefColumns, col) || len(c.RefColumns) == 0 && slices.Contains(table.Key, col))) {
			return true
		}
	}
	return false
}

func (w *writer) rename(r *pg_query.RenameStmt) {
	switch r.RenameType {
	case pg_query.ObjectType_OBJECT_TABLE:
		w.str("ALTER TABLE ")
		w.tableName(r.Relation)
		w.str(" RENAME TO ")
		w.ident(r.Newname)
	case pg_query.ObjectType_OBJECT_COLUMN:
		w.str("ALTER TABLE ")
		w.tableName(r.Relation)
		w.str(" RENAME COLUMN ")
		w.ident(r.Subname)
		w.str(" TO ")
		w.ident(r.Newname)
	default:
		w.refuse("ALTER ... RENAME of %s", r.RenameType.String())
	}
}

// patternOps reports whether an index's operator class is one of the
// pattern_ops classes (Django adds a varchar_pattern_ops index for LIKE
// on every indexed text column): they change which comparisons the index
// serves, not what a non-unique index holds, so the other engines get a
// plain index.
func patternOps(opclass []*pg_query.Node) bool {
	if len(opclass) != 1 || opclass[0].GetString_() == nil {
		return false
	}
	switch opclass[0].GetString_().Sval {
	case "varchar_pattern_ops", "text_pattern_ops", "bpchar_pattern_ops":
		return true
	}
	return false
}

// referencedColumn reports whether another table's foreign key may
// reference column col of table (true when shepherd does not know the
// table).
func (w *writer) referencedColumn(table *schema.Table, col string) bool {
	if table == nil {
		return true
	}
	for _, o := range w.schema.Tables {
		if o.Name == table.Name {
			continue
		}
		for _, c := range o.Constraints {
			if c.Kind == schema.ConstraintForeign && c.RefTable == table.Name &&
				(slices.Contains(c.RefColumns, col) || len(c.RefColumns) == 0 && slices.Contains(table.Key, col)) {
				return true
			}
		}
		if len(o.Constraints) == 0 && slices.Contains(o.Parents(), table.Name) {
			return true
		}
	}
	return false
}
