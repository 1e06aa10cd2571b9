package answer

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeInputFault says why ParseTimeInput did not accept a text.
type TimeInputFault int

const (
	// TimeInputOK: the text was read.
	TimeInputOK TimeInputFault = iota
	// TimeInputSyntax: not a value of the type (PostgreSQL 22007,
	// invalid input syntax), or a form shepherd does not read.
	TimeInputSyntax
	// TimeInputRange: written as a date or time, with a field out of range
	// (PostgreSQL 22008, "2024-02-30", "25:00").
	TimeInputRange
	// TimeInputZone: an offset beyond ±15:59 (PostgreSQL 22009).
	TimeInputZone
	// TimeInputClock: a word whose value is read from the clock ('now',
	// 'today'); it would differ between replicas.
	TimeInputClock
)

// isoShape matches the ISO form PostgreSQL reads, with any field
// value: a text of this shape that parseDateTime refuses has a field
// out of range rather than a syntax error.
var isoShape = regexp.MustCompile(`^(\d{4,7}-\d{2}-\d{2})?([ Tt]?\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?( ?([Zz]|[+-](?P<zh>\d{1,2})(:?\d{2}(:\d{2})?)?))?( BC| AD)?$`)

// ParseTimeInput reads text as PostgreSQL reads input of type t (Date,
// Time, Timestamp or TimestampTZ) with DateStyle ISO and TimeZone UTC, and
// returns the value as PostgreSQL prints it (see PGText). It reads the
// ISO forms of parseDateTime, surrounding white space, and the words
// epoch, infinity and -infinity (allballs for a time), like PostgreSQL:
//
//   - a date ignores a time of day and an offset written after it
//     ("2024-02-29 +00", as pgjdbc sends a date, is 2024-02-29);
//   - a time ignores a date before it and an offset after it;
//   - a timestamp ignores an offset; a timestamptz is moved by it to UTC;
//   - fractions of a second are rounded to microseconds as PostgreSQL
//     rounds them (the fraction read as a double, times 10^6, rounded
//     half to even), carrying into the second, the day and the year.
//
// Other forms PostgreSQL reads (month names, MDY order, zone names,
// Julian days) give TimeInputSyntax: shepherd refuses them rather than
// pass on a text some engine could read otherwise.
func ParseTimeInput(t Type, text string) (string, TimeInputFault) {
	s := strings.Trim(text, " \t\n\r\f\v")
	switch strings.ToLower(s) {
	case "now", "today", "tomorrow", "yesterday":
		return "", TimeInputClock
	case "epoch":
		switch t {
		case Date:
			return "1970-01-01", TimeInputOK
		case Timestamp:
			return "1970-01-01 00:00:00", TimeInputOK
		case TimestampTZ:
			return "1970-01-01 00:00:00+00", TimeInputOK
		}
		return "", TimeInputSyntax
	case "allballs":
		if t == Time {
			return "00:00:00", TimeInputOK
		}
		return "", TimeInputSyntax
	}
	dt, ok := parseDateTime(s)
	if !ok {
		if m := isoShape.FindStringSubmatch(s); m != nil && strings.ContainsAny(s, "0123456789") {
			if h, err := strconv.Atoi(m[isoShape.SubexpIndex("zh")]); err == nil && h > 15 {
				return "", TimeInputZone
			}
			return "", TimeInputRange
		}
		return "", TimeInputSyntax
	}
	if dt.infinite != 0 {
		if t == Time {
			return "", TimeInputSyntax
		}
		return string(appendInfinity(nil, dt.infinite)), TimeInputOK
	}
	switch t {
	case Date:
		if !dt.hasDate {
			return "", TimeInputSyntax
		}
		return string(appendYMD(nil, dt.year, dt.month, dt.day)), TimeInputOK
	case Time:
		if !dt.hasTime {
			return "", TimeInputSyntax
		}
		secs := dt.hour*3600 + dt.minute*60 + dt.sec
		us := microseconds(dt.nsec)
		if secs > 86400 || secs == 86400 && us != 0 {
			return "", TimeInputRange
		}
		// Rounding may reach 24:00:00, which PostgreSQL prints as such.
		secs += int(us / 1_000_000)
		us %= 1_000_000
		dst := append2(nil, secs/3600)
		dst = append(dst, ':')
		dst = append2(dst, secs/60%60)
		dst = append(dst, ':')
		dst = append2(dst, secs%60)
		return string(appendFraction(dst, int(us)*1000)), TimeInputOK
	case Timestamp, TimestampTZ:
		if !dt.hasDate {
			return "", TimeInputSyntax
		}
		us := microseconds(dt.nsec)
		dt.nsec = 0
		at := dt.instant(t == TimestampTZ).Add(time.Duration(us) * time.Microsecond)
		return string(appendInstant(nil, at, t == TimestampTZ)), TimeInputOK
	}
	return "", TimeInputSyntax
}

// microseconds rounds a fraction of a second given in nanoseconds as
// PostgreSQL rounds the fraction it reads: rint(strtod(".fraction") *
// 1e6), with the fraction as a double (at most nine digits reach here,
// and trailing zeros do not change the double).
func microseconds(nsec int) int64 {
	if nsec == 0 {
		return 0
	}
	frac, _ := strconv.ParseFloat("0."+leftPad9(nsec), 64)
	return int64(math.RoundToEven(frac * 1e6))
}

func leftPad9(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", 9-len(s)) + s
}
