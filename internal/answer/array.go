package answer

import "strings"

// ArrayError is why an array literal was refused: a malformed literal
// (Detail says what, in PostgreSQL's words), explicit bounds
// ([1:2]={...}, Bounds), or, for ParseArray, a well-formed literal of
// more than one dimension (Dims).
type ArrayError struct {
	Detail string
	Dims   bool
	Bounds bool
	// Uneven (with Dims) marks a literal whose braces nest to different depths, or
	// hold empty sub-arrays beside elements ({{1},{{2}}}, {{},{1}}):
	// PostgreSQL 15 reads some of these in ways of its own (version 17
	// refuses them); shepherd refuses them all.
	Uneven bool
}

func (e *ArrayError) Error() string {
	switch {
	case e.Bounds:
		return "explicit array bounds"
	case e.Uneven:
		return "array literal with sub-arrays of uneven depth"
	case e.Dims:
		return "multidimensional array or explicit bounds"
	}
	return "malformed array literal: " + e.Detail
}

// maxDims is PostgreSQL's MAXDIM.
const maxDims = 6

// ParseArray reads PostgreSQL's text form of a one-dimensional array
// as array_in does ({1,2,NULL}, {"a b","c\"d"}, { x , y }: unquoted
// elements lose the white space around them, an unquoted NULL in any
// case is a NULL element, nil here). Errors are *ArrayError: Dims (and
// Bounds) for an array PostgreSQL reads that has more dimensions or
// explicit bounds.
func ParseArray(s string) ([]*string, error) {
	items, dims, err := ParseArrayDims(s)
	switch {
	case err != nil:
		return nil, err
	case len(dims) > 1:
		return nil, &ArrayError{Dims: true}
	}
	return items, nil
}

// ParseArrayDims is ParseArray for arrays of any number of dimensions:
// the elements in storage order (row-major) and the length of each
// dimension (none for an empty array). It is shepherd's one reader of
// array literals; its tests compare it with PostgreSQL's array_in.
func ParseArrayDims(s string) (items []*string, dims []int, err error) {
	p := arrayParser{s: s}
	p.space()
	if p.i < len(s) && s[p.i] == '[' {
		return nil, nil, &ArrayError{Dims: true, Bounds: true}
	}
	if p.i >= len(s) || s[p.i] != '{' {
		return nil, nil, malformedArray("Array value must start with \"{\" or dimension information.")
	}
	if err := p.level(0); err != nil {
		return nil, nil, err
	}
	p.space()
	if p.i < len(s) {
		return nil, nil, malformedArray("Junk after closing right brace.")
	}
	switch {
	case len(p.items) == 0:
		return []*string{}, nil, nil
	case p.empty, p.uneven:
		return nil, nil, &ArrayError{Uneven: true, Dims: true}
	}
	return p.items, p.dims, nil
}

func malformedArray(detail string) error { return &ArrayError{Detail: detail} }

// arrayParser reads an array literal: items are its elements so far,
// dims the lengths of the dimensions met so far, leaf the depth whose
// braces hold elements (when seen), empty whether a {} was met inside.
type arrayParser struct {
	s     string
	i     int
	items []*string
	dims  []int
	leaf  int
	seen  bool
	empty bool
	// uneven is set when elements were met at two depths; the literal
	// is read to its end, so that a malformed one gets its error.
	uneven bool
}

func (p *arrayParser) space() {
	for p.i < len(p.s) && IsArraySpace(p.s[p.i]) {
		p.i++
	}
}

// level reads the {...} at p.i, at nesting depth d: elements or
// sub-arrays, not both (PostgreSQL's errors for either after the
// other).
func (p *arrayParser) level(d int) error {
	if d >= maxDims {
		return malformedArray("Too many dimensions.")
	}
	p.i++ // {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.empty = p.empty || d > 0
		return nil
	}
	n, subs := 0, false
	for {
		p.space()
		if p.i >= len(p.s) {
			return malformedArray("Unexpected end of input.")
		}
		switch c := p.s[p.i]; {
		case c == '{':
			if n > 0 && !subs {
				return malformedArray("Unexpected \"{\" character.")
			}
			subs = true
			if err := p.level(d + 1); err != nil {
				return err
			}
		case c == ',' || c == '}':
			return malformedArray("Unexpected \"" + string(c) + "\" character.")
		default:
			if subs {
				return malformedArray("Unexpected array element.")
			}
			if err := p.element(); err != nil {
				return err
			}
		}
		n++
		p.space()
		if p.i >= len(p.s) {
			return malformedArray("Unexpected end of input.")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return p.count(d, n, !subs)
		default:
			return malformedArray("Unexpected \"" + string(p.s[p.i]) + "\" character.")
		}
	}
}

// count records that the braces at depth d held n items, elements when
// leaf: every array at one depth has the same length, and elements are
// at one depth.
func (p *arrayParser) count(d, n int, leaf bool) error {
	switch {
	case leaf && !p.seen:
		p.seen, p.leaf = true, d
	case leaf && d != p.leaf, !leaf && p.seen && d >= p.leaf:
		p.uneven = true
	}
	if p.uneven {
		return nil
	}
	for len(p.dims) <= d {
		p.dims = append(p.dims, -1)
	}
	switch {
	case p.dims[d] == -1:
		p.dims[d] = n
	case p.dims[d] != n:
		return malformedArray("Multidimensional arrays must have sub-arrays with matching dimensions.")
	}
	return nil
}

// element reads one element, quoted or not.
func (p *arrayParser) element() error {
	s := p.s
	if s[p.i] == '"' {
		p.i++
		var b strings.Builder
		for {
			if p.i >= len(s) {
				return malformedArray("Unexpected end of input.")
			}
			c := s[p.i]
			p.i++
			if c == '\\' {
				if p.i >= len(s) {
					return malformedArray("Unexpected end of input.")
				}
				b.WriteByte(s[p.i])
				p.i++
				continue
			}
			if c == '"' {
				break
			}
			b.WriteByte(c)
		}
		v := b.String()
		p.items = append(p.items, &v)
		return nil
	}
	var b strings.Builder
	trail, escaped := 0, false
	for p.i < len(s) && s[p.i] != ',' && s[p.i] != '}' {
		c := s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i >= len(s) {
				return malformedArray("Unexpected end of input.")
			}
			b.WriteByte(s[p.i])
			p.i++
			trail, escaped = 0, true
		case c == '{' || c == '"':
			return malformedArray("Unexpected \"" + string(c) + "\" character.")
		case IsArraySpace(c):
			b.WriteByte(c)
			trail++
		default:
			b.WriteByte(c)
			trail = 0
		}
	}
	v := b.String()
	v = v[:len(v)-trail]
	if !escaped && strings.EqualFold(v, "null") {
		p.items = append(p.items, nil)
	} else {
		p.items = append(p.items, &v)
	}
	return nil
}

// IsArraySpace is PostgreSQL's array_isspace.
func IsArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// FormatArray writes elements as array_out does: an element is quoted
// when it is empty, is NULL in any case, or holds a brace, comma, quote,
// backslash or white space; inside quotes " and \ are escaped.
func FormatArray(items []*string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if it == nil {
			b.WriteString("NULL")
			continue
		}
		b.WriteString(QuoteArrayElement(*it))
	}
	b.WriteByte('}')
	return b.String()
}

// QuoteArrayElement is one element of FormatArray's text.
func QuoteArrayElement(v string) string {
	quote := v == "" || strings.EqualFold(v, "null")
	for i := 0; i < len(v) && !quote; i++ {
		c := v[i]
		quote = c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || IsArraySpace(c)
	}
	if !quote {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}
