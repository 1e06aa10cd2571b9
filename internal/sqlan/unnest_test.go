package sqlan

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestUnnestInsert: an INSERT of unnest()'s rows is expanded at execution
// into INSERT ... VALUES, an element a row, with the client's array
// parameters described as PostgreSQL describes them; other shapes are
// analysed as written.
func TestUnnestInsert(t *testing.T) {
	st, err := ParseOne("INSERT INTO t (a, b) SELECT * FROM unnest($1::int[], $2::text[]) RETURNING a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Unnest == nil {
		t.Fatal("not expanded")
	}
	if got := st.ParamOIDs(); len(got) != 2 || got[0] != 1007 || got[1] != 1009 {
		t.Errorf("ParamOIDs = %v, want [1007 1009]", got)
	}
	text, args, err := st.Unnest.Expand([]driver.Arg{{Text: "{1, 2 ,3}"}, {Text: `{x,"y z"}`}})
	if err != nil {
		t.Fatal(err)
	}
	want := "INSERT INTO t (a, b) VALUES ($1::int, $2::text), ($3::int, $4::text), ($5::int, NULL) RETURNING a"
	if text != want {
		t.Errorf("Expand:\n got %s\nwant %s", text, want)
	}
	var vals []string
	for _, a := range args {
		vals = append(vals, a.Text)
	}
	if strings.Join(vals, "|") != "1|x|2|y z|3" {
		t.Errorf("args = %q", vals)
	}
	for _, sql := range []string{
		"INSERT INTO t (a) SELECT x + 1 FROM unnest($1::int[]) AS x",
		"INSERT INTO t (a) SELECT * FROM unnest($1::int[]) WHERE true",
		"INSERT INTO t (a) SELECT * FROM unnest($1::int[]) WITH ORDINALITY",
		"INSERT INTO t (a) SELECT * FROM generate_series(1, 3)",
	} {
		st, err := ParseOne(sql)
		if err == nil && st.Unnest != nil {
			t.Errorf("%s: expanded", sql)
		}
	}
	for _, bad := range []string{"{1,2", "1,2}", "{1,2}x", "{1,,2}", `{"a}`} {
		if _, err := ParseArray(bad); err == nil || !strings.Contains(err.Error(), "malformed array literal") {
			t.Errorf("ParseArray(%q) = %v", bad, err)
		}
	}
}

// TestParseArrayNesting checks that unnest's array reader refuses the
// nesting PostgreSQL refuses (22P02: an element after a sub-array, a
// sub-array after an element, sub-arrays of different lengths) and
// refuses clearly (0A000) what PostgreSQL 15 reads its own way (braces
// nesting to different depths); answer's TestArrayParserMatchesPostgres
// compares the reader with PostgreSQL on random literals.
func TestParseArrayNesting(t *testing.T) {
	for s, code := range map[string]string{
		`{ {},"a"}`:     "22P02",
		`{{1},2}`:       "22P02",
		`{1,{2}}`:       "22P02",
		`{{1,2},{3}}`:   "22P02",
		`{{1},{{2}}}`:   "0A000",
		`{{{1}},{2}}`:   "0A000",
		`{{},{1}}`:      "0A000",
		`{{1,2},{3,4}`:  "22P02",
		`{{1,2},{3,4}}`: "",
	} {
		_, err := ParseArray(s)
		got := ""
		if err != nil {
			got = pgerr.From(err).Code
		}
		if got != code {
			t.Errorf("ParseArray(%q): %v, want SQLSTATE %q", s, err, code)
		}
	}
}
