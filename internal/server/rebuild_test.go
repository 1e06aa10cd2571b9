package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// rebuildSetup is what Django's migrate does to a table that has rows:
// constraints added (a DEFERRABLE INITIALLY DEFERRED foreign key, a
// unique constraint, a check) and dropped, NOT NULL set, a column made
// longer, while another table's rows reference the table.
var rebuildSetup = []string{
	"CREATE TABLE p (id int PRIMARY KEY, name varchar(10))",
	"CREATE TABLE c (id int PRIMARY KEY, p_id int, code varchar(20), n int CHECK (n > 0))",
	"CREATE INDEX c_code_idx ON c (code)",
	"INSERT INTO p VALUES (1, 'one'), (2, 'two')",
	"INSERT INTO c VALUES (10, 1, 'a', 1), (20, 2, 'b', 2), (30, NULL, 'c', 3)",
	"CREATE TABLE g (id int PRIMARY KEY, c_id int REFERENCES c)",
	"INSERT INTO g VALUES (100, 10), (200, 20)",
	"ALTER TABLE c ADD CONSTRAINT c_p_id_fk FOREIGN KEY (p_id) REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED",
	"ALTER TABLE c ADD CONSTRAINT c_code_uniq UNIQUE (code)",
	"ALTER TABLE c DROP CONSTRAINT c_n_check",
	"ALTER TABLE c ALTER COLUMN code SET NOT NULL",
	"ALTER TABLE c ALTER COLUMN code TYPE varchar(40)",
	"ALTER TABLE c ADD CHECK (n < 100)",
	"ALTER TABLE g ALTER COLUMN c_id TYPE bigint",
	"INSERT INTO c VALUES (40, 1, 'd', -1)",
	"ALTER TABLE c ALTER COLUMN n SET DEFAULT 7",
	"ALTER TABLE p ALTER COLUMN name SET NOT NULL",
	"ALTER TABLE p ALTER COLUMN name DROP NOT NULL",
	"INSERT INTO c (id, p_id, code) VALUES (45, 1, 'f')",
	"INSERT INTO p VALUES (3, NULL)",
}

var rebuildCases = []struct{ name, sql string }{
	{"deferred foreign key", "INSERT INTO c VALUES (50, 9, 'e', 1)"},
	{"added unique", "INSERT INTO c VALUES (50, 1, 'a', 1)"},
	{"set not null", "INSERT INTO c VALUES (50, 1, NULL, 1)"},
	{"added check, reused name", "INSERT INTO c VALUES (50, 1, 'e', 100)"},
	{"referenced after the rebuild", "DELETE FROM c WHERE id = 10"},
	{"dropped constraint", "ALTER TABLE c DROP CONSTRAINT c_p_id_fkey"},
	{"duplicate constraint", "ALTER TABLE c ADD CONSTRAINT c_n_check CHECK (n > 0)"},
	{"duplicate unique constraint", "ALTER TABLE c ADD CONSTRAINT c_code_uniq UNIQUE (n)"},
	{"drop not null of a key", "ALTER TABLE c ALTER COLUMN id DROP NOT NULL"},
	{"unique over duplicates", "ALTER TABLE c ADD CONSTRAINT c_n_p_id UNIQUE (p_id)"},
	{"not null over nulls", "ALTER TABLE c ALTER COLUMN p_id SET NOT NULL"},
	{"check over rows", "ALTER TABLE c ADD CHECK (n > 1)"},
	{"foreign key over rows", "ALTER TABLE c ADD FOREIGN KEY (n) REFERENCES p"},
	{"foreign key to no key", "ALTER TABLE c ADD FOREIGN KEY (code) REFERENCES p (name)"},
	{"foreign key to no table", "ALTER TABLE c ADD FOREIGN KEY (n) REFERENCES nope"},
	{"foreign key of no column", "ALTER TABLE c ADD FOREIGN KEY (nope) REFERENCES p"},
	{"unique of no column", "ALTER TABLE c ADD UNIQUE (nope)"},
}

// TestSQLiteRebuildAsPostgres runs the ALTER TABLEs SQLite does by
// rebuilding the table (see dialect's rebuild) on a table with rows,
// through the embedded default (three SQLite replicas) and a cluster of
// PostgreSQL and two SQLite replicas, then the violations of the new
// constraints: the client gets PostgreSQL 15's SQLSTATE, message, table
// and constraint, and the replicas end identical. Before, SQLite refused
// every one of these ALTERs (0A000), which stopped Django's migrate.
func TestSQLiteRebuildAsPostgres(t *testing.T) {
	rebuildAsPostgres(t, rebuildSetup, rebuildCases, func(t *testing.T, alone, c *pgx.Conn) {
		// The DEFERRABLE INITIALLY DEFERRED key is checked at once on
		// every replica (PostgreSQL would wait for the COMMIT): the
		// replicas agree, none is taken as failed.
		ctx := context.Background()
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(ctx, "INSERT INTO c VALUES (60, 9, 'z', 1)")
		if g := pgError(err); g == nil || g.Code != "23503" || g.ConstraintName != "c_p_id_fk" {
			t.Errorf("violation in a block: %v, want 23503 on c_p_id_fk at once", err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		mustExec(t, c, "INSERT INTO c VALUES (60, 2, 'z', 1)")
		if _, err := alone.Exec(ctx, "INSERT INTO c VALUES (60, 2, 'z', 1)"); err != nil {
			t.Fatal(err)
		}
		if _, err := alone.Exec(ctx, "DELETE FROM c WHERE id = 60"); err != nil {
			t.Fatal(err)
		}
		mustExec(t, c, "DELETE FROM c WHERE id = 60")
	}, "SELECT id, p_id, code, n FROM c ORDER BY id", "SELECT id, c_id FROM g ORDER BY id", "SELECT id, name FROM p ORDER BY id")
}

// sequelizeSync is what Sequelize 6's sync and sync({alter: true}) send
// for an Author with a unique name and a Post with a unique index over
// (AuthorId, slug) and a foreign key to Author (the ecosystem suite's
// app), each query string as it sends it, then rows; a partial unique
// index and a descending one stand for the other indexes a rebuild must
// make again.
var sequelizeSync = []string{
	`CREATE TABLE IF NOT EXISTS "Authors" ("id"   SERIAL , "name" VARCHAR(80) NOT NULL UNIQUE, "createdAt" TIMESTAMP WITH TIME ZONE NOT NULL, "updatedAt" TIMESTAMP WITH TIME ZONE NOT NULL, PRIMARY KEY ("id"));`,
	`CREATE TABLE IF NOT EXISTS "Posts" ("id"   SERIAL , "slug" VARCHAR(40) NOT NULL, "score" DECIMAL(8,2) NOT NULL DEFAULT 0, "data" JSONB, "createdAt" TIMESTAMP WITH TIME ZONE NOT NULL, "updatedAt" TIMESTAMP WITH TIME ZONE NOT NULL, "AuthorId" INTEGER REFERENCES "Authors" ("id") ON DELETE SET NULL ON UPDATE CASCADE, PRIMARY KEY ("id"));`,
	`CREATE UNIQUE INDEX "posts__author_id_slug" ON "Posts" ("AuthorId", "slug")`,
	`CREATE UNIQUE INDEX "posts_top" ON "Posts" ("slug") WHERE "score" > 100`,
	`CREATE INDEX "posts_score" ON "Posts" ("score" DESC)`,
	`INSERT INTO "Authors" ("name", "createdAt", "updatedAt") VALUES ('ann', '2026-11-25 06:09:38+00', '2026-11-25 06:09:38+00'), ('ben', '2026-11-25 06:09:38+00', '2026-11-25 06:09:38+00')`,
	`INSERT INTO "Posts" ("slug", "score", "AuthorId", "createdAt", "updatedAt") VALUES ('p1', 1.25, 1, '2026-11-25 06:09:38+00', '2026-11-25 06:09:38+00'), ('p1', 2.25, 2, '2026-11-25 06:09:38+00', '2026-11-25 06:09:38+00'), ('p2', 200, 2, '2026-11-25 06:09:38+00', '2026-11-25 06:09:38+00')`,
	`ALTER TABLE "Authors" ALTER COLUMN "name" SET NOT NULL;ALTER TABLE "Authors" ALTER COLUMN "name" DROP DEFAULT;ALTER TABLE "Authors"  ADD UNIQUE ("name");ALTER TABLE "Authors" ALTER COLUMN "name" TYPE VARCHAR(80)  ;`,
	`ALTER TABLE "Authors" ALTER COLUMN "createdAt" SET NOT NULL;ALTER TABLE "Authors" ALTER COLUMN "createdAt" DROP DEFAULT;ALTER TABLE "Authors" ALTER COLUMN "createdAt" TYPE TIMESTAMP WITH TIME ZONE;`,
	`ALTER TABLE "Posts" ALTER COLUMN "slug" SET NOT NULL;ALTER TABLE "Posts" ALTER COLUMN "slug" DROP DEFAULT;ALTER TABLE "Posts" ALTER COLUMN "slug" TYPE VARCHAR(40);`,
	`ALTER TABLE "Posts" ALTER COLUMN "score" SET NOT NULL;ALTER TABLE "Posts" ALTER COLUMN "score" SET DEFAULT 0;ALTER TABLE "Posts" ALTER COLUMN "score" TYPE DECIMAL(8,2);`,
	`ALTER TABLE "Posts" ALTER COLUMN "data" DROP NOT NULL;ALTER TABLE "Posts" ALTER COLUMN "data" DROP DEFAULT;ALTER TABLE "Posts" ALTER COLUMN "data" TYPE JSONB;`,
	`ALTER TABLE "Posts" DROP CONSTRAINT "Posts_AuthorId_fkey"`,
	`ALTER TABLE "Posts"  ADD FOREIGN KEY ("AuthorId") REFERENCES "Authors" ("id") ON DELETE SET NULL ON UPDATE CASCADE;`,
}

// TestSQLiteRebuildKeepsIndexes runs Sequelize's sync({alter: true})
// (sequelizeSync), whose DROP CONSTRAINT and ADD FOREIGN KEY rebuild
// "Posts" on SQLite, then the writes the table's indexes and keys judge:
// the unique index still refuses a duplicate, the partial one only
// within its WHERE, the foreign key its missing parent, as on PostgreSQL
// 15 alone. Before, SQLite refused the rebuild of a table with a UNIQUE
// index (0A000), which stopped Sequelize's sync, and a partial index came
// back without its WHERE.
func TestSQLiteRebuildKeepsIndexes(t *testing.T) {
	cases := []struct{ name, sql string }{
		{"unique index", `INSERT INTO "Posts" ("slug", "score", "AuthorId", "createdAt", "updatedAt") VALUES ('p1', 3, 1, now(), now())`},
		{"partial unique index", `INSERT INTO "Posts" ("slug", "score", "AuthorId", "createdAt", "updatedAt") VALUES ('p2', 300, 1, now(), now())`},
		{"foreign key added again", `INSERT INTO "Posts" ("slug", "score", "AuthorId", "createdAt", "updatedAt") VALUES ('p9', 3, 7, now(), now())`},
		{"unique added again", `INSERT INTO "Authors" ("name", "createdAt", "updatedAt") VALUES ('ann', now(), now())`},
	}
	rebuildAsPostgres(t, sequelizeSync, cases, func(t *testing.T, alone, c *pgx.Conn) {
		// Outside the partial index's WHERE a duplicate slug is fine
		// (and undone: PostgreSQL alone serves both setups).
		for _, conn := range []*pgx.Conn{alone, c} {
			for _, q := range []string{
				`INSERT INTO "Posts" ("slug", "score", "AuthorId", "createdAt", "updatedAt") VALUES ('p2', 3, 1, now(), now())`,
				`DELETE FROM "Posts" WHERE "slug" = 'p2' AND "score" = 3`,
			} {
				if _, err := conn.Exec(context.Background(), q); err != nil {
					t.Fatal(err)
				}
			}
		}
	}, `SELECT "slug", "score", "AuthorId" FROM "Posts" ORDER BY "slug", "score"`, `SELECT "id", "name" FROM "Authors" ORDER BY "id"`)
}

// rebuildAsPostgres runs setup through the embedded default (three
// SQLite replicas) and a cluster of PostgreSQL and two SQLite replicas
// and on PostgreSQL 15 alone, then each case, which must fail on both
// alike (SQLSTATE, message, table, constraint), then more (nil: nothing),
// then compares the answers of queries, and checks the replicas end
// identical.
func rebuildAsPostgres(t *testing.T, setup []string, cases []struct{ name, sql string }, more func(t *testing.T, alone, c *pgx.Conn), queries ...string) {
	ctx := context.Background()
	alone, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)
	for _, q := range setup {
		if _, err := alone.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL alone: %s: %v", q, err)
		}
	}
	for _, setupName := range []string{"embedded", "pg+sqlite"} {
		t.Run(setupName, func(t *testing.T) {
			cfg := embedded(t)
			if setupName == "pg+sqlite" {
				cfg = &config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Mode: "cbs", F: 1,
					Replicas: []config.Replica{
						{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(t)},
						{Name: "lite1", Driver: "sqlite", DSN: "lite1.db"},
						{Name: "lite2", Driver: "sqlite-cgo", DSN: "lite2.db"},
					}}
			}
			addr, srv := start(t, cfg)
			c := connect(t, addr, "app")
			for _, q := range setup {
				mustExec(t, c, q)
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					_, want := alone.Exec(ctx, tc.sql)
					_, got := c.Exec(ctx, tc.sql)
					w, g := pgError(want), pgError(got)
					if w == nil {
						t.Fatalf("%s: PostgreSQL did not fail as a server does: %v", tc.sql, want)
					}
					if g == nil {
						t.Fatalf("%s: PostgreSQL: %v; shepherd: %v", tc.sql, want, got)
					}
					for _, f := range []struct{ name, w, g string }{
						{"SQLSTATE", w.Code, g.Code},
						{"message", w.Message, g.Message},
						{"table", w.TableName, g.TableName},
						{"constraint", w.ConstraintName, g.ConstraintName},
					} {
						if f.w != f.g {
							t.Errorf("%s: %s\n  PostgreSQL: %q\n  shepherd:   %q", tc.sql, f.name, f.w, f.g)
						}
					}
				})
			}
			if more != nil {
				t.Run("more", func(t *testing.T) { more(t, alone, c) })
			}
			for _, q := range queries {
				var wantRows, gotRows [][]any
				for _, side := range []struct {
					conn *pgx.Conn
					rows *[][]any
				}{{alone, &wantRows}, {c, &gotRows}} {
					rows, err := side.conn.Query(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						v, err := rows.Values()
						if err != nil {
							t.Fatal(err)
						}
						*side.rows = append(*side.rows, v)
					}
					if err := rows.Err(); err != nil {
						t.Fatal(err)
					}
				}
				if fmt.Sprint(wantRows) != fmt.Sprint(gotRows) {
					t.Errorf("%s: PostgreSQL %v, shepherd %v", q, wantRows, gotRows)
				}
			}
			if err := srv.Cluster().Idle(ctx); err != nil {
				t.Fatal(err)
			}
			for _, q := range queries {
				assertIdentical(t, cfg, q)
			}
		})
	}
}

// TestMariaDBAlterColumnAsPostgres: SET NOT NULL, DROP NOT NULL, a
// longer varchar, a wider integer and DROP CONSTRAINT of each kind,
// which MariaDB refused (0A000, "ALTER TABLE AT_SetNotNull" and the
// like: Django's AlterField, Sequelize's sync), run through a MariaDB +
// PostgreSQL + SQLite cluster as on PostgreSQL 15 alone: the same
// errors (SQLSTATE, message) for the violations, the same rows after,
// and every replica identical, MariaDB's columns keeping their defaults.
func TestMariaDBAlterColumnAsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE mp (id int PRIMARY KEY, name varchar(10) DEFAULT 'x', n int, big smallint DEFAULT 3, CONSTRAINT mp_n_check CHECK (n > 0), CONSTRAINT mp_name_key UNIQUE (name))",
		"CREATE TABLE mc (id int PRIMARY KEY, mp_id int, CONSTRAINT mc_mp_fk FOREIGN KEY (mp_id) REFERENCES mp (id))",
		"INSERT INTO mp VALUES (1, 'one', 1, 1), (2, NULL, 2, 2)",
		"INSERT INTO mc VALUES (10, 1)",
	}
	steps := []string{
		"ALTER TABLE mp ALTER COLUMN n SET NOT NULL",
		"INSERT INTO mp (id, n) VALUES (3, NULL)",
		"ALTER TABLE mp ALTER COLUMN name SET NOT NULL",
		"ALTER TABLE mp ALTER COLUMN name TYPE varchar(30)",
		"INSERT INTO mp (id, name, n) VALUES (4, 'a name of twenty-two', 4)",
		"INSERT INTO mp (id, n) VALUES (5, 5)",
		"ALTER TABLE mp ALTER COLUMN big TYPE bigint",
		"INSERT INTO mp (id, name, n, big) VALUES (6, 'six', 6, 9000000000)",
		"INSERT INTO mp (id, name, n) VALUES (7, 'seven', 7)",
		"ALTER TABLE mp ALTER COLUMN n DROP NOT NULL",
		"INSERT INTO mp (id, name, n) VALUES (8, 'eight', NULL)",
		"ALTER TABLE mp ALTER COLUMN id DROP NOT NULL",
		"ALTER TABLE mp DROP CONSTRAINT mp_n_check",
		"INSERT INTO mp (id, name, n) VALUES (9, 'nine', -9)",
		"ALTER TABLE mp DROP CONSTRAINT mp_name_key",
		"INSERT INTO mp (id, name, n) VALUES (11, 'nine', 11)",
		"ALTER TABLE mc DROP CONSTRAINT mc_mp_fk",
		"INSERT INTO mc VALUES (20, 99)",
		"ALTER TABLE mc DROP CONSTRAINT nope",
	}
	ctx := context.Background()
	alone, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)
	for _, q := range setup {
		if _, err := alone.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL alone: %s: %v", q, err)
		}
	}
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	for _, q := range setup {
		mustExec(t, c, q)
	}
	for _, q := range steps {
		_, want := alone.Exec(ctx, q)
		_, got := c.Exec(ctx, q)
		w, g := pgError(want), pgError(got)
		switch {
		case (want == nil) != (got == nil):
			t.Fatalf("%s: PostgreSQL: %v; shepherd: %v", q, want, got)
		case want != nil && (w == nil || g == nil || w.Code != g.Code || w.Message != g.Message):
			t.Errorf("%s:\n  PostgreSQL: %v\n  shepherd:   %v", q, want, got)
		}
	}
	for _, q := range []string{"SELECT id, name, n, big FROM mp ORDER BY id", "SELECT id, mp_id FROM mc ORDER BY id"} {
		want, err := catalogAnswer(alone, q, pgx.QueryExecModeSimpleProtocol, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := catalogAnswer(c, q, pgx.QueryExecModeSimpleProtocol, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s:\nPostgreSQL:\n%s\nshepherd:\n%s", q, want, got)
		}
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	waitAllBack(t, srv)
	assertIdentical(t, cfg, "SELECT id, name, n, big FROM mp ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, mp_id FROM mc ORDER BY id")
}
