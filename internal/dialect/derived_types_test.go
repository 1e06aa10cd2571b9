package dialect

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// derivedTypeQueries select * from derived tables of every kind: a
// subquery in FROM, a WITH query, a VALUES list, a set operation, a
// recursive query, nested and renamed ones, over the columns of dtt.
func derivedTypeQueries() []string {
	exprs := []string{"s + s", "s * 2", "-s", "abs(s)", "s % s", "s / s", "s + 1::int2", "s + 1", "r + r", "r * 2", "r + f",
		"i + b", "b * 2", "s::int8 + s", "n * n", "n + 1", "n0 + 1", "i / 2", "n / 2", "f / 2", "2 ^ 3", "f ^ 2",
		"d + 1", "d - d", "ts - ts", "tz - tz", "d + i", "d + '1 day'::interval", "ts + '1 day'::interval", "d::timestamp",
		"j || j", "by || by", "t || t", "t || i", "v || v", "c || c", "j -> 'a'", "j ->> 'a'",
		"'a'", "NULL", "1.5", "1.50 * 2", "3000000000", "10::numeric", "i::numeric(5,1)", "'x'::char(2)",
		"c", "v", "n", "u", "c::text", "max(c)", "count(*)", "sum(i)", "sum(s)", "sum(n)", "round(n, 1)",
		"CASE WHEN bo THEN s ELSE i END", "COALESCE(s, s)", "COALESCE(n, 1)", "NULLIF(s, 1)", "NULLIF(1, 2.5)", "GREATEST(s, s)",
		"current_date", "now()", "upper(v)", "lower(c)", "length(t)", "date_part('year', d)", "extract(year FROM d)",
		"bo AND bo", "i IN (1, 2)", "row_number() OVER ()",
		"(SELECT max(s) FROM dtt)", "(SELECT 1)", "(SELECT 'a')", "(SELECT sum(n) FROM dtt)"}
	var qs []string
	for _, e := range exprs {
		qs = append(qs, "SELECT * FROM (SELECT "+e+" AS x FROM dtt) q", "WITH q AS (SELECT "+e+" AS x FROM dtt) SELECT * FROM q")
	}
	return append(qs,
		"SELECT * FROM (VALUES (1), (2.5)) q", "SELECT * FROM (VALUES (1::int2), (2::int2)) q", "SELECT * FROM (VALUES (1::int2), (2)) q",
		"SELECT * FROM (VALUES ('a'), ('b')) q", "SELECT * FROM (VALUES (NULL), (1)) q", "SELECT * FROM (VALUES (NULL)) q",
		"SELECT * FROM (VALUES (1, 'x'), (2, NULL)) q", "SELECT * FROM (VALUES (3000000000)) q", "SELECT * FROM (VALUES (1.5), (2.25)) q",
		"SELECT * FROM (VALUES (1.5)) q", "SELECT * FROM (VALUES (1.5::float4)) q", "SELECT * FROM (VALUES ('a'::varchar(3)), ('bb'::varchar(5))) q",
		"SELECT * FROM (VALUES ('a'::varchar(3))) q", "SELECT * FROM (VALUES ('ab'::char(3))) q", "SELECT * FROM (VALUES (1)) q(a)",
		"WITH q AS (VALUES (1), (2.5)) SELECT * FROM q", "WITH q(a) AS (VALUES (1::int2)) SELECT * FROM q",
		"SELECT * FROM (SELECT 1 UNION SELECT 2.5) q", "SELECT * FROM (SELECT 1.5 UNION SELECT 2.5) q",
		"SELECT * FROM (SELECT s FROM dtt UNION SELECT i FROM dtt) q", "SELECT * FROM (SELECT 'a' UNION SELECT 'b') q",
		"SELECT * FROM (SELECT NULL UNION SELECT 1) q", "SELECT * FROM (SELECT c FROM dtt UNION SELECT v FROM dtt) q",
		"SELECT * FROM (SELECT i FROM dtt INTERSECT SELECT b FROM dtt) q", "SELECT * FROM (SELECT s FROM dtt EXCEPT SELECT s FROM dtt) q",
		"SELECT * FROM (SELECT n FROM dtt UNION ALL SELECT n FROM dtt) q", "SELECT * FROM (SELECT c FROM dtt UNION ALL SELECT c FROM dtt) q",
		"SELECT * FROM (SELECT i, s FROM dtt UNION ALL SELECT s, i FROM dtt UNION ALL SELECT 1, 2) q",
		"WITH q AS (SELECT 1 AS a UNION SELECT 2.5) SELECT * FROM q", "WITH q AS (SELECT s FROM dtt UNION ALL SELECT s FROM dtt) SELECT * FROM q",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT 2.5 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1::int2 UNION ALL SELECT 20000 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
		"WITH RECURSIVE r(n) AS (SELECT 1::bigint UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
		"WITH RECURSIVE r(n, m) AS (SELECT s, 'a'::text FROM dtt UNION ALL SELECT n, m FROM r WHERE false) SELECT * FROM r",
		"WITH RECURSIVE q AS (SELECT s + s AS x FROM dtt) SELECT * FROM q",
		"SELECT * FROM (SELECT y + 1 AS z FROM (SELECT s + s AS y FROM dtt) a) b",
		"SELECT * FROM (SELECT i, n FROM dtt) q(a, bb)", "SELECT * FROM (SELECT * FROM dtt) q",
		"SELECT * FROM (SELECT a.i FROM dtt a JOIN dtt b USING (i)) q", "SELECT * FROM (SELECT i FROM dtt a JOIN dtt b USING (i)) q",
		"SELECT * FROM (SELECT * FROM dtt a JOIN dtt2 b USING (i)) q", "SELECT * FROM (SELECT * FROM dtt NATURAL JOIN dtt2) q",
		"SELECT * FROM (SELECT * FROM dtt2 a FULL JOIN dtt b USING (i) JOIN dtt2 c ON c.k = a.k) q",
		"SELECT * FROM (SELECT * FROM (dtt2 a JOIN dtt2 b USING (k)) AS j) q", "SELECT * FROM (SELECT j.* FROM (dtt2 a JOIN dtt b USING (i)) AS j) q",
		"SELECT * FROM (SELECT * FROM (VALUES (1::int2)) v(a), dtt2) q",
		"SELECT * FROM (WITH w AS (SELECT s FROM dtt) SELECT s + s AS x FROM w) q",
		"WITH a AS (SELECT s + s AS x FROM dtt), b AS (SELECT x * 2 AS y FROM a) SELECT * FROM b",
		"SELECT * FROM (SELECT x FROM (SELECT * FROM generate_series(1, 3) AS g(x)) g) q",
	)
}

// TestDerivedTablesTypedAsPostgres (issue 16): the columns of derived
// tables were typed twice, by the writer (for the expressions it writes
// over them) and by the typer of result columns (for Describe), and the
// two disagreed: the writer took s + s of smallints and r + r of reals
// for integer and double precision, j || j of jsonb and b || b of bytea
// for text, and a recursive query's columns for those of its leftmost
// member (SELECT 1 UNION ALL SELECT 2.5 UNION ALL ... is numeric). Now
// the writer asks the typer, which must agree with PostgreSQL 15; the
// writer leaves unknown only the derived tables with a numeric column of
// unknown scale (which it cannot write exactly) and LATERAL ones.
func TestDerivedTablesTypedAsPostgres(t *testing.T) {
	ddl := []string{"CREATE TABLE dtt (i int, b bigint, s smallint, n numeric(10,2), n0 numeric, f float8, r real, t text, " +
		"v varchar(10), c char(3), d date, ts timestamp, tz timestamptz, bo bool, by bytea, j jsonb, u uuid)",
		"CREATE TABLE dtt2 (i bigint, k text)"}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var snap *schema.Snapshot
	for _, d := range ddl {
		if snap, err = snap.Apply(parse(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS dtt, dtt2; "+strings.Join(ddl, "; ")); err != nil {
		t.Fatal(err)
	}
	for _, q := range derivedTypeQueries() {
		d, err := conn.Prepare(ctx, "", q)
		if err != nil {
			t.Errorf("PostgreSQL refuses %s: %v", q, err)
			continue
		}
		var want []string
		for _, f := range d.Fields {
			var name string
			if err := conn.QueryRow(ctx, "SELECT typname::text FROM pg_type WHERE oid = $1", f.DataTypeOID).Scan(&name); err != nil {
				t.Fatal(err)
			}
			want = append(want, withTypmod(name, f.TypeModifier))
		}
		// Describe's columns.
		var typed []string
		unscaled := false
		for _, c := range ResultColumns(parse(t, q), snap) {
			typed = append(typed, withTypmod(c.Type.Name(), typmod(c.Type)))
			_, ok := c.Type.NumericScale()
			unscaled = unscaled || c.Type.Name() == "numeric" && !ok
		}
		if !slices.Equal(typed, want) {
			t.Errorf("%s: typed %v, PostgreSQL %v", q, typed, want)
		}
		// The writer's: what the FROM item of the outer query is to it.
		wrote, known := writerColumns(t, q, snap)
		switch {
		case known && !slices.Equal(wrote, want):
			t.Errorf("%s: the writer types it %v, PostgreSQL %v", q, wrote, want)
		case !known && !unscaled && !strings.Contains(q, "USING") && !strings.Contains(q, "NATURAL"):
			t.Errorf("%s: the writer does not type it (PostgreSQL %v)", q, want)
		}
	}
}

// writerColumns types the columns of the FROM item of q (SELECT * FROM
// a derived table) as the writer does while writing q.
func writerColumns(t *testing.T, q string, snap *schema.Snapshot) ([]string, bool) {
	sel := parse(t, q).GetSelectStmt()
	w := &writer{d: driver.SQLite, schema: snap}
	if wc := sel.WithClause; wc != nil {
		for _, n := range wc.Ctes {
			cte := n.GetCommonTableExpr()
			if w.ctes == nil {
				w.ctes = map[string]bool{}
			}
			w.ctes[cte.Ctename] = true
			w.addCTETable(cte, cte.Ctequery.GetSelectStmt(), wc.Recursive)
		}
	}
	w.pushScope(sel.FromClause)
	cols, ok := w.star("")
	var out []string
	for _, c := range cols {
		mod := int32(-1)
		if len(c.Mods) > 0 {
			mod = typmod(DeclaredType(c.Type, c.Mods))
		}
		out = append(out, withTypmod(c.Type, mod))
	}
	return out, ok
}

// typmod is PostgreSQL's type modifier of a type (-1: none).
func typmod(p PGType) int32 {
	m := p.Mods()
	switch {
	case (p.Name() == "bpchar" || p.Name() == "varchar") && len(m) == 1:
		return m[0] + 4
	case p.Name() == "numeric" && len(m) == 1:
		return m[0]<<16 + 4
	case p.Name() == "numeric" && len(m) == 2:
		return m[0]<<16 | m[1] + 4
	}
	return -1
}

func withTypmod(name string, mod int32) string {
	if mod < 0 {
		return name
	}
	return fmt.Sprintf("%s(%d)", name, mod)
}
