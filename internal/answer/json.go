package answer

import (
	"bytes"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds the nesting appendJSON follows; deeper documents
// are compared as text.
const maxJSONDepth = 256

// appendJSON appends the canonical form of a JSON document: no
// insignificant white space, object members sorted by key with only the
// last of duplicate keys kept (as jsonb keeps them), strings with only
// the escapes JSON needs (\" \\ and \u00XX for control characters), and
// numbers as their significant digits times a power of ten ("15e-1" for
// 1.5 and 1.50, "1" for 1 and 1.0, "1e2" for 100 and 1E+2). ok is false
// when text is not one JSON value.
func appendJSON(dst []byte, text string) ([]byte, bool) {
	p := jsonParser{s: text}
	start := len(dst)
	dst, ok := p.value(dst, 0)
	p.space()
	if !ok || p.i != len(p.s) {
		return dst[:start], false
	}
	return dst, true
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(dst []byte, depth int) ([]byte, bool) {
	if depth > maxJSONDepth {
		return dst, false
	}
	p.space()
	if p.i >= len(p.s) {
		return dst, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(dst, depth)
	case c == '[':
		p.i++
		dst = append(dst, '[')
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return append(dst, ']'), true
		}
		for {
			var ok bool
			if dst, ok = p.value(dst, depth+1); !ok {
				return dst, false
			}
			p.space()
			if p.i >= len(p.s) {
				return dst, false
			}
			switch p.s[p.i] {
			case ',':
				p.i++
				dst = append(dst, ',')
			case ']':
				p.i++
				return append(dst, ']'), true
			default:
				return dst, false
			}
		}
	case c == '"':
		return p.str(dst)
	case c == '-' || isDigit(c):
		return p.number(dst)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit {
			p.i += len(lit)
			return append(dst, lit...), true
		}
	}
	return dst, false
}

// member is one key and value of an object, as spans of a scratch buffer.
type member struct {
	key, end int // key is [start, key), value is [key, end)
	start    int
}

func (p *jsonParser) object(dst []byte, depth int) ([]byte, bool) {
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return append(dst, "{}"...), true
	}
	// Members are written canonically into scratch, then copied to dst in
	// key order.
	var scratch []byte
	var members []member
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return dst, false
		}
		m := member{start: len(scratch)}
		var ok bool
		if scratch, ok = p.str(scratch); !ok {
			return dst, false
		}
		m.key = len(scratch)
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return dst, false
		}
		p.i++
		if scratch, ok = p.value(scratch, depth+1); !ok {
			return dst, false
		}
		m.end = len(scratch)
		members = append(members, m)
		p.space()
		if p.i >= len(p.s) {
			return dst, false
		}
		if p.s[p.i] == '}' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return dst, false
		}
		p.i++
	}
	key := func(m member) []byte { return scratch[m.start:m.key] }
	// Stable, so that among equal keys the last written stays last.
	slices.SortStableFunc(members, func(a, b member) int { return bytes.Compare(key(a), key(b)) })
	dst = append(dst, '{')
	first := true
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(key(m), key(members[i+1])) {
			continue // a later duplicate wins
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, scratch[m.start:m.key]...)
		dst = append(dst, ':')
		dst = append(dst, scratch[m.key:m.end]...)
	}
	return append(dst, '}'), true
}

// str reads a JSON string and writes it canonically.
func (p *jsonParser) str(dst []byte) ([]byte, bool) {
	p.i++ // the opening quote
	dst = append(dst, '"')
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return append(dst, '"'), true
		case c < 0x20:
			return dst, false
		case c != '\\':
			dst = appendJSONChar(dst, rune(c), c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return dst, false
		}
		esc := p.s[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			dst = appendJSONChar(dst, rune(esc), esc)
		case 'b':
			dst = appendJSONChar(dst, '\b', '\b')
		case 'f':
			dst = appendJSONChar(dst, '\f', '\f')
		case 'n':
			dst = appendJSONChar(dst, '\n', '\n')
		case 'r':
			dst = appendJSONChar(dst, '\r', '\r')
		case 't':
			dst = appendJSONChar(dst, '\t', '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return dst, false
			}
			if utf16.IsSurrogate(r) {
				lo, ok := rune(0), false
				if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
					p.i += 2
					lo, ok = p.hex4()
				}
				r = utf16.DecodeRune(r, lo)
				if !ok || r == utf8.RuneError {
					return dst, false
				}
			}
			if r < 0x80 {
				dst = appendJSONChar(dst, r, byte(r))
			} else {
				dst = utf8.AppendRune(dst, r)
			}
		default:
			return dst, false
		}
	}
	return dst, false
}

// appendJSONChar writes one ASCII character (or any byte from 0x80 on,
// copied as is) of a string, escaped if JSON requires it.
func appendJSONChar(dst []byte, r rune, b byte) []byte {
	const hex = "0123456789abcdef"
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', b)
	case r < 0x20:
		return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
	}
	return append(dst, b)
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

// number reads a JSON number (the grammar of RFC 8259) and writes it as
// [-]digitsE[exp]: the significant digits as an integer times a power
// of ten, which is still valid JSON.
func (p *jsonParser) number(dst []byte) ([]byte, bool) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	if p.i == intStart || p.s[intStart] == '0' && p.i-intStart > 1 {
		return dst, false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		fracStart := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if p.i == fracStart {
			return dst, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		expStart := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if p.i == expStart {
			return dst, false
		}
	}
	// appendDecimal writes "0" or sign, digits, "e", exponent with the
	// value 0.digits × 10^exp; rewrite it as digits × 10^(exp-len).
	var buf [64]byte
	canon, ok := appendDecimal(buf[:0], p.s[start:p.i])
	if !ok {
		return dst, false
	}
	if len(canon) == 1 { // "0"
		return append(dst, '0'), true
	}
	e := bytes.IndexByte(canon, 'e')
	if e < 0 {
		return dst, false
	}
	exp, ok := parseExponent(string(canon[e:]))
	if !ok {
		return dst, false
	}
	if canon[0] == '-' {
		dst = append(dst, '-')
	}
	dst = append(dst, canon[1:e]...)
	exp -= int64(e - 1)
	if exp != 0 {
		dst = append(dst, 'e')
		dst = appendInt(dst, exp)
	}
	return dst, true
}

func appendInt(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}
