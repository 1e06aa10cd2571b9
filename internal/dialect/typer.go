package dialect

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgfunc"
	"github.com/shepherd-db/shepherd/internal/pgnumeric"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// The typer types expressions and relations as PostgreSQL's parse
// analysis does, as far as the schema and the statement tell: the one
// model of the types of result columns and of derived tables (subqueries
// in FROM, WITH queries, VALUES lists, set operations). Describe (sqlan)
// asks it for a statement's result columns; the writer for the columns
// of the derived tables whose values it writes expressions over (see
// derivedTable), so that the client is told, and the engines are made to
// compute, the same types.

// PGType is what the typer knows of the PostgreSQL type of an
// expression or a result column.
type PGType = pgType

// Name is the type's internal name ("int4", "varchar"), "" when unknown.
func (p pgType) Name() string { return p.name }

// Mods are the type's modifiers as declared (varchar(n): [n],
// numeric(p,s): [p s]); nil when none or unknown.
func (p pgType) Mods() []int32 { return p.mods }

// Width is the length of the values of a character(n) type that lost
// its modifier (max() of a char(n) column), 0 when unknown.
func (p pgType) Width() int32 { return p.width }

// NumericScale is the number of fractional digits of the values of a
// numeric (or integer) type, when known.
func (p pgType) NumericScale() (int32, bool) { return numericScale(p) }

// NamedType is the type of that name, without modifiers.
func NamedType(name string) PGType { return typ(name) }

// DeclaredType is the type of that name with the modifiers a column or
// a cast declares.
func DeclaredType(name string, mods []int32) PGType { return pgType{name: name, mods: mods} }

// ResultColumn is one result column as the typer sees it.
type ResultColumn struct {
	Name string
	Type PGType
}

// ResultColumns names and types the result columns of a statement that
// returns rows (a query, or INSERT, UPDATE or DELETE with RETURNING) as
// PostgreSQL would describe them; nil when it cannot list them (a * over
// a table shepherd does not know).
func ResultColumns(n *pg_query.Node, s *schema.Snapshot) []ResultColumn {
	t := &typer{schema: s}
	r := resolvedRel(t.stmtRel(n))
	if r == nil || len(r.cols) == 0 {
		return nil
	}
	out := make([]ResultColumn, len(r.cols))
	for i, c := range r.cols {
		out[i] = ResultColumn{Name: c.name, Type: c.t}
	}
	return out
}

// ColumnName is the name PostgreSQL gives a result column written
// without an alias (FigureColname; see OutputName).
func ColumnName(n *pg_query.Node) (string, int) { return (&typer{}).figureName(n) }

// TypeIn types x as PostgreSQL does in the FROM scope of sel (which
// sees sel's WITH queries).
func TypeIn(s *schema.Snapshot, sel *pg_query.SelectStmt, x *pg_query.Node) PGType {
	t := &typer{schema: s}
	if sel.WithClause != nil {
		t.pushWith(sel.WithClause)
	}
	var items []relItem
	for _, f := range sel.FromClause {
		items = append(items, t.fromItem(f, items)...)
	}
	t.scopes = append(t.scopes, items)
	return t.typeOf(x)
}

// pgType is what shepherd knows of the PostgreSQL type of an expression.
type pgType struct {
	// name is the type's internal name ("int4", "varchar"), litType for
	// an untyped literal, "" when shepherd cannot tell.
	name string
	// mods are the type's modifiers as declared (varchar(n): [n],
	// numeric(p,s): [p s]); nil when none or unknown.
	mods []int32
	// width is the length of character(n) values whose type has lost
	// its modifier (min, max, lag of a char(n) column).
	width int32
	// scale, when scaled, is the number of fractional digits of numeric
	// values whose type has no modifier (PostgreSQL's numeric arithmetic
	// keeps the digits of its operands: sums, products, min, max).
	scale  int32
	scaled bool
	// mixed names the construct (UNION, VALUES, CASE, COALESCE,
	// GREATEST/LEAST) whose numeric values come from inputs of different
	// scales (an integer and a numeric(p,2), 1 and 2.50): PostgreSQL
	// shows each value at its own scale, which no column scale gives
	// (see mixedScales). "" otherwise.
	mixed string
}

// litType names the type of a quoted string or NULL that nothing gave a
// type yet (PostgreSQL's "unknown"): it takes the type its context needs,
// and is text where nothing needs one.
const litType = "unknown"

func typ(name string) pgType { return pgType{name: name} }

func (p pgType) lit() bool { return p.name == litType }

// resolved is the type of a result column: PostgreSQL makes untyped
// literals text there.
func (p pgType) resolved() pgType {
	if p.lit() {
		return typ("text")
	}
	return p
}

// numericScale is the number of fractional digits of the values of a
// numeric (or integer) expression, when known.
func numericScale(p pgType) (int32, bool) {
	switch {
	case isInteger(p.name):
		return 0, true
	case p.name != "numeric":
		return 0, false
	case len(p.mods) == 2:
		return p.mods[1], true
	case len(p.mods) == 1:
		return 0, true
	}
	return p.scale, p.scaled
}

// withScaleOf is t, a numeric type without modifiers, with the scale of
// its values when known.
func withScaleOf(name string, scale int32, ok bool) pgType {
	if name != "numeric" || !ok {
		return typ(name)
	}
	return pgType{name: name, scale: scale, scaled: true}
}

// keepValues is the type of an expression whose values are its
// argument's (min, max, lag, abs, -x): the argument's type without its
// modifiers, with the width or scale the values keep.
func keepValues(name string, arg pgType) pgType {
	if name == "bpchar" {
		return pgType{name: name, width: charWidth(arg)}
	}
	sc, ok := numericScale(arg)
	out := withScaleOf(name, sc, ok)
	if !out.scaled {
		out.mixed = arg.mixed
	}
	return out
}

// charWidth is the length of the values of a character(n) expression, 0
// when unknown or not character(n).
func charWidth(p pgType) int32 {
	switch {
	case p.name != "bpchar":
		return 0
	case len(p.mods) == 1:
		return p.mods[0]
	}
	return p.width
}

// category and implicitCast are pgfunc's model
// of PostgreSQL's types (the one the writers and the function catalogue
// use).
func category(name string) byte { return pgfunc.Category(name) }

func implicitCast(a, b string) bool { return pgfunc.ImplicitCast(a, b) }

// commonType is PostgreSQL's select_common_type and
// select_common_typmod: the type CASE, COALESCE, GREATEST, VALUES and
// UNION give to a list of expressions. Untyped literals follow the typed
// expressions (and are text when all are literals); the modifiers survive
// when every input has the same type and modifiers.
func commonType(ts []pgType) pgType {
	if len(ts) == 0 {
		return pgType{}
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	// The type is pgfunc's; its modifiers those of the first input of
	// that type.
	name := pgfunc.CommonType(names)
	if name == "" {
		return pgType{}
	}
	p := typ(name)
	for _, t := range ts {
		if t.name == name {
			p = t
			break
		}
	}
	out := pgType{name: p.name, mods: p.mods, width: charWidth(p)}
	for _, t := range ts {
		if t.name != p.name || !slices.Equal(t.mods, p.mods) {
			out.mods = nil
		}
		if charWidth(t) != out.width {
			out.width = 0 // a literal, or values of other lengths
		}
	}
	if out.mods != nil {
		out.width = 0
	}
	if out.name == "numeric" && out.mods == nil {
		// Every value keeps its own digits: known when all agree (an
		// untyped literal is taken for a NULL).
		first := true
		for _, t := range ts {
			if t.lit() {
				continue
			}
			sc, ok := numericScale(t)
			switch {
			case !ok || !first && sc != out.scale:
				out.scale, out.scaled = 0, false
				return out
			case first:
				out.scale, out.scaled, first = sc, true, false
			}
		}
	}
	return out
}

// mixedCommon is commonType of the inputs of the construct what, marked
// mixed when its values are numeric of no common scale and at least two
// inputs differ in scale (known or not): the column's values then keep
// the scale of the input each came from. An input already mixed makes
// the result mixed.
func mixedCommon(what string, ts []pgType) pgType {
	out := commonType(ts)
	if out.name != "numeric" || out.mods != nil || out.scaled {
		return out
	}
	seen, first := false, pgType{}
	for _, t := range ts {
		if t.lit() {
			continue
		}
		if t.mixed != "" {
			out.mixed = t.mixed
			return out
		}
		sc, ok := numericScale(t)
		if !seen {
			seen, first.scale, first.scaled = true, sc, ok
			continue
		}
		if ok != first.scaled || sc != first.scale {
			out.mixed = what
			return out
		}
	}
	return out
}

// relCol is one column of a relation in a FROM clause or of a result.
type relCol struct {
	name string
	t    pgType
}

// rel is a relation whose columns shepherd can list (their types may
// still be unknown). A nil *rel is one it cannot see into.
type rel struct {
	cols []relCol
}

// relItem is one relation visible in a FROM clause, under its alias.
type relItem struct {
	alias string
	rel   *rel
	// join, on the tables of a NATURAL or USING join, is the join's
	// columns (see usingJoin), which * lists in their place: the
	// merged columns first, once, then the others of each side. The
	// tables of a join within it carry the outer join's.
	join *joinCols
}

// joinCols are the columns * lists for a NATURAL or USING join; nil
// cols when they are unknown.
type joinCols struct{ cols *rel }

// typer types expressions the way PostgreSQL's parse analysis does, as
// far as the schema and the statement tell.
type typer struct {
	schema *schema.Snapshot
	scopes [][]relItem
	// ctes are the WITH frames in force, innermost last; a name mapped
	// to nil is a CTE whose columns are unknown.
	ctes []map[string]*rel
	// subqueries holds the columns of the scalar subqueries typed so
	// far: a result column's name and its type both need them, and
	// typing a subquery twice at every level of nesting took 2^depth
	// steps. A subquery is typed in one place of the statement, with
	// the same scopes each time, so its columns do not change.
	subqueries map[*pg_query.Node]*rel
	// derived, when not nil, keeps the columns of the subqueries in
	// FROM (but LATERAL ones) typed so far, for the writer's typers:
	// the writer types the derived tables of each query level it
	// writes, and typing those nested in them again each time took
	// time quadratic in the nesting.
	derived map[*pg_query.RangeSubselect]*rel
	// selects counts the SELECTs typed, a measure of the work done.
	selects int
}

// subqueryRel returns the result columns of a scalar subquery.
func (t *typer) subqueryRel(n *pg_query.Node) *rel {
	if r, ok := t.subqueries[n]; ok {
		return r
	}
	r := t.stmtRel(n)
	if t.subqueries == nil {
		t.subqueries = map[*pg_query.Node]*rel{}
	}
	t.subqueries[n] = r
	return r
}

// stmtRel returns the result columns of a statement that returns rows.
func (t *typer) stmtRel(n *pg_query.Node) *rel {
	switch {
	case n == nil:
	case n.GetSelectStmt() != nil:
		return t.selectRel(n.GetSelectStmt())
	case n.GetInsertStmt() != nil:
		i := n.GetInsertStmt()
		return t.returningRel(i.WithClause, i.Relation, nil, i.ReturningList)
	case n.GetUpdateStmt() != nil:
		u := n.GetUpdateStmt()
		return t.returningRel(u.WithClause, u.Relation, u.FromClause, u.ReturningList)
	case n.GetDeleteStmt() != nil:
		d := n.GetDeleteStmt()
		return t.returningRel(d.WithClause, d.Relation, d.UsingClause, d.ReturningList)
	}
	return nil
}

func (t *typer) returningRel(with *pg_query.WithClause, target *pg_query.RangeVar, from, list []*pg_query.Node) *rel {
	if len(list) == 0 {
		return nil
	}
	if with != nil {
		t.pushWith(with)
		defer t.popWith()
	}
	items := t.rangeVar(target)
	for _, f := range from {
		items = append(items, t.fromItem(f, items)...)
	}
	t.scopes = append(t.scopes, items)
	defer t.popScope()
	return t.targetRel(list)
}

func (t *typer) popScope() { t.scopes = t.scopes[:len(t.scopes)-1] }

func (t *typer) pushWith(w *pg_query.WithClause) {
	frame := map[string]*rel{}
	t.ctes = append(t.ctes, frame)
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		if cte == nil {
			continue
		}
		var r *rel
		q := cte.Ctequery.GetSelectStmt()
		if w.Recursive && q != nil && q.Op == pg_query.SetOperation_SETOP_UNION {
			// The non-recursive term fixes the columns' types.
			frame[cte.Ctename] = nil
			r = t.selectRel(q.Larg)
		} else {
			r = t.stmtRel(cte.Ctequery)
		}
		frame[cte.Ctename] = renamed(resolvedRel(r), cte.Aliascolnames)
	}
}

func (t *typer) popWith() { t.ctes = t.ctes[:len(t.ctes)-1] }

// cte finds a WITH query by name.
func (t *typer) cte(name string) (*rel, bool) {
	for i := len(t.ctes) - 1; i >= 0; i-- {
		if r, ok := t.ctes[i][name]; ok {
			return r, true
		}
	}
	return nil, false
}

// resolvedRel makes the untyped literals of a result text, as PostgreSQL
// does for every SELECT list but the arms of a set operation.
func resolvedRel(r *rel) *rel {
	if r == nil {
		return nil
	}
	out := &rel{cols: make([]relCol, len(r.cols))}
	for i, c := range r.cols {
		out.cols[i] = relCol{name: c.name, t: c.t.resolved()}
	}
	return out
}

// renamed applies column aliases (AS x(a, b)) to a relation.
func renamed(r *rel, names []*pg_query.Node) *rel {
	if r == nil || len(names) == 0 {
		return r
	}
	out := &rel{cols: append([]relCol(nil), r.cols...)}
	for i, n := range names {
		if i < len(out.cols) {
			out.cols[i].name = n.GetString_().GetSval()
		}
	}
	return out
}

// selectRel returns a SELECT's (or VALUES') result columns, with untyped
// literals left untyped (a set operation types them).
func (t *typer) selectRel(sel *pg_query.SelectStmt) *rel {
	if sel == nil {
		return nil
	}
	t.selects++
	if sel.WithClause != nil {
		t.pushWith(sel.WithClause)
		defer t.popWith()
	}
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		l, r := t.selectRel(sel.Larg), t.selectRel(sel.Rarg)
		if l == nil {
			return nil
		}
		out := &rel{cols: make([]relCol, len(l.cols))}
		for i, c := range l.cols {
			out.cols[i].name = c.name
			if r != nil && len(r.cols) == len(l.cols) {
				out.cols[i].t = mixedCommon(setOpName(sel.Op), []pgType{c.t, r.cols[i].t})
			}
		}
		return out
	case len(sel.ValuesLists) > 0:
		// VALUES types each column like a UNION of its rows.
		var out rel
		for i, row := range sel.ValuesLists {
			items := row.GetList().GetItems()
			if i == 0 {
				out.cols = make([]relCol, len(items))
			}
			if len(items) != len(out.cols) {
				return nil
			}
		}
		for j := range out.cols {
			ts := make([]pgType, len(sel.ValuesLists))
			for i, row := range sel.ValuesLists {
				ts[i] = t.typeOf(row.GetList().GetItems()[j])
			}
			out.cols[j] = relCol{name: "column" + strconv.Itoa(j+1), t: mixedCommon("VALUES", ts)}
		}
		return &out
	}
	var items []relItem
	for _, f := range sel.FromClause {
		items = append(items, t.fromItem(f, items)...)
	}
	t.scopes = append(t.scopes, items)
	defer t.popScope()
	return t.targetRel(sel.TargetList)
}

// targetRel names and types a target list in the innermost scope.
func (t *typer) targetRel(list []*pg_query.Node) *rel {
	out := &rel{}
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil {
			return nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			cols, ok := t.star(cr.Fields)
			if !ok {
				return nil
			}
			out.cols = append(out.cols, cols...)
			continue
		}
		name := rt.Name
		if name == "" {
			name, _ = t.figureName(rt.Val)
		}
		out.cols = append(out.cols, relCol{name: name, t: t.typeOf(rt.Val)})
	}
	return out
}

// star lists the columns of * or alias.* over the innermost scope.
func (t *typer) star(fields []*pg_query.Node) ([]relCol, bool) {
	if len(t.scopes) == 0 {
		return nil, false
	}
	qual := ""
	if len(fields) >= 2 {
		qual = fields[len(fields)-2].GetString_().GetSval()
	}
	if qual == "" {
		r := starOf(t.scopes[len(t.scopes)-1])
		if r == nil {
			return nil, false
		}
		return r.cols, true
	}
	var out []relCol
	found := false
	for _, it := range t.scopes[len(t.scopes)-1] {
		if it.alias != qual {
			continue
		}
		if it.rel == nil {
			return nil, false
		}
		found = true
		out = append(out, it.rel.cols...)
	}
	return out, found
}

// starOf is what * lists over FROM items: their columns in order, a
// NATURAL or USING join's as the join has them; nil when one is unknown.
func starOf(items []relItem) *rel {
	out := &rel{}
	var done *joinCols
	for _, it := range items {
		switch {
		case it.join != nil && it.join == done:
			continue
		case it.join != nil:
			done = it.join
			if it.join.cols == nil {
				return nil
			}
			out.cols = append(out.cols, it.join.cols.cols...)
		case it.rel == nil:
			return nil
		default:
			out.cols = append(out.cols, it.rel.cols...)
		}
	}
	return out
}

// usingJoin is the columns of a NATURAL or USING join of the FROM items
// left and right, as PostgreSQL lists them (transformFromClauseItem):
// the merged columns in the order of the USING list (of the left side's
// columns for NATURAL), each of the common type of its two sides, then
// the left side's other columns, then the right side's; nil when a side
// is unknown or a merged column is missing from one.
func usingJoin(j *pg_query.JoinExpr, left, right []relItem) *rel {
	l, r := starOf(left), starOf(right)
	if l == nil || r == nil {
		return nil
	}
	var names []string
	for _, n := range j.UsingClause {
		names = append(names, n.GetString_().GetSval())
	}
	if j.IsNatural {
		for _, lc := range l.cols {
			for _, rc := range r.cols {
				if lc.name == rc.name && !slices.Contains(names, lc.name) {
					names = append(names, lc.name)
				}
			}
		}
	}
	find := func(cols []relCol, used []bool, name string) int {
		for i, c := range cols {
			if c.name == name && !used[i] {
				return i
			}
		}
		return -1
	}
	lused, rused := make([]bool, len(l.cols)), make([]bool, len(r.cols))
	out := &rel{}
	for _, name := range names {
		li, ri := find(l.cols, lused, name), find(r.cols, rused, name)
		if li < 0 || ri < 0 {
			return nil
		}
		lused[li], rused[ri] = true, true
		out.cols = append(out.cols, relCol{name: name, t: commonType([]pgType{l.cols[li].t, r.cols[ri].t})})
	}
	for i, c := range l.cols {
		if !lused[i] {
			out.cols = append(out.cols, c)
		}
	}
	for i, c := range r.cols {
		if !rused[i] {
			out.cols = append(out.cols, c)
		}
	}
	return out
}

// fromItem returns the relations one FROM item makes visible; sofar are
// the items before it (which a LATERAL subquery sees).
func (t *typer) fromItem(n *pg_query.Node, sofar []relItem) []relItem {
	switch {
	case n.GetRangeVar() != nil:
		return t.rangeVar(n.GetRangeVar())
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		if rs.Lateral {
			t.scopes = append(t.scopes, sofar)
			defer t.popScope()
		}
		r, seen := t.derived[rs]
		if !seen || rs.Lateral {
			r = resolvedRel(t.stmtRel(rs.Subquery))
			if t.derived != nil && !rs.Lateral {
				t.derived[rs] = r
			}
		}
		item := relItem{rel: r}
		if rs.Alias != nil {
			item.alias, item.rel = rs.Alias.Aliasname, renamed(r, rs.Alias.Colnames)
		}
		return []relItem{item}
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		items := t.fromItem(j.Larg, sofar)
		nl := len(items)
		items = append(items, t.fromItem(j.Rarg, append(append([]relItem(nil), sofar...), items...))...)
		if j.IsNatural || len(j.UsingClause) > 0 {
			join := &joinCols{cols: usingJoin(j, items[:nl], items[nl:])}
			for i := range items {
				items[i].join = join
			}
		}
		if j.Alias == nil {
			return items
		}
		// (a JOIN b) AS j hides a and b.
		return []relItem{{alias: j.Alias.Aliasname, rel: renamed(starOf(items), j.Alias.Colnames)}}
	case n.GetRangeFunction() != nil:
		return []relItem{t.rangeFunction(n.GetRangeFunction())}
	}
	return []relItem{{}}
}

// rangeVar resolves a table (or WITH query) named in FROM or as the
// target of INSERT, UPDATE or DELETE.
func (t *typer) rangeVar(rv *pg_query.RangeVar) []relItem {
	if rv == nil {
		return []relItem{{}}
	}
	item := relItem{alias: rv.Relname}
	found := false
	if rv.Schemaname == "" {
		item.rel, found = t.cte(rv.Relname)
	}
	if !found && (rv.Schemaname == "" || rv.Schemaname == "public") {
		if tb := t.schema.Table(rv.Relname); tb != nil && !tb.View {
			r := &rel{cols: make([]relCol, len(tb.Columns))}
			for i, c := range tb.Columns {
				r.cols[i] = relCol{name: c.Name, t: pgType{name: c.Type, mods: c.Mods}}
			}
			item.rel = r
		}
	}
	if rv.Alias != nil {
		item.alias, item.rel = rv.Alias.Aliasname, renamed(item.rel, rv.Alias.Colnames)
	}
	return []relItem{item}
}

// rangeFunction types a function in FROM; only generate_series over
// numbers is known.
func (t *typer) rangeFunction(rf *pg_query.RangeFunction) relItem {
	item := relItem{}
	if rf.Alias != nil {
		item.alias = rf.Alias.Aliasname
	}
	if len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return item
	}
	parts := rf.Functions[0].GetList().GetItems()
	if len(parts) == 0 {
		return item
	}
	fc := parts[0].GetFuncCall()
	if fc != nil && schema.FuncName(fc) == "unnest" {
		return t.unnestItem(rf, fc, item)
	}
	if fc == nil || schema.FuncName(fc) != "generate_series" || len(fc.Args) < 2 {
		return item
	}
	var args []pgType
	for _, a := range fc.Args[:2] {
		args = append(args, t.typeOf(a))
	}
	ct := commonType(args)
	if category(ct.name) != 'N' || rf.Ordinality {
		return item
	}
	ct.mods = nil
	name := "generate_series"
	if item.alias != "" {
		name = item.alias
	} else {
		item.alias = name
	}
	item.rel = renamed(&rel{cols: []relCol{{name: name, t: ct}}}, rf.Alias.GetColnames())
	return item
}

// column types a column reference.
func (t *typer) column(cr *pg_query.ColumnRef) pgType {
	var fields []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return pgType{}
		}
		fields = append(fields, s.Sval)
	}
	if len(fields) == 0 {
		return pgType{}
	}
	name := fields[len(fields)-1]
	qual := ""
	if len(fields) >= 2 {
		qual = fields[len(fields)-2]
	}
	for i := len(t.scopes) - 1; i >= 0; i-- {
		var found []pgType
		for _, it := range t.scopes[i] {
			if qual != "" && it.alias != qual {
				continue
			}
			if it.rel == nil {
				return pgType{} // it may have the column
			}
			for _, c := range it.rel.cols {
				if c.name == name {
					found = append(found, c.t)
				}
			}
			if qual != "" {
				if len(found) == 0 {
					return pgType{}
				}
				return found[0]
			}
		}
		switch len(found) {
		case 0:
		case 1:
			return found[0]
		default:
			return commonType(found) // a JOIN ... USING column
		}
	}
	return pgType{}
}

// figureName is PostgreSQL's FigureColname (dialect.OutputName), with a
// scalar subquery named by its only column as the typer sees it.
func (t *typer) figureName(n *pg_query.Node) (string, int) {
	return OutputName(n, func(sub *pg_query.Node) (string, bool) {
		if r := t.subqueryRel(sub); r != nil && len(r.cols) > 0 {
			return r.cols[0].name, true
		}
		return "", false
	})
}

// sqlValueNames and sqlValueTypes name and type the SQL-standard
// functions written without parentheses.
var sqlValueNames = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        "current_date",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME:        "current_time",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:      "current_time",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   "current_timestamp",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: "current_timestamp",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME:           "localtime",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME_N:         "localtime",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      "localtimestamp",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    "localtimestamp",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:        "current_role",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:        "current_user",
	pg_query.SQLValueFunctionOp_SVFOP_USER:                "user",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:        "session_user",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:     "current_catalog",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:      "current_schema",
}

var sqlValueTypes = map[string]string{
	"current_date": "date", "current_time": "timetz", "current_timestamp": "timestamptz",
	"localtime": "time", "localtimestamp": "timestamp", "current_role": "name",
	"current_user": "name", "user": "name", "session_user": "name",
	"current_catalog": "name", "current_schema": "name",
}

// typeOf works out an expression's type by PostgreSQL's rules, as far as
// shepherd knows them ("" otherwise).
func (t *typer) typeOf(n *pg_query.Node) pgType {
	switch {
	case n == nil:
	case n.GetAConst() != nil:
		return constType(n.GetAConst())
	case n.GetColumnRef() != nil:
		return t.column(n.GetColumnRef())
	case n.GetTypeCast() != nil:
		p := castType(n.GetTypeCast().TypeName)
		if p.name == "numeric" && p.mods == nil && n.GetTypeCast().Arg.GetAConst().GetSval() == nil {
			// x::numeric keeps the digits of an exact x (10::numeric
			// has scale 0).
			if a := t.typeOf(n.GetTypeCast().Arg); category(a.name) == 'N' && !isFloat(a.name) {
				return keepValues("numeric", a)
			}
		}
		return p
	case n.GetCollateClause() != nil:
		return t.typeOf(n.GetCollateClause().Arg)
	case n.GetAExpr() != nil:
		return t.exprType(n.GetAExpr())
	case n.GetBoolExpr() != nil, n.GetNullTest() != nil, n.GetBooleanTest() != nil:
		return typ("bool")
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK:
			if r := resolvedRel(t.subqueryRel(sl.Subselect)); r != nil && len(r.cols) == 1 {
				return r.cols[0].t
			}
		case pg_query.SubLinkType_ARRAY_SUBLINK, pg_query.SubLinkType_MULTIEXPR_SUBLINK, pg_query.SubLinkType_CTE_SUBLINK:
		default:
			return typ("bool")
		}
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		var ts []pgType
		if ce.Defresult != nil {
			// PostgreSQL puts the ELSE first (transformCaseExpr): of
			// types that cast to each other (char(n), varchar) it wins.
			ts = append(ts, t.typeOf(ce.Defresult))
		}
		for _, w := range ce.Args {
			ts = append(ts, t.typeOf(w.GetCaseWhen().GetResult()))
		}
		return mixedCommon("CASE", ts)
	case n.GetCoalesceExpr() != nil:
		return t.mixedOf("COALESCE", n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		what := "GREATEST"
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_LEAST {
			what = "LEAST"
		}
		return t.mixedOf(what, n.GetMinMaxExpr().Args)
	case n.GetSqlvalueFunction() != nil:
		return typ(sqlValueTypes[sqlValueNames[n.GetSqlvalueFunction().Op]])
	case n.GetGroupingFunc() != nil:
		return typ("int4")
	case n.GetFuncCall() != nil:
		return t.funcType(n.GetFuncCall())
	case n.GetAArrayExpr() != nil:
		return t.arrayExprType(n.GetAArrayExpr())
	case n.GetAIndirection() != nil:
		return t.subscriptType(n.GetAIndirection())
	}
	return pgType{}
}

func (t *typer) commonOf(args []*pg_query.Node) pgType {
	ts := make([]pgType, len(args))
	for i, a := range args {
		ts[i] = t.typeOf(a)
	}
	return commonType(ts)
}

// mixedOf is mixedCommon of the types of args.
func (t *typer) mixedOf(what string, args []*pg_query.Node) pgType {
	ts := make([]pgType, len(args))
	for i, a := range args {
		ts[i] = t.typeOf(a)
	}
	return mixedCommon(what, ts)
}

// setOpName is the SQL name of a set operation.
func setOpName(op pg_query.SetOperation) string {
	switch op {
	case pg_query.SetOperation_SETOP_INTERSECT:
		return "INTERSECT"
	case pg_query.SetOperation_SETOP_EXCEPT:
		return "EXCEPT"
	}
	return "UNION"
}

// constType types a constant: integers that fit in 32 bits are integer,
// in 64 bits bigint, other numbers numeric; strings and NULL are untyped.
func constType(c *pg_query.A_Const) pgType {
	switch {
	case c.Isnull, c.GetSval() != nil:
		return typ(litType)
	case c.GetIval() != nil:
		return typ("int4")
	case c.GetFval() != nil:
		f := c.GetFval().Fval
		if v, err := strconv.ParseInt(f, 10, 64); err == nil {
			// PostgreSQL's make_const: an integer too wide for the
			// parser's int4 constant is int4 when it fits after all
			// (-2147483648, which the parser negates), else int8.
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return typ("int4")
			}
			return typ("int8")
		}
		if _, frac, ok := strings.Cut(f, "."); ok && !strings.ContainsAny(f, "eE") {
			return pgType{name: "numeric", scale: int32(len(frac)), scaled: true}
		}
		return typ("numeric")
	case c.GetBoolval() != nil:
		return typ("bool")
	}
	return pgType{}
}

// castType types a cast's target type.
func castType(tn *pg_query.TypeName) pgType {
	name, mods, serial, ok := schema.TypeOf(tn)
	if ok && !serial {
		return pgType{name: name, mods: mods}
	}
	if tn != nil && len(tn.ArrayBounds) == 0 && len(tn.Names) > 0 {
		// INTERVAL '1' DAY: a field restriction, still an interval.
		if tn.Names[len(tn.Names)-1].GetString_().GetSval() == "interval" {
			return typ("interval")
		}
	}
	return pgType{}
}

// exprType types an operator expression.
func (t *typer) exprType(e *pg_query.A_Expr) pgType {
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return nullifType(t.typeOf(e.Lexpr), t.typeOf(e.Rexpr))
	default:
		// IN, LIKE, BETWEEN, IS DISTINCT FROM, = ANY (...), SIMILAR TO.
		return typ("bool")
	}
	op := schema.OpName(e.Name)
	if e.Lexpr == nil {
		r := t.typeOf(e.Rexpr)
		if (op == "-" || op == "+") && (category(r.name) == 'N' || r.name == "interval") {
			return keepValues(r.name, r)
		}
		return pgType{}
	}
	l, r := t.typeOf(e.Lexpr), t.typeOf(e.Rexpr)
	switch op {
	case "=", "<>", "<", ">", "<=", ">=", "~~", "!~~", "~~*", "!~~*", "~", "~*", "!~", "!~*",
		"@>", "<@", "?", "?|", "?&", "&&", "@@":
		return typ("bool")
	case "||":
		return concatType(l, r)
	case "->", "#>":
		if l.name == "json" || l.name == "jsonb" {
			return typ(l.name)
		}
	case "->>", "#>>":
		if l.name == "json" || l.name == "jsonb" {
			return typ("text")
		}
	case "+", "-", "*", "/", "%", "^":
		if op == "/" {
			if q, ok := quotientType(e.Lexpr, e.Rexpr); ok {
				return q // folded (see foldQuotients)
			}
		}
		return arithType(op, l, r)
	}
	return pgType{}
}

// concatType types a || b.
func concatType(l, r pgType) pgType {
	switch {
	case l.name == "" || r.name == "":
	case l.lit() && r.lit():
		return typ("text")
	case l.lit() || r.lit():
		other := l
		if l.lit() {
			other = r
		}
		if other.name == "bytea" || other.name == "jsonb" {
			return typ(other.name)
		}
		return typ("text") // text || anynonarray
	case l.name == r.name && (l.name == "bytea" || l.name == "jsonb"):
		return typ(l.name)
	case category(l.name) == 'S' || category(r.name) == 'S':
		return typ("text")
	}
	return pgType{}
}

// arithType types the arithmetic operators.
func arithType(op string, l, r pgType) pgType {
	switch {
	case l.name == "" || r.name == "" || l.lit() && r.lit():
		return pgType{}
	case l.lit():
		l = pgType{name: r.name}
	case r.lit():
		r = pgType{name: l.name}
	}
	ln, rn := l.name, r.name
	if category(ln) == 'N' && category(rn) == 'N' {
		lr, rr := pgfunc.NumericRank(ln), pgfunc.NumericRank(rn)
		hi := ln
		if rr > lr {
			hi = rn
		}
		switch {
		case op == "^":
			// power: numeric when numeric is involved without floats,
			// else double precision.
			if hi == "numeric" {
				return typ("numeric")
			}
			return typ("float8")
		case op == "%" && pgfunc.NumericRank(hi) > pgfunc.NumericRank("numeric"):
			return pgType{}
		case hi == "float4" && ln != rn:
			// float4 meets a non-float4: the float4-float8 operators win.
			return typ("float8")
		case hi == "numeric" && (op == "+" || op == "-" || op == "*" || op == "%"):
			ls, lok := numericScale(l)
			rs, rok := numericScale(r)
			out := withScaleOf(hi, max(ls, rs), lok && rok)
			if op == "*" {
				out = withScaleOf(hi, ls+rs, lok && rok)
			}
			if !out.scaled {
				out.mixed = cmp.Or(l.mixed, r.mixed)
			}
			return out
		}
		return typ(hi)
	}
	switch op {
	case "+":
		switch {
		case ln == "date" && isInteger(rn), isInteger(ln) && rn == "date":
			return typ("date")
		case ln == "date" && (rn == "interval" || rn == "time"), rn == "date" && (ln == "interval" || ln == "time"):
			return typ("timestamp")
		case (ln == "timestamp" || ln == "timestamptz" || ln == "time") && rn == "interval":
			return typ(ln)
		case ln == "interval" && (rn == "timestamp" || rn == "timestamptz" || rn == "time"):
			return typ(rn)
		case ln == "interval" && rn == "interval":
			return typ("interval")
		}
	case "-":
		switch {
		case ln == "date" && isInteger(rn):
			return typ("date")
		case ln == "date" && rn == "date":
			return typ("int4")
		case ln == "date" && rn == "interval":
			return typ("timestamp")
		case (ln == "timestamp" || ln == "timestamptz" || ln == "time") && rn == "interval":
			return typ(ln)
		case ln == "interval" && rn == "interval":
			return typ("interval")
		case category(ln) == 'D' && category(rn) == 'D' && ln != "time" && rn != "time":
			return typ("interval") // timestamps (and dates against them)
		case ln == "time" && rn == "time":
			return typ("interval")
		}
	case "*":
		if ln == "interval" && category(rn) == 'N' || rn == "interval" && category(ln) == 'N' {
			return typ("interval")
		}
	case "/":
		if ln == "interval" && category(rn) == 'N' {
			return typ("interval")
		}
	}
	return pgType{}
}

func isInteger(name string) bool { return name == "int2" || name == "int4" || name == "int8" }

// funcType types a function call by pgfunc's catalogue of PostgreSQL's
// functions, with the scale or width of the values where the function
// keeps its argument's (sum, min, lag of a numeric(p,s) or char(n)) or
// states it (round(x, 2)).
func (t *typer) funcType(fc *pg_query.FuncCall) pgType {
	name := schema.FuncName(fc)
	args := make([]pgType, len(fc.Args))
	names := make([]string, len(fc.Args))
	for i, a := range fc.Args {
		args[i] = t.typeOf(a)
		names[i] = args[i].name
	}
	if p, ok := arrayFuncType(name, args); ok {
		return p
	}
	res := pgfunc.Result(name, names)
	switch {
	case res == "":
		return pgType{}
	case len(args) == 0:
		return typ(res)
	}
	switch name {
	case "sum", "min", "max", "abs", "lag", "lead", "first_value", "last_value", "nth_value":
		if res == args[0].name && !((name == "lag" || name == "lead") && len(args) == 3) {
			return keepValues(res, args[0])
		}
	case "round", "trunc":
		if res != "numeric" {
			break
		}
		if len(args) == 1 {
			return withScaleOf(res, 0, true)
		}
		// round(x, n) has n digits when n is a constant.
		if c := fc.Args[1].GetAConst(); c != nil && c.GetIval() != nil {
			return withScaleOf(res, max(c.GetIval().Ival, 0), true)
		}
	case "ceil", "ceiling", "floor":
		if res == "numeric" {
			return withScaleOf(res, 0, true)
		}
	case "mod", "gcd", "lcm":
		if res == "numeric" && len(args) == 2 {
			// mod(x, y) keeps the larger scale, as x % y.
			return arithType("%", args[0], args[1])
		}
	}
	return typ(res)
}

// nullifType is the type of NULLIF(a, b): a's, unless resolving the
// implied a = b converts a. PostgreSQL has = between any two integer
// types and between float4 and float8, which keep a's type; an integer
// compared with a numeric or a float, or a numeric with a float, is
// converted to the wider type (NULLIF(1, 2.5) is numeric, its values a's
// digits), float8 for any float. An untyped literal a takes b's type.
func nullifType(a, b pgType) pgType {
	switch {
	case a.lit():
		if b.name != "" {
			return pgType{name: b.name}
		}
		return a
	case category(a.name) != 'N' || category(b.name) != 'N' || a.name == b.name:
		return a
	case pgfunc.NumericRank(a.name) >= pgfunc.NumericRank(b.name):
		return a
	case isInteger(a.name) && isInteger(b.name), isFloat(a.name) && isFloat(b.name):
		return a
	case isFloat(b.name):
		return typ("float8") // no = of an exact type with float4 either
	}
	return keepValues(b.name, a)
}

func isFloat(name string) bool { return name == "float4" || name == "float8" }

// arrayExprType types ARRAY[...]: the array of its elements' common
// type (text for untyped strings), for the element types shepherd
// stores arrays of.
func (t *typer) arrayExprType(a *pg_query.A_ArrayExpr) pgType {
	elem := t.commonOf(a.Elements).name
	if elem == litType || elem == "" && len(a.Elements) > 0 {
		elem = "text"
	}
	if !schema.StoresArraysOf(elem) {
		return pgType{}
	}
	return typ("_" + elem)
}

// arrayFuncType types array_agg(x), whose element type must be one
// shepherd stores arrays of; ok is false for other functions (pgfunc
// types them).
func arrayFuncType(name string, args []pgType) (p pgType, ok bool) {
	if name != "array_agg" {
		return pgType{}, false
	}
	if len(args) != 1 {
		return pgType{}, true
	}
	elem := args[0].name
	if elem == litType {
		elem = "text"
	}
	if !schema.StoresArraysOf(elem) {
		return pgType{}, true
	}
	return typ("_" + elem), true
}

// unnestItem types FROM unnest(a) [WITH ORDINALITY] [AS t(c, n)]: one
// column of a's element type named as the alias (or unnest), and bigint
// ordinality.
func (t *typer) unnestItem(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, item relItem) relItem {
	if len(fc.Args) != 1 {
		return item
	}
	elem := schema.ArrayElement(t.typeOf(fc.Args[0]).name)
	if elem == "" {
		return item
	}
	if item.alias == "" {
		item.alias = "unnest"
	}
	r := &rel{cols: []relCol{{name: item.alias, t: typ(elem)}}}
	if rf.Ordinality {
		r.cols = append(r.cols, relCol{name: "ordinality", t: typ("int8")})
	}
	item.rel = renamed(r, rf.Alias.GetColnames())
	return item
}

// quotientType is the type of l / r, a numeric division of constants
// foldQuotients folds: numeric of the quotient's display scale.
func quotientType(l, r *pg_query.Node) (pgType, bool) {
	q, ok := pgnumeric.FoldQuotient(l, r)
	if !ok {
		return pgType{}, false
	}
	return withScaleOf("numeric", int32(q.Scale), true), true
}

// subscriptType types a[i], one subscript of an array: its element type.
// Slices and several subscripts are left untyped (the writers refuse
// them).
func (t *typer) subscriptType(ind *pg_query.A_Indirection) pgType {
	if len(ind.Indirection) != 1 {
		return pgType{}
	}
	if ix := ind.Indirection[0].GetAIndices(); ix == nil || ix.IsSlice {
		return pgType{}
	}
	elem := schema.ArrayElement(t.typeOf(ind.Arg).name)
	if elem == "" {
		return pgType{}
	}
	return typ(elem)
}
