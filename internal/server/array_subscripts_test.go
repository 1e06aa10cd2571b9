package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestArraySubscriptsAsPostgreSQL: a[i] of text[], varchar[], integer[],
// bigint[] and boolean[] columns, constants and parameters counts from 1,
// is NULL outside the array (0, negative, past the end), for a NULL
// subscript or element or array, and has the element's type (its result
// column's OID, arithmetic, comparison, aggregates), on the embedded
// cluster (SQLite) and the diverse one (SQLite and DuckDB) as on
// PostgreSQL 15; the replicas stay up and identical. Slices and
// subscripts of other than integer type are refused (0A000), and so is
// every subscript where MariaDB is a replica.
func TestArraySubscriptsAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	script := []string{
		"CREATE TABLE sub (id int PRIMARY KEY, tags text[], n integer[], big bigint[], b boolean[], v varchar[])",
		`INSERT INTO sub VALUES (1, '{a,"b c",NULL}', '{10,20,NULL}', '{9000000000}', '{t,f,NULL}', '{x}'), (2, '{}', '{}', NULL, '{}', '{}'), (3, NULL, NULL, '{1,2}', NULL, NULL)`,
		"SELECT id, tags[1], tags[2], tags[3], tags[4], tags[0], tags[-1], n[1], n[2] + 1, n[3], big[1], b[1], b[2], b[3], v[1] FROM sub ORDER BY id",
		"SELECT id, tags[NULL], n[id], n[id - 1], tags['2'] FROM sub ORDER BY id",
		"SELECT id FROM sub WHERE n[1] > 5 OR b[2] = false OR big[2] = 2 ORDER BY id",
		"SELECT id FROM sub WHERE tags[2] = 'b c' AND NOT b[2] ORDER BY id",
		"SELECT sum(n[1]), max(tags[1]), count(b[3]), bool_or(b[1]) FROM sub",
		"SELECT ('{a,b}'::text[])[2], (ARRAY[1, 2, 3])[3], ('{t}'::boolean[])[1], ('{1}'::int[])[2]",
		"UPDATE sub SET tags = '{z}' WHERE n[2] = 20",
		"SELECT id, tags FROM sub ORDER BY id",
	}
	refused := []string{"SELECT tags[1:2] FROM sub", "SELECT tags[id::bigint] FROM sub", "SELECT tags[1][1] FROM sub"}
	run := func(dsn string) []string {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var out []string
		for _, sql := range script {
			rs, err := c.Exec(ctx, sql).ReadAll()
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %s", sql, renderErr(err)))
				continue
			}
			for _, r := range rs {
				var cols, rows []string
				for _, f := range r.FieldDescriptions {
					cols = append(cols, fmt.Sprintf("%s:%d", f.Name, f.DataTypeOID))
				}
				for _, row := range r.Rows {
					var vs []string
					for _, v := range row {
						if v == nil {
							vs = append(vs, "<null>")
						} else {
							vs = append(vs, string(v))
						}
					}
					rows = append(rows, strings.Join(vs, "|"))
				}
				out = append(out, fmt.Sprintf("%s: %s [%s] %s", sql, r.CommandTag, strings.Join(cols, ","), strings.Join(rows, "; ")))
			}
		}
		out = append(out, "param: "+paramOutcome(ctx, c, "SELECT id, tags[$1], n[$1] FROM sub ORDER BY id", "2"))
		return out
	}
	want := run(testenv.Postgres(t))
	for _, setup := range []string{"embedded", "diverse"} {
		t.Run(setup, func(t *testing.T) {
			cfg := embedded(t)
			if setup == "diverse" {
				cfg = diverse(t)
			}
			addr, srv := start(t, cfg)
			dsn := fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)
			got := run(dsn)
			for i := range want {
				if i >= len(got) {
					t.Fatalf("shepherd stopped after %d outcomes", len(got))
				}
				if got[i] != want[i] {
					t.Errorf("shepherd:      %s\nPostgreSQL 15: %s", got[i], want[i])
				}
			}
			c := connect(t, addr, "app")
			for _, sql := range refused {
				if _, err := c.Exec(ctx, sql); sqlstate(err) != "0A000" {
					t.Errorf("%s: %v, want 0A000", sql, err)
				}
			}
			assertReplicas(t, addr, 3)
			if err := srv.Cluster().Idle(ctx); err != nil {
				t.Fatal(err)
			}
			assertIdentical(t, cfg, "SELECT id, tags, n, big, b, v FROM sub ORDER BY id")
		})
	}
	t.Run("cbs", func(t *testing.T) {
		addr, _ := start(t, realCluster(t, "cbs"))
		c := connect(t, addr, "app")
		mustExec(t, c, script[0])
		if _, err := c.Exec(ctx, "SELECT tags[1] FROM sub"); sqlstate(err) != "0A000" {
			t.Errorf("a subscript with MariaDB replicas: %v, want 0A000", err)
		}
	})
}
