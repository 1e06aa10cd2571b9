package dialect

import (
	"errors"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestJSONBStoredCanonically: a jsonb value stored on MariaDB or SQLite
// is written as jsonb's output text of it (a constant, a cast constant,
// a json constant, a column DEFAULT); a json column keeps the text as
// written; a computed jsonb value stored there is refused (0A000).
// (TestJSONBInputAsPostgreSQL in internal/server checks CanonicalJSONB
// against PostgreSQL 15.)
func TestJSONBStoredCanonically(t *testing.T) {
	var s *schema.Snapshot
	for _, q := range []string{
		`CREATE TABLE jt (id int PRIMARY KEY, doc jsonb DEFAULT '{"d":1,"d":2}', raw json, t text)`,
	} {
		next, err := s.Apply(parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
		for _, c := range []struct{ sql, want string }{
			{`INSERT INTO jt (id, doc, raw) VALUES (1, '{"a":1,"a":2}', '{"a":1,"a":2}')`, `'{"a": 2}', '{"a":1,"a":2}'`},
			{`UPDATE jt SET doc = '{"k":"\u0041", "b": 1e2}'::jsonb`, `'{"b": 100, "k": "A"}'`},
			{`UPDATE jt SET doc = '[1.50, -0]'::json`, `'[1.50, 0]'`},
			{`CREATE TABLE jt2 (id int PRIMARY KEY, doc jsonb DEFAULT '{ "x" : true }')`, `'{"x": true}'`},
		} {
			f, err := Write(parse(t, c.sql), d, s)
			if err != nil {
				t.Errorf("%v %s: %v", d, c.sql, err)
				continue
			}
			if !strings.Contains(f.SQL, c.want) {
				t.Errorf("%v %s:\n got %s\nwant it to hold %s", d, c.sql, f.SQL, c.want)
			}
		}
		for _, q := range []string{
			`UPDATE jt SET doc = t::jsonb`,
			`UPDATE jt SET doc = raw::jsonb`,
			`UPDATE jt SET doc = CASE WHEN id = 1 THEN '{"a":1}' END`,
			`INSERT INTO jt (id, doc) SELECT id + 1, raw::jsonb FROM jt`,
			`INSERT INTO jt (id, doc) SELECT 5, '{"b": 1, "a": 2}'`,
		} {
			_, err := Write(parse(t, q), d, s)
			var pe *pgerr.Error
			if !errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported {
				t.Errorf("%v %s: %v, want 0A000", d, q, err)
			}
		}
	}
	if _, err := Write(parse(t, `UPDATE jt SET doc = t::jsonb`), driver.Postgres, s); err != nil {
		t.Errorf("PostgreSQL: %v", err)
	}
}
