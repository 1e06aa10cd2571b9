package dialect

import (
	"encoding/json"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Names of shepherd's SQLite functions for PostgreSQL's json operators
// (the sqlite driver's JSONGetFunction and the rest; the writer does not
// import drivers), and their mode bits.
const (
	jsonGetFunction      = "shepherd_json_get"
	jsonPathFunction     = "shepherd_json_path"
	jsonContainsFunction = "shepherd_jsonb_contains"
	jsonExistsFunction   = "shepherd_jsonb_exists"
	jsonEqualFunction    = "shepherd_jsonb_eq"
	jsonCompareFunction  = "shepherd_jsonb_cmp"

	jsonAsText = 1
	jsonB      = 2
	jsonIndex  = 4
)

// isJSONOp reports whether op is one of the json operators jsonOp writes.
func isJSONOp(op string) bool {
	switch op {
	case "->", "->>", "#>", "#>>", "@>", "<@", "?":
		return true
	}
	return false
}

// jsonOpType is the type of a json operator's result, "" when unknown.
func jsonOpType(op, lt string) string {
	switch op {
	case "->", "#>":
		if isJSON(lt) {
			return lt
		}
	case "->>", "#>>":
		return "text"
	case "@>", "<@", "?":
		return "bool"
	}
	return ""
}

// jsonOp writes a json operator. SQLite calls shepherd's functions, which
// compute what PostgreSQL does on the stored text. MariaDB is given
// JSON_EXTRACT and JSON_TYPE where the meaning provably matches for the
// operand written (a constant member name or index, a constant object to
// look for); anything else is refused.
func (w *writer) jsonOp(op string, l, r *pg_query.Node, lt, rt string) {
	if op == "<@" {
		op, l, r, lt, rt = "@>", r, l, rt, lt
	}
	if !isJSON(lt) {
		w.refuse("operator %s on a left operand that is not json or jsonb (add a cast)", op)
	}
	mode := 0
	if lt == "jsonb" {
		mode |= jsonB
	}
	if op == "->>" || op == "#>>" {
		mode |= jsonAsText
	}
	switch op {
	case "->", "->>":
		if isInt(rt) {
			mode |= jsonIndex
		} else if rt != "" && !isTextual(rt) {
			w.refuse("operator %s with a %s operand", op, rt)
		}
		if w.lite() {
			w.str(jsonGetFunction + "(")
			w.expr(l)
			w.str(", ")
			w.expr(r)
			w.str(", " + strconv.Itoa(mode) + ")")
			return
		}
		if mode&jsonIndex != 0 {
			i, ok := intConst(r)
			if !ok || i < 0 {
				w.refuse("operator %s with an index that is not a constant of 0 or more (MariaDB)", op)
			}
			// MariaDB's $[0] is the value itself when it is not an
			// array; PostgreSQL answers NULL.
			w.repeated(l, 2, func() {
				w.str("(CASE WHEN JSON_TYPE(")
				w.expr(l)
				w.str(") = 'ARRAY' THEN ")
				w.myExtracted(l, "$["+strconv.FormatInt(i, 10)+"]", mode)
				w.str(" END)")
			})
			return
		}
		k, ok := strConst(r)
		if !ok {
			w.refuse("operator %s with a key that is not a constant (MariaDB)", op)
		}
		w.myExtracted(l, myJSONPath(w, []string{k}), mode)
	case "#>", "#>>":
		path, ok := textArrayConst(r)
		if !ok {
			w.refuse("operator %s with a path that is not a constant like '{a,b}'", op)
		}
		if w.lite() {
			w.str(jsonPathFunction + "(")
			w.expr(l)
			w.str(", ")
			w.literal(path.text)
			w.str(", " + strconv.Itoa(mode) + ")")
			return
		}
		for _, k := range path.items {
			if _, err := strconv.ParseInt(strings.TrimSpace(k), 10, 32); err == nil {
				// An index in an array, a member name in an object:
				// MariaDB's path says which beforehand.
				w.refuse("operator %s with a path element that reads as a number (MariaDB)", op)
			}
		}
		if len(path.items) == 0 {
			w.refuse("operator %s with an empty path (MariaDB)", op)
		}
		w.myExtracted(l, myJSONPath(w, path.items), mode)
	case "@>":
		if lt != "jsonb" || rt != "" && rt != "jsonb" {
			w.refuse("operator @> on %s and %s (PostgreSQL has it for jsonb)", lt, orUnknown(rt))
		}
		if w.lite() {
			w.str(jsonContainsFunction + "(")
			w.expr(l)
			w.str(", ")
			w.jsonOperand(r)
			w.str(")")
			return
		}
		w.myContains(l, r)
	case "?":
		if lt != "jsonb" {
			w.refuse("operator ? on %s (PostgreSQL has it for jsonb)", lt)
		}
		if w.lite() {
			w.str(jsonExistsFunction + "(")
			w.expr(l)
			w.str(", ")
			w.expr(r)
			w.str(")")
			return
		}
		w.refuse("operator ? (MariaDB's JSON_CONTAINS looks inside nested arrays)")
	}
}

// jsonbCompare writes a comparison with a jsonb operand for SQLite and
// MariaDB, which keep a stored document as jsonb's output text of it
// (CanonicalJSONB, jsonb.go) but see constants and json values as
// written: compared as text, '1.0' would differ from '1' and
// '{"a": 1}' from '{"a":1}'.
// PostgreSQL compares jsonb values by structure (jsonb_eq): members
// whatever their order, numbers by value, strings by their decoded
// text. SQLite calls shepherd's function. MariaDB compares a constant
// scalar by its JSON type and value, as @> does (myContains); anything
// else through JSON_EQUALS, which orders members and compares numbers
// by value too (it reads escapes in strings and duplicate keys
// otherwise than PostgreSQL, which stored jsonb documents no longer
// hold), compared with 1: MariaDB 10.11 takes a bare JSON_EQUALS of NULL as
// true in a WHERE.
// The ordering operators are written by jsonbOrder.
func (w *writer) jsonbCompare(op string, l, r *pg_query.Node, lt, rt string) {
	if op != "=" && op != "<>" {
		w.jsonbOrder(op, l, r, lt, rt)
		return
	}
	if lt != "jsonb" {
		l, r, lt, rt = r, l, rt, lt
	}
	c := r
	if tc := r.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
		c = tc.Arg
	}
	text, constant := strConst(c)
	if !constant && rt != "jsonb" {
		w.refuse("operator %s on jsonb and %s", op, orUnknown(rt))
	}
	var v any
	if constant {
		d := json.NewDecoder(strings.NewReader(text))
		d.UseNumber()
		if err := d.Decode(&v); err != nil || d.More() {
			w.fail("22P02", "invalid input syntax for type json")
		}
	}
	if op == "<>" {
		w.str("(NOT ")
		defer w.str(")")
	}
	if w.lite() {
		w.str(jsonEqualFunction + "(")
		w.expr(l)
		w.str(", ")
		w.jsonOperand(r)
		w.str(")")
		return
	}
	if !constant {
		w.str("(JSON_EQUALS(")
		w.myJSONOperand(l)
		w.str(", ")
		w.expr(r)
		w.str(") = 1)")
		return
	}
	extract := func() { w.expr(l) }
	is := func(types string, value func()) func() {
		return func() {
			w.str("WHEN JSON_TYPE(")
			extract()
			w.str(") IN (" + types + ") THEN ")
			value()
		}
	}
	unquoted := func(want string) func() {
		return func() {
			myText(w, func() {
				w.str("JSON_UNQUOTE(")
				extract()
				w.str(")")
			})
			w.str(" = ")
			w.literal(want)
		}
	}
	var when func()
	switch x := v.(type) {
	case string:
		when = is("'STRING'", unquoted(x))
	case bool:
		when = is("'BOOLEAN'", unquoted(strconv.FormatBool(x)))
	case nil:
		when = is("'NULL'", func() { w.str("TRUE") })
	case json.Number:
		if !plainNumber.MatchString(string(x)) || len(strings.Trim(string(x), "-.0")) > 30 {
			w.refuse("jsonb = with number %s (MariaDB)", x)
		}
		when = is("'INTEGER', 'DOUBLE', 'DECIMAL'", func() {
			w.str("CAST(JSON_UNQUOTE(")
			extract()
			w.str(") AS DECIMAL(65,30)) = " + string(x))
		})
	default:
		w.str("(JSON_EQUALS(")
		w.myJSONOperand(l)
		w.str(", ")
		w.myJSONOperand(r)
		w.str(") = 1)")
		return
	}
	w.repeated(l, 3, func() {
		w.str("(CASE WHEN ")
		extract()
		w.str(" IS NULL THEN NULL ")
		when()
		w.str(" ELSE FALSE END)")
	})
}

// jsonbOrder writes <, >, <= or >= between a jsonb value and a constant
// scalar (Django's attrs__n__gt=1), as PostgreSQL's jsonb ordering
// (compareJsonbContainers) has it: by kind first, object > array >
// boolean > number > string > null, where a scalar is a one-element
// array that sorts before any other array of one element or more and
// after an empty one; then numbers by value, strings bytewise (the C
// collation), false before true. SQLite calls shepherd's function;
// MariaDB writes the rank of the value's JSON_TYPE and compares the
// value itself when the ranks agree. Other operands are refused.
func (w *writer) jsonbOrder(op string, l, r *pg_query.Node, lt, rt string) {
	flip := map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<="}
	constOf := func(n *pg_query.Node) (string, bool) {
		if tc := n.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
			n = tc.Arg
		}
		return strConst(n)
	}
	text, ok := constOf(r)
	if !ok {
		if text, ok = constOf(l); ok {
			op, l, r, lt, rt = flip[op], r, l, rt, lt
		}
	}
	if !ok || lt != "jsonb" {
		w.refuse("operator %s on jsonb other than with a constant", op)
	}
	var v any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		w.fail("22P02", "invalid input syntax for type json")
	}
	if w.lite() {
		w.str("(" + jsonCompareFunction + "(")
		w.expr(l)
		w.str(", ")
		w.literal(text)
		w.str(") " + op + " 0)")
		return
	}
	rank := 0
	var value func()
	unquoted := func() {
		myText(w, func() {
			w.str("JSON_UNQUOTE(")
			w.expr(l)
			w.str(")")
		})
	}
	sign := func(a, b func()) func() {
		return func() {
			w.str("(CASE WHEN ")
			a()
			w.str(" < ")
			b()
			w.str(" THEN -1 WHEN ")
			a()
			w.str(" > ")
			b()
			w.str(" THEN 1 ELSE 0 END)")
		}
	}
	switch x := v.(type) {
	case nil:
		value = func() { w.str("0") }
	case string:
		rank, value = 1, sign(unquoted, func() { w.literal(x) })
	case json.Number:
		if !plainNumber.MatchString(string(x)) || len(strings.Trim(string(x), "-.0")) > 30 {
			w.refuse("jsonb %s with number %s (MariaDB)", op, x)
		}
		rank, value = 2, sign(func() {
			w.str("CAST(JSON_UNQUOTE(")
			w.expr(l)
			w.str(") AS DECIMAL(65,30))")
		}, func() { w.str(string(x)) })
	case bool:
		b := "0"
		if x {
			b = "1"
		}
		rank, value = 3, sign(func() {
			w.str("(")
			unquoted()
			w.str(" = 'true')")
		}, func() { w.str(b) })
	default:
		w.refuse("operator %s on jsonb with an object or array (MariaDB)", op)
	}
	rankOf := func() {
		w.str("(CASE JSON_TYPE(")
		w.expr(l)
		w.str(") WHEN 'NULL' THEN 0 WHEN 'STRING' THEN 1 WHEN 'INTEGER' THEN 2 WHEN 'DOUBLE' THEN 2 WHEN 'DECIMAL' THEN 2" +
			" WHEN 'BOOLEAN' THEN 3 WHEN 'ARRAY' THEN (CASE WHEN JSON_LENGTH(")
		w.expr(l)
		w.str(") = 0 THEN -1 ELSE 4 END) ELSE 5 END)")
	}
	w.repeated(l, 8, func() {
		w.str("((CASE WHEN ")
		w.expr(l)
		w.str(" IS NULL THEN NULL WHEN ")
		rankOf()
		w.str(" <> " + strconv.Itoa(rank) + " THEN SIGN(")
		rankOf()
		w.str(" - " + strconv.Itoa(rank) + ") ELSE ")
		value()
		w.str(" END) " + op + " 0)")
	})
}

// myJSONOperand writes an operand of MariaDB's JSON_EQUALS: a constant
// document written again with its duplicate keys gone (the last kept, as
// jsonb keeps it) and its strings without escapes JSON_EQUALS would
// compare as written; anything else as it is.
func (w *writer) myJSONOperand(n *pg_query.Node) {
	c := n
	if tc := n.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
		c = tc.Arg
	}
	text, ok := strConst(c)
	if !ok {
		w.expr(n)
		return
	}
	var v any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		w.fail("22P02", "invalid input syntax for type json")
	}
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil || strings.ContainsAny(text, "\u2028\u2029") {
		w.refuse("jsonb = with this constant (MariaDB)")
	}
	w.literal(strings.TrimSuffix(b.String(), "\n"))
}

// jsonOperand writes the right operand of @>: a json constant (cast or
// not), or another expression.
func (w *writer) jsonOperand(r *pg_query.Node) {
	if tc := r.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
		w.expr(tc.Arg)
		return
	}
	w.expr(r)
}

// myJSONPath writes a MariaDB JSON path of member names.
func myJSONPath(w *writer, keys []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, k := range keys {
		if strings.ContainsAny(k, "\"\\") || k == "" {
			w.refuse("json member name %q (MariaDB paths)", k)
		}
		b.WriteString(`."` + k + `"`)
	}
	return b.String()
}

// myExtracted writes JSON_EXTRACT(l, path) for -> (json text), or for
// ->> the value as PostgreSQL's text: a string unquoted, JSON null as
// SQL NULL, other values as their JSON text.
func (w *writer) myExtracted(l *pg_query.Node, path string, mode int) {
	extract := func() {
		w.str("JSON_EXTRACT(")
		w.expr(l)
		w.str(", ")
		w.literal(path)
		w.str(")")
	}
	if mode&jsonAsText == 0 {
		extract()
		return
	}
	// JSON_UNQUOTE answers in utf8mb4_bin, a constant document in the
	// connection's collation: both are made the collation of shepherd's
	// text (see myText).
	w.repeated(l, 3, func() {
		w.str("(CASE JSON_TYPE(")
		extract()
		w.str(") WHEN 'NULL' THEN NULL WHEN 'STRING' THEN ")
		myText(w, func() {
			w.str("JSON_UNQUOTE(")
			extract()
			w.str(")")
		})
		w.str(" ELSE ")
		myText(w, extract)
		w.str(" END)")
	})
}

// myContains writes jsonb @> for MariaDB, whose JSON_CONTAINS looks for a
// scalar inside nested arrays where PostgreSQL does not: the right
// operand must be a constant object, and every member it names is
// checked at its path by type and value (numbers by value, as jsonb
// compares them). Arrays in it are refused.
func (w *writer) myContains(l, r *pg_query.Node) {
	c := r
	if tc := r.GetTypeCast(); tc != nil {
		c = tc.Arg
	}
	text, ok := strConst(c)
	if !ok {
		w.refuse("operator @> with a right operand that is not a constant (MariaDB)")
	}
	var v any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		w.fail("22P02", "invalid input syntax for type json")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		w.refuse("operator @> with a right operand that is not an object (MariaDB)")
	}
	var conds []func()
	var walk func(path []string, o map[string]any)
	walk = func(path []string, o map[string]any) {
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]string(nil), path...), k)
			jp := myJSONPath(w, p)
			extract := func() {
				w.str("JSON_EXTRACT(")
				w.expr(l)
				w.str(", ")
				w.literal(jp)
				w.str(")")
			}
			typeIs := func(types string) {
				w.str("JSON_TYPE(")
				extract()
				w.str(") IN (" + types + ")")
			}
			switch x := o[k].(type) {
			case map[string]any:
				conds = append(conds, func() { typeIs("'OBJECT'") })
				walk(p, x)
			case string:
				conds = append(conds, func() {
					typeIs("'STRING'")
					w.str(" AND ")
					myText(w, func() {
						w.str("JSON_UNQUOTE(")
						extract()
						w.str(")")
					})
					w.str(" = ")
					w.literal(x)
				})
			case bool:
				word := strconv.FormatBool(x)
				conds = append(conds, func() {
					typeIs("'BOOLEAN'")
					w.str(" AND ")
					myText(w, func() {
						w.str("JSON_UNQUOTE(")
						extract()
						w.str(")")
					})
					w.str(" = '" + word + "'")
				})
			case nil:
				conds = append(conds, func() { typeIs("'NULL'") })
			case json.Number:
				if !plainNumber.MatchString(string(x)) || len(strings.Trim(string(x), "-.0")) > 30 {
					w.refuse("operator @> with number %s (MariaDB)", x)
				}
				if _, ok := new(big.Rat).SetString(string(x)); !ok {
					w.refuse("operator @> with number %s (MariaDB)", x)
				}
				conds = append(conds, func() {
					typeIs("'INTEGER', 'DOUBLE', 'DECIMAL'")
					w.str(" AND CAST(JSON_UNQUOTE(")
					extract()
					w.str(") AS DECIMAL(65,30)) = " + string(x))
				})
			default:
				w.refuse("operator @> with an array in its right operand (MariaDB)")
			}
		}
	}
	walk(nil, obj)
	w.repeated(l, 2+3*len(conds), func() {
		w.str("(CASE WHEN ")
		w.expr(l)
		w.str(" IS NULL THEN NULL ELSE COALESCE(JSON_TYPE(")
		w.expr(l)
		w.str(") = 'OBJECT'")
		for _, c := range conds {
			w.str(" AND ")
			c()
		}
		w.str(", FALSE) END)")
	})
}

// myText writes a MariaDB text expression in the collation shepherd's
// MariaDB sessions and columns use, byte for byte as PostgreSQL's C
// collation compares.
func myText(w *writer, write func()) {
	w.str("(CONVERT(")
	write()
	w.str(" USING utf8mb4) COLLATE utf8mb4_nopad_bin)")
}

// plainNumber is a JSON number MariaDB's DECIMAL reads exactly.
var plainNumber = regexp.MustCompile(`^-?[0-9]{1,30}(\.[0-9]{1,30})?$`)

// textArray is a constant text[] literal: its text and its elements.
type textArray struct {
	text  string
	items []string
}

// textArrayConst reads a constant path such as '{a,b}' or
// '{a,b}'::text[] (no NULL elements, no quoting).
func textArrayConst(n *pg_query.Node) (textArray, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	s, ok := strConst(n)
	if !ok {
		return textArray{}, false
	}
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' || strings.ContainsAny(t[1:len(t)-1], "{}\"\\") {
		return textArray{}, false
	}
	var items []string
	if body := strings.TrimSpace(t[1 : len(t)-1]); body != "" {
		for _, it := range strings.Split(body, ",") {
			it = strings.TrimSpace(it)
			if it == "" || strings.EqualFold(it, "null") {
				return textArray{}, false
			}
			items = append(items, it)
		}
	}
	return textArray{text: s, items: items}, true
}

// Names of shepherd's SQLite functions that print a JSON document as
// jsonb does and as json_build_object() does.
const (
	jsonbTextFunction      = "shepherd_jsonb_text"
	jsonObjectTextFunction = "shepherd_json_object_text"
)

// buildObject writes json_build_object() and jsonb_build_object() of
// constant keys and values of text, integer or boolean type. jsonb keeps
// the last of duplicate keys and orders them by length, then bytes:
// MariaDB's JSON_OBJECT, given them in that order, prints as jsonb does
// ({"a": 1, "bb": "x"}); SQLite's json_object is reprinted by shepherd's
// function. json_build_object's own spelling ({"a" : 1}) only SQLite's
// replicas are given.
func (w *writer) buildObject(name string, a []*pg_query.Node) {
	if len(a)%2 != 0 {
		w.fail("22023", "argument list must have even number of elements")
	}
	type pair struct {
		key string
		val *pg_query.Node
	}
	var pairs []pair
	for i := 0; i < len(a); i += 2 {
		k, ok := strConst(a[i])
		if !ok {
			w.refuse("%s() with a key that is not a string constant", name)
		}
		v := a[i+1]
		t := w.typeOf(v)
		c := v.GetAConst()
		if !(isInt(t) || t == "text" || t == "varchar" || t == "bool" || c != nil && (c.Isnull || c.GetSval() != nil)) {
			w.refuse("%s() with a value of type %s (shepherd takes text, integers and booleans)", name, orUnknown(t))
		}
		pairs = append(pairs, pair{k, v})
	}
	jsonb := name == "jsonb_build_object"
	if jsonb {
		last := map[string]int{}
		for i, p := range pairs {
			last[p.key] = i
		}
		var kept []pair
		for i, p := range pairs {
			if last[p.key] == i {
				kept = append(kept, p)
			}
		}
		sort.SliceStable(kept, func(i, j int) bool {
			x, y := kept[i].key, kept[j].key
			if len(x) != len(y) {
				return len(x) < len(y)
			}
			return x < y
		})
		pairs = kept
	} else if w.my() {
		w.refuse("json_build_object() (MariaDB writes {\"a\": 1} where PostgreSQL writes {\"a\" : 1}; use jsonb_build_object)")
	}
	value := func(v *pg_query.Node) {
		if w.typeOf(v) != "bool" {
			w.expr(v)
			return
		}
		w.repeated(v, 2, func() {
			if w.my() {
				w.str("(CASE WHEN ")
				w.expr(v)
				w.str(" THEN JSON_EXTRACT('true', '$') WHEN NOT ")
				w.expr(v)
				w.str(" THEN JSON_EXTRACT('false', '$') END)")
				return
			}
			w.str("json(CASE WHEN ")
			w.expr(v)
			w.str(" THEN 'true' WHEN NOT ")
			w.expr(v)
			w.str(" THEN 'false' END)")
		})
	}
	if w.lite() {
		if jsonb {
			w.str(jsonbTextFunction + "(")
		} else {
			w.str(jsonObjectTextFunction + "(")
		}
		w.str("json_object(")
	} else {
		w.str("JSON_OBJECT(")
	}
	for i, p := range pairs {
		if i > 0 {
			w.str(", ")
		}
		w.literal(p.key)
		w.str(", ")
		value(p.val)
	}
	w.str(")")
	if w.lite() {
		w.str(")")
	}
}
