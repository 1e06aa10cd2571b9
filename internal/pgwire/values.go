package pgwire

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Wire format codes.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// pgtypeValues makes, for each type converted through pgtype, a fresh
// pgtype value to scan into. The wrapper types (pgtype.Date rather than
// time.Time, pgtype.Numeric rather than a float) are chosen because they
// keep what plain Go types lose: infinite dates and timestamps, numeric NaN
// and infinities, the exact digits of a numeric.
var pgtypeValues = map[uint32]func() any{
	answer.OIDBool:        func() any { return new(pgtype.Bool) },
	answer.OIDInt2:        func() any { return new(pgtype.Int2) },
	answer.OIDInt4:        func() any { return new(pgtype.Int4) },
	answer.OIDInt8:        func() any { return new(pgtype.Int8) },
	answer.OIDOid:         func() any { return new(pgtype.Uint32) },
	answer.OIDNumeric:     func() any { return new(pgtype.Numeric) },
	answer.OIDFloat4:      func() any { return new(pgtype.Float4) },
	answer.OIDFloat8:      func() any { return new(pgtype.Float8) },
	answer.OIDDate:        func() any { return new(pgtype.Date) },
	answer.OIDTime:        func() any { return new(pgtype.Time) },
	answer.OIDTimestamp:   func() any { return new(pgtype.Timestamp) },
	answer.OIDTimestampTZ: func() any { return new(pgtype.Timestamptz) },
	answer.OIDInterval:    func() any { return new(pgtype.Interval) },
	answer.OIDUUID:        func() any { return new(pgtype.UUID) },
}

// isTextLike reports whether the binary form of type oid is its text form
// itself (character types and json). These need no codec: going through
// pgtype would only risk reformatting the text (its json codec re-encodes
// documents).
func isTextLike(oid uint32) bool {
	switch oid {
	case answer.OIDText, answer.OIDVarchar, answer.OIDBPChar, answer.OIDName,
		answer.OIDChar, answer.OIDUnknown, answer.OIDJSON, oidVoid:
		return true
	}
	return false
}

// oidVoid is the type of functions that return nothing: its text and
// binary forms are both empty.
const oidVoid = 2278

// jsonbVersion is the first byte of jsonb's binary form: the format version
// followed by the document as text.
const jsonbVersion = 1

// typeMap returns the connection's pgtype.Map, which is not safe for
// concurrent use and so belongs to one connection.
func (c *conn) typeMap() *pgtype.Map {
	if c.types == nil {
		c.types = pgtype.NewMap()
	}
	return c.types
}

// encodeResult returns the wire form of v, in a column of type oid, in the
// given format; nil stands for NULL.
func (c *conn) encodeResult(oid uint32, format int16, v answer.Value) ([]byte, error) {
	if v.Null {
		return nil, nil
	}
	raw := v.Type == answer.Bytes || (v.Type == answer.Unknown && oid == answer.OIDBytea)
	if format == formatText {
		if raw {
			return byteaHex(v.Text), nil
		}
		return []byte(v.Text), nil
	}
	if oid == answer.OIDBytea {
		return []byte(v.Text), nil
	}
	text := v.Text
	if raw {
		text = string(byteaHex(text))
	}
	return c.textToBinary(oid, text)
}

// textToBinary converts the text form of a value of type oid to its binary
// form.
func (c *conn) textToBinary(oid uint32, text string) ([]byte, error) {
	switch {
	case isTextLike(oid):
		return []byte(text), nil
	case oid == answer.OIDJSONB:
		return append([]byte{jsonbVersion}, text...), nil
	}
	m := c.typeMap()
	if newValue, ok := pgtypeValues[oid]; ok {
		v := newValue()
		if err := m.Scan(oid, pgtype.TextFormatCode, []byte(text), v); err != nil {
			return nil, c.invalidText(oid, text)
		}
		return c.encodeBinary(oid, v)
	}
	t, ok := m.TypeForOID(oid)
	if !ok {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "binary format is not supported for type %d", oid)
	}
	v, err := t.Codec.DecodeValue(m, oid, pgtype.TextFormatCode, []byte(text))
	if err != nil {
		return nil, c.invalidText(oid, text)
	}
	return c.encodeBinary(oid, v)
}

func (c *conn) encodeBinary(oid uint32, v any) ([]byte, error) {
	b, err := c.typeMap().Encode(oid, pgtype.BinaryFormatCode, v, nil)
	if err != nil {
		return nil, pgerr.Wrap(pgerr.InvalidTextRepresentation, err, "cannot encode value in binary for type "+c.typeName(oid))
	}
	return b, nil
}

func (c *conn) invalidText(oid uint32, text string) error {
	const maxShown = 64
	if len(text) > maxShown {
		text = text[:maxShown] + "..."
	}
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", c.typeName(oid), text)
}

func (c *conn) typeName(oid uint32) string {
	if t, ok := c.typeMap().TypeForOID(oid); ok {
		return t.Name
	}
	return "oid " + strconv.FormatUint(uint64(oid), 10)
}

// decodeParam turns one Bind parameter of type oid into PostgreSQL text
// form (bytea as raw bytes).
func (c *conn) decodeParam(oid uint32, format int16, data []byte) (Param, error) {
	if data == nil {
		return Param{Null: true, OID: oid}, nil
	}
	var text string
	var err error
	switch {
	case format == formatBinary:
		text, err = c.binaryToText(oid, data)
	case oid == answer.OIDBytea:
		text, err = decodeByteaText(string(data))
	default:
		text, err = readTextParam(oid, string(data))
	}
	if err != nil {
		return Param{}, err
	}
	return Param{OID: oid, Text: text}, nil
}

// binaryToText converts the binary form of a parameter of type oid to its
// text form.
func (c *conn) binaryToText(oid uint32, data []byte) (string, error) {
	switch {
	case isTextLike(oid), oid == answer.OIDBytea:
		return string(data), nil
	case oid == answer.OIDJSONB:
		if len(data) == 0 || data[0] != jsonbVersion {
			return "", pgerr.New(pgerr.ProtocolViolation, "unsupported jsonb version in binary parameter")
		}
		return string(data[1:]), nil
	}
	m := c.typeMap()
	var v any
	if newValue, ok := pgtypeValues[oid]; ok {
		v = newValue()
		if err := m.Scan(oid, pgtype.BinaryFormatCode, data, v); err != nil {
			return "", c.invalidBinary(oid, err)
		}
	} else {
		t, ok := m.TypeForOID(oid)
		if !ok {
			return "", pgerr.New(pgerr.FeatureNotSupported, "binary format is not supported for parameters of type %d", oid)
		}
		var err error
		if v, err = t.Codec.DecodeValue(m, oid, pgtype.BinaryFormatCode, data); err != nil {
			return "", c.invalidBinary(oid, err)
		}
	}
	return c.canonicalText(oid, v)
}

func (c *conn) invalidBinary(oid uint32, err error) error {
	return pgerr.Wrap(pgerr.ProtocolViolation, err, "invalid binary parameter of type "+c.typeName(oid))
}

// canonicalText writes v, decoded from a binary parameter, the way
// PostgreSQL prints it where pgtype's text form differs: floats (pgtype
// never uses an exponent), timestamptz (pgtype writes "Z" for UTC where
// PostgreSQL writes "+00") and time (pgtype always writes six decimals).
func (c *conn) canonicalText(oid uint32, v any) (string, error) {
	switch x := v.(type) {
	case *pgtype.Float8:
		return answer.FormatFloat(x.Float64, 64), nil
	case *pgtype.Float4:
		return answer.FormatFloat(float64(x.Float32), 32), nil
	}
	b, err := c.typeMap().Encode(oid, pgtype.TextFormatCode, v, nil)
	if err != nil {
		return "", pgerr.Wrap(pgerr.ProtocolViolation, err, "cannot convert binary parameter of type "+c.typeName(oid))
	}
	s := string(b)
	switch oid {
	case answer.OIDTimestampTZ:
		if rest, ok := strings.CutSuffix(s, "Z"); ok {
			s = rest + "+00"
		}
	case answer.OIDTime:
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
	}
	return s, nil
}

// byteaHex writes raw bytes in bytea's text form, "\x" and hex digits.
func byteaHex(raw string) []byte {
	out := make([]byte, 2+hex.EncodedLen(len(raw)))
	out[0], out[1] = '\\', 'x'
	hex.Encode(out[2:], []byte(raw))
	return out
}

// decodeByteaText decodes bytea's text input forms into raw bytes (see
// answer.ParseBytea); pgtype reads only the hex form.
func decodeByteaText(s string) (string, error) {
	if raw, ok := answer.ParseBytea(s); ok {
		return raw, nil
	}
	if strings.HasPrefix(s, `\x`) {
		return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid hexadecimal data for type bytea")
	}
	return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
}

// normaliseFormats expands a Bind's format codes to one per value (n
// values): none means all text, one applies to all. nil is returned for
// "all text".
func normaliseFormats(codes []int16, n int, what string) ([]int16, error) {
	for _, f := range codes {
		if f != formatText && f != formatBinary {
			return nil, pgerr.New(pgerr.ProtocolViolation, "unsupported format code: %d", f)
		}
	}
	switch {
	case len(codes) == 0:
		return nil, nil
	case len(codes) == 1:
		out := make([]int16, n)
		for i := range out {
			out[i] = codes[0]
		}
		return out, nil
	case len(codes) == n:
		return append([]int16(nil), codes...), nil
	}
	if what == "result" {
		return nil, pgerr.New(pgerr.ProtocolViolation, "bind message has %d result formats but query has %d columns", len(codes), n)
	}
	return nil, pgerr.New(pgerr.ProtocolViolation, "bind message has %d %s formats but %d %ss", len(codes), what, n, what)
}

// formatAt returns the i-th code of a normalised format list.
func formatAt(formats []int16, i int) int16 {
	if i < len(formats) {
		return formats[i]
	}
	return formatText
}

// rowDescription describes cols, with the given (normalised) formats.
func rowDescription(cols []answer.Column, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		oid := col.TypeOID()
		fields[i] = pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  oid,
			DataTypeSize: typeSize(oid, col.Size),
			TypeModifier: typeModifier(col.Mod),
			Format:       formatAt(formats, i),
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// typeSize returns the typlen to report: the column's own, or, when it left
// it zero (which no type has), the size PostgreSQL gives the type.
func typeSize(oid uint32, size int16) int16 {
	if size != 0 {
		return size
	}
	switch oid {
	case answer.OIDBool, answer.OIDChar:
		return 1
	case answer.OIDInt2:
		return 2
	case answer.OIDInt4, answer.OIDOid, answer.OIDFloat4, answer.OIDDate:
		return 4
	case answer.OIDInt8, answer.OIDFloat8, answer.OIDTime, answer.OIDTimestamp, answer.OIDTimestampTZ:
		return 8
	case answer.OIDUUID, answer.OIDInterval:
		return 16
	case answer.OIDName:
		return 64
	}
	return -1
}

// typeModifier returns the typmod to report. A column that left Mod zero
// is taken to mean "none" (-1): answer.Column documents -1 for none, but a
// driver that never sets Mod leaves it zero. The price is that a real
// typmod 0 (timestamp(0)) is reported as -1.
func typeModifier(mod int32) int32 {
	if mod == 0 {
		return -1
	}
	return mod
}

// dataRow encodes row with one column type and format per value.
// The row returned is the connection's own, valid until the next call:
// callers send it at once. Text values are not copied (the row only
// lends them to the encoder, which copies them into the output).
func (c *conn) dataRow(oids []uint32, formats []int16, row []answer.Value) (*pgproto3.DataRow, error) {
	if len(row) != len(oids) {
		return nil, pgerr.New(pgerr.InternalError, "result row has %d values but %d columns", len(row), len(oids))
	}
	values := c.row.Values[:0]
	for i, v := range row {
		format := formatAt(formats, i)
		if format == formatText && !v.Null && v.Type != answer.Bytes && (v.Type != answer.Unknown || oids[i] != answer.OIDBytea) {
			// encodeResult's text case, without the copy. Not nil,
			// which would be NULL.
			b := emptyValue
			if v.Text != "" {
				b = unsafe.Slice(unsafe.StringData(v.Text), len(v.Text))
			}
			values = append(values, b)
			continue
		}
		b, err := c.encodeResult(oids[i], format, v)
		if err != nil {
			return nil, err
		}
		values = append(values, b)
	}
	clear(values[len(values):cap(values)]) // earlier rows' values go unreferenced
	c.row.Values = values
	return &c.row, nil
}

// emptyValue is a value of no bytes (nil is NULL).
var emptyValue = []byte{}

func columnOIDs(cols []answer.Column) []uint32 {
	oids := make([]uint32, len(cols))
	for i, col := range cols {
		oids[i] = col.TypeOID()
	}
	return oids
}

// TextParam reads a parameter of type oid given as text, as a Bind in
// text format gives it (SQL EXECUTE's arguments are read so too), into
// the form the Session receives (bytea as raw bytes).
func TextParam(oid uint32, text string) (string, error) {
	if oid == answer.OIDBytea {
		return decodeByteaText(text)
	}
	return readTextParam(oid, text)
}

// readTextParam reads a text parameter of a type whose input shepherd
// checks and rewrites before any replica sees it, as PostgreSQL reads it
// at Bind: dates and times (a zone suffix after a date, as pgjdbc sends
// it, offsets, rounding to microseconds) and UUIDs (upper case, braces,
// hyphens or none) become the text PostgreSQL prints for the value, so
// every engine stores and compares the same thing; text PostgreSQL would
// refuse fails here with its error. Other types pass unchanged.
func readTextParam(oid uint32, text string) (string, error) {
	var t answer.Type
	switch oid {
	case answer.OIDDate:
		t = answer.Date
	case answer.OIDTime:
		t = answer.Time
	case answer.OIDTimestamp:
		t = answer.Timestamp
	case answer.OIDTimestampTZ:
		t = answer.TimestampTZ
	case answer.OIDInt2, answer.OIDInt4, answer.OIDInt8:
		// As PostgreSQL's int2in/int4in/int8in read it: an engine would
		// store text it cannot read as text (SQLite) or as 0.
		names := map[uint32]string{answer.OIDInt2: "smallint", answer.OIDInt4: "integer", answer.OIDInt8: "bigint"}
		bits := map[uint32]int{answer.OIDInt2: 16, answer.OIDInt4: 32, answer.OIDInt8: 64}
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, bits[oid])
		switch {
		case errors.Is(err, strconv.ErrRange):
			return "", pgerr.New(pgerr.NumericValueOutOfRange, "value %s is out of range for type %s", quoteInput(text), names[oid])
		case err != nil:
			return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: %s", names[oid], quoteInput(text))
		}
		return strconv.FormatInt(n, 10), nil
	case answer.OIDUUID:
		v, ok := answer.PGText(answer.UUID, text)
		if !ok {
			return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %s", quoteInput(text))
		}
		return v, nil
	default:
		return text, nil
	}
	v, fault := answer.ParseTimeInput(t, text)
	return v, timeInputError(oid, text, fault)
}

// timeInputError is PostgreSQL's error for text refused as input of the
// date or time type oid (nil for answer.TimeInputOK).
func timeInputError(oid uint32, text string, fault answer.TimeInputFault) error {
	name := map[uint32]string{
		answer.OIDDate:        "date",
		answer.OIDTime:        "time",
		answer.OIDTimestamp:   "timestamp",
		answer.OIDTimestampTZ: "timestamp with time zone",
	}[oid]
	switch fault {
	case answer.TimeInputOK:
		return nil
	case answer.TimeInputRange:
		return pgerr.New(pgerr.DatetimeFieldOverflow, "date/time field value out of range: %s", quoteInput(text))
	case answer.TimeInputZone:
		return pgerr.New(pgerr.InvalidTimeZoneDisplacement, "time zone displacement out of range: %s", quoteInput(text))
	case answer.TimeInputClock:
		return pgerr.New(pgerr.FeatureNotSupported,
			"shepherd does not read %s input %s: its value depends on the clock; use now() or current_date", name, quoteInput(text))
	}
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %s", name, quoteInput(text))
}

// quoteInput quotes an input text as PostgreSQL does in its errors, cut
// short when long.
func quoteInput(text string) string {
	const maxShown = 64
	if len(text) > maxShown {
		text = text[:maxShown] + "..."
	}
	return `"` + text + `"`
}
