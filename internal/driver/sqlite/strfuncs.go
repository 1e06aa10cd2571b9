package sqlite

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// String functions PostgreSQL has and SQLite lacks (or has with another
// meaning), registered in both SQLite builds under StringFunctionPrefix
// + PostgreSQL's name, with PostgreSQL 15's semantics on a UTF-8
// database with the C collation (the replicas' setup): lengths count
// characters, NULL in any argument gives NULL, and errors carry
// PostgreSQL's SQLSTATE and message (see pgFunctionError).
//
// Text arguments arrive as SQLite holds them: text, or an integer where
// PostgreSQL would have converted an integer to text; anything else
// (a float, whose text differs from PostgreSQL's numeric) fails rather
// than answer differently. The SQL writer only calls these with the
// argument types it checked.

// StringFunctionPrefix is the prefix of the string functions' SQL names.
const StringFunctionPrefix = "shepherd_"

// StringFunctions are the names (without StringFunctionPrefix) and
// argument counts of the string functions; -1 is any number.
var StringFunctions = map[string]int{
	"lpad": 3, "rpad": 3, "left": 2, "right": 2, "reverse": 1, "repeat": 2,
	"initcap": 1, "split_part": 3, "ascii": 1, "chr": 1, "translate": 3,
	"starts_with": 2, "format": -1, "regexp_match": 2, "regexp_replace": 4,
	"regexp_substr": 2, "regexp_count": 2, "regexp_group": 2,
	"quote_literal": 1, "quote_nullable": 1,
}

// pgFunctionTag starts the message of an error a shepherd function fails
// with in PostgreSQL's terms: "shepherd-pg-error SQLSTATE: message".
// classify reads the SQLSTATE and message back (SQLite passes a
// function's error text through as the statement's message).
const pgFunctionTag = "shepherd-pg-error "

// pgFunctionError is an error of a shepherd function as PostgreSQL words
// it.
func pgFunctionError(code, format string, args ...any) error {
	return errors.New(pgFunctionTag + code + ": " + fmt.Sprintf(format, args...))
}

// pgFunctionErrorOf reads a pgFunctionError back out of SQLite's message.
func pgFunctionErrorOf(msg string) (code, message string, ok bool) {
	i := strings.Index(msg, pgFunctionTag)
	if i < 0 {
		return "", "", false
	}
	rest := msg[i+len(pgFunctionTag):]
	code, message, ok = strings.Cut(rest, ": ")
	if !ok || len(code) != 5 {
		return "", "", false
	}
	return code, bareMessage(message), true
}

// isPGFunctionError reports whether SQLite's message is a
// pgFunctionError's.
func isPGFunctionError(msg string) bool {
	_, _, ok := pgFunctionErrorOf(msg)
	return ok
}

// SQLSTATEs of the string functions' errors.
const (
	invalidParameterValue   = "22023"
	programLimitExceeded    = "54000"
	invalidRegularExpession = "2201B"
)

// errNotText is a text argument SQLite holds in a form whose text
// PostgreSQL would write otherwise.
var errNotText = pgFunctionError("0A000", "shepherd cannot use a non-text value as a string function's text argument on SQLite replicas")

// twoTextArgs reads a function's first two arguments as text; null
// says one is NULL (the function's answer is then NULL).
func twoTextArgs(a []any) (x, y string, null bool, err error) {
	x, n1, err := textArg(a[0])
	if err != nil {
		return "", "", false, err
	}
	y, n2, err := textArg(a[1])
	if err != nil {
		return "", "", false, err
	}
	return x, y, n1 || n2, nil
}

// textArg reads a text argument; null reports SQL NULL.
func textArg(v any) (s string, null bool, err error) {
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case string:
		return x, false, nil
	case []byte:
		return string(x), false, nil
	case int64:
		return strconv.FormatInt(x, 10), false, nil
	}
	return "", false, errNotText
}

// intArg reads an integer argument (PostgreSQL's int4).
func intArg(v any) (n int64, null bool, err error) {
	switch x := v.(type) {
	case nil:
		return 0, true, nil
	case int64:
		if x < -1<<31 || x > 1<<31-1 {
			return 0, false, pgFunctionError("22003", "integer out of range")
		}
		return x, false, nil
	}
	return 0, false, pgFunctionError("0A000", "shepherd cannot use a non-integer value as a string function's integer argument on SQLite replicas")
}

// maxAllocChars is the largest character count PostgreSQL allocates for
// a padded string on a UTF-8 database (four bytes a character, within
// MaxAllocSize less the varlena header).
const maxAllocChars = (0x3fffffff - 4) / 4

// strFunc is the Go implementation of one string function; args are
// already cgoArg-ed.
type strFunc func(args []any) (any, error)

// stringFuncs implements StringFunctions.
var stringFuncs = map[string]strFunc{
	"lpad":           func(a []any) (any, error) { return pad(a, true) },
	"rpad":           func(a []any) (any, error) { return pad(a, false) },
	"left":           func(a []any) (any, error) { return leftRight(a, true) },
	"right":          func(a []any) (any, error) { return leftRight(a, false) },
	"reverse":        reverse,
	"repeat":         repeat,
	"initcap":        initcap,
	"split_part":     splitPart,
	"ascii":          ascii,
	"chr":            chr,
	"translate":      translate,
	"starts_with":    startsWith,
	"format":         format,
	"regexp_match":   regexpMatch,
	"regexp_replace": regexpReplace,
	"regexp_substr":  regexpSubstr,
	"regexp_count":   regexpCount,
	"regexp_group":   regexpGroup,
	"quote_literal":  func(a []any) (any, error) { return quote(a, false) },
	"quote_nullable": func(a []any) (any, error) { return quote(a, true) },
}

// quote is quote_literal (NULL for NULL) and quote_nullable (the word
// NULL for NULL).
func quote(a []any, nullable bool) (any, error) {
	s, null, err := textArg(a[0])
	switch {
	case err != nil:
		return nil, err
	case null && nullable:
		return "NULL", nil
	case null:
		return nil, nil
	}
	return quoteLiteral(s), nil
}

// pad is lpad (left) and rpad: the text padded with fill (repeated) or
// truncated to length characters; a negative length is 0, an empty fill
// pads nothing.
func pad(a []any, left bool) (any, error) {
	s, n1, err := textArg(a[0])
	if err != nil {
		return nil, err
	}
	length, n2, err := intArg(a[1])
	if err != nil {
		return nil, err
	}
	fill, n3, err := textArg(a[2])
	if err != nil {
		return nil, err
	}
	if n1 || n2 || n3 {
		return nil, nil
	}
	length = max(length, 0)
	if length > maxAllocChars {
		return nil, pgFunctionError(programLimitExceeded, "requested length too large")
	}
	r := []rune(s)
	if int64(len(r)) >= length || fill == "" {
		return string(r[:min(int64(len(r)), length)]), nil
	}
	f := []rune(fill)
	padding := make([]rune, 0, length-int64(len(r)))
	for i := 0; int64(len(padding)) < length-int64(len(r)); i++ {
		padding = append(padding, f[i%len(f)])
	}
	if left {
		return string(padding) + s, nil
	}
	return s + string(padding), nil
}

// leftRight is left (first) and right: the first (last) n characters,
// or for a negative n all but the last (first) -n.
func leftRight(a []any, first bool) (any, error) {
	s, n1, err := textArg(a[0])
	if err != nil {
		return nil, err
	}
	n, n2, err := intArg(a[1])
	if err != nil {
		return nil, err
	}
	if n1 || n2 {
		return nil, nil
	}
	r := []rune(s)
	size := int64(len(r))
	keep := n
	if n < 0 {
		keep = max(size+n, 0)
	}
	keep = min(keep, size)
	if first {
		return string(r[:keep]), nil
	}
	return string(r[size-keep:]), nil
}

func reverse(a []any) (any, error) {
	s, null, err := textArg(a[0])
	if err != nil || null {
		return nil, err
	}
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r), nil
}

// repeat fails as PostgreSQL does when the result would pass its 1 GB
// allocation limit; a negative count gives ”.
func repeat(a []any) (any, error) {
	s, n1, err := textArg(a[0])
	if err != nil {
		return nil, err
	}
	n, n2, err := intArg(a[1])
	if err != nil {
		return nil, err
	}
	if n1 || n2 {
		return nil, nil
	}
	n = max(n, 0)
	if int64(len(s))*n+4 > 0x3fffffff {
		return nil, pgFunctionError(programLimitExceeded, "requested length too large")
	}
	return strings.Repeat(s, int(n)), nil
}

// initcap is PostgreSQL's under the C collation: byte by byte, an ASCII
// letter after an ASCII letter or digit is lowered, any other raised;
// bytes of multibyte characters are neither and start a new word.
func initcap(a []any) (any, error) {
	s, null, err := textArg(a[0])
	if err != nil || null {
		return nil, err
	}
	b := []byte(s)
	inWord := false
	for i, c := range b {
		if inWord {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
		} else if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
		inWord = 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
	}
	return string(b), nil
}

// splitPart is split_part(s, delimiter, n): the nth field (from the end
// for a negative n), ” beyond the last; an empty delimiter makes s one
// field; n = 0 fails.
func splitPart(a []any) (any, error) {
	s, n1, err := textArg(a[0])
	if err != nil {
		return nil, err
	}
	d, n2, err := textArg(a[1])
	if err != nil {
		return nil, err
	}
	n, n3, err := intArg(a[2])
	if err != nil {
		return nil, err
	}
	if n1 || n2 || n3 {
		return nil, nil
	}
	if n == 0 {
		return nil, pgFunctionError(invalidParameterValue, "field position must not be zero")
	}
	if s == "" {
		return "", nil
	}
	var fields []string
	if d == "" {
		fields = []string{s}
	} else {
		fields = strings.Split(s, d)
	}
	if n < 0 {
		n += int64(len(fields)) + 1
	}
	if n < 1 || n > int64(len(fields)) {
		return "", nil
	}
	return fields[n-1], nil
}

// ascii is the code point of the first character, 0 for ”.
func ascii(a []any) (any, error) {
	s, null, err := textArg(a[0])
	if err != nil || null {
		return nil, err
	}
	if s == "" {
		return int64(0), nil
	}
	r, _ := utf8.DecodeRuneInString(s)
	return int64(r), nil
}

// chr is the character of a code point, with PostgreSQL's errors for
// those UTF-8 cannot hold.
func chr(a []any) (any, error) {
	n, null, err := intArg(a[0])
	if err != nil || null {
		return nil, err
	}
	switch {
	case n < 0:
		return nil, pgFunctionError(invalidParameterValue, "character number must be positive")
	case n == 0:
		return nil, pgFunctionError(programLimitExceeded, "null character not permitted")
	case n > 0x10ffff:
		return nil, pgFunctionError(programLimitExceeded, "requested character too large for encoding: %d", n)
	case 0xd800 <= n && n <= 0xdfff:
		return nil, pgFunctionError(programLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return string(rune(n)), nil
}

// translate replaces each character of s found in from by the character
// at the same place in to (the first place, for a character repeated in
// from), or drops it where to is shorter.
func translate(a []any) (any, error) {
	var v [3]string
	for i := range v {
		s, null, err := textArg(a[i])
		if err != nil || null {
			return nil, err
		}
		v[i] = s
	}
	from, to := []rune(v[1]), []rune(v[2])
	var b strings.Builder
	for _, r := range v[0] {
		i := indexRune(from, r)
		switch {
		case i < 0:
			b.WriteRune(r)
		case i < len(to):
			b.WriteRune(to[i])
		}
	}
	return b.String(), nil
}

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

func startsWith(a []any) (any, error) {
	s, p, null, err := twoTextArgs(a)
	if err != nil || null {
		return nil, err
	}
	if strings.HasPrefix(s, p) {
		return int64(1), nil
	}
	return int64(0), nil
}

// format is PostgreSQL's format(): %s (NULL as ”), %L (quote_literal,
// NULL as NULL) and %% with PostgreSQL's positions (%n$), widths (a
// number or *, - to pad on the right) and errors. %I needs PostgreSQL's
// keyword list and is refused by the SQL writer; here it fails.
func format(a []any) (any, error) {
	f, null, err := textArg(a[0])
	if err != nil || null {
		return nil, err
	}
	args := a[1:]
	var b strings.Builder
	next := 0 // the next argument an unnumbered specifier takes
	fr := []rune(f)
	for i := 0; i < len(fr); i++ {
		if fr[i] != '%' {
			b.WriteRune(fr[i])
			continue
		}
		i++
		if i >= len(fr) {
			return nil, pgFunctionError(invalidParameterValue, "unterminated format() type specifier")
		}
		if fr[i] == '%' {
			b.WriteByte('%')
			continue
		}
		// [argpos$][flags][width]type
		argPos := -1
		if n, j, ok := digits(fr, i); ok && j < len(fr) && fr[j] == '$' {
			if n == 0 {
				return nil, pgFunctionError(invalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
			}
			argPos, i = n-1, j+1
		}
		leftAlign := false
		for i < len(fr) && fr[i] == '-' {
			leftAlign = true
			i++
		}
		width := 0
		switch {
		case i < len(fr) && fr[i] == '*':
			i++
			wPos := next
			if n, j, ok := digits(fr, i); ok && j < len(fr) && fr[j] == '$' {
				if n == 0 {
					return nil, pgFunctionError(invalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
				}
				wPos, i = n-1, j+1
			} else {
				next++
			}
			if wPos >= len(args) {
				return nil, pgFunctionError(invalidParameterValue, "too few arguments for format()")
			}
			wv, wnull, err := intArg(args[wPos])
			if err != nil {
				return nil, err
			}
			if !wnull {
				if wv < 0 {
					leftAlign = true
					wv = -wv
				}
				width = int(wv)
			}
		default:
			if n, j, ok := digits(fr, i); ok {
				width, i = n, j
			}
		}
		if i >= len(fr) {
			return nil, pgFunctionError(invalidParameterValue, "unterminated format() type specifier")
		}
		typ := fr[i]
		if typ != 's' && typ != 'L' && typ != 'I' {
			return nil, pgFunctionError(invalidParameterValue, "unrecognized format() type specifier \"%c\"", typ)
		}
		if argPos < 0 {
			argPos = next
			next++
		} else {
			next = argPos + 1
		}
		if argPos >= len(args) {
			return nil, pgFunctionError(invalidParameterValue, "too few arguments for format()")
		}
		v, vnull, err := textArg(args[argPos])
		if err != nil {
			return nil, err
		}
		var out string
		switch typ {
		case 's':
			if !vnull {
				out = v
			}
		case 'L':
			if vnull {
				out = "NULL"
			} else {
				out = quoteLiteral(v)
			}
		case 'I':
			return nil, errors.New("shepherd cannot write format() with %I for SQLite replicas")
		}
		if pad := width - utf8.RuneCountInString(out); pad > 0 {
			if leftAlign {
				out += strings.Repeat(" ", pad)
			} else {
				out = strings.Repeat(" ", pad) + out
			}
		}
		b.WriteString(out)
	}
	return b.String(), nil
}

// digits reads a decimal number at fr[i:], returning it and the index
// after it.
func digits(fr []rune, i int) (n, j int, ok bool) {
	for j = i; j < len(fr) && '0' <= fr[j] && fr[j] <= '9'; j++ {
		n = n*10 + int(fr[j]-'0')
		if n > 1<<30 {
			n = 1 << 30
		}
	}
	return n, j, j > i
}

// quoteLiteral is PostgreSQL's quote_literal: quotes doubled, and with a
// backslash in the text an E” literal with backslashes doubled.
func quoteLiteral(s string) string {
	q := strings.ReplaceAll(s, "'", "''")
	if strings.Contains(s, `\`) {
		return "E'" + strings.ReplaceAll(q, `\`, `\\`) + "'"
	}
	return "'" + q + "'"
}

// Regular expressions: the SQL writer translates PostgreSQL's pattern
// (the subset whose meaning it can keep) into Go's syntax with
// leftmost-longest matching, so these functions receive Go patterns.

// regexCache holds compiled patterns; patterns are constants of
// statements, so the set is small, and it is dropped when it grows.
var regexCache sync.Map

var regexCacheSize struct {
	sync.Mutex
	n int
}

func compiled(pattern string) (*regexp.Regexp, error) {
	if re, ok := regexCache.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, pgFunctionError(invalidRegularExpession, "invalid regular expression: %v", err)
	}
	re.Longest()
	regexCacheSize.Lock()
	if regexCacheSize.n >= 1024 {
		regexCache.Clear()
		regexCacheSize.n = 0
	}
	regexCacheSize.n++
	regexCacheSize.Unlock()
	regexCache.Store(pattern, re)
	return re, nil
}

// regexpMatch is s ~ pattern: 1 if the pattern matches anywhere in s.
func regexpMatch(a []any) (any, error) {
	s, p, null, err := twoTextArgs(a)
	if err != nil || null {
		return nil, err
	}
	re, err := compiled(p)
	if err != nil {
		return nil, err
	}
	if re.MatchString(s) {
		return int64(1), nil
	}
	return int64(0), nil
}

// regexpSubstr is substring(s FROM pattern) for a pattern without
// capturing groups: the leftmost-longest match, NULL for none.
func regexpSubstr(a []any) (any, error) {
	s, p, null, err := twoTextArgs(a)
	if err != nil || null {
		return nil, err
	}
	re, err := compiled(p)
	if err != nil {
		return nil, err
	}
	loc := re.FindStringIndex(s)
	if loc == nil {
		return nil, nil
	}
	return s[loc[0]:loc[1]], nil
}

// regexpReplace is regexp_replace(s, pattern, replacement, global) with
// PostgreSQL's replacement text: \& is the match, \1 to \9 its groups
// (empty for a group the pattern lacks or that took no part), \\ a
// backslash, any other backslash stays as it is. The SQL writer passes
// groups only of patterns that parse a match one way (see
// dialect.pgRegex.uniqueGroups), where Go's groups are PostgreSQL's.
// global is 1 for the g flag.
func regexpReplace(a []any) (any, error) {
	var v [3]string
	for i := range v {
		s, null, err := textArg(a[i])
		if err != nil || null {
			return nil, err
		}
		v[i] = s
	}
	global, ok := a[3].(int64)
	if !ok {
		return nil, errors.New("shepherd_regexp_replace: bad flag")
	}
	re, err := compiled(v[1])
	if err != nil {
		return nil, err
	}
	s, repl := v[0], v[2]
	var b strings.Builder
	copied := 0
	err = pgMatches(re, v[1], s, global != 0, func(m []int) {
		b.WriteString(s[copied:m[0]])
		writeReplacement(&b, repl, s, m)
		copied = m[1]
	})
	if err != nil {
		return nil, err
	}
	b.WriteString(s[copied:])
	return b.String(), nil
}

// pgMatches calls match with the byte offsets of each match of re
// (compiled from pattern) in s, in PostgreSQL's order
// (replace_text_regexp, setup_regexp_matches): the next search starts
// where the last match ended, or one character further after an empty
// match, so that an empty match right after a match counts (Go's
// FindAll skips it). The text before a later start is cut off, where \A
// (the writer's ^, the only anchor at the start) must not match. Only
// the first match unless all.
func pgMatches(re *regexp.Regexp, pattern, s string, all bool, match func(m []int)) error {
	pos := 0
	for pos <= len(s) {
		r := re
		if pos > 0 {
			var err error
			if r, err = compiled(strings.ReplaceAll(pattern, `\A`, `[^\x{0}-\x{10ffff}]`)); err != nil {
				return err
			}
		}
		loc := r.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += pos
			}
		}
		start, end := loc[0], loc[1]
		match(loc)
		switch {
		case end > start:
			pos = end
		case end < len(s):
			_, size := utf8.DecodeRuneInString(s[end:])
			pos = end + size
		default:
			pos = end + 1
		}
		if !all {
			break
		}
	}
	return nil
}

// regexpCount is regexp_count(s, pattern): the number of matches, found
// as regexp_replace finds them with the g flag.
func regexpCount(a []any) (any, error) {
	var v [2]string
	for i := range v {
		s, null, err := textArg(a[i])
		if err != nil || null {
			return nil, err
		}
		v[i] = s
	}
	re, err := compiled(v[1])
	if err != nil {
		return nil, err
	}
	n := int64(0)
	err = pgMatches(re, v[1], v[0], true, func([]int) { n++ })
	return n, err
}

// writeReplacement writes repl for the match m (submatch byte offsets
// into s, -1 for a group that took no part).
func writeReplacement(b *strings.Builder, repl, s string, m []int) {
	group := func(n int) string {
		if 2*n+1 >= len(m) || m[2*n] < 0 {
			return ""
		}
		return s[m[2*n]:m[2*n+1]]
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			b.WriteByte(c)
			continue
		}
		switch d := repl[i+1]; {
		case d == '&':
			b.WriteString(group(0))
			i++
		case d == '\\':
			b.WriteByte('\\')
			i++
		case '1' <= d && d <= '9':
			// A group the pattern does not have: nothing.
			b.WriteString(group(int(d - '0')))
			i++
		default:
			b.WriteByte('\\')
		}
	}
}

// regexpGroup is substring(s FROM pattern) for a pattern with groups:
// the first group's text, NULL where nothing matches or the group took
// no part.
func regexpGroup(a []any) (any, error) {
	var v [2]string
	for i := range v {
		s, null, err := textArg(a[i])
		if err != nil || null {
			return nil, err
		}
		v[i] = s
	}
	re, err := compiled(v[1])
	if err != nil {
		return nil, err
	}
	m := re.FindStringSubmatchIndex(v[0])
	if m == nil || len(m) < 4 || m[2] < 0 {
		return nil, nil
	}
	return v[0][m[2]:m[3]], nil
}
