package dialect

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Arrays (text[], integer[], bigint[], smallint[], boolean[],
// varchar[]: schema.arrayElements) are kept by MariaDB and SQLite as
// PostgreSQL's output text of the array ({go,"a b",NULL}, {1,2,3}), and
// only shepherd writes that text: every array constant and parameter is
// read as PostgreSQL's array input reads it and written again as
// array_out writes it (CanonicalArray), so that all replicas store the
// same bytes, print them as PostgreSQL prints the array, and compare
// two arrays for equality as PostgreSQL does (the text is one-to-one
// with the value for these element types). Arrays of one dimension only,
// with the default lower bound 1: anything else is refused. What the
// text does not give, order (ORDER BY an array, < between arrays), is
// refused; membership (= ANY), containment and the array functions the
// engines can compute from the text are written for each engine.

// Function names registered in both SQLite builds (driver/sqlite's
// arrayfuncs.go keeps the same names).
const (
	arrayAnyFunction      = "shepherd_array_any"
	arrayLengthFunction   = "shepherd_array_length"
	arrayContainsFunction = "shepherd_array_contains"
	arrayOverlapFunction  = "shepherd_array_overlap"
	arrayToStringFunction = "shepherd_array_to_string"
	stringToArrayFunction = "shepherd_string_to_array"
	arrayQuoteFunction    = "shepherd_array_quote"
)

// arrayElemPattern matches one element of an array's canonical text in a
// MariaDB (PCRE) regular expression: a quoted element, whose only
// escapes are \" and \\, or an unquoted one, which holds no comma,
// quote, brace, backslash or white space.
const arrayElemPattern = `"([^"\\]|\\.)*"|[^,"]*`

// CanonicalArray reads s as PostgreSQL reads a value of array type t
// ("_int4") and returns PostgreSQL's output text of it. Input PostgreSQL
// refuses gets its error (22P02, 22003); arrays of more than one
// dimension and explicit bounds ([0:1]={...}) are refused (0A000).
func CanonicalArray(s, t string) (string, error) {
	elem := schema.ArrayElement(t)
	items, err := parseArrayText(s)
	if err != nil {
		return "", err
	}
	out := make([]*string, len(items))
	for i, it := range items {
		if it == nil {
			continue
		}
		v, err := arrayElementInput(*it, elem)
		if err != nil {
			return "", err
		}
		out[i] = &v
	}
	return answer.FormatArray(out), nil
}

// parseArrayText reads a one-dimensional array literal (answer.ParseArray)
// with PostgreSQL's errors; nil items are NULL elements.
func parseArrayText(s string) ([]*string, error) {
	items, err := answer.ParseArray(s)
	var ae *answer.ArrayError
	switch {
	case err == nil:
		return items, nil
	case errors.As(err, &ae) && ae.Dims:
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd supports arrays of one dimension without explicit bounds only: %q", s)
	case ae != nil:
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", s).WithDetail("%s", ae.Detail)
	}
	return nil, err
}

// arrayElementInput reads one element as the element type's input
// function does and returns its output text.
func arrayElementInput(v, elem string) (string, error) {
	switch elem {
	case "int2", "int4", "int8":
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[elem]
		name := map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint"}[elem]
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return "", pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", v, name)
		case err != nil || strings.Contains(v, "_"):
			return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, v)
		}
		return strconv.FormatInt(n, 10), nil
	case "bool":
		// boolin: true, yes, on, 1, false, no, off, 0 or a unique
		// prefix of one, in any case, with white space around.
		lower := strings.ToLower(strings.TrimSpace(v))
		for _, w := range []struct {
			word string
			min  int
			v    string
		}{{"true", 1, "t"}, {"yes", 1, "t"}, {"on", 2, "t"}, {"1", 1, "t"}, {"false", 1, "f"}, {"no", 1, "f"}, {"off", 2, "f"}, {"0", 1, "f"}} {
			if len(lower) >= w.min && strings.HasPrefix(w.word, lower) {
				return w.v, nil
			}
		}
		return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type boolean: \"%s\"", v)
	case "text", "varchar":
		if strings.IndexByte(v, 0) >= 0 {
			return "", pgerr.New("22021", "invalid byte sequence for encoding \"UTF8\": 0x00")
		}
		return v, nil
	}
	return "", pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support arrays of %s", elem)
}

// arrayDDLType writes the column type of an array column: the canonical
// text. Refused in a key: MariaDB cannot index unbounded text, and a
// key of arrays is rare.
func (w *writer) arrayDDLType(c schema.Column, keyed bool) {
	w.arraysHere()
	if keyed {
		w.refuse("array columns in a key")
	}
	if w.my() {
		w.str("LONGTEXT")
		return
	}
	w.str("TEXT")
}

// arrayValue writes n where a value of array type t is expected: a
// string constant, ARRAY[...] of constants or a cast of either as the
// constant canonical text, a parameter (whose value the session writes
// canonically, sqlan's Stmt.CheckArgs), NULL, or a value of type t.
// Computed arrays are refused: their text would not be canonical.
func (w *writer) arrayValue(n *pg_query.Node, t string) {
	w.arraysHere()
	if tc := n.GetTypeCast(); tc != nil {
		ct, _, _, ok := schema.TypeOf(tc.TypeName)
		if !ok || ct != t && !(schema.IsArray(ct) && schema.IsText(schema.ArrayElement(ct)) && schema.IsText(schema.ArrayElement(t))) {
			w.refuse("a cast to %s where %s is expected", schema.TypeText(tc.TypeName), arrayTypeName(t))
		}
		w.duckUncast(tc)
		w.arrayValue(tc.Arg, t)
		return
	}
	switch {
	case n.GetParamRef() != nil:
		p := int(n.GetParamRef().Number)
		w.paramType(p, t)
		w.param(p, 0)
	case n.GetAConst() != nil && n.GetAConst().Isnull:
		w.str("NULL")
	case n.GetAConst() != nil && n.GetAConst().GetSval() != nil:
		v, err := CanonicalArray(n.GetAConst().GetSval().Sval, t)
		if err != nil {
			var pe *pgerr.Error
			if errors.As(err, &pe) && pe.Code == pgerr.FeatureNotSupported {
				w.refuse("%s", pe.Message)
			}
			panic(failure{pe})
		}
		w.duckConst(n, v)
		w.literal(v)
	case n.GetAArrayExpr() != nil:
		v := w.arrayConstructor(n.GetAArrayExpr(), t)
		w.duckConst(n, v)
		w.literal(v)
	default:
		if !w.canonicalArrayExpr(n, t) {
			w.refuse("a computed value of type %s (only constants, parameters, columns of the type and CASE or COALESCE of them)", arrayTypeName(t))
		}
		w.expr(n)
	}
}

// canonicalArrayExpr reports whether n, written as it is, gives the
// canonical text of an array of type t on MariaDB and SQLite: a column
// of the type (or EXCLUDED's), NULL, a constant already in canonical
// form, ARRAY[...] of constants, array_agg() or string_to_array() of the
// type, and CASE or COALESCE of such values. A constant in another form
// ('{ a }') written inside a CASE would be stored as it is, where
// PostgreSQL stores {a}.
func (w *writer) canonicalArrayExpr(n *pg_query.Node, t string) bool {
	switch {
	case n == nil:
		return true
	case n.GetColumnRef() != nil:
		if f := n.GetColumnRef().Fields; len(f) == 2 && f[0].GetString_().GetSval() == "excluded" {
			return true // the row proposed for insertion: written canonically
		}
		return w.typeOf(n) == t
	case n.GetAConst() != nil:
		c := n.GetAConst()
		if c.Isnull {
			return true
		}
		if c.GetSval() == nil {
			return false
		}
		v, err := CanonicalArray(c.GetSval().Sval, t)
		return err == nil && v == c.GetSval().Sval
	case n.GetTypeCast() != nil:
		ct, _, _, ok := schema.TypeOf(n.GetTypeCast().TypeName)
		return ok && (ct == t || schema.IsArray(ct) && schema.IsText(schema.ArrayElement(ct)) && schema.IsText(schema.ArrayElement(t))) &&
			w.canonicalArrayExpr(n.GetTypeCast().Arg, t)
	case n.GetAArrayExpr() != nil:
		ct := w.constructorType(n.GetAArrayExpr())
		if ct == t {
			return true
		}
		if ct == "" || !isInt(schema.ArrayElement(ct)) || !isInt(schema.ArrayElement(t)) {
			return false
		}
		if intBits[schema.ArrayElement(t)] < intBits[schema.ArrayElement(ct)] {
			// Written as its own type (expr): its elements are checked
			// against the narrower column type here, failing as
			// PostgreSQL's cast does (22003) before any replica stores
			// a value PostgreSQL refuses.
			w.arrayConstructor(n.GetAArrayExpr(), t)
		}
		return true
	case n.GetFuncCall() != nil:
		name := schema.FuncName(n.GetFuncCall())
		return (name == "array_agg" || name == "string_to_array") && w.typeOf(n) == t
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		for _, a := range ce.Args {
			if !w.canonicalArrayExpr(a.GetCaseWhen().Result, t) {
				return false
			}
		}
		return ce.Defresult == nil || w.canonicalArrayExpr(ce.Defresult, t)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if !w.canonicalArrayExpr(a, t) {
				return false
			}
		}
		return true
	}
	return false
}

// checkArraySelect refuses INSERT ... SELECT into array columns unless
// each such column's value is canonical (canonicalArrayExpr), so that
// every replica stores PostgreSQL's text of it.
func (w *writer) checkArraySelect(sel *pg_query.SelectStmt, types []*schema.Column) {
	var arrays []int
	for i, c := range types {
		if c != nil && schema.IsArray(c.Type) {
			arrays = append(arrays, i)
		}
	}
	if len(arrays) == 0 {
		return
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		w.refuse("INSERT ... SELECT into array columns of other than one plain SELECT")
	}
	w.pushScope(sel.FromClause)
	defer w.popScope()
	for _, i := range arrays {
		t := types[i].Type
		if i >= len(sel.TargetList) {
			return // PostgreSQL's error
		}
		v := sel.TargetList[i].GetResTarget().GetVal()
		if cr := v.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			w.refuse("INSERT ... SELECT * into array columns (list the columns)")
		}
		if !w.canonicalArrayExpr(v, t) {
			w.refuse("INSERT ... SELECT of a value for array column %q that is not a column of its type or a constant in PostgreSQL's output form", types[i].Name)
		}
	}
}

// arrayConstructor returns the canonical text of ARRAY[...] of constants.
func (w *writer) arrayConstructor(a *pg_query.A_ArrayExpr, t string) string {
	elem := schema.ArrayElement(t)
	items := make([]*string, len(a.Elements))
	for i, e := range a.Elements {
		for e.GetTypeCast() != nil {
			ct, _, _, ok := schema.TypeOf(e.GetTypeCast().TypeName)
			if !ok || ct != elem && !(schema.IsText(ct) && schema.IsText(elem)) {
				w.refuse("ARRAY[...] with an element cast to %s", schema.TypeText(e.GetTypeCast().TypeName))
			}
			e = e.GetTypeCast().Arg
		}
		c := e.GetAConst()
		var text string
		number := false
		switch {
		case c == nil:
			if e.GetAArrayExpr() != nil {
				w.refuse("multidimensional arrays")
			}
			w.refuse("ARRAY[...] of computed values (only constants)")
		case c.Isnull:
			continue
		case c.GetSval() != nil:
			text = c.GetSval().Sval
		case c.GetIval() != nil && isInt(elem):
			text = strconv.FormatInt(int64(c.GetIval().Ival), 10)
			number = true
		case c.GetFval() != nil && isInt(elem):
			text = c.GetFval().Fval // an integer beyond int4: checked below
			if strings.ContainsAny(text, ".eE") {
				// PostgreSQL rounds a numeric element (ARRAY[1.5]
				// is {2} in an integer[] column).
				w.refuse("ARRAY[...] of non-integer constants where %s is expected", arrayTypeName(t))
			}
			number = true
		case c.GetBoolval() != nil && elem == "bool":
			text = strconv.FormatBool(c.GetBoolval().Boolval)
		default:
			w.refuse("ARRAY[...] of constants of another type than %s", elem)
		}
		v, err := arrayElementInput(text, elem)
		if err != nil {
			var pe *pgerr.Error
			errors.As(err, &pe)
			if number && pe.Code == pgerr.NumericValueOutOfRange {
				// A number is cast to the element type, not read as
				// text: PostgreSQL's cast message.
				pe = pgerr.New(pgerr.NumericValueOutOfRange, "%s out of range", pgTypeWords[elem])
			}
			panic(failure{pe})
		}
		items[i] = &v
	}
	return answer.FormatArray(items)
}

// arrayTypeName is PostgreSQL's name of array type t, for messages.
func arrayTypeName(t string) string {
	if n, ok := pgTypeWords[schema.ArrayElement(t)]; ok {
		return n + "[]"
	}
	return schema.ArrayElement(t) + "[]"
}

// intBits are the integer types' widths.
var intBits = map[string]int{"int2": 16, "int4": 32, "int8": 64}

var pgTypeWords = map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint", "bool": "boolean", "text": "text", "varchar": "character varying"}

// constructorType is the type PostgreSQL gives ARRAY[...] of constants
// written without a cast: text[] for strings, integer[] or bigint[]
// for integers, boolean[] for booleans; "" when it cannot tell here.
func (w *writer) constructorType(a *pg_query.A_ArrayExpr) string {
	t := ""
	for _, e := range a.Elements {
		et := ""
		switch c := e.GetAConst(); {
		case e.GetTypeCast() != nil:
			et = w.typeOf(e)
		case c == nil:
			return ""
		case c.Isnull:
			continue
		case c.GetSval() != nil:
			et = "text"
		case c.GetIval() != nil:
			et = "int4"
		case c.GetFval() != nil && !strings.ContainsAny(c.GetFval().Fval, ".eE"):
			et = "int8"
		case c.GetBoolval() != nil:
			et = "bool"
		default:
			return ""
		}
		switch {
		case t == "" || t == et:
			t = et
		case isInt(t) && isInt(et):
			if et == "int8" {
				t = et
			}
		default:
			return ""
		}
	}
	if t == "" {
		t = "text"
	}
	if _, ok := pgTypeWords[t]; !ok {
		return ""
	}
	return "_" + t
}

// arrayAny writes x = ANY (arr) and x <> ALL (arr) for an array arr of
// type t that is not an ARRAY[...] list: PostgreSQL's answer, NULL when
// arr is NULL, false (= ANY) for an empty arr whatever x, else NULL when
// x is NULL or when no element equals x and some is NULL.
func (w *writer) arrayAny(op string, all bool, l, r *pg_query.Node, t string) {
	w.arraysHere()
	if !all && op != "=" || all && op != "<>" {
		w.refuse("%s %s (array) (only = ANY and <> ALL)", op, map[bool]string{false: "ANY", true: "ALL"}[all])
	}
	elem := schema.ArrayElement(t)
	if lt := w.typeOf(l); lt != "" && lt != elem && !(isInt(lt) && isInt(elem)) && !(isTextual(lt) && isTextual(elem)) {
		// PostgreSQL has no such operator (42883); the engines would
		// compare the texts.
		w.refuse("%s ANY (array) of a %s value and a %s", op, lt, arrayTypeName(t))
	}
	w.duckAny(all, r, t)
	if all {
		w.str("(NOT ")
	}
	elemText := func() {
		switch {
		case elem == "bool":
			// NULL stays NULL (an element 'f' is no NULL's).
			w.str("CASE WHEN ")
			w.typed(l, elem)
			w.str(" THEN 't' WHEN NOT ")
			w.typed(l, elem)
			w.str(" THEN 'f' END")
		case w.my():
			w.str("CAST(")
			w.typed(l, elem)
			w.str(" AS CHAR)")
		default:
			w.str("CAST(")
			w.typed(l, elem)
			w.str(" AS TEXT)")
		}
	}
	if w.lite() {
		w.str(arrayAnyFunction + "(")
		w.arrayValue(r, t)
		w.str(", ")
		elemText()
		w.str(")")
	} else {
		// The element's quoted text, escaped for the pattern, between
		// whole elements of the array's text.
		e := "(" + arrayElemPattern + ")"
		w.repeated(r, 4, func() {
			w.repeated(l, 6, func() {
				w.str("(CASE WHEN (")
				w.arrayValue(r, t)
				w.str(") IS NULL THEN NULL WHEN (")
				w.arrayValue(r, t)
				w.str(") = '{}' THEN FALSE WHEN (")
				w.typed(l, elem)
				w.str(") IS NULL THEN NULL WHEN (")
				w.arrayValue(r, t)
				w.str(`) REGEXP CONCAT('^\{(` + e + `,)*', REGEXP_REPLACE(`)
				if elem == "bool" || isInt(elem) {
					elemText()
				} else {
					w.myQuoted(func() { w.typed(l, elem) })
				}
				w.str(`, '([^[:alnum:]])', '\\\1'), '(,` + e + `)*\}$') THEN TRUE WHEN (`)
				w.arrayValue(r, t)
				w.str(`) REGEXP '^\{(` + e + `,)*NULL(,` + e + `)*\}$' THEN NULL ELSE FALSE END)`)
			})
		})
	}
	if all {
		w.str(")")
	}
}

// anyArrayType is the array type of the right operand of x op ANY (r)
// when it is not ARRAY[...]: a column's or cast's type, or for a
// parameter or string constant the array of x's type.
func (w *writer) anyArrayType(l, r *pg_query.Node) string {
	if t := w.typeOf(r); schema.IsArray(t) {
		return t
	}
	if r.GetParamRef() != nil || r.GetAConst() != nil && r.GetAConst().GetSval() != nil {
		lt := w.typeOf(l)
		if lt == "" {
			lt = "text"
		}
		if _, ok := pgTypeWords[lt]; ok {
			return "_" + lt
		}
	}
	return ""
}

// arrayOp writes a binary operator with an array operand; false when
// neither operand is an array. = and <> compare the canonical texts,
// which are equal exactly when the arrays are; the orderings are refused
// (the text does not sort as the array does).
func (w *writer) arrayOp(op string, l, r *pg_query.Node, lt, rt string) bool {
	if !schema.IsArray(lt) && !schema.IsArray(rt) {
		return false
	}
	t := lt
	if !schema.IsArray(t) {
		t = rt
	}
	w.arraysHere()
	switch op {
	case "=", "<>":
		w.str("(")
		w.arrayValue(l, t)
		w.str(" " + op + " ")
		w.arrayValue(r, t)
		w.str(")")
	case "@>", "<@", "&&":
		if w.my() {
			w.myArrayOp(op, l, r, t)
			return true
		}
		w.duckArrayOp(op, l)
		fn := arrayContainsFunction
		if op == "&&" {
			fn = arrayOverlapFunction
		}
		if op == "<@" {
			l, r = r, l
		}
		w.str(fn + "(")
		w.arrayValue(l, t)
		w.str(", ")
		w.arrayValue(r, t)
		w.str(")")
	case "<", "<=", ">", ">=":
		w.arrayCompare(op, l, r, t)
	default:
		w.refuse("operator %s on arrays (the replicas hold them as text)", op)
	}
	return true
}

// arrayFunc writes the array functions the engines can compute from the
// canonical text; false for other functions.
func (w *writer) arrayFunc(name string, fc *pg_query.FuncCall) bool {
	a := fc.Args
	switch {
	case (name == "array_length" && len(a) == 2 || name == "cardinality" && len(a) == 1) && schema.IsArray(w.typeOf(a[0])):
		t := w.typeOf(a[0])
		w.duckArrayFunc(name, fc, "")
		if w.lite() {
			w.str(arrayLengthFunction + "(")
			w.arrayValue(a[0], t)
			if name == "array_length" {
				w.str(", ")
				w.typed(a[1], "int4")
			} else {
				w.str(", 0")
			}
			w.str(")")
			return true
		}
		// MariaDB: the commas outside quoted elements, plus one; an
		// empty array, or a dimension other than 1 or NULL, has no
		// length (array_length) or 0 elements.
		w.repeated(a[0], 2, func() {})
		w.str("(CASE WHEN ")
		if name == "array_length" {
			w.str("COALESCE(")
			w.typed(a[1], "int4")
			w.str(" <> 1, TRUE) OR ")
		}
		w.arrayValue(a[0], t)
		w.str(" = '{}' THEN ")
		if name == "array_length" {
			w.str("NULL")
		} else {
			w.str("0")
		}
		w.str(" ELSE CHAR_LENGTH(REGEXP_REPLACE(REGEXP_REPLACE(")
		w.arrayValue(a[0], t)
		w.str(`, '"([^"\\]|\\.)*"', ''), '[^,]', '')) + 1 END)`)
		return true
	case (name == "array_to_string" && len(a) == 2) && schema.IsArray(w.typeOf(a[0])):
		if w.my() {
			w.myArrayToString(a[0], a[1], w.typeOf(a[0]))
			return true
		}
		w.duckArrayFunc(name, fc, "")
		w.str(arrayToStringFunction + "(")
		w.arrayValue(a[0], w.typeOf(a[0]))
		w.str(", ")
		w.typed(a[1], "text")
		w.str(")")
		return true
	case name == "array_agg" && len(a) == 1:
		w.arrayAgg(fc)
		return true
	case name == "string_to_array" && len(a) == 2:
		if w.my() {
			v, null, ok := constStringToArray(a[0], a[1])
			switch {
			case !ok:
				w.refuse("string_to_array() of other than constants (MariaDB)")
			case null:
				w.str("NULL")
			default:
				w.literal(v)
			}
			return true
		}
		w.duckArrayFunc(name, fc, "")
		w.str(stringToArrayFunction + "(")
		w.typed(a[0], "text")
		w.str(", ")
		w.typed(a[1], "text")
		w.str(")")
		return true
	}
	return false
}

// arrayFuncType is the type of array_agg(x), "" for other functions
// (pgfunc types them): its element type is one shepherd stores arrays
// of.
func (w *writer) arrayFuncType(name string, fc *pg_query.FuncCall) string {
	if name == "array_agg" && len(fc.Args) == 1 {
		if elem := w.aggElement(fc.Args[0]); elem != "" {
			return "_" + elem
		}
	}
	return ""
}

// aggElement is the element type of array_agg(x): x's type (text for an
// untyped string), "" when shepherd stores no arrays of it.
func (w *writer) aggElement(x *pg_query.Node) string {
	elem := w.typeOf(x)
	if elem == "" && x.GetAConst() != nil && x.GetAConst().GetSval() != nil {
		elem = "text"
	}
	if !schema.StoresArraysOf(elem) {
		return ""
	}
	return elem
}

// arrayAgg writes array_agg(x ORDER BY ...) as the concatenation of the
// elements' text as array_out writes it: {, the elements (NULL for
// NULL) separated by commas in the aggregate's order, }; NULL for no
// rows, as PostgreSQL's. sqlan appends x to the ORDER BY, so that
// inputs that tie give the same text; without ORDER BY the order is
// each engine's plan's, refused.
func (w *writer) arrayAgg(fc *pg_query.FuncCall) {
	w.arraysHere()
	x := fc.Args[0]
	elem := w.aggElement(x)
	switch {
	case elem == "" && w.typeOf(x) == "":
		w.refuse("array_agg() of values whose type shepherd cannot tell (cast them)")
	case elem == "":
		w.refuse("array_agg() of values of type %s", w.typeOf(x))
	case len(fc.AggOrder) == 0:
		w.refuse("array_agg() without ORDER BY (its result order is not fixed)")
	case fc.AggDistinct:
		w.refuse("array_agg(DISTINCT ...)")
	case fc.Over != nil:
		w.refuse("array_agg() over a window")
	}
	w.duckArrayFunc("array_agg", fc, elem)
	item := func() {
		w.str("COALESCE(")
		switch {
		case elem == "bool":
			w.str("CASE WHEN ")
			w.expr(x)
			w.str(" THEN 't' WHEN NOT ")
			w.expr(x)
			w.str(" THEN 'f' END")
		case isInt(elem) && w.my():
			w.str("CAST(")
			w.expr(x)
			w.str(" AS CHAR)")
		case isInt(elem):
			w.str("CAST(")
			w.expr(x)
			w.str(" AS TEXT)")
		case w.lite():
			w.str(arrayQuoteFunction + "(")
			w.expr(x)
			w.str(")")
		default:
			w.myQuoted(func() { w.expr(x) })
		}
		w.str(", 'NULL')")
	}
	w.repeated(x, 5, func() {
		if w.my() {
			w.str("CONCAT('{', GROUP_CONCAT(")
			if fc.AggFilter != nil {
				w.caseFilter(fc.AggFilter, item)
			} else {
				item()
			}
			w.str(" ORDER BY ")
			list(w, fc.AggOrder, func(n *pg_query.Node) { w.sortBy(n.GetSortBy(), nil) })
			w.str(" SEPARATOR ','), '}')")
			return
		}
		w.str("('{' || GROUP_CONCAT(")
		item()
		w.str(", ',' ORDER BY ")
		list(w, fc.AggOrder, func(n *pg_query.Node) { w.sortBy(n.GetSortBy(), nil) })
		w.str(")")
		if fc.AggFilter != nil {
			w.str(" FILTER (WHERE ")
			w.expr(fc.AggFilter)
			w.str(")")
		}
		w.str(" || '}')")
	})
}

// myQuoted writes, for MariaDB, the text x writes as an element of
// array_out's text (answer.QuoteArrayElement): quoted, with " and \
// escaped, when empty, NULL in any case, or holding a brace, comma,
// quote, backslash or white space. x is written five times.
func (w *writer) myQuoted(x func()) {
	w.str("CASE WHEN ")
	x()
	w.str(` = '' OR `)
	x()
	w.str(` REGEXP '[{}",\\[:space:]]' OR UPPER(`)
	x()
	w.str(`) = 'NULL' THEN CONCAT('"', REPLACE(REPLACE(`)
	x()
	w.str(`, '\', '\\'), '"', '\"'), '"') ELSE `)
	x()
	w.str(" END")
}

// constArray returns the elements of n when it is an array constant
// (a string, ARRAY[...] of constants, casts of them) of type t.
func (w *writer) constArray(n *pg_query.Node, t string) ([]*string, bool) {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	var text string
	switch {
	case n.GetAConst() != nil && n.GetAConst().GetSval() != nil:
		v, err := CanonicalArray(n.GetAConst().GetSval().Sval, t)
		if err != nil {
			return nil, false // written (and failed) by arrayValue
		}
		text = v
	case n.GetAArrayExpr() != nil:
		text = w.arrayConstructor(n.GetAArrayExpr(), t)
	default:
		return nil, false
	}
	items, err := answer.ParseArray(text)
	return items, err == nil
}

// elementPattern is a MariaDB regular expression that matches an array's
// canonical text holding the element v.
func elementPattern(v string) string {
	e := "(" + arrayElemPattern + ")"
	return `^\{(` + e + `,)*` + regexp.QuoteMeta(answer.QuoteArrayElement(v)) + `(,` + e + `)*\}$`
}

// myArrayOp writes @>, <@ and && for MariaDB when one operand is a
// constant: regular expressions over the other's canonical text. A NULL
// element equals nothing, as in PostgreSQL.
func (w *writer) myArrayOp(op string, l, r *pg_query.Node, t string) {
	w.arraysHere()
	container, items := l, r // container @> items
	if op == "<@" {
		container, items = r, l
	}
	if vals, ok := w.constArray(items, t); ok {
		// Each constant element must (@>) or one may (&&) be in the
		// column's text.
		w.str("(CASE WHEN ")
		w.arrayValue(container, t)
		w.str(" IS NULL THEN NULL ELSE (")
		joiner, none := " AND ", "TRUE"
		if op == "&&" {
			joiner, none = " OR ", "FALSE"
		}
		var present []string
		for _, v := range vals {
			switch {
			case v != nil:
				present = append(present, *v)
			case op != "&&":
				// A NULL element is contained in nothing.
				present, none = nil, "FALSE"
			}
			if none == "FALSE" && op != "&&" {
				break
			}
		}
		w.repeated(container, len(present)+1, func() {
			for i, v := range present {
				if i > 0 {
					w.str(joiner)
				}
				w.str("(")
				w.arrayValue(container, t)
				w.str(" REGEXP ")
				w.literal(elementPattern(v))
				w.str(")")
			}
		})
		if len(present) == 0 {
			w.str(none)
		}
		w.str(") END)")
		return
	}
	if op == "&&" {
		container, items = items, container
		if _, ok := w.constArray(items, t); ok {
			w.myArrayOp(op, container, items, t)
			return
		}
	} else if vals, ok := w.constArray(container, t); ok {
		// Every element of the column's text is one of the constant's.
		var alts []string
		for _, v := range vals {
			if v != nil {
				alts = append(alts, regexp.QuoteMeta(answer.QuoteArrayElement(*v)))
			}
		}
		pattern := `^\{\}$`
		if len(alts) > 0 {
			a := "(" + strings.Join(alts, "|") + ")"
			pattern = `^\{(\}|` + a + `(,` + a + `)*\})$`
		}
		w.str("(")
		w.arrayValue(items, t)
		w.str(" REGEXP ")
		w.literal(pattern)
		w.str(")")
		return
	}
	w.refuse("operator %s on arrays neither of which is a constant (MariaDB)", op)
}

// myArrayToString writes array_to_string(arr, sep) for MariaDB from the
// canonical text: the NULL elements dropped, each other element's text
// (unquoted, unescaped) after a NUL (which no PostgreSQL text holds),
// the first NUL dropped and the others replaced by sep. Every element of
// the canonical text matches one alternative of each pattern from its
// first character, so the matches stay aligned on elements.
func (w *writer) myArrayToString(arr, sep *pg_query.Node, t string) {
	w.repeated(arr, 2, func() {
		w.repeated(sep, 2, func() {
			w.str("(CASE WHEN ")
			w.arrayValue(arr, t)
			w.str(" IS NULL OR ")
			w.typed(sep, "text")
			w.str(" IS NULL THEN NULL ELSE REPLACE(SUBSTRING(REGEXP_REPLACE(REGEXP_REPLACE(REGEXP_REPLACE(CONCAT(SUBSTRING(")
			w.arrayValue(arr, t)
			w.str(`, 2, CHAR_LENGTH(`)
			w.arrayValue(arr, t)
			w.str(`) - 2), ','), '("([^"\\]|\\.)*",)|NULL,|([^,"]*,)', '\1\3'), '"(([^"\\]|\\.)*)",|([^,"]*),', CONCAT(CHAR(0 USING utf8mb4), '\1\3')), '\\(.)', '\1'), 2), CHAR(0 USING utf8mb4), `)
			w.typed(sep, "text")
			w.str(") END)")
		})
	})
}

// constStringToArray computes string_to_array(s, sep) of constants (as
// the SQLite function does); ok is false when they are not constants.
func constStringToArray(s, sep *pg_query.Node) (v string, null, ok bool) {
	text := func(n *pg_query.Node) (string, bool, bool) {
		c := n.GetAConst()
		switch {
		case c == nil:
			return "", false, false
		case c.Isnull:
			return "", true, true
		case c.GetSval() != nil:
			return c.GetSval().Sval, false, true
		}
		return "", false, false
	}
	str, sNull, ok1 := text(s)
	d, dNull, ok2 := text(sep)
	switch {
	case !ok1 || !ok2:
		return "", false, false
	case sNull:
		return "", true, true
	case str == "":
		return "{}", false, true
	}
	var parts []string
	switch {
	case dNull:
		for _, r := range str {
			parts = append(parts, string(r))
		}
	case d == "":
		parts = []string{str}
	default:
		parts = strings.Split(str, d)
	}
	items := make([]*string, len(parts))
	for i := range parts {
		items[i] = &parts[i]
	}
	return answer.FormatArray(items), false, true
}

// unnestFrom reads FROM unnest(a) [WITH ORDINALITY] [AS t[(c[, n])]]
// of one constant array a: its elements, element type, and the FROM
// item's alias and column names as PostgreSQL names them (the function's
// name, or the alias, for the table and a column not named; ordinality
// for the number). ok is false for any other function in FROM.
func (w *writer) unnestFrom(rf *pg_query.RangeFunction) (vals []*string, elem, alias string, cols []string, ok bool) {
	if len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 || rf.IsRowsfrom {
		return nil, "", "", nil, false
	}
	parts := rf.Functions[0].GetList().GetItems()
	if len(parts) == 0 {
		return nil, "", "", nil, false
	}
	fc := parts[0].GetFuncCall()
	if fc == nil || schema.FuncName(fc) != "unnest" || len(fc.Args) != 1 {
		return nil, "", "", nil, false
	}
	t := w.typeOf(fc.Args[0])
	if !schema.IsArray(t) {
		w.refuse("unnest() in FROM of other than an array constant of a known type (cast it, e.g. '{1,2}'::int[])")
	}
	vals, ok = w.constArray(fc.Args[0], t)
	if !ok {
		w.refuse("unnest() in FROM of other than an array constant (a column or parameter)")
	}
	if len(vals) == 0 {
		w.refuse("unnest() of an empty array in FROM")
	}
	alias = "unnest"
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	cols = []string{alias}
	if rf.Ordinality {
		cols = append(cols, "ordinality")
	}
	if rf.Alias != nil {
		for i, n := range rf.Alias.Colnames {
			if i >= len(cols) {
				w.refuse("more column aliases than unnest() has columns")
			}
			cols[i] = n.GetString_().GetSval()
		}
	}
	return vals, schema.ArrayElement(t), alias, cols, true
}

// unnestTable writes FROM unnest(constant array) as a derived table of
// the elements, one SELECT per element joined by UNION ALL (with its
// position for WITH ORDINALITY); false for other functions in FROM.
func (w *writer) unnestTable(rf *pg_query.RangeFunction) bool {
	vals, elem, alias, cols, ok := w.unnestFrom(rf)
	if !ok {
		return false
	}
	w.arraysHere()
	w.duckUnnest(rf.Functions[0].GetList().GetItems()[0].GetFuncCall(), vals, elem, alias, cols)
	w.str("(")
	for i, v := range vals {
		if i > 0 {
			w.str(" UNION ALL ")
		}
		w.str("SELECT ")
		switch {
		case v == nil:
			w.str("NULL")
		case isInt(elem):
			w.str(*v)
		case elem == "bool" && *v == "t":
			w.str("TRUE")
		case elem == "bool":
			w.str("FALSE")
		default:
			w.literal(*v)
		}
		w.str(" AS ")
		w.ident(cols[0])
		if len(cols) > 1 {
			w.str(", " + strconv.Itoa(i+1) + " AS ")
			w.ident(cols[1])
		}
	}
	w.str(") AS ")
	w.ident(alias)
	return true
}

// unnestScope is the FROM item of unnest(constant array) with its
// columns' types, for the references to them.
func (w *writer) unnestScope(rf *pg_query.RangeFunction) (scopeItem, bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(refusal); !ok {
				panic(r)
			}
		}
	}()
	_, elem, alias, cols, ok := w.unnestFrom(rf)
	if !ok {
		return scopeItem{}, false
	}
	t := &schema.Table{Name: alias, Columns: []schema.Column{{Name: cols[0], Type: elem}}}
	if len(cols) > 1 {
		t.Columns = append(t.Columns, schema.Column{Name: cols[1], Type: "int8", NotNull: true})
	}
	return scopeItem{alias: alias, table: t}, true
}

// arraysHere refuses arrays for a dialect this file does not write them
// for (only MariaDB and SQLite keep them as text).
func (w *writer) arraysHere() {
	if !w.my() && !w.lite() {
		w.refuse("arrays")
	}
}
