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

// division returns the operands of the division sql is (SELECT l / r).
func division(t *testing.T, sql string) (l, r *pg_query.Node) {
	t.Helper()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	e := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val.GetAExpr()
	if e == nil {
		t.Fatalf("%s: not a division", sql)
	}
	return e.Lexpr, e.Rexpr
}

// TestFoldQuotient: divisions of constants PostgreSQL computes as
// numeric are folded to its quotient, display scale included; what
// PostgreSQL fails or types otherwise is left alone.
func TestFoldQuotient(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"SELECT CAST(6 AS DECIMAL) / - 32", "-0.18750000000000000000"},
		{"SELECT - + 0 * + 31 * 89 / + + ( - CAST( - - 38 AS DECIMAL ) )", "0.00000000000000000000"},
		{"SELECT CAST(-54 AS DECIMAL) / + 68 / + (- 92)", "0.00863171355498721228"},
		{"SELECT 1 / 3.0", "0.33333333333333333333"},
		{"SELECT 7.50 / 2", "3.7500000000000000"},
		{"SELECT (1 + 2 * 3) / 2.0", "3.5000000000000000"},
		{"SELECT 17 / 5 / 2.0", "1.5000000000000000"}, // 17 / 5 is the integer 3
		{"SELECT 10000 / 0.5", "20000.000000000000"},
		{"SELECT CAST(2147483647 AS DECIMAL) * 2 / 3", "1431655764.66666667"},
	} {
		l, r := division(t, c.sql)
		q, ok := FoldQuotient(l, r)
		if !ok || q.String() != c.want {
			t.Errorf("%s: %s (%v), want %s", c.sql, q, ok, c.want)
		}
	}
	for _, sql := range []string{
		"SELECT 1.5 / 0",                        // 22012
		"SELECT 1.5 / (2 - 2)",                  // 22012
		"SELECT 7 / 2",                          // integers: truncated, not folded here
		"SELECT 2147483647 * 2 / 1.5",           // int4 overflow: 22003
		"SELECT CAST(1.5 AS INTEGER) / 1.5",     // rounds: not folded
		"SELECT CAST(1.5 AS REAL) / 1.5",        // float
		"SELECT 1e3 / 1.5",                      // a numeric of scale 0 written with an exponent
		"SELECT 3000000000 / 1.5",               // int8 constant
		"SELECT CAST(1.55 AS NUMERIC(3,1)) / 2", // rounds to the modifier
		"SELECT NULL / 1.5",
		"SELECT '1.5' / 1.5",
		"SELECT 1.5 / x FROM t",
		"SELECT - (- 2147483647 - 1) / 1.5", // - of int4's minimum overflows
	} {
		l, r := division(t, sql)
		if q, ok := FoldQuotient(l, r); ok {
			t.Errorf("%s: folded to %s", sql, q)
		}
	}
}

// TestFoldOnPostgres compares folded quotients with PostgreSQL 15's, over
// random constant expressions: signs, casts to numeric and integer, and
// + - * / of integers and decimals of many magnitudes and scales. Every
// expression fold takes must be answered by PostgreSQL with the same
// text; those PostgreSQL fails must not be taken.
func TestFoldOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	rng := rand.New(rand.NewSource(16))
	constant := func() string {
		switch rng.Intn(6) {
		case 0:
			return fmt.Sprint(rng.Intn(100))
		case 1:
			return fmt.Sprint(rng.Intn(2147483647))
		case 2:
			return fmt.Sprintf("%d.%0*d", rng.Intn(1000), 1+rng.Intn(4), rng.Intn(10000))
		case 3:
			return fmt.Sprintf("0.%0*d", 1+rng.Intn(12), rng.Intn(1000))
		case 4:
			return "CAST(" + fmt.Sprint(rng.Intn(1000)) + " AS DECIMAL)"
		}
		return fmt.Sprint(rng.Intn(10))
	}
	var expr func(depth int) string
	expr = func(depth int) string {
		if depth == 0 || rng.Intn(3) == 0 {
			return constant()
		}
		switch rng.Intn(6) {
		case 0:
			return "- " + expr(depth-1)
		case 1:
			return "CAST(" + expr(depth-1) + " AS DECIMAL)"
		}
		return "(" + expr(depth-1) + " " + string("+-*/"[rng.Intn(4)]) + " " + expr(depth-1) + ")"
	}
	taken := 0
	for range 1500 {
		sql := "SELECT " + expr(3) + " / " + expr(2)
		l, r := division(t, sql)
		q, ok := FoldQuotient(l, r)
		var want string
		qerr := conn.QueryRow(ctx, "SELECT ("+sql[len("SELECT "):]+")::text").Scan(&want)
		switch {
		case ok && qerr != nil:
			t.Errorf("%s: folded to %s, PostgreSQL fails: %v", sql, q, qerr)
		case ok && q.String() != want:
			t.Errorf("%s: folded to %s, PostgreSQL %s", sql, q, want)
		}
		if ok {
			taken++
		}
	}
	if taken < 300 {
		t.Fatalf("only %d of the expressions folded", taken)
	}
	t.Logf("%d folded quotients as PostgreSQL's", taken)
}
