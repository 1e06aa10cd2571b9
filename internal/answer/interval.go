package answer

import (
	"strconv"
	"strings"
	"time"
)

// IntervalValue is a PostgreSQL interval: months, days and microseconds,
// kept apart as PostgreSQL keeps them (a month is not a fixed number of
// days, nor a day of hours across a time change).
type IntervalValue struct {
	Months int32
	Days   int32
	Micros int64
}

const (
	microsPerSecond = int64(1000000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

// intervalUnits are the unit words PostgreSQL's interval input reads,
// with what one of each is.
var intervalUnits = map[string]IntervalValue{}

func init() {
	add := func(v IntervalValue, words ...string) {
		for _, w := range words {
			intervalUnits[w] = v
		}
	}
	add(IntervalValue{Micros: 1}, "microsecond", "microseconds", "us", "usec", "usecs", "useconds")
	add(IntervalValue{Micros: 1000}, "millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds")
	add(IntervalValue{Micros: microsPerSecond}, "second", "seconds", "s", "sec", "secs")
	add(IntervalValue{Micros: microsPerMinute}, "minute", "minutes", "m", "min", "mins")
	add(IntervalValue{Micros: microsPerHour}, "hour", "hours", "h", "hr", "hrs")
	add(IntervalValue{Days: 1}, "day", "days", "d")
	add(IntervalValue{Days: 7}, "week", "weeks", "w")
	add(IntervalValue{Months: 1}, "month", "months", "mon", "mons")
	add(IntervalValue{Months: 12}, "year", "years", "y", "yr", "yrs")
	add(IntervalValue{Months: 120}, "decade", "decades")
	add(IntervalValue{Months: 1200}, "century", "centuries")
	add(IntervalValue{Months: 12000}, "millennium", "millennia")
}

// ParseInterval reads the common forms of PostgreSQL's interval input:
// whole numbers each followed by a unit ('3 days', '1 year 2 mons',
// '-90 minutes'), optionally a time of day ('1 day 02:30:00',
// '-01:00'), optionally followed by "ago". ok is false for anything else
// (fractions of a unit, ISO 8601 forms, values out of range), which the
// caller refuses rather than read differently from PostgreSQL.
func ParseInterval(s string) (IntervalValue, bool) {
	var v IntervalValue
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 {
		return v, false
	}
	ago := false
	if f[len(f)-1] == "ago" {
		ago = true
		f = f[:len(f)-1]
	}
	sawTime := false
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			if sawTime {
				return v, false
			}
			sawTime = true
			us, ok := parseClock(f[i])
			if !ok {
				return v, false
			}
			v.Micros += us
			continue
		}
		num, unit := f[i], ""
		// '3days' as well as '3 days'.
		j := len(num)
		for j > 0 && (num[j-1] < '0' || num[j-1] > '9') {
			j--
		}
		if j < len(num) {
			num, unit = num[:j], num[j:]
		} else if i+1 < len(f) {
			unit = f[i+1]
			i++
		} else {
			return v, false
		}
		n, err := strconv.ParseInt(num, 10, 32)
		if err != nil {
			return v, false
		}
		u, ok := intervalUnits[unit]
		if !ok {
			return v, false
		}
		months := int64(v.Months) + n*int64(u.Months)
		days := int64(v.Days) + n*int64(u.Days)
		if months != int64(int32(months)) || days != int64(int32(days)) {
			return v, false
		}
		v.Months, v.Days = int32(months), int32(days)
		if u.Micros != 0 && (n > (1<<62)/u.Micros || n < -(1<<62)/u.Micros) {
			return v, false
		}
		v.Micros += n * u.Micros
	}
	if ago {
		v = v.Neg()
	}
	return v, true
}

// parseClock reads [-]H:MM[:SS[.ffffff]] as microseconds.
func parseClock(s string) (int64, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 32)
	m, err2 := strconv.ParseInt(parts[1], 10, 32)
	if err1 != nil || err2 != nil || m > 59 || h < 0 || m < 0 {
		return 0, false
	}
	us := h*microsPerHour + m*microsPerMinute
	if len(parts) == 3 {
		sec, frac, _ := strings.Cut(parts[2], ".")
		sv, err := strconv.ParseInt(sec, 10, 32)
		if err != nil || sv > 59 || sv < 0 || len(frac) > 6 {
			return 0, false
		}
		us += sv * microsPerSecond
		if frac != "" {
			fv, err := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
			if err != nil {
				return 0, false
			}
			us += fv
		}
	}
	if neg {
		us = -us
	}
	return us, true
}

// Neg is -v.
func (v IntervalValue) Neg() IntervalValue {
	return IntervalValue{Months: -v.Months, Days: -v.Days, Micros: -v.Micros}
}

// Add is v + o, field by field as PostgreSQL adds intervals; ok is false
// on overflow (PostgreSQL's "interval out of range").
func (v IntervalValue) Add(o IntervalValue) (IntervalValue, bool) {
	m := int64(v.Months) + int64(o.Months)
	d := int64(v.Days) + int64(o.Days)
	us := v.Micros + o.Micros
	if m != int64(int32(m)) || d != int64(int32(d)) || (v.Micros > 0 && o.Micros > 0 && us < 0) || (v.Micros < 0 && o.Micros < 0 && us >= 0) {
		return v, false
	}
	return IntervalValue{Months: int32(m), Days: int32(d), Micros: us}, true
}

// MulInt is v * n for a whole n: each field multiplied, as PostgreSQL's
// interval_mul gives for an integral factor; ok is false on overflow.
func (v IntervalValue) MulInt(n int64) (IntervalValue, bool) {
	m := int64(v.Months) * n
	d := int64(v.Days) * n
	if n != 0 && (m/n != int64(v.Months) || d/n != int64(v.Days)) || m != int64(int32(m)) || d != int64(int32(d)) {
		return v, false
	}
	us := v.Micros * n
	if n != 0 && us/n != v.Micros {
		return v, false
	}
	return IntervalValue{Months: int32(m), Days: int32(d), Micros: us}, true
}

// String writes v as PostgreSQL does with IntervalStyle postgres:
// "3 days", "1 year 2 mons", "1 day 02:00:00", "-1 days -02:00:00",
// "00:00:00".
func (v IntervalValue) String() string {
	var b strings.Builder
	isZero, isBefore := true, false
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if !isZero {
			b.WriteByte(' ')
		}
		if isBefore && n > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(n, 10))
		b.WriteString(" " + unit)
		if n != 1 {
			b.WriteByte('s')
		}
		isBefore = n < 0
		isZero = false
	}
	part(int64(v.Months/12), "year")
	part(int64(v.Months%12), "mon")
	part(int64(v.Days), "day")
	if isZero || v.Micros != 0 {
		us := v.Micros
		minus := us < 0
		if minus {
			us = -us
		}
		if !isZero {
			b.WriteByte(' ')
		}
		if minus {
			b.WriteByte('-')
		} else if isBefore {
			b.WriteByte('+')
		}
		h := us / microsPerHour
		m := us % microsPerHour / microsPerMinute
		s := us % microsPerMinute / microsPerSecond
		f := us % microsPerSecond
		b.WriteString(pad2(h) + ":" + pad2(m) + ":" + pad2(s))
		if f != 0 {
			b.WriteString("." + strings.TrimRight(strconv.FormatInt(f+microsPerSecond, 10)[1:], "0"))
		}
	}
	return b.String()
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// TimestampDiff is a - b for timestamps as PostgreSQL's timestamp_mi
// computes it: whole days and the time left over, both of one sign.
func TimestampDiff(a, b time.Time) IntervalValue {
	us := a.Sub(b).Microseconds()
	return IntervalValue{Days: int32(us / microsPerDay), Micros: us % microsPerDay}
}

// Age is PostgreSQL's age(a, b): the difference in years, months, days
// and time, field by field, borrowing from the next larger field with the
// length of the earlier timestamp's month.
func Age(a, b time.Time) IntervalValue {
	type tm struct{ year, mon, mday, hour, min, sec, usec int64 }
	split := func(t time.Time) tm {
		return tm{int64(t.Year()), int64(t.Month()), int64(t.Day()), int64(t.Hour()), int64(t.Minute()), int64(t.Second()), int64(t.Nanosecond() / 1000)}
	}
	t1, t2 := split(a), split(b)
	r := tm{t1.year - t2.year, t1.mon - t2.mon, t1.mday - t2.mday, t1.hour - t2.hour, t1.min - t2.min, t1.sec - t2.sec, t1.usec - t2.usec}
	before := a.Before(b)
	neg := func() {
		r = tm{-r.year, -r.mon, -r.mday, -r.hour, -r.min, -r.sec, -r.usec}
	}
	if before {
		neg()
	}
	for r.usec < 0 {
		r.usec += microsPerSecond
		r.sec--
	}
	for r.sec < 0 {
		r.sec += 60
		r.min--
	}
	for r.min < 0 {
		r.min += 60
		r.hour--
	}
	for r.hour < 0 {
		r.hour += 24
		r.mday--
	}
	for r.mday < 0 {
		t := t2
		if before {
			t = t1
		}
		r.mday += int64(daysIn(int(t.mon), int(t.year)))
		r.mon--
	}
	for r.mon < 0 {
		r.mon += 12
		r.year--
	}
	if before {
		neg()
	}
	return IntervalValue{
		Months: int32(r.year*12 + r.mon),
		Days:   int32(r.mday),
		Micros: ((r.hour*60+r.min)*60+r.sec)*microsPerSecond + r.usec,
	}
}
