package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// Subscripts of arrays: a[i], PostgreSQL's element i of a counted from 1
// (the default lower bound, the only one shepherd stores), NULL when i is
// outside the array, NULL or the element NULL. The engines compute it
// from the canonical text (arrayGetFunction, a Go function on SQLite and
// DuckDB); the element's text is read back as the element type. Slices
// (a[1:2]), several subscripts and MariaDB are refused.

// arrayGetFunction is a[i] (driver/sqlite's arrayfuncs.go and
// driver/duckdb's arrays.go register it): the element's text, NULL for
// a NULL element or an i outside the array.
const arrayGetFunction = "shepherd_array_get"

// DuckArrayGet is arrayGetFunction's name for the DuckDB driver.
const DuckArrayGet = arrayGetFunction

func init() { duckFuncs[DuckArrayGet] = true }

// subscript reads a[i] of an array type: the array, the subscript and
// the element type; ok is false for other indirections (field selection,
// slices, several subscripts) and for what is no array.
func (w *writer) subscript(ind *pg_query.A_Indirection) (arr, idx *pg_query.Node, t string, ok bool) {
	if len(ind.Indirection) != 1 {
		return nil, nil, "", false
	}
	ix := ind.Indirection[0].GetAIndices()
	if ix == nil || ix.IsSlice || ix.Uidx == nil {
		return nil, nil, "", false
	}
	t = w.typeOf(ind.Arg)
	if !schema.IsArray(t) {
		return nil, nil, "", false
	}
	return ind.Arg, ix.Uidx, t, true
}

// subscriptType is the type of a[i]: a's element type ("" if it is no
// subscript of an array).
func (w *writer) subscriptType(ind *pg_query.A_Indirection) string {
	if _, _, t, ok := w.subscript(ind); ok {
		return schema.ArrayElement(t)
	}
	return ""
}

// arraySubscript writes a[i] for SQLite: the element's text as the
// element type (an integer, a boolean as 1 or 0, the text).
func (w *writer) arraySubscript(ind *pg_query.A_Indirection) {
	arr, idx, t, ok := w.subscript(ind)
	if !ok {
		if len(ind.Indirection) == 1 && ind.Indirection[0].GetAIndices().GetIsSlice() {
			w.refuse("array slices")
		}
		w.refuse("subscripts and field selection")
	}
	if !w.lite() {
		w.refuse("array subscripts")
	}
	switch it := w.typeOf(idx); {
	case it == "int4" || it == "int2":
	case it == "" && (idx.GetParamRef() != nil || idx.GetAConst() != nil):
	default:
		// PostgreSQL: 42804 for a bigint or numeric subscript.
		w.refuse("a subscript of type %s (only integer)", it)
	}
	elem := schema.ArrayElement(t)
	w.duckSubscript(arr, idx, elem)
	get := func() {
		w.str(arrayGetFunction + "(")
		w.arrayValue(arr, t)
		w.str(", ")
		w.typed(idx, "int4")
		w.str(")")
	}
	switch {
	case isInt(elem):
		w.str("CAST(")
		get()
		w.str(" AS INTEGER)")
	case elem == "bool":
		w.str("(CASE ")
		get()
		w.str(" WHEN 't' THEN 1 WHEN 'f' THEN 0 END)")
	default:
		get()
	}
}

// duckSubscript rewrites DuckDB's a[i] as DuckArrayGet's text cast to
// the element type; the subscript is cast to integer (a string constant
// is read as PostgreSQL reads it, or refused by the cast's check).
func (w *writer) duckSubscript(arr, idx *pg_query.Node, elem string) {
	w.duckEdit("subscript", arr, "an array subscript", func(x *pg_query.Node) {
		ind := x.GetAIndirection()
		u := ind.Indirection[0].GetAIndices().Uidx
		get := duckCall(DuckArrayGet, ind.Arg, duckCast(u, "int4"))
		if elem != "text" {
			get = duckCast(get, elem)
		}
		x.Node = get.Node
	})
}
