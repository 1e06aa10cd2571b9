package dialect

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestFunctionTypesMatchPostgres checks the writer's type of function
// calls (which picks integer or exact division, the rounding of sums,
// the form of dates) against the type PostgreSQL 15 describes for them:
// the writer once took ceil(integer) for an integer (PostgreSQL's is
// double precision, so ceil(x) / 2 divided as integers on MariaDB),
// ntile() for a bigint and date_part() for a numeric; and COALESCE of
// a real and a numeric for a double precision, of text and varchar for
// unknown.
func TestFunctionTypesMatchPostgres(t *testing.T) {
	const ddl = "CREATE TABLE ft (i int, b bigint, s smallint, n numeric(10,2), f float8, r real, t text, " +
		"v varchar(10), c char(3), d date, ts timestamp, tz timestamptz, iv interval, bo bool, by bytea, j jsonb)"
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS ft; "+ddl); err != nil {
		t.Fatal(err)
	}
	var snap *schema.Snapshot
	snap, err = snap.Apply(parse(t, ddl))
	if err != nil {
		t.Fatal(err)
	}
	calls := []string{
		"ntile(2) OVER ()", "row_number() OVER ()", "rank() OVER (ORDER BY i)", "percent_rank() OVER (ORDER BY i)",
		"count(*)", "count(t)", "date_part('year', d)", "extract(year FROM d)", "date_part('epoch', ts)",
		"ceil(i)", "ceiling(n)", "floor(f)", "floor(i)", "round(i)", "round(f)", "round(n)", "round(n, 1)",
		"trunc(n)", "trunc(f)", "trunc(i)", "sign(i)", "sign(n)", "abs(s)", "abs(n)", "mod(i, b)", "mod(n, i)",
		"sqrt(n)", "sqrt(i)", "exp(n)", "ln(i)", "log(n)", "log(f)", "power(i, 2)", "power(n, 2)", "pow(f, 2)",
		"min(v)", "max(c)", "min(i)", "max(ts)", "sum(r)", "sum(i)", "sum(b)", "sum(n)", "sum(s)",
		"avg(i)", "avg(f)", "avg(n)", "avg(r)", "lag(i) OVER ()", "lead(n, 2) OVER ()", "first_value(t) OVER ()",
		"lag(i, 1, 0.5) OVER (ORDER BY i)", "length(t)", "char_length(v)", "octet_length(by)", "strpos(t, 'a')",
		"substr(by, 2)", "substr(t, 2, 3)", "substring(t FROM 2)", "upper(t)", "lower(v)", "btrim(t)",
		"replace(t, 'a', 'b')", "lpad(t, 5, '*')", "left(t, 2)", "reverse(t)", "repeat(t, 2)", "md5(t)",
		"initcap(t)", "split_part(t, ',', 1)", "regexp_replace(t, 'a', 'b')", "starts_with(t, 'a')",
		"concat(t, i)", "concat_ws(',', t, i)", "string_agg(t, ',')", "ascii(t)", "chr(65)", "translate(t, 'a', 'b')",
		"age(ts)", "age(tz, tz)", "make_date(2020, 1, 1)", "to_char(d, 'YYYY')", "to_char(n, '999')",
		"date_trunc('day', d)", "date_trunc('day', ts)", "date_trunc('day', tz)", "timezone('UTC', ts)",
		"ts AT TIME ZONE 'UTC'", "tz AT TIME ZONE 'UTC'", "encode(by, 'hex')", "decode('00', 'hex')",
		"jsonb_build_object('a', i)", "json_build_object('a', i)", "bool_and(bo)", "every(bo)",
		"string_to_array(t, ',')", "array_to_string(string_to_array(t, ','), ';')",
		"array_length(string_to_array(t, ','), 1)",
		// The common type of CASE, COALESCE, GREATEST (pgfunc.CommonType).
		"COALESCE(r, n)", "COALESCE(t, v)", "COALESCE(d, ts)", "COALESCE(i, b, s)", "GREATEST(i, n)",
		"CASE WHEN bo THEN 'a' ELSE 'b' END", "CASE WHEN bo THEN c ELSE v END", "COALESCE(NULL, f)",
	}
	for _, call := range calls {
		sql := "SELECT " + call + " FROM ft"
		d, err := conn.Prepare(ctx, "", sql)
		if err != nil {
			t.Errorf("PostgreSQL refuses %s: %v", sql, err)
			continue
		}
		var want string
		if err := conn.QueryRow(ctx, "SELECT typname::text FROM pg_type WHERE oid = $1", d.Fields[0].DataTypeOID).Scan(&want); err != nil {
			t.Fatal(err)
		}
		out := OutputTypes(parse(t, sql), snap)
		if len(out) != 1 || out[0].Type != want {
			t.Errorf("%s: the writer types it %v, PostgreSQL %s", call, out, want)
		}
	}
}
