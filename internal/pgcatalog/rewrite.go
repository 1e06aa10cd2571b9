package pgcatalog

import (
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// The rewriter turns a catalog query, parsed by PostgreSQL's parser, into
// one SQLite runs over the engine's relations with the same meaning, and
// works out the PostgreSQL type of each result column. It changes only
// what SQLite spells or means differently (casts, regular expressions,
// arrays, catalog functions, NULL order); the executor is SQLite's. What
// it cannot write it refuses with 0A000, naming the construct.

// outCol is a result column: its name and PostgreSQL type name.
type outCol struct {
	name string
	typ  string
}

// scopeItem is a relation in a FROM list: its name in the query and
// columns.
type scopeItem struct {
	alias string
	rel   string // the catalog relation's key ("pg_class"), "" for a subquery
	cols  []column
	// virt, for a function in FROM that reads earlier FROM items
	// (unnest(i.indkey)), gives each column as an expression over the
	// engine's json_each: SQLite has no LATERAL subqueries, but its
	// table-valued functions may read the items before them.
	virt map[string]*pg_query.Node
}

type scope struct {
	items []scopeItem
}

type rewriter struct {
	consts   []any // values of the $n past the client's (string constants)
	nClient  int
	user     string
	database string
	settings map[string]string                              // the session's SET parameters
	lookup   func(q string, args ...any) (any, bool, error) // one value of a query on the engine
	scopes   []*scope
	ctes     []map[string][]column
	err      error
	// paramTypes are the types of the client's parameters ($n at n-1)
	// where the query tells them, as PostgreSQL infers them: the type
	// of a cast of the parameter, or of the column it is compared with.
	paramTypes []string
	// setToken, when not 0, is the token set_config() calls pass to
	// pgcat_set_config to reach the session (see setters).
	setToken int64
}

// noteParam records t as the type of n when n is one of the client's
// parameters whose type is not yet known.
func (r *rewriter) noteParam(n *pg_query.Node, t string) {
	p := n.GetParamRef()
	if p == nil || p.Number < 1 || int(p.Number) > r.nClient || typeByName[t] == nil {
		return
	}
	for len(r.paramTypes) < int(p.Number) {
		r.paramTypes = append(r.paramTypes, "")
	}
	if r.paramTypes[p.Number-1] == "" {
		r.paramTypes[p.Number-1] = t
	}
}

func (r *rewriter) fail(code, format string, args ...any) {
	if r.err == nil {
		r.err = pgerr.New(code, format, args...)
	}
}

func (r *rewriter) refuse(format string, args ...any) {
	r.fail(pgerr.FeatureNotSupported, "shepherd's catalog does not support "+format, args...)
}

// param binds v as a new parameter and returns its reference.
func (r *rewriter) param(v any) *pg_query.Node {
	r.consts = append(r.consts, v)
	return pg_query.MakeParamRefNode(int32(r.nClient+len(r.consts)), -1)
}

func call(name string, args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
}

func intConst(n int64) *pg_query.Node { return pg_query.MakeAConstIntNode(n, -1) }

func nullConst() *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}
}

func strs(list []*pg_query.Node) []string {
	var out []string
	for _, n := range list {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

// funcName is a function's name without pg_catalog.
func funcName(names []*pg_query.Node) string {
	p := strs(names)
	if len(p) == 2 && p[0] == "pg_catalog" {
		p = p[1:]
	}
	return strings.ToLower(strings.Join(p, "."))
}

// typeName is the internal name of a cast's type ("_oid" for oid[]).
func typeName(tn *pg_query.TypeName) string {
	p := strs(tn.Names)
	if len(p) == 2 && p[0] == "pg_catalog" {
		p = p[1:]
	}
	name := strings.ToLower(strings.Join(p, "."))
	// The parser writes an unquoted char as bpchar: a "char" left is
	// the quoted one, PostgreSQL's one-byte type (pg_dump's ' '::"char").
	if a, ok := typeAliases[name]; ok && name != "char" {
		name = a
	}
	if len(tn.ArrayBounds) > 0 {
		name = "_" + name
	}
	return name
}

var typeAliases = map[string]string{
	"integer": "int4", "int": "int4", "smallint": "int2", "bigint": "int8", "boolean": "bool",
	"real": "float4", "double precision": "float8", "float": "float8", "decimal": "numeric",
	"character varying": "varchar", "character": "bpchar", "char": "bpchar",
	"timestamp with time zone": "timestamptz", "timestamp without time zone": "timestamp",
}

// qualify returns a copy of n whose unqualified column references name
// their relation, so that a template's own relations cannot capture them.
func (r *rewriter) qualify(n *pg_query.Node) *pg_query.Node {
	if n == nil {
		return nil
	}
	n = proto.Clone(n).(*pg_query.Node)
	return mapNodes(n, func(x *pg_query.Node) (*pg_query.Node, bool) {
		if x.GetSubLink() != nil {
			return x, true // its own scopes
		}
		cr := x.GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
			return x, false
		}
		name := cr.Fields[0].GetString_().Sval
		for i := len(r.scopes) - 1; i >= 0; i-- {
			for _, it := range r.scopes[i].items {
				for _, c := range it.cols {
					if c.name == name {
						cr.Fields = []*pg_query.Node{pg_query.MakeStrNode(it.alias), cr.Fields[0]}
						return x, true
					}
				}
			}
		}
		return x, true
	})
}

// tmpl is exprTemplate with the arguments' column references qualified.
func (r *rewriter) tmpl(sql string, args []*pg_query.Node) *pg_query.Node {
	q := make([]*pg_query.Node, len(args))
	for i, a := range args {
		q[i] = r.qualify(a)
	}
	return exprTemplate(sql, q)
}

// lookupCol finds a column reference in the scopes, innermost first.
func (r *rewriter) lookupCol(fields []string) (column, bool) {
	if len(fields) == 0 {
		return column{}, false
	}
	name := fields[len(fields)-1]
	qual := ""
	if len(fields) >= 2 {
		qual = fields[len(fields)-2]
	}
	for i := len(r.scopes) - 1; i >= 0; i-- {
		for _, it := range r.scopes[i].items {
			if qual != "" && it.alias != qual {
				continue
			}
			for _, c := range it.cols {
				if c.name == name {
					return c, true
				}
			}
		}
	}
	return column{}, false
}

// typeOf is the PostgreSQL type of an expression of the original tree
// ("text" when it cannot tell: what an unknown literal resolves to).
func (r *rewriter) typeOf(n *pg_query.Node) string {
	switch {
	case n == nil:
	case n.GetColumnRef() != nil:
		f := strs(n.GetColumnRef().Fields)
		if c, ok := r.lookupCol(f); ok {
			return c.typ
		}
		if len(f) > 0 && f[len(f)-1] == "tableoid" {
			return "oid" // the system column (see tableOID)
		}
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil:
			return "int4"
		case c.GetFval() != nil:
			return "numeric"
		case c.GetBoolval() != nil:
			return "bool"
		}
		return "text"
	case n.GetTypeCast() != nil:
		return typeName(n.GetTypeCast().TypeName)
	case n.GetCollateClause() != nil:
		return r.typeOf(n.GetCollateClause().Arg)
	case n.GetFuncCall() != nil:
		return r.funcType(n.GetFuncCall())
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_OP {
			switch funcName(e.Name) {
			case "+", "-", "*", "/", "%":
				if e.Lexpr != nil {
					return r.typeOf(e.Lexpr)
				}
				return r.typeOf(e.Rexpr)
			case "||":
				return "text"
			}
		}
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return r.typeOf(e.Lexpr)
		}
		return "bool"
	case n.GetBoolExpr() != nil, n.GetNullTest() != nil, n.GetBooleanTest() != nil:
		return "bool"
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK, pg_query.SubLinkType_ARRAY_SUBLINK:
			cols := r.peek(sl.Subselect)
			if len(cols) == 0 {
				return "text"
			}
			if sl.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
				return arrayOf(cols[0].typ)
			}
			return cols[0].typ
		}
		return "bool"
	case n.GetCaseExpr() != nil:
		for _, w := range n.GetCaseExpr().Args {
			if t := r.typeOf(w.GetCaseWhen().Result); !isUnknownConst(w.GetCaseWhen().Result) {
				return t
			}
		}
		if d := n.GetCaseExpr().Defresult; d != nil && !isUnknownConst(d) {
			return r.typeOf(d)
		}
		return "text"
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if !isUnknownConst(a) {
				return r.typeOf(a)
			}
		}
	case n.GetMinMaxExpr() != nil:
		if a := n.GetMinMaxExpr().Args; len(a) > 0 {
			return r.typeOf(a[0])
		}
	case n.GetAArrayExpr() != nil:
		if e := n.GetAArrayExpr().Elements; len(e) > 0 {
			return arrayOf(r.typeOf(e[0]))
		}
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		if len(ind.Indirection) == 1 && ind.Indirection[0].GetString_() != nil {
			if ind.Indirection[0].GetString_().Sval == "n" {
				return "int4"
			}
			return r.typeOf(ind.Arg) // .x of _pg_expandarray
		}
		if t := r.typeOf(ind.Arg); t == "name" {
			return "char"
		} else {
			return elemOf(t)
		}
	case n.GetSqlvalueFunction() != nil:
		switch n.GetSqlvalueFunction().Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "date"
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
			return "timestamptz"
		}
		return "name"
	case n.GetParamRef() != nil:
		return "text"
	}
	return "text"
}

func isUnknownConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && (c.Isnull || c.GetSval() != nil)
}

// arrayOf is the array type of t (arrays of arrays are arrays).
func arrayOf(t string) string {
	if strings.HasPrefix(t, "_") {
		return t
	}
	return "_" + t
}

func elemOf(t string) string {
	switch t {
	case "int2vector":
		return "int2"
	case "oidvector":
		return "oid"
	}
	return strings.TrimPrefix(t, "_")
}

// funcTypes are the result types of the functions catalog queries call
// ("" : the first argument's type, "[]": an array of it).
var funcTypes = map[string]string{
	"format_type": "text", "pg_get_expr": "text", "pg_get_userbyid": "name", "pg_get_indexdef": "text",
	"pg_get_constraintdef": "text", "pg_encoding_to_char": "name", "array_to_string": "text",
	"count": "int8", "string_agg": "text", "bool_and": "bool", "bool_or": "bool", "every": "bool",
	"json_build_object": "json", "json_agg": "json", "jsonb_build_object": "jsonb", "obj_description": "text",
	"col_description": "text", "shobj_description": "text", "pg_table_is_visible": "bool", "pg_type_is_visible": "bool",
	"pg_function_is_visible": "bool", "pg_collation_is_visible": "bool",
	"has_table_privilege": "bool", "has_schema_privilege": "bool", "has_database_privilege": "bool",
	"has_column_privilege": "bool", "has_sequence_privilege": "bool", "has_function_privilege": "bool",
	"pg_has_role": "bool", "generate_subscripts": "int4", "current_schema": "name", "current_database": "name",
	"lower": "text", "upper": "text", "length": "int4", "pg_get_serial_sequence": "text", "quote_ident": "text", "quote_literal": "text", "quote_nullable": "text",
	"pg_get_viewdef": "text", "pg_relation_is_publishable": "bool", "array_length": "int4", "array_upper": "int4",
	"array_lower": "int4", "cardinality": "int4", "substring": "text", "replace": "text", "concat": "text",
	"min": "", "max": "", "coalesce": "", "unnest": "elem", "array_agg": "[]", "sum": "sumof",
	"current_schemas": "_name", "pg_get_triggerdef": "text", "pg_get_statisticsobjdef_columns": "text",
	"pg_partition_ancestors": "regclass", "pg_relation_size": "int8", "pg_total_relation_size": "int8",
	"pg_table_size": "int8", "pg_indexes_size": "int8", "pg_size_pretty": "text", "translate": "text",
	"row_number": "int8", "rank": "int8", "dense_rank": "int8", "current_setting": "text", "set_config": "text", "acldefault": "_aclitem", "array_remove": "", "to_regclass": "regclass", "to_regtype": "regtype",
	"to_regnamespace": "regnamespace", "to_regproc": "regproc", "to_regrole": "regrole", "information_schema._pg_expandarray": "elem",
}

func (r *rewriter) funcType(fc *pg_query.FuncCall) string {
	name := funcName(fc.Funcname)
	t, ok := funcTypes[name]
	if !ok {
		return "text"
	}
	var first string
	if len(fc.Args) > 0 {
		first = r.typeOf(fc.Args[0])
	}
	switch t {
	case "":
		return first
	case "[]":
		return arrayOf(first)
	case "elem":
		return elemOf(first)
	case "sumof":
		if first == "int2" || first == "int4" {
			return "int8"
		}
		return "numeric"
	}
	return t
}

// peek returns the result columns of a subquery without rewriting it.
func (r *rewriter) peek(n *pg_query.Node) []column {
	sel := n.GetSelectStmt()
	if sel == nil {
		return nil
	}
	save, nconsts := r.err, len(r.consts)
	cols := r.selectCols(proto.Clone(sel).(*pg_query.SelectStmt), false)
	r.err, r.consts = save, r.consts[:nconsts]
	return cols
}

// selectCols rewrites a SELECT (when write is true; otherwise only works
// out its columns on a copy) and returns its result columns.
func (r *rewriter) selectCols(s *pg_query.SelectStmt, write bool) []column {
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		// SQLite's compound SELECTs take no parenthesised members: a
		// member that is itself a set operation is read as a subquery.
		for _, m := range []**pg_query.SelectStmt{&s.Larg, &s.Rarg} {
			if (*m).Op != pg_query.SetOperation_SETOP_NONE && write {
				wrap := template("SELECT * FROM (SELECT 1) AS shepherd_u", nil).GetSelectStmt()
				wrap.FromClause[0].GetRangeSubselect().Subquery = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: *m}}
				*m = wrap
			}
		}
		l := r.selectCols(s.Larg, write)
		r.selectCols(s.Rarg, write)
		r.sortLimit(s, nil)
		return l
	}
	if s.WithClause != nil {
		ctes := map[string][]column{}
		r.ctes = append(r.ctes, ctes)
		defer func() { r.ctes = r.ctes[:len(r.ctes)-1] }()
		if s.WithClause.Recursive {
			// A recursive query reads itself: its columns are known by
			// their names (typed as integers, what the engine's own
			// recursive queries count).
			for _, c := range s.WithClause.Ctes {
				if cte := c.GetCommonTableExpr(); cte != nil {
					var cols []column
					for _, a := range strs(cte.Aliascolnames) {
						cols = append(cols, column{name: a, typ: "int8"})
					}
					ctes[cte.Ctename] = cols
				}
			}
		}
		for _, c := range s.WithClause.Ctes {
			cte := c.GetCommonTableExpr()
			if cte == nil || cte.Ctequery.GetSelectStmt() == nil {
				r.refuse("this WITH query")
				return nil
			}
			cols := r.selectCols(cte.Ctequery.GetSelectStmt(), write)
			for i, a := range strs(cte.Aliascolnames) {
				if i < len(cols) {
					cols[i].name = a
				}
			}
			ctes[cte.Ctename] = cols
		}
	}
	if len(s.ValuesLists) > 0 {
		var cols []column
		for i, row := range s.ValuesLists {
			items := row.GetList().GetItems()
			for j, it := range items {
				if i == 0 {
					cols = append(cols, column{name: "column" + strconv.Itoa(j+1), typ: r.typeOf(it)})
				}
				items[j] = r.expr(it)
			}
		}
		return cols
	}
	sc := &scope{}
	r.scopes = append(r.scopes, sc)
	defer func() { r.scopes = r.scopes[:len(r.scopes)-1] }()
	var quals []**pg_query.Node
	for i := range s.FromClause {
		s.FromClause[i] = r.fromItem(s.FromClause[i], sc, &quals)
	}
	var cols []column
	var targets []*pg_query.Node
	at := map[*pg_query.Node]int{} // where each target that is not a star is in cols
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			qual := strs(cr.Fields)
			for _, it := range sc.items {
				if len(qual) > 0 && it.alias != qual[len(qual)-1] {
					continue
				}
				cols = append(cols, it.cols...)
			}
			targets = append(targets, t)
			continue
		}
		name := rt.Name
		if name == "" {
			name, _ = dialect.OutputName(rt.Val, nil)
		}
		if name == "" {
			name = "?column?"
		}
		at[t] = len(cols)
		cols = append(cols, column{name: name, typ: r.typeOf(rt.Val)})
		targets = append(targets, t)
	}
	if !write {
		return cols
	}
	r.expandStars(s, sc)
	r.setReturning(s, sc)
	for _, q := range quals {
		*q = r.expr(*q)
	}
	for _, t := range targets {
		rt := t.GetResTarget()
		k, ok := at[t]
		if !ok {
			continue // a star
		}
		rt.Val = r.expr(rt.Val)
		if rt.Name == "" {
			// SQLite names a column by its text: give PostgreSQL's name,
			// which outer queries refer to.
			rt.Name = cols[k].name
		}
	}
	s.WhereClause = r.expr(s.WhereClause)
	for i, g := range s.GroupClause {
		s.GroupClause[i] = r.expr(g)
	}
	s.HavingClause = r.expr(s.HavingClause)
	r.sortLimit(s, sc)
	return cols
}

func (r *rewriter) sortLimit(s *pg_query.SelectStmt, sc *scope) {
	for _, n := range s.SortClause {
		sb := n.GetSortBy()
		if sb == nil {
			continue
		}
		sb.Node = r.expr(sb.Node)
		if sb.SortbyNulls == pg_query.SortByNulls_SORTBY_NULLS_DEFAULT {
			// PostgreSQL sorts NULL as larger than any value; SQLite as
			// smaller.
			if sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC {
				sb.SortbyNulls = pg_query.SortByNulls_SORTBY_NULLS_FIRST
			} else {
				sb.SortbyNulls = pg_query.SortByNulls_SORTBY_NULLS_LAST
			}
		}
		if sb.SortbyDir == pg_query.SortByDir_SORTBY_USING {
			r.refuse("ORDER BY ... USING")
		}
	}
	s.LimitCount = r.expr(s.LimitCount)
	s.LimitOffset = r.expr(s.LimitOffset)
	if len(s.LockingClause) > 0 {
		r.refuse("FOR UPDATE/SHARE")
	}
}

// expandStars writes out the * of a SELECT whose FROM has virtual
// columns (see scopeItem.virt), which SQLite's * would not show.
func (r *rewriter) expandStars(s *pg_query.SelectStmt, sc *scope) {
	virtual := false
	for _, it := range sc.items {
		virtual = virtual || it.virt != nil
	}
	if !virtual {
		return
	}
	var out []*pg_query.Node
	for _, t := range s.TargetList {
		cr := t.GetResTarget().Val.GetColumnRef()
		if cr == nil || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
			out = append(out, t)
			continue
		}
		qual := strs(cr.Fields)
		for _, it := range sc.items {
			if len(qual) > 0 && it.alias != qual[len(qual)-1] {
				continue
			}
			for _, c := range it.cols {
				val := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(it.alias), pg_query.MakeStrNode(c.name)}, -1)
				if v, ok := it.virt[c.name]; ok {
					val = proto.Clone(v).(*pg_query.Node)
				}
				out = append(out, pg_query.MakeResTargetNodeWithNameAndVal(c.name, val, -1))
			}
		}
	}
	s.TargetList = out
}

// setReturning moves set-returning functions of the SELECT list (unnest
// and generate_subscripts of the same arrays, which PostgreSQL runs in
// step) into the FROM list as one json_each over the first array.
func (r *rewriter) setReturning(s *pg_query.SelectStmt, sc *scope) {
	var first *pg_query.Node
	alias := "shepherd_srf"
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		fc := rt.Val.GetFuncCall()
		field := ""
		if ind := rt.Val.GetAIndirection(); ind != nil && len(ind.Indirection) == 1 && ind.Indirection[0].GetString_() != nil {
			// (information_schema._pg_expandarray(a)).n or .x
			fc, field = ind.Arg.GetFuncCall(), ind.Indirection[0].GetString_().Sval
		}
		if fc == nil {
			continue
		}
		name := funcName(fc.Funcname)
		expand := name == "information_schema._pg_expandarray"
		if expand {
			// Its rows are (x, n): the element and its position. The
			// composite itself stands for x (all pgjdbc reads of it).
			name = "unnest"
			if field == "n" {
				name = "generate_subscripts"
			}
			if rt.Name == "" {
				rt.Name = map[string]string{"": "_pg_expandarray", "x": "x", "n": "n"}[field]
			}
		} else if field != "" {
			continue
		}
		switch name {
		case "unnest", "generate_subscripts":
			if len(fc.Args) == 0 {
				continue
			}
			arg := fc.Args[0]
			isFirst := first == nil
			if first == nil {
				first = arg
			}
			at := call("pgcat_json", r.expr(proto.Clone(arg).(*pg_query.Node)), r.param(r.typeOf(arg)))
			if isFirst {
				from := template("SELECT * FROM json_each($1) AS "+alias, []*pg_query.Node{at})
				s.FromClause = append(s.FromClause, from.GetSelectStmt().FromClause[0])
			}
			key := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode("key")}, -1)
			base := int64(1)
			if t := r.typeOf(arg); (t == "int2vector" || t == "oidvector") && !expand {
				base = 0 // generate_subscripts follows the vector's subscripts; _pg_expandarray counts from 1
			}
			if name == "generate_subscripts" {
				rt.Val = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, key, intConst(base), -1)
			} else if isFirst {
				rt.Val = pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode("value")}, -1)
			} else {
				rt.Val = call("pgcat_array_at", at, key, intConst(0))
			}
			if rt.Name == "" {
				rt.Name = name
			}
		}
	}
}

// fromItem registers a FROM item in sc and returns it rewritten; join
// conditions are collected in quals, to be rewritten once every item is
// in scope.
func (r *rewriter) fromItem(n *pg_query.Node, sc *scope, quals *[]**pg_query.Node) *pg_query.Node {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		var cols []column
		key := rv.Relname
		if relByName[key] == nil && (rv.Schemaname == "" || rv.Schemaname == "public") {
			if seq := r.sequenceRel(rv.Relname, alias); seq != nil {
				sc.items = append(sc.items, scopeItem{alias: alias, cols: []column{{"last_value", "int8"}, {"log_cnt", "int8"}, {"is_called", "bool"}}})
				return seq
			}
		}
		switch rv.Schemaname {
		case "", "pg_catalog":
		case "information_schema":
			key = "information_schema." + rv.Relname
		default:
			r.refuse("relations of schema %s in a catalog query", rv.Schemaname)
			return n
		}
		found := false
		if rv.Schemaname == "" {
			for i := len(r.ctes) - 1; i >= 0 && !found; i-- {
				if c, ok := r.ctes[i][rv.Relname]; ok {
					cols, found, key = c, true, ""
				}
			}
		}
		if sc, ok := sideColumns[rv.Relname]; ok && !found && rv.Schemaname == "" {
			cols, found = sc, true
		}
		if !found {
			rel := relByName[key]
			if rel == nil {
				r.refuse("relation %s in a catalog query (shepherd answers catalog queries from its own catalog, which has no %s)", rv.Relname, rv.Relname)
				return n
			}
			cols = append([]column(nil), rel.cols...)
		}
		if rv.Alias != nil {
			for i, a := range strs(rv.Alias.Colnames) {
				if i < len(cols) {
					cols[i].name = a
				}
			}
		}
		sc.items = append(sc.items, scopeItem{alias: alias, rel: key, cols: cols})
		return n
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		sel := rs.Subquery.GetSelectStmt()
		if sel == nil {
			r.refuse("this subquery in FROM")
			return n
		}
		cols := r.selectCols(sel, true)
		if rs.Alias != nil {
			for i, a := range strs(rs.Alias.Colnames) {
				if i < len(cols) {
					cols[i].name = a
				}
			}
			sc.items = append(sc.items, scopeItem{alias: rs.Alias.Aliasname, cols: cols})
		}
		return n
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		j.Larg = r.fromItem(j.Larg, sc, quals)
		j.Rarg = r.fromItem(j.Rarg, sc, quals)
		if j.Quals != nil {
			*quals = append(*quals, &j.Quals)
		}
		return n
	case n.GetRangeFunction() != nil:
		return r.rangeFunction(n.GetRangeFunction(), sc)
	}
	r.refuse("%s in FROM of a catalog query", strings.TrimPrefix(fmt.Sprintf("%T", n.GetNode()), "*pg_query.Node_"))
	return n
}

// sequenceRel writes a sequence read as a relation (see ReadsSequence)
// as a subquery of its one row: last_value and is_called as PostgreSQL
// keeps them (shepherd_seqlast; a SERIAL's: the last value handed out,
// or the start before the first); log_cnt is 0 (shepherd logs no
// sequence WAL). nil when name is no sequence.
func (r *rewriter) sequenceRel(name, alias string) *pg_query.Node {
	if r.lookup == nil {
		return nil
	}
	if _, ok, err := r.lookup("SELECT 1 FROM pg_catalog.pg_class WHERE relname = ? AND relkind = 'S' AND relnamespace = 2200", name); err != nil || !ok {
		return nil
	}
	sub := template(`SELECT coalesce(shepherd_l.rel_last, shepherd_s.seqstart) AS last_value, 0 AS log_cnt,
		coalesce(shepherd_l.called, 0) AS is_called
		FROM pg_catalog.pg_sequence shepherd_s JOIN pg_catalog.pg_class shepherd_c ON shepherd_c.oid = shepherd_s.seqrelid
		LEFT JOIN shepherd_seqlast shepherd_l ON shepherd_l.name = shepherd_c.relname
		WHERE shepherd_c.relname = $1 AND shepherd_c.relnamespace = 2200`, []*pg_query.Node{r.param(name)})
	return &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: sub, Alias: &pg_query.Alias{Aliasname: alias},
	}}}
}

// rangeFunction writes a set-returning function in FROM as a subquery.
func (r *rewriter) rangeFunction(rf *pg_query.RangeFunction, sc *scope) *pg_query.Node {
	if len(rf.Functions) != 1 {
		r.refuse("ROWS FROM")
		return nil
	}
	items := rf.Functions[0].GetList().GetItems()
	fc := items[0].GetFuncCall()
	if fc == nil {
		r.refuse("this function in FROM")
		return nil
	}
	name := funcName(fc.Funcname)
	var tmpl string
	var cols []column
	switch name {
	case "generate_series":
		if len(fc.Args) != 2 {
			r.refuse("generate_series with a step")
			return nil
		}
		tmpl = "SELECT v AS a, v - $1 + 1 AS b FROM (WITH RECURSIVE g(v) AS (SELECT $1 UNION ALL SELECT v + 1 FROM g WHERE v < $2) SELECT v FROM g) AS s"
		cols = []column{{name: name, typ: "int4"}, {name: "ordinality", typ: "int8"}}
	case "unnest":
		if len(fc.Args) == 0 {
			r.refuse("unnest()")
			return nil
		}
		return r.unnestFrom(rf, fc, sc)
	case "generate_subscripts":
		return r.subscriptsFrom(rf, fc, sc)
	case "pg_options_to_table":
		return r.optionsFrom(rf, fc, sc)
	case "pg_partition_ancestors":
		tmpl = "SELECT $1 AS a, 1 AS b"
		cols = []column{{name: "relid", typ: "regclass"}, {name: "ordinality", typ: "int8"}}
	case "json_each":
		// The engine's own (from rewritten forms): left as it is.
		cols = []column{{name: "key", typ: "int8"}, {name: "value", typ: "text"}}
		alias := name
		if rf.Alias != nil {
			alias = rf.Alias.Aliasname
		}
		for i, a := range fc.Args {
			fc.Args[i] = r.expr(a)
		}
		sc.items = append(sc.items, scopeItem{alias: alias, cols: cols})
		return &pg_query.Node{Node: &pg_query.Node_RangeFunction{RangeFunction: rf}}
	case "pg_get_keywords":
		tmpl = "SELECT word AS a, catcode AS b, barelabel AS c, catdesc AS d, baredesc AS e FROM shepherd_keywords"
		cols = []column{{name: "word", typ: "text"}, {name: "catcode", typ: "char"}, {name: "barelabel", typ: "bool"},
			{name: "catdesc", typ: "text"}, {name: "baredesc", typ: "text"}}
	default:
		r.refuse("function %s in FROM of a catalog query", name)
		return nil
	}
	sub := template(tmpl, fc.Args).GetSelectStmt()
	if !rf.Ordinality && len(cols) == 2 && name != "pg_get_keywords" {
		sub.TargetList = sub.TargetList[:1]
		cols = cols[:1]
	}
	alias := name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		for i, a := range strs(rf.Alias.Colnames) {
			if i < len(cols) {
				cols[i].name = a
			}
		}
		if len(rf.Alias.Colnames) == 0 && len(cols) == 1 && name != "pg_partition_ancestors" {
			cols[0].name = alias // a scalar function's column takes the alias
		}
	}
	for i, t := range sub.TargetList {
		t.GetResTarget().Name = cols[i].name
	}
	r.selectCols(sub, true)
	sc.items = append(sc.items, scopeItem{alias: alias, cols: cols})
	return &pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Lateral:  rf.Lateral,
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sub}},
		Alias:    &pg_query.Alias{Aliasname: alias},
	}}}
}

// sideColumns are the columns of the engine's own tables (see
// sideTables), which the rewritten forms of catalog functions read.
var sideColumns = map[string][]column{
	"shepherd_indexdef": {{"oid", "oid"}, {"def", "text"}, {"cols", "text"}},
	"shepherd_condef":   {{"oid", "oid"}, {"def", "text"}, {"pretty", "text"}},
	"shepherd_serial":   {{"tab", "text"}, {"col", "text"}, {"seq", "text"}},
	"shepherd_viewdef":  {{"oid", "oid"}, {"plain", "text"}, {"pretty", "text"}, {"qualified", "text"}, {"pretty_qualified", "text"}},
	"shepherd_seqlast":  {{"name", "text"}, {"last", "int8"}, {"rel_last", "int8"}, {"called", "bool"}},
	"shepherd_keywords": {{"word", "text"}, {"catcode", "char"}, {"barelabel", "bool"}, {"catdesc", "text"}, {"baredesc", "text"}},
}

// unnestFrom writes unnest(a, b, ...) [WITH ORDINALITY] in FROM as the
// engine's json_each over a, its columns as expressions (see
// scopeItem.virt): b's elements are taken at a's positions.
func (r *rewriter) unnestFrom(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, sc *scope) *pg_query.Node {
	alias := "unnest"
	var names []string
	if rf.Alias != nil {
		alias, names = rf.Alias.Aliasname, strs(rf.Alias.Colnames)
	}
	j := "shepherd_j_" + alias
	ref := func(col string) *pg_query.Node {
		return pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(j), pg_query.MakeStrNode(col)}, -1)
	}
	it := scopeItem{alias: alias, virt: map[string]*pg_query.Node{}}
	var from *pg_query.Node
	for i, a := range fc.Args {
		t := r.typeOf(a)
		name := "unnest"
		switch {
		case i < len(names):
			name = names[i]
		case len(fc.Args) == 1 && rf.Alias != nil:
			name = alias
		}
		arr := call("pgcat_json", r.expr(proto.Clone(a).(*pg_query.Node)), r.param(t))
		if i == 0 {
			from = template("SELECT * FROM json_each($1) AS "+j, []*pg_query.Node{arr}).GetSelectStmt().FromClause[0]
			it.virt[name] = ref("value")
		} else {
			it.virt[name] = call("pgcat_array_at", arr, ref("key"), intConst(0))
		}
		it.cols = append(it.cols, column{name: name, typ: elemOf(t)})
	}
	if rf.Ordinality {
		name := "ordinality"
		if len(fc.Args) < len(names) {
			name = names[len(fc.Args)]
		}
		it.virt[name] = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, ref("key"), intConst(1), -1)
		it.cols = append(it.cols, column{name: name, typ: "int8"})
	}
	sc.items = append(sc.items, it)
	return from
}

// optionsFrom writes pg_options_to_table(a) in FROM (pg_dump reads
// fdwoptions, srvoptions, attfdwoptions so) as the engine's json_each
// over the array of "name=value" strings, like unnest (see unnestFrom):
// option_name is the text before the first '=', option_value the rest
// (NULL without one), as PostgreSQL splits them.
func (r *rewriter) optionsFrom(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, sc *scope) *pg_query.Node {
	if len(fc.Args) != 1 || rf.Ordinality {
		r.refuse("pg_options_to_table with %d arguments or WITH ORDINALITY in a catalog query", len(fc.Args))
		return nil
	}
	alias := "pg_options_to_table"
	var names []string
	if rf.Alias != nil {
		alias, names = rf.Alias.Aliasname, strs(rf.Alias.Colnames)
	}
	j := "shepherd_j_" + alias
	value := func() *pg_query.Node {
		return pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(j), pg_query.MakeStrNode("value")}, -1)
	}
	arr := call("pgcat_json", r.expr(proto.Clone(fc.Args[0]).(*pg_query.Node)), r.param(r.typeOf(fc.Args[0])))
	from := template("SELECT * FROM json_each($1) AS "+j, []*pg_query.Node{arr}).GetSelectStmt().FromClause[0]
	cols := []string{"option_name", "option_value"}
	copy(cols, names)
	it := scopeItem{alias: alias, virt: map[string]*pg_query.Node{
		cols[0]: exprTemplate("CASE WHEN instr($1, '=') > 0 THEN substr($1, 1, instr($1, '=') - 1) ELSE $1 END", []*pg_query.Node{value()}),
		cols[1]: exprTemplate("CASE WHEN instr($1, '=') > 0 THEN substr($1, instr($1, '=') + 1) END", []*pg_query.Node{value()}),
	}, cols: []column{{name: cols[0], typ: "text"}, {name: cols[1], typ: "text"}}}
	sc.items = append(sc.items, it)
	return from
}

// subscriptsFrom writes generate_subscripts(a, 1) [WITH ORDINALITY] in
// FROM (peewee reads an index's columns so, over pg_index.indkey) as the
// engine's json_each over a, like unnest (see unnestFrom): its column is
// the element's position plus a's lower bound (0 for int2vector and
// oidvector, else 1). The engine's arrays have one dimension: another
// dimension, or reverse order, is refused.
func (r *rewriter) subscriptsFrom(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, sc *scope) *pg_query.Node {
	if len(fc.Args) != 2 {
		r.refuse("generate_subscripts with %d arguments in FROM of a catalog query", len(fc.Args))
		return nil
	}
	if c := fc.Args[1].GetAConst(); c == nil || c.GetIval() == nil || c.GetIval().Ival != 1 {
		r.refuse("generate_subscripts of a dimension other than 1 in a catalog query")
		return nil
	}
	alias := "generate_subscripts"
	var names []string
	if rf.Alias != nil {
		alias, names = rf.Alias.Aliasname, strs(rf.Alias.Colnames)
	}
	j := "shepherd_j_" + alias
	key := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(j), pg_query.MakeStrNode("key")}, -1)
	t := r.typeOf(fc.Args[0])
	base := int64(1)
	if t == "int2vector" || t == "oidvector" {
		base = 0
	}
	arr := call("pgcat_json", r.expr(proto.Clone(fc.Args[0]).(*pg_query.Node)), r.param(t))
	from := template("SELECT * FROM json_each($1) AS "+j, []*pg_query.Node{arr}).GetSelectStmt().FromClause[0]
	plus := func(n int64) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, proto.Clone(key).(*pg_query.Node), intConst(n), -1)
	}
	name := "generate_subscripts"
	switch {
	case len(names) > 0:
		name = names[0]
	case rf.Alias != nil:
		name = alias // a scalar function's column takes the alias
	}
	it := scopeItem{alias: alias, virt: map[string]*pg_query.Node{name: plus(base)}, cols: []column{{name: name, typ: "int4"}}}
	if rf.Ordinality {
		ord := "ordinality"
		if len(names) > 1 {
			ord = names[1]
		}
		it.virt[ord] = plus(1)
		it.cols = append(it.cols, column{name: ord, typ: "int8"})
	}
	sc.items = append(sc.items, it)
	return from
}

// virtual returns the expression a column reference to a virtual column
// (see scopeItem.virt) stands for, or nil.
func (r *rewriter) virtual(fields []string) *pg_query.Node {
	if len(fields) == 0 || len(fields) > 2 {
		return nil
	}
	name, qual := fields[len(fields)-1], ""
	if len(fields) == 2 {
		qual = fields[0]
	}
	for i := len(r.scopes) - 1; i >= 0; i-- {
		for _, it := range r.scopes[i].items {
			if qual != "" && it.alias != qual {
				continue
			}
			for _, c := range it.cols {
				if c.name != name {
					continue
				}
				if v, ok := it.virt[name]; ok {
					return proto.Clone(v).(*pg_query.Node)
				}
				return nil
			}
		}
	}
	return nil
}

// template parses a statement or expression written in PostgreSQL's SQL
// and puts args in place of its $n.
func template(sql string, args []*pg_query.Node) *pg_query.Node {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		panic("pgcatalog: bad template " + sql + ": " + err.Error())
	}
	n := tree.Stmts[0].Stmt
	return substitute(n, args)
}

// exprTemplate is template for an expression.
func exprTemplate(sql string, args []*pg_query.Node) *pg_query.Node {
	n := template("SELECT "+sql, args)
	return n.GetSelectStmt().TargetList[0].GetResTarget().Val
}

// substitute replaces the $n of n with copies of args[n-1] (NULL when
// missing).
func substitute(n *pg_query.Node, args []*pg_query.Node) *pg_query.Node {
	return mapNodes(n, func(x *pg_query.Node) (*pg_query.Node, bool) {
		if p := x.GetParamRef(); p != nil {
			if int(p.Number) <= len(args) && args[p.Number-1] != nil {
				return proto.Clone(args[p.Number-1]).(*pg_query.Node), true
			}
			return nullConst(), true
		}
		return x, false
	})
}
