package dialect

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Arrays on DuckDB replicas. A DuckDB replica keeps an array column as
// the SQLite replicas do: PostgreSQL's output text of the array
// (arrays.go), in a VARCHAR column, written by shepherd alone. So every
// replica stores the same bytes and prints them as PostgreSQL prints the
// array, and DuckDB computes the array operators and functions with the
// same Go functions over that text as SQLite does (the driver registers
// them under the names below; package driver/duckdb, arrays.go). DuckDB's
// own LIST would give other answers where they matter: it orders and
// compares NULL elements otherwise, reads '{...}' text by its own rules,
// and its list functions answer an empty or NULL array otherwise; and
// the stored rows would differ from the other replicas'.
//
// Which node of a statement is an array (a string constant compared
// with an array column, a parameter given to = ANY) only the types tell,
// which the SQLite writer knows. For a statement that may hold arrays,
// DuckDB therefore runs that writer in its DuckDB mode, which records,
// for each array construct it writes, how DuckDB's tree is to be
// rewritten (duckArrayEdits, keyed by the kind and position of the node
// in the statement's text); those rewrites are made before the checks
// of DuckDB. A construct recorded but not found again, or found twice
// with other rewrites, refuses the statement: DuckDB never reads an
// array's text otherwise than the writer meant.

// Names of the functions the DuckDB driver registers (the same names as
// SQLite's, with the same meaning).
const (
	DuckArrayAny      = arrayAnyFunction
	DuckArrayLength   = arrayLengthFunction
	DuckArrayContains = arrayContainsFunction
	DuckArrayOverlap  = arrayOverlapFunction
	DuckArrayToString = arrayToStringFunction
	DuckStringToArray = stringToArrayFunction
	DuckArrayQuote    = arrayQuoteFunction
)

func init() {
	for _, f := range []string{DuckArrayAny, DuckArrayLength, DuckArrayContains, DuckArrayOverlap,
		DuckArrayToString, DuckStringToArray, DuckArrayQuote} {
		duckFuncs[f] = true
	}
}

// duckKey names a node of the statement: the rewrite's kind ("" for a
// rewrite of the node itself, "any" of the = ANY whose right operand it
// is, "op" of the operator whose left operand it is), the node's kind
// and its position in the text.
type duckKey struct {
	rel  string
	kind protoreflect.Name
	loc  int32
}

// duckArrayEdits are the rewrites of a statement's array constructs for
// DuckDB, found by the SQLite writer (see above).
type duckArrayEdits struct {
	edits map[duckKey]func(*pg_query.Node)
	// nodes are the statement's own nodes: a node the writer makes
	// itself (a default it reads back from the catalog) is no part of
	// DuckDB's copy, and a rewrite of it is none of DuckDB's.
	nodes map[protoreflect.ProtoMessage]bool
	// unkeyed names a construct whose node has no position (made by a
	// rewrite, not read from the text).
	unkeyed string
}

// inner is the node n wraps (nil for none).
func inner(n *pg_query.Node) (protoreflect.Name, protoreflect.Message) {
	if n == nil {
		return "", nil
	}
	m := n.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().Get(0))
	if fd == nil || fd.Message() == nil {
		return "", nil
	}
	return fd.Name(), m.Get(fd).Message()
}

// nodeKey is the kind and position of n; ok is false when n has none.
func nodeKey(n *pg_query.Node) (kind protoreflect.Name, loc int32, ok bool) {
	kind, inner := inner(n)
	if inner == nil {
		return "", 0, false
	}
	lf := inner.Descriptor().Fields().ByName("location")
	if lf == nil {
		return "", 0, false
	}
	loc = int32(inner.Get(lf).Int())
	if loc < 0 {
		return "", 0, false
	}
	return kind, loc, true
}

// duckEdit records, in DuckDB mode, that DuckDB's copy of node n (or of
// the node whose rel is n, see duckKey) is rewritten by f.
func (w *writer) duckEdit(rel string, n *pg_query.Node, what string, f func(*pg_query.Node)) {
	e := w.duckArrays
	if e == nil {
		return
	}
	if _, m := inner(n); m == nil || !e.nodes[m.Interface()] {
		return
	}
	kind, loc, ok := nodeKey(n)
	if !ok {
		if e.unkeyed == "" {
			e.unkeyed = what
		}
		return
	}
	e.edits[duckKey{rel: rel, kind: kind, loc: loc}] = f
}

// duckConst rewrites an array constant (a string, ARRAY[...] or a cast
// of either) as its canonical text.
func (w *writer) duckConst(n *pg_query.Node, text string) {
	w.duckEdit("", n, "an array constant", func(x *pg_query.Node) {
		x.Node = pg_query.MakeAConstStrNode(text, -1).Node
	})
}

// duckUncast leaves out a cast to an array type: the value is its text.
func (w *writer) duckUncast(tc *pg_query.TypeCast) {
	n := &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: tc}}
	w.duckEdit("", n, "a cast to an array type", func(x *pg_query.Node) {
		x.Node = x.GetTypeCast().Arg.Node
	})
}

// duckElemText is the text element x of an array of elem holds, as the
// canonical text writes it: integers in decimal, booleans t and f, text
// as it is; NULL for NULL.
func duckElemText(x *pg_query.Node, elem string) *pg_query.Node {
	x = proto.Clone(x).(*pg_query.Node)
	switch {
	case elem == "bool":
		return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
			Args: []*pg_query.Node{
				{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: x, Result: pg_query.MakeAConstStrNode("t", -1)}}},
				{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
					Expr:   pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{proto.Clone(x).(*pg_query.Node)}, -1),
					Result: pg_query.MakeAConstStrNode("f", -1)}}},
			},
		}}}
	case isInt(elem):
		x = duckCast(x, "int8")
	}
	return duckCast(x, "text")
}

func duckCast(x *pg_query.Node, t string) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg: x, TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(t)}, Typemod: -1, Location: -1}, Location: -1}}}
}

// duckCall is a call of the function name (DuckDB's or one the driver
// registers) with args.
func duckCall(name string, args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
}

// duckAny rewrites x = ANY (r) and x <> ALL (r) of an array r of type t
// that is no ARRAY[...] list: DuckDBArrayAny over the text (NOT of it
// for <> ALL).
func (w *writer) duckAny(all bool, r *pg_query.Node, t string) {
	elem := schema.ArrayElement(t)
	w.duckEdit("any", r, "= ANY (array)", func(x *pg_query.Node) {
		e := x.GetAExpr()
		call := duckCall(DuckArrayAny, e.Rexpr, duckElemText(e.Lexpr, elem))
		if all {
			call = pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{call}, -1)
		}
		x.Node = call.Node
	})
}

// duckAnyList rewrites x = ANY (ARRAY[a, b]) as x IN (a, b) and
// x <> ALL (ARRAY[a, b]) as x NOT IN (a, b), as the writer does.
func (w *writer) duckAnyList(op string, r *pg_query.Node) {
	w.duckEdit("any", r, "= ANY (ARRAY[...])", func(x *pg_query.Node) {
		e := x.GetAExpr()
		items := e.Rexpr.GetAArrayExpr().Elements
		x.Node = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_IN, []*pg_query.Node{pg_query.MakeStrNode(op)},
			e.Lexpr, &pg_query.Node{Node: &pg_query.Node_List{List: &pg_query.List{Items: items}}}, -1).Node
	})
}

// duckArrayOp rewrites a @> b, a <@ b and a && b as the functions over
// the texts.
func (w *writer) duckArrayOp(op string, l *pg_query.Node) {
	w.duckEdit("op", l, "operator "+op+" on arrays", func(x *pg_query.Node) {
		e := x.GetAExpr()
		a, b := e.Lexpr, e.Rexpr
		fn := DuckArrayContains
		switch op {
		case "<@":
			a, b = b, a
		case "&&":
			fn = DuckArrayOverlap
		}
		x.Node = duckCall(fn, a, b).Node
	})
}

// duckArrayFunc rewrites an array function the writer wrote
// (arrayFunc) as the DuckDB driver's function of the same meaning.
func (w *writer) duckArrayFunc(name string, fc *pg_query.FuncCall, elem string) {
	n := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}
	w.duckEdit("", n, name+"()", func(x *pg_query.Node) {
		f := x.GetFuncCall()
		a := f.Args
		switch name {
		case "array_length":
			x.Node = duckCall(DuckArrayLength, a[0], a[1]).Node
		case "cardinality":
			x.Node = duckCall(DuckArrayLength, a[0], pg_query.MakeAConstIntNode(0, -1)).Node
		case "array_to_string":
			x.Node = duckCall(DuckArrayToString, a[0], a[1]).Node
		case "string_to_array":
			x.Node = duckCall(DuckStringToArray, a[0], a[1]).Node
		case "array_agg":
			x.Node = duckArrayAgg(f, elem).Node
		}
	})
}

// duckArrayAgg is array_agg(x ORDER BY ...) as the canonical text:
// '{' || string_agg(each element's text, NULL as NULL, ',' ORDER BY ...)
// || '}', NULL for no rows (as PostgreSQL's), as the SQLite writer
// writes it with GROUP_CONCAT.
func duckArrayAgg(f *pg_query.FuncCall, elem string) *pg_query.Node {
	x := f.Args[0]
	var item *pg_query.Node
	switch {
	case elem == "bool" || isInt(elem):
		item = duckElemText(x, elem)
	default:
		item = duckCall(DuckArrayQuote, x)
	}
	item = &pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: &pg_query.CoalesceExpr{
		Args: []*pg_query.Node{item, pg_query.MakeAConstStrNode("NULL", -1)}}}}
	agg := duckCall("string_agg", item, pg_query.MakeAConstStrNode(",", -1))
	agg.GetFuncCall().AggOrder = f.AggOrder
	agg.GetFuncCall().AggFilter = f.AggFilter
	concat := func(a, b *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")}, a, b, -1)
	}
	return concat(concat(pg_query.MakeAConstStrNode("{", -1), agg), pg_query.MakeAConstStrNode("}", -1))
}

// duckUnnest rewrites FROM unnest(constant array) as a derived table of
// VALUES, each element cast to the element type (and its position for
// WITH ORDINALITY), named as PostgreSQL names the function's columns.
func (w *writer) duckUnnest(fc *pg_query.FuncCall, vals []*string, elem, alias string, cols []string) {
	n := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}
	w.duckEdit("unnest", n, "unnest() in FROM", func(x *pg_query.Node) {
		var rows []*pg_query.Node
		for i, v := range vals {
			var c *pg_query.Node
			switch {
			case v == nil:
				c = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
			case isInt(elem):
				c = pg_query.MakeAConstStrNode(*v, -1)
			case elem == "bool":
				c = pg_query.MakeAConstStrNode(map[string]string{"t": "true", "f": "false"}[*v], -1)
			default:
				c = pg_query.MakeAConstStrNode(*v, -1)
			}
			row := []*pg_query.Node{duckCast(c, elem)}
			if len(cols) > 1 {
				row = append(row, duckCast(pg_query.MakeAConstStrNode(strconv.Itoa(i+1), -1), "int8"))
			}
			rows = append(rows, &pg_query.Node{Node: &pg_query.Node_List{List: &pg_query.List{Items: row}}})
		}
		a := &pg_query.Alias{Aliasname: alias}
		for _, c := range cols {
			a.Colnames = append(a.Colnames, pg_query.MakeStrNode(c))
		}
		x.Node = &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
			Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{ValuesLists: rows}}},
			Alias:    a,
		}}
	})
}

// duckMayHoldArrays reports whether statement n may hold an array: a
// construct of one, or a reference to a table of s with an array column
// or to a view. (A CTE's name is no table of s: its query is visited on
// its own; a table s does not know fails with 42P01.)
func duckMayHoldArrays(n *pg_query.Node, s *schema.Snapshot) bool {
	found := false
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if found {
			return
		}
		switch x := m.Interface().(type) {
		case *pg_query.A_ArrayExpr, *pg_query.A_Indirection:
			found = true
		case *pg_query.TypeName:
			found = len(x.ArrayBounds) > 0
		case *pg_query.A_Expr:
			op := opName(x.Name)
			found = x.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ANY || x.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL ||
				op == "@>" || op == "<@" || op == "&&"
		case *pg_query.FuncCall:
			switch schema.FuncName(x) {
			case "array_agg", "array_length", "cardinality", "array_to_string", "string_to_array", "unnest":
				found = true
			}
		case *pg_query.RangeFunction:
			found = true
		case *pg_query.RangeVar:
			t := s.Table(x.Relname)
			found = t != nil && (t.View || slices.ContainsFunc(t.Columns, func(c schema.Column) bool { return schema.IsArray(c.Type) }))
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				visit(v.Message())
			}
			return !found
		})
	}
	visit(n.ProtoReflect())
	return found
}

// arrays rewrites the array constructs of out, DuckDB's copy of
// statement n, as the SQLite writer found them (see above).
func (d *duck) arrays(n, out *pg_query.Node) {
	if !duckMayHoldArrays(n, d.schema) {
		return
	}
	e := &duckArrayEdits{edits: map[duckKey]func(*pg_query.Node){}, nodes: map[protoreflect.ProtoMessage]bool{}}
	var own func(m protoreflect.Message)
	own = func(m protoreflect.Message) {
		e.nodes[m.Interface()] = true
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					own(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				own(v.Message())
			}
			return true
		})
	}
	own(n.ProtoReflect())
	if _, err := write(&writer{d: driver.SQLite, schema: d.schema, duck: true, duckArrays: e}, n); err != nil {
		// CheckDuckDB, which runs the same writer, has refused the
		// statement already; without the rewrites DuckDB could read
		// an array's text otherwise, so it is refused here too.
		var pe *pgerr.Error
		msg := err.Error()
		if errors.As(err, &pe) {
			msg = strings.TrimSuffix(strings.TrimPrefix(pe.Message, "shepherd cannot write "), " for SQLite replicas")
		}
		d.refuse("%s", msg)
	}
	if e.unkeyed != "" {
		d.refuse("%s in a statement shepherd has rewritten", e.unkeyed)
	}
	applied := map[duckKey]bool{}
	apply := func(x *pg_query.Node, rel string, of *pg_query.Node) bool {
		kind, loc, ok := nodeKey(of)
		if !ok {
			return false
		}
		k := duckKey{rel: rel, kind: kind, loc: loc}
		f := e.edits[k]
		if f == nil {
			return false
		}
		applied[k] = true
		f(x)
		return true
	}
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if x, ok := m.Interface().(*pg_query.Node); ok {
			// A rewrite may leave a node another rewrite applies to
			// (a cast's constant): until none does.
			for range 4 {
				done := false
				switch {
				case x.GetAExpr() != nil && (x.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP_ANY || x.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL):
					done = apply(x, "any", x.GetAExpr().Rexpr)
				case x.GetAExpr() != nil && x.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP && x.GetAExpr().Lexpr != nil:
					done = apply(x, "op", x.GetAExpr().Lexpr)
				case x.GetRangeFunction() != nil:
					if items := x.GetRangeFunction().Functions; len(items) == 1 {
						if parts := items[0].GetList().GetItems(); len(parts) > 0 {
							done = apply(x, "unnest", parts[0])
						}
					}
				case x.GetSortBy() != nil:
					done = apply(x, "sort", x.GetSortBy().Node)
				case x.GetAIndirection() != nil:
					done = apply(x, "subscript", x.GetAIndirection().Arg)
				case x.GetAlterTableCmd() != nil:
					d.arrayDefault(out, x.GetAlterTableCmd())
				case x.GetColumnDef() != nil:
					if t := x.GetColumnDef().TypeName; t != nil && len(t.ArrayBounds) > 0 {
						// The canonical text (arrayDDLType).
						x.GetColumnDef().TypeName = &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: t.Location}
					}
				}
				if !done {
					done = apply(x, "", x)
				}
				if !done {
					break
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				visit(v.Message())
			}
			return true
		})
	}
	visit(out.ProtoReflect())
	for k := range e.edits {
		if !applied[k] {
			d.refuse("arrays in this statement (an array construct shepherd could not place)")
		}
	}
}

// arrayDefault writes ALTER COLUMN c SET DEFAULT v of an array column as
// the canonical text of v. (The SQLite writer writes the default from
// the catalog, not from the statement.)
func (d *duck) arrayDefault(stmt *pg_query.Node, cmd *pg_query.AlterTableCmd) {
	at := stmt.GetAlterTableStmt()
	if at == nil || cmd.Subtype != pg_query.AlterTableType_AT_ColumnDefault || cmd.Def == nil {
		return
	}
	t := d.schema.Table(at.Relation.GetRelname())
	if t == nil {
		return
	}
	c := t.Column(cmd.Name)
	if c == nil || !schema.IsArray(c.Type) {
		return
	}
	v := cmd.Def
	for v.GetTypeCast() != nil {
		v = v.GetTypeCast().Arg
	}
	k := v.GetAConst()
	switch {
	case k != nil && k.Isnull:
	case k != nil && k.GetSval() != nil:
		text, err := CanonicalArray(k.GetSval().Sval, c.Type)
		if err != nil {
			d.refuse("SET DEFAULT of this array constant")
		}
		v = pg_query.MakeAConstStrNode(text, -1)
	default:
		d.refuse("SET DEFAULT of an array column to other than a string constant")
	}
	cmd.Def = v
}
