package server

import (
	"testing"
	"time"
)

// TestUnknownTableBeforeOrderBy (issue 14): an ORDER BY position over *
// of a table that does not exist was refused with 0A000 about compound
// queries (the columns of * could not be counted); PostgreSQL says the
// relation does not exist (42P01), and so does shepherd.
func TestUnknownTableBeforeOrderBy(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE known (k int PRIMARY KEY, v text)",
	}, []string{
		"SELECT * FROM unknown_table ORDER BY 7",
		"SELECT * FROM unknown_table ORDER BY 1 DESC",
		"SELECT * FROM unknown_table ORDER BY 1",
		"SELECT *, 1 FROM known, unknown_table ORDER BY 2 DESC",
		"SELECT * FROM known ORDER BY 3",
	}, 20*time.Second)
}
