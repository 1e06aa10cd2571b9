package sqlite

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// SQLite types values, not columns: any column can hold an integer, a
// float, text, a blob or NULL, and a declared type only nudges what is
// stored (type affinity). So every value here carries its own family,
// taken from what SQLite stored, and the declared type refines it where
// the stored form is only SQLite's encoding of the declared one:
//
//   - an integer in a BOOLEAN column is a boolean (0 "f", else "t");
//   - a float in a DECIMAL/NUMERIC column is a Numeric, printed without
//     exponent (SQLite keeps decimals as floats);
//   - text in a DATE, TIME, TIMESTAMP, JSON ... column is of that family;
//   - a time the library parsed out of a DATE/DATETIME/TIMESTAMP column is
//     printed back the way PostgreSQL prints that type.
//
// A column's family is its declared type's when there is one, else the
// family of its first non-NULL value.

// declaredFamily maps a declared column type onto a family, Unknown when
// the column has no declared type or one shepherd does not recognise. The
// order matters: date and time words first, then SQLite's own affinity
// rules (INT before CHAR before BLOB before REAL).
func declaredFamily(decl string) answer.Type {
	d := strings.ToUpper(decl)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(d, w) {
				return true
			}
		}
		return false
	}
	switch {
	case d == "":
		return answer.Unknown
	case has("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE"):
		return answer.TimestampTZ
	case has("TIMESTAMP", "DATETIME"):
		return answer.Timestamp
	case has("DATE"):
		return answer.Date
	case has("TIME"):
		return answer.Time
	case has("BOOL"):
		return answer.Bool
	case has("INT"):
		return answer.Int
	case has("CHAR", "CLOB", "TEXT"):
		return answer.Text
	case has("BLOB", "BYTEA"):
		return answer.Bytes
	case has("REAL", "FLOA", "DOUB"):
		return answer.Float
	case has("DEC", "NUMERIC"):
		return answer.Numeric
	case has("JSON"):
		return answer.JSON
	case has("UUID"):
		return answer.UUID
	}
	return answer.Unknown
}

// textual reports whether text stored in a column of family t is a value
// of that family.
func textual(t answer.Type) bool {
	switch t {
	case answer.Text, answer.Date, answer.Time, answer.Timestamp, answer.TimestampTZ,
		answer.UUID, answer.JSON, answer.Interval:
		return true
	}
	return false
}

// convertValue converts one value as the library returned it, in a column
// of declared family decl (Unknown when none).
func convertValue(v any, decl answer.Type) answer.Value {
	switch v := v.(type) {
	case nil:
		return answer.Null
	case int64:
		if decl == answer.Bool {
			return answer.V(answer.Bool, boolText(v != 0))
		}
		return answer.V(answer.Int, strconv.FormatInt(v, 10))
	case bool: // mattn/go-sqlite3 reads integers of a "boolean" column so
		return answer.V(answer.Bool, boolText(v))
	case float64:
		if decl == answer.Numeric && !math.IsInf(v, 0) {
			return answer.V(answer.Numeric, strconv.FormatFloat(v, 'f', -1, 64))
		}
		return answer.V(answer.Float, answer.FormatFloat(v, 64))
	case string:
		if textual(decl) {
			return answer.V(decl, v)
		}
		return answer.V(answer.Text, v)
	case []byte:
		return answer.V(answer.Bytes, string(v))
	case time.Time:
		return timeValue(v, decl)
	}
	// Neither library returns anything else.
	return answer.V(answer.Text, "")
}

// timeValue prints a time the library parsed out of a date-typed column.
func timeValue(t time.Time, decl answer.Type) answer.Value {
	switch decl {
	case answer.Date:
		return answer.V(answer.Date, t.Format("2006-01-02"))
	case answer.Time:
		return answer.V(answer.Time, t.Format("15:04:05.999999"))
	case answer.TimestampTZ:
		return answer.V(answer.TimestampTZ, t.UTC().Format("2006-01-02 15:04:05.999999")+"+00")
	}
	// A timestamp without time zone keeps its wall-clock time, as
	// PostgreSQL does when it reads one written with an offset.
	return answer.V(answer.Timestamp, t.Format("2006-01-02 15:04:05.999999"))
}

// columnFamily is a column's family: the declared one, else that of its
// first non-NULL value (Text when all are NULL).
func columnFamily(decl answer.Type, rows [][]answer.Value, col int) answer.Type {
	if decl != answer.Unknown {
		return decl
	}
	for _, r := range rows {
		if !r[col].Null {
			return r[col].Type
		}
	}
	// No declared type and no value to look at (an expression over no
	// rows): only the statement text can tell, so say so and let the
	// session's analysis fill it in.
	return answer.Unknown
}

func boolText(b bool) string {
	if b {
		return "t"
	}
	return "f"
}

// convertArgs turns Args into values for SQLite. Untyped ones go as text
// and the column's affinity converts them; Numeric stays text too, so no
// digit is lost before SQLite decides how to store it.
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
		if b, ok := parseBool(a.Text); ok {
			if b {
				return int64(1)
			}
			return int64(0)
		}
	case answer.Bytes:
		return []byte(a.Text)
	}
	return a.Text
}

// parseBool reads PostgreSQL's boolean input forms.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
