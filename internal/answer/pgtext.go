package answer

import "strconv"

// PGText rewrites text, a value of family t written in any form the
// canonical reader of that family accepts (see the package doc), the way
// PostgreSQL prints such a value with DateStyle ISO and TimeZone UTC:
// booleans "t"/"f", dates "2026-01-01", times "10:00:00.5", timestamps
// "2026-01-01 10:00:00.5" (an offset in the text dropped), timestamps
// with time zone in UTC ("2026-01-01 10:00:00.5+00"), UUIDs in lower
// case, floats as float8. Drivers of engines that keep such values as
// text use it to answer as PostgreSQL would. ok is false, and text is
// returned unchanged, when text is not a value of t. Other families are
// returned unchanged (numbers after a check that they are numbers).
func PGText(t Type, text string) (string, bool) {
	var buf [64]byte
	var out []byte
	ok := true
	switch t {
	case Bool:
		b, isBool := ParseBool(text)
		switch {
		case !isBool:
			return text, false
		case b:
			return "t", true
		default:
			return "f", true
		}
	case Int, Numeric:
		_, ok = appendDecimal(buf[:0], text)
		return text, ok
	case Float:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return text, false
		}
		return FormatFloat(f, 64), true
	case Date:
		out, ok = appendDate(buf[:0], text)
	case Time:
		out, ok = appendTime(buf[:0], text)
	case Timestamp:
		out, ok = appendTimestamp(buf[:0], text, false, false)
	case TimestampTZ:
		out, ok = appendTimestamp(buf[:0], text, true, true)
	case UUID:
		out, ok = appendUUID(buf[:0], text)
	default:
		return text, true
	}
	if !ok {
		return text, false
	}
	if string(out) == text {
		return text, true
	}
	return string(out), true
}
