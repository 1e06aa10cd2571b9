package server

import (
	"testing"
	"time"
)

// TestBigintSumsAsPostgreSQL (issue 14): sum() of bigint is numeric in
// PostgreSQL, exact beyond the int64 range; SQLite failed with "integer
// overflow" (MariaDB answers a DECIMAL), even when only a partial sum
// left the range. sum() of int and smallint and count() stay bigint.
// Beyond the range in an expression or a condition SQLite cannot carry
// the value: shepherd_sum fails there with 0A000 (TestSumFunctions).
func TestBigintSumsAsPostgreSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines")
	}
	asPostgres(t, []string{
		"CREATE TABLE big (k int PRIMARY KEY, g text, b bigint, i int, s smallint)",
		"INSERT INTO big VALUES (1, 'a', 9223372036854775807, 2147483647, 32767), (2, 'a', 9223372036854775807, 2147483647, 32767), " +
			"(3, 'b', -9223372036854775808, -2147483648, -32768), (4, 'b', -9223372036854775808, 1, 1), (5, 'b', -5, NULL, NULL), " +
			"(6, 'c', NULL, NULL, NULL), (7, 'd', 1, 2, 3), (8, 'd', 2, 3, 4)",
	}, []string{
		"SELECT sum(b), sum(i), sum(s), count(b) FROM big",
		"SELECT g, sum(b) FROM big GROUP BY g ORDER BY g",
		"SELECT sum(b) FROM big WHERE k IN (1, 2)",
		"SELECT sum(DISTINCT b) FROM big WHERE k IN (1, 2)",
		"SELECT sum(b) FROM big WHERE k IN (3, 4, 5)",
		"SELECT sum(b) FROM big WHERE k IN (1, 2, 3, 4)",
		"SELECT sum(b) FROM big WHERE k > 100",
		"SELECT sum(b) FROM big WHERE k <> 5 HAVING sum(b) < 100",
		"SELECT sum(b) + 1 FROM big WHERE k IN (1, 2, 3, 4)",
		"SELECT avg(b), sum(b)::text FROM big WHERE k IN (1, 2)",
		"SELECT g, avg(b) FROM big GROUP BY g ORDER BY g",
		"SELECT sum(b) OVER (ORDER BY k) FROM big WHERE k > 6 ORDER BY k",
	}, 20*time.Second)
}
