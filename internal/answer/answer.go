package answer

import (
	"strconv"
)

// Type is the type family of a value or column. Families are coarser than
// engine types: every integer width is Int, every exact decimal Numeric.
type Type uint8

// Type families.
const (
	Unknown Type = iota // no type information; treated as text
	Bool
	Int
	Numeric
	Float
	Text
	Bytes
	Date
	Time
	Timestamp
	TimestampTZ
	UUID
	JSON
	Interval
)

var typeNames = [...]string{"unknown", "bool", "int", "numeric", "float", "text", "bytes", "date", "time", "timestamp", "timestamptz", "uuid", "json", "interval"}

// String returns the family's name.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// PostgreSQL type OIDs the wire front reports for columns and parameters.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDChar        uint32 = 18
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDOid         uint32 = 26
	OIDJSON        uint32 = 114
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDBPChar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestampTZ uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDNumeric     uint32 = 1700
	OIDUUID        uint32 = 2950
	OIDJSONB       uint32 = 3802
)

// DefaultOID is the OID reported for a family when the engine gave nothing
// more precise.
func (t Type) DefaultOID() uint32 {
	switch t {
	case Bool:
		return OIDBool
	case Int:
		return OIDInt8
	case Numeric:
		return OIDNumeric
	case Float:
		return OIDFloat8
	case Bytes:
		return OIDBytea
	case Date:
		return OIDDate
	case Time:
		return OIDTime
	case Timestamp:
		return OIDTimestamp
	case TimestampTZ:
		return OIDTimestampTZ
	case UUID:
		return OIDUUID
	case JSON:
		return OIDJSON
	case Interval:
		return OIDInterval
	default:
		return OIDText
	}
}

// TypeOfOID returns the family of a PostgreSQL type OID (Unknown for OIDs
// shepherd does not know, which are then handled as text).
func TypeOfOID(oid uint32) Type {
	switch oid {
	case OIDBool:
		return Bool
	case OIDInt2, OIDInt4, OIDInt8, OIDOid:
		return Int
	case OIDNumeric:
		return Numeric
	case OIDFloat4, OIDFloat8:
		return Float
	case OIDText, OIDVarchar, OIDBPChar, OIDName, OIDChar, OIDUnknown:
		return Text
	case OIDBytea:
		return Bytes
	case OIDDate:
		return Date
	case OIDTime:
		return Time
	case OIDTimestamp:
		return Timestamp
	case OIDTimestampTZ:
		return TimestampTZ
	case OIDUUID:
		return UUID
	case OIDJSON, OIDJSONB:
		return JSON
	case OIDInterval:
		return Interval
	}
	return Unknown
}

// Column describes one result column.
type Column struct {
	Name string
	Type Type
	// OID is the PostgreSQL type the client is told; 0 means Type.DefaultOID().
	OID uint32
	// Size is the pg_type.typlen the client is told (-1 variable).
	Size int16
	// Mod is the type modifier (atttypmod), -1 when none.
	Mod int32
}

// TypeOID returns the OID to report for the column.
func (c Column) TypeOID() uint32 {
	if c.OID != 0 {
		return c.OID
	}
	return c.Type.DefaultOID()
}

// Value is one field of a row: NULL, or the value written the way
// PostgreSQL prints it in text format (bytea as raw bytes, not hex;
// timestamptz in UTC with "+00"; booleans as "t"/"f").
type Value struct {
	Null bool
	// Type is the family of this value; it may be more precise than the
	// column's (SQLite columns have no fixed type). Unknown means "the
	// column's type".
	Type Type
	Text string
}

// Null is the NULL value.
var Null = Value{Null: true}

// V returns a non-NULL value of family t.
func V(t Type, text string) Value { return Value{Type: t, Text: text} }

// Answer is the result of one successful statement on one replica.
type Answer struct {
	// Columns is nil for a statement that returns no rows.
	Columns []Column
	Rows    [][]Value
	// Tag is the PostgreSQL command tag ("SELECT 2", "INSERT 0 1", "BEGIN").
	Tag string
	// RowsAffected is the number of rows changed (or returned, for SELECT).
	RowsAffected int64
	// Binary asks for the rows in binary format in the simple protocol
	// (a FETCH from a BINARY cursor); the extended protocol sends the
	// formats Bind asked for, whatever this says.
	Binary bool
	// More, when not nil, holds the rows that follow Rows, spilled to
	// disk (see Spool): only an answer that goes to the client as it is
	// carries it. Whoever takes such an answer reads More to the end or
	// closes it.
	More *Spilled
}

// RowCount returns the number of rows a holds, spilled ones included.
func (a *Answer) RowCount() int64 {
	n := int64(len(a.Rows))
	if a.More != nil {
		n += a.More.Len()
	}
	return n
}

// Tag returns the PostgreSQL command tag for verb with n rows.
func Tag(verb string, n int64) string {
	switch verb {
	case "INSERT":
		return "INSERT 0 " + strconv.FormatInt(n, 10)
	case "SELECT", "UPDATE", "DELETE", "MERGE", "FETCH", "MOVE", "COPY":
		return verb + " " + strconv.FormatInt(n, 10)
	}
	return verb
}
