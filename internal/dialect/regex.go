package dialect

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pgRegex is a PostgreSQL regular expression (an ARE) in the subset whose
// meaning shepherd keeps on the other engines, written as a pattern both
// Go's regexp (SQLite's shepherd functions, matching leftmost-longest as
// PostgreSQL does for patterns without non-greedy quantifiers) and
// MariaDB's PCRE read alike.
//
// The subset: literal characters, ., ^ and $ (the start and end of the
// text: PostgreSQL's default is not newline-sensitive), bracket
// expressions of characters and ranges, the escapes \d \D \w \W \s \S
// (ASCII classes, as PostgreSQL's under the C collation), \n \t \r \f \v
// and escaped punctuation, groups ( ) and (?: ), alternation, and the
// greedy quantifiers * + ? {m} {m,} {m,n} (up to 255). Case-insensitive
// matching is written out as [xX] for ASCII letters only, as
// PostgreSQL's under the C collation (Go's and PCRE's own folding is
// Unicode's). Everything else — back-references, lookaround, non-greedy
// quantifiers, character classes by name, word boundaries, embedded
// options — is refused: the engines read them otherwise.
type pgRegex struct {
	pattern string // Go/PCRE syntax
	groups  int    // capturing groups of the original
	// oneVariable: no alternation or group, at most one atom of
	// variable length, so that leftmost-first (PCRE) and
	// leftmost-longest (PostgreSQL) pick the same match; nonEmpty: it
	// cannot match the empty string.
	oneVariable, nonEmpty bool
	// uniqueGroups: no alternation, at most one part of variable length
	// and no repeated group holding a capturing group, so that a match
	// parses one way only and every engine gives its groups the same
	// text (POSIX's rules for them and Go's differ where a match parses
	// several ways).
	uniqueGroups bool
}

// maxRegexLen bounds a translated pattern, well within what PCRE
// compiles.
const maxRegexLen = 4096

type regexParser struct {
	src       []rune
	i         int
	icase     bool
	b         strings.Builder
	groups    int
	alts      bool
	variables int
	minLen    int // of the top-level sequence, when oneVariable
	// repeatedCapture: a quantifier applies to a group holding a
	// capturing group.
	repeatedCapture bool
}

// translateRegex translates a PostgreSQL pattern; the error names what
// is refused.
func translateRegex(pattern string, icase bool) (re pgRegex, err error) {
	if !utf8.ValidString(pattern) {
		return re, fmt.Errorf("a regular expression that is not valid UTF-8")
	}
	p := &regexParser{src: []rune(pattern), icase: icase}
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(regexRefusal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("a regular expression with %s", string(msg))
		}
	}()
	p.b.WriteString("(?s)")
	p.alternation(0)
	if p.i < len(p.src) {
		p.refuse("an unbalanced )")
	}
	re.pattern = p.b.String()
	// Nested bounds multiply: Go refuses a pattern whose repetitions
	// expand beyond 1000 (PostgreSQL takes it), and PCRE copies bounded
	// items into a compiled pattern of limited size.
	if _, err := regexp.Compile(re.pattern); err != nil || len(re.pattern) > maxRegexLen {
		return re, fmt.Errorf("a regular expression too large for the engines (nested or long repetitions)")
	}
	re.groups = p.groups
	re.oneVariable = !p.alts && p.groups == 0 && p.variables <= 1
	re.uniqueGroups = !p.alts && p.variables <= 1 && !p.repeatedCapture
	re.nonEmpty = re.oneVariable && p.minLen > 0
	return re, nil
}

type regexRefusal string

func (p *regexParser) refuse(what string) { panic(regexRefusal(what)) }

func (p *regexParser) peek() (rune, bool) {
	if p.i < len(p.src) {
		return p.src[p.i], true
	}
	return 0, false
}

// alternation reads branches up to an unmatched ) or the end.
func (p *regexParser) alternation(depth int) {
	for {
		p.sequence(depth)
		c, ok := p.peek()
		if !ok || c == ')' {
			if c == ')' && depth == 0 {
				p.refuse("an unbalanced )")
			}
			return
		}
		// c == '|'
		p.alts = true
		p.b.WriteByte('|')
		p.i++
	}
}

// sequence reads pieces up to | or ) or the end.
func (p *regexParser) sequence(depth int) {
	for {
		c, ok := p.peek()
		if !ok || c == '|' || c == ')' {
			return
		}
		groupsBefore := p.groups
		quantifiable, width := p.atom(depth)
		captures := p.groups > groupsBefore
		c, ok = p.peek()
		if !ok || !strings.ContainsRune("*+?{", c) {
			if depth == 0 {
				p.minLen += width
			}
			continue
		}
		if !quantifiable {
			p.refuse("a quantifier after an anchor or at the start")
		}
		if captures {
			p.repeatedCapture = true
		}
		lo, hi := p.quantifier()
		if lo != hi {
			p.variables++
		}
		if depth == 0 {
			p.minLen += width * lo
		}
		if c, ok := p.peek(); ok && (c == '?' || c == '*' || c == '+' || c == '{') {
			p.refuse("a non-greedy or repeated quantifier")
		}
	}
}

// quantifier reads and writes a quantifier; hi is -1 for no bound.
func (p *regexParser) quantifier() (lo, hi int) {
	c := p.src[p.i]
	p.i++
	switch c {
	case '*':
		p.b.WriteByte('*')
		return 0, -1
	case '+':
		p.b.WriteByte('+')
		return 1, -1
	case '?':
		p.b.WriteByte('?')
		return 0, 1
	}
	// {m}, {m,}, {m,n}
	end := p.i
	for end < len(p.src) && p.src[end] != '}' {
		end++
	}
	if end == len(p.src) {
		p.refuse("a { that is not a bound")
	}
	body := string(p.src[p.i:end])
	p.i = end + 1
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 255 || s == "" || strings.TrimLeft(s, "0123456789") != "" {
			p.refuse("a bound {" + body + "} other than {m}, {m,} or {m,n} up to 255")
		}
		return n
	}
	m, n, comma := strings.Cut(body, ",")
	lo = num(m)
	switch {
	case !comma:
		hi = lo
	case n == "":
		hi = -1
	default:
		hi = num(n)
		if hi < lo {
			p.refuse("a bound {" + body + "} other than {m}, {m,} or {m,n} up to 255")
		}
	}
	p.b.WriteString("{" + body + "}")
	return lo, hi
}

// atom reads and writes one atom; quantifiable is false for anchors,
// width is the characters it matches (0 for a group: not counted).
func (p *regexParser) atom(depth int) (quantifiable bool, width int) {
	c := p.src[p.i]
	p.i++
	switch c {
	case '*', '+', '?', '{':
		p.refuse("a quantifier with nothing to repeat")
	case '(':
		if c, ok := p.peek(); ok && c == '?' {
			if p.i+1 < len(p.src) && p.src[p.i+1] == ':' {
				p.i += 2
			} else {
				p.refuse("lookaround or embedded options (?...)")
			}
			p.b.WriteString("(?:")
		} else {
			// Capturing in Go and PCRE too, numbered alike.
			p.groups++
			p.b.WriteString("(")
		}
		p.alternation(depth + 1)
		if c, ok := p.peek(); !ok || c != ')' {
			p.refuse("an unbalanced (")
		}
		p.i++
		p.b.WriteByte(')')
		return true, 0
	case '.':
		p.b.WriteByte('.')
		return true, 1
	case '^':
		p.b.WriteString(`\A`)
		return false, 0
	case '$':
		p.b.WriteString(`\z`)
		return false, 0
	case '[':
		p.bracket()
		return true, 1
	case '\\':
		p.escape()
		return true, 1
	}
	p.literal(c)
	return true, 1
}

// classes are the escapes' ASCII classes, as bracket contents.
var classes = map[rune]string{
	'd': `0-9`,
	'w': `0-9A-Za-z_`,
	's': `\x{9}-\x{d}\x{20}`,
}

// escapeChars are the escapes standing for one character.
var escapeChars = map[rune]rune{'n': '\n', 't': '\t', 'r': '\r', 'f': '\f', 'v': '\v'}

func (p *regexParser) escape() {
	c, ok := p.peek()
	if !ok {
		p.refuse("a trailing \\")
	}
	p.i++
	switch {
	case classes[c] != "":
		p.b.WriteString("[" + classes[c] + "]")
	case c == 'D' || c == 'W' || c == 'S':
		p.b.WriteString("[^" + classes[c+'a'-'A'] + "]")
	case escapeChars[c] != 0:
		p.literal(escapeChars[c])
	case c < 128 && !isAlnum(c):
		p.literal(c)
	default:
		p.refuse(`the escape \` + string(c))
	}
}

func isAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// hexChar writes c as \x{...}, which Go and PCRE read alike everywhere.
func hexChar(c rune) string { return `\x{` + strconv.FormatInt(int64(c), 16) + `}` }

// literal writes one character, both cases of an ASCII letter when
// matching case-insensitively.
func (p *regexParser) literal(c rune) {
	if p.icase && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		p.b.WriteString("[" + string(c|0x20) + string(c&^0x20) + "]")
		return
	}
	if isAlnum(c) || c >= 128 {
		p.b.WriteRune(c)
		return
	}
	p.b.WriteString(hexChar(c))
}

// bracket reads [...] (the [ read) and writes its equivalent.
func (p *regexParser) bracket() {
	p.b.WriteByte('[')
	if c, ok := p.peek(); ok && c == '^' {
		p.b.WriteByte('^')
		p.i++
	}
	first := true
	for {
		c, ok := p.peek()
		if !ok {
			p.refuse("an unbalanced [")
		}
		if c == ']' && !first {
			p.i++
			break
		}
		first = false
		p.i++
		if c == '[' {
			if n, ok := p.peek(); ok && (n == ':' || n == '.' || n == '=') {
				p.refuse("[:class:], [.collating.] or [=equivalence=] in brackets")
			}
		}
		if c == '\\' {
			e, ok := p.peek()
			if !ok {
				p.refuse("an unbalanced [")
			}
			p.i++
			switch {
			case classes[e] != "":
				p.b.WriteString(classes[e]) // closed under ASCII case
				continue
			case escapeChars[e] != 0:
				c = escapeChars[e]
			case e < 128 && !isAlnum(e):
				c = e
			default:
				p.refuse(`the escape \` + string(e) + " in brackets")
			}
		}
		hi := c
		if n, ok := p.peek(); ok && n == '-' && p.i+1 < len(p.src) && p.src[p.i+1] != ']' {
			p.i++
			hi = p.src[p.i]
			p.i++
			if hi == '\\' || hi == '[' {
				p.refuse("a range ending in an escape or [")
			}
			if hi < c {
				p.refuse("a range out of order")
			}
		}
		p.rangeOf(c, hi)
	}
	p.b.WriteByte(']')
}

// rangeOf writes the range lo-hi in brackets, with the other case of its
// ASCII letters when matching case-insensitively.
func (p *regexParser) rangeOf(lo, hi rune) {
	write := func(lo, hi rune) {
		p.b.WriteString(hexChar(lo))
		if hi != lo {
			p.b.WriteString("-" + hexChar(hi))
		}
	}
	write(lo, hi)
	if !p.icase {
		return
	}
	for _, span := range [][2]rune{{'a', 'z'}, {'A', 'Z'}} {
		l, h := max(lo, span[0]), min(hi, span[1])
		if l <= h {
			write(l^0x20, h^0x20)
		}
	}
}
