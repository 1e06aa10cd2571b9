package dialect

import (
	"regexp"
	"testing"
)

// TestTranslateRegex checks which PostgreSQL patterns are translated (and
// into what) and which are refused because Go's RE2 or MariaDB's PCRE
// read them otherwise.
func TestTranslateRegex(t *testing.T) {
	for _, c := range []struct {
		pg, want string
		icase    bool
		oneVar   bool
		nonEmpty bool
	}{
		{pg: "^[A-D]", want: `(?s)\A[\x{41}-\x{44}]`, oneVar: true, nonEmpty: true},
		{pg: "[0-9]+", want: `(?s)[\x{30}-\x{39}]+`, oneVar: true, nonEmpty: true},
		{pg: "a$", want: `(?s)a\z`, oneVar: true, nonEmpty: true},
		{pg: "x*", want: `(?s)x*`, oneVar: true},
		{pg: `\s\d\w`, want: `(?s)[\x{9}-\x{d}\x{20}][0-9][0-9A-Za-z_]`, oneVar: true, nonEmpty: true},
		{pg: "ab", icase: true, want: `(?s)[aA][bB]`, oneVar: true, nonEmpty: true},
		{pg: "[b-c]", icase: true, want: `(?s)[\x{62}-\x{63}\x{42}-\x{43}]`, oneVar: true, nonEmpty: true},
		{pg: "a|ab", want: `(?s)a|ab`},
		{pg: "(ab)+c", want: `(?s)(ab)+c`},
		{pg: "(?:ab)+c", want: `(?s)(?:ab)+c`, oneVar: true, nonEmpty: true},
		{pg: "a+b*", want: `(?s)a+b*`},
		{pg: `a\.b`, want: `(?s)a\x{2e}b`, oneVar: true, nonEmpty: true},
		{pg: "é.", want: `(?s)é.`, oneVar: true, nonEmpty: true},
	} {
		re, err := translateRegex(c.pg, c.icase)
		if err != nil {
			t.Errorf("%q: %v", c.pg, err)
			continue
		}
		if re.pattern != c.want || re.oneVariable != c.oneVar || re.nonEmpty != c.nonEmpty {
			t.Errorf("%q: got %q one variable %v non-empty %v, want %q %v %v", c.pg, re.pattern, re.oneVariable, re.nonEmpty, c.want, c.oneVar, c.nonEmpty)
		}
		if _, err := regexp.Compile(re.pattern); err != nil {
			t.Errorf("%q: Go cannot compile %q: %v", c.pg, re.pattern, err)
		}
	}
	for _, pg := range []string{
		`(a)\1`, "a(?=b)", "a(?!b)", "a*?", "a+?", "a??", "a{2}?", "[[:alpha:]]", `\bx`, `\mx\M`, `\yx`,
		"a{256}", "a{3,2}", "(?i)a", "***:a", "(", ")", "[a", "*a", "a**", `\`, `\x41`, `\u0041`, "a{,2}", "a{",
		"[z-a]", `[\D]`, "(a{255}){255}",
	} {
		if re, err := translateRegex(pg, false); err == nil {
			t.Errorf("%q: translated to %q, want it refused", pg, re.pattern)
		}
	}
}

// FuzzTranslateRegex checks that no pattern a client writes panics the
// translator and that every pattern it accepts compiles in Go.
func FuzzTranslateRegex(f *testing.F) {
	for _, s := range []string{"^[A-D]", "a|b(c)*", `[]a-]\d{2,3}$`, "(?:x)+", `\`, "[", "a{", "[a-", "(?", "é.[é-ü]"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, pattern string, icase bool) {
		re, err := translateRegex(pattern, icase)
		if err != nil {
			return
		}
		if _, err := regexp.Compile(re.pattern); err != nil {
			t.Errorf("%q: Go cannot compile %q: %v", pattern, re.pattern, err)
		}
	})
}
