package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestWriteOutputNames: a bare ORDER BY name that PostgreSQL reads as an
// unaliased result column (or a GROUP BY name that is no input column)
// is written as the column's position; one that is the input column of
// the name is left to the engines.
func TestWriteOutputNames(t *testing.T) {
	s := testSchema(t)
	cases := []struct{ sql, lite string }{
		{"SELECT id::text FROM acct ORDER BY id", `SELECT CAST("id" AS TEXT) FROM "acct" ORDER BY 1 NULLS LAST`},
		{"SELECT name, lower(name) FROM acct ORDER BY lower", `SELECT "name", LOWER("name") FROM "acct" ORDER BY 2 NULLS LAST`},
		{"SELECT id FROM acct ORDER BY id", `SELECT "id" FROM "acct" ORDER BY "id" NULLS LAST`},
		{"SELECT id::text, id::text FROM acct ORDER BY id", `SELECT CAST("id" AS TEXT), CAST("id" AS TEXT) FROM "acct" ORDER BY 1 NULLS LAST`},
		{"SELECT name FROM acct ORDER BY n", `SELECT "name" FROM "acct" ORDER BY "n" NULLS LAST`},
		{"SELECT length(name) FROM acct GROUP BY length", `SELECT LENGTH("name") FROM "acct" GROUP BY 1`},
		{"SELECT n AS id FROM acct GROUP BY id, n", `SELECT "n" AS "id" FROM "acct" GROUP BY "id", "n"`},
	}
	for _, c := range cases {
		f, err := Write(parse(t, c.sql), driver.SQLite, s)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if f.SQL != c.lite {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, f.SQL, c.lite)
		}
	}
	for _, q := range []string{
		"SELECT id::text, n AS id FROM acct ORDER BY id",
		"SELECT *, n::text FROM acct ORDER BY n",
	} {
		if _, err := Write(parse(t, q), driver.MySQL, s); err == nil || !strings.Contains(err.Error(), "is ambiguous") {
			t.Errorf("%s: %v, want ORDER BY ... is ambiguous", q, err)
		}
	}
}

// TestUnknownRelationBeforeOrderBy: an ORDER BY position past * of a
// table nobody created fails with PostgreSQL's 42P01, not a refusal
// about compound queries; over a CTE the refusal names what it is.
func TestUnknownRelationBeforeOrderBy(t *testing.T) {
	s := testSchema(t)
	_, err := Write(parse(t, "SELECT * FROM unknown_table ORDER BY 7"), driver.MySQL, s)
	if pgerr.Code(err) != "42P01" || !strings.Contains(err.Error(), `relation "unknown_table" does not exist`) {
		t.Errorf("unknown table: %v", err)
	}
	// (A UNION of an integer and a numeric of another scale is a
	// numeric whose scale the writer cannot tell: not typed.)
	_, err = Write(parse(t, "WITH unknown_table AS (SELECT * FROM (SELECT id FROM acct UNION SELECT 2.5) AS s) SELECT * FROM unknown_table ORDER BY 1 DESC"), driver.MySQL, s)
	if pgerr.Code(err) != pgerr.FeatureNotSupported || strings.Contains(err.Error(), "compound") {
		t.Errorf("CTE: %v", err)
	}
	// A UNION in FROM is typed as PostgreSQL types it (the common type
	// of its members' columns).
	f, err := Write(parse(t, "WITH unknown_table AS (SELECT * FROM (SELECT id FROM acct UNION SELECT id FROM acct) AS s) SELECT * FROM unknown_table ORDER BY 1 DESC"), driver.MySQL, s)
	if want := "WITH `unknown_table` AS (SELECT * FROM (SELECT `id` FROM `acct` UNION SELECT `id` FROM `acct`) AS `s`) SELECT * FROM `unknown_table` ORDER BY `unknown_table`.`id` IS NULL DESC, 1 DESC"; err != nil || f.SQL != want {
		t.Errorf("typed UNION in a CTE: %v\n got %s\nwant %s", err, f.SQL, want)
	}
	// A subquery in FROM whose columns the writer can type is a table
	// to it too (issue 16: go-tpc's consistency check).
	f, err = Write(parse(t, "WITH unknown_table AS (SELECT * FROM (SELECT id FROM acct) AS s) SELECT * FROM unknown_table ORDER BY 1 DESC"), driver.MySQL, s)
	if want := "WITH `unknown_table` AS (SELECT * FROM (SELECT `id` FROM `acct`) AS `s`) SELECT * FROM `unknown_table` ORDER BY `unknown_table`.`id` IS NULL DESC, 1 DESC"; err != nil || f.SQL != want {
		t.Errorf("typed subquery in a CTE: %v\n got %s\nwant %s", err, f.SQL, want)
	}
	// A CTE whose columns the writer can type is a table to it: its *
	// expands, and the position names its column.
	f, err = Write(parse(t, "WITH unknown_table AS (SELECT id FROM acct) SELECT * FROM unknown_table ORDER BY 1 DESC"), driver.MySQL, s)
	if want := "WITH `unknown_table` AS (SELECT `id` FROM `acct`) SELECT * FROM `unknown_table` ORDER BY `unknown_table`.`id` IS NULL DESC, 1 DESC"; err != nil || f.SQL != want {
		t.Errorf("typed CTE: %v\n got %s\nwant %s", err, f.SQL, want)
	}
}
