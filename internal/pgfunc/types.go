package pgfunc

import "strings"

// Literal is the type of a quoted string or NULL that nothing gave a
// type yet (PostgreSQL's "unknown"): it takes the type its context
// needs, and is text where nothing needs one. The empty name is a type
// shepherd cannot tell, which may be any.
const Literal = "unknown"

// numericRank orders the numeric types the way PostgreSQL's implicit
// casts go: each casts implicitly to every type of higher rank.
var numericRank = map[string]int{"int2": 1, "int4": 2, "int8": 3, "numeric": 4, "float4": 5, "float8": 6}

// Category is PostgreSQL's typcategory of the types shepherd knows; 0
// for types that only match themselves here.
func Category(name string) byte {
	switch name {
	case "int2", "int4", "int8", "numeric", "float4", "float8":
		return 'N'
	case "text", "varchar", "bpchar", "name":
		return 'S'
	case "date", "timestamp", "timestamptz", "time":
		return 'D'
	case "interval":
		return 'T'
	case "bool":
		return 'B'
	}
	return 0
}

// Preferred reports typispreferred.
func Preferred(name string) bool {
	switch name {
	case "float8", "text", "timestamptz", "interval", "bool":
		return true
	}
	return false
}

// ImplicitCast reports whether PostgreSQL casts a to b implicitly (for
// two types of the same category).
func ImplicitCast(a, b string) bool {
	if a == b {
		return true
	}
	switch Category(a) {
	case 'N':
		return numericRank[a] < numericRank[b]
	case 'S':
		// Every pair casts implicitly, except name to varchar or bpchar.
		return Category(b) == 'S' && (a != "name" || b == "text")
	case 'D':
		switch a {
		case "date":
			return b == "timestamp" || b == "timestamptz"
		case "timestamp":
			return b == "timestamptz"
		case "time":
			return b == "interval" || b == "timetz"
		}
	}
	return false
}

// NumericRank is the place of a numeric type in the chain of implicit
// casts (int2 < int4 < int8 < numeric < float4 < float8), 0 for others.
func NumericRank(name string) int { return numericRank[name] }

// CommonType is the type PostgreSQL's select_common_type gives a list of
// expressions of the named types (CASE, COALESCE, GREATEST, VALUES,
// UNION, an anycompatible argument): untyped literals follow the typed
// expressions and are text when all are literals; "" when PostgreSQL
// fails or shepherd cannot tell.
func CommonType(names []string) string {
	if len(names) == 0 {
		return ""
	}
	p := ""
	for _, t := range names {
		switch {
		case t == "":
			return ""
		case t == Literal || t == p:
		case p == "":
			p = t
		case Category(t) == 0 || Category(t) != Category(p):
			return "" // PostgreSQL fails, or shepherd cannot tell
		case !Preferred(p) && ImplicitCast(p, t) && !ImplicitCast(t, p):
			p = t
		}
	}
	if p == "" {
		return "text"
	}
	return p
}

// IsArray reports whether a type name is an array type's (_int4).
func IsArray(name string) bool { return strings.HasPrefix(name, "_") }

// element is an array type's element type, "" for other types.
func element(name string) string {
	if e, ok := strings.CutPrefix(name, "_"); ok {
		return e
	}
	return ""
}
