package schema

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// arrayElements are the element types whose arrays shepherd stores: its
// array type is named as PostgreSQL names it, "_" and the element's name
// (text[] is "_text"). Their values have one text form each (the
// element's own output is canonical), so MariaDB and SQLite keep an array
// as PostgreSQL's text of it and every engine compares two arrays for
// equality alike. numeric[] (whose elements keep their scale as written),
// the time types and char(n)[] are left out.
var arrayElements = map[string]bool{"int2": true, "int4": true, "int8": true, "bool": true, "text": true, "varchar": true}

// arrayTypeOf is TypeOf for a type with array bounds (text[], int[3],
// integer[][]: PostgreSQL ignores the bounds, all are one type). Element
// modifiers (varchar(10)[]) are refused: PostgreSQL checks each element
// against them, which the replicas storing text would not.
func arrayTypeOf(tn *pg_query.TypeName) (typ string, ok bool) {
	if tn.Setof || tn.PctType || len(tn.Typmods) > 0 {
		return "", false
	}
	elem := &pg_query.TypeName{Names: tn.Names, Location: tn.Location}
	t, _, serial, ok := TypeOf(elem)
	if !ok || serial || !arrayElements[t] {
		return "", false
	}
	return "_" + t, true
}

// IsArray reports whether typ names an array type ("_int4").
func IsArray(typ string) bool { return strings.HasPrefix(typ, "_") }

// ArrayElement is the element type of array type typ ("" if typ is not
// an array type).
func ArrayElement(typ string) string {
	if !IsArray(typ) {
		return ""
	}
	return typ[1:]
}

// StoresArraysOf reports whether shepherd stores arrays of element type
// elem (an array column's element types).
func StoresArraysOf(elem string) bool { return arrayElements[elem] }
