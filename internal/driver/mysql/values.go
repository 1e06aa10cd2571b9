package mysql

import (
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// columnKind is what the driver knows of a result column from its
// database type name: the family, the PostgreSQL type to report, and how
// to rewrite the server's text into PostgreSQL's.
type columnKind struct {
	typ  answer.Type
	oid  uint32
	size int16
	// rewrite turns the server's text into PostgreSQL's; nil keeps it.
	rewrite func([]byte) string
}

// kindOf maps a go-sql-driver DatabaseTypeName onto a columnKind.
func kindOf(dbType string) columnKind {
	unsigned := strings.HasPrefix(dbType, "UNSIGNED ")
	switch strings.TrimPrefix(dbType, "UNSIGNED ") {
	case "TINYINT", "SMALLINT", "YEAR":
		return columnKind{typ: answer.Int, oid: answer.OIDInt2, size: 2}
	case "MEDIUMINT":
		return columnKind{typ: answer.Int, oid: answer.OIDInt4, size: 4}
	case "INT":
		if unsigned {
			return columnKind{typ: answer.Int, oid: answer.OIDInt8, size: 8}
		}
		return columnKind{typ: answer.Int, oid: answer.OIDInt4, size: 4}
	case "BIGINT":
		if unsigned { // may not fit in int8
			return columnKind{typ: answer.Numeric, oid: answer.OIDNumeric, size: -1}
		}
		return columnKind{typ: answer.Int, oid: answer.OIDInt8, size: 8}
	case "BIT":
		// Not a boolean: the width is not in the metadata, and MariaDB
		// sends the result of MAX(), MIN(), IF() over a BIT column as a
		// BIT whose payload is the decimal text ("1" reads 49). Booleans
		// are BOOLEAN (TINYINT(1)), whose 0 and 1 equal PostgreSQL's f
		// and t in answer's canonical form.
		return columnKind{typ: answer.Int, oid: answer.OIDInt8, size: 8, rewrite: bitText}
	case "DECIMAL":
		return columnKind{typ: answer.Numeric, oid: answer.OIDNumeric, size: -1}
	case "FLOAT":
		// MariaDB prints a FLOAT with six significant digits (16777216
		// as 1.67772e+07), so digits past the sixth are lost before they
		// reach here; PostgreSQL's real is better kept in a DOUBLE.
		return columnKind{typ: answer.Float, oid: answer.OIDFloat4, size: 4, rewrite: floatText(32)}
	case "DOUBLE":
		return columnKind{typ: answer.Float, oid: answer.OIDFloat8, size: 8, rewrite: floatText(64)}
	case "CHAR":
		return columnKind{typ: answer.Text, oid: answer.OIDBPChar, size: -1}
	case "VARCHAR":
		return columnKind{typ: answer.Text, oid: answer.OIDVarchar, size: -1}
	case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "GEOMETRY":
		return columnKind{typ: answer.Bytes, oid: answer.OIDBytea, size: -1}
	case "DATE":
		return columnKind{typ: answer.Date, oid: answer.OIDDate, size: 4}
	case "DATETIME", "TIMESTAMP":
		return columnKind{typ: answer.Timestamp, oid: answer.OIDTimestamp, size: 8, rewrite: trimFraction}
	case "TIME":
		return columnKind{typ: answer.Time, oid: answer.OIDTime, size: 8, rewrite: trimFraction}
	case "JSON":
		return columnKind{typ: answer.JSON, oid: answer.OIDJSON, size: -1}
	}
	// TEXT and its sizes, ENUM, SET, NULL and anything new: text.
	return columnKind{typ: answer.Text, oid: answer.OIDText, size: -1}
}

func (k columnKind) column(name string) answer.Column {
	return answer.Column{Name: name, Type: k.typ, OID: k.oid, Size: k.size, Mod: -1}
}

// value converts one raw field; b is only valid until the next row.
func (k columnKind) value(b []byte) answer.Value {
	if b == nil {
		return answer.Null
	}
	if k.rewrite != nil {
		return answer.Value{Text: k.rewrite(b)}
	}
	return answer.Value{Text: string(b)}
}

// trimFraction prints a DATETIME, TIMESTAMP or TIME as PostgreSQL does:
// the fraction of a second without trailing zeros, none when zero.
// MySQL pads it to the column's declared precision.
func trimFraction(b []byte) string {
	s := string(b)
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 {
		return s
	}
	frac := strings.TrimRight(s[dot+1:], "0")
	if frac == "" {
		return s[:dot]
	}
	return s[:dot+1] + frac
}

// bitText prints a BIT value, which arrives as big-endian bytes, as an
// unsigned integer.
func bitText(b []byte) string {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return strconv.FormatUint(n, 10)
}

// floatText returns a rewrite that prints MySQL's float text the way
// PostgreSQL prints a float of that width.
func floatText(bits int) func([]byte) string {
	return func(b []byte) string {
		f, err := strconv.ParseFloat(string(b), bits)
		if err != nil {
			return string(b)
		}
		return answer.FormatFloat(f, bits)
	}
}
