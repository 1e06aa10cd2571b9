package server

import (
	"testing"
	"time"
)

// TestLimitedSubqueriesAsPostgreSQL: LIMIT inside an IN, ANY or ALL
// subquery, which MariaDB refuses (error 1235) where PostgreSQL and
// SQLite answer: a write with one was failed by a MariaDB replica alone.
// MariaDB gets the subquery as a derived table, which keeps its rows.
func TestLimitedSubqueriesAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE src (k int PRIMARY KEY, v int NOT NULL)",
		"CREATE TABLE dst (k int PRIMARY KEY)",
		"INSERT INTO src VALUES (1, 30), (2, 10), (3, 20), (4, 10), (5, 50)",
	}, []string{
		"SELECT k FROM src WHERE k IN (SELECT k FROM src ORDER BY v, k LIMIT 2) ORDER BY k",
		"SELECT k FROM src WHERE k NOT IN (SELECT k FROM src ORDER BY v DESC, k LIMIT 2 OFFSET 1) ORDER BY k",
		"SELECT k FROM src WHERE v = ANY (SELECT v FROM src ORDER BY k DESC LIMIT 1) ORDER BY k",
		"INSERT INTO dst SELECT k FROM src WHERE k IN (SELECT k FROM src ORDER BY v, k LIMIT 2)",
		"DELETE FROM src WHERE k IN (SELECT k FROM src ORDER BY v DESC, k LIMIT 1)",
		"SELECT k FROM dst ORDER BY k",
		"SELECT k, v FROM src ORDER BY k",
	}, 20*time.Second)
}
