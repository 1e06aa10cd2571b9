package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func nested(depth int, open, leaf, close string) string {
	return strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth)
}

// TestTranslationGrowsLinearly: the translation of a statement nesting
// d levels deep grows linearly with d. MariaDB's overflow check of
// 32-bit arithmetic wrote its operand three times, so SELECT 1+1+...+1
// with 20 additions took gigabytes.
func TestTranslationGrowsLinearly(t *testing.T) {
	s := testSchema(t)
	shapes := map[string]func(int) string{
		"int4 sum":           func(d int) string { return "SELECT 1" + strings.Repeat("+1", d) },
		"int4 columns":       func(d int) string { return "SELECT n" + strings.Repeat(" * n - n", d) + " FROM acct" },
		"subqueries":         func(d int) string { return "SELECT " + nested(d, "(SELECT ", "1", ")") },
		"sums in subqueries": func(d int) string { return "SELECT " + nested(d, "(SELECT 1 + ", "1", ")") },
		"cases": func(d int) string {
			return "SELECT " + nested(d, "CASE WHEN n > 0 THEN 1 + ", "n", " END") + " FROM acct"
		},
		"coalesce":  func(d int) string { return "SELECT " + nested(d, "coalesce(n + ", "1", ", 0)") + " FROM acct" },
		"lower":     func(d int) string { return "SELECT " + nested(d, "lower(", "name", ")") + " FROM acct" },
		"divisions": func(d int) string { return "SELECT n" + strings.Repeat(" / (n + 1)", d) + " FROM acct" },
	}
	for name, shape := range shapes {
		for _, d := range []driver.Dialect{driver.MySQL, driver.SQLite} {
			size := func(depth int) int {
				f, err := Write(parse(t, shape(depth)), d, s)
				if err != nil {
					t.Fatalf("%s at depth %d for %v: %v", name, depth, d, err)
				}
				return len(f.SQL)
			}
			small, large := size(5), size(10)
			// Twice as deep, about twice as long: linear growth.
			if large > 2*small+100 {
				t.Errorf("%s for %v: %d bytes at depth 5, %d at depth 10", name, d, small, large)
			}
		}
	}
}

// TestRepeatedOperandsBounded: the constructs that must write an
// operand more than once (a MariaDB divisor's zero check, GREATEST of
// values that may be NULL) may nest a few levels; deeper, the statement
// is refused as too complex (54001) instead of growing exponentially.
func TestRepeatedOperandsBounded(t *testing.T) {
	s := testSchema(t)
	for _, c := range []struct {
		sql   string
		depth int
		ok    bool
	}{
		{"SELECT %s FROM acct", 3, true},
		{"SELECT %s FROM acct", 12, false},
	} {
		for _, shape := range []func(int) string{
			func(d int) string { return nested(d, "(1 / (n + ", "n", "))") },
			func(d int) string { return nested(d, "greatest(n, ", "n", ")") },
		} {
			q := strings.Replace(c.sql, "%s", shape(c.depth), 1)
			f, err := Write(parse(t, q), driver.MySQL, s)
			switch {
			case c.ok && err != nil:
				t.Errorf("%s: %v", q, err)
			case !c.ok && pgerr.Code(err) != "54001":
				t.Errorf("%s: got %d bytes, error %v; want 54001", q, len(f.SQL), err)
			}
		}
	}
}
