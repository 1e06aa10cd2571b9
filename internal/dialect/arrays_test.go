package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

func arraySchema(t *testing.T) *schema.Snapshot {
	t.Helper()
	var s *schema.Snapshot
	next, err := s.Apply(parse(t, "CREATE TABLE post (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', scores integer[], flags boolean[])"))
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// TestWriteArrays: array constants reach MariaDB and SQLite as
// PostgreSQL's output text of the array, whatever form the statement
// wrote them in; what the text cannot answer as PostgreSQL does (order,
// computed arrays) is refused, naming the construct.
func TestWriteArrays(t *testing.T) {
	s := arraySchema(t)
	cases := []struct {
		sql string
		// want is a part of both dialects' text; refused, a part of the
		// refusal; lite, when set, a part of SQLite's text (MariaDB
		// refuses).
		want, refused, lite string
	}{
		{sql: `INSERT INTO post VALUES (1, '{ a , "b" ,"c d",NULL,"NULL"}', '{ 01, +2 }', '{yes,OFF}')`,
			want: `'{a,b,"c d",NULL,"NULL"}', '{1,2}', '{t,f}'`},
		{sql: `INSERT INTO post (id, tags) VALUES (1, ARRAY['x', 'y z', NULL, ''])`, want: `'{x,"y z",NULL,""}'`},
		{sql: `UPDATE post SET scores = ARRAY[1, 2]::int[] WHERE tags = '{"a"}'`, want: `'{1,2}'`},
		{sql: `SELECT id FROM post WHERE tags = ARRAY['a']`, want: `'{a}'`},
		{sql: `SELECT id FROM post ORDER BY tags`, refused: "ORDER BY a value of type _text", lite: `ORDER BY shepherd_array_key("tags", 'text')`},
		// What a write stores must be PostgreSQL's text of the array.
		{sql: `UPDATE post SET tags = CASE WHEN id = 1 THEN '{ a }' ELSE tags END`, refused: "a computed value of type text[]"},
		{sql: `UPDATE post SET tags = COALESCE(tags, '{"b"}')`, refused: "a computed value of type text[]"},
		{sql: `UPDATE post SET tags = CASE WHEN id = 1 THEN '{a,"b c"}' ELSE tags END`, want: `'{a,"b c"}'`},
		{sql: `INSERT INTO post (id, tags) SELECT 1, '{ a }'`, refused: "INSERT ... SELECT of a value for array column"},
		{sql: `INSERT INTO post (id, tags) SELECT id + 10, tags FROM post`, want: "tags"},
		{sql: `INSERT INTO post (id, tags) VALUES (1, '{a}') ON CONFLICT (id) DO UPDATE SET tags = EXCLUDED.tags`, want: "tags"},
		{sql: `SELECT x FROM unnest(ARRAY[1, 2]) AS u(x) WHERE x > 1`, want: "SELECT 1 AS "},
		{sql: `SELECT * FROM post, unnest(post.scores) AS u`, refused: "unnest() in FROM of other than an array constant"},
		{sql: `SELECT id FROM post WHERE scores < '{2}'`, refused: "operator < on arrays", lite: `shepherd_array_key("scores", 'int') < shepherd_array_key('{2}', 'int')`},
		{sql: `SELECT max(scores) FROM post`, refused: "max() of arrays", lite: `shepherd_array_unkey(max(shepherd_array_key("scores", 'int')), 'int')`},
		{sql: `SELECT id FROM post WHERE scores BETWEEN '{1}' AND '{2}'`, refused: "BETWEEN on arrays"},
		{sql: `SELECT greatest(scores, '{2}') FROM post`, refused: "GREATEST and LEAST of arrays"},
		{sql: `INSERT INTO post (id, tags) VALUES (1, ARRAY[lower('A')])`, refused: "ARRAY[...] of computed values"},
		{sql: `INSERT INTO post (id, scores) VALUES (1, '{{1,2},{3,4}}')`, refused: "one dimension"},
		{sql: `SELECT id FROM post WHERE 1 > ANY(scores)`, refused: "> ANY (array)"},
		{sql: `SELECT id FROM post WHERE id = ANY(tags)`, refused: "= ANY (array) of a int4 value and a text[]"},
	}
	for _, c := range cases {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			f, err := Write(parse(t, c.sql), d, s)
			if c.lite != "" && d == driver.SQLite {
				if err != nil || !strings.Contains(f.SQL, c.lite) {
					t.Errorf("%v: %s: %v\n got %s\nwant a part %s", d, c.sql, err, f.SQL, c.lite)
				}
				continue
			}
			switch {
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Errorf("%v: %s: want a refusal naming %q, got %v (%s)", d, c.sql, c.refused, err, f.SQL)
			case c.refused == "" && err != nil:
				t.Errorf("%v: %s: %v", d, c.sql, err)
			case c.refused == "" && !strings.Contains(f.SQL, c.want):
				t.Errorf("%v: %s:\n got %s\nwant a part %s", d, c.sql, f.SQL, c.want)
			}
		}
	}
	// A malformed constant fails as PostgreSQL fails it.
	if _, err := Write(parse(t, `INSERT INTO post (id, tags) VALUES (1, '{a,b')`), driver.SQLite, s); err == nil || !strings.Contains(err.Error(), "22P02") && !strings.Contains(err.Error(), "malformed array literal") {
		t.Errorf("malformed literal: %v", err)
	}
}

// FuzzCanonicalArray: the canonical text of any array input shepherd
// accepts is accepted again and is its own canonical text (so a value
// read back from a replica and written again stores the same bytes), and
// no input panics.
func FuzzCanonicalArray(f *testing.F) {
	for _, s := range []string{`{a,"b c",NULL}`, `{ 1 , 02 }`, `{"",NULL,"NULL"}`, `{\ a\ ,b\\}`, `{{1}}`, `[1:1]={1}`, `{a`, `{}`, `{t,yes,0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []string{"_text", "_int4", "_bool"} {
			out, err := CanonicalArray(s, typ)
			if err != nil {
				continue
			}
			again, err := CanonicalArray(out, typ)
			if err != nil || again != out {
				t.Fatalf("%s %q: canonical %q reads back as %q, %v", typ, s, out, again, err)
			}
		}
	})
}
