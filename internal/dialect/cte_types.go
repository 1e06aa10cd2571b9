package dialect

import (
	"maps"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// keepCTETables saves the WITH queries in scope; the function it returns
// restores them when the query that names more ends.
func (w *writer) keepCTETables() func() {
	saved := maps.Clone(w.cteTables)
	return func() { w.cteTables = saved }
}

// addCTETable makes the columns of a WITH query known to the writer, as
// the columns of a table are, so that expressions over them are typed as
// PostgreSQL types them (a + b over WITH t (a, b) AS (VALUES (1, 2)) is
// integer arithmetic, which the dialects must be told). The typer types
// them (see derivedTable): a recursive query's by its non-recursive term
// (the left side of its UNION, whose types the recursive term must
// agree with, 42804 there). A column list (WITH t (a, b)) renames the
// first columns. Where any column cannot be named or typed the query
// stays unknown, as before.
func (w *writer) addCTETable(cte *pg_query.CommonTableExpr, q *pg_query.SelectStmt, recursive bool) {
	if w.cteTables == nil {
		w.cteTables = map[string]*schema.Table{}
	}
	delete(w.cteTables, cte.Ctename)
	t := w.typer()
	defer func() { w.typedSelects += t.selects }()
	if !recursive || q.Op != pg_query.SetOperation_SETOP_UNION {
		w.cteTables[cte.Ctename] = w.derivedTable(cte.Ctename, t.stmtRel(cte.Ctequery), cte.Aliascolnames)
		return
	}
	// The recursive term sees the columns the non-recursive term gives.
	t.ctes = append(t.ctes, map[string]*rel{cte.Ctename: nil})
	table := w.derivedTable(cte.Ctename, t.selectRel(q.Larg), cte.Aliascolnames)
	if table == nil {
		return
	}
	if w.my() && !w.widenAnchor(q.Larg, table.Columns) {
		w.refuse("a recursive WITH query whose first member gives a bigint column from VALUES or beside a * (MariaDB types the column by that member's values)")
	}
	w.cteTables[cte.Ctename] = table
}

// subqueryTable types the columns of a subquery in FROM as addCTETable
// types a WITH query's, so that expressions over them are written as
// PostgreSQL types them (d_next_o_id - 1 - mo over (SELECT max(o_id) mo
// ...) q is integer arithmetic; c1 <> sm - smh over scalar subqueries of
// sum(numeric) is numeric arithmetic at a known scale). It returns nil,
// as before, where a column cannot be named or typed exactly, and for a
// LATERAL subquery (which sees the FROM items before it). The result is
// kept per subquery: the scopes around a subquery in FROM are the same
// each time it is met, and typing it again at every scope push would
// cost time exponential in the nesting.
func (w *writer) subqueryTable(rs *pg_query.RangeSubselect) *schema.Table {
	if t, seen := w.subqueryTables[rs]; seen {
		return t
	}
	var t *schema.Table
	if !rs.Lateral && rs.Alias != nil {
		ty := w.typer()
		r, seen := ty.derived[rs]
		if !seen {
			r = resolvedRel(ty.stmtRel(rs.Subquery))
			ty.derived[rs] = r
		}
		w.typedSelects += ty.selects
		t = w.derivedTable(rs.Alias.Aliasname, r, rs.Alias.Colnames)
	}
	if w.subqueryTables == nil {
		w.subqueryTables = map[*pg_query.RangeSubselect]*schema.Table{}
	}
	w.subqueryTables[rs] = t
	return t
}

// typer is a typer that sees what the writer's scopes see: the FROM
// items of the enclosing query levels (a subquery in FROM may name their
// columns; not its own level's, which only LATERAL sees), and the WITH
// queries in scope, typed or not (an untyped one hides a table of its
// name). Their columns are the writer's, with the scales colScales
// records. It shares the writer's derivedRels: a subquery in FROM is
// typed once, in its own scope, wherever it is met.
func (w *writer) typer() *typer {
	if w.derivedRels == nil {
		w.derivedRels = map[*pg_query.RangeSubselect]*rel{}
	}
	t := &typer{schema: w.schema, derived: w.derivedRels}
	for _, sc := range w.scopes {
		items := make([]relItem, len(sc.items))
		for i, it := range sc.items {
			items[i] = relItem{alias: it.alias, rel: w.tableRel(it.table)}
		}
		t.scopes = append(t.scopes, items)
	}
	frame := map[string]*rel{}
	for name := range w.ctes {
		frame[name] = nil
	}
	for name, table := range w.cteTables {
		frame[name] = w.tableRel(table)
	}
	t.ctes = append(t.ctes, frame)
	return t
}

// tableRel is the typer's view of a table in the writer's scopes; nil
// for an unknown table or a view (whose columns the typer does not
// type).
func (w *writer) tableRel(table *schema.Table) *rel {
	if table == nil || table.View {
		return nil
	}
	r := &rel{cols: make([]relCol, len(table.Columns))}
	for i := range table.Columns {
		c := &table.Columns[i]
		p := pgType{name: c.Type, mods: c.Mods}
		if s, ok := w.colScales[c]; ok {
			p.scale, p.scaled = int32(s), true
		}
		r.cols[i] = relCol{name: c.Name, t: p}
	}
	return r
}

// derivedTable makes the table of a WITH query or subquery in FROM from
// the typer's columns r, renamed by a column list, and records the
// scales of its numeric columns that have no declared one (see
// colScales). It is nil where a column cannot be named or typed, or is
// a numeric of unknown scale, which cannot be typed exactly (SQLite
// computes with floats, rounded to the scale), or where the column list
// is longer than the columns.
func (w *writer) derivedTable(name string, r *rel, rename []*pg_query.Node) *schema.Table {
	r = resolvedRel(r)
	if r == nil || len(r.cols) == 0 || len(rename) > len(r.cols) {
		return nil
	}
	t := &schema.Table{Name: name, Columns: make([]schema.Column, len(r.cols))}
	scales := make([]int, len(r.cols))
	for i, c := range r.cols {
		scales[i] = -1
		switch {
		case c.name == "" || c.t.name == "":
			return nil
		case c.t.name == "numeric" && len(c.t.mods) == 0:
			if !c.t.scaled {
				return nil
			}
			scales[i] = int(c.t.scale)
		}
		t.Columns[i] = schema.Column{Name: c.name, Type: c.t.name, Mods: c.t.mods}
	}
	for i, a := range rename {
		t.Columns[i].Name = a.GetString_().GetSval()
	}
	for i, s := range scales {
		if s < 0 {
			continue
		}
		if w.colScales == nil {
			w.colScales = map[*schema.Column]int{}
		}
		w.colScales[&t.Columns[i]] = s
	}
	return t
}

// widenAnchor marks the bigint columns (cols) of a recursive query's
// non-recursive term (anchor) for MariaDB, which types a recursive
// query's columns by that term's values: CAST(0 AS SIGNED) makes an
// int(2) column there, which a sum past 2^31 overflows with 22003 where
// PostgreSQL's bigint column holds it. target writes a marked column of
// the term's first member as a CASE whose dead branch is a bigint
// constant, which makes the column (of the member, and so of a UNION of
// members) BIGINT. It reports false where it cannot mark them: a VALUES
// list or a * beside a bigint column.
func (w *writer) widenAnchor(anchor *pg_query.SelectStmt, cols []schema.Column) bool {
	wide := false
	for _, c := range cols {
		wide = wide || c.Type == "int8"
	}
	if !wide {
		return true
	}
	first := anchor
	for first.Op != pg_query.SetOperation_SETOP_NONE {
		first = first.Larg
	}
	if len(first.ValuesLists) > 0 || len(first.TargetList) != len(cols) {
		return false
	}
	for _, t := range first.TargetList {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && starRef(cr) {
			return false
		}
	}
	if w.widen == nil {
		w.widen = map[*pg_query.Node]bool{}
	}
	for i, t := range first.TargetList {
		if cols[i].Type == "int8" {
			w.widen[t.GetResTarget().Val] = true
		}
	}
	return true
}
