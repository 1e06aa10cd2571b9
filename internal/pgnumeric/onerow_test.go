package pgnumeric

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// column returns the first result column of sql.
func column(t *testing.T, sql string) *pg_query.Node {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
}

// text is v as PostgreSQL prints it ("" for NULL).
func (v Row) text() string {
	switch {
	case v.Null:
		return ""
	case v.Type == "bool" && v.Bool:
		return "true"
	case v.Type == "bool":
		return "false"
	}
	return v.Num.String()
}

// TestOneRow: the value and type PostgreSQL gives a result column of a
// SELECT without FROM (its aggregates aggregating one row); what
// PostgreSQL fails on in any part, or what OneRow does not know, is not
// evaluated.
func TestOneRow(t *testing.T) {
	for _, c := range []struct{ sql, typ, want string }{
		{"SELECT avg(23)", "numeric", "23.0000000000000000"},
		{"SELECT CAST(avg(-2.5) AS integer)", "int4", "-3"},
		{"SELECT CAST(avg(2.5) AS bigint)", "int8", "3"},
		{"SELECT NULLIF(1, 2.5) / 2", "numeric", "0.50000000000000000000"},
		{"SELECT NULLIF(7, count(*))", "int4", "7"},
		{"SELECT sum(2147483647) * 2", "int8", "4294967294"},
		{"SELECT CASE WHEN avg(1) IN (1, NULL) THEN 1 END", "int4", "1"},
		{"SELECT CASE WHEN avg(1) NOT IN (2, NULL) THEN 1 END", "int4", ""},
		{"SELECT avg(10) / 3", "numeric", "3.3333333333333333"},
		{"SELECT COALESCE(NULL, avg(10000), 1)", "numeric", "10000.0000000000000000"},
		{"SELECT 1.50 * avg(3)", "numeric", "4.500000000000000000"},
		{"SELECT avg(100000) / 7", "numeric", "14285.714285714286"},
		{"SELECT - 2147483648 + 0", "int4", "-2147483648"},
		{"SELECT count(CAST(NULL AS REAL)) + count(- CAST(NULL AS REAL))", "int8", "0"},
	} {
		v, ok := OneRow(column(t, c.sql))
		if !ok || v.Type != c.typ || v.text() != c.want {
			t.Errorf("%s: %s %q (%v), want %s %q", c.sql, v.Type, v.text(), ok, c.typ, c.want)
		}
	}
	for _, sql := range []string{
		"SELECT CAST(avg(2147483647) * 2 AS integer)",                 // 22003
		"SELECT avg(1) / (count(*) - 1)",                              // 22012
		"SELECT CASE WHEN avg(1) = 1 THEN 1 ELSE 1 / 0 END",           // an arm PostgreSQL may fold and fail
		"SELECT COALESCE(avg(1), 2147483647 + 1)",                     // 22003
		"SELECT avg(sum(1))",                                          // 42803
		"SELECT avg(1) + CAST(1 AS REAL)",                             // a float
		"SELECT avg(x) FROM t",                                        // a column
		"SELECT avg(1) FILTER (WHERE false)",                          // not one value
		"SELECT CASE WHEN avg(1) = 1 THEN NULL END",                   // text
		"SELECT avg(1) % 2",                                           // numeric %: not evaluated
		"SELECT sum(NULL)",                                            // 42725
		"SELECT - (- 2147483647 - 1) + avg(1)",                        // 22003
		"SELECT CAST(CAST(3000000000 AS bigint) AS integer) + avg(1)", // 22003
	} {
		if v, ok := OneRow(column(t, sql)); ok {
			t.Errorf("%s: evaluated to %s %q", sql, v.Type, v.text())
		}
	}
}

// TestNoRows: over no rows count is 0 and sum, avg, min and max NULL of
// their types, their arguments typed by OneRow or, for a column under
// signs, by the typer given; Condition tells a WHERE without
// aggregates.
func TestNoRows(t *testing.T) {
	typeOf := func(n *pg_query.Node) string { return "int4" } // every column an integer
	for _, c := range []struct{ sql, typ, want string }{
		{"SELECT - 76 / AVG ( 94 * + 34 )", "numeric", ""},
		{"SELECT AVG ( DISTINCT + 32 ) / + COUNT ( * )", "numeric", ""},
		{"SELECT COALESCE(avg(- col0), count(*) + 1) / 3", "numeric", "0.33333333333333333333"},
		{"SELECT CAST(COALESCE(sum(col1), 5) AS integer) + avg(2)", "numeric", ""},
		{"SELECT COALESCE(max(col1), count(col1) + 7) + avg(1)", "numeric", ""},
		{"SELECT COALESCE(avg(col1), max(col1), count(col1) + 7)", "numeric", "7"},
	} {
		v, ok := NoRows(column(t, c.sql), typeOf)
		if !ok || v.Type != c.typ || v.text() != c.want {
			t.Errorf("%s: %s %q (%v), want %s %q", c.sql, v.Type, v.text(), ok, c.typ, c.want)
		}
	}
	for _, sql := range []string{
		"SELECT avg(1 / 0)",           // PostgreSQL folds the argument when planning: 22012
		"SELECT avg(col0 + 1)",        // only a column under signs is typed
		"SELECT col0 + avg(1)",        // 42803
		"SELECT sum(NULL)",            // 42725
		"SELECT avg(CAST(1 AS REAL))", // a float
	} {
		if v, ok := NoRows(column(t, sql), typeOf); ok {
			t.Errorf("%s: evaluated to %s %q", sql, v.Type, v.text())
		}
	}
	for _, c := range []struct {
		sql  string
		want string
	}{{"SELECT NULL IS NOT NULL", "false"}, {"SELECT 1 = 1 AND NULL", ""}, {"SELECT NULL", ""}, {"SELECT NOT 2 > 3", "true"}} {
		if v, ok := Condition(column(t, c.sql)); !ok || v.text() != c.want {
			t.Errorf("%s: %q (%v), want %q", c.sql, v.text(), ok, c.want)
		}
	}
	for _, sql := range []string{"SELECT count(*) > 0", "SELECT 1 + 1", "SELECT col0 > 1", "SELECT 1 / 0 > 1"} {
		if v, ok := Condition(column(t, sql)); ok {
			t.Errorf("%s: told %q", sql, v.text())
		}
	}
}

// TestOneRowOnPostgres compares OneRow with PostgreSQL 15 over random
// expressions of constants, NULLs, aggregates, signs, casts, + - * / %,
// comparisons, AND/OR/NOT, IS NULL, BETWEEN, IN, CASE, COALESCE and
// NULLIF: every one OneRow evaluates must be answered by PostgreSQL with
// the same text and type; none PostgreSQL fails may be evaluated.
func TestOneRowOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	rng := rand.New(rand.NewSource(16))
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	constant := func() string {
		switch rng.Intn(8) {
		case 0:
			return fmt.Sprint(rng.Intn(100))
		case 1:
			return fmt.Sprint(rng.Intn(2147483647))
		case 2:
			return fmt.Sprintf("%d.%0*d", rng.Intn(1000), 1+rng.Intn(4), rng.Intn(10000))
		case 3:
			return pick("NULL", "CAST(NULL AS INTEGER)", "CAST(NULL AS DECIMAL)", "CAST(NULL AS BIGINT)")
		case 4:
			return "CAST(" + fmt.Sprint(rng.Intn(1000)) + " AS " + pick("DECIMAL", "BIGINT", "INTEGER") + ")"
		case 5:
			return "- " + fmt.Sprint(rng.Intn(100))
		}
		return fmt.Sprint(rng.Intn(10))
	}
	var num, cond func(depth int, agg bool) string
	num = func(depth int, agg bool) string {
		if depth == 0 || rng.Intn(4) == 0 {
			return constant()
		}
		d := depth - 1
		switch rng.Intn(11) {
		case 0:
			return pick("- ", "+ ") + num(d, agg)
		case 1:
			return "CAST(" + num(d, agg) + " AS " + pick("DECIMAL", "INTEGER", "BIGINT") + ")"
		case 2:
			if agg {
				return pick("AVG", "SUM", "MIN", "MAX", "COUNT") + "(" + pick("", "DISTINCT ", "ALL ") + num(d, false) + ")"
			}
			return "COUNT(*)"
		case 3:
			return "CASE " + num(d, agg) + " WHEN " + num(d, agg) + " THEN " + num(d, agg) + pick("", " ELSE "+num(d, agg)) + " END"
		case 4:
			return "CASE WHEN " + cond(d, agg) + " THEN " + num(d, agg) + " ELSE " + num(d, agg) + " END"
		case 5:
			return "COALESCE(" + num(d, agg) + ", " + num(d, agg) + pick("", ", "+num(d, agg)) + ")"
		case 6:
			return "NULLIF(" + num(d, agg) + ", " + num(d, agg) + ")"
		}
		return "(" + num(d, agg) + " " + pick("+", "-", "*", "/", "%") + " " + num(d, agg) + ")"
	}
	cond = func(depth int, agg bool) string {
		d := max(depth-1, 0)
		switch rng.Intn(6) {
		case 0:
			return num(d, agg) + pick(" IS NULL", " IS NOT NULL")
		case 1:
			return num(d, agg) + pick(" BETWEEN ", " NOT BETWEEN ") + num(d, agg) + " AND " + num(d, agg)
		case 2:
			return num(d, agg) + pick(" IN (", " NOT IN (") + num(d, agg) + ", " + num(d, agg) + ")"
		case 3:
			return "(" + cond(d, agg) + pick(" AND ", " OR ") + cond(d, agg) + ")"
		case 4:
			return "NOT " + cond(d, agg)
		}
		return num(d, agg) + pick(" = ", " <> ", " < ", " > ", " <= ", " >= ") + num(d, agg)
	}
	taken, exact := 0, 0
	for range 3000 {
		sql := "SELECT " + num(4, true)
		v, ok := OneRow(column(t, sql))
		var typ string
		var want *string
		qerr := conn.QueryRow(ctx, "SELECT pg_typeof(x)::text, x::text FROM ("+sql+") AS s(x)").Scan(&typ, &want)
		got := v.text()
		switch {
		case ok && qerr != nil:
			t.Errorf("%s: evaluated to %s %q, PostgreSQL fails: %v", sql, v.Type, got, qerr)
		case ok && (want == nil) != v.Null || ok && want != nil && *want != got:
			t.Errorf("%s: evaluated to %q, PostgreSQL %v", sql, got, deref(want))
		case ok && pgTypes[v.Type] != typ:
			t.Errorf("%s: typed %s, PostgreSQL %s", sql, v.Type, typ)
		}
		if ok {
			taken++
			if v.Exact {
				exact++
			}
		}
	}
	if taken < 500 || exact < 200 {
		t.Fatalf("only %d of the expressions evaluated (%d with avg() or a numeric division)", taken, exact)
	}
	t.Logf("%d evaluated as PostgreSQL (%d with avg() or a numeric division)", taken, exact)
}

var pgTypes = map[string]string{"int4": "integer", "int8": "bigint", "numeric": "numeric", "bool": "boolean", "unknown": "text"}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}
