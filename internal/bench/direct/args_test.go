package direct

import (
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

func TestArg(t *testing.T) {
	n := func(i int64, exp int32) pgtype.Numeric {
		return pgtype.Numeric{Int: big.NewInt(i), Exp: exp, Valid: true}
	}
	s := "text"
	for _, c := range []struct {
		in   any
		want driver.Arg
	}{
		{nil, driver.Arg{Null: true}},
		{42, driver.Arg{Type: answer.Int, Text: "42"}},
		{int64(-7), driver.Arg{Type: answer.Int, Text: "-7"}},
		{uint64(1) << 63, driver.Arg{Type: answer.Numeric, Text: "9223372036854775808"}},
		{2.5, driver.Arg{Type: answer.Float, Text: "2.5"}},
		{true, driver.Arg{Type: answer.Bool, Text: "t"}},
		{"it's", driver.Arg{Text: "it's"}},
		{&s, driver.Arg{Text: "text"}},
		{(*string)(nil), driver.Arg{Null: true}},
		{[]byte{0, 1}, driver.Arg{Type: answer.Bytes, Text: "\x00\x01"}},
		{time.Date(2025, 3, 4, 5, 6, 7, 8000, time.FixedZone("x", 3600)), driver.Arg{Text: "2025-03-04 04:06:07.000008"}},
		{n(1234, -2), driver.Arg{Type: answer.Numeric, Text: "12.34"}},
		{n(-5, -4), driver.Arg{Type: answer.Numeric, Text: "-0.0005"}},
		{n(12, 3), driver.Arg{Type: answer.Numeric, Text: "12000"}},
		{n(0, -2), driver.Arg{Type: answer.Numeric, Text: "0.00"}},
		{pgtype.Numeric{}, driver.Arg{Null: true}},
		{pgtype.Numeric{NaN: true, Valid: true}, driver.Arg{Type: answer.Numeric, Text: "NaN"}},
		{pgtype.Int8{Int64: 5, Valid: true}, driver.Arg{Type: answer.Int, Text: "5"}},
	} {
		got, err := Arg(c.in)
		if err != nil || got != c.want {
			t.Errorf("Arg(%#v) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	if _, err := Arg(struct{}{}); err == nil {
		t.Error("a struct was accepted")
	}
}
