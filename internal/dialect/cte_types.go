package dialect

import (
	"maps"
	"strconv"

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
// integer arithmetic, which the dialects must be told). The types are
// those of the query's first (leftmost) member, which PostgreSQL uses
// for a recursive query (its recursive term must agree, 42804 there);
// a non-recursive compound resolves its members' types together, so its
// columns are left unknown where the members' types could differ. A
// column list (WITH t (a, b)) renames the first columns. Where any
// column cannot be named or typed the query stays unknown, as before.
func (w *writer) addCTETable(cte *pg_query.CommonTableExpr, q *pg_query.SelectStmt, recursive bool) {
	if w.cteTables == nil {
		w.cteTables = map[string]*schema.Table{}
	}
	delete(w.cteTables, cte.Ctename)
	first := q
	for first.Op != pg_query.SetOperation_SETOP_NONE {
		if !recursive {
			return
		}
		first = first.Larg
	}
	if recursive && first == q {
		return // not recursive after all: typed after it is written
	}
	cols, scales, ok := w.firstMemberColumns(first)
	if !ok || len(cte.Aliascolnames) > len(cols) {
		return
	}
	if recursive && w.my() && !w.widenAnchor(first, cols) {
		w.refuse("a recursive WITH query whose first member gives a bigint column from VALUES or beside a * (MariaDB types the column by that member's values)")
	}
	w.cteTables[cte.Ctename] = w.typedTable(cte.Ctename, cols, scales, cte.Aliascolnames)
}

// subqueryTable types the columns of a subquery in FROM as addCTETable
// types a WITH query's, so that expressions over them are written as
// PostgreSQL types them (d_next_o_id - 1 - mo over (SELECT max(o_id) mo
// ...) q is integer arithmetic; c1 <> sm - smh over scalar subqueries of
// sum(numeric) is numeric arithmetic at a known scale). It returns nil,
// as before, where a column cannot be named or typed exactly, for a
// LATERAL subquery (which sees the FROM items before it), a compound
// query (whose members' types are resolved together) and a subquery with
// its own WITH queries (which may hide tables its FROM names). The
// result is kept per subquery: the scopes around a subquery in FROM are
// the same each time it is met, and typing it again at every scope push
// would cost time exponential in the nesting.
func (w *writer) subqueryTable(rs *pg_query.RangeSubselect) *schema.Table {
	if t, seen := w.subqueryTables[rs]; seen {
		return t
	}
	var t *schema.Table
	sub := rs.Subquery.GetSelectStmt()
	if !rs.Lateral && rs.Alias != nil && sub != nil && sub.Op == pg_query.SetOperation_SETOP_NONE && sub.WithClause == nil {
		cols, scales, ok := w.firstMemberColumns(sub)
		if ok && len(rs.Alias.Colnames) <= len(cols) {
			t = w.typedTable(rs.Alias.Aliasname, cols, scales, rs.Alias.Colnames)
		}
	}
	if w.subqueryTables == nil {
		w.subqueryTables = map[*pg_query.RangeSubselect]*schema.Table{}
	}
	w.subqueryTables[rs] = t
	return t
}

// typedTable makes the table of a WITH query or subquery in FROM from
// its typed columns, renamed by a column list, and records the scales
// of its numeric columns that have no declared one (see colScales).
func (w *writer) typedTable(name string, cols []schema.Column, scales []int, rename []*pg_query.Node) *schema.Table {
	for i, a := range rename {
		cols[i].Name = a.GetString_().GetSval()
	}
	t := &schema.Table{Name: name, Columns: cols}
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

// firstMemberColumns types the result columns of a plain SELECT or
// VALUES list (no set operation); ok is false when one cannot be named
// or typed exactly. scales holds, per column, the scale of a numeric
// value that has no declared one (sum(x) of a numeric(12,2) x has 2),
// -1 for the others; a numeric value of unknown scale cannot be typed
// exactly (SQLite computes with floats, rounded to the scale).
func (w *writer) firstMemberColumns(s *pg_query.SelectStmt) (cols []schema.Column, scales []int, ok bool) {
	if len(s.ValuesLists) > 0 {
		rows := s.ValuesLists
		n := len(rows[0].GetList().GetItems())
		for j := range n {
			t := ""
			for i, r := range rows {
				items := r.GetList().GetItems()
				if len(items) != n {
					return nil, nil, false
				}
				rt := w.typeOf(items[j])
				if i == 0 {
					t = rt
				} else if rt != t {
					return nil, nil, false // PostgreSQL's common type
				}
			}
			if t == "" || t == "numeric" {
				return nil, nil, false // unknown, or a scale to tell
			}
			cols = append(cols, schema.Column{Name: "column" + strconv.Itoa(j+1), Type: t})
			scales = append(scales, -1)
		}
		return cols, scales, true
	}
	w.pushScope(s.FromClause)
	defer w.popScope()
	for _, tn := range s.TargetList {
		rt := tn.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && starRef(cr) {
			qual := ""
			if len(cr.Fields) == 2 {
				qual = cr.Fields[0].GetString_().GetSval()
			}
			star, ok := w.star(qual)
			if !ok {
				return nil, nil, false
			}
			for _, c := range star {
				cols = append(cols, schema.Column{Name: c.Name, Type: c.Type, Mods: c.Mods})
				scales = append(scales, -1)
			}
			continue
		}
		name := rt.Name
		if name == "" {
			name, _ = outputName(rt.Val)
		}
		c := schema.Column{Name: name}
		scale := -1
		if cr := rt.Val.GetColumnRef(); cr != nil {
			col, _ := w.column(refFields(cr))
			if col == nil {
				return nil, nil, false
			}
			c.Type, c.Mods = col.Type, col.Mods
			if s, ok := w.colScales[col]; ok {
				scale = s
			}
		} else {
			c.Type = w.typeOf(rt.Val)
			if tc := rt.Val.GetTypeCast(); tc != nil {
				_, c.Mods, _, _ = schema.TypeOf(tc.TypeName)
			}
			if c.Type == "numeric" && len(c.Mods) == 0 {
				s, ok := w.scaleOf(rt.Val)
				if !ok {
					return nil, nil, false // a scale to tell
				}
				scale = s
			}
		}
		if c.Type == "" {
			return nil, nil, false
		}
		cols = append(cols, c)
		scales = append(scales, scale)
	}
	return cols, scales, true
}

// widenAnchor marks the bigint columns of a recursive query's first
// member for MariaDB, which types a recursive query's columns by that
// member's values: CAST(0 AS SIGNED) makes an int(2) column there, which
// a sum past 2^31 overflows with 22003 where PostgreSQL's bigint column
// holds it. target writes a marked column as a CASE whose dead branch is
// a bigint constant, which makes the column BIGINT. It reports false
// where it cannot mark them: a VALUES list or a * beside a bigint
// column.
func (w *writer) widenAnchor(first *pg_query.SelectStmt, cols []schema.Column) bool {
	wide := false
	for _, c := range cols {
		wide = wide || c.Type == "int8"
	}
	if !wide {
		return true
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
