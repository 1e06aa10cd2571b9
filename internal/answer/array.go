package answer

import "strings"

// ArrayError is why ParseArray refused its input: a malformed literal
// (Detail says what, in PostgreSQL's words) or one of more than one
// dimension or with explicit bounds (Dims).
type ArrayError struct {
	Detail string
	Dims   bool
}

func (e *ArrayError) Error() string {
	if e.Dims {
		return "multidimensional array or explicit bounds"
	}
	return "malformed array literal: " + e.Detail
}

// ParseArray reads PostgreSQL's text form of a one-dimensional array
// as array_in does ({1,2,NULL}, {"a b","c\"d"}, { x , y }: unquoted
// elements lose the white space around them, an unquoted NULL in any
// case is a NULL element, nil here). Errors are *ArrayError.
func ParseArray(s string) ([]*string, error) {
	malformed := func(detail string) error { return &ArrayError{Detail: detail} }
	refused := &ArrayError{Dims: true}
	i := 0
	space := func() {
		for i < len(s) && IsArraySpace(s[i]) {
			i++
		}
	}
	space()
	if i < len(s) && s[i] == '[' {
		return nil, refused
	}
	if i >= len(s) || s[i] != '{' {
		return nil, malformed("Array value must start with \"{\" or dimension information.")
	}
	i++
	space()
	var out []*string
	if i < len(s) && s[i] == '}' {
		i++
		space()
		if i < len(s) {
			return nil, malformed("Junk after closing right brace.")
		}
		return []*string{}, nil
	}
	for {
		space()
		if i >= len(s) {
			return nil, malformed("Unexpected end of input.")
		}
		switch c := s[i]; {
		case c == '{':
			return nil, refused
		case c == ',' || c == '}':
			return nil, malformed("Unexpected \"" + string(c) + "\" character.")
		case c == '"':
			i++
			var b strings.Builder
			for {
				if i >= len(s) {
					return nil, malformed("Unexpected end of input.")
				}
				c := s[i]
				i++
				if c == '\\' {
					if i >= len(s) {
						return nil, malformed("Unexpected end of input.")
					}
					b.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					break
				}
				b.WriteByte(c)
			}
			v := b.String()
			out = append(out, &v)
		default:
			var b strings.Builder
			trail, escaped := 0, false
			for i < len(s) && s[i] != ',' && s[i] != '}' {
				c := s[i]
				i++
				switch {
				case c == '\\':
					if i >= len(s) {
						return nil, malformed("Unexpected end of input.")
					}
					b.WriteByte(s[i])
					i++
					trail, escaped = 0, true
				case c == '{' || c == '"':
					return nil, malformed("Unexpected \"" + string(c) + "\" character.")
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
				out = append(out, nil)
			} else {
				out = append(out, &v)
			}
		}
		space()
		if i >= len(s) {
			return nil, malformed("Unexpected end of input.")
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			i++
			space()
			if i < len(s) {
				return nil, malformed("Junk after closing right brace.")
			}
			return out, nil
		default:
			return nil, malformed("Unexpected \"" + string(s[i]) + "\" character.")
		}
	}
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
