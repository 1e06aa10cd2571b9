package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestUnseenQuotients (issue 16): a numeric division whose digits cannot
// reach the answer is written as the engine divides: under an operator
// with a NULL operand (NULL whatever the quotient), in IS [NOT] NULL and
// count(x) (which see only whether it is NULL), and a sum() or avg() of
// NULL numeric values needs no rounding. They were refused as divisions
// (or sums) of unknown digits. So is an avg() there.
func TestUnseenQuotients(t *testing.T) {
	s := testSchema(t)
	for _, sql := range []string{
		"SELECT DISTINCT - n + 78 FROM acct WHERE NOT NULL BETWEEN n / CAST(bal AS DECIMAL) AND n",
		"SELECT 1 FROM acct WHERE n / 3.0 >= NULL",
		"SELECT COALESCE(38, 1) + CAST(-54 AS DECIMAL) / n / -92 * CASE WHEN NULL >= NULL THEN count(*) WHEN - count(*) IS NULL THEN NULL ELSE NULL END FROM acct",
		"SELECT bal / n * CAST(NULL AS INTEGER) FROM acct",
		"SELECT sum(CAST(NULL AS DECIMAL)) / 92 * count(*) FROM acct",
		"SELECT avg(DISTINCT CAST(NULL AS INTEGER)) / CAST(-77 AS INTEGER) + -47 FROM acct",
		"SELECT - 3 + count(ALL - COALESCE(64, COALESCE(CAST(70 AS DECIMAL), -77) / n)) FROM acct",
		"SELECT (bal / n) IS NULL, bal / n IS NOT NULL FROM acct",
		"SELECT - sum(CAST(NULL AS DECIMAL)) FROM acct",
		"SELECT - 6 * 73 - sum(67 + - CAST(NULL AS DECIMAL)) FROM acct",
		"SELECT NULLIF(CAST(NULL AS DECIMAL), 1) / n FROM acct",
		"SELECT DISTINCT 17 / - - 79 + + 56 + 86 * 31 + 25 - + CAST( - COUNT( * ) AS DECIMAL ) / CASE + + 77 WHEN + + 80 / 82 + - 65 THEN MIN( ALL + 83 ) END FROM acct",
		"SELECT avg(n) IS NULL, avg(bal) + CAST(NULL AS INTEGER), count(bal / n + n) FROM acct",
		"SELECT 49 AS col0, sum(CAST(NULL AS DECIMAL)) / 92 * count(*) * 54 + avg(-75) * -51 FROM acct",
	} {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			if _, err := Write(parse(t, sql), d, s); err != nil {
				t.Errorf("%s for %v: %v", sql, d, err)
			}
		}
	}
}

// TestSeenQuotientsRefused: where a numeric division's digits can reach
// the answer, it is still refused: in a result column, a comparison, a
// count(DISTINCT ...), a FILTER, a CASE or COALESCE that may take it.
func TestSeenQuotientsRefused(t *testing.T) {
	s := testSchema(t)
	for _, sql := range []string{
		"SELECT bal / n FROM acct",
		"SELECT 1 FROM acct WHERE bal / n > 1",
		"SELECT count(DISTINCT bal / n) FROM acct",
		"SELECT count(bal / n) FILTER (WHERE bal / n > 1) FROM acct",
		"SELECT count(bal / n) OVER (ORDER BY bal / n) FROM acct",
		"SELECT CASE WHEN n > 0 THEN NULL ELSE bal / n END FROM acct",
		"SELECT COALESCE(NULL, bal / n) FROM acct",
		"SELECT NULLIF(bal / n, NULL) FROM acct",
		"SELECT sum(bal / n) FROM acct",
		"SELECT (bal / n IS NULL) = (bal / n > 0) FROM acct",
		"SELECT NULL IS DISTINCT FROM bal / n FROM acct",
		"SELECT avg(n) + 1 > 2 FROM acct",
		"SELECT bal / CASE 77 WHEN 80 / 82 + 77 THEN n END FROM acct",
		"SELECT bal / CASE 2 WHEN 2.0 THEN n END FROM acct",
		// Whether the value is NULL depends on the digits here.
		"SELECT (CASE WHEN bal / n > 1 THEN 1 END) IS NULL FROM acct",
		"SELECT count(NULLIF(n, bal / n)) FROM acct",
		// A subquery's rows may depend on them.
		"SELECT NULL + (SELECT n FROM acct WHERE bal / n > 1 LIMIT 1)",
		"SELECT (SELECT n FROM acct WHERE bal / n > 1 LIMIT 1) IS NULL",
		"SELECT count((SELECT max(n) FROM acct WHERE bal / n > 1)) FROM acct",
	} {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			_, err := Write(parse(t, sql), d, s)
			if pgerr.Code(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "division") && !strings.Contains(err.Error(), "unknown scale") && !strings.Contains(err.Error(), "avg()") {
				t.Errorf("%s for %v: got %v, want 0A000 about the division, its scale or avg()", sql, d, err)
			}
		}
	}
}

// TestRoundedToValueScale: SQLite's float arithmetic on numeric values
// is rounded back to the decimals the exact value can have: a constant
// counts its value's (20000.000000000000 none), not its display scale,
// to which a product such as 1.005 * 20000 kept the float's error
// (20099.999999999996, a replica out of the vote).
func TestRoundedToValueScale(t *testing.T) {
	s := testSchema(t)
	f, err := Write(parse(t, "SELECT bal * 20000.000000000000, sum(bal * 1.50), bal + 0.10 FROM acct"), driver.SQLite, s)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT ROUND(("bal" * 20000.000000000000), 2), ROUND(SUM(ROUND(("bal" * 1.50), 3)), 3), ROUND(("bal" + 0.10), 2) FROM "acct"`
	if f.SQL != want {
		t.Errorf("got  %s\nwant %s", f.SQL, want)
	}
}
