package sqlan

import (
	"errors"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestPositionsOutsideSelectList (issue 14, item 14): ORDER BY 0
// indexed before the select list and ended the session with a panic.
// Positions outside the select list fail as in PostgreSQL (42P10, its
// message).
func TestPositionsOutsideSelectList(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int, b text)")
	for q, msg := range map[string]string{
		"SELECT 1 ORDER BY 0":                                             "ORDER BY position 0 is not in select list",
		"SELECT a FROM t ORDER BY -1":                                     "ORDER BY position -1 is not in select list",
		"SELECT a FROM t ORDER BY a, 2":                                   "ORDER BY position 2 is not in select list",
		"SELECT * FROM t ORDER BY 4":                                      "ORDER BY position 4 is not in select list",
		"SELECT t.* FROM t ORDER BY 0":                                    "ORDER BY position 0 is not in select list",
		"SELECT 1 UNION SELECT 2 ORDER BY 0":                              "ORDER BY position 0 is not in select list",
		"SELECT 1 UNION SELECT 2 ORDER BY 2":                              "ORDER BY position 2 is not in select list",
		"VALUES (1, 2) ORDER BY 3":                                        "ORDER BY position 3 is not in select list",
		"SELECT a, count(*) FROM t GROUP BY 0":                            "GROUP BY position 0 is not in select list",
		"SELECT a, count(*) FROM t GROUP BY 3":                            "GROUP BY position 3 is not in select list",
		"SELECT (SELECT a FROM t ORDER BY 0)":                             "ORDER BY position 0 is not in select list",
		"DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY 5 LIMIT 1)": "ORDER BY position 5 is not in select list",
	} {
		_, err := ParseIn(q, env)
		var pe *pgerr.Error
		if !errors.As(err, &pe) || pe.Code != "42P10" || pe.Message != msg {
			t.Errorf("%s: %v, want 42P10 %q", q, err, msg)
		}
	}
	for _, q := range []string{"SELECT * FROM t ORDER BY 3", "SELECT a, b FROM t GROUP BY 1, 2 ORDER BY 2, 1"} {
		if _, err := ParseIn(q, env); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestDefaultValues (issue 14, item 14): INSERT ... DEFAULT VALUES into a
// table with a SERIAL key panicked (the row of defaults shepherd built
// had no set operation). It inserts one row of defaults with the key
// pinned, as any other INSERT.
func TestDefaultValues(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int DEFAULT 5, b text)", "CREATE TABLE p (a int DEFAULT 5)")
	st, err := ParseOneIn("INSERT INTO t DEFAULT VALUES RETURNING *", env)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pins) != 1 || st.Pins[0].Kind != PinSerial {
		t.Errorf("pins %+v, want the SERIAL key", st.Pins)
	}
	for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite} {
		if text, _ := st.For(d); !strings.Contains(strings.ToLower(text), "id") {
			t.Errorf("%v: %s does not set id", d, text)
		}
	}
	if _, err := ParseOneIn("INSERT INTO p DEFAULT VALUES", env); err != nil {
		t.Error(err)
	}
}
