package sqlan

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestDeepStatementsRefused: chains that PostgreSQL's grammar nests
// without limit are refused with 54001 before they are parsed; 100,000
// links crashed the whole process inside pg_query (a C stack overflow no
// recover can catch).
func TestDeepStatementsRefused(t *testing.T) {
	const n = 100_000
	for name, q := range map[string]string{
		"sum":         "SELECT 1" + strings.Repeat("+1", n),
		"concat":      "SELECT 'a'" + strings.Repeat(" || 'a'", n),
		"casts":       "SELECT 1" + strings.Repeat("::int", n),
		"collate":     `SELECT 'a'` + strings.Repeat(` COLLATE "C"`, n),
		"time zones":  `SELECT now()` + strings.Repeat(` AT TIME ZONE 'UTC'`, n),
		"json":        `SELECT '{}'::jsonb` + strings.Repeat(`->'a'`, n),
		"unions":      "SELECT 1, 2" + strings.Repeat(" UNION SELECT 1, 2", n),
		"joins":       "SELECT 1 FROM a" + strings.Repeat(" JOIN a ON true", n),
		"parentheses": "SELECT " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n),
		"subqueries":  "SELECT " + strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n),
		"cases":       "SELECT " + strings.Repeat("CASE WHEN true THEN 1 ELSE ", n) + "1" + strings.Repeat(" END", n),
		"nots":        "SELECT " + strings.Repeat("NOT ", n) + "true",
		"in a string": "SELECT 'x', E'\\'' + 1" + strings.Repeat("+1", n),
		"after ;":     "SELECT 1;SELECT 1" + strings.Repeat("+1", n),
		"just over":   "SELECT 1" + strings.Repeat("+1", MaxExprDepth+1),
	} {
		_, err := Parse(q)
		if c := pgerr.Code(err); c != stackDepthExceeded {
			t.Errorf("%s: got %q (%v), want 54001", name, c, err)
		}
	}
}

// TestShallowStatementsAccepted: long statements that do not nest deeply
// (flat lists, long AND/OR chains, operators inside strings and
// comments) pass the depth check.
func TestShallowStatementsAccepted(t *testing.T) {
	const n = 20_000
	for name, q := range map[string]string{
		"or list":    "SELECT 1 WHERE 1 = 1" + strings.Repeat(" OR 1 = 1", n),
		"and list":   "SELECT 1 WHERE 1 + 1 = 2" + strings.Repeat(" AND 1 + 1 = 2", n),
		"in list":    "SELECT 1 WHERE 1 IN (0" + strings.Repeat(", -1", n) + ")",
		"values":     "SELECT * FROM (VALUES (1 + 1, 'a-b')" + strings.Repeat(", (1 + 1, 'a-b')", n) + ") v",
		"string":     "SELECT '" + strings.Repeat("+", n) + "'",
		"e string":   "SELECT E'\\'" + strings.Repeat("+", n) + "'",
		"dollar":     "SELECT $x$" + strings.Repeat("+", n) + "$x$",
		"comment":    "SELECT 1 /* " + strings.Repeat("+ /* + */", n) + " */",
		"line":       "SELECT 1 -- " + strings.Repeat("+", n) + "\n",
		"identifier": `SELECT 1 AS "` + strings.Repeat("+", n) + `"`,
		"at limit":   "SELECT 1" + strings.Repeat("+1", MaxExprDepth-1),
		"statements": strings.Repeat("SELECT 1"+strings.Repeat("+1", 500)+";", 10),
	} {
		if _, err := Parse(q); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
