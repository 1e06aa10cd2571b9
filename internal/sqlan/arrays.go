package sqlan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Array types (schema's "_int4", ...) are described with PostgreSQL's
// OIDs and carried as text: MariaDB and SQLite store PostgreSQL's output
// text of the array (see dialect/arrays.go), which is what PostgreSQL
// answers too.
func init() {
	for elem, oid := range arrayOIDs {
		if !schema.StoresArraysOf(elem) {
			continue
		}
		t := "_" + elem
		typeByName[t] = ColumnGuess{Type: answer.Text, OID: oid}
		typeOIDs[t] = oid
	}
}

// canonicalArrayArgs rewrites, in place, each parameter the statement
// takes as an array (a value for an array column, $1 in x = ANY($1))
// into PostgreSQL's output text of the array, so that every replica
// stores and compares the same bytes whatever form the client sent
// (lib/pq quotes every element, pgx's binary arrays reach here as
// pgtype's text). Text PostgreSQL refuses gets its error, before any
// replica runs the statement.
func (s *Stmt) canonicalArrayArgs(args []driver.Arg) error {
	for i, t := range s.paramTypes {
		if i >= len(args) || !schema.IsArray(t) || args[i].Null {
			continue
		}
		v, err := dialect.CanonicalArray(args[i].Text, t)
		if err != nil {
			return err
		}
		args[i].Text = v
	}
	return nil
}

// arrayExprType types ARRAY[...]: the array of its elements' common
// type (text for untyped strings), for the element types shepherd
// stores arrays of.
func (t *typer) arrayExprType(a *pg_query.A_ArrayExpr) pgType {
	elem := t.commonOf(a.Elements).name
	if elem == litType || elem == "" && len(a.Elements) > 0 {
		elem = "text"
	}
	if !schema.StoresArraysOf(elem) {
		return pgType{}
	}
	return typ("_" + elem)
}

// arrayFuncType types array_agg(x), whose element type must be one
// shepherd stores arrays of; ok is false for other functions (pgfunc
// types them).
func arrayFuncType(name string, args []pgType) (p pgType, ok bool) {
	if name != "array_agg" {
		return pgType{}, false
	}
	if len(args) != 1 {
		return pgType{}, true
	}
	elem := args[0].name
	if elem == litType {
		elem = "text"
	}
	if !schema.StoresArraysOf(elem) {
		return pgType{}, true
	}
	return typ("_" + elem), true
}

// unnestItem types FROM unnest(a) [WITH ORDINALITY] [AS t(c, n)]: one
// column of a's element type named as the alias (or unnest), and bigint
// ordinality.
func (t *typer) unnestItem(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, item scopeItem) scopeItem {
	if len(fc.Args) != 1 {
		return item
	}
	elem := schema.ArrayElement(t.typeOf(fc.Args[0]).name)
	if elem == "" {
		return item
	}
	if item.alias == "" {
		item.alias = "unnest"
	}
	r := &rel{cols: []relCol{{name: item.alias, t: typ(elem)}}}
	if rf.Ordinality {
		r.cols = append(r.cols, relCol{name: "ordinality", t: typ("int8")})
	}
	item.rel = renamed(r, rf.Alias.GetColnames())
	return item
}

// subscriptType types a[i], one subscript of an array: its element type.
// Slices and several subscripts are left untyped (the writers refuse
// them).
func (t *typer) subscriptType(ind *pg_query.A_Indirection) pgType {
	if len(ind.Indirection) != 1 {
		return pgType{}
	}
	if ix := ind.Indirection[0].GetAIndices(); ix == nil || ix.IsSlice {
		return pgType{}
	}
	elem := schema.ArrayElement(t.typeOf(ind.Arg).name)
	if elem == "" {
		return pgType{}
	}
	return typ(elem)
}
