package answer

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// Canonical domains: the first byte of a value's canonical form. Families
// that can stand for the same thing share a domain (see the package doc).
const (
	domNull   byte = 0
	domNumber byte = 'n'
	domString byte = 's'
)

// reading is how one value is to be read: its family after hints, and
// the refinements that only a column's PostgreSQL type gives.
type reading struct {
	typ    Type
	bpchar bool // character(n): trailing spaces are padding
	float4 bool // real: the value is a float32
}

// readingOf works out how to read a value of column col, refined by hint
// (either may be nil). The value's own family wins over the column's; a
// hint re-reads values the engine could only call text, and adds what
// the column is in PostgreSQL (character(n), real, with time zone).
func readingOf(v *Value, col, hint *Column) reading {
	r := reading{typ: v.Type}
	if col != nil {
		if r.typ == Unknown {
			r.typ = col.Type
		}
		r.bpchar = col.OID == OIDBPChar
		r.float4 = col.OID == OIDFloat4
	}
	if hint != nil && hint.Type != Unknown {
		switch {
		case r.typ == Text || r.typ == Unknown:
			r.typ = hint.Type
		case r.typ == Timestamp && hint.Type == TimestampTZ:
			r.typ = TimestampTZ
		}
		r.bpchar = r.bpchar || hint.OID == OIDBPChar
		r.float4 = r.float4 || hint.OID == OIDFloat4
	}
	return r
}

// AppendCanonical appends the canonical form of v, read as a value of
// column col (which gives the family when v has none, and the PostgreSQL
// type's refinements), to dst. Two values get the same bytes exactly
// when they mean the same thing under the rules of the package doc.
func AppendCanonical(dst []byte, v Value, col Column) []byte {
	return appendCanonical(dst, &v, readingOf(&v, &col, nil))
}

// appendCanonical appends a domain byte, then for non-NULL values a
// 4-byte big-endian length and the canonical payload.
func appendCanonical(dst []byte, v *Value, r reading) []byte {
	if v.Null {
		return append(dst, domNull)
	}
	text := v.Text
	start := len(dst)
	var ok bool
	switch r.typ {
	case Int, Numeric:
		dst, ok = appendDecimal(open(dst, domNumber), text)
	case Float:
		dst, ok = appendFloat(open(dst, domNumber), text, r.float4)
	case Bool:
		if b, isBool := ParseBool(text); isBool {
			digit := "0"
			if b {
				digit = "1"
			}
			dst, ok = appendDecimal(open(dst, domNumber), digit)
		}
	case Date:
		dst, ok = appendDate(open(dst, domString), text)
	case Time:
		dst, ok = appendTime(open(dst, domString), text)
	case Timestamp, TimestampTZ:
		dst, ok = appendTimestamp(open(dst, domString), text, r.typ == TimestampTZ, false)
	case UUID:
		dst, ok = appendUUID(open(dst, domString), text)
	case JSON:
		dst, ok = appendJSON(open(dst, domString), text)
	default: // Text, Bytes, Interval, Unknown
		if r.bpchar && r.typ != Bytes {
			text = strings.TrimRight(text, " ")
		}
		dst, ok = append(open(dst, domString), text...), true
	}
	if !ok {
		// Not a valid value of its family: compare the text as written.
		dst = append(open(dst[:start], domString), text...)
	}
	binary.BigEndian.PutUint32(dst[start+1:], uint32(len(dst)-start-5))
	return dst
}

// open starts a value of domain dom, leaving room for its length.
func open(dst []byte, dom byte) []byte {
	return append(dst, dom, 0, 0, 0, 0)
}

// ParseBool reads the ways engines and PostgreSQL write a boolean: t, f,
// true, false, 1, 0, yes, no, on, off, y, n (any case, surrounding spaces
// ignored).
func ParseBool(s string) (value, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) > 5 {
		return false, false
	}
	var low [5]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	switch string(low[:len(s)]) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

// appendDecimal appends the canonical form of a decimal number written in
// text: "0" for zero, else its sign, its significant digits (no leading
// or trailing zeros) and the exponent e such that the value is
// 0.digits × 10^e. NaN and ±Infinity (any case, as PostgreSQL's numeric
// and float print them) become "NaN", "+Inf", "-Inf". ok is false when
// text is no number.
func appendDecimal(dst []byte, text string) ([]byte, bool) {
	s := text
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return dst, false
	}
	if c := s[0]; c != '.' && (c < '0' || c > '9') {
		return appendSpecial(dst, text)
	}
	// Digits before and after the point, then the exponent.
	intEnd := 0
	for intEnd < len(s) && '0' <= s[intEnd] && s[intEnd] <= '9' {
		intEnd++
	}
	mant := s[:intEnd]
	frac := ""
	rest := s[intEnd:]
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		frac = rest[1:i]
		rest = rest[i:]
	}
	if mant == "" && frac == "" {
		return dst, false
	}
	exp := int64(0)
	if rest != "" {
		e, ok := parseExponent(rest)
		if !ok {
			return dst, false
		}
		exp = e
	}
	// Skip leading zeros of the integer part; if it was all zeros, skip
	// the fraction's leading zeros too, lowering the exponent.
	lead := 0
	for lead < len(mant) && mant[lead] == '0' {
		lead++
	}
	mant = mant[lead:]
	exp += int64(len(mant))
	if mant == "" {
		z := 0
		for z < len(frac) && frac[z] == '0' {
			z++
		}
		frac = frac[z:]
		exp -= int64(z)
		if frac == "" {
			return append(dst, '0'), true
		}
	}
	// Drop trailing zeros: of the fraction, and when it runs out, of the
	// integer part.
	frac = strings.TrimRight(frac, "0")
	if frac == "" {
		mant = strings.TrimRight(mant, "0")
	}
	if neg {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	dst = append(dst, mant...)
	dst = append(dst, frac...)
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, exp, 10), true
}

// parseExponent reads "e", an optional sign and up to 9 digits.
func parseExponent(s string) (int64, bool) {
	if len(s) < 2 || (s[0] != 'e' && s[0] != 'E') {
		return 0, false
	}
	s = s[1:]
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || len(s) > 9 {
		return 0, false
	}
	var e int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		e = e*10 + int64(s[i]-'0')
	}
	if neg {
		e = -e
	}
	return e, true
}

// appendSpecial appends NaN or a signed infinity written as PostgreSQL
// and Go write them.
func appendSpecial(dst []byte, text string) ([]byte, bool) {
	is := func(words ...string) bool {
		for _, w := range words {
			if strings.EqualFold(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case is("nan"):
		return append(dst, "NaN"...), true
	case is("infinity", "+infinity", "inf", "+inf"):
		return append(dst, "+Inf"...), true
	case is("-infinity", "-inf"):
		return append(dst, "-Inf"...), true
	}
	return dst, false
}

// appendFloat appends the canonical form of a binary float written in
// text: the value is read as a float64 (float32 when float4) and written
// as the shortest decimal that reads back as it at that width, so that
// engines printing more or fewer digits of the same float agree, and a
// float that is an exact decimal equals that decimal. -0 is 0.
func appendFloat(dst []byte, text string, float4 bool) ([]byte, bool) {
	bits := 64
	if float4 {
		bits = 32
	}
	f, err := strconv.ParseFloat(text, bits)
	if err != nil {
		return dst, false
	}
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...), true
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...), true
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...), true
	case f == 0:
		return append(dst, '0'), true
	}
	var buf [32]byte
	short := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	return appendDecimal(dst, string(short))
}

// CanonicalDecimal returns the shortest exact form of a decimal number
// written in text: no sign for zero, no leading zeros, no trailing
// fractional zeros, no trailing point ("007.50" → "7.5", "-0.0" → "0").
// Text that is not a plain decimal is returned unchanged.
func CanonicalDecimal(s string) string {
	neg := false
	d := s
	if d != "" && (d[0] == '-' || d[0] == '+') {
		neg = d[0] == '-'
		d = d[1:]
	}
	intPart, frac, hasPoint := strings.Cut(d, ".")
	if intPart == "" && frac == "" {
		return s
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return s
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	if hasPoint {
		frac = strings.TrimRight(frac, "0")
	}
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}
