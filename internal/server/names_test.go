package server

import (
	"testing"
	"time"
)

// TestOutputNamesAsPostgreSQL (issue 14): PostgreSQL reads a bare name
// in ORDER BY first as a result column's name, implicit names included
// (id::text is named id), and in GROUP BY as an input column first and a
// result column's name after. MariaDB and SQLite sorted
// `SELECT id::text ... ORDER BY id` by the integer, so the PostgreSQL
// replica lost the vote once ids reached two digits.
func TestOutputNamesAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE num (id int PRIMARY KEY, n int, name text)",
		"INSERT INTO num VALUES (1, 13, 'Name7'), (2, 12, 'Name1'), (3, 11, 'Name8'), (4, 10, 'Name2'), (5, NULL, 'Name9'), (6, 8, 'Name3'), (7, 7, 'Name10'), " +
			"(8, 6, 'Name4'), (9, 5, 'Name11'), (10, NULL, 'Name5'), (11, 3, 'Name12'), (12, 2, 'Name6'), (13, 1, 'Name0')",
	}, []string{
		"SELECT id::text, n::text FROM num ORDER BY id",
		"SELECT id::text FROM num ORDER BY id DESC",
		"SELECT n::text, id FROM num ORDER BY n, id",
		"SELECT n::text, id FROM num ORDER BY n DESC, id",
		"SELECT lower(name), id FROM num ORDER BY lower, id",
		"SELECT -id AS id FROM num ORDER BY id LIMIT 4",
		"SELECT id::text FROM (SELECT id FROM num) AS s ORDER BY id",
		"SELECT *, n::text FROM num ORDER BY n, id",
		"SELECT count(*), (n % 3)::text FROM num GROUP BY n % 3 ORDER BY count, 2",
		"SELECT length(name), count(*) FROM num GROUP BY length ORDER BY 1",
		"SELECT n AS id, count(*) FROM num GROUP BY id, n ORDER BY 2, 1",
		"SELECT id::text FROM num WHERE id < 5 UNION ALL SELECT n::text FROM num WHERE id > 10 ORDER BY id",
		"SELECT id::text, n AS id FROM num ORDER BY id",
		"SELECT id % 4, avg(id) FROM num GROUP BY id % 4 ORDER BY avg DESC, 1",
	}, 20*time.Second)
}
