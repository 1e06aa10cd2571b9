package dialect

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestStringAggDistinct: string_agg(DISTINCT x, ',' ORDER BY x) is
// SQLite's one-argument GROUP_CONCAT(DISTINCT x ORDER BY x), which joins
// with ','; another separator or order is refused.
func TestStringAggDistinct(t *testing.T) {
	s := duckArraySchema(t)
	f, err := Write(parse(t, "SELECT string_agg(DISTINCT s, ',' ORDER BY s DESC) FROM a"), driver.SQLite, s)
	if err != nil || !strings.Contains(f.SQL, `GROUP_CONCAT(DISTINCT "s" ORDER BY "s" DESC`) {
		t.Errorf("got %s, %v", f.SQL, err)
	}
	for _, sql := range []string{
		"SELECT string_agg(DISTINCT s, ';' ORDER BY s) FROM a",
		"SELECT string_agg(DISTINCT s, ',' ORDER BY id) FROM a",
	} {
		if _, err := Write(parse(t, sql), driver.SQLite, s); err == nil || !strings.Contains(err.Error(), "string_agg(DISTINCT") {
			t.Errorf("%s: %v, want a refusal naming string_agg(DISTINCT", sql, err)
		}
	}
}
