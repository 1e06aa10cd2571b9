package sqlan

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
