package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestArrayEdgesAsPostgreSQL: on a cbs cluster of MariaDB, PostgreSQL
// and SQLite, array_length with a NULL dimension is NULL (MariaDB
// answered the length), and an ARRAY[...] element out of the column's
// element range fails with PostgreSQL's 22003 and message before any
// replica runs it (MariaDB and SQLite stored {100000} and outvoted
// PostgreSQL). Every outcome equals PostgreSQL 15's and the replicas stay
// up and identical; so on the diverse embedded cluster (SQLite, SQLite
// (cgo), DuckDB).
func TestArrayEdgesAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	run := func(dsn string) []string {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var out []string
		simple := func(sql string) {
			rs, err := c.Exec(ctx, sql).ReadAll()
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %s", sql, renderErr(err)))
				return
			}
			for _, r := range rs {
				var rows []string
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
				out = append(out, fmt.Sprintf("%s: %s %s", sql, r.CommandTag, strings.Join(rows, "; ")))
			}
		}
		simple("CREATE TABLE ra (id int PRIMARY KEY, s smallint[], i integer[], b bigint[])")
		simple("INSERT INTO ra VALUES (1, '{1,2}', '{3,4,5}', '{}')")
		simple("SELECT id, array_length(s, NULL), array_length(i, NULL::int), array_length(i, 1), array_length(b, 1), array_length(i, 2) FROM ra ORDER BY id")
		simple("SELECT id, array_length(i, CASE WHEN id > 5 THEN 1 END) FROM ra ORDER BY id")
		for _, bad := range []string{
			"INSERT INTO ra (id, s) SELECT 2, ARRAY[100000]",
			"INSERT INTO ra (id, s) VALUES (3, CASE WHEN true THEN ARRAY[100000] END)",
			"UPDATE ra SET s = COALESCE(NULL, ARRAY[70000])",
			"UPDATE ra SET s = ARRAY[1, -32769]",
			"INSERT INTO ra (id, i) VALUES (4, ARRAY[2147483648])",
			"INSERT INTO ra (id, i) VALUES (5, ARRAY[1, -2147483649])",
			"INSERT INTO ra (id, s, i, b) VALUES (6, ARRAY[32767, -32768], ARRAY[2147483647], ARRAY[9223372036854775807])",
			"INSERT INTO ra (id, s) VALUES (7, ARRAY[-(-32768)])",
		} {
			simple(bad)
		}
		simple("SELECT id, s, i, b FROM ra ORDER BY id")
		return out
	}
	want := run(testenv.Postgres(t))
	for _, setup := range []string{"cbs", "diverse"} {
		t.Run(setup, func(t *testing.T) {
			cfg := diverse(t)
			if setup == "cbs" {
				cfg = realCluster(t, "cbs")
			}
			addr, srv := start(t, cfg)
			got := run(fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
			for i := range want {
				if i >= len(got) {
					t.Fatalf("shepherd stopped after %d outcomes", len(got))
				}
				if got[i] != want[i] {
					t.Errorf("shepherd:      %s\nPostgreSQL 15: %s", got[i], want[i])
				}
			}
			assertReplicas(t, addr, 3)
			if err := srv.Cluster().Idle(ctx); err != nil {
				t.Fatal(err)
			}
			assertIdentical(t, cfg, "SELECT id, s, i, b FROM ra ORDER BY id")
		})
	}
}
