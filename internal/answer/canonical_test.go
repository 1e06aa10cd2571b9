package answer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// repr is one way an engine hands over a value: the value (with its own
// family, or Unknown), the column it came in, and an optional hint.
type repr struct {
	v    Value
	col  Column
	hint *Column
}

func (r repr) String() string {
	s := fmt.Sprintf("%v(%q) in %v/%d", r.v.Type, r.v.Text, r.col.Type, r.col.OID)
	if r.v.Null {
		s = "NULL in " + r.col.Type.String()
	}
	if r.hint != nil {
		s += fmt.Sprintf(" hint %v/%d", r.hint.Type, r.hint.OID)
	}
	return s
}

func (r repr) canon() []byte {
	return appendCanonical(nil, &r.v, readingOf(&r.v, &r.col, r.hint))
}

// col returns a column of family t (OID: the family's default).
func col(t Type) Column { return Column{Type: t} }

// colOID returns a column of PostgreSQL type oid.
func colOID(oid uint32) Column { return Column{Type: TypeOfOID(oid), OID: oid} }

// val is a value of family t in a column of the same family.
func val(t Type, text string) repr { return repr{v: V(t, text), col: col(t)} }

// pg is a value as the postgres driver gives it: no family of its own, in
// a column of PostgreSQL type oid.
func pg(oid uint32, text string) repr { return repr{v: Value{Text: text}, col: colOID(oid)} }

// hinted is a text value (SQLite, no declared type) read with a hint.
func hinted(text string, h Column) repr {
	return repr{v: V(Text, text), col: col(Unknown), hint: &h}
}

func TestCanonicalEqual(t *testing.T) {
	groups := map[string][]repr{
		"integers of any width": {pg(OIDInt2, "7"), pg(OIDInt4, "7"), pg(OIDInt8, "7"), val(Int, "+7"), val(Int, "007")},
		"decimal scale ignored": {pg(OIDNumeric, "1.50"), val(Numeric, "1.5"), val(Numeric, "1.500000000000000000000000000000"), val(Float, "1.5")},
		"integral decimal":      {pg(OIDNumeric, "3.00"), val(Int, "3"), val(Float, "3"), val(Numeric, "3.000000000000000000000000000000"), pg(OIDFloat8, "3")},
		"zero":                  {val(Int, "0"), val(Numeric, "-0.00"), pg(OIDFloat8, "-0"), val(Float, "0"), val(Bool, "f"), pg(OIDBool, "false")},
		"one and true":          {pg(OIDBool, "t"), val(Bool, "true"), val(Int, "1"), val(Bool, "1"), val(Numeric, "1.0"), val(Bool, "yes")},
		"float exponent":        {pg(OIDFloat8, "1e+20"), val(Float, "1e20"), val(Float, "100000000000000000000"), val(Numeric, "100000000000000000000.00")},
		"small float":           {pg(OIDFloat8, "1e-05"), val(Float, "0.00001"), val(Numeric, "0.0000100")},
		"float digits":          {pg(OIDFloat8, "0.30000000000000004"), val(Float, "0.300000000000000044408920985006")},
		"float4":                {pg(OIDFloat4, "0.1"), repr{v: V(Float, "0.10000000149011612"), col: colOID(OIDFloat4)}, val(Float, "0.1"), val(Numeric, "0.1")},
		"float4 hint rounds":    {pg(OIDFloat4, "3.1415927"), repr{v: V(Float, "3.14159265"), col: col(Float), hint: &Column{Type: Float, OID: OIDFloat4}}},
		"NaN":                   {pg(OIDFloat8, "NaN"), pg(OIDNumeric, "NaN"), val(Float, "nan")},
		"infinity":              {pg(OIDFloat4, "Infinity"), pg(OIDNumeric, "Infinity"), val(Float, "+Inf")},
		"-infinity":             {pg(OIDFloat8, "-Infinity"), val(Float, "-inf")},
		"bpchar padding":        {pg(OIDBPChar, "ab   "), pg(OIDBPChar, "ab"), repr{v: V(Text, "ab  "), col: col(Text), hint: &Column{Type: Text, OID: OIDBPChar}}, val(Text, "ab")},
		"text and bytes":        {pg(OIDText, "abc"), pg(OIDBytea, "abc"), val(Bytes, "abc")},
		"invalid utf-8":         {pg(OIDBytea, "\xff\x00"), val(Text, "\xff\x00")},
		"uuid case":             {pg(OIDUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), val(UUID, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), val(UUID, "{a0eebc999c0b4ef8bb6d6bb9bd380a11}"), pg(OIDBPChar, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), hinted("A0EEBC99-9c0b-4ef8-bb6d-6bb9bd380a11", col(UUID))},
		"jsonb and json text": {
			pg(OIDJSONB, `{"a": [1, 2.0, 100], "b": {"c": null, "d": "x"}}`),
			pg(OIDJSON, `{ "b" : {"d":"x","c":null}, "a":[1,2,1e2] }`),
			val(JSON, `{"a":[1.0,2.00,1E+2],"b":{"c":null,"d":"\u0078"}, "a": [1, 2, 100]}`),
			hinted(`{"b":{"d":"x","c":null},"a":[1,2,100]}`, col(JSON)),
		},
		"json strings": {val(JSON, `"caf\u00e9 \/ \u00e9 \ud83d\ude00"`), val(JSON, `"café / é 😀"`)},
		"timestamp instants": {
			pg(OIDTimestampTZ, "2026-01-01 10:00:00.5+00"),
			val(Timestamp, "2026-01-01 10:00:00.500000"),
			val(TimestampTZ, "2026-01-01 12:00:00.5+02"),
			val(TimestampTZ, "2026-01-01T12:00:00.5+02:00"),
			val(TimestampTZ, "2026-01-01T10:00:00.5Z"),
			val(TimestampTZ, "2026-01-01 04:30:00.5-05:30"),
			pg(OIDTimestamp, "2026-01-01 10:00:00.5"),
			val(Timestamp, "2026-01-01 10:00:00.5+07"), // no time zone: the offset is dropped
			hinted("2026-01-01 11:00:00.50+01", col(TimestampTZ)),
			hinted("2026-01-01 10:00:00.5", col(Timestamp)),
			{v: V(Timestamp, "2026-01-01 12:00:00.5+02"), col: col(Timestamp), hint: &Column{Type: TimestampTZ}},
		},
		"timestamp midnight":   {pg(OIDTimestamp, "2026-01-01 00:00:00"), val(Timestamp, "2026-01-01"), val(Timestamp, "2026-01-01 00:00"), val(TimestampTZ, "2026-01-01 01:00:00+01")},
		"timestamp 24:00":      {pg(OIDTimestamp, "2026-01-02 00:00:00"), val(Timestamp, "2026-01-01 24:00:00"), val(Timestamp, "2026-01-01 23:59:60")},
		"timestamp day change": {pg(OIDTimestampTZ, "2025-12-31 23:30:00+00"), val(TimestampTZ, "2026-01-01 01:30:00+02")},
		"timestamp BC":         {pg(OIDTimestampTZ, "0044-03-15 10:00:00+00 BC"), pg(OIDTimestamp, "0044-03-15 10:00:00 BC"), val(TimestampTZ, "0044-03-15 11:00:00+01 BC")},
		"infinity timestamps":  {pg(OIDTimestamp, "infinity"), pg(OIDTimestampTZ, "infinity"), pg(OIDDate, "infinity"), val(Timestamp, "Infinity"), val(Date, "+infinity"), pg(OIDText, "infinity")},
		"-infinity timestamps": {pg(OIDTimestamp, "-infinity"), val(Date, "-INFINITY")},
		"dates":                {pg(OIDDate, "2026-01-01"), val(Date, "2026-01-01 10:00:00"), pg(OIDText, "2026-01-01")},
		"date BC":              {pg(OIDDate, "0001-02-29 BC"), val(Date, "0001-02-29 BC")},
		"big year":             {pg(OIDDate, "10000-01-01"), val(Date, "10000-01-01")},
		"times":                {pg(OIDTime, "10:00:00.5"), val(Time, "10:00:00.500000"), val(Time, "10:00:00.5"), hinted("10:00:00.50", col(Time))},
		"time minutes":         {pg(OIDTime, "10:00:00"), val(Time, "10:00")},
		"time 24:00":           {pg(OIDTime, "24:00:00"), val(Time, "23:59:60")},
		"hint reads numbers":   {pg(OIDInt4, "5"), hinted("5", col(Int)), hinted("5.0", col(Numeric))},
	}
	for name, reprs := range groups {
		want := reprs[0].canon()
		for _, r := range reprs[1:] {
			if got := r.canon(); !bytes.Equal(got, want) {
				t.Errorf("%s: %v -> %q, but %v -> %q", name, reprs[0], want, r, got)
			}
		}
	}
}

func TestCanonicalDifferent(t *testing.T) {
	pairs := [][2]repr{
		{val(Numeric, "1.5"), val(Numeric, "1.49")},
		{val(Numeric, "1.5"), val(Numeric, "15")},
		{val(Numeric, "-1.5"), val(Numeric, "1.5")},
		{val(Int, "10"), val(Int, "1")},
		{val(Int, "100"), val(Numeric, "100.0000000000000000000001")},
		{pg(OIDFloat8, "0.1"), pg(OIDFloat8, "0.10000000000000002")},
		{pg(OIDFloat8, "0.30000000000000004"), pg(OIDNumeric, "0.3")},
		{pg(OIDFloat4, "3.1415927"), val(Float, "3.14159")},
		{pg(OIDFloat8, "NaN"), pg(OIDFloat8, "Infinity")},
		{pg(OIDFloat8, "Infinity"), pg(OIDFloat8, "-Infinity")},
		{pg(OIDBool, "t"), pg(OIDBool, "f")},
		{pg(OIDInt4, "1"), pg(OIDText, "1")},
		{pg(OIDBool, "t"), pg(OIDText, "t")},
		{pg(OIDText, "ab"), pg(OIDText, "ab ")},
		{pg(OIDVarchar, "ab"), pg(OIDVarchar, "ab ")},
		{pg(OIDBPChar, "ab"), pg(OIDBPChar, " ab")},
		{pg(OIDBytea, "ab "), pg(OIDBytea, "ab")},
		{pg(OIDText, ""), {v: Null, col: col(Text)}},
		{pg(OIDText, "NULL"), {v: Null, col: col(Text)}},
		{pg(OIDText, "NULL"), pg(OIDText, "")},
		{pg(OIDInt4, "0"), {v: Null, col: col(Int)}},
		{pg(OIDText, "\xff"), pg(OIDText, "\uFFFD")},
		{pg(OIDText, "e\u0301"), pg(OIDText, "\u00e9")},
		{pg(OIDUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), pg(OIDUUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12")},
		{pg(OIDJSONB, `{"a": 1}`), pg(OIDJSONB, `{"a": "1"}`)},
		{pg(OIDJSONB, `{"a": 1}`), pg(OIDJSONB, `{"a": 1.5}`)},
		{pg(OIDJSONB, `[1, 2]`), pg(OIDJSONB, `[2, 1]`)},
		{pg(OIDJSONB, `{"a": 1}`), pg(OIDText, `{"a": 1}`)},
		{pg(OIDJSONB, `null`), {v: Null, col: col(JSON)}},
		{pg(OIDTimestamp, "2026-01-01 10:00:00.5"), pg(OIDTimestamp, "2026-01-01 10:00:00.500001")},
		{pg(OIDTimestamp, "2026-01-01 10:00:00"), pg(OIDTimestamp, "2026-01-01 10:00:00 BC")},
		{pg(OIDTimestampTZ, "2026-01-01 10:00:00+00"), val(TimestampTZ, "2026-01-01 10:00:00+01")},
		{pg(OIDTimestamp, "infinity"), pg(OIDTimestamp, "-infinity")},
		{pg(OIDDate, "2026-01-01"), pg(OIDTimestamp, "2026-01-01 00:00:00")},
		{val(Date, "2026-02-30"), val(Date, "2026-03-02")},
		{pg(OIDTime, "10:00:00"), pg(OIDTime, "10:00:00.000001")},
		{pg(OIDTime, "00:00:00"), pg(OIDTime, "24:00:00")},
		{hinted("2026-01-01 10:00:00+02", col(Text)), pg(OIDTimestampTZ, "2026-01-01 08:00:00+00")},
	}
	for _, p := range pairs {
		if a, b := p[0].canon(), p[1].canon(); bytes.Equal(a, b) {
			t.Errorf("%v and %v both -> %q", p[0], p[1], a)
		}
	}
}

// TestCanonicalFallback: a value that is not valid for its family is
// compared as its text, so it can still only equal the same text.
func TestCanonicalFallback(t *testing.T) {
	for _, r := range []repr{
		val(Int, "abc"), val(Numeric, "1.2.3"), val(Numeric, "1e"), val(Float, "x"), val(Bool, "maybe"),
		val(Date, "2026-13-01"), val(Date, "0000-01-01"), val(Time, "25:00:00"), val(Timestamp, "2026-01-01 10:00:00+25"),
		val(UUID, "a0eebc99"), val(JSON, `{"a":}`), val(JSON, strings.Repeat("[", 1000)+strings.Repeat("]", 1000)),
		val(JSON, `{"a":1} x`), val(JSON, `"\ud800"`), val(Time, "10:00:00.1234567891"),
	} {
		want := pg(OIDText, r.v.Text).canon()
		if got := r.canon(); !bytes.Equal(got, want) {
			t.Errorf("%v -> %q, want its text %q", r, got, want)
		}
	}
}

func TestPGText(t *testing.T) {
	cases := []struct {
		typ      Type
		in, want string
		ok       bool
	}{
		{Bool, "1", "t", true},
		{Bool, "FALSE", "f", true},
		{Bool, "2", "2", false},
		{Date, "2026-01-01 00:00:00", "2026-01-01", true},
		{Date, "0044-03-15 BC", "0044-03-15 BC", true},
		{Time, "10:00:00.500", "10:00:00.5", true},
		{Time, "10:00", "10:00:00", true},
		{Timestamp, "2026-01-01T10:00:00Z", "2026-01-01 10:00:00", true},
		{Timestamp, "2026-01-01 12:00:00.5+02", "2026-01-01 12:00:00.5", true},
		{TimestampTZ, "2026-01-01 12:00:00.5+02", "2026-01-01 10:00:00.5+00", true},
		{TimestampTZ, "0044-03-15 10:00:00 BC", "0044-03-15 10:00:00+00 BC", true},
		{TimestampTZ, "infinity", "infinity", true},
		{TimestampTZ, "noon", "noon", false},
		{UUID, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", true},
		{Float, "1e20", "1e+20", true},
		{Numeric, "1.50", "1.50", true},
		{Numeric, "x", "x", false},
		{Text, "ab  ", "ab  ", true},
	}
	for _, c := range cases {
		got, ok := PGText(c.typ, c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("PGText(%v, %q) = %q, %v; want %q, %v", c.typ, c.in, got, ok, c.want, c.ok)
		}
	}
}
