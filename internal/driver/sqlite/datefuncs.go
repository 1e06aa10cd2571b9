package sqlite

import (
	"errors"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// PostgreSQL's date and time functions for SQLite, over the canonical
// text replicas store (dates "2026-01-01", timestamps "2026-01-01
// 10:00:00.5", timestamptz in UTC, see dialect.NormalizeTime):
//
//	DatePartFunction(field, value)  extract(field FROM value): an integer,
//	                                or a float where the value has a fraction
//	                                (seconds, epoch)
//	TimestampDiffFunction(a, b)     a - b of timestamps, an interval as
//	                                PostgreSQL prints it
//	AgeFunction(a, b)               age(a, b), likewise
const (
	DatePartFunction      = "shepherd_date_part"
	TimestampDiffFunction = "shepherd_ts_diff"
	AgeFunction           = "shepherd_age"
	ToCharFunction        = "shepherd_to_char"
	EpochDiffFunction     = "shepherd_epoch_diff"
	MicrosDiffFunction    = "shepherd_us_diff"
	TimeAddFunction       = "shepherd_ts_add"
)

var errBadTime = errors.New("invalid input syntax for type timestamp")

// parseStored reads a stored date or timestamp.
func parseStored(v any) (time.Time, bool, error) {
	s, ok := argText(v)
	if !ok {
		return time.Time{}, false, nil
	}
	s = strings.Replace(strings.TrimSpace(s), "T", " ", 1)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true, nil
		}
	}
	return time.Time{}, false, errBadTime
}

// datePart implements DatePartFunction.
func datePart(field, value any) (any, error) {
	f, _ := argText(field)
	t, ok, err := parseStored(value)
	if !ok {
		return nil, err
	}
	us := int64(t.Nanosecond() / 1000)
	whole := func(n int) any { return int64(n) }
	switch strings.ToLower(f) {
	case "epoch":
		sec := t.Unix()
		if us == 0 {
			return sec, nil
		}
		// One rounding: the nearest double to the decimal, which prints
		// as PostgreSQL's digits.
		return float64(sec*1000000+us) / 1e6, nil
	case "year":
		return whole(t.Year()), nil
	case "month":
		return whole(int(t.Month())), nil
	case "day":
		return whole(t.Day()), nil
	case "hour":
		return whole(t.Hour()), nil
	case "minute":
		return whole(t.Minute()), nil
	case "second":
		if us == 0 {
			return whole(t.Second()), nil
		}
		return float64(int64(t.Second())*1000000+us) / 1e6, nil
	case "milliseconds":
		return float64(t.Second())*1000 + float64(us)/1000, nil
	case "microseconds":
		return int64(t.Second())*1000000 + us, nil
	case "dow":
		return whole(int(t.Weekday())), nil
	case "isodow":
		d := int(t.Weekday())
		if d == 0 {
			d = 7
		}
		return whole(d), nil
	case "doy":
		return whole(t.YearDay()), nil
	case "quarter":
		return whole((int(t.Month())-1)/3 + 1), nil
	case "week":
		_, w := t.ISOWeek()
		return whole(w), nil
	case "isoyear":
		y, _ := t.ISOWeek()
		return whole(y), nil
	}
	return nil, errors.New("unit \"" + f + "\" not supported")
}

// twoStored reads two stored timestamps; ok is false when one is NULL
// or does not read (err says why).
func twoStored(a, b any) (x, y time.Time, ok bool, err error) {
	x, ok1, err := parseStored(a)
	if err != nil {
		return x, y, false, err
	}
	y, ok2, err := parseStored(b)
	return x, y, ok1 && ok2, err
}

// timestampDiff implements TimestampDiffFunction.
func timestampDiff(a, b any) (any, error) {
	x, y, ok, err := twoStored(a, b)
	if !ok {
		return nil, err
	}
	return answer.TimestampDiff(x, y).String(), nil
}

// epochDiff implements EpochDiffFunction: extract(epoch FROM a - b) of
// two timestamps, the seconds between them.
func epochDiff(a, b any) (any, error) {
	x, y, ok, err := twoStored(a, b)
	if !ok {
		return nil, err
	}
	us := x.Sub(y).Microseconds()
	if us%1000000 == 0 {
		return us / 1000000, nil
	}
	return float64(us) / 1e6, nil
}

// microsDiff implements MicrosDiffFunction: the microseconds from b to a.
func microsDiff(a, b any) (any, error) {
	x, y, ok, err := twoStored(a, b)
	if !ok {
		return nil, err
	}
	return x.Sub(y).Microseconds(), nil
}

// age implements AgeFunction.
func age(a, b any) (any, error) {
	x, y, ok, err := twoStored(a, b)
	if !ok {
		return nil, err
	}
	return answer.Age(x, y).String(), nil
}

// toChar implements ToCharFunction: to_char(value, format) of a date or
// timestamp, for the formats answer.ParseToCharFormat reads.
func toChar(value, format any) (any, error) {
	t, ok, err := parseStored(value)
	if !ok {
		return nil, err
	}
	f, ok := argText(format)
	if !ok {
		return nil, nil
	}
	parts, ok := answer.ParseToCharFormat(f)
	if !ok {
		return nil, errors.New("to_char format not supported: " + f)
	}
	return answer.FormatToChar(t, parts), nil
}

// timeAdd implements TimeAddFunction(ts, months, days, micros): ts plus
// an interval as PostgreSQL's timestamp_pl_interval adds it, months first
// (keeping to the last day of a shorter month), then days, then time.
func timeAdd(ts, months, days, micros any) (any, error) {
	t, ok, err := parseStored(ts)
	if !ok {
		return nil, err
	}
	m, _ := months.(int64)
	d, _ := days.(int64)
	us, _ := micros.(int64)
	if m != 0 {
		total := int64(t.Year())*12 + int64(t.Month()) - 1 + m
		y, mo := int(total/12), time.Month(total%12+1)
		if total < 0 {
			return nil, errors.New("timestamp out of range")
		}
		last := time.Date(y, mo+1, 0, 0, 0, 0, 0, time.UTC).Day()
		t = time.Date(y, mo, min(t.Day(), last), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	}
	t = t.AddDate(0, 0, int(d)).Add(time.Duration(us) * time.Microsecond)
	if t.Year() < 1 || t.Year() > 294276 {
		return nil, errors.New("timestamp out of range")
	}
	return t.Format("2006-01-02 15:04:05.999999"), nil
}

// pgFunctions are the scalar functions of jsonfuncs.go and this file,
// registered in both SQLite builds.
var pgFunctions = []struct {
	name string
	n    int
	fn1  func(a any) (any, error)
	fn2  func(a, b any) (any, error)
	fn3  func(a, b, c any) (any, error)
	fn4  func(a, b, c, d any) (any, error)
}{
	{name: JSONGetFunction, n: 3, fn3: jsonGet},
	{name: JSONBTextFunction, n: 1, fn1: jsonbText},
	{name: JSONObjectTextFunction, n: 1, fn1: jsonObjectText},
	{name: JSONPathFunction, n: 3, fn3: jsonPath},
	{name: JSONContainsFunction, n: 2, fn2: jsonbContains},
	{name: JSONExistsFunction, n: 2, fn2: jsonbExists},
	{name: JSONEqualFunction, n: 2, fn2: jsonbEqual},
	{name: JSONCompareFunction, n: 2, fn2: jsonbCompare},
	{name: DatePartFunction, n: 2, fn2: datePart},
	{name: TimestampDiffFunction, n: 2, fn2: timestampDiff},
	{name: AgeFunction, n: 2, fn2: age},
	{name: ToCharFunction, n: 2, fn2: toChar},
	{name: EpochDiffFunction, n: 2, fn2: epochDiff},
	{name: MicrosDiffFunction, n: 2, fn2: microsDiff},
	{name: TimeAddFunction, n: 4, fn4: timeAdd},
}
