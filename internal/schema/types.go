package schema

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// typeAliases maps the names the parser leaves in a TypeName (after
// pg_catalog.) onto PostgreSQL's internal type names.
var typeAliases = map[string]string{
	"int2": "int2", "smallint": "int2",
	"int4": "int4", "int": "int4", "integer": "int4",
	"int8": "int8", "bigint": "int8",
	"numeric": "numeric", "decimal": "numeric",
	"float4": "float4", "real": "float4",
	"float8": "float8", "double precision": "float8",
	"bool": "bool", "boolean": "bool",
	"text": "text", "varchar": "varchar", "bpchar": "bpchar", "char": "bpchar",
	"bytea": "bytea",
	"date":  "date", "time": "time", "timestamp": "timestamp", "timestamptz": "timestamptz",
	"uuid": "uuid", "json": "json", "jsonb": "jsonb", "interval": "interval",
}

// serials maps the SERIAL pseudo-types onto their integer types.
var serials = map[string]string{
	"smallserial": "int2", "serial2": "int2",
	"serial": "int4", "serial4": "int4",
	"bigserial": "int8", "serial8": "int8",
}

// TypeOf returns the internal name and modifiers of a type as written in
// DDL or a cast, and whether it is a SERIAL pseudo-type. ok is false for
// types shepherd does not know (domains, user types, arrays of other
// element types than arrays.go's): the caller refuses those. An array
// type is "_" and its element type's name.
func TypeOf(tn *pg_query.TypeName) (typ string, mods []int32, serial bool, ok bool) {
	if tn != nil && len(tn.ArrayBounds) > 0 {
		typ, ok := arrayTypeOf(tn)
		return typ, nil, false, ok
	}
	if tn == nil || tn.Setof || tn.PctType {
		return "", nil, false, false
	}
	var names []string
	for _, n := range tn.Names {
		if s := n.GetString_(); s != nil {
			names = append(names, s.Sval)
		}
	}
	if len(names) == 2 && names[0] == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return "", nil, false, false
	}
	name := strings.ToLower(names[0])
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return "", nil, false, false
		}
		mods = append(mods, c.GetIval().Ival)
	}
	if t, ok := serials[name]; ok {
		return t, nil, true, len(mods) == 0
	}
	t, ok := typeAliases[name]
	if !ok {
		return "", nil, false, false
	}
	switch t {
	case "timestamp", "timestamptz", "time":
		// Precision is accepted and ignored: every replica keeps
		// microseconds.
		mods = nil
	case "interval":
		if len(mods) > 0 {
			return "", nil, false, false
		}
	}
	return t, mods, false, true
}

// IsInteger reports whether typ is one of the integer types.
func IsInteger(typ string) bool { return typ == "int2" || typ == "int4" || typ == "int8" }

// IsText reports whether typ is one of the character types.
func IsText(typ string) bool { return typ == "text" || typ == "varchar" || typ == "bpchar" }
