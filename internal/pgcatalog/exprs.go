package pgcatalog

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// mapNodes walks n depth first: f returns a node's replacement and
// whether it is done (its children are then left alone).
func mapNodes(n *pg_query.Node, f func(*pg_query.Node) (*pg_query.Node, bool)) *pg_query.Node {
	if n == nil {
		return nil
	}
	if m, done := f(n); done {
		return m
	}
	mapChildren(n.ProtoReflect(), f)
	return n
}

func mapChildren(m protoreflect.Message, f func(*pg_query.Node) (*pg_query.Node, bool)) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if node, ok := l.Get(i).Message().Interface().(*pg_query.Node); ok {
					l.Set(i, protoreflect.ValueOfMessage(mapNodes(node, f).ProtoReflect()))
				} else {
					mapChildren(l.Get(i).Message(), f)
				}
			}
		case fd.IsMap():
		default:
			if node, ok := v.Message().Interface().(*pg_query.Node); ok {
				if r := mapNodes(node, f); r != node {
					m.Set(fd, protoreflect.ValueOfMessage(r.ProtoReflect()))
				}
			} else {
				mapChildren(v.Message(), f)
			}
		}
		return true
	})
}

// expr rewrites an expression for SQLite.
func (r *rewriter) expr(n *pg_query.Node) *pg_query.Node {
	if n == nil || r.err != nil {
		return n
	}
	return mapNodes(n, r.node)
}

func (r *rewriter) node(n *pg_query.Node) (*pg_query.Node, bool) {
	switch {
	case n.GetColumnRef() != nil:
		f := strs(n.GetColumnRef().Fields)
		if v := r.virtual(f); v != nil {
			return v, true
		}
		if len(f) > 0 && f[len(f)-1] == "tableoid" {
			if _, ok := r.lookupCol(f); !ok {
				return r.tableOID(f), true
			}
		}
		return n, true
	case n.GetAConst() != nil:
		if s := n.GetAConst().GetSval(); s != nil {
			return r.param(s.Sval), true
		}
		return n, true
	case n.GetTypeCast() != nil:
		return r.cast(n.GetTypeCast()), true
	case n.GetFuncCall() != nil:
		return r.fn(n, n.GetFuncCall()), true
	case n.GetAExpr() != nil:
		return r.aexpr(n, n.GetAExpr()), true
	case n.GetCollateClause() != nil:
		return r.expr(n.GetCollateClause().Arg), true
	case n.GetSubLink() != nil:
		return r.subLink(n, n.GetSubLink()), true
	case n.GetAArrayExpr() != nil:
		var elems []*pg_query.Node
		for _, e := range n.GetAArrayExpr().Elements {
			elems = append(elems, r.expr(e))
		}
		return call("json_array", elems...), true
	case n.GetAIndirection() != nil:
		ind := n.GetAIndirection()
		t := r.typeOf(ind.Arg)
		if len(ind.Indirection) == 1 && ind.Indirection[0].GetString_() != nil && ind.Indirection[0].GetString_().Sval == "x" {
			// (keys).x of information_schema._pg_expandarray: the
			// engine keeps the element itself (see setReturning).
			return r.expr(ind.Arg), true
		}
		if len(ind.Indirection) != 1 || ind.Indirection[0].GetAIndices() == nil || ind.Indirection[0].GetAIndices().IsSlice {
			r.refuse("this subscript or field selection")
			return n, true
		}
		idx := ind.Indirection[0].GetAIndices().Uidx
		if t == "name" {
			// A name is a fixed char[64]: typname[0] is its first
			// character (pg_dump's isarray test, typname[0] = '_').
			return r.tmpl(`CASE WHEN $2 BETWEEN 0 AND 63 THEN substr($1, $2 + 1, 1) END`, []*pg_query.Node{r.expr(ind.Arg), r.expr(idx)}), true
		}
		base := int64(1)
		if t == "int2vector" || t == "oidvector" {
			base = 0
		}
		return call("pgcat_array_at", call("pgcat_json", r.expr(ind.Arg), r.param(t)), r.expr(idx), intConst(base)), true
	case n.GetSqlvalueFunction() != nil:
		switch n.GetSqlvalueFunction().Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER,
			pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
			return r.param(r.user), true
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return r.param("public"), true
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return r.param(r.database), true
		}
		r.refuse("this SQL value function in a catalog query")
		return n, true
	case n.GetCaseExpr() != nil && n.GetCaseExpr().Arg != nil && r.typeOf(n.GetCaseExpr().Arg) == "bool":
		// CASE b WHEN 't' THEN ...: the WHEN values are booleans.
		for _, w := range n.GetCaseExpr().Args {
			if cw := w.GetCaseWhen(); cw != nil {
				cw.Expr = r.boolConst(cw.Expr)
			}
		}
		return n, false
	case n.GetRowExpr() != nil:
		r.refuse("ROW(...) in a catalog query")
		return n, true
	}
	return n, false
}

// tableOID is the system column tableoid of the relation a column
// reference names: the catalog relation's OID.
func (r *rewriter) tableOID(fields []string) *pg_query.Node {
	qual := ""
	if len(fields) >= 2 {
		qual = fields[len(fields)-2]
	}
	for i := len(r.scopes) - 1; i >= 0; i-- {
		for _, it := range r.scopes[i].items {
			if qual != "" && it.alias != qual || it.rel == "" {
				continue
			}
			if oid, ok := catalogRelOID[it.rel]; ok {
				return intConst(oid)
			}
		}
	}
	r.refuse("tableoid here")
	return nullConst()
}

func (r *rewriter) subLink(n *pg_query.Node, sl *pg_query.SubLink) *pg_query.Node {
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		r.refuse("this subquery")
		return n
	}
	if sl.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK {
		cols := r.peek(sl.Subselect)
		et := "text"
		if len(cols) > 0 {
			et = cols[0].typ
		}
		r.selectCols(sel, true)
		inner := sel
		for inner.Op != pg_query.SetOperation_SETOP_NONE {
			inner = inner.Larg
		}
		if len(inner.TargetList) != 1 {
			r.refuse("ARRAY(subquery) of more than one column")
			return n
		}
		inner.TargetList[0].GetResTarget().Name = "shepherd_v"
		out := exprTemplate("(SELECT coalesce(pgcat_json_agg(shepherd_v, $1), '[]') FROM (SELECT 1) AS shepherd_a)", []*pg_query.Node{r.param(et)})
		from := out.GetSubLink().Subselect.GetSelectStmt()
		from.FromClause[0].GetRangeSubselect().Subquery = sl.Subselect
		return out
	}
	if sl.Testexpr != nil {
		sl.Testexpr = r.expr(sl.Testexpr)
	}
	if sl.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && len(sl.OperName) > 0 && funcName(sl.OperName) != "=" {
		r.refuse("%s ANY (subquery)", funcName(sl.OperName))
	}
	if sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK {
		r.refuse("ALL (subquery)")
	}
	r.selectCols(sel, true)
	return n
}

// boolConst reads a string constant as a boolean (1 or 0 in the engine);
// anything else is returned as it is.
func (r *rewriter) boolConst(n *pg_query.Node) *pg_query.Node {
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil {
		return n
	}
	switch strings.ToLower(strings.TrimSpace(c.GetSval().Sval)) {
	case "t", "true", "y", "yes", "on", "1":
		return intConst(1)
	case "f", "false", "n", "no", "off", "0":
		return intConst(0)
	}
	r.fail("22P02", "invalid input syntax for type boolean: %q", c.GetSval().Sval)
	return n
}

// regTypes maps the reg* types to the catalog relation, name column and
// error of the objects they name.
var regTypes = map[string]struct{ rel, col, code, what string }{
	"regclass":     {"pg_class", "relname", pgerr.UndefinedTable, "relation"},
	"regtype":      {"pg_type", "typname", "42704", "type"},
	"regnamespace": {"pg_namespace", "nspname", "3F000", "schema"},
	"regproc":      {"pg_proc", "proname", "42883", "function"},
	"regprocedure": {"pg_proc", "proname", "42883", "function"},
	"regrole":      {"pg_authid", "rolname", "42704", "role"},
}

func (r *rewriter) cast(tc *pg_query.TypeCast) *pg_query.Node {
	t := typeName(tc.TypeName)
	a := tc.Arg
	r.noteParam(a, t)
	sval := ""
	isStr := false
	if c := a.GetAConst(); c != nil && c.GetSval() != nil {
		sval, isStr = c.GetSval().Sval, true
	}
	if c := a.GetAConst(); c != nil && c.Isnull {
		return nullConst()
	}
	if _, ok := regTypes[t]; ok {
		switch {
		case isStr:
			oid, err := r.resolve(t, sval)
			if err != nil {
				r.err = err
				return a
			}
			return intConst(oid)
		case a.GetParamRef() != nil || kindOf(r.typeOf(a)) == kText:
			return r.regLookup(t, a)
		}
		return call("pgcat_int", r.expr(a))
	}
	switch t {
	case "oid", "int2", "int4", "int8", "xid":
		if isStr {
			n, err := strconv.ParseInt(strings.TrimSpace(sval), 10, 64)
			if err != nil {
				r.fail("22P02", "invalid input syntax for type %s: %q", t, sval)
				return a
			}
			return intConst(n)
		}
		return call("pgcat_int", r.expr(a))
	case "text", "varchar", "name", "bpchar", "char":
		at := r.typeOf(a)
		if rt, ok := regTypes[at]; ok {
			// A reg* value's text is its object's name, "-" for 0
			// and the number for an OID naming nothing.
			name := "(SELECT shepherd_o." + rt.col + " FROM pg_catalog." + rt.rel + " shepherd_o WHERE shepherd_o.oid = $1)"
			if at == "regtype" {
				name = "(SELECT pgcat_format_type(shepherd_o.oid, NULL) FROM pg_catalog.pg_type shepherd_o WHERE shepherd_o.oid = $1)"
			}
			return r.expr(r.tmpl("COALESCE("+name+", CASE WHEN $1 = 0 THEN '-' ELSE pgcat_text($1) END)", []*pg_query.Node{a}))
		}
		if at == "bool" {
			return r.expr(r.tmpl("CASE WHEN $1 THEN 'true' WHEN NOT $1 THEN 'false' END", []*pg_query.Node{a}))
		}
		if isStr {
			return r.param(sval)
		}
		return call("pgcat_text", r.expr(a))
	case "bool":
		if isStr {
			switch strings.ToLower(strings.TrimSpace(sval)) {
			case "t", "true", "y", "yes", "on", "1":
				return intConst(1)
			case "f", "false", "n", "no", "off", "0":
				return intConst(0)
			}
			r.fail("22P02", "invalid input syntax for type boolean: %q", sval)
			return a
		}
		return r.expr(a)
	case "float4", "float8", "numeric":
		return call("pgcat_float", r.expr(a))
	}
	if strings.HasPrefix(t, "_") || t == "int2vector" || t == "oidvector" {
		if isStr {
			return r.param(arrayJSON(t, sval))
		}
		return r.expr(a)
	}
	return r.expr(a)
}

// regLookup looks a name up when the query runs (a parameter, a column,
// to_regclass and the like): qualified or not, quoted or not (the input
// function's rules, which pgcat_regpart applies to the text); NULL when
// there is none. The text's parts are computed by a function of the text
// alone, never by a subquery inside the scan's predicate: SQLite would run
// such a subquery again for every catalog row (a cast of a column of 10
// rows took 2 s that way, TypeORM's column list minutes).
func (r *rewriter) regLookup(t string, a *pg_query.Node) *pg_query.Node {
	rt := regTypes[t]
	name := "pgcat_regpart($1, 1)"
	if t == "regtype" {
		name = "pgcat_regpart($1, 2)"
	}
	q := "(SELECT shepherd_o.oid FROM pg_catalog." + rt.rel + " shepherd_o WHERE pgcat_text(shepherd_o.oid) = $1 OR (shepherd_o." + rt.col + " = " + name
	if ns := map[string]string{"pg_class": "relnamespace", "pg_type": "typnamespace", "pg_proc": "pronamespace"}[rt.rel]; ns != "" {
		q += " AND (pgcat_regpart($1, 0) = '' OR (SELECT shepherd_n.nspname FROM pg_catalog.pg_namespace shepherd_n WHERE shepherd_n.oid = shepherd_o." + ns + ") = pgcat_regpart($1, 0))"
	}
	q += ")"
	if t == "regtype" {
		// The SQL names of types (integer, character varying).
		q += " OR pgcat_format_type(shepherd_o.oid, NULL) = $1"
	}
	q += " ORDER BY shepherd_o.oid LIMIT 1)"
	if t == "regtype" {
		// An array's name, int4[] or integer[]: its element type's typarray.
		q = "COALESCE(" + q + ", (SELECT shepherd_e.typarray FROM pg_catalog.pg_type shepherd_e WHERE shepherd_e.typname = pgcat_regpart($1, 3) ORDER BY shepherd_e.oid LIMIT 1))"
	}
	return r.expr(r.tmpl(q, []*pg_query.Node{a}))
}

// regPart is pgcat_regpart(text, part): a reg* input's schema (part 0,
// "" when unqualified), its name (1), its name with a type's aliases
// resolved (2: integer is int4), and for an array type's name (int4[],
// integer[]) its element type's name (3; otherwise NULL). Quoted parts
// keep their case, unquoted ones fold to lower case.
func regPart(text string, part int64) any {
	schema, name := splitName(text)
	switch part {
	case 0:
		return schema
	case 1:
		return name
	case 2:
		return typeAliasOr(name)
	case 3:
		if el, ok := strings.CutSuffix(name, "[]"); ok {
			return typeAliasOr(strings.TrimSpace(el))
		}
	}
	return nil
}

// resolve is a reg* type's input function: the OID a name (or number)
// stands for.
func (r *rewriter) resolve(t, text string) (int64, error) {
	rt := regTypes[t]
	if n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err == nil {
		return n, nil
	}
	schemaName, name := splitName(text)
	if t == "regtype" {
		if a, ok := typeAliases[strings.ToLower(name)]; ok {
			name = a
		}
		if strings.HasSuffix(name, "[]") {
			if et := typeByName[typeAliasOr(strings.TrimSuffix(name, "[]"))]; et != nil {
				return int64(et.array), nil
			}
		}
	}
	q := "SELECT oid FROM pg_catalog." + rt.rel + " WHERE " + rt.col + " = ?"
	args := []any{name}
	nsCol := map[string]string{"pg_class": "relnamespace", "pg_type": "typnamespace", "pg_proc": "pronamespace"}[rt.rel]
	if nsCol != "" {
		if schemaName != "" {
			q += " AND " + nsCol + " = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = ?)"
			args = append(args, schemaName)
		} else {
			q += " AND " + nsCol + " IN (11, 2200) ORDER BY " + nsCol
		}
	}
	v, ok, err := r.lookup(q+" LIMIT 1", args...)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, pgerr.New(rt.code, "%s %q does not exist", rt.what, text)
	}
	n, _ := v.(int64)
	return n, nil
}

func typeAliasOr(s string) string {
	if a, ok := typeAliases[s]; ok {
		return a
	}
	return s
}

// splitName splits a possibly qualified, possibly quoted name, folding
// unquoted parts to lower case as PostgreSQL does.
func splitName(s string) (schema, name string) {
	var parts []string
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, b.String())
			b.Reset()
		case !quoted:
			b.WriteString(strings.ToLower(string(c)))
		default:
			b.WriteByte(c)
		}
	}
	parts = append(parts, b.String())
	if len(parts) >= 2 {
		return parts[len(parts)-2], parts[len(parts)-1]
	}
	return "", parts[0]
}

// macros are catalog functions written as SQL over the engine's tables
// ($n: the arguments; a missing one is NULL).
var macros = map[string]string{
	"pg_get_userbyid":                 "(SELECT shepherd_r.rolname FROM pg_catalog.pg_authid shepherd_r WHERE shepherd_r.oid = $1)",
	"array_remove":                    "pgcat_array_remove(pgcat_json($1, NULL), $2)",
	"acldefault":                      "pgcat_acldefault($1, $2, (SELECT shepherd_r.rolname FROM pg_catalog.pg_authid shepherd_r WHERE shepherd_r.oid = $2))",
	"pg_table_is_visible":             "EXISTS (SELECT 1 FROM pg_catalog.pg_class shepherd_c WHERE shepherd_c.oid = $1 AND shepherd_c.relnamespace IN (11, 2200))",
	"pg_type_is_visible":              "EXISTS (SELECT 1 FROM pg_catalog.pg_type shepherd_t WHERE shepherd_t.oid = $1 AND shepherd_t.typnamespace IN (11, 2200))",
	"pg_function_is_visible":          "EXISTS (SELECT 1 FROM pg_catalog.pg_proc shepherd_p WHERE shepherd_p.oid = $1 AND shepherd_p.pronamespace IN (11, 2200))",
	"pg_collation_is_visible":         "EXISTS (SELECT 1 FROM pg_catalog.pg_collation shepherd_l WHERE shepherd_l.oid = $1 AND shepherd_l.collnamespace IN (11, 2200))",
	"col_description":                 "(SELECT shepherd_d.description FROM pg_catalog.pg_description shepherd_d WHERE shepherd_d.objoid = $1 AND shepherd_d.classoid = 1259 AND shepherd_d.objsubid = $2)",
	"shobj_description":               "(SELECT shepherd_d.description FROM pg_catalog.pg_shdescription shepherd_d WHERE shepherd_d.objoid = $1)",
	"pg_get_expr":                     "$1",
	"pg_get_indexdef":                 "(SELECT pgcat_indexdef(shepherd_i.def, shepherd_i.cols, $2, $3) FROM shepherd_indexdef shepherd_i WHERE shepherd_i.oid = $1)",
	"pg_get_serial_sequence":          "(SELECT shepherd_s.seq FROM shepherd_serial shepherd_s WHERE shepherd_s.tab = $1 AND shepherd_s.col = $2)",
	"pg_relation_is_publishable":      "false",
	"pg_partition_ancestors":          "$1",
	"current_schema":                  "'public'",
	"pg_get_triggerdef":               "NULL",
	"pg_get_statisticsobjdef_columns": "NULL",
	"pg_relation_size":                "0", "pg_total_relation_size": "0", "pg_table_size": "0", "pg_indexes_size": "0",
	"pg_database_size": "0", "pg_tablespace_location": "''", "pg_tablespace_size": "0",
	"pg_get_function_result":    "(SELECT pgcat_format_type(shepherd_p.prorettype, NULL) FROM pg_catalog.pg_proc shepherd_p WHERE shepherd_p.oid = $1)",
	"pg_get_function_arguments": "NULL", "pg_get_function_identity_arguments": "NULL",
	"pg_opclass_is_visible": "true", "pg_opfamily_is_visible": "true", "pg_operator_is_visible": "true",
	"pg_conversion_is_visible": "true", "pg_ts_config_is_visible": "true", "pg_ts_dict_is_visible": "true",
	"pg_ts_parser_is_visible": "true", "pg_ts_template_is_visible": "true", "pg_statistics_obj_is_visible": "true",
	"pg_get_ruledef": "NULL", "pg_get_partkeydef": "NULL", "pg_get_functiondef": "NULL",
	"array_length": "json_array_length(pgcat_json($1, NULL))",
	"cardinality":  "json_array_length(pgcat_json($1, NULL))",
}

// renames are functions SQLite has under another name (or shepherd
// registers), with the same arguments.
var renames = map[string]string{
	"string_agg": "group_concat", "bool_and": "min", "every": "min", "bool_or": "max",
	"json_build_object": "json_object", "jsonb_build_object": "json_object",
	"format_type": "pgcat_format_type", "pg_encoding_to_char": "pgcat_encoding_to_char",
	"array_to_string": "pgcat_array_to_string", "quote_ident": "pgcat_quote_ident", "quote_literal": "pgcat_quote_literal", "quote_nullable": "pgcat_quote_nullable", "format": "pgcat_format",
	"lower": "lower", "upper": "upper", "length": "length", "coalesce": "coalesce", "count": "count",
	"min": "min", "max": "max", "sum": "sum", "avg": "avg", "replace": "replace", "substring": "substr",
	"substr": "substr", "concat": "concat", "nullif": "nullif", "abs": "abs", "round": "round",
	"json_each": "json_each", "json_array_length": "json_array_length", "pgcat_json": "pgcat_json",
	"pgcat_json_agg": "pgcat_json_agg", "pgcat_int": "pgcat_int", "pgcat_indexdef": "pgcat_indexdef",
	"pgcat_format_type": "pgcat_format_type", "translate": "pgcat_translate", "left": "pgcat_left",
	"pg_size_pretty": "pgcat_text", "pg_backend_pid": "pgcat_zero", "starts_with": "pgcat_starts_with",
	"row_number": "row_number", "rank": "rank", "dense_rank": "dense_rank",
	"btrim": "trim", "ltrim": "ltrim", "rtrim": "rtrim",
}

func (r *rewriter) fn(n *pg_query.Node, fc *pg_query.FuncCall) *pg_query.Node {
	name := funcName(fc.Funcname)
	switch {
	case strings.HasPrefix(name, "has_") && strings.HasSuffix(name, "_privilege"), name == "pg_has_role":
		return intConst(1) // shepherd's one user owns everything
	case strings.HasPrefix(name, "to_reg") && len(fc.Args) == 1:
		// to_regclass('name') and the like: NULL, not an error, when
		// there is no such object.
		if _, ok := regTypes["reg"+strings.TrimPrefix(name, "to_reg")]; ok {
			return r.regLookup("reg"+strings.TrimPrefix(name, "to_reg"), fc.Args[0])
		}
	case name == "current_setting" && (len(fc.Args) == 1 || len(fc.Args) == 2):
		// The session's value when it SET one, else the server's.
		if c := fc.Args[0].GetAConst(); c != nil && c.GetSval() != nil {
			if v, ok := r.settings[strings.ToLower(c.GetSval().Sval)]; ok {
				return r.param(v)
			}
		}
		return r.expr(r.tmpl("(SELECT shepherd_g.setting FROM pg_catalog.pg_settings shepherd_g WHERE lower(shepherd_g.name) = lower($1))", fc.Args[:1]))
	case name == "set_config" && len(fc.Args) == 3 && r.setToken != 0:
		// The session's SET (pg_dump: SELECT set_config(name, ...)
		// FROM pg_settings WHERE name = ...).
		args := []*pg_query.Node{intConst(r.setToken)}
		for _, a := range fc.Args {
			args = append(args, r.expr(a))
		}
		return call("pgcat_set_config", args...)
	case name == "pg_get_constraintdef" && len(fc.Args) >= 1 && len(fc.Args) <= 2:
		// A foreign key's table is qualified when public is not on the
		// session's search_path (pg_dump sets it to ''), as PostgreSQL
		// qualifies a name it would not find.
		qualify := bool01(!slices.Contains(r.searchPath(), "public"))
		args := append([]*pg_query.Node{}, fc.Args...)
		if len(args) == 1 {
			args = append(args, nullConst())
		}
		return r.expr(r.tmpl("(SELECT pgcat_condef(shepherd_k.def, shepherd_k.pretty, $2, $3) FROM shepherd_condef shepherd_k WHERE shepherd_k.oid = $1)", append(args, intConst(qualify))))
	case name == "pg_get_expr" && len(fc.Args) >= 2 && !slices.Contains(r.searchPath(), "public"):
		// A SERIAL default's sequence is qualified as the constraints'
		// tables are (see pg_get_constraintdef).
		return r.expr(r.tmpl("pgcat_qualify_nextval($1)", fc.Args[:1]))
	case name == "pg_get_viewdef" && len(fc.Args) >= 1 && len(fc.Args) <= 2:
		// PostgreSQL's text (see viewDef), its relation qualified when
		// public is not on the search path (pg_dump).
		col := "plain"
		pretty := len(fc.Args) == 2
		if !slices.Contains(r.searchPath(), "public") {
			col = "qualified"
		}
		q := "(SELECT shepherd_v." + col + " FROM shepherd_viewdef shepherd_v WHERE shepherd_v.oid = $1)"
		if pretty {
			q = "(SELECT CASE WHEN $2 THEN shepherd_v.pretty" + strings.TrimPrefix(col, "plain") + " ELSE shepherd_v." + col + " END FROM shepherd_viewdef shepherd_v WHERE shepherd_v.oid = $1)"
			q = strings.Replace(q, "prettyqualified", "pretty_qualified", 1)
		}
		args := []*pg_query.Node{fc.Args[0]}
		if pretty {
			args = append(args, r.boolConst(fc.Args[1]))
		}
		return r.expr(r.tmpl(q, args))
	case name == "current_schemas" && len(fc.Args) == 1:
		// The session's search_path, as PostgreSQL resolves it: the
		// schemas that exist, pg_catalog first when the argument
		// (include implicit) is true and the path does not name it
		// (pg_dump records current_schemas(false) after setting the
		// path to '').
		explicit := r.searchPath()
		hasCatalog := slices.Contains(explicit, "pg_catalog")
		implicit := explicit
		if !hasCatalog {
			implicit = append([]string{"pg_catalog"}, explicit...)
		}
		return r.expr(r.tmpl("CASE WHEN $1 THEN $2 ELSE $3 END", []*pg_query.Node{r.boolConst(fc.Args[0]), r.param(jsonOf(implicit)), r.param(jsonOf(explicit))}))
	case name == "current_database" && len(fc.Args) == 0:
		return r.param(r.database)
	case name == "obj_description":
		q := "(SELECT shepherd_d.description FROM pg_catalog.pg_description shepherd_d WHERE shepherd_d.objoid = $1 AND shepherd_d.objsubid = 0 LIMIT 1)"
		if len(fc.Args) == 2 {
			q = "(SELECT shepherd_d.description FROM pg_catalog.pg_description shepherd_d WHERE shepherd_d.objoid = $1 AND shepherd_d.classoid = $2::regclass AND shepherd_d.objsubid = 0)"
		}
		return r.expr(r.tmpl(q, fc.Args))
	case name == "array_upper" || name == "array_lower":
		if len(fc.Args) != 2 {
			break
		}
		t := r.typeOf(fc.Args[0])
		base := 1
		if t == "int2vector" || t == "oidvector" {
			base = 0
		}
		q := "CASE WHEN json_array_length(pgcat_json($1, NULL)) > 0 THEN json_array_length(pgcat_json($1, NULL)) - 1 + " + strconv.Itoa(base) + " END"
		if name == "array_lower" {
			q = "CASE WHEN json_array_length(pgcat_json($1, NULL)) > 0 THEN " + strconv.Itoa(base) + " END"
		}
		return r.expr(r.tmpl(q, fc.Args))
	case name == "array_agg" || name == "json_agg":
		t := "text"
		if len(fc.Args) > 0 {
			t = r.typeOf(fc.Args[0])
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgcat_json_agg")}
		for i, a := range fc.Args {
			fc.Args[i] = r.expr(a)
		}
		fc.Args = append(fc.Args, r.param(t))
		r.aggExtras(fc)
		return n
	case name == "unnest" || name == "generate_subscripts" || name == "generate_series":
		r.refuse("%s() here (only in FROM or directly in the SELECT list)", name)
		return n
	}
	if name == "json_build_object" || name == "jsonb_build_object" {
		// SQLite's booleans are integers: a boolean value is put in as
		// JSON true/false.
		for i := 1; i < len(fc.Args); i += 2 {
			if r.typeOf(fc.Args[i]) == "bool" {
				fc.Args[i] = r.tmpl("json(CASE WHEN $1 THEN 'true' WHEN NOT $1 THEN 'false' END)", []*pg_query.Node{fc.Args[i]})
			}
		}
	}
	if strings.HasPrefix(name, "pgcat_") || name == "json_array" || name == "json" {
		// the engine's own, from a rewritten form
		for i, a := range fc.Args {
			fc.Args[i] = r.expr(a)
		}
		return n
	}
	if m, ok := macros[name]; ok {
		return r.expr(r.tmpl(m, fc.Args))
	}
	to, ok := renames[name]
	if !ok {
		r.refuse("function %s() in a catalog query", name)
		return n
	}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(to)}
	for i, a := range fc.Args {
		fc.Args[i] = r.expr(a)
	}
	r.aggExtras(fc)
	return n
}

func (r *rewriter) aggExtras(fc *pg_query.FuncCall) {
	for _, o := range fc.AggOrder {
		if sb := o.GetSortBy(); sb != nil {
			sb.Node = r.expr(sb.Node)
		}
	}
	fc.AggFilter = r.expr(fc.AggFilter)
	if w := fc.Over; w != nil {
		// SQLite has PostgreSQL's window syntax.
		if w.Refname != "" || w.Name != "" {
			r.refuse("named windows in a catalog query")
		}
		for i, p := range w.PartitionClause {
			w.PartitionClause[i] = r.expr(p)
		}
		for _, o := range w.OrderClause {
			if sb := o.GetSortBy(); sb != nil {
				sb.Node = r.expr(sb.Node)
			}
		}
	}
}

func (r *rewriter) aexpr(n *pg_query.Node, e *pg_query.A_Expr) *pg_query.Node {
	op := funcName(e.Name)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		switch op {
		case "~", "~*", "!~", "!~*":
			flags := ""
			if strings.HasSuffix(op, "*") {
				flags = "i"
			}
			m := call("pgcat_regex", r.expr(e.Lexpr), r.expr(e.Rexpr), r.param(flags))
			if strings.HasPrefix(op, "!") {
				return pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{m}, -1)
			}
			return m
		case "~~*", "!~~*":
			e.Kind = pg_query.A_Expr_Kind_AEXPR_ILIKE
			return r.aexpr(n, e)
		case "=", "<>", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "||", "~~", "!~~", "&", "|", "<<", ">>":
			e.Name = []*pg_query.Node{pg_query.MakeStrNode(op)}
			// A parameter compared with a column is of its type.
			if e.Lexpr.GetColumnRef() != nil {
				r.noteParam(e.Rexpr, r.typeOf(e.Lexpr))
			} else if e.Rexpr.GetColumnRef() != nil {
				r.noteParam(e.Lexpr, r.typeOf(e.Rexpr))
			}
			// A string compared with a boolean is read as one ('t'),
			// as PostgreSQL resolves the unknown literal; the engine
			// keeps booleans as 0/1.
			if r.typeOf(e.Lexpr) == "bool" {
				e.Rexpr = r.boolConst(e.Rexpr)
			} else if r.typeOf(e.Rexpr) == "bool" {
				e.Lexpr = r.boolConst(e.Lexpr)
			}
		default:
			r.refuse("operator %s in a catalog query", op)
			return n
		}
	case pg_query.A_Expr_Kind_AEXPR_ILIKE:
		like := "~~"
		if op == "!~~*" {
			like = "!~~"
		}
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_LIKE, []*pg_query.Node{pg_query.MakeStrNode(like)},
			call("lower", r.expr(e.Lexpr)), call("lower", r.expr(e.Rexpr)), -1)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		if !strings.ContainsAny(op, "=<>!") || strings.ContainsAny(op, "~") {
			r.refuse("operator %s with ANY/ALL in a catalog query", op)
			return n
		}
		if arr := e.Rexpr.GetAArrayExpr(); arr != nil && op == "=" && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ANY {
			in := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_IN, []*pg_query.Node{pg_query.MakeStrNode("=")},
				e.Lexpr, pg_query.MakeListNode(arr.Elements), -1)
			if len(arr.Elements) == 0 {
				return intConst(0)
			}
			return r.expr(in)
		}
		t := r.typeOf(e.Rexpr)
		q := "EXISTS (SELECT 1 FROM json_each(pgcat_json($2, $3)) AS shepherd_e WHERE $1 " + op + " shepherd_e.value)"
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL {
			q = "NOT EXISTS (SELECT 1 FROM json_each(pgcat_json($2, $3)) AS shepherd_e WHERE NOT ($1 " + op + " shepherd_e.value))"
		}
		return r.expr(r.tmpl(q, []*pg_query.Node{e.Lexpr, e.Rexpr, pg_query.MakeAConstStrNode(t, -1)}))
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN, pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
		pg_query.A_Expr_Kind_AEXPR_NULLIF:
		e.Name = []*pg_query.Node{pg_query.MakeStrNode(op)}
	default:
		r.refuse("this operator in a catalog query")
		return n
	}
	e.Lexpr = r.expr(e.Lexpr)
	e.Rexpr = r.expr(e.Rexpr)
	return n
}

// searchPath is the session's search_path as PostgreSQL resolves it:
// the schemas named that exist, in order, without the implicit
// pg_catalog.
func (r *rewriter) searchPath() []string {
	path, ok := r.settings["search_path"]
	if !ok {
		path = `"$user", public`
	}
	out := []string{}
	for _, p := range strings.Split(path, ",") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`) && len(p) >= 2 {
			p = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
		} else {
			p = strings.ToLower(p)
		}
		switch p {
		case "pg_catalog", "public", "information_schema":
			out = append(out, p)
		}
	}
	return out
}
