package server

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// constraintNameSetup makes constraints whose names PostgreSQL chooses
// in ways a plain table_columns_key does not give: a name cut to 63
// bytes, two unique constraints whose default names collide (the second
// numbered), a column's check named by the column it reads, not the one
// it is written on. (ALTER TABLE ... ADD CONSTRAINT, which SQLite
// replicas cannot run, is in package pgcatalog's tests.)
var constraintNameSetup = []string{
	"CREATE TABLE orders_with_a_rather_long_name_that_goes_on_and_on (id int PRIMARY KEY, customer_reference_with_a_long_name_too int UNIQUE)",
	"CREATE TABLE u2 (id int PRIMARY KEY, a_b int, a int, b int CHECK (a <> 5), c int, UNIQUE (a_b), UNIQUE (a, b), UNIQUE (c), UNIQUE (b, c), CHECK (a < 10))",
	"CREATE TABLE u3 (id int PRIMARY KEY REFERENCES orders_with_a_rather_long_name_that_goes_on_and_on, u2_id int, FOREIGN KEY (u2_id) REFERENCES u2 ON DELETE CASCADE)",
	"INSERT INTO orders_with_a_rather_long_name_that_goes_on_and_on VALUES (1, 1)",
	"INSERT INTO u2 VALUES (1, 1, 1, 1, 1)",
}

// constraintNameViolations each break one unique constraint of
// constraintNameSetup.
var constraintNameViolations = []string{
	"INSERT INTO orders_with_a_rather_long_name_that_goes_on_and_on VALUES (2, 1)",
	"INSERT INTO u2 VALUES (2, 1, 2, 2, 2)",
	"INSERT INTO u2 VALUES (2, 2, 1, 1, 2)",
	"INSERT INTO u2 VALUES (2, 2, 2, 2, 1)",
}

// constraintCatalogQuery lists the constraints of the tables of
// constraintNameSetup as pg_constraint and information_schema show them.
const constraintCatalogQuery = `SELECT r.relname::text, c.conname::text, c.contype::text, c.condeferrable, c.confdeltype::text,
	pg_catalog.pg_get_constraintdef(c.oid, true)
FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_class r ON r.oid = c.conrelid
WHERE r.relname IN ('orders_with_a_rather_long_name_that_goes_on_and_on', 'u2', 'u3') ORDER BY 1, 2`

// TestConstraintNamesOneRecord: the name a client sees for a constraint
// in pg_constraint is the one its errors give (the constraint field of
// a 23505), and both are PostgreSQL 15's, also where PostgreSQL cuts a
// name to 63 bytes or numbers one that collides. Before, the system
// catalogs kept names of their own (not cut, not numbered), so
// pg_constraint could name a constraint that the error for it did not.
func TestConstraintNamesOneRecord(t *testing.T) {
	ctx := context.Background()
	alone, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)
	for _, q := range constraintNameSetup {
		if _, err := alone.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL alone: %s: %v", q, err)
		}
	}
	catalog := func(t *testing.T, c *pgx.Conn) (string, map[string]bool) {
		rows, err := c.Query(ctx, constraintCatalogQuery, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("%s: %v", constraintCatalogQuery, err)
		}
		defer rows.Close()
		var lines []string
		names := map[string]bool{}
		for rows.Next() {
			var rel, name, kind, del, def string
			var deferrable bool
			if err := rows.Scan(&rel, &name, &kind, &deferrable, &del, &def); err != nil {
				t.Fatal(err)
			}
			names[name] = true
			lines = append(lines, strings.Join([]string{rel, name, kind, map[bool]string{true: "deferrable", false: "-"}[deferrable], del, def}, " | "))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n"), names
	}
	want, _ := catalog(t, alone)
	for _, setup := range []string{"embedded", "cbs"} {
		t.Run(setup, func(t *testing.T) {
			cfg := realCluster(t, "cbs")
			if setup == "embedded" {
				cfg = embedded(t)
			}
			addr, _ := start(t, cfg)
			c := connect(t, addr, "app")
			for _, q := range constraintNameSetup {
				mustExec(t, c, q)
			}
			got, names := catalog(t, c)
			if got != want {
				t.Errorf("pg_constraint:\n%s\nwant (PostgreSQL):\n%s", got, want)
			}
			for _, q := range constraintNameViolations {
				_, we := alone.Exec(ctx, q)
				_, ge := c.Exec(ctx, q)
				w, g := pgError(we), pgError(ge)
				if w == nil || w.Code != "23505" {
					t.Fatalf("%s: PostgreSQL did not fail with 23505: %v", q, we)
				}
				if g == nil || g.Code != w.Code || g.ConstraintName != w.ConstraintName {
					t.Errorf("%s: shepherd: %v; PostgreSQL: constraint %q", q, ge, w.ConstraintName)
				}
				if !names[w.ConstraintName] {
					t.Errorf("%s: the error's constraint %q is not in shepherd's pg_constraint", q, w.ConstraintName)
				}
			}
		})
	}
}
