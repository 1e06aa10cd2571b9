package sqlite

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// SQLite types values, not columns: any column can hold an integer, a
// float, text, a blob or NULL, and a declared type only nudges what is
// stored (type affinity). So every value here carries its own family,
// taken from what SQLite stored, and the declared type refines it where
// the stored form is only SQLite's encoding of the declared one, so that
// the value prints as PostgreSQL prints the type it came from:
//
//   - an integer in a BOOLEAN column is a boolean (0 "f", else "t"), and
//     so is boolean text ('t', 'false', ...);
//   - a float in a DECIMAL/NUMERIC column is a Numeric printed without
//     exponent (SQLite keeps decimals as floats, or integers when
//     integral; either way the declared scale is lost);
//   - a float in a REAL or FLOAT4 column is PostgreSQL's real, printed as
//     the shortest float32 (SQLite computes in doubles);
//   - text in a CHAR(n) column is padded with spaces to n characters;
//   - text in a DATE, TIME, TIMESTAMP, TIMESTAMPTZ, UUID column is a
//     value of that family, rewritten into PostgreSQL's spelling
//     (answer.PGText) when it reads as one: "2026-01-01T12:00:00+02:00"
//     in a TIMESTAMPTZ column is "2026-01-01 10:00:00+00";
//   - text reading as NaN or ±Infinity in a REAL/DOUBLE or NUMERIC
//     column is that number (SQLite keeps it as text);
//   - a time the library parsed out of a DATE/DATETIME/TIMESTAMP column
//     is printed back the way PostgreSQL prints that type.
//
// A column's family is its declared type's when there is one, else the
// family of its first non-NULL value.
//
// Declared types: both libraries parse text in a column declared exactly
// DATE, DATETIME or TIMESTAMP into a Go time, and mattn/go-sqlite3 turns
// text it cannot parse (an offset written +02, infinity, a BC date) into
// the zero time, losing the value. Declared types that only contain those
// words ("TIMESTAMP TEXT", "TIMESTAMPTZ", "DATE TEXT") are left alone by
// both and read the same here.

// declType is what a column's declared type says about its values.
type declType struct {
	typ answer.Type
	oid uint32 // the PostgreSQL type to report; 0 for the family's default
	// width is n of CHAR(n) (0 when not a CHAR).
	width int
	// float4 marks PostgreSQL's real (REAL, FLOAT4).
	float4 bool
}

// declare reads a declared column type. The order matters: JSON, UUID
// and date and time words first, then SQLite's own affinity rules (INT
// before CHAR before BLOB before REAL).
func declare(decl string) declType {
	d := strings.ToUpper(strings.TrimSpace(decl))
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(d, w) {
				return true
			}
		}
		return false
	}
	var out declType
	switch {
	case d == "":
	case has("JSON"):
		out.typ = answer.JSON
	case has("UUID"):
		out.typ = answer.UUID
	case has("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE"):
		out.typ = answer.TimestampTZ
	case has("TIMESTAMP", "DATETIME"):
		out.typ = answer.Timestamp
	case has("DATE"):
		out.typ = answer.Date
	case has("TIME"):
		out.typ = answer.Time
	case has("BOOL"):
		out.typ = answer.Bool
	case has("INT"):
		out.typ = answer.Int
	case has("CHAR", "CLOB", "TEXT"):
		out.typ = answer.Text
		if (strings.HasPrefix(d, "CHAR") || strings.HasPrefix(d, "BPCHAR")) && !has("VAR") {
			out.oid = answer.OIDBPChar
			out.width = 1
			if mods := typeMods(d); len(mods) == 1 {
				out.width = mods[0]
			}
		} else if has("VARCHAR", "VARYING") {
			out.oid = answer.OIDVarchar
		}
	case has("BLOB", "BYTEA"):
		out.typ = answer.Bytes
	case has("REAL", "FLOA", "DOUB"):
		out.typ = answer.Float
		if d == "REAL" || d == "FLOAT4" {
			out.float4, out.oid = true, answer.OIDFloat4
		}
	case has("DEC", "NUMERIC"):
		out.typ = answer.Numeric
	}
	return out
}

// typeMods reads the numbers in parentheses of a declared type:
// "CHAR(5)" gives [5], "NUMERIC(10, 2)" [10 2]. Anything unreadable
// gives nil.
func typeMods(d string) []int {
	open := strings.IndexByte(d, '(')
	end := strings.LastIndexByte(d, ')')
	if open < 0 || end < open {
		return nil
	}
	var mods []int
	for _, f := range strings.Split(d[open+1:end], ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 10000 {
			return nil
		}
		mods = append(mods, n)
	}
	return mods
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

// value converts one value as the library returned it.
func (d declType) value(v any) answer.Value {
	switch v := v.(type) {
	case nil:
		return answer.Null
	case int64:
		switch {
		case d.typ == answer.Bool:
			return answer.V(answer.Bool, boolText(v != 0))
		case d.typ == answer.Float:
			return d.float(float64(v))
		}
		return answer.V(answer.Int, strconv.FormatInt(v, 10))
	case bool: // mattn/go-sqlite3 reads integers of a "boolean" column so
		return answer.V(answer.Bool, boolText(v))
	case float64:
		if d.typ == answer.Numeric && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return answer.V(answer.Numeric, strconv.FormatFloat(v, 'f', -1, 64))
		}
		return d.float(v)
	case string:
		return d.text(v)
	case []byte:
		return answer.V(answer.Bytes, string(v))
	case time.Time:
		return d.time(v)
	}
	// Neither library returns anything else.
	return answer.V(answer.Text, "")
}

// float prints a float as PostgreSQL prints the column's type: float4
// for a real (unless it is out of float4's range, which SQLite allows),
// else float8.
func (d declType) float(f float64) answer.Value {
	if d.float4 && (math.Abs(f) <= math.MaxFloat32 || math.IsInf(f, 0) || math.IsNaN(f)) {
		return answer.V(answer.Float, answer.FormatFloat(float64(float32(f)), 32))
	}
	return answer.V(answer.Float, answer.FormatFloat(f, 64))
}

// text converts stored text.
func (d declType) text(s string) answer.Value {
	switch d.typ {
	case answer.Bool:
		if b, ok := answer.ParseBool(s); ok {
			return answer.V(answer.Bool, boolText(b))
		}
	case answer.Float, answer.Numeric:
		// SQLite stores the numbers it cannot hold as text.
		if f, err := strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			if d.typ == answer.Numeric {
				return answer.V(answer.Numeric, answer.FormatFloat(f, 64))
			}
			return d.float(f)
		}
	case answer.Text:
		if d.width > 0 {
			if pad := d.width - utf8.RuneCountInString(s); pad > 0 {
				s += strings.Repeat(" ", pad)
			}
		}
		return answer.V(answer.Text, s)
	case answer.Date, answer.Time, answer.Timestamp, answer.TimestampTZ, answer.UUID:
		pg, _ := answer.PGText(d.typ, s)
		return answer.V(d.typ, pg)
	}
	if textual(d.typ) {
		return answer.V(d.typ, s)
	}
	return answer.V(answer.Text, s)
}

// time prints a time the library parsed out of a date-typed column.
func (d declType) time(t time.Time) answer.Value {
	if d.typ == answer.Time {
		return answer.V(answer.Time, t.Format("15:04:05.999999"))
	}
	typ := d.typ
	switch typ {
	case answer.Date, answer.Timestamp, answer.TimestampTZ:
	default:
		typ = answer.Timestamp
	}
	// A timestamp without time zone keeps its wall-clock time, as
	// PostgreSQL does when it reads one written with an offset.
	text := t.Format("2006-01-02 15:04:05.999999999-07:00")
	pg, _ := answer.PGText(typ, text)
	return answer.V(typ, pg)
}

// column describes result column i named name: the declared type's
// family, else that of its first non-NULL value.
func (d declType) column(name string, rows [][]answer.Value, i int) answer.Column {
	c := answer.Column{Name: name, Type: d.typ, OID: d.oid, Size: -1, Mod: -1}
	if c.Type != answer.Unknown {
		return c
	}
	for _, r := range rows {
		if !r[i].Null {
			c.Type = r[i].Type
			return c
		}
	}
	// No declared type and no value to look at (an expression over no
	// rows): only the statement text can tell, so say so and let the
	// session's analysis fill it in.
	return c
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
