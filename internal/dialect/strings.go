package dialect

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// String functions and regular expressions with PostgreSQL 15's meaning.
// On SQLite they call the functions shepherd registers in both builds
// (driver/sqlite/strfuncs.go: shepherd_<name>, PostgreSQL's semantics in
// Go); on MariaDB they are rewritten to MariaDB's functions where those
// mean the same, and refused where not.

// liteStringPrefix is driver/sqlite's StringFunctionPrefix (dialect does
// not import the driver).
const liteStringPrefix = "shepherd_"

// isTextArg reports whether t is a type a text argument may have: text,
// varchar or unknown (a literal). char(n) is left out: PostgreSQL strips
// its padding on the way to text, which the engines' storage of it does
// not promise.
func isTextArg(t string) bool { return t == "" || t == "text" || t == "varchar" }

// isIntArg reports whether t fits PostgreSQL's int4 argument.
func isIntArg(t string) bool { return t == "" || t == "int4" || t == "int2" }

// stringFunc writes the string functions of this file; false when name
// is not one of them.
func (w *writer) stringFunc(name string, fc *pg_query.FuncCall) bool {
	a := fc.Args
	n := len(a)
	texts := func(idx ...int) {
		for _, i := range idx {
			if t := w.typeOf(a[i]); !isTextArg(t) {
				w.refuse("%s() of a %s value", name, t)
			}
		}
	}
	ints := func(idx ...int) {
		for _, i := range idx {
			if t := w.typeOf(a[i]); !isIntArg(t) {
				w.refuse("%s() with a %s count", name, t)
			}
		}
	}
	switch {
	case (name == "lpad" || name == "rpad") && (n == 2 || n == 3):
		texts(0)
		ints(1)
		if n == 3 {
			texts(2)
		}
		w.pad(name, a)
	case (name == "left" || name == "right") && n == 2:
		texts(0)
		ints(1)
		w.leftRight(name, a)
	case (name == "reverse" || name == "initcap" || name == "ascii") && n == 1,
		name == "repeat" && n == 2, name == "starts_with" && n == 2, name == "translate" && n == 3:
		texts(0)
		switch name {
		case "repeat":
			ints(1)
		case "starts_with":
			texts(1)
		case "translate":
			texts(1, 2)
		}
		w.simpleString(name, a)
	case (name == "concat" || name == "concat_ws") && n > 0:
		w.concat(name, a)
	case (name == "btrim" || name == "ltrim" || name == "rtrim") && n == 2 && w.my() && isNullConst(a[1]):
		w.str("NULL")
	case (name == "btrim" || name == "ltrim" || name == "rtrim") && n == 2 && w.my() && isStringConst(a[1]):
		set, _ := strConst(a[1])
		if len([]rune(set)) == 1 {
			return false // TRIM(... FROM ...), in funcs.go
		}
		texts(0)
		w.trimSet(name, a[0], set)
	case name == "octet_length" && n == 1 && w.typeOf(a[0]) == "bpchar":
		w.charOctets(a[0])
	case (name == "quote_literal" || name == "quote_nullable") && n == 1:
		if t := w.typeOf(a[0]); !isTextArg(t) && t != "int2" && t != "int4" && t != "int8" {
			w.refuse("%s() of a %s value", name, t)
		}
		w.quote(name, a[0])
	case name == "md5" && n == 1:
		if t := w.typeOf(a[0]); !isTextArg(t) && t != "bytea" {
			w.refuse("md5() of a %s value", t)
		}
		if w.my() {
			w.call("MD5", fc)
		} else {
			w.call("shepherd_md5", fc)
		}
	case name == "split_part" && n == 3:
		texts(0, 1)
		ints(2)
		w.splitPart(a)
	case name == "chr" && n == 1:
		ints(0)
		w.chr(a[0])
	case name == "format" && n >= 1:
		w.format(a)
	case name == "regexp_replace" && (n == 3 || n == 4):
		texts(0, 2)
		w.regexpReplace(a)
	case name == "regexp_like" && (n == 2 || n == 3):
		texts(0)
		global, icase := w.regexFlags(name, a, 2)
		if global {
			w.fail(pgerr.InvalidParameterValue, "regexp_like() does not support the \"global\" option")
		}
		w.regexMatchCase("regexp_like()", a[0], a[1], icase, false)
	case name == "regexp_count" && n == 2:
		texts(0)
		re := w.regex("regexp_count()", a[1], false)
		if w.my() {
			w.refuse("regexp_count() (PCRE picks other matches than PostgreSQL)")
		}
		w.liteCall("regexp_count", w.argFn(a[0]), func() { w.literal(re.pattern) })
	case name == "regexp_substr" && n == 2:
		// The whole match, groups or not.
		texts(0)
		w.regexpSubstrRE(a[0], w.regex("regexp_substr()", a[1], false))
	case (name == "substring" || name == "substr") && n == 2 && (w.typeOf(a[1]) == "text" || isStringConst(a[1])):
		if name == "substr" {
			return false
		}
		texts(0)
		w.regexpSubstr(a[0], a[1])
	default:
		return false
	}
	return true
}

// maxMariaDBChars and maxMariaDBRepeat bound the constant lengths
// and counts written for MariaDB, whose functions answer NULL for a
// result beyond max_allowed_packet (16 MB by default) where
// PostgreSQL answers it: a padded string of 4-byte characters stays
// within 1 MB; a repeated one within the bound times its text.
const (
	maxMariaDBChars  = 1 << 18
	maxMariaDBRepeat = 1 << 10
)

func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}

func isStringConst(n *pg_query.Node) bool {
	_, ok := strConst(n)
	return ok
}

// liteCall writes shepherd_<name>(args) for SQLite.
func (w *writer) liteCall(name string, args ...func()) {
	w.str(liteStringPrefix + name + "(")
	for i, a := range args {
		if i > 0 {
			w.str(", ")
		}
		a()
	}
	w.str(")")
}

func (w *writer) argFn(n *pg_query.Node) func() { return func() { w.expr(n) } }

func (w *writer) constFn(s string) func() { return func() { w.str(s) } }

// pad writes lpad() and rpad(). MariaDB's LPAD answers NULL for a
// negative length (PostgreSQL: ”) and for an empty fill (PostgreSQL:
// the text cut to the length).
func (w *writer) pad(name string, a []*pg_query.Node) {
	fill := w.constFn("' '")
	fillText := " "
	if len(a) == 3 {
		fill = w.argFn(a[2])
		f, ok := strConst(a[2])
		if isNullConst(a[2]) {
			f, ok = "NULL", true // not empty: LPAD answers NULL, as PostgreSQL
		}
		if !ok && w.my() {
			w.refuse("%s() with a fill that is not a constant", name)
		}
		fillText = f
	}
	if w.lite() {
		w.liteCall(name, w.argFn(a[0]), w.argFn(a[1]), fill)
		return
	}
	// MariaDB answers NULL for a result longer than its packet, where
	// PostgreSQL answers it (or fails, beyond 1 GB).
	if c, ok := intConst(a[1]); (!ok || c > maxMariaDBChars) && !isNullConst(a[1]) {
		w.refuse("%s() to a length that is not a constant of at most %d", name, maxMariaDBChars)
	}
	length := func() {
		w.str("GREATEST(")
		w.expr(a[1])
		w.str(", 0)")
	}
	if fillText == "" {
		w.str("LEFT(")
		w.expr(a[0])
		w.str(", ")
		length()
		w.str(")")
		return
	}
	w.str(strings.ToUpper(name) + "(")
	w.expr(a[0])
	w.str(", ")
	length()
	w.str(", ")
	fill()
	w.str(")")
}

// leftRight writes left() and right(); MariaDB's answer ” for a
// negative count, PostgreSQL's all but the last (first) -n characters.
func (w *writer) leftRight(name string, a []*pg_query.Node) {
	if w.lite() {
		w.liteCall(name, w.argFn(a[0]), w.argFn(a[1]))
		return
	}
	c, ok := intConst(a[1])
	if isNullConst(a[1]) {
		w.str(strings.ToUpper(name) + "(")
		w.expr(a[0])
		w.str(", NULL)")
		return
	}
	if !ok {
		w.refuse("%s() with a length that is not a constant", name)
	}
	w.str(strings.ToUpper(name) + "(")
	if c >= 0 {
		w.expr(a[0])
		w.str(", " + strconv.FormatInt(c, 10) + ")")
		return
	}
	w.repeated(a[0], 2, func() {
		w.expr(a[0])
		w.str(", GREATEST(CHAR_LENGTH(")
		w.expr(a[0])
	})
	w.str(") - " + strconv.FormatInt(-c, 10) + ", 0))")
}

// simpleString writes reverse, initcap, ascii, repeat, starts_with and
// translate.
func (w *writer) simpleString(name string, a []*pg_query.Node) {
	if w.lite() {
		args := make([]func(), len(a))
		for i := range a {
			args[i] = w.argFn(a[i])
		}
		w.liteCall(name, args...)
		return
	}
	switch name {
	case "repeat":
		if c, ok := intConst(a[1]); (!ok || c > maxMariaDBRepeat) && !isNullConst(a[1]) {
			w.refuse("repeat() a number of times that is not a constant of at most %d", maxMariaDBRepeat)
		}
		w.str("REPEAT(")
		list(w, a, func(n *pg_query.Node) { w.expr(n) })
		w.str(")")
	case "initcap":
		// PostgreSQL's under the C collation (as the sqlite driver's):
		// ASCII letters only, each lowered after an ASCII letter or
		// digit and raised elsewhere. MariaDB's LOWER would lower
		// other letters too: 26 REPLACEs (case-sensitive) lower the
		// ASCII ones, then one REGEXP_REPLACE a letter raises it at
		// the start of the text or after any other character.
		w.str(strings.Repeat("REGEXP_REPLACE(", 26) + strings.Repeat("REPLACE(", 26))
		w.expr(a[0])
		for c := 'A'; c <= 'Z'; c++ {
			w.str(", '" + string(c) + "', '" + string(c+'a'-'A') + "')")
		}
		for c := 'a'; c <= 'z'; c++ {
			w.str(", '(?-i)(^|[^A-Za-z0-9])" + string(c) + "', '\\1" + string(c-'a'+'A') + "')")
		}
	case "reverse":
		w.str(strings.ToUpper(name) + "(")
		list(w, a, func(n *pg_query.Node) { w.expr(n) })
		w.str(")")
	case "ascii":
		// The code point of the first character (ORD of a UTF-32
		// character is its code point; of '' it is 0, as PostgreSQL's).
		w.str("ORD(CONVERT(LEFT(")
		w.expr(a[0])
		w.str(", 1) USING utf32))")
	case "starts_with":
		w.str("(LOCATE(")
		w.expr(a[1])
		w.str(", ")
		w.expr(a[0])
		w.str(") = 1)")
	case "translate":
		// One REPLACE a character, which is translate() when no
		// character it writes is one a later REPLACE replaces.
		from, ok1 := strConst(a[1])
		to, ok2 := strConst(a[2])
		if !ok1 || !ok2 || strings.ContainsAny(to, from) {
			w.refuse("translate() with characters that are not constants or that map onto characters translated")
		}
		f, t := []rune(from), []rune(to)
		for range f {
			w.str("REPLACE(")
		}
		w.expr(a[0])
		for i, c := range f {
			out := ""
			if i < len(t) {
				out = string(t[i])
			}
			w.str(", ")
			w.literal(string(c))
			w.str(", ")
			w.literal(out)
			w.str(")")
		}
	default:
		w.refuse("%s()", name)
	}
}

// splitPart writes split_part(). On MariaDB: a constant delimiter of
// one character and a constant field number, with SUBSTRING_INDEX and a
// count of the delimiters (PostgreSQL answers ” beyond the last field,
// SUBSTRING_INDEX the last field).
func (w *writer) splitPart(a []*pg_query.Node) {
	if k, ok := intConst(a[2]); ok && k == 0 {
		w.fail(pgerr.InvalidParameterValue, "field position must not be zero")
	}
	if w.lite() {
		w.liteCall("split_part", w.argFn(a[0]), w.argFn(a[1]), w.argFn(a[2]))
		return
	}
	d, ok := strConst(a[1])
	k, ok2 := intConst(a[2])
	if !ok || len([]rune(d)) != 1 || !ok2 {
		w.refuse("split_part() with a delimiter that is not one constant character or a field number that is not a constant")
	}
	abs := k
	inner, outer := k, int64(-1)
	if k < 0 {
		abs, outer = -k, 1
	}
	w.repeated(a[0], 3, func() {
		w.str("CASE WHEN CHAR_LENGTH(")
		w.expr(a[0])
		w.str(") - CHAR_LENGTH(REPLACE(")
		w.expr(a[0])
		w.str(", ")
		w.literal(d)
		w.str(", '')) < " + strconv.FormatInt(abs-1, 10) + " THEN '' ELSE SUBSTRING_INDEX(SUBSTRING_INDEX(")
		w.expr(a[0])
	})
	w.str(", ")
	w.literal(d)
	w.str(", " + strconv.FormatInt(inner, 10) + "), ")
	w.literal(d)
	w.str(", " + strconv.FormatInt(outer, 10) + ") END")
}

// chr writes chr(); on MariaDB only of a constant, whose errors are
// PostgreSQL's when it has no character.
func (w *writer) chr(x *pg_query.Node) {
	if w.lite() {
		w.liteCall("chr", w.argFn(x))
		return
	}
	c, ok := intConst(x)
	if !ok {
		w.refuse("chr() of a value that is not a constant")
	}
	switch {
	case c < 0:
		w.fail(pgerr.InvalidParameterValue, "character number must be positive")
	case c == 0:
		w.fail(programLimitExceeded, "null character not permitted")
	case c > 0x10ffff:
		w.fail(programLimitExceeded, "requested character too large for encoding: %d", c)
	case 0xd800 <= c && c <= 0xdfff:
		w.fail(programLimitExceeded, "requested character not valid for encoding: %d", c)
	}
	w.str("CONVERT(CHAR(" + strconv.FormatInt(c, 10) + " USING utf32) USING utf8mb4)")
}

// programLimitExceeded is SQLSTATE 54000, which package pgerr does not
// name.
const programLimitExceeded = "54000"

// format writes format() of a constant format string whose values are
// text or integers (their text is the same everywhere). SQLite runs
// PostgreSQL's format(); MariaDB takes %s, %n$s and %% only, as CONCAT.
func (w *writer) format(a []*pg_query.Node) {
	if c := a[0].GetAConst(); c != nil && c.Isnull {
		w.str("NULL")
		return
	}
	f, ok := strConst(a[0])
	if !ok {
		w.refuse("format() with a format that is not a constant")
	}
	for _, x := range a[1:] {
		switch t := w.typeOf(x); t {
		case "", "text", "varchar", "int2", "int4", "int8":
		default:
			w.refuse("format() of a %s value", t)
		}
	}
	type piece struct {
		text string
		arg  int // -1: text
	}
	var pieces []piece
	next := 0
	fr := []rune(f)
	for i := 0; i < len(fr); i++ {
		if fr[i] != '%' {
			pieces = append(pieces, piece{text: string(fr[i]), arg: -1})
			continue
		}
		j := i + 1
		for j < len(fr) && strings.ContainsRune("0123456789$-*", fr[j]) {
			j++
		}
		if j >= len(fr) {
			w.fail(pgerr.InvalidParameterValue, "unterminated format() type specifier")
		}
		spec := string(fr[i+1 : j])
		switch {
		case fr[j] == 'I':
			w.refuse("format() with %%I (PostgreSQL quotes its keywords)")
		case fr[j] == '%' && spec == "":
			pieces = append(pieces, piece{text: "%", arg: -1})
		case fr[j] == 's' && spec == "":
			pieces = append(pieces, piece{arg: next})
			next++
		case fr[j] == 's' && strings.HasSuffix(spec, "$") && strings.Trim(spec, "0123456789$") == "" && strings.Count(spec, "$") == 1:
			k, err := strconv.Atoi(strings.TrimSuffix(spec, "$"))
			if err != nil || k == 0 {
				w.refuse("format() with this specifier")
			}
			pieces = append(pieces, piece{arg: k - 1})
			next = k
		default:
			// SQLite's format() has the rest (and PostgreSQL's errors).
			if w.my() {
				w.refuse("format() with %%L, widths or other specifiers")
			}
		}
		i = j
	}
	if w.lite() {
		w.str(liteStringPrefix + "format(")
		list(w, a, func(n *pg_query.Node) { w.expr(n) })
		w.str(")")
		return
	}
	for _, p := range pieces {
		if p.arg >= len(a)-1 {
			w.fail(pgerr.InvalidParameterValue, "too few arguments for format()")
		}
	}
	w.str("CONCAT(''")
	for _, p := range pieces {
		w.str(", ")
		if p.arg < 0 {
			w.literal(p.text)
			continue
		}
		w.str("COALESCE(CAST(")
		w.expr(a[p.arg+1])
		w.str(" AS CHAR), '')")
	}
	w.str(")")
}

// regex translates a constant pattern or refuses.
func (w *writer) regex(what string, pattern *pg_query.Node, icase bool) pgRegex {
	if tc := pattern.GetTypeCast(); tc != nil {
		pattern = tc.Arg
	}
	p, ok := strConst(pattern)
	if !ok {
		w.refuse("%s with a pattern that is not a constant", what)
	}
	re, err := translateRegex(p, icase)
	if err != nil {
		w.refuse("%s: %v", what, err)
	}
	return re
}

// regexMatch writes ~, ~*, !~ and !~* of a constant pattern.
func (w *writer) regexMatch(op string, l, r *pg_query.Node) {
	if t := w.typeOf(l); !isTextArg(t) {
		w.refuse("%s on a %s value", op, t)
	}
	w.regexMatchCase("operator "+op, l, r, strings.HasSuffix(op, "*"), strings.HasPrefix(op, "!"))
}

// regexMatchCase writes whether pattern r matches l (negated: not).
func (w *writer) regexMatchCase(what string, l, r *pg_query.Node, icase, negated bool) {
	re := w.regex(what, r, icase)
	w.str("(")
	if negated {
		w.str("NOT ")
	}
	if w.lite() {
		w.liteCall("regexp_match", w.argFn(l), func() { w.literal(re.pattern) })
	} else {
		w.str("(")
		w.expr(l)
		w.str(" REGEXP ")
		w.literal(re.pattern)
		w.str(")")
	}
	w.str(")")
}

// regexpReplace writes regexp_replace(s, pattern, replacement [, flags])
// with the flags g, i and c. MariaDB's REGEXP_REPLACE replaces every
// match and picks matches leftmost-first: it is used for the g flag and
// patterns where that is PostgreSQL's leftmost-longest match.
func (w *writer) regexpReplace(a []*pg_query.Node) {
	global, icase := w.regexFlags("regexp_replace", a, 3)
	re := w.regex("regexp_replace()", a[1], icase)
	repl, constRepl := strConst(a[2])
	if re.groups > 0 && (!constRepl || hasGroupRef(repl)) && !re.uniqueGroups {
		w.refuse("regexp_replace() with back-references \\1 to \\9 to a pattern with alternation, repeated groups or more than one variable-length part (the engines assign groups otherwise)")
	}
	if w.lite() {
		g := "0"
		if global {
			g = "1"
		}
		w.liteCall("regexp_replace", w.argFn(a[0]), func() { w.literal(re.pattern) }, w.argFn(a[2]), w.constFn(g))
		return
	}
	if !global || !re.oneVariable || !re.nonEmpty || !constRepl || strings.Contains(repl, `\`) {
		w.refuse("regexp_replace() other than with the g flag, a pattern of one variable-length part that cannot match '', and a replacement without \\")
	}
	w.str("REGEXP_REPLACE(")
	w.expr(a[0])
	w.str(", ")
	w.literal(re.pattern)
	w.str(", ")
	w.expr(a[2])
	w.str(")")
}

// regexFlags reads the flags argument a[i] (when there is one) of a
// regular expression function: g, i and c are taken, the others
// PostgreSQL knows are refused, unknown ones fail as PostgreSQL fails.
func (w *writer) regexFlags(name string, a []*pg_query.Node, i int) (global, icase bool) {
	if len(a) <= i {
		return false, false
	}
	flags, ok := strConst(a[i])
	if !ok {
		w.refuse("%s() with flags that are not a constant", name)
	}
	for _, f := range flags {
		switch f {
		case 'g':
			global = true
		case 'i':
			icase = true
		case 'c':
			icase = false
		case 'b', 'e', 'm', 'n', 'p', 'q', 's', 't', 'w', 'x':
			w.refuse("%s() with the flag %c", name, f)
		default:
			w.fail(pgerr.InvalidParameterValue, "invalid regular expression option: \"%c\"", f)
		}
	}
	return global, icase
}

func hasGroupRef(repl string) bool {
	for i := 0; i+1 < len(repl); i++ {
		if repl[i] == '\\' {
			if '1' <= repl[i+1] && repl[i+1] <= '9' {
				return true
			}
			i++
		}
	}
	return false
}

// regexpSubstr writes substring(s FROM pattern) of a pattern without
// capturing groups (with one, PostgreSQL answers the group's text).
func (w *writer) regexpSubstr(s, pattern *pg_query.Node) {
	re := w.regex("substring(... FROM pattern)", pattern, false)
	if re.groups == 0 {
		w.regexpSubstrRE(s, re)
		return
	}
	// PostgreSQL answers the first group's text.
	if !re.uniqueGroups {
		w.refuse("substring(... FROM pattern) with a group, in a pattern with alternation, repeated groups or more than one variable-length part (the engines assign groups otherwise)")
	}
	if w.my() {
		w.refuse("substring(... FROM pattern) with a group (MariaDB has no function answering a group)")
	}
	w.liteCall("regexp_group", w.argFn(s), func() { w.literal(re.pattern) })
}

// regexpSubstrRE writes the leftmost-longest match of re in s, NULL
// for none.
func (w *writer) regexpSubstrRE(s *pg_query.Node, re pgRegex) {
	if w.lite() {
		w.liteCall("regexp_substr", w.argFn(s), func() { w.literal(re.pattern) })
		return
	}
	if !re.oneVariable {
		w.refuse("a regular expression's match with alternation, groups or more than one variable-length part (PCRE picks the leftmost-first match)")
	}
	// REGEXP_SUBSTR answers '' where nothing matches, PostgreSQL NULL.
	w.repeated(s, 2, func() {
		w.str("CASE WHEN ")
		w.expr(s)
		w.str(" REGEXP ")
		w.literal(re.pattern)
		w.str(" THEN REGEXP_SUBSTR(")
		w.expr(s)
	})
	w.str(", ")
	w.literal(re.pattern)
	w.str(") END")
}

// charOctets writes octet_length() of a char(n) column: PostgreSQL
// counts its padding to n characters, which the engines may not store
// (MariaDB strips it on reading). The value without trailing spaces has
// the same bytes on every engine, and the padding is one byte for each
// character short of n.
func (w *writer) charOctets(x *pg_query.Node) {
	cr := x.GetColumnRef()
	if cr == nil {
		w.refuse("octet_length() of a char(n) value that is not a column")
	}
	c, _ := w.column(refFields(cr))
	if c == nil || len(c.Mods) != 1 {
		w.refuse("octet_length() of a char(n) value of unknown length")
	}
	size := strconv.Itoa(int(c.Mods[0]))
	if w.my() {
		w.str("(LENGTH(RTRIM(")
		w.expr(x)
		w.str(")) + " + size + " - CHAR_LENGTH(RTRIM(")
		w.expr(x)
		w.str(")))")
		return
	}
	w.str("(LENGTH(CAST(RTRIM(")
	w.expr(x)
	w.str(", ' ') AS BLOB)) + " + size + " - LENGTH(RTRIM(")
	w.expr(x)
	w.str(", ' ')))")
}

// concat writes concat() and concat_ws(), which skip NULLs (as
// CONCAT_WS does everywhere) and write each value as its type's output
// function does: text and integers as they are, a boolean as t or f, a
// char(n) padded to n, a numeric with its scale (SQLite holds a float).
// Other types are refused: the engines' text of them differs.
func (w *writer) concat(name string, a []*pg_query.Node) {
	w.str("CONCAT_WS(")
	if name == "concat" {
		w.str("''")
	} else {
		if t := w.typeOf(a[0]); !isTextArg(t) {
			w.refuse("concat_ws() with a %s separator", t)
		}
		w.expr(a[0])
		a = a[1:]
	}
	for _, x := range a {
		w.str(", ")
		w.asText(name, x)
	}
	w.str(")")
}

// asText writes x as PostgreSQL's output function writes its value.
func (w *writer) asText(name string, x *pg_query.Node) {
	t := w.typeOf(x)
	switch {
	case isTextArg(t), t == "int2", t == "int4", t == "int8":
		w.expr(x)
	case t == "bool":
		w.str("CASE ")
		w.expr(x)
		w.str(" WHEN 1 THEN 't' WHEN 0 THEN 'f' END")
	case t == "numeric" && w.my():
		w.expr(x)
	case t == "numeric":
		scale, ok := w.scaleOf(x)
		if !ok || scale > 15 {
			w.refuse("%s() of a numeric value of unknown scale", name)
		}
		w.str("printf('%." + strconv.Itoa(scale) + "f', ")
		w.expr(x)
		w.str(")")
	case t == "bpchar":
		cr := x.GetColumnRef()
		var size int32
		if cr != nil {
			if c, _ := w.column(refFields(cr)); c != nil && len(c.Mods) == 1 {
				size = c.Mods[0]
			}
		}
		if size == 0 {
			w.refuse("%s() of a char(n) value of unknown length", name)
		}
		if w.my() {
			w.str("RPAD(")
		} else {
			w.str(liteStringPrefix + "rpad(")
		}
		w.expr(x)
		w.str(", " + strconv.Itoa(int(size)) + ", ' ')")
	default:
		w.refuse("%s() of a %s value", name, t)
	}
}

// trimSet writes btrim(), ltrim() and rtrim() of a constant set of
// characters other than one for MariaDB, whose TRIM strips a string:
// REGEXP_REPLACE of a run of the set at the start or the end (one
// bracket, repeated: PCRE's first match is the longest one there).
func (w *writer) trimSet(name string, x *pg_query.Node, set string) {
	if set == "" {
		w.expr(x)
		return
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, c := range set {
		b.WriteString(hexChar(c))
	}
	b.WriteString("]+")
	bracket := b.String()
	if name != "rtrim" {
		w.str("REGEXP_REPLACE(")
	}
	if name != "ltrim" {
		w.str("REGEXP_REPLACE(")
	}
	w.expr(x)
	if name != "ltrim" {
		w.str(", ")
		w.literal(bracket + `\z`)
		w.str(", '')")
	}
	if name != "rtrim" {
		w.str(", ")
		w.literal(`\A` + bracket)
		w.str(", '')")
	}
}

// textConcat writes text || value and value || text, where PostgreSQL
// casts the value to text: a boolean as true or false (the engines hold
// 1 and 0), a numeric with its scale (SQLite holds a float); MariaDB
// writes a timestamp with six decimals where PostgreSQL writes none.
func (w *writer) textConcat(l, r *pg_query.Node, lt, rt string) {
	side := func(x *pg_query.Node, t string) {
		switch {
		case t == "bool":
			w.str("CASE ")
			w.expr(x)
			w.str(" WHEN 1 THEN 'true' WHEN 0 THEN 'false' END")
		case t == "numeric" && w.lite():
			scale, ok := w.scaleOf(x)
			if !ok || scale > 15 {
				w.refuse("|| of a numeric value of unknown scale")
			}
			w.str("printf('%." + strconv.Itoa(scale) + "f', ")
			w.expr(x)
			w.str(")")
		case (t == "timestamp" || t == "timestamptz" || t == "time") && w.my():
			w.refuse("|| of a %s value", t)
		default:
			w.expr(x)
		}
	}
	w.str("(")
	side(l, lt)
	w.str(" || ")
	side(r, rt)
	w.str(")")
}

// quote writes quote_literal() and quote_nullable(): the text in quotes,
// quotes doubled, and with a backslash in it an E'...' literal with the
// backslashes doubled (MariaDB's QUOTE escapes otherwise; its session
// has NO_BACKSLASH_ESCAPES, so '\' is one backslash).
func (w *writer) quote(name string, x *pg_query.Node) {
	if w.lite() {
		w.liteCall(name, w.argFn(x))
		return
	}
	if name == "quote_nullable" {
		w.str("COALESCE(")
	}
	w.repeated(x, 2, func() {
		w.str(`CONCAT(CASE WHEN LOCATE('\', `)
		w.expr(x)
		w.str(`) > 0 THEN 'E' ELSE '' END, '''', REPLACE(REPLACE(`)
		w.expr(x)
	})
	w.str(`, '\', '\\'), '''', ''''''), '''')`)
	if name == "quote_nullable" {
		w.str(", 'NULL')")
	}
}
