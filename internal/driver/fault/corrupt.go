package fault

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// Ways to corrupt rows.
const (
	changeValue = iota
	dropRow
	repeatRow
	corruptions
)

// corruptRows changes a's rows so that its digest changes: one value
// changed, one row dropped or one row repeated. An answer without rows
// gains a row of plausible values.
func corruptRows(a *answer.Answer, rng *rand.Rand) {
	before := a.Digest(false)
	n := len(a.Rows)
	if n == 0 {
		a.Rows = [][]answer.Value{plausibleRow(a.Columns)}
	} else {
		i := rng.IntN(n)
		switch rng.IntN(corruptions) {
		case changeValue:
			row := slices.Clone(a.Rows[i])
			if len(row) == 0 { // no columns: only the row count can lie
				a.Rows = append(slices.Clip(a.Rows), row)
				break
			}
			j := rng.IntN(len(row))
			row[j] = changed(row[j], columnType(a, j))
			a.Rows = slices.Clone(a.Rows)
			a.Rows[i] = row
		case dropRow:
			a.Rows = slices.Delete(slices.Clone(a.Rows), i, i+1)
		case repeatRow:
			a.Rows = append(slices.Clip(a.Rows), slices.Clone(a.Rows[i]))
		}
	}
	if a.Digest(false) == before {
		// A value change that canonical form undoes; a row more always shows.
		a.Rows = append(slices.Clip(a.Rows), plausibleRow(a.Columns))
	}
	recount(a, n)
}

// recount keeps the tag telling the lie consistently: when the count was
// the number of rows (SELECT, RETURNING), it becomes the new number.
func recount(a *answer.Answer, oldRows int) {
	if a.RowsAffected != int64(oldRows) {
		return
	}
	a.RowsAffected = int64(len(a.Rows))
	if verb, _, _ := strings.Cut(a.Tag, " "); verb != a.Tag {
		a.Tag = answer.Tag(verb, a.RowsAffected)
	}
}

// miscount adds one to the affected-row count of a write.
func miscount(a *answer.Answer, q driver.Query) {
	verb, _, _ := strings.Cut(a.Tag, " ")
	if verb == "" {
		verb = q.Command()
	}
	if !driver.CountsRows(verb) {
		return
	}
	a.RowsAffected++
	a.Tag = answer.Tag(verb, a.RowsAffected)
}

// columnType returns the family of column j.
func columnType(a *answer.Answer, j int) answer.Type {
	if j < len(a.Columns) {
		return a.Columns[j].Type
	}
	return answer.Unknown
}

// plausibleRow returns a row with one plausible value per column.
func plausibleRow(cols []answer.Column) []answer.Value {
	row := make([]answer.Value, len(cols))
	for j, c := range cols {
		row[j] = plausible(c.Type)
	}
	return row
}

// plausibleText holds a value per family that a real engine could answer;
// families left out get text.
var plausibleText = map[answer.Type]string{
	answer.Bool:        "t",
	answer.Int:         "1",
	answer.Numeric:     "1",
	answer.Float:       "1",
	answer.Date:        "2000-01-01",
	answer.Time:        "00:00:00",
	answer.Timestamp:   "2000-01-01 00:00:00",
	answer.TimestampTZ: "2000-01-01 00:00:00+00",
	answer.UUID:        "00000000-0000-0000-0000-000000000000",
	answer.JSON:        "{}",
	answer.Interval:    "00:00:00",
}

// plausible returns a value of family t.
func plausible(t answer.Type) answer.Value {
	text := plausibleText[t]
	if text == "" {
		t, text = answer.Text, "x"
	}
	return answer.V(t, text)
}

// changed returns v changed into another value of its family: numbers
// plus one, text with "x" appended, dates a day later, NULL a plausible
// value. Text it cannot read as its family becomes NULL.
func changed(v answer.Value, col answer.Type) answer.Value {
	t := v.Type
	if t == answer.Unknown {
		t = col
	}
	if v.Null {
		return plausible(t)
	}
	text, ok := changedText(t, v.Text)
	if !ok {
		return answer.Null
	}
	v.Text = text
	return v
}

// changedText returns text changed as changed describes, or false.
func changedText(t answer.Type, text string) (string, bool) {
	switch t {
	case answer.Int, answer.Numeric:
		return plusOne(text)
	case answer.Float:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || f+1 == f {
			return "0", true
		}
		return answer.FormatFloat(f+1, 64), true
	case answer.Bool:
		switch text {
		case "t":
			return "f", true
		case "f":
			return "t", true
		}
		return "", false
	case answer.Date:
		return nextDay(text)
	case answer.Timestamp, answer.TimestampTZ:
		if len(text) < 10 {
			return "", false
		}
		day, ok := nextDay(text[:10])
		return day + text[10:], ok
	case answer.Time:
		if len(text) < 2 {
			return "", false
		}
		h, err := strconv.Atoi(text[:2])
		if err != nil {
			return "", false
		}
		return fmt.Sprintf("%02d", (h+1)%24) + text[2:], true
	case answer.UUID:
		if text == "" {
			return "", false
		}
		last := byte('0')
		if text[len(text)-1] == '0' {
			last = '1'
		}
		return text[:len(text)-1] + string(last), true
	case answer.JSON:
		return "[" + text + "]", true
	case answer.Interval:
		return "", false
	}
	return text + "x", true
}

// plusOne adds one to a decimal number written in text, keeping its
// scale ("12.50" → "13.50").
func plusOne(text string) (string, bool) {
	r, ok := new(big.Rat).SetString(text)
	if !ok || strings.ContainsAny(text, "eE/") {
		return "", false
	}
	scale := 0
	if _, frac, found := strings.Cut(text, "."); found {
		scale = len(frac)
	}
	return r.Add(r, big.NewRat(1, 1)).FloatString(scale), true
}

// nextDay returns the day after a "2006-01-02" date.
func nextDay(text string) (string, bool) {
	d, err := time.Parse(time.DateOnly, text)
	if err != nil {
		return "", false
	}
	return d.AddDate(0, 0, 1).Format(time.DateOnly), true
}
