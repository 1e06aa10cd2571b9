package server

import (
	"testing"
	"time"
)

// TestNumericDivisionsAsPostgreSQL (issue 16): numeric divisions the
// sqllogictest sample had refused as unrounded, answered as PostgreSQL
// answers them on MariaDB + PostgreSQL + SQLite and on SQLite alone:
// divisions of constants (folded to PostgreSQL's quotient, its display
// scale included), divisions under a NULL operand, in IS NULL and
// count(), and sum() and avg() of NULL numeric values.
func TestNumericDivisionsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE tab0 (pk int PRIMARY KEY, col0 int, col1 int, col2 numeric(10,2))",
		"INSERT INTO tab0 VALUES (1, 97, 1, 9.50), (2, 15, 81, 47.25), (3, 87, 21, 10.00), (4, NULL, 7, NULL), (5, 3, 3, 1.00)",
	}, []string{
		"SELECT DISTINCT + 20 + CAST( 600000 AS DECIMAL ) / - 32 AS col2",
		"SELECT - + 10000 * + 31 * 89 / + + ( - CAST( - - 5 AS DECIMAL ) ) * 30 + - 18 AS col0",
		"SELECT pk, 30000 / 1.5 + col2, col2 * (30000 / 1.5), col0 - 100000 / 0.5 FROM tab0 ORDER BY pk",
		"SELECT pk FROM tab0 WHERE col2 > 90000 / 7.5 - 11990 ORDER BY pk",
		"SELECT sum(col2 + 30000 / 1.5), sum(30000 / 1.5) FROM tab0",
		"SELECT DISTINCT - + col0 + + 78 FROM tab0 AS cor0 WHERE NOT NULL BETWEEN + col0 / + CAST( col1 AS DECIMAL ) AND + col1",
		"SELECT DISTINCT COALESCE ( + 38, - - ( - 70 ) * 52 + + 91 + - 47 ) + + CAST( - 54 AS DECIMAL ) / + 68 / + ( - 92 ) * - - CASE WHEN NULL >= NULL THEN COUNT( * ) WHEN - COUNT( * ) IS NULL THEN NULL ELSE NULL END * + 28 * - 58 + COUNT( * ) + + COUNT( * ) FROM tab0",
		"SELECT pk, col2 / col0 * CAST(NULL AS INTEGER) FROM tab0 ORDER BY pk",
		"SELECT - 3 + + COUNT( ALL - + COALESCE ( 64, COALESCE ( CAST( 70 AS DECIMAL ), - + 77, + 6 + 47 + 72 ) / + 88 ) ) FROM tab0",
		"SELECT count(col2 / col0), count(*) FILTER (WHERE col2 / col0 IS NULL) FROM tab0",
		"SELECT pk, (col2 / col0) IS NULL FROM tab0 ORDER BY pk",
		"SELECT - SUM( CAST( NULL AS DECIMAL ) ) AS col1 FROM tab0",
		"SELECT DISTINCT + + SUM( DISTINCT CAST( NULL AS DECIMAL ) ) * + COUNT( * ) FROM tab0 AS cor0",
		"SELECT ALL - 6 * 73 - + SUM( ALL ( + 67 ) + - ( ( CAST( NULL AS DECIMAL ) ) ) ) AS col1",
		"SELECT AVG ( DISTINCT + CAST ( NULL AS INTEGER ) ) / CAST ( - + 77 AS INTEGER ) + - 47 AS col1 FROM tab0",
		"SELECT AVG ( + CAST( NULL AS DECIMAL ) ) / + 2",
		"SELECT 49 AS col0, SUM( CAST( NULL AS DECIMAL ) ) / 92 * + + COUNT( * ) * 54 + + AVG ( - 75 ) * - 51 AS col0 FROM tab0",
		"SELECT ALL + COALESCE ( - 47, - ( - 82 ) * - 67 * - COUNT( - - 76 ) + - 59 + - 47 / + 83 * 30 ) / - + AVG ( ALL - CAST( NULL AS DECIMAL ) ) * - 40 AS col2 FROM tab0",
		"SELECT avg(col0) IS NULL, avg(col2) + CAST(NULL AS INTEGER), count(col2 / col0 + col1) FROM tab0",
		"UPDATE tab0 SET col2 = col2 + 90000 / 7.5 WHERE pk = 2",
		"SELECT pk, col2 FROM tab0 ORDER BY pk",
	}, time.Minute)
}
