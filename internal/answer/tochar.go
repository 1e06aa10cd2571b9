package answer

import (
	"strconv"
	"strings"
	"time"
)

// ToCharPart is one piece of a to_char() format for dates and times: a
// field (Field set) or literal text.
type ToCharPart struct {
	Field string // a pattern of toCharFields, "" for literal text
	Text  string
}

// toCharFields are the patterns of PostgreSQL's to_char() for times that
// ParseToCharFormat takes, longest first where one is a prefix of
// another. Each is matched exactly as written (PostgreSQL's upper- and
// lower-case spellings of a numeric field mean the same).
var toCharFields = []string{
	"YYYY", "yyyy", "HH24", "hh24", "HH12", "hh12", "DDD", "ddd",
	"YY", "yy", "MM", "mm", "DD", "dd", "HH", "hh", "MI", "mi", "SS", "ss", "MS", "ms", "US", "us",
	"Mon", "MON", "mon", "Dy", "DY", "dy", "AM", "PM", "am", "pm", "Q", "q",
}

// ParseToCharFormat splits a to_char() format into fields and literal
// text as PostgreSQL reads it: "..." is literal, \ escapes the next
// character, anything else that is not a pattern is copied. ok is false
// when the format holds a letter that starts no pattern taken here
// (PostgreSQL has many more: FM, TH, Month, J, ...), which the caller
// refuses rather than copy text PostgreSQL would read as a pattern.
func ParseToCharFormat(f string) ([]ToCharPart, bool) {
	var parts []ToCharPart
	lit := func(s string) {
		if n := len(parts); n > 0 && parts[n-1].Field == "" {
			parts[n-1].Text += s
			return
		}
		parts = append(parts, ToCharPart{Text: s})
	}
	for i := 0; i < len(f); {
		c := f[i]
		if c == '"' {
			j := i + 1
			var b strings.Builder
			for j < len(f) && f[j] != '"' {
				if f[j] == '\\' && j+1 < len(f) {
					j++
				}
				b.WriteByte(f[j])
				j++
			}
			lit(b.String())
			i = j + 1
			continue
		}
		if c == '\\' && i+1 < len(f) && f[i+1] == '"' {
			lit(`"`)
			i += 2
			continue
		}
		if strings.HasPrefix(f[i:], "SSSS") || strings.HasPrefix(f[i:], "ssss") {
			return nil, false // seconds past midnight
		}
		matched := ""
		for _, p := range toCharFields {
			if strings.HasPrefix(f[i:], p) {
				matched = p
				break
			}
		}
		if matched != "" {
			parts = append(parts, ToCharPart{Field: matched})
			i += len(matched)
			continue
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0x80 {
			return nil, false
		}
		lit(string(c))
		i++
	}
	return parts, true
}

// FormatToChar writes t as to_char(t, format) does for the parts of a
// format ParseToCharFormat read.
func FormatToChar(t time.Time, parts []ToCharPart) string {
	var b strings.Builder
	pad := func(n, width int) {
		s := strconv.Itoa(n)
		for len(s) < width {
			s = "0" + s
		}
		b.WriteString(s)
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	for _, p := range parts {
		switch p.Field {
		case "":
			b.WriteString(p.Text)
		case "YYYY", "yyyy":
			pad(t.Year(), 4)
		case "YY", "yy":
			pad(t.Year()%100, 2)
		case "MM", "mm":
			pad(int(t.Month()), 2)
		case "DD", "dd":
			pad(t.Day(), 2)
		case "DDD", "ddd":
			pad(t.YearDay(), 3)
		case "HH24", "hh24":
			pad(t.Hour(), 2)
		case "HH12", "hh12", "HH", "hh":
			pad(hour12, 2)
		case "MI", "mi":
			pad(t.Minute(), 2)
		case "SS", "ss":
			pad(t.Second(), 2)
		case "MS", "ms":
			pad(t.Nanosecond()/1000000, 3)
		case "US", "us":
			pad(t.Nanosecond()/1000, 6)
		case "Mon":
			b.WriteString(t.Month().String()[:3])
		case "MON":
			b.WriteString(strings.ToUpper(t.Month().String()[:3]))
		case "mon":
			b.WriteString(strings.ToLower(t.Month().String()[:3]))
		case "Dy":
			b.WriteString(t.Weekday().String()[:3])
		case "DY":
			b.WriteString(strings.ToUpper(t.Weekday().String()[:3]))
		case "dy":
			b.WriteString(strings.ToLower(t.Weekday().String()[:3]))
		case "AM", "PM":
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case "am", "pm":
			if t.Hour() < 12 {
				b.WriteString("am")
			} else {
				b.WriteString("pm")
			}
		case "Q", "q":
			pad((int(t.Month())-1)/3+1, 1)
		}
	}
	return b.String()
}

// MariaDBDateFormat is the DATE_FORMAT format of MariaDB that writes
// parts as FormatToChar does; ok is false where MariaDB has no such
// conversion (lower-case names, the quarter, milliseconds).
func MariaDBDateFormat(parts []ToCharPart) (string, bool) {
	conv := map[string]string{
		"YYYY": "%Y", "yyyy": "%Y", "YY": "%y", "yy": "%y", "MM": "%m", "mm": "%m", "DD": "%d", "dd": "%d",
		"DDD": "%j", "ddd": "%j", "HH24": "%H", "hh24": "%H", "HH12": "%h", "hh12": "%h", "HH": "%h", "hh": "%h",
		"MI": "%i", "mi": "%i", "SS": "%S", "ss": "%S", "US": "%f", "us": "%f", "Mon": "%b", "Dy": "%a",
		"AM": "%p", "PM": "%p",
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Field == "" {
			b.WriteString(strings.ReplaceAll(p.Text, "%", "%%"))
			continue
		}
		c, ok := conv[p.Field]
		if !ok {
			return "", false
		}
		b.WriteString(c)
	}
	return b.String(), true
}
