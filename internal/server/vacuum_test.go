package server

import (
	"context"
	"testing"
)

// TestVacuumAsPostgres: VACUUM and ANALYZE (pgbench -i runs them; they
// were refused) answer as on PostgreSQL 15: their tags, a missing table's
// 42P01, VACUUM refused inside a block and in a multi-statement string
// (25001) while ANALYZE runs there.
func TestVacuumAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL")
	}
	steps := []string{
		"CREATE TABLE vac (id int PRIMARY KEY)",
		"VACUUM",
		"VACUUM (VERBOSE, ANALYZE) vac",
		"VACUUM FULL vac",
		"ANALYZE vac",
		"ANALYZE",
		"VACUUM no_such_table",
		"ANALYZE vac, no_such_table",
		"BEGIN",
		"ANALYZE vac",
		"VACUUM vac",
		"ROLLBACK",
		"SELECT 1; VACUUM vac",
		"DROP TABLE vac",
	}
	ctx := context.Background()
	pg := postgresAlone(t)
	addr, _ := start(t, embedded(t))
	sh := shepherdConn(t, addr)
	for _, s := range steps {
		want, got := runText(ctx, pg, s), runText(ctx, sh, s)
		if want.String() != got.String() {
			t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", s, want, got)
		}
	}
}
