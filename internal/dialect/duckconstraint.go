package dialect

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// addConstraint rewrites ALTER TABLE t ADD [CONSTRAINT c] FOREIGN KEY,
// which DuckDB has no ALTER TABLE for, into what does the same on a
// DuckDB replica (part of PrepareDuckDB), and returns the statement to
// write instead (or tree itself). The DuckDB replica holds no foreign
// keys (see duck.constraint; the SQLite replicas check them), so it only
// checks what PostgreSQL checks when adding one: every row of t whose
// key has no NULL finds its row in p (else 23503, as PostgreSQL), unless
// NOT VALID. DEFERRABLE changes nothing there.
//
// A PRIMARY KEY stays ALTER TABLE ... ADD PRIMARY KEY, which DuckDB has
// (it fails NULLs with 23502 and duplicates with 23505, as PostgreSQL).
// A UNIQUE is the table rebuilt (duckUnique). Anything else is left for
// DuckDB to refuse.
func addConstraint(tree *pg_query.Node, s *schema.Snapshot) *pg_query.Node {
	at := tree.GetAlterTableStmt()
	if at == nil || len(at.Cmds) != 1 || at.Relation == nil || s == nil {
		return tree
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	con := cmd.GetDef().GetConstraint()
	if cmd.GetSubtype() != pg_query.AlterTableType_AT_AddConstraint || con == nil {
		return tree
	}
	table := s.Table(at.Relation.Relname)
	if table == nil || table.View || at.Relation.Schemaname != "" && at.Relation.Schemaname != "public" {
		return tree
	}
	if _, _, ok := duckUnique(tree, s); ok {
		// The table renamed; duckUniqueAfter makes it again.
		res, err := pg_query.Parse("ALTER TABLE " + quoteDuck(table.Name) + " RENAME TO " + quoteDuck(duckRebuildTable))
		if err != nil || len(res.Stmts) != 1 {
			return tree
		}
		return res.Stmts[0].Stmt
	}
	switch con.Contype {
	case pg_query.ConstrType_CONSTR_PRIMARY:
		if con.Deferrable || con.Initdeferred || len(con.Including) > 0 || len(con.Options) > 0 || con.Indexname != "" {
			return tree
		}
		con.Conname = "" // DuckDB names its own
		return tree
	case pg_query.ConstrType_CONSTR_FOREIGN:
		fks, refs := names(con.FkAttrs), names(con.PkAttrs)
		parent := s.Table(con.GetPktable().GetRelname())
		if parent == nil || parent.View || con.Pktable.Schemaname != "" && con.Pktable.Schemaname != "public" {
			return tree
		}
		if len(refs) == 0 {
			refs = parent.Key
		}
		if len(fks) == 0 || len(fks) != len(refs) || con.FkMatchtype != "" && con.FkMatchtype != "s" {
			return tree
		}
		for _, c := range fks {
			if table.Column(c) == nil {
				return tree
			}
		}
		for _, c := range refs {
			if parent.Column(c) == nil {
				return tree
			}
		}
		// What DuckDBAfter does on DELETE for the key's actions, and
		// what the CREATE TABLE of such a key allows (duck.constraint).
		if a := con.FkUpdAction; a != "" && a != "a" && a != "r" {
			return tree
		}
		if a := con.FkDelAction; a != "" && a != "a" && a != "r" && a != "c" && a != "n" || len(con.FkDelSetCols) > 0 {
			return tree
		}
		child, ref := at.Relation.Relname, parent.Name
		cond := "true"
		if !con.SkipValidation {
			var keyed, matched []string
			for i, c := range fks {
				keyed = append(keyed, "shepherd_fk_child."+quoteDuck(c)+" IS NOT NULL")
				matched = append(matched, "shepherd_fk_parent."+quoteDuck(refs[i])+" = shepherd_fk_child."+quoteDuck(c))
			}
			cond = "EXISTS (SELECT 1 FROM " + quoteDuck(child) + " shepherd_fk_child WHERE " + strings.Join(keyed, " AND ") +
				" AND NOT EXISTS (SELECT 1 FROM " + quoteDuck(ref) + " shepherd_fk_parent WHERE " + strings.Join(matched, " AND ") + "))"
		}
		name := con.Conname
		if name == "" {
			name = child + "_" + strings.Join(fks, "_") + "_fkey"
		}
		// One row; the subqueries only make DuckDB check the columns.
		text := "SELECT CASE WHEN " + cond + " THEN error(" + duckString("insert or update on table \""+child+"\" violates foreign key constraint \""+name+"\"") +
			") END, (SELECT count(*) FROM (SELECT " + quoteList(fks) + " FROM " + quoteDuck(child) + " LIMIT 0) shepherd_fk_cols), " +
			"(SELECT count(*) FROM (SELECT " + quoteList(refs) + " FROM " + quoteDuck(ref) + " LIMIT 0) shepherd_fk_refs)"
		res, err := pg_query.Parse(text)
		if err != nil || len(res.Stmts) != 1 {
			return tree
		}
		return res.Stmts[0].Stmt
	}
	return tree
}

// names returns the names of a list of String nodes, or nil.
func names(l []*pg_query.Node) []string {
	var out []string
	for _, n := range l {
		s := n.GetString_()
		if s == nil {
			return nil
		}
		out = append(out, s.Sval)
	}
	return out
}

func quoteList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteDuck(c)
	}
	return strings.Join(q, ", ")
}

// duckString writes s as a string constant.
func duckString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// indexedAlter refuses (0A000) an ALTER TABLE or a rename of a table that
// has an index made by CREATE INDEX, beyond ADD COLUMN (without NOT NULL)
// and SET/DROP DEFAULT: DuckDB fails those on such a table ("Cannot
// alter entry ... because there are entries that depend on it", 2BP01)
// where the other engines run them, and its replica was taken out for it.
func indexedAlter(tree *pg_query.Node, s *schema.Snapshot) error {
	if s == nil {
		return nil
	}
	var table string
	if at := tree.GetAlterTableStmt(); at != nil && at.Relation != nil {
		table = at.Relation.Relname
		simple := true
		for _, c := range at.Cmds {
			cmd := c.GetAlterTableCmd()
			switch cmd.GetSubtype() {
			case pg_query.AlterTableType_AT_ColumnDefault:
			case pg_query.AlterTableType_AT_AddConstraint:
				// A foreign key is no ALTER TABLE there (addConstraint).
				simple = simple && cmd.Def.GetConstraint().GetContype() == pg_query.ConstrType_CONSTR_FOREIGN
			case pg_query.AlterTableType_AT_AddColumn:
				if cd := cmd.Def.GetColumnDef(); cd == nil || slices.ContainsFunc(cd.Constraints, isNotNull) {
					simple = false
				}
			default:
				simple = false
			}
		}
		if simple {
			return nil
		}
	} else if rn := tree.GetRenameStmt(); rn != nil && rn.Relation != nil {
		table = rn.Relation.Relname
	} else {
		return nil
	}
	for ix, t := range s.Indexes {
		if t == table {
			return pgerr.New(pgerr.FeatureNotSupported,
				"shepherd cannot write this ALTER TABLE of table %q, which has an index (%s), for DuckDB replicas (DuckDB cannot alter such a table)", table, ix).
				WithHint("drop the index, alter the table and create the index again")
		}
	}
	return nil
}

// duckRebuildTable is the name a DuckDB replica's table takes while it is
// rebuilt with a UNIQUE constraint added (see duckUnique).
const duckRebuildTable = "shepherd_rebuild"

// duckUnique reports whether ALTER TABLE t ADD [CONSTRAINT c] UNIQUE
// (cols) is written for DuckDB as the table rebuilt, and returns the
// table's definition with the constraint added (PostgreSQL's syntax,
// foreign keys left out: the DuckDB replica holds none). DuckDB has no
// ALTER TABLE ADD UNIQUE, and a unique index made instead would stop the
// later ALTER TABLEs of the table (see indexedAlter); a constraint made
// with the table does not. So the table is renamed, made again with the
// constraint, filled from the old one (duplicates fail there, 23505 as
// on PostgreSQL), and the old one dropped: one transaction (the driver
// runs the parts together). Only a plain UNIQUE over known columns of a
// table whose constraints shepherd recorded, with no index made by
// CREATE INDEX (those indexedAlter refuses), is rebuilt; anything else
// stays for DuckDB to refuse.
func duckUnique(tree *pg_query.Node, s *schema.Snapshot) (*schema.Table, string, bool) {
	at := tree.GetAlterTableStmt()
	if at == nil || len(at.Cmds) != 1 || at.Relation == nil || s == nil || at.MissingOk ||
		at.Relation.Schemaname != "" && at.Relation.Schemaname != "public" {
		return nil, "", false
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	con := cmd.GetDef().GetConstraint()
	if cmd.GetSubtype() != pg_query.AlterTableType_AT_AddConstraint || con == nil || con.Contype != pg_query.ConstrType_CONSTR_UNIQUE ||
		con.Deferrable || con.Initdeferred || con.NullsNotDistinct || len(con.Including) > 0 || len(con.Options) > 0 ||
		con.Indexname != "" || con.Indexspace != "" || len(con.Keys) == 0 {
		return nil, "", false
	}
	table := s.Table(at.Relation.Relname)
	if table == nil || table.View || len(table.Constraints) == 0 && len(table.Key) > 0 {
		return nil, "", false
	}
	if con.Conname != "" && table.Constraint(con.Conname) != nil {
		return nil, "", false
	}
	for _, t := range s.Indexes {
		if t == table.Name {
			return nil, "", false
		}
	}
	added, ok := schema.AddedConstraint(table, con, "")
	if !ok {
		return nil, "", false
	}
	for _, k := range added.Columns {
		if table.Column(k) == nil {
			return nil, "", false
		}
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE " + quoteDuck(duckRebuildTable) + " (")
	for i, c := range table.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		if schema.IsArray(c.Type) {
			b.WriteString(quoteDuck(c.Name) + " pg_catalog." + schema.ArrayElement(c.Type) + "[]")
		} else {
			b.WriteString(quoteDuck(c.Name) + " pg_catalog." + c.Type)
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
	for _, c := range append(slices.Clone(table.Constraints), added) {
		switch c.Kind {
		case schema.ConstraintPrimary:
			b.WriteString(", PRIMARY KEY (" + quoteList(c.Columns) + ")")
		case schema.ConstraintUnique:
			b.WriteString(", UNIQUE (" + quoteList(c.Columns) + ")")
		case schema.ConstraintCheck:
			if c.Expr == "" {
				return nil, "", false
			}
			b.WriteString(", CHECK (" + c.Expr + ")")
		}
	}
	b.WriteString(")")
	return table, b.String(), true
}

// duckUniqueAfter returns what a DuckDB replica runs after the rename of
// duckUnique: the table made again, filled and the old one dropped; nil
// when tree is no such ALTER TABLE.
func duckUniqueAfter(tree *pg_query.Node, s *schema.Snapshot) ([]string, error) {
	table, def, ok := duckUnique(tree, s)
	if !ok {
		return nil, nil
	}
	refuse := func() ([]string, error) {
		return nil, pgerr.New(pgerr.FeatureNotSupported,
			"shepherd cannot write ALTER TABLE ADD UNIQUE of table %q for DuckDB replicas (its definition does not translate)", table.Name)
	}
	res, err := pg_query.Parse(def)
	if err != nil || len(res.Stmts) != 1 {
		return refuse()
	}
	prepared, err := PrepareDuckDB(res.Stmts[0].Stmt, s)
	if err != nil {
		return nil, err
	}
	out, err := DuckDB(prepared, s)
	if err != nil {
		return nil, err
	}
	cs := out.GetCreateStmt()
	if cs == nil || cs.Relation == nil {
		return refuse()
	}
	cs.Relation.Relname = table.Name
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion(), Stmts: []*pg_query.RawStmt{{Stmt: out}}})
	if err != nil {
		return refuse()
	}
	names := make([]string, len(table.Columns))
	for i, c := range table.Columns {
		names[i] = c.Name
	}
	return []string{
		QuoteDuckNames(text),
		"INSERT INTO " + quoteDuck(table.Name) + " (" + quoteList(names) + ") SELECT " + quoteList(names) + " FROM " + quoteDuck(duckRebuildTable),
		"DROP TABLE " + quoteDuck(duckRebuildTable),
	}, nil
}
