package dialect

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// commonType is the type PostgreSQL gives CASE, COALESCE, GREATEST and
// LEAST (select_common_type): of all their arguments, not the first one's.
// Among numbers the category's preferred direction wins: any float makes
// float8 (float4 only when all are float4), else any numeric makes
// numeric, else the widest integer. "" when shepherd cannot tell (types
// of different categories, or none known). Untyped arguments (NULL, a
// string literal) take the others' type.
func (w *writer) commonType(args []*pg_query.Node) string {
	common := ""
	for _, a := range args {
		t := w.typeOf(a)
		switch {
		case t == "" && untyped(a):
		case t == "":
			return ""
		case common == "" || common == t:
			common = t
		case isNumber(common) && isNumber(t):
			common = widerNumber(common, t)
		default:
			return ""
		}
	}
	return common
}

// untyped reports whether n is a NULL or a string literal, which take
// the type of the other arguments.
func untyped(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && (c.Isnull || c.GetSval() != nil)
}

// widerNumber is the common type of two number types.
func widerNumber(a, b string) string {
	switch {
	case a == b:
		return a
	case strings.HasPrefix(a, "float") || strings.HasPrefix(b, "float"):
		return "float8"
	case a == "numeric" || b == "numeric":
		return "numeric"
	case a == "int8" || b == "int8":
		return "int8"
	case a == "int4" || b == "int4":
		return "int4"
	}
	return "int2"
}

// nullifType is the type of NULLIF(l, r): l's, unless resolving the
// implied l = r converts l to another type. PostgreSQL has = for any two
// integer types and for float4 with float8, so those keep l's type; an
// integer compared with a numeric or a float, or a numeric with a float,
// is converted to the wider one (NULLIF(1, 2.5) is numeric). An untyped l
// takes r's type.
func (w *writer) nullifType(l, r *pg_query.Node) string {
	lt, rt := w.typeOf(l), w.typeOf(r)
	switch {
	case lt == "" && untyped(l):
		return rt
	case !isNumber(lt) || !isNumber(rt):
		return lt
	case isInt(lt) && isInt(rt), strings.HasPrefix(lt, "float") && strings.HasPrefix(rt, "float"):
		return lt
	}
	return widerNumber(lt, rt)
}
