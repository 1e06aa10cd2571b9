package answer

import (
	"strings"
	"time"
)

// datetime is a date, a time of day or both, as read from text by
// parseDateTime. Years are astronomical: 1 BC is year 0.
type datetime struct {
	year, month, day  int
	hour, minute, sec int
	nsec              int
	hasDate, hasTime  bool
	hasOffset         bool
	offset            int // seconds east of UTC
	infinite          int // +1 for infinity, -1 for -infinity, else 0
}

// parseDateTime reads the date and time forms PostgreSQL prints (ISO
// DateStyle: "2026-01-01 10:00:00.5+00", "0044-03-15 BC", "infinity") and
// those SQLite's date functions and the drivers write ("T" between date
// and time, "Z", offsets as ±HH, ±HHMM, ±HH:MM or ±HH:MM:SS, seconds
// optional). Fields are range-checked: "2026-02-30" is no date. It
// returns false for anything else.
func parseDateTime(s string) (dt datetime, ok bool) {
	switch {
	case strings.EqualFold(s, "infinity") || strings.EqualFold(s, "+infinity"):
		return datetime{infinite: 1}, true
	case strings.EqualFold(s, "-infinity"):
		return datetime{infinite: -1}, true
	}
	bc := false
	if rest, found := strings.CutSuffix(s, " BC"); found {
		s, bc = rest, true
	} else if rest, found := strings.CutSuffix(s, " AD"); found {
		s = rest
	}
	lead := 0
	for lead < len(s) && isDigit(s[lead]) {
		lead++
	}
	if lead >= 4 && lead < len(s) && s[lead] == '-' {
		var ok bool
		s, ok = dt.parseDate(s)
		if !ok {
			return dt, false
		}
		dt.hasDate = true
		if s != "" && (s[0] == ' ' || s[0] == 'T' || s[0] == 't') {
			s = s[1:]
			if s == "" {
				return dt, false
			}
		} else if s != "" {
			return dt, false
		}
	}
	if bc {
		if !dt.hasDate {
			return dt, false
		}
		dt.year = 1 - dt.year
	}
	if dt.hasDate && dt.day > daysIn(dt.month, dt.year) {
		return dt, false
	}
	if s != "" && isDigit(s[0]) {
		var ok bool
		if s, ok = dt.parseClock(s); !ok {
			return dt, false
		}
		dt.hasTime = true
	}
	if s != "" {
		var ok bool
		if s, ok = dt.parseOffset(s); !ok || s != "" {
			return dt, false
		}
	}
	return dt, dt.hasDate || dt.hasTime
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits reads between min and max decimal digits from the front of s.
func digits(s string, min, max int) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < max && isDigit(s[i]) {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:], i >= min
}

// parseDate reads YYYY-MM-DD (the year may have more digits).
func (dt *datetime) parseDate(s string) (string, bool) {
	var ok bool
	if dt.year, s, ok = digits(s, 4, 7); !ok || s == "" || s[0] != '-' {
		return s, false
	}
	if dt.month, s, ok = digits(s[1:], 2, 2); !ok || s == "" || s[0] != '-' {
		return s, false
	}
	if dt.day, s, ok = digits(s[1:], 2, 2); !ok {
		return s, false
	}
	// There is no year 0: 1 BC is followed by AD 1.
	if dt.year == 0 || dt.month < 1 || dt.month > 12 || dt.day < 1 || dt.day > 31 {
		return s, false
	}
	return s, true
}

// daysIn returns the number of days of month in year (proleptic
// Gregorian, astronomical years, as PostgreSQL counts).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseClock reads HH:MM[:SS[.fraction]]. A fraction of more than nine
// digits is accepted only when the digits past the ninth are zeros.
func (dt *datetime) parseClock(s string) (string, bool) {
	var ok bool
	if dt.hour, s, ok = digits(s, 2, 2); !ok || s == "" || s[0] != ':' {
		return s, false
	}
	if dt.minute, s, ok = digits(s[1:], 2, 2); !ok {
		return s, false
	}
	if s != "" && s[0] == ':' {
		if dt.sec, s, ok = digits(s[1:], 2, 2); !ok {
			return s, false
		}
		if s != "" && s[0] == '.' {
			i := 1
			scale := 100000000
			for i < len(s) && isDigit(s[i]) {
				d := int(s[i] - '0')
				if scale == 0 {
					if d != 0 {
						return s, false
					}
				} else {
					dt.nsec += d * scale
					scale /= 10
				}
				i++
			}
			if i == 1 {
				return s, false
			}
			s = s[i:]
		}
	}
	if dt.hour > 24 || dt.minute > 59 || dt.sec > 60 {
		return s, false
	}
	if dt.hour == 24 && (dt.minute != 0 || dt.sec != 0 || dt.nsec != 0) {
		return s, false
	}
	return s, true
}

// parseOffset reads a zone offset: Z, or a sign and H, HH, HHMM, HH:MM or
// HH:MM:SS, optionally after one space.
func (dt *datetime) parseOffset(s string) (string, bool) {
	if s[0] == ' ' {
		s = s[1:]
		if s == "" {
			return s, false
		}
	}
	if s == "Z" || s == "z" {
		dt.hasOffset = true
		return "", true
	}
	if s[0] != '+' && s[0] != '-' {
		return s, false
	}
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	h, s, ok := digits(s[1:], 1, 2)
	if !ok {
		return s, false
	}
	var m, sec int
	if s != "" {
		if s[0] == ':' {
			s = s[1:]
		}
		if m, s, ok = digits(s, 2, 2); !ok {
			return s, false
		}
		if s != "" && s[0] == ':' {
			if sec, s, ok = digits(s[1:], 2, 2); !ok {
				return s, false
			}
		}
	}
	if h > 15 || m > 59 || sec > 59 {
		return s, false
	}
	dt.hasOffset = true
	dt.offset = sign * (h*3600 + m*60 + sec)
	return s, true
}

// instant returns the time dt denotes, its clock read in UTC, then moved
// by its offset when utc is true (a value with time zone); a value
// without time zone keeps its wall-clock time, as PostgreSQL does with an
// offset written into a timestamp.
func (dt *datetime) instant(utc bool) time.Time {
	t := time.Date(dt.year, time.Month(dt.month), dt.day, dt.hour, dt.minute, dt.sec, dt.nsec, time.UTC)
	if utc && dt.hasOffset {
		t = t.Add(-time.Duration(dt.offset) * time.Second)
	}
	return t
}

// appendDate appends the canonical form of a date: PostgreSQL's
// "YYYY-MM-DD" (" BC" after it for years before 1), or "infinity",
// "-infinity". A time after the date is ignored, as PostgreSQL ignores it.
func appendDate(dst []byte, text string) ([]byte, bool) {
	dt, ok := parseDateTime(text)
	switch {
	case !ok:
		return dst, false
	case dt.infinite != 0:
		return appendInfinity(dst, dt.infinite), true
	case !dt.hasDate:
		return dst, false
	}
	y, m, d := dt.year, dt.month, dt.day
	return appendYMD(dst, y, m, d), true
}

// appendTime appends the canonical form of a time of day: HH:MM:SS, then
// the fraction of a second without trailing zeros. 23:59:60 is 24:00:00,
// as in PostgreSQL; an offset is ignored.
func appendTime(dst []byte, text string) ([]byte, bool) {
	dt, ok := parseDateTime(text)
	if !ok || dt.hasDate || !dt.hasTime {
		return dst, false
	}
	secs := dt.hour*3600 + dt.minute*60 + dt.sec
	if secs > 86400 || secs == 86400 && dt.nsec != 0 {
		return dst, false
	}
	dst = append2(dst, secs/3600)
	dst = append(dst, ':')
	dst = append2(dst, secs/60%60)
	dst = append(dst, ':')
	dst = append2(dst, secs%60)
	return appendFraction(dst, dt.nsec), true
}

// appendTimestamp appends the canonical form of a timestamp: the instant
// in UTC written "YYYY-MM-DD HH:MM:SS", the fraction of a second without
// trailing zeros, " BC" for years before 1; or "infinity", "-infinity".
// When tz is true the text's offset is applied (a value with time zone),
// else it is dropped. With offset true, "+00" is written after the
// seconds, as PostgreSQL prints a timestamptz in UTC.
func appendTimestamp(dst []byte, text string, tz, offset bool) ([]byte, bool) {
	dt, ok := parseDateTime(text)
	switch {
	case !ok:
		return dst, false
	case dt.infinite != 0:
		return appendInfinity(dst, dt.infinite), true
	case !dt.hasDate:
		return dst, false
	}
	return appendInstant(dst, dt.instant(tz), offset), true
}

// appendInstant writes t, read in UTC, as appendTimestamp does.
func appendInstant(dst []byte, t time.Time, offset bool) []byte {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, int(mo))
	dst = append(dst, '-')
	dst = append2(dst, d)
	dst = append(dst, ' ')
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, mi)
	dst = append(dst, ':')
	dst = append2(dst, s)
	dst = appendFraction(dst, t.Nanosecond())
	if offset {
		dst = append(dst, "+00"...)
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

func appendInfinity(dst []byte, sign int) []byte {
	if sign < 0 {
		return append(dst, "-infinity"...)
	}
	return append(dst, "infinity"...)
}

// appendYMD writes an astronomical year's date the way PostgreSQL does.
func appendYMD(dst []byte, y, m, d int) []byte {
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	dst = append2(dst, d)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendYear writes a positive year with at least four digits.
func appendYear(dst []byte, y int) []byte {
	var buf [20]byte
	i := len(buf)
	for y > 0 || i > len(buf)-4 {
		i--
		buf[i] = byte('0' + y%10)
		y /= 10
	}
	return append(dst, buf[i:]...)
}

func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// appendFraction writes "." and the nanoseconds without trailing zeros,
// nothing when they are zero.
func appendFraction(dst []byte, nsec int) []byte {
	if nsec == 0 {
		return dst
	}
	var buf [10]byte
	buf[0] = '.'
	for i := 9; i >= 1; i-- {
		buf[i] = byte('0' + nsec%10)
		nsec /= 10
	}
	n := 10
	for buf[n-1] == '0' {
		n--
	}
	return append(dst, buf[:n]...)
}
