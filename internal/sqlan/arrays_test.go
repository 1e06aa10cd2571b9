package sqlan

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestArrayRefusals: what shepherd cannot answer as PostgreSQL does with
// arrays is refused up front with 0A000 naming the construct (and the
// replicas, for what one engine cannot express), not left to the vote.
func TestArrayRefusals(t *testing.T) {
	env := envWith(t, "CREATE TABLE post (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', scores integer[])")
	for _, c := range []struct{ sql, names string }{
		{"SELECT id FROM post ORDER BY tags", "ORDER BY a value of type _text"},
		{"SELECT array_agg(id) FROM post", "array_agg() without ORDER BY"},
		{"SELECT max(scores) FROM post", "max() of arrays"},
		{"SELECT unnest(scores) FROM post", "unnest"},
		{"SELECT id FROM post WHERE scores > '{1}'", "operator > on arrays"},
		{"SELECT id FROM post WHERE tags @> tags", "operator @> on arrays neither of which is a constant (MariaDB)"},
		{"SELECT string_to_array(tags::text, ',') FROM post", "string_to_array() of other than constants (MariaDB)"},
		{"INSERT INTO post (id, tags) VALUES (1, ARRAY[upper('a')])", "ARRAY[...] of computed values"},
		{"CREATE TABLE n (a numeric[])", "numeric[]"},
	} {
		_, err := ParseOneIn(c.sql, env)
		pe, ok := err.(*pgerr.Error)
		if !ok || pe.Code != pgerr.FeatureNotSupported || !strings.Contains(pe.Message, c.names) {
			t.Errorf("%s: want 0A000 naming %q, got %v", c.sql, c.names, err)
		}
	}
}

// TestArrayParamsCanonical: an array parameter reaches every replica as
// PostgreSQL's output text of the array, whatever form the client sent;
// one PostgreSQL refuses fails before any replica runs the statement.
func TestArrayParamsCanonical(t *testing.T) {
	env := envWith(t, "CREATE TABLE post (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', scores integer[])")
	st, err := ParseOneIn("INSERT INTO post (id, tags, scores) VALUES ($1, $2, $3)", env)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.ParamOIDs(); len(got) != 3 || got[1] != 1009 || got[2] != 1007 {
		t.Errorf("parameter OIDs %v, want [23 1009 1007]", got)
	}
	args := []driver.Arg{{Text: "1"}, {Text: `{"go", "sql" ,"a b",NULL,"NULL"}`}, {Text: "{ 01 ,+2}"}}
	if err := st.CheckArgs(args); err != nil {
		t.Fatal(err)
	}
	if args[1].Text != `{go,sql,"a b",NULL,"NULL"}` || args[2].Text != "{1,2}" {
		t.Errorf("canonical texts %q %q", args[1].Text, args[2].Text)
	}
	for _, bad := range []struct{ text, code string }{{"{a", pgerr.InvalidTextRepresentation}, {"{{1},{2}}", pgerr.FeatureNotSupported}} {
		err := st.CheckArgs([]driver.Arg{{Text: "1"}, {Text: bad.text}, {Null: true}})
		if pe, ok := err.(*pgerr.Error); !ok || pe.Code != bad.code {
			t.Errorf("%s: want %s, got %v", bad.text, bad.code, err)
		}
	}
}
