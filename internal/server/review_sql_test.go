package server

import (
	"context"
	"testing"
	"time"
)

// TestNoRowsKeepsColumnErrorsAsPostgreSQL: an aggregating SELECT whose
// WHERE is false whatever the rows folds its avg() and numeric-division
// columns (pgnumeric.NoRows); count() of a column naming no table or
// column was folded to 0 with the rest, so the replicas, no longer
// reading it, answered a row (NULL) where PostgreSQL fails (42P01,
// 42703). Such a column is no longer folded: the statement fails (or is
// refused, 0A000), as its columns that resolve still answer.
func TestNoRowsKeepsColumnErrorsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	setup := []string{
		"CREATE TABLE nr (id int PRIMARY KEY, i int)",
		"INSERT INTO nr VALUES (1, 7)",
	}
	asPostgres(t, setup, []string{
		"SELECT count(i) / avg(1), count(nr.i) / 3.0 FROM nr WHERE NULL IS NOT NULL",
	}, time.Minute)
	ctx := context.Background()
	for name, addr := range map[string]func() string{
		"mariadb+postgres+sqlite": func() string { addr, _ := start(t, realCluster(t, "cbs")); return addr },
		"embedded":                func() string { addr, _ := start(t, embedded(t)); return addr },
	} {
		sh := shepherdConn(t, addr())
		for _, s := range setup {
			if o := runText(ctx, sh, s); o.code != "" {
				t.Fatalf("%s: %s: %v", name, s, o)
			}
		}
		for _, q := range []string{
			"SELECT count(nr.nosuch) / avg(1) FROM nr WHERE 1 > 2",
			"SELECT count(nosuch.i) / avg(1) FROM nr WHERE false",
		} {
			if got := runText(ctx, sh, q); got.code == "" {
				t.Errorf("%s: %s: %v, PostgreSQL fails (42703, 42P01)", name, q, got)
			}
		}
	}
}

// TestLockingOverAggregatesAsPostgreSQL: PostgreSQL refuses FOR UPDATE
// (and FOR SHARE...) over aggregates, GROUP BY, DISTINCT, HAVING, window
// functions and set operations (0A000); the replicas locked or dropped
// the clause and answered.
func TestLockingOverAggregatesAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE lk (id int PRIMARY KEY, i int)",
		"INSERT INTO lk VALUES (1, 7), (2, 8)",
	}, []string{
		"SELECT avg(1) FOR UPDATE",
		"SELECT avg(1) / 3 FOR UPDATE",
		"SELECT count(*) FROM lk FOR UPDATE",
		"SELECT avg(i) FROM lk FOR SHARE",
		"SELECT DISTINCT i FROM lk FOR UPDATE",
		"SELECT i FROM lk GROUP BY i FOR UPDATE",
		"SELECT i, row_number() OVER () FROM lk FOR UPDATE",
		"SELECT i FROM lk UNION SELECT 3 FOR UPDATE",
		"SELECT i FROM lk WHERE id = 1 FOR UPDATE",
		"SELECT i FROM lk WHERE i > (SELECT count(*) FROM lk) FOR UPDATE",
	}, time.Minute)
}

// TestMinimumIntegerConstantInDerivedTables: PostgreSQL types the
// constant -2147483648 as integer (the parser negates 2147483648, and
// make_const finds it fits); the typer said bigint, so a derived table's
// column of it was announced as int8 and x - 1 answered -2147483649
// where PostgreSQL fails (22003).
func TestMinimumIntegerConstantInDerivedTables(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, nil, []string{
		"SELECT x FROM (SELECT -2147483648 AS x) q",
		"SELECT x * 2 FROM (SELECT -2147483648 AS x) q",
		"WITH q AS (SELECT -2147483648 AS x) SELECT x - 1 FROM q",
		"SELECT x - 1 FROM (VALUES (-2147483648)) v(x)",
		"SELECT x - 1 FROM (SELECT -2147483649 AS x) q",
		"SELECT x - 1 FROM (SELECT 2147483648 AS x) q",
	}, time.Minute)
}
