package sqlan

import (
	"errors"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Unnest is an INSERT whose rows come from unnest() over arrays:
//
//	INSERT INTO t (a, b) SELECT * FROM unnest($1::int[], $2::text[])
//
// (Django's bulk_create, asyncpg's bulk inserts). MariaDB and SQLite have
// no arrays, and the number of rows, which SERIAL keys are pinned for, is
// known only once the arrays are: the session expands the statement at
// execution into an INSERT ... VALUES of the arrays' elements, one row
// per element, in the arrays' order (PostgreSQL's, which its nextval()
// calls follow), and runs that like any other INSERT.
type Unnest struct {
	// tmpl is the INSERT without its SELECT (RETURNING, ON CONFLICT and
	// OVERRIDING kept).
	tmpl    *pg_query.InsertStmt
	version int32
	arrays  []unnestArray
	// targets are the SELECT's columns: which unnest column (0-based)
	// each gives, and the cast it is written with, if any.
	targets []unnestTarget
	// params is the statement's highest $n.
	params int
	// isTemplate marks the copy template expands: its elements are not
	// values to check.
	isTemplate bool
}

// unnestArray is one argument of unnest().
type unnestArray struct {
	param int              // $n, or 0
	text  *string          // a string constant's text (param 0)
	elems []*pg_query.Node // ARRAY[...]'s elements (param 0, text nil)
	// casts are the element types of the array casts around the value,
	// innermost first: ('{1}'::int2[])::int4[] reads each element as
	// int2, then casts it to int4.
	casts []*pg_query.TypeName
}

type unnestTarget struct {
	col  int
	cast *pg_query.TypeName
}

// unnestInsert returns the expansion of n when it is an INSERT ... SELECT
// of unnest()'s columns (or *) FROM unnest(arrays) [AS alias[(cols)]]
// alone, with arrays that are parameters, string constants or ARRAY[...]
// under casts to array types; nil for anything else, which is analysed
// as written.
func unnestInsert(n *pg_query.Node) *Unnest {
	ins := n.GetInsertStmt()
	if ins == nil || ins.WithClause != nil {
		return nil
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 || len(sel.FromClause) != 1 ||
		sel.WhereClause != nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.WindowClause) > 0 || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil ||
		len(sel.LockingClause) > 0 || sel.WithClause != nil || sel.IntoClause != nil {
		return nil
	}
	rf := sel.FromClause[0].GetRangeFunction()
	if rf == nil || rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil
	}
	pair := rf.Functions[0].GetList().GetItems()
	if len(pair) == 0 {
		return nil
	}
	fc := pair[0].GetFuncCall()
	if fc == nil || schema.FuncName(fc) != "unnest" || len(fc.Args) == 0 || fc.AggStar || fc.AggDistinct || fc.FuncVariadic ||
		len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil {
		return nil
	}
	u := &Unnest{}
	for _, a := range fc.Args {
		arr, ok := unnestArg(a)
		if !ok {
			return nil
		}
		u.arrays = append(u.arrays, arr)
	}
	// The columns' names: the alias's list, else the alias itself for
	// one array, else "unnest".
	names := make([]string, len(u.arrays))
	alias := "unnest"
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		if len(rf.Alias.Colnames) > len(names) {
			return nil
		}
		for i, c := range rf.Alias.Colnames {
			names[i] = c.GetString_().GetSval()
		}
	}
	for i := range names {
		if names[i] == "" {
			names[i] = "unnest"
			if len(names) == 1 {
				names[i] = alias
			}
		}
	}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		v := rt.GetVal()
		var cast *pg_query.TypeName
		if tc := v.GetTypeCast(); tc != nil {
			cast, v = tc.TypeName, tc.Arg
		}
		cr := v.GetColumnRef()
		if cr == nil || len(cr.Fields) > 2 {
			return nil
		}
		if len(cr.Fields) == 2 && cr.Fields[0].GetString_().GetSval() != alias {
			return nil
		}
		last := cr.Fields[len(cr.Fields)-1]
		if last.GetAStar() != nil {
			if cast != nil {
				return nil
			}
			for i := range names {
				u.targets = append(u.targets, unnestTarget{col: i})
			}
			continue
		}
		name := last.GetString_().GetSval()
		col := -1
		for i, c := range names {
			if c == name {
				if col >= 0 {
					return nil // ambiguous: PostgreSQL says so
				}
				col = i
			}
		}
		if col < 0 {
			return nil
		}
		u.targets = append(u.targets, unnestTarget{col: col, cast: cast})
	}
	u.tmpl = proto.Clone(ins).(*pg_query.InsertStmt)
	u.tmpl.SelectStmt = nil
	return u
}

// unnestArg reads one argument of unnest(): a parameter, a string
// constant or ARRAY[...], under casts to array types (at least one for a
// parameter or a constant, whose type PostgreSQL could not tell without).
func unnestArg(n *pg_query.Node) (unnestArray, bool) {
	var arr unnestArray
	for {
		tc := n.GetTypeCast()
		if tc == nil {
			break
		}
		tn := tc.TypeName
		if tn == nil || len(tn.ArrayBounds) != 1 || tn.Setof || tn.PctType {
			return arr, false
		}
		elem := proto.Clone(tn).(*pg_query.TypeName)
		elem.ArrayBounds = nil
		if _, _, serial, ok := schema.TypeOf(elem); !ok || serial {
			return arr, false
		}
		arr.casts = append([]*pg_query.TypeName{elem}, arr.casts...)
		n = tc.Arg
	}
	switch {
	case n.GetParamRef() != nil && len(arr.casts) > 0:
		arr.param = int(n.GetParamRef().Number)
	case n.GetAConst() != nil && n.GetAConst().GetSval() != nil && len(arr.casts) > 0:
		s := n.GetAConst().GetSval().Sval
		arr.text = &s
	case n.GetAArrayExpr() != nil:
		var ok bool
		if arr.elems, ok = arrayElems(n.GetAArrayExpr()); !ok {
			return arr, false
		}
	default:
		return arr, false
	}
	return arr, true
}

// arrayElems flattens ARRAY[...] (unnest reads a many-dimensional array
// element by element, in storage order).
func arrayElems(a *pg_query.A_ArrayExpr) ([]*pg_query.Node, bool) {
	var out []*pg_query.Node
	for _, e := range a.Elements {
		if inner := e.GetAArrayExpr(); inner != nil {
			sub, ok := arrayElems(inner)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
			continue
		}
		if hasSubquery(e) {
			return nil, false
		}
		out = append(out, e)
	}
	return out, true
}

// hasSubquery reports whether n holds a subquery (whose rows the
// expansion could not copy element by element).
func hasSubquery(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(m *pg_query.Node) {
		if m.GetSubLink() != nil {
			found = true
		}
	})
	return found
}

// arrayOIDs are the OIDs of the array types of the element types
// unnest's parameters may have (what PostgreSQL describes $1::int[] as).
var arrayOIDs = map[string]uint32{
	"int2": 1005, "int4": 1007, "int8": 1016, "numeric": 1231, "float4": 1021, "float8": 1022,
	"bool": 1000, "text": 1009, "varchar": 1015, "bpchar": 1014, "bytea": 1001,
	"date": 1182, "time": 1183, "timestamp": 1115, "timestamptz": 1185,
	"uuid": 2951, "json": 199, "jsonb": 3807,
}

// paramOIDs returns the types of the client's parameters as PostgreSQL
// would describe them: an array parameter's is the array type of its
// first cast; the others' are what the expanded statement (inner, with
// its own numbering: see renumber) tells.
func (u *Unnest) paramOIDs(inner *Stmt, innerParams []int) []uint32 {
	out := make([]uint32, u.params)
	for _, a := range u.arrays {
		if a.param > 0 {
			t, _, _, _ := schema.TypeOf(a.casts[0])
			out[a.param-1] = arrayOIDs[t]
		}
	}
	if inner != nil {
		in := inner.ParamOIDs()
		for newN, old := range innerParams {
			if old <= u.params && newN < len(in) && out[old-1] == 0 {
				out[old-1] = in[newN]
			}
		}
	}
	return out
}

// Expand writes the INSERT ... VALUES the statement stands for with the
// client's arguments args: its text, and its arguments (the elements of
// the arrays, and the client's other parameters). The text is "" when the
// arrays have no elements: nothing is inserted.
func (u *Unnest) Expand(args []driver.Arg) (string, []driver.Arg, error) {
	text, out, _, err := u.expand(args)
	return text, out, err
}

// expand is Expand, also returning for each parameter of the text the
// number it had before renumbering (above the client's: an element).
func (u *Unnest) expand(args []driver.Arg) (string, []driver.Arg, []int, error) {
	all := append([]driver.Arg(nil), args...)
	for len(all) < u.params {
		all = append(all, driver.Arg{Null: true})
	}
	cols := make([][]*pg_query.Node, len(u.arrays))
	rows := 0
	for i, a := range u.arrays {
		var elems []*pg_query.Node
		switch {
		case a.elems != nil:
			for _, e := range a.elems {
				elems = append(elems, proto.Clone(e).(*pg_query.Node))
			}
		default:
			var text string
			if a.param > 0 {
				arg := all[a.param-1]
				if arg.Null {
					break // unnest(NULL) has no rows
				}
				text = arg.Text
			} else {
				text = *a.text
			}
			vals, err := ParseArray(text)
			if err != nil {
				return "", nil, nil, err
			}
			for _, v := range vals {
				if v == nil {
					elems = append(elems, &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}})
					continue
				}
				text, typ, err := *v, answer.Unknown, error(nil)
				if !u.isTemplate {
					text, typ, err = elementInput(a.casts[0], *v)
				}
				if err != nil {
					return "", nil, nil, err
				}
				all = append(all, driver.Arg{Text: text, Type: typ})
				elems = append(elems, pg_query.MakeParamRefNode(int32(len(all)), -1))
			}
		}
		for j := range elems {
			if elems[j].GetAConst().GetIsnull() {
				// A NULL goes to its column untyped, as PostgreSQL
				// coerces each VALUES row to the columns (MariaDB and
				// SQLite cast no NULL to uuid, say).
				continue
			}
			elems[j] = castAll(elems[j], a.casts)
		}
		cols[i] = elems
		rows = max(rows, len(elems))
	}
	if rows == 0 {
		return "", nil, nil, nil
	}
	values := make([][]*pg_query.Node, rows)
	for r := range values {
		for _, t := range u.targets {
			var v *pg_query.Node
			if c := cols[t.col]; r < len(c) {
				v = proto.Clone(c[r]).(*pg_query.Node)
			} else {
				v = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}} // padding, as above
			}
			if t.cast != nil {
				v = castAll(v, []*pg_query.TypeName{t.cast})
			}
			values[r] = append(values[r], v)
		}
	}
	return valuesInsert(u.tmpl, u.version, values, all)
}

// valuesInsert writes INSERT ... VALUES rows with tmpl's table, columns,
// ON CONFLICT and RETURNING, its parameters numbered 1, 2, ... (see
// renumber); all holds the arguments of the old numbers. It returns the
// text, its arguments, and for each the old number.
func valuesInsert(tmpl *pg_query.InsertStmt, version int32, rows [][]*pg_query.Node, all []driver.Arg) (string, []driver.Arg, []int, error) {
	sel := &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT}
	for _, items := range rows {
		sel.ValuesLists = append(sel.ValuesLists, &pg_query.Node{Node: &pg_query.Node_List{List: &pg_query.List{Items: items}}})
	}
	ins := proto.Clone(tmpl).(*pg_query.InsertStmt)
	ins.SelectStmt = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}
	root := &pg_query.Node{Node: &pg_query.Node_InsertStmt{InsertStmt: ins}}
	order := renumber(root)
	out := make([]driver.Arg, len(order))
	for i, old := range order {
		if old <= len(all) {
			out[i] = all[old-1]
		} else {
			out[i] = driver.Arg{Null: true}
		}
	}
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: version, Stmts: []*pg_query.RawStmt{{Stmt: root}}})
	if err != nil {
		return "", nil, nil, pgerr.Wrap(pgerr.InternalError, err, "writing the rows of an INSERT as VALUES")
	}
	return text, out, order, nil
}

// renumber numbers root's parameters 1, 2, ... in the order they first
// appear and returns, for each new number (index n-1), the old one: the
// arrays' own parameters are gone, and PostgreSQL refuses a parameter no
// statement uses whose type it cannot tell.
func renumber(root *pg_query.Node) []int {
	seen := map[int32]int32{}
	var order []int
	walkNodes(root, func(n *pg_query.Node) {
		p := n.GetParamRef()
		if p == nil {
			return
		}
		nn, ok := seen[p.Number]
		if !ok {
			order = append(order, int(p.Number))
			nn = int32(len(order))
			seen[p.Number] = nn
		}
		p.Number = nn
	})
	return order
}

// castAll wraps v in casts to types, innermost first. A parameter (or
// NULL) read as a boolean is written (v::int4 <> 0), its text 1 or 0 (see
// elementInput): the same boolean, which MariaDB and SQLite can take from
// a parameter, where they have no cast to boolean of untyped text.
func castAll(v *pg_query.Node, types []*pg_query.TypeName) *pg_query.Node {
	for _, t := range types {
		if typ, _, _, _ := schema.TypeOf(t); typ == "bool" && (v.GetParamRef() != nil || v.GetAConst().GetIsnull()) {
			asInt := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
				Arg:      v,
				TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("int4")}, Typemod: -1, Location: -1},
				Location: -1,
			}}}
			v = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("<>")}, asInt, pg_query.MakeAConstIntNode(0, -1), -1)
			continue
		}
		v = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: v, TypeName: proto.Clone(t).(*pg_query.TypeName), Location: -1,
		}}}
	}
	return v
}

// template is the expansion with one element per array, for analysis
// and Describe, and for each of its parameters the client's parameter it
// is (a number above the client's: an element).
func (u *Unnest) template() (string, []int, error) {
	one := "{x}" // an element parameter (not checked: see isTemplate)
	c := *u
	c.isTemplate = true
	c.arrays = append([]unnestArray(nil), u.arrays...)
	args := make([]driver.Arg, u.params)
	for i, a := range c.arrays {
		if a.param > 0 {
			args[a.param-1] = driver.Arg{Text: one}
		} else if a.text != nil {
			c.arrays[i].text = &one
		}
	}
	text, _, order, err := c.expand(args)
	return text, order, err
}

// ParseArray reads PostgreSQL's text form of an array ({1,2,NULL},
// {"a b","c\"d"}, {{1,2},{3,4}}) by answer.ParseArrayDims and returns its
// elements in storage order, nil for NULL. A malformed literal is
// 22P02, in PostgreSQL's words.
func ParseArray(s string) ([]*string, error) {
	items, _, err := answer.ParseArrayDims(s)
	var ae *answer.ArrayError
	switch {
	case err == nil:
		return items, nil
	case errors.As(err, &ae) && ae.Bounds:
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support array bounds ([lo:hi]=...) in an array unnest() reads")
	case ae != nil && ae.Uneven:
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support array literals whose sub-arrays nest to different depths (PostgreSQL 15 reads some of them its own way): %q", s)
	case ae != nil:
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", s).WithDetail("%s", ae.Detail)
	}
	return nil, err
}

// prepareUnnest makes st (an INSERT of unnest's rows, n) one the session
// expands at execution: it analyses the expansion with one row, which
// refuses what the expansion would refuse and describes the statement.
// ok is false when there is nothing to expand (only ARRAY[]s without
// elements): the statement is analysed as written.
func (st *Stmt) prepareUnnest(u *Unnest, n *pg_query.Node, env *Env, version int32) (ok bool, err error) {
	if st.NumParams, err = maxParam(n); err != nil {
		return false, err
	}
	u.params, u.version = st.NumParams, version
	text, order, err := u.template()
	if err != nil || text == "" {
		return false, err
	}
	inner, err := ParseOneIn(text, env)
	if err != nil {
		return false, err
	}
	st.tree, st.env, st.version = n, env, version
	st.Unnest, st.Inner = u, inner
	st.clientOIDs = u.paramOIDs(inner, order)
	for d := range st.dialects {
		st.dialects[d] = dialectForm{sql: st.SQL}
	}
	return true, nil
}

// elementInput checks an array element's text as PostgreSQL's input
// function of the element type reads it, for the numeric, boolean, date
// and time and uuid types (an engine would store text it cannot read as
// 0, or as text), and returns it in a form every engine reads alike
// (times in UTC, booleans as 1 or 0: see castAll), with the family it is
// sent as.
func elementInput(tn *pg_query.TypeName, v string) (string, answer.Type, error) {
	t, _, _, _ := schema.TypeOf(tn)
	names := map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real", "float8": "double precision", "numeric": "numeric"}
	bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}
	trimmed := strings.TrimSpace(v)
	switch t {
	case "int2", "int4", "int8":
		n, err := strconv.ParseInt(trimmed, 10, bits[t])
		switch {
		case errors.Is(err, strconv.ErrRange):
			return "", answer.Unknown, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", v, names[t])
		case err != nil:
			return "", answer.Unknown, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", names[t], v)
		}
		return strconv.FormatInt(n, 10), answer.Unknown, nil
	case "bool":
		// boolin: true, yes, on, 1 and false, no, off, 0, or a unique
		// prefix of one, in any case.
		lower := strings.ToLower(trimmed)
		for _, w := range []struct {
			word string
			min  int
			v    string
		}{{"true", 1, "1"}, {"yes", 1, "1"}, {"on", 2, "1"}, {"1", 1, "1"}, {"false", 1, "0"}, {"no", 1, "0"}, {"off", 2, "0"}, {"0", 1, "0"}} {
			if len(lower) >= w.min && strings.HasPrefix(w.word, lower) {
				return w.v, answer.Unknown, nil
			}
		}
		return "", answer.Unknown, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type boolean: \"%s\"", v)
	case "float4", "float8", "numeric":
		lower := strings.ToLower(trimmed)
		if _, err := strconv.ParseFloat(trimmed, 64); err != nil && !errors.Is(err, strconv.ErrRange) ||
			strings.HasPrefix(lower, "0x") || strings.Contains(lower, "_") {
			switch strings.TrimLeft(lower, "+-") {
			case "nan", "infinity", "inf":
				return trimmed, answer.Unknown, nil
			}
			return "", answer.Unknown, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", names[t], v)
		}
		return trimmed, answer.Unknown, nil
	case "date", "time", "timestamp", "timestamptz":
		out, err := dialect.NormalizeTime(v, t)
		if err != nil {
			return "", answer.Unknown, err
		}
		return out, dialect.Family(t), nil
	case "uuid":
		out, ok := dialect.NormalizeUUID(v)
		if !ok {
			return "", answer.Unknown, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type uuid: \"%s\"", v)
		}
		return out, answer.UUID, nil
	}
	return v, answer.Unknown, nil
}
