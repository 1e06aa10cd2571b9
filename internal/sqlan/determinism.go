package sqlan

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// A write's rows must not depend on the order in which an engine happens
// to scan them: PostgreSQL scans its heap in insertion order (and moves
// updated rows to the end), MariaDB and SQLite in key order, so every
// construct that picks rows or numbers them by position gives each
// replica different rows, and the row count, all the vote sees of a
// write, is the same. Such constructs are either given a total order
// here (an order that no two distinct rows tie on) or refused with
// 0A000 naming them:
//
//   - LIMIT, OFFSET and FETCH FIRST: totalOrder appends the output
//     columns as sort keys (rows that tie on all of them are identical,
//     so which of them is taken does not matter); refused when the
//     output columns cannot be known (* over a view) or are not sortable
//     (json).
//   - DISTINCT ON: the same, after its own expressions.
//   - row_number(), ntile(), lag(), lead() over an order with ties: the
//     primary key of the scanned table is appended to the window's order
//     when the query scans one table that has one (this picks one of the
//     orders PostgreSQL may use); refused otherwise. first_value(),
//     last_value(), nth_value(), ROWS frames and order-sensitive
//     aggregates over a window with ties are refused (a longer order
//     would change which rows are peers).
//   - string_agg(), array_agg() and the json aggregates: their arguments
//     are appended to the aggregate's ORDER BY (inputs that tie on them
//     contribute the same text), in reads too.
//   - sum(), avg() and the variance family over float4/float8: a float
//     sum depends on the order of the additions, and engines add in
//     different orders and ways (SQLite compensates); refused in writes.
//   - UPDATE ... FROM (and DELETE ... USING ... RETURNING) where a target
//     row may match several source rows: which one is used is the scan's
//     choice; refused unless each source table is joined on all the
//     columns of its primary key.
//
// Views get the same treatment when created (except the float rule:
// reads compare floats themselves), so that a write that reads a view
// reads rows every replica agrees on.

// refuseOrder is the error for a construct whose result depends on the
// scan order.
func refuseOrder(construct, fix string) error {
	return unsupported("%s in a statement that writes: its rows would depend on the order each replica's engine scans them in; %s", construct, fix)
}

// limited reports whether a query keeps only some of its rows by
// position.
func limited(sel *pg_query.SelectStmt) bool {
	return sel.LimitCount != nil && !isNullConst(sel.LimitCount) || sel.LimitOffset != nil
}

// withTies reports FETCH FIRST ... WITH TIES, whose rows are fixed by
// the sort keys alone.
func withTies(sel *pg_query.SelectStmt) bool {
	return sel.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES
}

// distinctOn reports SELECT DISTINCT ON (...).
func distinctOn(sel *pg_query.SelectStmt) bool {
	return len(sel.DistinctClause) > 0 && sel.DistinctClause[0].GetNode() != nil
}

// fixOrders gives every query in the tree that keeps rows by position a
// total order (see totalOrder). With strict (a write, or a view a write
// may read) a query whose order cannot be made total is refused. The
// top-level SELECT of a read is left to the caller.
func (r *rewriter) fixOrders(root *pg_query.Node, top *pg_query.SelectStmt, strict bool) error {
	var err error
	walkNodes(root, func(n *pg_query.Node) {
		sel := n.GetSelectStmt()
		if sel == nil || sel == top || err != nil {
			return
		}
		if !limited(sel) && !distinctOn(sel) {
			return
		}
		if !r.totalOrder(sel) && strict && !(withTies(sel) && !distinctOn(sel)) {
			err = orderError(sel)
		}
	})
	return err
}

// orderError names what keeps a query's order from being total.
func orderError(sel *pg_query.SelectStmt) error {
	construct := "LIMIT"
	switch {
	case distinctOn(sel):
		construct = "DISTINCT ON"
	case sel.LimitCount == nil || isNullConst(sel.LimitCount):
		construct = "OFFSET"
	}
	return refuseOrder(construct+" over rows shepherd cannot order completely (* over a view, a join with USING or a subquery, or json columns)",
		"list the columns and ORDER BY a unique key")
}

// orderedAggs are the aggregates whose result depends on the order of
// their input rows.
var orderedAggs = map[string]bool{
	"string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true, "xmlagg": true,
}

// floatAggs are the aggregates whose float result depends on the order
// of the additions.
var floatAggs = map[string]bool{
	"sum": true, "avg": true, "stddev": true, "stddev_pop": true, "stddev_samp": true,
	"variance": true, "var_pop": true, "var_samp": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true,
	"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
}

// scope is what the column references of one query level can name.
type scope struct {
	from    []*pg_query.Node // FROM items (and an UPDATE's or DELETE's target)
	windows []*pg_query.Node // the WINDOW clause
}

// fixAggregates and windows: walks every function call with the query
// level it belongs to, completing the order of order-sensitive
// aggregates and windows and, with write, refusing what cannot be made
// deterministic (see the comment at the top of the file).
func (r *rewriter) fixFunctions(root *pg_query.Node, write, floats bool) error {
	return r.walkScoped(root, true, func(m protoreflect.Message, sc *scope) error {
		if fc, ok := m.Interface().(*pg_query.FuncCall); ok && sc != nil {
			return r.fixCall(fc, sc, write, floats)
		}
		return nil
	})
}

// fixCall is fixFunctions for one call.
func (r *rewriter) fixCall(fc *pg_query.FuncCall, sc *scope, write, floats bool) error {
	name := schema.FuncName(fc)
	if floats && floatAggs[name] {
		for _, a := range fc.Args {
			if r.isFloat(sc, a) {
				return refuseOrder(name+"() of float4/float8 values",
					"a float sum depends on the order of the additions; cast the argument to numeric")
			}
		}
	}
	if fc.Over == nil {
		if !orderedAggs[name] || fc.AggWithinGroup {
			return nil
		}
		if name == "array_agg" && len(fc.AggOrder) == 0 {
			// PostgreSQL's order is its plan's; sorting by the values
			// would answer otherwise than a PostgreSQL server would.
			return unsupported("array_agg() without ORDER BY: its elements come in the order each replica's engine reads the rows in; write array_agg(x ORDER BY ...)")
		}
		// Inputs that tie on the aggregate's arguments contribute the
		// same values, so ordering by them completes the order.
		for _, a := range fc.Args {
			if schema.IsConstant(a) || a.GetParamRef() != nil || covers(fc.AggOrder, a) {
				continue
			}
			if !r.orderableIn(sc, a) {
				if write {
					return refuseOrder(name+"() of json values without a complete ORDER BY", "order the aggregate by a unique key")
				}
				return nil
			}
			fc.AggOrder = append(fc.AggOrder, sortBy(a))
			r.changed = true
		}
		return nil
	}
	if !write {
		return nil
	}
	wd := resolveWindow(fc.Over, sc.windows)
	if wd == nil {
		return refuseOrder(name+"() over a window shepherd cannot find", "define the window inline")
	}
	ordered := len(wd.OrderClause) > 0
	rows := wd.FrameOptions&(frameRows|frameGroups) != 0
	switch {
	case name == "rank" || name == "dense_rank" || name == "percent_rank" || name == "cume_dist":
		return nil // peers get the same value
	case name == "row_number" || name == "ntile" || name == "lag" || name == "lead":
	case name == "first_value" || name == "last_value" || name == "nth_value" || orderedAggs[name] || rows && ordered:
		if r.uniqueOrder(sc, wd) {
			return nil
		}
		return refuseOrder(name+"() over a window whose ORDER BY has ties", "order the window by a unique key")
	default:
		return nil // an aggregate over peers: the same for every order of them
	}
	if r.uniqueOrder(sc, wd) {
		return nil
	}
	t, alias := r.singleTable(sc)
	if t == nil || len(t.Key) == 0 {
		return refuseOrder(name+"() over a window whose ORDER BY has ties", "order the window by a unique key")
	}
	// Inline the window (a named one may be shared with functions whose
	// peers must stay as written) and append the table's key.
	own := &pg_query.WindowDef{
		PartitionClause: wd.PartitionClause, OrderClause: slices.Clone(wd.OrderClause),
		FrameOptions: wd.FrameOptions, StartOffset: wd.StartOffset, EndOffset: wd.EndOffset, Location: -1,
	}
	for _, k := range t.Key {
		ref := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode(k)}, -1)
		own.OrderClause = append(own.OrderClause, sortBy(ref))
	}
	fc.Over = own
	r.changed = true
	return nil
}

// Frame option bits (PostgreSQL's FRAMEOPTION_*).
const (
	frameRows   = 0x4
	frameGroups = 0x8
)

// sortBy returns an ascending sort key on n.
func sortBy(n *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{Node: n, Location: -1}}}
}

// covers reports whether the sort keys include n.
func covers(keys []*pg_query.Node, n *pg_query.Node) bool {
	for _, k := range keys {
		if sb := k.GetSortBy(); sb != nil && sameExpr(sb.Node, n) {
			return true
		}
	}
	return false
}

// resolveWindow returns the window a call runs over, following a
// reference to the WINDOW clause; nil when it names no window there.
func resolveWindow(over *pg_query.WindowDef, windows []*pg_query.Node) *pg_query.WindowDef {
	ref := over.Refname
	if ref == "" && over.Name != "" && len(over.PartitionClause) == 0 && len(over.OrderClause) == 0 {
		ref = over.Name // OVER w
	}
	if ref == "" {
		return over
	}
	for _, w := range windows {
		if wd := w.GetWindowDef(); wd != nil && wd.Name == ref {
			base := resolveWindow(&pg_query.WindowDef{Refname: wd.Refname, PartitionClause: wd.PartitionClause, OrderClause: wd.OrderClause, FrameOptions: wd.FrameOptions}, windows)
			if base == nil {
				return nil
			}
			out := &pg_query.WindowDef{PartitionClause: base.PartitionClause, OrderClause: slices.Clone(base.OrderClause),
				FrameOptions: base.FrameOptions, StartOffset: base.StartOffset, EndOffset: base.EndOffset}
			out.OrderClause = append(out.OrderClause, over.OrderClause...)
			if over.FrameOptions&1 != 0 && over.Refname != "" {
				out.FrameOptions, out.StartOffset, out.EndOffset = over.FrameOptions, over.StartOffset, over.EndOffset
			}
			return out
		}
	}
	return nil
}

// singleTable returns the table a query level scans when it scans exactly
// one table shepherd knows (not a view), with the name its columns are
// qualified by.
func (r *rewriter) singleTable(sc *scope) (*schema.Table, string) {
	if len(sc.from) != 1 {
		return nil, ""
	}
	rv := sc.from[0].GetRangeVar()
	if rv == nil {
		return nil, ""
	}
	t := r.schema.Table(rv.Relname)
	if t == nil || t.View {
		return nil, ""
	}
	alias := rv.Relname
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	return t, alias
}

// uniqueOrder reports whether a window's PARTITION BY and ORDER BY
// together name every column of the primary key of the one table the
// query scans: then no two rows of a partition tie.
func (r *rewriter) uniqueOrder(sc *scope, wd *pg_query.WindowDef) bool {
	t, alias := r.singleTable(sc)
	if t == nil || len(t.Key) == 0 {
		return false
	}
	named := map[string]bool{}
	for _, n := range wd.PartitionClause {
		if c := columnOf(n, alias); c != "" {
			named[c] = true
		}
	}
	for _, n := range wd.OrderClause {
		if c := columnOf(n.GetSortBy().GetNode(), alias); c != "" {
			named[c] = true
		}
	}
	for _, k := range t.Key {
		if !named[k] {
			return false
		}
	}
	return true
}

// columnOf returns the column a reference names when it is a plain
// column of the table known as alias (qualified by it, or not at all).
func columnOf(n *pg_query.Node, alias string) string {
	cr := n.GetColumnRef()
	if cr == nil {
		return ""
	}
	switch len(cr.Fields) {
	case 1:
		return cr.Fields[0].GetString_().GetSval()
	case 2:
		if cr.Fields[0].GetString_().GetSval() == alias {
			return cr.Fields[1].GetString_().GetSval()
		}
	}
	return ""
}

// column resolves a column reference against the tables of a query level
// (ranges and joins of known tables); nil when it is something else or
// unknown.
func (r *rewriter) column(sc *scope, n *pg_query.Node) *schema.Column {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) > 2 {
		return nil
	}
	qual, name := "", cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	if len(cr.Fields) == 2 {
		qual = cr.Fields[0].GetString_().GetSval()
	}
	var found *schema.Column
	var visit func(f *pg_query.Node)
	visit = func(f *pg_query.Node) {
		if j := f.GetJoinExpr(); j != nil {
			visit(j.Larg)
			visit(j.Rarg)
			return
		}
		rv := f.GetRangeVar()
		if rv == nil {
			return
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		if qual != "" && qual != alias {
			return
		}
		if t := r.schema.Table(rv.Relname); t != nil && found == nil {
			found = t.Column(name)
		}
	}
	for _, f := range sc.from {
		visit(f)
	}
	return found
}

// isFloat reports whether an expression is of a float type as far as
// the schema tells: a float4/float8 column, a cast to one, or arithmetic
// with one.
func (r *rewriter) isFloat(sc *scope, n *pg_query.Node) bool {
	switch {
	case n.GetColumnRef() != nil:
		c := r.column(sc, n)
		return c != nil && (c.Type == "float4" || c.Type == "float8")
	case n.GetTypeCast() != nil:
		switch schema.TypeText(n.GetTypeCast().TypeName) {
		case "float4", "float8", "real", "double precision", "float":
			return true
		}
		return false
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		return e.Lexpr != nil && r.isFloat(sc, e.Lexpr) || e.Rexpr != nil && r.isFloat(sc, e.Rexpr)
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		switch schema.FuncName(fc) {
		case "coalesce", "abs", "greatest", "least", "nullif":
			for _, a := range fc.Args {
				if r.isFloat(sc, a) {
					return true
				}
			}
		}
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if r.isFloat(sc, a) {
				return true
			}
		}
	}
	return false
}

// orderableIn reports whether an expression may be a sort key: not a json
// column.
func (r *rewriter) orderableIn(sc *scope, n *pg_query.Node) bool {
	c := r.column(sc, n)
	return c == nil || c.Type != "json" && c.Type != "jsonb"
}

// checkJoinedUpdate refuses an UPDATE ... FROM, or a DELETE ... USING
// with RETURNING, unless each source table is joined on every column of
// its primary key by an equality (in the WHERE's top-level AND) with an
// expression that names no source table: then each target row matches
// at most one source row, and the result does not depend on which match
// the engine finds first.
func (r *rewriter) checkJoinedUpdate(construct string, sources []*pg_query.Node, where *pg_query.Node) error {
	aliases := map[string]bool{}
	for _, f := range sources {
		rv := f.GetRangeVar()
		if rv == nil {
			return refuseOrder(construct+" from a join or subquery", "write the source as a subquery in SET or WHERE, or join a table on its primary key")
		}
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		aliases[alias] = true
	}
	var conj []*pg_query.Node
	var split func(n *pg_query.Node)
	split = func(n *pg_query.Node) {
		if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
			for _, a := range b.Args {
				split(a)
			}
			return
		}
		conj = append(conj, n)
	}
	if where != nil {
		split(where)
	}
	namesSource := func(n *pg_query.Node) bool {
		found := false
		walkNodes(n, func(m *pg_query.Node) {
			if cr := m.GetColumnRef(); cr != nil {
				if len(cr.Fields) != 2 || aliases[cr.Fields[0].GetString_().GetSval()] {
					found = true // unqualified: may be a source column
				}
			}
			if m.GetSubLink() != nil {
				found = true
			}
		})
		return found
	}
	for _, f := range sources {
		rv := f.GetRangeVar()
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		t := r.schema.Table(rv.Relname)
		if t == nil || t.View || len(t.Key) == 0 {
			return refuseOrder(construct+" where a row may match several rows of "+rv.Relname+" (shepherd knows no primary key of it)",
				"join it on its primary key, or use a subquery in SET or WHERE")
		}
		for _, k := range t.Key {
			pinned := false
			for _, c := range conj {
				e := c.GetAExpr()
				if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || schema.OpName(e.Name) != "=" || e.Lexpr == nil || e.Rexpr == nil {
					continue
				}
				for _, side := range [2][2]*pg_query.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
					if qualified(side[0], alias, k) && !namesSource(side[1]) {
						pinned = true
					}
				}
			}
			if !pinned {
				return refuseOrder(construct+" where a row may match several rows of "+rv.Relname+" (not joined on all of its primary key "+rv.Relname+"("+joinNames(t.Key)+"))",
					"join it on its primary key, or use a subquery in SET or WHERE")
			}
		}
	}
	return nil
}

// qualified reports whether n is alias.column.
func qualified(n *pg_query.Node, alias, column string) bool {
	cr := n.GetColumnRef()
	return cr != nil && len(cr.Fields) == 2 && cr.Fields[0].GetString_().GetSval() == alias &&
		cr.Fields[1].GetString_().GetSval() == column
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// determinism applies the rules above to an analysed statement: a DML
// statement (or a locking SELECT) is checked strictly, a view when it is
// created, a read gets its ordered aggregates completed.
func (s *Stmt) determinism(r *rewriter) error {
	top := s.tree.GetSelectStmt()
	r.ctes = map[string]bool{} // names that may not be the tables (see keyOrdered)
	walkNodes(s.tree, func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			r.ctes[c.Ctename] = true
		}
	})
	switch {
	case s.tree.GetViewStmt() != nil:
		q := s.tree.GetViewStmt().Query
		if err := r.fixOrders(q, nil, true); err != nil {
			return err
		}
		return r.fixFunctions(q, true, false)
	case s.Kind == Write:
		if others := nonPostgres(s.env); others != "" {
			if what := r.floatText(s.tree, map[string]bool{}); what != "" {
				return unsupported("the text of a float4/float8 value (%s) in a statement that writes, with %s replicas: each engine prints a float otherwise (PostgreSQL 1e+10, MariaDB 10000000000, SQLite 10000000000.0), and a write's effect is not voted; store the float in a float column, or a numeric value", what, others)
			}
		}
		if len(s.env.Replicas[driver.MySQL]) > 0 {
			if what := r.printedOtherwiseIn(s.tree, map[string]bool{}); what != "" {
				return unsupported("%s in a statement that writes, with MariaDB replicas: MariaDB prints or compares such values otherwise than PostgreSQL (jsonb numbers, key order, timestamps' fraction), and a write's effect is not voted", what)
			}
		}
		if err := r.fixOrders(s.tree, top, true); err != nil {
			return err
		}
		if top != nil {
			s.Ordered = r.totalOrder(top)
			if !s.Ordered {
				s.SortKeys = r.sortKeys(top)
			}
			if (limited(top) || distinctOn(top)) && !s.Ordered && !(withTies(top) && !distinctOn(top)) {
				return orderError(top)
			}
		}
		if u := s.tree.GetUpdateStmt(); u != nil && len(u.FromClause) > 0 {
			if err := r.checkJoinedUpdate("UPDATE ... FROM", u.FromClause, u.WhereClause); err != nil {
				return err
			}
		}
		if d := s.tree.GetDeleteStmt(); d != nil && len(d.UsingClause) > 0 && len(d.ReturningList) > 0 {
			if err := r.checkJoinedUpdate("DELETE ... USING ... RETURNING", d.UsingClause, d.WhereClause); err != nil {
				return err
			}
		}
		if err := r.fixFunctions(s.tree, true, true); err != nil {
			return err
		}
		return r.viewFloats(s.tree, map[string]bool{})
	case s.Kind == Read:
		if err := r.fixOrders(s.tree, top, false); err != nil {
			return err
		}
		if top != nil {
			s.Ordered = r.totalOrder(top)
			if !s.Ordered {
				s.SortKeys = r.sortKeys(top)
			}
		}
		return r.fixFunctions(s.tree, false, false)
	}
	return nil
}

// sortKeys returns the output columns (0-based) that the leading keys of
// a query's ORDER BY are, up to the first key that is not an output
// column (an expression, or a column of a view's *): what the vote can
// check of an order that is not total (see answer.DigestSorted).
func (r *rewriter) sortKeys(sel *pg_query.SelectStmt) []int {
	if len(sel.SortClause) == 0 || withTies(sel) {
		return nil
	}
	targets := r.outputs(sel)
	var keys []int
	for _, n := range sel.SortClause {
		sb := n.GetSortBy()
		k := -1
		if c := sb.GetNode().GetAConst(); c != nil && c.GetIval() != nil {
			if i := int(c.GetIval().Ival); i >= 1 && (targets == nil || i <= len(targets)) {
				k = i - 1
			}
		}
		for i, t := range targets {
			rt := t.GetResTarget()
			if k < 0 && (sameExpr(rt.Val, sb.Node) || rt.Name != "" && isColumn(sb.Node, rt.Name)) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		keys = append(keys, k)
	}
	return keys
}

// viewFloats refuses a write that reads a view (or a view of a view)
// whose query sums floats: the float rule of a write, applied to what it
// reads through views (a view itself may sum floats: reads compare them).
func (r *rewriter) viewFloats(root *pg_query.Node, seen map[string]bool) error {
	var views []string
	walkNodes(root, func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil {
			if t := r.schema.Table(rv.Relname); t != nil && t.View && t.Query != "" && !seen[t.Name] {
				seen[t.Name] = true
				views = append(views, t.Name)
			}
		}
	})
	for _, name := range views {
		tree, err := pg_query.Parse(r.schema.Table(name).Query)
		if err != nil || len(tree.Stmts) != 1 {
			continue
		}
		q := tree.Stmts[0].Stmt
		err = r.walkScoped(q, false, func(m protoreflect.Message, sc *scope) error {
			fc, ok := m.Interface().(*pg_query.FuncCall)
			if !ok || sc == nil || !floatAggs[schema.FuncName(fc)] {
				return nil
			}
			for _, a := range fc.Args {
				if r.isFloat(sc, a) {
					return refuseOrder(schema.FuncName(fc)+"() of float4/float8 values in view "+name,
						"a float sum depends on the order of the additions; cast the argument to numeric in the view")
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := r.viewFloats(q, seen); err != nil {
			return err
		}
	}
	return nil
}

// printedOtherwiseOnMariaDB names the first construct of n whose value
// MariaDB's translation (package dialect: JSON_EXTRACT, TIMESTAMPDIFF)
// prints or compares otherwise than PostgreSQL in some cases: json
// operators (a jsonb number 1e2, an object's key order), AT TIME ZONE,
// age, json_build_object, and the text of a date_trunc() or interval
// result (MariaDB prints six zero decimals). A read's answer is voted,
// so a difference shows; a write's only effect is what it stores or
// which rows it picks, which no vote sees, so a write holding one is
// refused where MariaDB is a replica. The values themselves (a
// timestamp plus an interval stored in a timestamp column) are the same
// on every engine. "" when there is none.
func printedOtherwiseOnMariaDB(n *pg_query.Node) string {
	what := ""
	walkNodes(n, func(m *pg_query.Node) {
		if what != "" {
			return
		}
		switch {
		case m.GetAExpr() != nil:
			for _, o := range m.GetAExpr().Name {
				switch op := o.GetString_().GetSval(); op {
				case "->", "->>", "#>", "#>>", "@>", "<@", "?", "?|", "?&":
					what = "the json operator " + op
				}
			}
		case m.GetFuncCall() != nil:
			switch name := schema.FuncName(m.GetFuncCall()); name {
			case "timezone":
				what = "AT TIME ZONE"
			case "age", "jsonb_build_object", "json_build_object", "jsonb_extract_path_text", "json_extract_path_text":
				what = name + "()"
			}
		case m.GetTypeCast() != nil:
			tc := m.GetTypeCast()
			if tc.TypeName == nil || !schema.IsText(schema.TypeText(tc.TypeName)) && schema.TypeText(tc.TypeName) != "varchar" {
				return
			}
			walkNodes(tc.Arg, func(a *pg_query.Node) {
				if fc := a.GetFuncCall(); fc != nil && schema.FuncName(fc) == "date_trunc" {
					what = "the text of a date_trunc() result"
				}
				if c := a.GetTypeCast(); c != nil && c.TypeName != nil && schema.TypeText(c.TypeName) == "interval" {
					what = "the text of a value computed with an interval"
				}
			})
		}
	})
	return what
}

// printedOtherwiseIn is printedOtherwiseOnMariaDB of n and of the views
// it reads, whose definitions MariaDB holds in its own translation (a
// write reading such a view stores MariaDB's text of them too).
func (r *rewriter) printedOtherwiseIn(n *pg_query.Node, seen map[string]bool) string {
	if what := printedOtherwiseOnMariaDB(n); what != "" {
		return what
	}
	var views []string
	walkNodes(n, func(m *pg_query.Node) {
		if rv := m.GetRangeVar(); rv != nil {
			if t := r.schema.Table(rv.Relname); t != nil && t.View && !seen[t.Name] {
				seen[t.Name] = true
				views = append(views, t.Name)
			}
		}
	})
	for _, name := range views {
		q := r.schema.Table(name).Query
		if q == "" {
			continue
		}
		tree, err := pg_query.Parse(q)
		if err != nil || len(tree.Stmts) != 1 {
			continue
		}
		if what := r.printedOtherwiseIn(tree.Stmts[0].Stmt, seen); what != "" {
			return what + " (in view " + name + ")"
		}
	}
	return ""
}

// nonPostgres names the engines other than PostgreSQL among an
// environment's replicas ("" when all are PostgreSQL).
func nonPostgres(env *Env) string {
	var names []string
	for _, d := range []struct {
		d    driver.Dialect
		name string
	}{{driver.MySQL, "MariaDB"}, {driver.SQLite, "SQLite"}, {driver.DuckDB, "DuckDB"}} {
		if len(env.Replicas[d.d]) > 0 {
			names = append(names, d.name)
		}
	}
	return strings.Join(names, ", ")
}

// floatTextFuncs take any value and print it as text (or json text).
var floatTextFuncs = map[string]bool{
	"concat": true, "concat_ws": true, "format": true, "to_char": true,
	"quote_literal": true, "quote_nullable": true, "to_json": true, "to_jsonb": true,
	"json_build_array": true, "jsonb_build_array": true, "json_build_object": true, "jsonb_build_object": true,
}

// textType reports whether a type name is one PostgreSQL turns a value
// into text for.
func textType(typ string) bool {
	switch typ {
	case "text", "varchar", "bpchar", "char", "name", "character varying", "character":
		return true
	}
	return schema.IsText(typ)
}

// floatText names the first place in n (and in the views it reads)
// where a float4/float8 value becomes text: a cast to a text type, ||,
// a function that prints any value (concat, format, to_char, to_json),
// or the assignment of a float to a text column by INSERT or UPDATE.
// Each engine prints a float otherwise (PostgreSQL 1e+10 and 3.4e+38,
// MariaDB 10000000000 and 3.4e38, SQLite 10000000000.0 and
// 0.33333333333333332), so such a text in a write (stored, or picking
// the rows) would differ by replica, which the row count vote does not
// see. "" when there is none.
func (r *rewriter) floatText(n *pg_query.Node, seen map[string]bool) string {
	what := ""
	_ = r.walkScoped(n, true, func(m protoreflect.Message, sc *scope) error {
		if what != "" {
			return nil
		}
		if sc == nil {
			sc = &scope{}
		}
		if what = r.floatTextHere(sc, m); what != "" {
			return nil
		}
		switch x := m.Interface().(type) {
		case *pg_query.UpdateStmt:
			t := r.schema.Table(x.Relation.GetRelname())
			for _, tn := range x.TargetList {
				rt := tn.GetResTarget()
				if t == nil || rt == nil || rt.Val == nil || len(rt.Indirection) > 0 {
					continue
				}
				if c := t.Column(rt.Name); c != nil && textType(c.Type) && r.floatValue(sc, rt.Val) {
					what = exprText(rt.Val) + " stored in text column " + rt.Name
					return nil
				}
			}
		case *pg_query.InsertStmt:
			what = r.insertedFloatText(x)
		}
		return nil
	})
	if what != "" {
		return what
	}
	var views []string
	walkNodes(n, func(m *pg_query.Node) {
		if rv := m.GetRangeVar(); rv != nil {
			if t := r.schema.Table(rv.Relname); t != nil && t.View && !seen[t.Name] {
				seen[t.Name] = true
				views = append(views, t.Name)
			}
		}
	})
	for _, name := range views {
		tree, err := pg_query.Parse(r.schema.Table(name).Query)
		if err != nil || len(tree.Stmts) != 1 {
			continue
		}
		if what := r.floatText(tree.Stmts[0].Stmt, seen); what != "" {
			return what + " in view " + name
		}
	}
	return ""
}

// floatTextHere is floatText's rule for one node of a query level: a
// cast of a float to text, || with a float, or a printing function of
// one.
func (r *rewriter) floatTextHere(sc *scope, m protoreflect.Message) string {
	switch x := m.Interface().(type) {
	case *pg_query.TypeCast:
		if x.TypeName != nil && x.Arg != nil && textType(schema.TypeText(x.TypeName)) && r.floatValue(sc, x.Arg) {
			return exprText(&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: x}})
		}
	case *pg_query.A_Expr:
		if schema.OpName(x.Name) == "||" && (x.Lexpr != nil && r.floatValue(sc, x.Lexpr) || x.Rexpr != nil && r.floatValue(sc, x.Rexpr)) {
			return exprText(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: x}})
		}
	case *pg_query.FuncCall:
		if floatTextFuncs[schema.FuncName(x)] {
			for _, a := range x.Args {
				if r.floatValue(sc, a) {
					return exprText(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: x}})
				}
			}
		}
	}
	return ""
}

// insertedFloatText is floatText's assignment rule for an INSERT: a
// float value (of VALUES, or of a SELECT's output, each arm of a set
// operation) stored in a text column.
func (r *rewriter) insertedFloatText(ins *pg_query.InsertStmt) string {
	t := r.schema.Table(ins.Relation.GetRelname())
	if t == nil {
		return ""
	}
	var cols []*schema.Column
	if len(ins.Cols) == 0 {
		for i := range t.Columns {
			cols = append(cols, &t.Columns[i])
		}
	}
	for _, c := range ins.Cols {
		cols = append(cols, t.Column(c.GetResTarget().GetName()))
	}
	check := func(sc *scope, i int, v *pg_query.Node) string {
		if i < len(cols) && cols[i] != nil && textType(cols[i].Type) && r.floatValue(sc, v) {
			return exprText(v) + " stored in text column " + cols[i].Name
		}
		return ""
	}
	var sel func(s *pg_query.SelectStmt) string
	sel = func(s *pg_query.SelectStmt) string {
		if s == nil {
			return ""
		}
		if s.Larg != nil || s.Rarg != nil {
			if what := sel(s.Larg); what != "" {
				return what
			}
			return sel(s.Rarg)
		}
		sc := &scope{from: s.FromClause}
		for _, row := range s.ValuesLists {
			for i, v := range row.GetList().GetItems() {
				if what := check(sc, i, v); what != "" {
					return what
				}
			}
		}
		for i, tn := range s.TargetList {
			if rt := tn.GetResTarget(); rt != nil && rt.Val != nil {
				if what := check(sc, i, rt.Val); what != "" {
					return what
				}
			}
		}
		return ""
	}
	if what := sel(ins.SelectStmt.GetSelectStmt()); what != "" {
		return what
	}
	// ON CONFLICT DO UPDATE SET t = excluded.f: the target and the
	// proposed row (excluded) are the scope.
	if oc := ins.OnConflictClause; oc != nil {
		sc := &scope{from: []*pg_query.Node{
			{Node: &pg_query.Node_RangeVar{RangeVar: ins.Relation}},
			{Node: &pg_query.Node_RangeVar{RangeVar: &pg_query.RangeVar{Relname: t.Name, Alias: &pg_query.Alias{Aliasname: "excluded"}}}},
		}}
		for _, tn := range oc.TargetList {
			rt := tn.GetResTarget()
			if rt == nil || rt.Val == nil || len(rt.Indirection) > 0 {
				continue
			}
			if c := t.Column(rt.Name); c != nil && textType(c.Type) && r.floatValue(sc, rt.Val) {
				return exprText(rt.Val) + " stored in text column " + rt.Name
			}
		}
		what := ""
		walkNodes(&pg_query.Node{Node: &pg_query.Node_OnConflictClause{OnConflictClause: oc}}, func(m *pg_query.Node) {
			if what == "" {
				what = r.floatTextHere(sc, m.ProtoReflect())
			}
		})
		return what
	}
	return ""
}

// exprText is an expression's SQL, to name it in an error.
func exprText(n *pg_query.Node) string {
	out, err := pg_query.Deparse(wrapExpr(n))
	if err != nil {
		return "an expression"
	}
	return strings.TrimPrefix(out, "SELECT ")
}

// alwaysFloat are functions whose result is float8 whatever their
// arguments; floatOfInt those that are float8 unless an argument is
// numeric (sqrt(2) is float8, sqrt(2.0) numeric).
var (
	alwaysFloat = map[string]bool{"random": true, "pi": true, "degrees": true, "radians": true, "sin": true, "cos": true,
		"tan": true, "cot": true, "asin": true, "acos": true, "atan": true, "atan2": true, "cbrt": true, "date_part": true,
		"float8": true, "float4": true}
	floatOfInt = map[string]bool{"sqrt": true, "exp": true, "ln": true, "log": true, "log10": true, "power": true, "pow": true}
)

// floatValue is isFloat for floatText, which also knows the functions
// that answer a float: a value it cannot show to be no float, where it
// matters, would be printed otherwise by some engine.
func (r *rewriter) floatValue(sc *scope, n *pg_query.Node) bool {
	if n == nil {
		return false
	}
	if r.isFloat(sc, n) {
		return true
	}
	switch {
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		name := schema.FuncName(fc)
		if alwaysFloat[name] {
			return true
		}
		if floatOfInt[name] {
			for _, a := range fc.Args {
				if r.numericValue(sc, a) {
					return false
				}
			}
			return true
		}
		switch name {
		case "coalesce", "abs", "greatest", "least", "nullif", "round", "trunc", "ceil", "ceiling", "floor", "sign", "mod":
			for _, a := range fc.Args {
				if r.floatValue(sc, a) {
					return true
				}
			}
		}
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		return r.floatValue(sc, e.Lexpr) || r.floatValue(sc, e.Rexpr)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if r.floatValue(sc, a) {
				return true
			}
		}
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		for _, a := range ce.Args {
			if r.floatValue(sc, a.GetCaseWhen().Result) {
				return true
			}
		}
		return r.floatValue(sc, ce.Defresult)
	}
	return false
}

// numericValue reports whether n is known to be numeric: a numeric
// column, a cast to numeric or a constant with a decimal point.
func (r *rewriter) numericValue(sc *scope, n *pg_query.Node) bool {
	switch {
	case n.GetColumnRef() != nil:
		c := r.column(sc, n)
		return c != nil && c.Type == "numeric"
	case n.GetTypeCast() != nil:
		switch schema.TypeText(n.GetTypeCast().TypeName) {
		case "numeric", "decimal":
			return true
		}
	case n.GetAConst() != nil:
		return n.GetAConst().GetFval() != nil && !strings.ContainsAny(n.GetAConst().GetFval().Fval, "eE")
	}
	return false
}
