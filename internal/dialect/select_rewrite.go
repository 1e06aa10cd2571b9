package dialect

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// nullSkipping are the aggregates (by the name the writer calls) that
// ignore NULL arguments, so that agg(x) FILTER (WHERE c) is
// agg(CASE WHEN c THEN x END): a row the filter rejects gives NULL, which
// the aggregate skips as PostgreSQL skips the row. count(*) counts the
// rows the filter keeps as COUNT(CASE WHEN c THEN 1 END).
var nullSkipping = map[string]bool{"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true}

// filteredArg writes the argument of an aggregate with FILTER (WHERE c)
// for MariaDB, which has no FILTER: the argument becomes a CASE that is
// NULL on the rows the filter rejects (see nullSkipping). name is the
// engine's function name; the caller has written "NAME(" and DISTINCT.
func (w *writer) filteredArg(name string, fc *pg_query.FuncCall) {
	if !nullSkipping[name] || len(fc.Args) > 1 || len(fc.Args) == 0 && !fc.AggStar {
		w.refuse("FILTER (WHERE ...) on %s()", name)
	}
	w.caseFilter(fc.AggFilter, func() {
		if fc.AggStar {
			w.str("1")
			return
		}
		w.expr(fc.Args[0])
	})
}

// caseFilter writes CASE WHEN cond THEN value END: value where cond is
// true, NULL where it is false or NULL (where FILTER drops the row).
func (w *writer) caseFilter(cond *pg_query.Node, value func()) {
	w.str("CASE WHEN ")
	w.expr(cond)
	w.str(" THEN ")
	value()
	w.str(" END")
}

// arrayAnyAll writes x = ANY (ARRAY[a, b]) as x IN (a, b) and
// x <> ALL (ARRAY[a, b]) as x NOT IN (a, b). Both mean the same as
// PostgreSQL's, NULLs included: = ANY is (x = a) OR (x = b), which is what
// IN is, and <> ALL is (x <> a) AND (x <> b), which is NOT IN. Any other
// operator, or an array that is not an ARRAY[...] constructor (a
// parameter, a column, a '{...}' literal), is refused: the engines have
// no arrays.
func (w *writer) arrayAnyAll(op string, all bool, l, r *pg_query.Node) {
	construct := op + " ANY (array)"
	if all {
		construct = op + " ALL (array)"
	}
	arr := r.GetAArrayExpr()
	if t := w.anyArrayType(l, r); arr == nil && t != "" {
		w.arrayAny(op, all, l, r, t)
		return
	}
	if arr == nil {
		w.refuse("%s other than of an ARRAY[...] list", construct)
	}
	if len(arr.Elements) == 0 {
		w.refuse("%s of an empty array", construct)
	}
	for _, e := range arr.Elements {
		if e.GetAArrayExpr() != nil {
			w.refuse("%s of a multidimensional array", construct)
		}
	}
	if l.GetRowExpr() != nil {
		w.refuse("%s of a row value", construct)
	}
	switch {
	case op == "=" && !all, op == "<>" && all:
		w.duckAnyList(op, r)
		w.in(op, l, arr.Elements)
	default:
		w.refuse("%s (only = ANY and <> ALL)", construct)
	}
}

// Names of the columns the DISTINCT ON rewrite introduces.
const (
	distinctOnTable = "_shepherd_don"
	distinctOnRank  = "_shepherd_rn"
)

// distinctOn writes SELECT DISTINCT ON (d...) list FROM ... ORDER BY s...
// for MariaDB and SQLite, which have no DISTINCT ON, as
//
//	SELECT c1 AS name1, ... FROM (
//	    SELECT list AS c1, ..., s-keys AS o1, ...,
//	        ROW_NUMBER() OVER (PARTITION BY d... ORDER BY s...) AS rn
//	    FROM ... ) AS t
//	WHERE rn = 1 ORDER BY (the s keys) LIMIT ...
//
// PostgreSQL keeps the first row of each group of rows equal on d
// (NULLs equal, as PARTITION BY groups them) in the order s, and sorts the
// kept rows by s: the rank 1 of each partition is that row, and the outer
// ORDER BY is s itself. sqlan has made s total over the output (see
// sqlan's totalOrder), so every engine keeps a row with the same output.
// The keys are resolved as PostgreSQL resolves them (a column number or
// the bare name of a result column is that result column's expression).
// PostgreSQL requires the leading ORDER BY keys to be the DISTINCT ON
// expressions; where shepherd cannot tell that they are, it refuses.
func (w *writer) distinctOn(s *pg_query.SelectStmt, top bool) {
	if len(s.LockingClause) > 0 {
		w.refuse("SELECT DISTINCT ON with FOR UPDATE/SHARE")
	}
	var dkeys, skeys []*pg_query.Node
	var sorts []*pg_query.SortBy
	func() {
		w.pushScope(s.FromClause)
		defer w.popScope()
		for _, t := range s.TargetList {
			rt := t.GetResTarget()
			if rt == nil || rt.Val.GetColumnRef() != nil && starRef(rt.Val.GetColumnRef()) {
				w.refuse("SELECT DISTINCT ON with * in the select list")
			}
		}
		// PostgreSQL's 42P10, ORDER BY checked first as there.
		for _, n := range s.SortClause {
			w.checkPosition("ORDER BY", n.GetSortBy().GetNode(), s)
		}
		for _, d := range s.DistinctClause {
			w.checkPosition("DISTINCT ON", d, s)
		}
		resolve := func(clause string, n *pg_query.Node) *pg_query.Node {
			if _, ok := ordinal(n); !ok && n.GetAConst() != nil {
				w.refuse("%s a constant", clause) // PostgreSQL fails (42601)
			}
			n = w.byOutputName(clause, n, s.TargetList, true)
			if i, ok := ordinal(n); ok {
				if i < 1 || i > len(s.TargetList) {
					w.refuse("%s position %d of a SELECT DISTINCT ON", clause, i)
				}
				return s.TargetList[i-1].GetResTarget().Val
			}
			return n
		}
		for _, d := range s.DistinctClause {
			dkeys = append(dkeys, resolve("DISTINCT ON", d))
		}
		for _, n := range s.SortClause {
			sb := n.GetSortBy()
			if sb.SortbyDir == pg_query.SortByDir_SORTBY_USING || len(sb.UseOp) > 0 {
				w.refuse("ORDER BY ... USING")
			}
			skeys = append(skeys, resolve("ORDER BY", sb.Node))
			sorts = append(sorts, sb)
		}
	}()
	// The leading sort keys must be DISTINCT ON keys, as PostgreSQL
	// demands (42P10 there); sqlan gives a DISTINCT ON without ORDER BY
	// its keys as the order.
	if len(skeys) == 0 {
		w.refuse("SELECT DISTINCT ON without ORDER BY")
	}
	for i := 0; i < len(skeys) && i < len(dkeys); i++ {
		found := false
		for _, d := range dkeys {
			found = found || sameText(d, skeys[i])
		}
		if !found {
			w.refuse("SELECT DISTINCT ON whose leading ORDER BY keys are not its DISTINCT ON expressions")
		}
	}
	col := func(name string) *pg_query.Node {
		return pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(distinctOnTable), pg_query.MakeStrNode(name)}, -1)
	}
	inner := &pg_query.SelectStmt{
		FromClause:    s.FromClause,
		WhereClause:   s.WhereClause,
		GroupClause:   s.GroupClause,
		GroupDistinct: s.GroupDistinct,
		HavingClause:  s.HavingClause,
		WindowClause:  s.WindowClause,
		Op:            pg_query.SetOperation_SETOP_NONE,
		LimitOption:   pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
	}
	outer := &pg_query.SelectStmt{
		WithClause:  s.WithClause,
		LimitCount:  s.LimitCount,
		LimitOffset: s.LimitOffset,
		LimitOption: s.LimitOption,
		Op:          pg_query.SetOperation_SETOP_NONE,
	}
	for i, t := range s.TargetList {
		rt := t.GetResTarget()
		c := "_shepherd_c" + strconv.Itoa(i+1)
		inner.TargetList = append(inner.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(c, rt.Val, -1))
		name := rt.Name
		if name == "" {
			name, _ = outputName(rt.Val)
		}
		outer.TargetList = append(outer.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(name, col(c), -1))
	}
	var order []*pg_query.Node
	for i, k := range skeys {
		sb := sorts[i]
		order = append(order, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
			Node: k, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, Location: -1}}})
		c := ""
		for j, t := range s.TargetList {
			if sameText(t.GetResTarget().Val, k) {
				c = "_shepherd_c" + strconv.Itoa(j+1)
				break
			}
		}
		if c == "" {
			c = "_shepherd_o" + strconv.Itoa(i+1)
			inner.TargetList = append(inner.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(c, k, -1))
		}
		outer.SortClause = append(outer.SortClause, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
			Node: col(c), SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, Location: -1}}})
	}
	rank := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("row_number")}, nil, -1)
	rank.GetFuncCall().Over = &pg_query.WindowDef{PartitionClause: dkeys, OrderClause: order, FrameOptions: frameDefaults, Location: -1}
	inner.TargetList = append(inner.TargetList, pg_query.MakeResTargetNodeWithNameAndVal(distinctOnRank, rank, -1))
	outer.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}},
		Alias:    &pg_query.Alias{Aliasname: distinctOnTable},
	}}}}
	outer.WhereClause = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("=")},
		col(distinctOnRank), pg_query.MakeAConstIntNode(1, -1), -1)
	w.selectStmt(outer, top)
}

// frameDefaults are PostgreSQL's frame options of a window without a
// frame clause (RANGE UNBOUNDED PRECEDING to CURRENT ROW).
const frameDefaults = frameRange | frameStartUnbPreceding | frameEndCurrent

// liteAnyAll writes x op ANY (subquery) and x op ALL (subquery) for
// SQLite, which has neither (x = ANY is IN, written by the caller), with
// PostgreSQL's three-valued result, which a WHERE clause and a result
// column both see:
//
//	x op ALL (q): false if some row v of q has x op v false; else NULL
//	              if some has it NULL; else true (also when q is empty);
//	x op ANY (q): true if some row has x op v true; else NULL if some
//	              has it NULL; else false (also when q is empty).
//
// That is CASE WHEN EXISTS (rows deciding) THEN ... WHEN EXISTS (rows
// with a NULL comparison) THEN NULL ELSE ... END over q named as a CTE
// with one column (SQLite takes WITH in a subquery). x <> ALL is NOT IN,
// which means exactly that in SQLite too.
func (w *writer) liteAnyAll(op string, all bool, x *pg_query.Node, q *pg_query.SelectStmt) {
	construct := op + " ANY (subquery)"
	if all {
		construct = op + " ALL (subquery)"
	}
	if !comparison[op] {
		w.refuse("operator %s with ANY/ALL", op)
	}
	if x.GetRowExpr() != nil {
		w.refuse("%s of a row value", construct)
	}
	first := q
	for first.Op != pg_query.SetOperation_SETOP_NONE {
		first = first.Larg
	}
	if len(first.ValuesLists) == 0 {
		if len(first.TargetList) != 1 || first.TargetList[0].GetResTarget().GetVal().GetColumnRef() != nil &&
			starRef(first.TargetList[0].GetResTarget().GetVal().GetColumnRef()) {
			w.refuse("%s of a subquery that does not name exactly one column", construct)
		}
	} else if len(first.ValuesLists[0].GetList().GetItems()) != 1 {
		w.refuse("%s of a subquery that does not name exactly one column", construct)
	}
	if all && op == "<>" {
		w.str("(")
		w.expr(x)
		w.str(" NOT IN (")
		w.selectStmt(q, false)
		w.str("))")
		return
	}
	decided, then, otherwise := "NOT ", "FALSE", "TRUE"
	if !all {
		decided, then, otherwise = "", "TRUE", "FALSE"
	}
	exists := func(cond string, tail string) {
		w.str("EXISTS (WITH \"_shepherd_q\"(\"_shepherd_v\") AS (")
		w.selectStmt(q, false)
		w.str(") SELECT 1 FROM \"_shepherd_q\" WHERE " + cond + "(")
		w.expr(x)
		w.str(" " + op + " \"_shepherd_q\".\"_shepherd_v\")" + tail + ")")
	}
	w.repeated(x, 2, func() {
		w.str("CASE WHEN ")
		exists(decided, "")
		w.str(" THEN " + then + " WHEN ")
		exists("", " IS NULL")
		w.str(" THEN NULL ELSE " + otherwise + " END")
	})
}

// liteSetAll writes L INTERSECT ALL R and L EXCEPT ALL R for SQLite,
// which has only the set forms. Numbering the rows of each side within
// their groups of equal rows (ROW_NUMBER() OVER (PARTITION BY every
// column), NULLs equal as in a set operation) makes the rows distinct,
// and the set operation on the numbered rows keeps what the ALL form
// keeps: a row m times in L and n times in R is numbered 1..m and 1..n,
// so INTERSECT keeps 1..min(m, n) and EXCEPT keeps n+1..m. The sides
// are named as WITH queries with one column list, and the numbers are
// dropped outside; the result columns take the left side's names. Only
// two plain SELECTs (or VALUES) are rewritten; anything else is refused.
func (w *writer) liteSetAll(s *pg_query.SelectStmt) {
	construct := "INTERSECT ALL"
	if s.Op == pg_query.SetOperation_SETOP_EXCEPT {
		construct = "EXCEPT ALL"
	}
	plain := func(m *pg_query.SelectStmt) bool {
		return m.Op == pg_query.SetOperation_SETOP_NONE && len(m.SortClause) == 0 && m.LimitCount == nil &&
			m.LimitOffset == nil && m.WithClause == nil && len(m.LockingClause) == 0
	}
	if !plain(s.Larg) || !plain(s.Rarg) {
		w.refuse("%s of other than two plain SELECTs", construct)
	}
	width := func(m *pg_query.SelectStmt) int {
		if len(m.ValuesLists) > 0 {
			return len(m.ValuesLists[0].GetList().GetItems())
		}
		for _, t := range m.TargetList {
			if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && starRef(cr) {
				w.refuse("%s of a SELECT with *", construct)
			}
		}
		return len(m.TargetList)
	}
	n := width(s.Larg)
	if n == 0 || width(s.Rarg) != n {
		w.refuse("%s of sides with different numbers of columns", construct)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = "column" + strconv.Itoa(i+1)
		if len(s.Larg.ValuesLists) == 0 {
			rt := s.Larg.TargetList[i].GetResTarget()
			if names[i] = rt.Name; names[i] == "" {
				names[i], _ = outputName(rt.Val)
			}
		}
	}
	cols := func() {
		for i := range n {
			if i > 0 {
				w.str(", ")
			}
			w.ident("_shepherd_c" + strconv.Itoa(i+1))
		}
	}
	side := func(name string) {
		w.str("SELECT ")
		cols()
		w.str(", ROW_NUMBER() OVER (PARTITION BY ")
		cols()
		w.str(") FROM ")
		w.ident(name)
	}
	w.str("SELECT ")
	for i := range n {
		if i > 0 {
			w.str(", ")
		}
		w.ident("_shepherd_c" + strconv.Itoa(i+1))
		w.str(" AS ")
		w.ident(names[i])
	}
	w.str(" FROM (WITH ")
	for k, m := range []*pg_query.SelectStmt{s.Larg, s.Rarg} {
		if k > 0 {
			w.str(", ")
		}
		w.ident("_shepherd_side" + strconv.Itoa(k+1))
		w.str(" (")
		cols()
		w.str(") AS (")
		w.selectStmt(m, false)
		w.str(")")
	}
	w.str(" ")
	side("_shepherd_side1")
	if s.Op == pg_query.SetOperation_SETOP_INTERSECT {
		w.str(" INTERSECT ")
	} else {
		w.str(" EXCEPT ")
	}
	side("_shepherd_side2")
	w.str(") AS ")
	w.ident("_shepherd_set")
	w.orderLimit(s, nil)
	w.locking(s.LockingClause)
}

// lagLeadDefault writes lag(x, n, d) and lead(x, n, d) for MariaDB,
// whose LAG and LEAD take no default: d where the row n away does not
// exist in the partition, x's value there otherwise (NULL included):
//
//	CASE WHEN LAG(1, n) OVER w IS NULL THEN d ELSE LAG(x, n) OVER w END
//
// LAG(1, n) is NULL exactly where there is no such row, in the same
// window and so the same row order as LAG(x, n). n must be a constant
// (0 or more); the caller writes no OVER after it.
func (w *writer) lagLeadDefault(name string, fc *pg_query.FuncCall) {
	n, ok := intConst(fc.Args[1])
	if !ok || n < 0 {
		w.refuse("%s() with a default value and an offset that is not a constant of 0 or more", name)
	}
	if fc.Over == nil || fc.AggFilter != nil || fc.AggDistinct {
		w.refuse("%s() with a default value in this form", name)
	}
	fn := strings.ToUpper(name)
	off := strconv.FormatInt(n, 10)
	w.str("CASE WHEN " + fn + "(1, " + off + ") OVER ")
	w.over(fc)
	w.str(" IS NULL THEN ")
	w.expr(fc.Args[2])
	w.str(" ELSE " + fn + "(")
	w.expr(fc.Args[0])
	w.str(", " + off + ") OVER ")
	w.over(fc)
	w.str(" END")
}
