package direct

import (
	sqldriver "database/sql/driver"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// Arg converts one Go argument into a driver argument in PostgreSQL's
// text form: integers, floats, booleans, strings, byte slices, times
// (timestamps in UTC), pgtype.Numeric, nil, pointers to those, and
// anything with a database/sql Value method.
func Arg(v any) (driver.Arg, error) {
	switch v := v.(type) {
	case nil:
		return driver.Arg{Null: true}, nil
	case int:
		return integer(int64(v)), nil
	case int8:
		return integer(int64(v)), nil
	case int16:
		return integer(int64(v)), nil
	case int32:
		return integer(int64(v)), nil
	case int64:
		return integer(v), nil
	case uint8:
		return integer(int64(v)), nil
	case uint16:
		return integer(int64(v)), nil
	case uint32:
		return integer(int64(v)), nil
	case uint64:
		return driver.Arg{Type: answer.Numeric, Text: strconv.FormatUint(v, 10)}, nil
	case uint:
		return driver.Arg{Type: answer.Numeric, Text: strconv.FormatUint(uint64(v), 10)}, nil
	case float32:
		return driver.Arg{Type: answer.Float, Text: strconv.FormatFloat(float64(v), 'g', -1, 32)}, nil
	case float64:
		return driver.Arg{Type: answer.Float, Text: strconv.FormatFloat(v, 'g', -1, 64)}, nil
	case bool:
		if v {
			return driver.Arg{Type: answer.Bool, Text: "t"}, nil
		}
		return driver.Arg{Type: answer.Bool, Text: "f"}, nil
	case string:
		return driver.Arg{Type: answer.Unknown, Text: v}, nil
	case []byte:
		if v == nil {
			return driver.Arg{Null: true}, nil
		}
		return driver.Arg{Type: answer.Bytes, Text: string(v)}, nil
	case time.Time:
		// A timestamp without time zone, in UTC: the workloads write
		// timestamp columns. The statement's parameter hint turns it
		// into what the engine's column wants.
		return driver.Arg{Type: answer.Unknown, Text: v.UTC().Format("2006-01-02 15:04:05.999999")}, nil
	case pgtype.Numeric:
		return numeric(v)
	case *big.Int:
		if v == nil {
			return driver.Arg{Null: true}, nil
		}
		return driver.Arg{Type: answer.Numeric, Text: v.String()}, nil
	case sqldriver.Valuer:
		x, err := v.Value()
		if err != nil {
			return driver.Arg{}, err
		}
		if _, again := x.(sqldriver.Valuer); again {
			return driver.Arg{}, fmt.Errorf("%T: Value returned a Valuer", v)
		}
		return Arg(x)
	case *int:
		return deref(v)
	case *int32:
		return deref(v)
	case *int64:
		return deref(v)
	case *string:
		return deref(v)
	case *float64:
		return deref(v)
	case *bool:
		return deref(v)
	case *time.Time:
		return deref(v)
	}
	return driver.Arg{}, fmt.Errorf("cannot pass a %T", v)
}

func deref[T any](p *T) (driver.Arg, error) {
	if p == nil {
		return driver.Arg{Null: true}, nil
	}
	return Arg(*p)
}

func integer(n int64) driver.Arg {
	return driver.Arg{Type: answer.Int, Text: strconv.FormatInt(n, 10)}
}

// numeric writes a pgtype.Numeric in decimal notation.
func numeric(n pgtype.Numeric) (driver.Arg, error) {
	if !n.Valid {
		return driver.Arg{Null: true}, nil
	}
	if n.NaN || n.InfinityModifier != pgtype.Finite || n.Int == nil {
		v, err := n.Value()
		if err != nil {
			return driver.Arg{}, err
		}
		s, _ := v.(string)
		return driver.Arg{Type: answer.Numeric, Text: s}, nil
	}
	digits := new(big.Int).Abs(n.Int).String()
	sign := ""
	if n.Int.Sign() < 0 {
		sign = "-"
	}
	switch {
	case n.Exp >= 0:
		for range n.Exp {
			digits += "0"
		}
	default:
		scale := int(-n.Exp)
		for len(digits) <= scale {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	return driver.Arg{Type: answer.Numeric, Text: sign + digits}, nil
}
