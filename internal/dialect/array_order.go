package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// The order of arrays. The canonical text does not sort as PostgreSQL
// orders arrays ('{10}' < '{9}' as text), so SQLite and DuckDB compare
// and sort an array by its sort key (answer.ArraySortKey, computed by
// arrayKeyFunction): bytes that compare as btarraycmp orders the arrays,
// element by element, a NULL element after every value, a prefix before
// the longer array. <, <=, > and >= compare the keys; ORDER BY an array
// sorts by its key; min() and max() take the least or greatest key and
// give back its array (arrayUnkeyFunction). MariaDB refuses them.

const (
	arrayKeyFunction   = "shepherd_array_key"
	arrayUnkeyFunction = "shepherd_array_unkey"
)

// DuckArrayKey and DuckArrayUnkey are the sort key functions' names for
// the DuckDB driver.
const (
	DuckArrayKey   = arrayKeyFunction
	DuckArrayUnkey = arrayUnkeyFunction
)

func init() {
	duckFuncs[DuckArrayKey] = true
	duckFuncs[DuckArrayUnkey] = true
}

// arrayKind is the kind of element answer.ArraySortKey takes for arrays
// of type t.
func arrayKind(t string) string {
	switch elem := schema.ArrayElement(t); {
	case isInt(elem):
		return "int"
	case elem == "bool":
		return "bool"
	}
	return "text"
}

// arrayKeyOf writes the sort key of array value n of type t.
func (w *writer) arrayKeyOf(n *pg_query.Node, t string) {
	w.str(arrayKeyFunction + "(")
	w.arrayValue(n, t)
	w.str(", ")
	w.literal(arrayKind(t))
	w.str(")")
}

func duckKeyOf(n *pg_query.Node, t string) *pg_query.Node {
	return duckCall(DuckArrayKey, n, pg_query.MakeAConstStrNode(arrayKind(t), -1))
}

// arrayCompare writes l op r for op <, <=, > or >= of arrays of type t.
func (w *writer) arrayCompare(op string, l, r *pg_query.Node, t string) {
	if !w.lite() {
		w.refuse("operator %s on arrays (the replicas hold them as text)", op)
	}
	w.duckEdit("op", l, "operator "+op+" on arrays", func(x *pg_query.Node) {
		e := x.GetAExpr()
		x.Node = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)},
			duckKeyOf(e.Lexpr, t), duckKeyOf(e.Rexpr, t), -1).Node
	})
	w.str("(")
	w.arrayKeyOf(l, t)
	w.str(" " + op + " ")
	w.arrayKeyOf(r, t)
	w.str(")")
}

// arrayMinMax writes min(x) or max(x) of arrays of type t: the array of
// the least or greatest sort key. Refused over a window, with FILTER or
// DISTINCT, and with MariaDB replicas.
func (w *writer) arrayMinMax(name string, fc *pg_query.FuncCall, t string) {
	switch {
	case !w.lite():
		w.refuse("%s() of arrays (the replicas hold them as text, which does not sort as the array)", name)
	case fc.Over != nil || fc.AggFilter != nil || fc.AggDistinct || len(fc.AggOrder) > 0:
		w.refuse("%s() of arrays over a window, with FILTER or with DISTINCT", name)
	}
	n := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}
	w.duckEdit("", n, name+"() of arrays", func(x *pg_query.Node) {
		agg := duckCall(name, duckKeyOf(x.GetFuncCall().Args[0], t))
		x.Node = duckCall(DuckArrayUnkey, agg, pg_query.MakeAConstStrNode(arrayKind(t), -1)).Node
	})
	w.str(arrayUnkeyFunction + "(" + name + "(")
	w.arrayKeyOf(fc.Args[0], t)
	w.str("), ")
	w.literal(arrayKind(t))
	w.str(")")
}

// arraySort writes ORDER BY item sb of SELECT s when its key is an
// array (false otherwise): by the array's sort key. The key must be the
// item itself, an expression or a column that is also the output column
// of its name, in a SELECT that is neither DISTINCT nor a set operation
// (DuckDB sorts those by output columns only); else it is refused.
func (w *writer) arraySort(s *pg_query.SelectStmt, sb *pg_query.SortBy, key *pg_query.Node, targets []*pg_query.Node) bool {
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		// A compound's output columns are its first member's.
		first := s.Larg
		for first.Op != pg_query.SetOperation_SETOP_NONE {
			first = first.Larg
		}
		w.pushScope(first.FromClause)
		defer w.popScope()
		targets = first.TargetList
	}
	t := w.typeOf(key)
	if i, ok := ordinal(key); ok && targets != nil {
		if out := w.outputAt(targets, i); out != nil {
			t = w.typeOf(out)
		}
	}
	if !schema.IsArray(t) {
		return false
	}
	_, isOrdinal := ordinal(sb.Node)
	same := key == sb.Node || sameColumn(key, sb.Node)
	switch {
	case !w.lite():
		w.refuse("ORDER BY a value of type %s (the replicas hold it as text)", t)
	case isOrdinal || !same || s.Op != pg_query.SetOperation_SETOP_NONE || len(s.DistinctClause) > 0 ||
		sb.SortbyDir == pg_query.SortByDir_SORTBY_USING || len(sb.UseOp) > 0:
		w.refuse("ORDER BY an array by position, by the name of another output, with USING, or in a DISTINCT or set operation")
	}
	// (A SortBy has no position of its own: its key's names it.)
	w.duckEdit("sort", sb.Node, "ORDER BY an array", func(x *pg_query.Node) {
		o := x.GetSortBy()
		x.Node = &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{Node: duckKeyOf(o.Node, t), SortbyDir: o.SortbyDir,
			SortbyNulls: o.SortbyNulls, Location: -1}}
	})
	w.arrayKeyOf(sb.Node, t)
	desc := sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC
	if desc {
		w.str(" DESC")
	}
	switch nullsFirst := desc; sb.SortbyNulls {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		w.str(" NULLS FIRST")
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		w.str(" NULLS LAST")
	default:
		if nullsFirst {
			w.str(" NULLS FIRST")
		} else {
			w.str(" NULLS LAST")
		}
	}
	return true
}

// sameColumn reports whether a and b are references to one column,
// written alike.
func sameColumn(a, b *pg_query.Node) bool {
	x, y := a.GetColumnRef(), b.GetColumnRef()
	if x == nil || y == nil || len(x.Fields) != len(y.Fields) {
		return false
	}
	for i := range x.Fields {
		if x.Fields[i].GetString_() == nil || x.Fields[i].GetString_().GetSval() != y.Fields[i].GetString_().GetSval() {
			return false
		}
	}
	return true
}
