package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// sequelizeInsertOrCatch is the query string Sequelize 6's findOrCreate
// sends to insert a row (Author with name) that may exist already.
func sequelizeInsertOrCatch(name string) string {
	return `CREATE OR REPLACE FUNCTION pg_temp.testfunc(OUT response "Authors", OUT sequelize_caught_exception text) RETURNS RECORD AS $func_1e2a6102ef7b4da9866633c5c0457d41$ BEGIN INSERT INTO "Authors" ("id","name","createdAt","updatedAt") VALUES (DEFAULT,'` + name + `','2026-11-25 06:09:38.274 +00:00','2026-11-25 06:09:38.274 +00:00') RETURNING * INTO response; EXCEPTION WHEN unique_violation THEN GET STACKED DIAGNOSTICS sequelize_caught_exception = PG_EXCEPTION_DETAIL; END $func_1e2a6102ef7b4da9866633c5c0457d41$ LANGUAGE plpgsql; SELECT (testfunc.response)."id", (testfunc.response)."name", (testfunc.response)."createdAt", (testfunc.response)."updatedAt", testfunc.sequelize_caught_exception FROM pg_temp.testfunc(); DROP FUNCTION IF EXISTS pg_temp.testfunc();`
}

// allResults is every result of a query string as text: each one's tag,
// column names and types, and rows, or the error's SQLSTATE and message.
func allResults(ctx context.Context, conn *pgconn.PgConn, sql string) string {
	rs, err := conn.Exec(ctx, sql).ReadAll()
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s [", r.CommandTag)
		for _, fd := range r.FieldDescriptions {
			fmt.Fprintf(&b, " %s:%d", fd.Name, fd.DataTypeOID)
		}
		b.WriteString(" ]")
		for _, row := range r.Rows {
			b.WriteString(" (")
			for i, v := range row {
				if i > 0 {
					b.WriteString(", ")
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.WriteString(string(v))
				}
			}
			b.WriteString(")")
		}
		b.WriteString("; ")
	}
	if err != nil {
		if pe, ok := err.(*pgconn.PgError); ok {
			fmt.Fprintf(&b, "error %s %s", pe.Code, pe.Message)
		} else {
			fmt.Fprintf(&b, "error %v", err)
		}
	}
	return b.String()
}

// TestSequelizeInsertOrCatchAsPostgres: Sequelize's findOrCreate inserts
// through a temporary plpgsql function that catches the unique
// violation (see session's insertorcatch.go), which shepherd refused
// (0A000, CreateFunctionStmt) and which stopped findOrCreate. It now
// answers as PostgreSQL 15 does, on the embedded default and on a
// MariaDB + PostgreSQL + SQLite cluster: in a block and outside, a new
// row and one that exists (NULLs and the violation's DETAIL, the block
// going on), every result of the query string alike.
func TestSequelizeInsertOrCatchAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	steps := []string{
		`CREATE TABLE IF NOT EXISTS "Authors" ("id"   SERIAL , "name" VARCHAR(80) NOT NULL UNIQUE, "createdAt" TIMESTAMP WITH TIME ZONE NOT NULL, "updatedAt" TIMESTAMP WITH TIME ZONE NOT NULL, PRIMARY KEY ("id"));`,
		sequelizeInsertOrCatch("ann"),
		sequelizeInsertOrCatch("ann"),
		"START TRANSACTION;",
		sequelizeInsertOrCatch("ann"),
		sequelizeInsertOrCatch("cat"),
		`SELECT count(*) FROM "Authors"`,
		"COMMIT;",
		`SELECT "name" FROM "Authors" ORDER BY "name"`,
		// Another function is still refused on shepherd, as is a
		// changed body.
	}
	ctx := context.Background()
	pg := postgresAlone(t)
	want := make([]string, len(steps))
	for i, q := range steps {
		want[i] = allResults(ctx, pg, q)
	}
	for name, cfg := range map[string]func() string{
		"embedded": func() string { addr, _ := start(t, embedded(t)); return addr },
		"cbs":      func() string { addr, _ := start(t, realCluster(t, "cbs")); return addr },
	} {
		sh := shepherdConn(t, cfg())
		for i, q := range steps {
			if got := allResults(ctx, sh, q); got != want[i] {
				t.Errorf("%s: %.70s\n shepherd:   %s\n PostgreSQL: %s", name, q, got, want[i])
			}
		}
		other := strings.Replace(sequelizeInsertOrCatch("dan"), "unique_violation", "others", 1)
		if got := allResults(ctx, sh, other); !strings.Contains(got, "0A000") {
			t.Errorf("%s: another function: %s, want 0A000", name, got)
		}
	}
}
