package duckdb

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// column is what a result column's DuckDB type says about its values.
type column struct {
	typ answer.Type
	oid uint32
	// float4 marks DuckDB's FLOAT, PostgreSQL's real.
	float4 bool
}

// columnOf reads a DuckDB type name (DECIMAL(12,2), VARCHAR, ...).
func columnOf(name string) column {
	base, _, _ := strings.Cut(strings.ToUpper(name), "(")
	switch base {
	case "BOOLEAN":
		return column{typ: answer.Bool}
	case "TINYINT", "SMALLINT":
		return column{typ: answer.Int, oid: answer.OIDInt2}
	case "INTEGER", "UTINYINT", "USMALLINT":
		return column{typ: answer.Int, oid: answer.OIDInt4}
	case "BIGINT", "UINTEGER", "UBIGINT", "HUGEINT", "UHUGEINT":
		return column{typ: answer.Int, oid: answer.OIDInt8}
	case "DECIMAL":
		return column{typ: answer.Numeric}
	case "FLOAT":
		return column{typ: answer.Float, oid: answer.OIDFloat4, float4: true}
	case "DOUBLE":
		return column{typ: answer.Float}
	case "VARCHAR":
		return column{typ: answer.Text}
	case "BLOB":
		return column{typ: answer.Bytes}
	case "DATE":
		return column{typ: answer.Date}
	case "TIME":
		return column{typ: answer.Time}
	case "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S":
		return column{typ: answer.Timestamp}
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ":
		return column{typ: answer.TimestampTZ}
	case "UUID":
		return column{typ: answer.UUID}
	case "INTERVAL":
		return column{typ: answer.Interval}
	}
	return column{typ: answer.Unknown}
}

// value turns what the library scanned into a value printed as
// PostgreSQL prints its type.
func (c column) value(v any) answer.Value {
	switch v := v.(type) {
	case nil:
		return answer.Value{Null: true}
	case bool:
		if v {
			return answer.V(answer.Bool, "t")
		}
		return answer.V(answer.Bool, "f")
	case int8:
		return answer.V(answer.Int, strconv.FormatInt(int64(v), 10))
	case int16:
		return answer.V(answer.Int, strconv.FormatInt(int64(v), 10))
	case int32:
		return answer.V(answer.Int, strconv.FormatInt(int64(v), 10))
	case int64:
		return answer.V(answer.Int, strconv.FormatInt(v, 10))
	case uint8:
		return answer.V(answer.Int, strconv.FormatUint(uint64(v), 10))
	case uint16:
		return answer.V(answer.Int, strconv.FormatUint(uint64(v), 10))
	case uint32:
		return answer.V(answer.Int, strconv.FormatUint(uint64(v), 10))
	case uint64:
		return answer.V(answer.Int, strconv.FormatUint(v, 10))
	case *big.Int:
		return answer.V(answer.Int, v.String())
	case float32:
		return answer.V(answer.Float, answer.FormatFloat(float64(v), 32))
	case float64:
		if c.float4 {
			return answer.V(answer.Float, answer.FormatFloat(float64(float32(v)), 32))
		}
		return answer.V(answer.Float, answer.FormatFloat(v, 64))
	case duckdb.Decimal:
		return answer.V(answer.Numeric, decimalText(v))
	case string:
		if c.typ != answer.Text && c.typ != answer.Unknown {
			if pg, ok := answer.PGText(c.typ, v); ok {
				return answer.V(c.typ, pg)
			}
		}
		return answer.V(answer.Text, v)
	case []byte:
		if c.typ == answer.UUID && len(v) == 16 {
			return answer.V(answer.UUID, uuidText(v))
		}
		return answer.V(answer.Bytes, string(v))
	case duckdb.UUID:
		return answer.V(answer.UUID, uuidText(v[:]))
	case time.Time:
		return c.time(v)
	case duckdb.Interval:
		// DuckDB's months, days and microseconds are PostgreSQL's.
		return answer.V(answer.Interval, answer.IntervalValue{Months: v.Months, Days: v.Days, Micros: v.Micros}.String())
	}
	// A type shepherd does not write (interval, list, struct): its
	// text, which the vote compares with the others' as text.
	return answer.V(answer.Text, fmt.Sprint(v))
}

// decimalText prints a DECIMAL with its scale, as PostgreSQL prints a
// numeric of that scale.
func decimalText(d duckdb.Decimal) string {
	if d.Value == nil {
		return "0"
	}
	neg := d.Value.Sign() < 0
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func uuidText(b []byte) string {
	const hex = "0123456789abcdef"
	var out strings.Builder
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out.WriteByte('-')
		}
		out.WriteByte(hex[x>>4])
		out.WriteByte(hex[x&15])
	}
	return out.String()
}

func (c column) time(t time.Time) answer.Value {
	switch c.typ {
	case answer.Date:
		pg, _ := answer.PGText(answer.Date, t.Format("2006-01-02"))
		return answer.V(answer.Date, pg)
	case answer.Time:
		return answer.V(answer.Time, t.Format("15:04:05.999999"))
	case answer.TimestampTZ:
		pg, _ := answer.PGText(answer.TimestampTZ, t.UTC().Format("2006-01-02 15:04:05.999999-07:00"))
		return answer.V(answer.TimestampTZ, pg)
	}
	pg, _ := answer.PGText(answer.Timestamp, t.Format("2006-01-02 15:04:05.999999"))
	return answer.V(answer.Timestamp, pg)
}

// convertArgs turns Args into values for DuckDB: typed ones as Go values
// of their family, untyped ones as text, which DuckDB casts to the type
// the statement expects.
func convertArgs(args []driver.Arg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = convertArg(a)
	}
	return out
}

func convertArg(a driver.Arg) any {
	if a.Null {
		return nil
	}
	switch a.Type {
	case answer.Int:
		if n, err := strconv.ParseInt(a.Text, 10, 64); err == nil {
			return n
		}
	case answer.Float:
		if f, err := strconv.ParseFloat(a.Text, 64); err == nil {
			return f
		}
	case answer.Bool:
		if b, ok := answer.ParseBool(a.Text); ok {
			return b
		}
	case answer.Bytes:
		return []byte(a.Text)
	}
	return a.Text
}
