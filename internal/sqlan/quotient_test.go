package sqlan

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestDivideOnPostgres compares pgDivide with PostgreSQL 15's numeric
// division, x::numeric / y::numeric, over operands of many magnitudes,
// scales and signs: the quotient's scale (select_div_scale) and its
// rounding.
func TestDivideOnPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	values := []string{"0", "0.00", "1", "-1", "2", "3", "7", "9", "10", "-10", "99", "100", "9999", "10000",
		"10001", "0.1", "0.5", "2.5", "7.0", "3.0", "0.01", "0.05", "-0.01", "1.25", "-1.25", "27.02",
		"0.0007", "0.00010", "0.0001", "0.00009999", "123456.7892", "9999999999.98", "2147483647",
		"-2147483648", "9223372036854775807", "1500.00", "33.3333", "0.333333333333333", "999999999999999",
		"12345678.9012345", "100000000", "99999999", "0.00000000000000000001", "5000", "9999.9999", "10000.0001"}
	rng := rand.New(rand.NewSource(16))
	for range 300 {
		// Random operands of up to 15 digits, as SQLite keeps them.
		digits := 1 + rng.Intn(15)
		scale := rng.Intn(digits + 3)
		var b strings.Builder
		for range digits {
			b.WriteByte(byte('0' + rng.Intn(10)))
		}
		v := strings.TrimLeft(b.String(), "0")
		if v == "" {
			v = "0"
		}
		if scale > 0 {
			v = strings.Repeat("0", max(0, scale-len(v)+1)) + v
			v = v[:len(v)-scale] + "." + v[len(v)-scale:]
		}
		if rng.Intn(3) == 0 {
			v = "-" + v
		}
		values = append(values, v)
	}
	var xs, ys []string
	for i, x := range values {
		for j, y := range values {
			if (i*len(values)+j)%7 == 0 || i < 46 && j < 46 {
				xs = append(xs, x)
				ys = append(ys, y)
			}
		}
	}
	rows, err := conn.Query(ctx, `SELECT x, y, CASE WHEN y::numeric = 0 THEN NULL ELSE (x::numeric / y::numeric)::text END
		FROM unnest($1::text[], $2::text[]) AS u (x, y)`, xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var x, y string
		var want *string
		if err := rows.Scan(&x, &y, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := pgDivide(x, y)
		switch {
		case want == nil && ok:
			t.Errorf("%s / %s: %s, PostgreSQL fails", x, y, got)
		case want != nil && (!ok || got != *want):
			t.Errorf("%s / %s: %q (%v), PostgreSQL %q", x, y, got, ok, *want)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d cases", n)
	}
	t.Logf("%d divisions as PostgreSQL's", n)
}

// TestFoldedQuotients (issue 16): a numeric division of constants reaches
// every replica as PostgreSQL's quotient, a constant of its digits and
// display scale, and the answer's column gets that scale; one some
// replica's engine cannot hold exactly (a SQLite replica: more than 15
// significant digits) is left to the SQL writer, which refuses it.
func TestFoldedQuotients(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int)")
	for _, c := range []struct {
		sql, lit string
		scale    int32
	}{
		{"SELECT DISTINCT + 20 + CAST( 600000 AS DECIMAL ) / - 32 AS col2", "18750.000000000000", 13},
		{"SELECT - + 10000 * + 31 * 89 / + + ( - CAST( - - 5 AS DECIMAL ) ) * 30 + - 18 + a FROM t", "5518000.000000000000", 13},
		{"SELECT 30000 / 1.5 * a FROM t", "20000.000000000000", 13},
	} {
		st, err := ParseOneIn(c.sql, env)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite} {
			if text, _ := st.For(d); !strings.Contains(text, c.lit) || strings.Contains(text, "/") {
				t.Errorf("%s for %v: %s, want the constant %s", c.sql, d, text, c.lit)
			}
		}
		if cols := st.Columns(); len(cols) != 1 || cols[0].scale != c.scale {
			t.Errorf("%s: columns %+v, want scale %d", c.sql, cols, c.scale-1)
		}
	}
	// 20 significant digits: no double holds them; 20 decimals.
	for _, sql := range []string{"SELECT CAST(-54 AS DECIMAL) / 68 + a FROM t", "SELECT 20 + CAST(6 AS DECIMAL) / -32 + a FROM t"} {
		if _, err := ParseOneIn(sql, env); pgerr.Code(err) != pgerr.FeatureNotSupported {
			t.Errorf("%s with a SQLite replica: %v, want 0A000", sql, err)
		}
	}
	mariaOnly := *env
	mariaOnly.Replicas = map[driver.Dialect][]string{driver.MySQL: {"maria"}, driver.Postgres: {"pg"}}
	// A quotient of scale 0 would be an integer constant.
	if _, err := ParseOneIn("SELECT CAST(2147483647 AS DECIMAL) * 2147483647 * 2147483647 / 1 + a FROM t", &mariaOnly); pgerr.Code(err) != pgerr.FeatureNotSupported {
		t.Errorf("a quotient of scale 0: %v, want 0A000", err)
	}
	st, err := ParseOneIn("SELECT CAST(-54 AS DECIMAL) / 68 + a FROM t", &mariaOnly)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := st.For(driver.MySQL); !strings.Contains(text, "0.79411764705882352941") {
		t.Errorf("MariaDB form %s", text)
	}
	st, err = ParseOneIn("SELECT DISTINCT + 20 + CAST( 6 AS DECIMAL ) / - 32 AS col2", &mariaOnly)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := st.For(driver.MySQL); !strings.Contains(text, "0.18750000000000000000") {
		t.Errorf("MariaDB form %s", text)
	}
	if cols := st.Columns(); len(cols) != 1 || cols[0].scale != 21 {
		t.Errorf("columns %+v, want scale 20", cols)
	}
}
