package sqlite

import (
	"errors"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// PostgreSQL's json and jsonb operators for SQLite, whose own JSON
// functions differ (its ->> answers a JSON true as 1 and a number as a
// number; it has no containment). The SQL writer calls them with a mode
// that says what PostgreSQL computes:
//
//	JSONGetFunction(doc, key, mode)    doc -> key, doc ->> key
//	JSONPathFunction(doc, path, mode)  doc #> path, doc #>> path (path as
//	                                   PostgreSQL's text[] literal, '{a,0}')
//	JSONContainsFunction(a, b)         a @> b on jsonb
//	JSONExistsFunction(doc, key)       doc ? key on jsonb
//	JSONEqualFunction(a, b)            a = b on jsonb
//	JSONCompareFunction(a, b)          -1, 0 or 1 as jsonb orders a and b
//	                                   (b a scalar)
//
// A document is stored as the text the client wrote. json keeps that text
// (-> on json answers the member's text as written, and the last of
// duplicate keys); jsonb answers in its canonical form (keys ordered by
// length then bytes, ", " and ": " between items, numbers as numeric
// prints them).
const (
	JSONGetFunction      = "shepherd_json_get"
	JSONPathFunction     = "shepherd_json_path"
	JSONContainsFunction = "shepherd_jsonb_contains"
	JSONExistsFunction   = "shepherd_jsonb_exists"
	JSONEqualFunction    = "shepherd_jsonb_eq"
	JSONCompareFunction  = "shepherd_jsonb_cmp"
)

// Mode bits of JSONGetFunction and JSONPathFunction.
const (
	JSONAsText = 1 // ->> and #>>: a string's value, other values' text, NULL for null
	JSONB      = 2 // the document is jsonb
	JSONIndex  = 4 // the key is an array index (an integer), not a member name
)

// errJSONSyntax is what a stored document that is not JSON fails with;
// PostgreSQL checked it on the way in, so it means a value shepherd did
// not write.
var errJSONSyntax = errors.New("invalid input syntax for type json")

// jnode is one parsed JSON value: its kind ('{', '[', '"', 'n' number,
// 't', 'f', 'z' null), its text as written, a string's value, and the
// members or elements of a container (members in the order written).
type jnode struct {
	kind  byte
	raw   string
	str   string
	keys  []string
	elems []*jnode
}

type jparser struct {
	s string
	i int
}

func parseJSON(s string) (*jnode, error) {
	p := jparser{s: s}
	n, ok := p.value(0)
	p.space()
	if !ok || p.i != len(p.s) {
		return nil, errJSONSyntax
	}
	return n, nil
}

func (p *jparser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jparser) value(depth int) (*jnode, bool) {
	if depth > 1000 {
		return nil, false
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	start := p.i
	n := &jnode{}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		n.kind = c
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			break
		}
		for {
			if c == '{' {
				p.space()
				k, ok := p.value(depth + 1)
				if !ok || k.kind != '"' {
					return nil, false
				}
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return nil, false
				}
				p.i++
				n.keys = append(n.keys, k.str)
			}
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			n.elems = append(n.elems, v)
			p.space()
			if p.i >= len(p.s) {
				return nil, false
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] != end {
				return nil, false
			}
			p.i++
			break
		}
	case c == '"':
		n.kind = '"'
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		n.str = s
	case c == '-' || c >= '0' && c <= '9':
		n.kind = 'n'
		j := p.i
		if p.s[j] == '-' {
			j++
		}
		digits := func() int {
			k := j
			for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
				j++
			}
			return j - k
		}
		if d := digits(); d == 0 || d > 1 && p.s[j-d] == '0' {
			return nil, false
		}
		if j < len(p.s) && p.s[j] == '.' {
			j++
			if digits() == 0 {
				return nil, false
			}
		}
		if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
			j++
			if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
				j++
			}
			if digits() == 0 {
				return nil, false
			}
		}
		p.i = j
	default:
		for _, w := range []struct {
			word string
			kind byte
		}{{"true", 't'}, {"false", 'f'}, {"null", 'z'}} {
			if strings.HasPrefix(p.s[p.i:], w.word) {
				n.kind = w.kind
				p.i += len(w.word)
				break
			}
		}
		if n.kind == 0 {
			return nil, false
		}
	}
	n.raw = p.s[start:p.i]
	return n, true
}

// str reads a JSON string at p.i, decoding its escapes.
func (p *jparser) str() (string, bool) {
	p.i++ // "
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", false
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				if !strings.HasPrefix(p.s[p.i:], "\\u") {
					return "", false
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
			}
			if r == 0 {
				// PostgreSQL's text cannot hold \u0000.
				return "", false
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// member returns the value of key in object n: the last of duplicate
// keys, as PostgreSQL's json operators and jsonb keep it.
func (n *jnode) member(key string) *jnode {
	if n.kind != '{' {
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.elems[i]
		}
	}
	return nil
}

// element returns element i of array n, counting from the end when i is
// negative, as PostgreSQL does.
func (n *jnode) element(i int64) *jnode {
	if n.kind != '[' {
		return nil
	}
	if i < 0 {
		i += int64(len(n.elems))
	}
	if i < 0 || i >= int64(len(n.elems)) {
		return nil
	}
	return n.elems[i]
}

// result answers value n as PostgreSQL's operator does under mode.
func (n *jnode) result(mode int64) any {
	if n == nil {
		return nil
	}
	if mode&JSONAsText != 0 {
		switch n.kind {
		case 'z':
			return nil
		case '"':
			return n.str
		}
	}
	if mode&JSONB != 0 {
		var b strings.Builder
		n.jsonb(&b)
		return b.String()
	}
	return n.raw
}

// jsonb writes n as jsonb prints it.
func (n *jnode) jsonb(b *strings.Builder) {
	switch n.kind {
	case '{':
		type kv struct {
			k string
			v *jnode
		}
		var members []kv
		seen := map[string]bool{}
		for i := len(n.keys) - 1; i >= 0; i-- {
			if !seen[n.keys[i]] {
				seen[n.keys[i]] = true
				members = append(members, kv{n.keys[i], n.elems[i]})
			}
		}
		sort.Slice(members, func(i, j int) bool {
			a, c := members[i].k, members[j].k
			if len(a) != len(c) {
				return len(a) < len(c)
			}
			return a < c
		})
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, m.k)
			b.WriteString(": ")
			m.v.jsonb(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.jsonb(b)
		}
		b.WriteByte(']')
	case '"':
		writeJSONString(b, n.str)
	case 'n':
		b.WriteString(jsonNumberText(n.raw))
	default:
		b.WriteString(n.raw)
	}
}

// writeJSONString writes s quoted as PostgreSQL's escape_json does.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[c>>4])
				b.WriteByte("0123456789abcdef"[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// jsonNumberText writes a JSON number as PostgreSQL's numeric prints it:
// without exponent, keeping the scale written (1.50 stays 1.50, 1.5e1 is
// 15, 1e-2 is 0.01), without a minus sign on zero.
func jsonNumberText(raw string) string {
	neg := strings.HasPrefix(raw, "-")
	s := strings.TrimPrefix(raw, "-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, _ = strconv.Atoi(s[i+1:])
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	scale := len(frac) - exp
	// value = digits * 10^-scale
	if scale < 0 {
		digits += strings.Repeat("0", -scale)
		scale = 0
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	ip, fp := digits[:len(digits)-scale], digits[len(digits)-scale:]
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	out := ip
	if scale > 0 {
		out += "." + fp
	}
	if neg && strings.Trim(digits, "0") != "" {
		out = "-" + out
	}
	return out
}

// jsonGet implements JSONGetFunction.
func jsonGet(doc, key, mode any) (any, error) {
	text, ok := argText(doc)
	if !ok || key == nil {
		return nil, nil
	}
	m, _ := mode.(int64)
	n, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	if m&JSONIndex != 0 {
		i, ok := key.(int64)
		if !ok {
			return nil, nil
		}
		if m&JSONB != 0 && isScalar(n) && (i == 0 || i == -1) {
			// jsonb keeps a scalar as an array of one (its "raw
			// scalar"), and -> 0 finds it there.
			return n.result(m), nil
		}
		return n.element(i).result(m), nil
	}
	k, ok := argText(key)
	if !ok {
		return nil, nil
	}
	return n.member(k).result(m), nil
}

// jsonPath implements JSONPathFunction: each element of the path is a
// member name in an object and an integer index in an array.
func jsonPath(doc, path, mode any) (any, error) {
	text, ok := argText(doc)
	if !ok {
		return nil, nil
	}
	p, ok := argText(path)
	if !ok {
		return nil, nil
	}
	m, _ := mode.(int64)
	steps, ok := parseTextArray(p)
	if !ok {
		return nil, errors.New("malformed array literal: \"" + p + "\"")
	}
	n, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		if n == nil || s == nil {
			return nil, nil
		}
		switch n.kind {
		case '{':
			n = n.member(*s)
		case '[':
			i, err := strconv.ParseInt(strings.TrimSpace(*s), 10, 32)
			if err != nil {
				return nil, nil
			}
			n = n.element(i)
		default:
			return nil, nil
		}
	}
	return n.result(m), nil
}

// parseTextArray reads a one-dimensional text[] literal ('{a,"b c",NULL}');
// a nil element is NULL.
func parseTextArray(s string) ([]*string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	var out []*string
	if strings.TrimSpace(body) == "" {
		return out, true
	}
	i := 0
	for {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var b strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				b.WriteByte(body[i])
				i++
			}
			if i >= len(body) {
				return nil, false
			}
			i++
			for i < len(body) && body[i] == ' ' {
				i++
			}
		} else {
			for i < len(body) && body[i] != ',' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				if body[i] == '"' || body[i] == '{' || body[i] == '}' {
					return nil, false
				}
				b.WriteByte(body[i])
				i++
			}
		}
		v := b.String()
		if !quoted {
			v = strings.TrimRight(v, " ")
			if v == "" {
				return nil, false
			}
		}
		if !quoted && strings.EqualFold(v, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		if i >= len(body) {
			return out, true
		}
		if body[i] != ',' {
			return nil, false
		}
		i++
	}
}

// jsonbContains implements JSONContainsFunction: PostgreSQL's
// JsonbDeepContains. An array contains a scalar at the top level only.
func jsonbContains(a, b any) (any, error) {
	at, ok1 := argText(a)
	bt, ok2 := argText(b)
	if !ok1 || !ok2 {
		return nil, nil
	}
	x, err := parseJSON(at)
	if err != nil {
		return nil, err
	}
	y, err := parseJSON(bt)
	if err != nil {
		return nil, err
	}
	xs, ys := isScalar(x), isScalar(y)
	switch {
	case xs && ys:
		return boolInt(scalarEqual(x, y)), nil
	case xs:
		return boolInt(false), nil
	case ys:
		// A raw scalar is a one-element array to PostgreSQL.
		if x.kind != '[' {
			return boolInt(false), nil
		}
		return boolInt(contains(x, &jnode{kind: '[', elems: []*jnode{y}})), nil
	}
	return boolInt(contains(x, y)), nil
}

func isScalar(n *jnode) bool { return n.kind != '{' && n.kind != '[' }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// contains reports whether container x contains container y.
func contains(x, y *jnode) bool {
	if x.kind != y.kind {
		return false
	}
	if y.kind == '{' {
		for i, k := range y.keys {
			if y.member(k) != y.elems[i] {
				continue // an earlier duplicate; jsonb keeps the last
			}
			v := x.member(k)
			if v == nil {
				return false
			}
			w := y.elems[i]
			if isScalar(w) {
				if !isScalar(v) || !scalarEqual(v, w) {
					return false
				}
			} else if !contains(v, w) {
				return false
			}
		}
		return true
	}
	for _, w := range y.elems {
		found := false
		for _, v := range x.elems {
			if isScalar(w) {
				found = isScalar(v) && scalarEqual(v, w)
			} else {
				found = !isScalar(v) && contains(v, w)
			}
			if found {
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// scalarEqual compares two scalars as jsonb does: numbers by value.
func scalarEqual(a, b *jnode) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case '"':
		return a.str == b.str
	case 'n':
		x, ok1 := new(big.Rat).SetString(a.raw)
		y, ok2 := new(big.Rat).SetString(b.raw)
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	return true
}

// jsonbEqual implements JSONEqualFunction: PostgreSQL's jsonb equality
// (compareJsonbContainers): objects by their members, the last of
// duplicate keys counting, whatever their order; arrays element by
// element; numbers by value (1 = 1.0); strings by their decoded value.
func jsonbEqual(a, b any) (any, error) {
	at, ok1 := argText(a)
	bt, ok2 := argText(b)
	if !ok1 || !ok2 {
		return nil, nil
	}
	x, err := parseJSON(at)
	if err != nil {
		return nil, err
	}
	y, err := parseJSON(bt)
	if err != nil {
		return nil, err
	}
	return boolInt(jsonEqual(x, y)), nil
}

func jsonEqual(x, y *jnode) bool {
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case '[':
		if len(x.elems) != len(y.elems) {
			return false
		}
		for i := range x.elems {
			if !jsonEqual(x.elems[i], y.elems[i]) {
				return false
			}
		}
		return true
	case '{':
		distinct := func(n *jnode) map[string]bool {
			m := map[string]bool{}
			for _, k := range n.keys {
				m[k] = true
			}
			return m
		}
		xk, yk := distinct(x), distinct(y)
		if len(xk) != len(yk) {
			return false
		}
		for k := range yk {
			v := x.member(k)
			if v == nil || !jsonEqual(v, y.member(k)) {
				return false
			}
		}
		return true
	}
	return scalarEqual(x, y)
}

// jsonbCompare implements JSONCompareFunction for a scalar b, as
// PostgreSQL's compareJsonbContainers orders a and b: object > array >
// boolean > number > string > null, a scalar sorting before an array of
// one element or more and after an empty one; then numbers by value,
// strings bytewise (the C collation), false before true.
func jsonbCompare(a, b any) (any, error) {
	at, ok1 := argText(a)
	bt, ok2 := argText(b)
	if !ok1 || !ok2 {
		return nil, nil
	}
	x, err := parseJSON(at)
	if err != nil {
		return nil, err
	}
	y, err := parseJSON(bt)
	if err != nil {
		return nil, err
	}
	if !isScalar(y) {
		return nil, errors.New("shepherd: jsonb ordering against an array or object")
	}
	rank := func(n *jnode) int {
		switch n.kind {
		case 'z':
			return 0
		case '"':
			return 1
		case 'n':
			return 2
		case 't', 'f':
			return 3
		case '[':
			if len(n.elems) == 0 {
				return -1
			}
			return 4
		}
		return 5
	}
	rx, ry := rank(x), rank(y)
	switch {
	case rx < ry:
		return int64(-1), nil
	case rx > ry:
		return int64(1), nil
	}
	c := 0
	switch x.kind {
	case '"':
		c = strings.Compare(x.str, y.str)
	case 'n':
		p, ok1 := new(big.Rat).SetString(x.raw)
		q, ok2 := new(big.Rat).SetString(y.raw)
		if !ok1 || !ok2 {
			return nil, errJSONSyntax
		}
		c = p.Cmp(q)
	case 't', 'f':
		c = int(boolInt(x.kind == 't') - boolInt(y.kind == 't'))
	}
	return int64(c), nil
}

// jsonbExists implements JSONExistsFunction: a member name of an object,
// a string element of an array, or the string itself.
func jsonbExists(doc, key any) (any, error) {
	text, ok1 := argText(doc)
	k, ok2 := argText(key)
	if !ok1 || !ok2 {
		return nil, nil
	}
	n, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case '{':
		return boolInt(n.member(k) != nil), nil
	case '[':
		for _, e := range n.elems {
			if e.kind == '"' && e.str == k {
				return boolInt(true), nil
			}
		}
		return boolInt(false), nil
	case '"':
		return boolInt(n.str == k), nil
	}
	return boolInt(false), nil
}

// argText reads a function argument as text; false for NULL.
func argText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return "", false
}

// JSONBTextFunction rewrites a JSON document (SQLite's json_object()
// writes it compact) as jsonb prints it; JSONObjectTextFunction as
// json_build_object() prints an object of scalars: `{"a" : 1, "b" : 2}`,
// members in the order written.
const (
	JSONBTextFunction      = "shepherd_jsonb_text"
	JSONObjectTextFunction = "shepherd_json_object_text"
)

// jsonbText implements JSONBTextFunction.
func jsonbText(doc any) (any, error) {
	text, ok := argText(doc)
	if !ok {
		return nil, nil
	}
	n, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	n.jsonb(&b)
	return b.String(), nil
}

// jsonObjectText implements JSONObjectTextFunction.
func jsonObjectText(doc any) (any, error) {
	text, ok := argText(doc)
	if !ok {
		return nil, nil
	}
	n, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	if n.kind != '{' {
		return nil, errJSONSyntax
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range n.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		writeJSONString(&b, k)
		b.WriteString(" : ")
		v := n.elems[i]
		if v.kind == '"' {
			writeJSONString(&b, v.str)
		} else {
			b.WriteString(v.raw)
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}
