package dialect

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// selectStmt writes a query. top is false for subqueries and set-operation
// members, which a caller has already parenthesised as the dialect needs.
func (w *writer) selectStmt(s *pg_query.SelectStmt, top bool) {
	if s.IntoClause != nil {
		w.refuse("SELECT INTO")
	}
	if split, largest := w.splitJoin(s); split != nil {
		w.selectStmt(split, top)
		w.splitTables += len(s.FromClause) - largest
		return
	}
	if w.my() && len(s.FromClause) == 1 && s.FromClause[0].GetJoinExpr().GetJointype() == pg_query.JoinType_JOIN_FULL {
		if full := w.fullJoin(s); full != nil {
			w.selectStmt(full, top)
			return
		}
	}
	if !w.pg() && hasLateral(s) {
		if flat := w.lateral(s); flat != nil {
			w.selectStmt(flat, top)
			return
		}
	}
	if !w.pg() && hasGroupingSets(s) {
		w.groupingSets(s, top)
		return
	}
	if len(s.DistinctClause) > 0 && s.DistinctClause[0].GetNode() != nil && !w.pg() {
		w.distinctOn(s, top)
		return
	}
	if s.WithClause != nil {
		defer w.keepCTETables()()
		w.with(s.WithClause)
	}
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		w.setOp(s)
		return
	}
	if len(s.ValuesLists) > 0 {
		w.values(s.ValuesLists)
		w.orderLimit(s, nil)
		return
	}
	w.pushScope(s.FromClause)
	defer w.popScope()
	w.str("SELECT ")
	if len(s.DistinctClause) > 0 {
		if s.DistinctClause[0].GetNode() != nil {
			w.refuse("SELECT DISTINCT ON")
		}
		w.str("DISTINCT ")
	}
	if len(s.TargetList) == 0 {
		w.refuse("SELECT with no columns")
	}
	list(w, s.TargetList, func(n *pg_query.Node) { w.target(n) })
	if len(s.FromClause) > 0 {
		w.str(" FROM ")
		list(w, s.FromClause, func(n *pg_query.Node) { w.fromItem(n) })
	}
	if s.WhereClause != nil {
		w.str(" WHERE ")
		w.expr(s.WhereClause)
	}
	if len(s.GroupClause) > 0 {
		w.str(" GROUP BY ")
		list(w, s.GroupClause, func(n *pg_query.Node) {
			if n.GetGroupingSet() != nil {
				w.refuse("GROUPING SETS, ROLLUP or CUBE")
			}
			w.checkPosition("GROUP BY", n, s)
			w.expr(w.byOutputName("GROUP BY", n, s.TargetList, true))
		})
	}
	if s.GroupDistinct {
		w.refuse("GROUP BY DISTINCT")
	}
	if s.HavingClause != nil {
		w.str(" HAVING ")
		w.having(s)
	}
	if len(s.WindowClause) > 0 {
		w.str(" WINDOW ")
		list(w, s.WindowClause, func(n *pg_query.Node) {
			wd := n.GetWindowDef()
			w.ident(wd.Name)
			w.str(" AS ")
			w.windowDef(wd)
		})
	}
	w.orderLimit(s, s.TargetList)
	w.locking(s.LockingClause)
}

// setOp writes UNION / INTERSECT / EXCEPT. Its ORDER BY and LIMIT apply to
// the whole; MariaDB sorts a compound's result reliably only when it is
// wrapped in a derived table, so a sorted compound is written that way.
func (w *writer) setOp(s *pg_query.SelectStmt) {
	if w.lite() && s.All && s.Op != pg_query.SetOperation_SETOP_UNION {
		w.liteSetAll(s)
		return
	}
	sorted := len(s.SortClause) > 0 || s.LimitCount != nil || s.LimitOffset != nil
	if sorted {
		w.str("SELECT * FROM (")
	}
	w.member(s.Larg, s.Op, true)
	switch s.Op {
	case pg_query.SetOperation_SETOP_UNION:
		w.str(" UNION ")
	case pg_query.SetOperation_SETOP_INTERSECT:
		w.str(" INTERSECT ")
	case pg_query.SetOperation_SETOP_EXCEPT:
		w.str(" EXCEPT ")
	}
	if s.All {
		if w.lite() && s.Op != pg_query.SetOperation_SETOP_UNION {
			w.refuse("INTERSECT ALL / EXCEPT ALL")
		}
		w.str("ALL ")
	}
	w.member(s.Rarg, s.Op, false)
	if sorted {
		w.str(") AS ")
		w.ident("_shepherd_set")
		w.orderLimit(s, nil)
	}
	w.locking(s.LockingClause)
}

// member writes one operand of a set operation. A plain SELECT is written
// bare; a nested compound, or one with its own ORDER BY / LIMIT, becomes a
// derived table (SQLite allows no parentheses there, and evaluates
// compounds strictly left to right, where the others bind INTERSECT
// tighter).
func (w *writer) member(s *pg_query.SelectStmt, parent pg_query.SetOperation, left bool) {
	nested := s.Op != pg_query.SetOperation_SETOP_NONE
	own := len(s.SortClause) > 0 || s.LimitCount != nil || s.LimitOffset != nil || s.WithClause != nil
	if !own && (!nested || left && (s.Op == parent || s.Op == pg_query.SetOperation_SETOP_INTERSECT)) {
		w.selectStmt(s, false)
		return
	}
	w.str("SELECT * FROM (")
	w.selectStmt(s, false)
	w.str(") AS ")
	w.derived++
	w.ident("_shepherd_m" + strconv.Itoa(w.derived))
}

// values writes a VALUES list as a query (VALUES (1, 'a'), (2, 'b')).
func (w *writer) values(rows []*pg_query.Node) {
	w.str("VALUES ")
	list(w, rows, func(r *pg_query.Node) {
		w.str("(")
		list(w, r.GetList().Items, func(n *pg_query.Node) { w.expr(n) })
		w.str(")")
	})
}

func (w *writer) with(wc *pg_query.WithClause) {
	w.str("WITH ")
	if wc.Recursive {
		w.str("RECURSIVE ")
	}
	list(w, wc.Ctes, func(n *pg_query.Node) {
		cte := n.GetCommonTableExpr()
		if cte.SearchClause != nil || cte.CycleClause != nil {
			w.refuse("SEARCH or CYCLE in WITH RECURSIVE")
		}
		w.ident(cte.Ctename)
		if w.ctes == nil {
			w.ctes = map[string]bool{}
		}
		w.ctes[cte.Ctename] = true
		if len(cte.Aliascolnames) > 0 {
			w.str(" (")
			list(w, cte.Aliascolnames, func(a *pg_query.Node) { w.ident(a.GetString_().Sval) })
			w.str(")")
		}
		w.str(" AS (")
		q := cte.Ctequery.GetSelectStmt()
		if q == nil {
			w.refuse("a data-modifying statement in WITH")
		}
		if wc.Recursive {
			// The recursive term sees the columns as the
			// non-recursive term types them.
			w.addCTETable(cte, q, true)
		}
		w.selectStmt(q, false)
		if !wc.Recursive {
			w.addCTETable(cte, q, false)
		}
		w.str(")")
	})
	w.str(" ")
}

// target writes one SELECT-list item.
func (w *writer) target(n *pg_query.Node) {
	rt := n.GetResTarget()
	if w.widen[rt.Val] {
		w.str("CASE WHEN 1 = 0 THEN 9223372036854775807 ELSE ")
		w.expr(rt.Val)
		w.str(" END")
	} else if w.single[rt.Val] {
		w.str(singleFunction + "(")
		w.expr(rt.Val)
		w.str(", count(*) OVER ())")
	} else {
		w.expr(rt.Val)
	}
	if rt.Name != "" {
		w.str(" AS ")
		w.ident(rt.Name)
	}
}

// singleFunction is the SQLite function that fails a scalar subquery of
// several rows as PostgreSQL does (sqlite.SingleFunction).
const singleFunction = "shepherd_single"

// fromItem writes one FROM-list item.
func (w *writer) fromItem(n *pg_query.Node) {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		w.tableName(rv)
		if rv.Alias != nil {
			if len(rv.Alias.Colnames) > 0 {
				w.refuse("column aliases on a table in FROM")
			}
			w.str(" AS ")
			w.ident(rv.Alias.Aliasname)
		}
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		if rs.Lateral {
			w.refuse("LATERAL subqueries")
		}
		sub := rs.Subquery.GetSelectStmt()
		if rs.Alias == nil {
			w.refuse("a subquery in FROM without an alias")
		}
		if len(rs.Alias.Colnames) > 0 {
			w.aliasedSubquery(sub, rs.Alias)
			return
		}
		w.str("(")
		w.selectStmt(sub, false)
		w.str(") AS ")
		w.ident(rs.Alias.Aliasname)
	case n.GetJoinExpr() != nil:
		w.join(n.GetJoinExpr())
	case n.GetRangeFunction() != nil:
		if w.unnestTable(n.GetRangeFunction()) {
			return
		}
		w.refuse("functions in FROM (generate_series, unnest, ...)")
	default:
		w.refuse("%s in FROM", nodeName(n))
	}
}

// aliasedSubquery writes (subquery) AS a(x, y): neither MariaDB nor SQLite
// takes column aliases on a derived table, so the columns are renamed
// inside: (SELECT * FROM (sub) AS s) becomes a SELECT of the renamed
// columns, and a VALUES list becomes SELECTs joined by UNION ALL.
func (w *writer) aliasedSubquery(sub *pg_query.SelectStmt, alias *pg_query.Alias) {
	cols := alias.Colnames
	if len(sub.ValuesLists) > 0 && sub.Op == pg_query.SetOperation_SETOP_NONE && len(sub.SortClause) == 0 {
		w.str("(")
		for i, r := range sub.ValuesLists {
			if i > 0 {
				w.str(" UNION ALL ")
			}
			items := r.GetList().Items
			if len(items) != len(cols) {
				w.refuse("VALUES in FROM with %d column aliases for %d columns", len(cols), len(items))
			}
			w.str("SELECT ")
			for j, n := range items {
				if j > 0 {
					w.str(", ")
				}
				w.expr(n)
				if i == 0 { // UNION takes the first member's names
					w.str(" AS ")
					w.ident(cols[j].GetString_().Sval)
				}
			}
		}
		w.str(") AS ")
		w.ident(alias.Aliasname)
		return
	}
	w.refuse("column aliases on a subquery in FROM")
}

// tableName writes a table reference, dropping the public schema.
func (w *writer) tableName(rv *pg_query.RangeVar) {
	if rv.Catalogname != "" || rv.Schemaname != "" && rv.Schemaname != "public" {
		w.refuse("schema-qualified table names (%s.%s)", rv.Schemaname, rv.Relname)
	}
	if !rv.Inh {
		w.refuse("ONLY")
	}
	w.countTable(rv)
	w.ident(rv.Relname)
}

func (w *writer) join(j *pg_query.JoinExpr) {
	if j.Alias != nil {
		w.refuse("an alias on a JOIN")
	}
	w.fromItem(j.Larg)
	if j.IsNatural {
		w.str(" NATURAL")
	}
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		if j.Quals == nil && len(j.UsingClause) == 0 && !j.IsNatural {
			w.str(" CROSS JOIN ")
		} else {
			w.str(" JOIN ")
		}
	case pg_query.JoinType_JOIN_LEFT:
		w.str(" LEFT JOIN ")
	case pg_query.JoinType_JOIN_RIGHT:
		w.str(" RIGHT JOIN ")
	case pg_query.JoinType_JOIN_FULL:
		if w.my() {
			// fullJoin rewrites the simple form; this is any other.
			w.refuse("FULL JOIN other than the only FROM item, of two tables ON a condition, with no *, subquery, WITH or ambiguous column")
		}
		w.str(" FULL JOIN ")
	default:
		w.refuse("this kind of JOIN")
	}
	w.fromItem(j.Rarg)
	if len(j.UsingClause) > 0 {
		if j.JoinUsingAlias != nil {
			w.refuse("JOIN USING ... AS")
		}
		w.str(" USING (")
		list(w, j.UsingClause, func(n *pg_query.Node) { w.ident(n.GetString_().Sval) })
		w.str(")")
	}
	if j.Quals != nil {
		w.str(" ON ")
		w.expr(j.Quals)
	}
}

// orderLimit writes ORDER BY, LIMIT and OFFSET. targets is the SELECT
// list, for resolving ordinals (nil for compounds and VALUES).
func (w *writer) orderLimit(s *pg_query.SelectStmt, targets []*pg_query.Node) {
	for _, n := range s.SortClause {
		w.checkPosition("ORDER BY", n.GetSortBy().GetNode(), s)
	}
	if len(s.SortClause) > 0 {
		names, scoped := targets, true
		if s.Op != pg_query.SetOperation_SETOP_NONE {
			// A compound's result columns are named by its first member.
			first := s.Larg
			for first.Op != pg_query.SetOperation_SETOP_NONE {
				first = first.Larg
			}
			if len(first.ValuesLists) == 0 {
				names, scoped = first.TargetList, false
			}
		}
		w.str(" ORDER BY ")
		list(w, s.SortClause, func(n *pg_query.Node) {
			sb := n.GetSortBy()
			key := w.byOutputName("ORDER BY", sb.Node, names, scoped)
			if w.arraySort(s, sb, key, targets) {
				return
			}
			if key != sb.Node {
				sb = &pg_query.SortBy{Node: key, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, UseOp: sb.UseOp, Location: sb.Location}
			}
			w.sortBy(sb, targets)
		})
	}
	if s.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		w.refuse("FETCH ... WITH TIES")
	}
	count := s.LimitCount
	if c := count.GetAConst(); c != nil && c.Isnull {
		count = nil // LIMIT ALL
	}
	if count == nil && s.LimitOffset == nil {
		return
	}
	w.str(" LIMIT ")
	switch {
	case count != nil:
		w.limitValue(count, "LIMIT")
	case w.my():
		w.str("18446744073709551615")
	default:
		w.str("-1")
	}
	if s.LimitOffset != nil {
		w.str(" OFFSET ")
		w.limitValue(s.LimitOffset, "OFFSET")
	}
}

// limitValue writes a LIMIT or OFFSET value: MariaDB takes only integer
// constants and placeholders there. PostgreSQL reads the value as a
// bigint: a parameter, also cast to an integer type ($1::int, as GORM
// sends it), is written as a placeholder (sqlan checks its value at Bind,
// see LimitParams); a string constant ('1') or an integer one is read
// and checked as PostgreSQL does, and written as the integer.
func (w *writer) limitValue(n *pg_query.Node, clause string) {
	typ := "int8"
	if tc := n.GetTypeCast(); tc != nil {
		if t, _, serial, ok := schema.TypeOf(tc.TypeName); ok && !serial && (t == "int2" || t == "int4" || t == "int8") &&
			(tc.Arg.GetParamRef() != nil || tc.Arg.GetAConst() != nil) {
			n, typ = tc.Arg, t
		}
	}
	if p := n.GetParamRef(); p != nil {
		w.paramType(int(p.Number), typ)
		w.param(int(p.Number), answer.Int)
		return
	}
	if c := n.GetAConst(); c != nil && !c.Isnull {
		var text string
		switch {
		case c.GetIval() != nil:
			text = strconv.FormatInt(int64(c.GetIval().Ival), 10)
		case c.GetFval() != nil:
			text = c.GetFval().Fval // an integer beyond int4, or a decimal
		case c.GetSval() != nil:
			text = c.GetSval().Sval
		}
		if c.GetFval() == nil || isDigits(text) {
			v, err := LimitInput(text, typ, clause)
			if err != nil {
				panic(failure{pgerr.From(err)})
			}
			w.str(strconv.FormatInt(v, 10))
			return
		}
	}
	if w.my() {
		w.refuse("a LIMIT or OFFSET that is not an integer constant or parameter")
	}
	w.expr(n)
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// LimitInput reads text as PostgreSQL reads the value of a LIMIT or
// OFFSET (clause) given as type typ (int2, int4 or int8): its integer
// input (surrounding spaces, a sign, decimal digits), its range, and no
// negative count.
func LimitInput(text, typ, clause string) (int64, error) {
	name, bits := map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint"}[typ], map[string]int{"int2": 16, "int4": 32, "int8": 64}[typ]
	s := strings.Trim(text, " \t\n\r\f\v")
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || !isDigits(digits) {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, text)
	}
	v, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", text, name)
	}
	if v < 0 {
		if clause == "OFFSET" {
			return 0, pgerr.New(invalidOffset, "OFFSET must not be negative")
		}
		return 0, pgerr.New(invalidLimit, "LIMIT must not be negative")
	}
	return v, nil
}

// PostgreSQL's SQLSTATEs for a negative LIMIT and OFFSET.
const (
	invalidLimit  = "2201W"
	invalidOffset = "2201X"
)

// sortBy writes one ORDER BY item with PostgreSQL's placement of NULLs
// (last ascending, first descending). SQLite says so directly; MariaDB
// has no NULLS FIRST/LAST and sorts NULLs first ascending, so an
// "IS NULL" key goes before the item unless the item cannot be NULL.
func (w *writer) sortBy(sb *pg_query.SortBy, targets []*pg_query.Node) {
	if sb.SortbyDir == pg_query.SortByDir_SORTBY_USING || len(sb.UseOp) > 0 {
		w.refuse("ORDER BY ... USING")
	}
	key := sb.Node
	w.textSortKey(key, targets)
	if tc := key.GetTypeCast(); tc != nil {
		key = tc.Arg // ORDER BY avg(x)::numeric(p,s)
	}
	if fc := key.GetFuncCall(); fc != nil && schema.FuncName(fc) == "round" && len(fc.Args) > 0 {
		key = fc.Args[0] // ORDER BY round(avg(x), n)
	}
	if fc := key.GetFuncCall(); fc != nil {
		saved := w.sortKey
		w.sortKey = fc
		defer func() { w.sortKey = saved }()
	}
	desc := sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC
	nullsFirst := desc
	switch sb.SortbyNulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		nullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		nullsFirst = false
	}
	dir := ""
	if desc {
		dir = " DESC"
	}
	if w.lite() {
		w.expr(sb.Node)
		w.str(dir)
		if nullsFirst {
			w.str(" NULLS FIRST")
		} else {
			w.str(" NULLS LAST")
		}
		return
	}
	// MariaDB: NULLs sort as the smallest value, so they come first
	// ascending and last descending: PostgreSQL's default is the other.
	if nullsFirst == desc && !w.notNull(sb.Node, targets) {
		key := sb.Node
		if i, ok := ordinal(sb.Node); ok && targets != nil && w.outputAt(targets, i) != nil {
			// The expression, not its alias: MariaDB cannot use the
			// alias of an aggregate inside an ORDER BY expression.
			key = w.outputAt(targets, i)
		} else if ok && targets != nil {
			// The columns of a * cannot be counted: a relation that
			// does not exist fails as in PostgreSQL, before anything
			// about the ORDER BY.
			w.undefinedRelation()
			w.refuse("ORDER BY a column number past a * over a subquery, a CTE or a view with NULLS placement")
		} else if ok {
			w.refuse("ORDER BY a column number with NULLS placement on a compound query")
		}
		// The key is written twice (or again after the select list).
		w.repeated(key, 2, func() {
			w.expr(key)
			w.str(" IS NULL")
			if nullsFirst {
				w.str(" DESC")
			}
			w.str(", ")
			w.expr(sb.Node)
		})
		w.str(dir)
		return
	}
	w.expr(sb.Node)
	w.str(dir)
}

// invalidColumnReference is PostgreSQL's SQLSTATE for an ORDER BY or
// GROUP BY position outside the select list.
const invalidColumnReference = "42P10"

// checkPosition fails, as PostgreSQL does, an ORDER BY or GROUP BY item
// of s that is a column number outside s's select list (the engines
// would sort by a constant, fail otherwise, or index past the list).
func (w *writer) checkPosition(clause string, n *pg_query.Node, s *pg_query.SelectStmt) {
	i, ok := ordinal(n)
	if !ok {
		return
	}
	count, known := w.outputCount(s)
	if i < 1 || known && i > count {
		w.fail(invalidColumnReference, "%s position %d is not in select list", clause, i)
	}
}

// outputCount is the number of columns s returns, when the writer can
// tell: a * counts the columns of the tables in scope (s's own, written
// now; not a compound's first member).
func (w *writer) outputCount(s *pg_query.SelectStmt) (int, bool) {
	own := s.Op == pg_query.SetOperation_SETOP_NONE
	for s != nil && s.Op != pg_query.SetOperation_SETOP_NONE {
		s = s.Larg
	}
	switch {
	case s == nil:
		return 0, false
	case len(s.ValuesLists) > 0:
		return len(s.ValuesLists[0].GetList().GetItems()), true
	}
	count := 0
	for _, t := range s.TargetList {
		cr := t.GetResTarget().GetVal().GetColumnRef()
		if f := cr.GetFields(); len(f) == 0 || f[len(f)-1].GetAStar() == nil {
			count++
			continue
		}
		qual := ""
		if f := cr.Fields; len(f) == 2 {
			qual = f[0].GetString_().GetSval()
		}
		if !own || len(w.scopes) == 0 {
			return 0, false
		}
		cols, ok := w.star(qual)
		if !ok {
			return 0, false
		}
		count += len(cols)
	}
	return count, true
}

// ordinal returns the column number of an ORDER BY / GROUP BY item that is
// an integer constant.
func ordinal(n *pg_query.Node) (int, bool) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return int(c.GetIval().Ival), true
	}
	return 0, false
}

// locking writes FOR UPDATE / FOR SHARE. SQLite runs one writer at a time
// and is scheduled as a serial replica, so row locks are moot there.
func (w *writer) locking(lcs []*pg_query.Node) {
	if len(lcs) == 0 {
		return
	}
	strength := pg_query.LockClauseStrength_LCS_FORKEYSHARE
	var wait pg_query.LockWaitPolicy
	for _, n := range lcs {
		lc := n.GetLockingClause()
		if lc.WaitPolicy == pg_query.LockWaitPolicy_LockWaitSkip {
			w.refuse("SKIP LOCKED (its answer depends on timing)")
		}
		if lc.WaitPolicy == pg_query.LockWaitPolicy_LockWaitError {
			w.refuse("NOWAIT (its answer depends on timing)")
		}
		strength = max(strength, lc.Strength)
		wait = lc.WaitPolicy
	}
	_ = wait
	if w.lite() {
		return
	}
	if strength >= pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE {
		w.str(" FOR UPDATE")
	} else {
		w.str(" LOCK IN SHARE MODE")
	}
}

// pushScope makes a query level's FROM items visible to column references.
func (w *writer) pushScope(from []*pg_query.Node) {
	var sc scope
	var add func(n *pg_query.Node, nullable bool)
	add = func(n *pg_query.Node, nullable bool) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			alias := rv.Relname
			if rv.Alias != nil {
				alias = rv.Alias.Aliasname
			}
			it := scopeItem{alias: alias, table: w.schema.Table(rv.Relname), nullable: nullable}
			if t := w.cteTables[rv.Relname]; t != nil && rv.Schemaname == "" && rv.Catalogname == "" {
				it.table = t // a WITH query hides a table of its name
			}
			if it.table == nil && rv.Schemaname == "" && rv.Catalogname == "" {
				it.relation = rv.Relname
			}
			sc.items = append(sc.items, it)
		case n.GetRangeSubselect() != nil:
			rs := n.GetRangeSubselect()
			if a := rs.Alias; a != nil {
				t := w.derivedTables[a.Aliasname]
				if t == nil {
					t = w.subqueryTable(rs)
				}
				sc.items = append(sc.items, scopeItem{alias: a.Aliasname, table: t})
			}
		case n.GetRangeFunction() != nil:
			if it, ok := w.unnestScope(n.GetRangeFunction()); ok {
				sc.items = append(sc.items, it)
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if j.IsNatural || len(j.UsingClause) > 0 {
				sc.merged = true
			}
			add(j.Larg, nullable || j.Jointype == pg_query.JoinType_JOIN_RIGHT || j.Jointype == pg_query.JoinType_JOIN_FULL)
			add(j.Rarg, nullable || j.Jointype == pg_query.JoinType_JOIN_LEFT || j.Jointype == pg_query.JoinType_JOIN_FULL)
		}
	}
	for _, n := range from {
		add(n, false)
	}
	w.scopes = append(w.scopes, sc)
}

func (w *writer) popScope() { w.scopes = w.scopes[:len(w.scopes)-1] }

// pushTable makes one table visible (the target of INSERT/UPDATE/DELETE).
func (w *writer) pushTable(rv *pg_query.RangeVar, more []*pg_query.Node) {
	w.pushScope(append([]*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: rv}}}, more...))
}

// column finds the declared column a reference names: qualified by an
// alias, or the only known table in scope that has it. nullable says the
// table is on the outer side of an outer join, where even a NOT NULL
// column reads NULL.
func (w *writer) column(fields []string) (c *schema.Column, nullable bool) {
	switch len(fields) {
	case 1:
		for i := len(w.scopes) - 1; i >= 0; i-- {
			var found *scopeItem
			var col *schema.Column
			unknown := false
			for j := range w.scopes[i].items {
				it := &w.scopes[i].items[j]
				if it.table == nil {
					unknown = true
					continue
				}
				if c := it.table.Column(fields[0]); c != nil {
					if found != nil {
						return nil, false
					}
					found, col = it, c
				}
			}
			if unknown {
				return nil, false // a subquery might have the name too
			}
			if found != nil {
				return col, found.nullable
			}
		}
	case 2:
		for i := len(w.scopes) - 1; i >= 0; i-- {
			for _, it := range w.scopes[i].items {
				if it.alias == fields[0] {
					if it.table == nil {
						return nil, false
					}
					return it.table.Column(fields[1]), it.nullable
				}
			}
		}
	}
	return nil, false
}

// undefinedRelation fails with PostgreSQL's 42P01 when a FROM item of the
// innermost scope names a table that neither the schema nor a WITH query
// of the statement has.
func (w *writer) undefinedRelation() {
	if w.schema == nil || len(w.scopes) == 0 {
		return
	}
	for _, it := range w.scopes[len(w.scopes)-1].items {
		if it.relation != "" && !w.ctes[it.relation] {
			w.fail(undefinedTable, "relation %q does not exist", it.relation)
		}
	}
}

// undefinedTable is PostgreSQL's SQLSTATE for a relation that does not
// exist.
const undefinedTable = "42P01"
