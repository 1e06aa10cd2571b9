package dialect

import (
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Names of shepherd's SQLite functions for PostgreSQL's date and time
// functions (the sqlite driver's DatePartFunction and the rest).
const (
	datePartFunction      = "shepherd_date_part"
	timestampDiffFunction = "shepherd_ts_diff"
	ageFunction           = "shepherd_age"
	toCharFunction        = "shepherd_to_char"
	timeAddFunction       = "shepherd_ts_add"
	epochDiffFunction     = "shepherd_epoch_diff"
	microsDiffFunction    = "shepherd_us_diff"
)

// intervalConst evaluates a constant interval expression: interval
// '...', sums and differences of them, a product with a whole number,
// and a minus sign. ok is false for anything else.
func intervalConst(n *pg_query.Node) (answer.IntervalValue, bool) {
	var zero answer.IntervalValue
	switch {
	case n == nil:
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, _, _, ok := schema.TypeOf(tc.TypeName)
		if !ok || t != "interval" || len(tc.TypeName.Typmods) > 0 {
			return zero, false
		}
		s, ok := strConst(tc.Arg)
		if !ok {
			return zero, false
		}
		return answer.ParseInterval(s)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return zero, false
		}
		op := schema.OpName(e.Name)
		if e.Lexpr == nil {
			v, ok := intervalConst(e.Rexpr)
			if !ok {
				return zero, false
			}
			switch op {
			case "-":
				if v.Micros == -1<<63 {
					return zero, false
				}
				return v.Neg(), true
			case "+":
				return v, true
			}
			return zero, false
		}
		switch op {
		case "+", "-":
			a, ok1 := intervalConst(e.Lexpr)
			b, ok2 := intervalConst(e.Rexpr)
			if !ok1 || !ok2 {
				return zero, false
			}
			if op == "-" {
				b = b.Neg()
			}
			return a.Add(b)
		case "*":
			if a, ok := intervalConst(e.Lexpr); ok {
				if k, ok := intConst(e.Rexpr); ok {
					return a.MulInt(k)
				}
			}
			if a, ok := intervalConst(e.Rexpr); ok {
				if k, ok := intConst(e.Lexpr); ok {
					return a.MulInt(k)
				}
			}
		}
	}
	return zero, false
}

// timeConst reads a constant of a time type: TIMESTAMP '...', '...'::date
// and the like, in the canonical form, as a time.
func timeConst(n *pg_query.Node) (time.Time, string, bool) {
	tc := n.GetTypeCast()
	if tc == nil {
		return time.Time{}, "", false
	}
	t, _, _, ok := schema.TypeOf(tc.TypeName)
	if !ok || !isTime(t) {
		return time.Time{}, "", false
	}
	s, ok := strConst(tc.Arg)
	if !ok {
		return time.Time{}, "", false
	}
	v, err := NormalizeTime(s, t)
	if err != nil {
		return time.Time{}, "", false
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02"} {
		if x, err := time.Parse(layout, v); err == nil {
			return x, t, true
		}
	}
	return time.Time{}, "", false
}

// spanComparison writes (a - b) op interval '...' (or the constant on the
// left) for timestamps a and b: PostgreSQL compares intervals by their
// length in microseconds, a month counting 30 days and a day 24 hours,
// and a - b is a length of days and time. It reports whether the
// comparison has that form.
func (w *writer) spanComparison(op string, l, r *pg_query.Node, lt, rt string) bool {
	switch op {
	case "=", "<>", "<", ">", "<=", ">=":
	default:
		return false
	}
	diff, c := l, r
	if lt != "interval" || rt != "interval" {
		return false
	}
	v, ok := intervalConst(c)
	if !ok {
		diff, c = r, l
		if v, ok = intervalConst(c); !ok {
			return false
		}
		op = map[string]string{"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]
	}
	e := diff.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || schema.OpName(e.Name) != "-" || e.Lexpr == nil {
		return false
	}
	at, bt := w.typeOf(e.Lexpr), w.typeOf(e.Rexpr)
	if at != bt || (at != "timestamp" && at != "timestamptz") {
		return false
	}
	const usPerDay = 86400000000
	n := int64(v.Months)*30*usPerDay + int64(v.Days)*usPerDay
	if n/usPerDay != int64(v.Months)*30+int64(v.Days) || (v.Micros > 0 && n > 1<<62) || (v.Micros < 0 && n < -(1<<62)) {
		w.refuse("interval out of range")
	}
	n += v.Micros
	w.str("(")
	if w.lite() {
		w.str(microsDiffFunction + "(")
		w.expr(e.Lexpr)
		w.str(", ")
		w.expr(e.Rexpr)
		w.str(")")
	} else {
		w.str("TIMESTAMPDIFF(MICROSECOND, ")
		w.expr(e.Rexpr)
		w.str(", ")
		w.expr(e.Lexpr)
		w.str(")")
	}
	w.str(" " + op + " " + strconv.FormatInt(n, 10) + ")")
	return true
}

// textSortKey refuses a sort key the replicas hold as text that PostgreSQL
// sorts by value: an interval (printed as PostgreSQL prints it, '10 days'
// sorts before '2 days') or jsonb. targets resolves ORDER BY ordinals and
// output names.
func (w *writer) textSortKey(key *pg_query.Node, targets []*pg_query.Node) {
	if i, ok := ordinal(key); ok && targets != nil {
		if out := w.outputAt(targets, i); out != nil {
			key = out
		}
	} else if name, ok := bareName(key); ok && targets != nil {
		for _, t := range targets {
			if rt := t.GetResTarget(); rt != nil && rt.Name == name {
				key = rt.Val
			}
		}
	}
	if t := w.typeOf(key); t == "interval" || t == "jsonb" || schema.IsArray(t) {
		w.refuse("ORDER BY a value of type %s (the replicas hold it as text)", t)
	}
}

// temporalOp writes the date and interval operators the arithmetic of
// expr.go leaves to this file: interval arithmetic (computed here when
// constant, as PostgreSQL prints the result) and timestamp - timestamp.
// It reports whether it wrote op.
func (w *writer) temporalOp(op string, l, r *pg_query.Node, lt, rt string) bool {
	if lt != "interval" && rt != "interval" && !(isTime(lt) && lt == rt && lt != "date" && op == "-") {
		return false
	}
	if op != "+" && op != "-" && op != "*" {
		if w.spanComparison(op, l, r, lt, rt) {
			return true
		}
		// The replicas hold an interval as PostgreSQL's text of it,
		// which neither compares nor sorts as the interval does.
		w.refuse("operator %s on intervals other than timestamp - timestamp against a constant interval", op)
	}
	if isTime(lt) && rt == "interval" || lt == "interval" && isTime(rt) {
		return false // arith: a time moved by an interval
	}
	if lt == "interval" || rt == "interval" {
		v, ok := intervalConst(&pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: &pg_query.A_Expr{
			Kind: pg_query.A_Expr_Kind_AEXPR_OP, Name: []*pg_query.Node{pg_query.MakeStrNode(op)}, Lexpr: l, Rexpr: r}}})
		if !ok {
			w.refuse("interval arithmetic other than on constants (%s between %s and %s)", op, orUnknown(lt), orUnknown(rt))
		}
		w.literal(v.String())
		return true
	}
	// timestamp - timestamp.
	if a, _, ok := timeConst(l); ok {
		if b, _, ok := timeConst(r); ok {
			w.literal(answer.TimestampDiff(a, b).String())
			return true
		}
	}
	if w.lite() {
		w.str(timestampDiffFunction + "(")
		w.expr(l)
		w.str(", ")
		w.expr(r)
		w.str(")")
		return true
	}
	if !isLeaf(l) && !isLeaf(r) {
		w.refuse("timestamp - timestamp of two computed values (MariaDB)")
	}
	// The difference appears 12 times in myInterval's text.
	w.repeated(l, 12, func() {
		w.repeated(r, 12, func() {
			w.myInterval(func() {
				w.str("TIMESTAMPDIFF(MICROSECOND, ")
				w.expr(r)
				w.str(", ")
				w.expr(l)
				w.str(")")
			})
		})
	})
	return true
}

// timePlusInterval writes a date, timestamp or timestamptz plus or minus
// a constant interval, as PostgreSQL's timestamp_pl_interval adds: the
// months first (keeping to the last day of a shorter month: Jan 31 + 1
// month is Feb 29), then the days, then the time. A date gives a
// timestamp. MariaDB's INTERVAL arithmetic does each step alike; SQLite
// calls shepherd's function (its strftime keeps milliseconds only).
func (w *writer) timePlusInterval(op string, l, r *pg_query.Node, lt string) {
	v, ok := intervalConst(r)
	if !ok {
		w.refuse("%s of an interval that is not a constant like interval '3 days'", op)
	}
	if op == "-" {
		if v.Micros == -1<<63 {
			w.refuse("interval out of range")
		}
		v = v.Neg()
	}
	if w.lite() {
		w.str(timeAddFunction + "(")
		w.expr(l)
		w.str(", " + strconv.FormatInt(int64(v.Months), 10) + ", " + strconv.FormatInt(int64(v.Days), 10) + ", " + strconv.FormatInt(v.Micros, 10) + ")")
		return
	}
	w.str("(")
	if lt == "date" || v == (answer.IntervalValue{}) {
		// PostgreSQL's date + interval is a timestamp.
		w.str("CAST(")
		w.expr(l)
		w.str(" AS DATETIME(6))")
	} else {
		w.expr(l)
	}
	if v.Months != 0 {
		w.str(" + INTERVAL " + strconv.FormatInt(int64(v.Months), 10) + " MONTH")
	}
	if v.Days != 0 {
		w.str(" + INTERVAL " + strconv.FormatInt(int64(v.Days), 10) + " DAY")
	}
	if v.Micros != 0 {
		w.str(" + INTERVAL " + strconv.FormatInt(v.Micros, 10) + " MICROSECOND")
	}
	w.str(")")
}

// myInterval writes, for MariaDB, the interval of a number of
// microseconds as PostgreSQL prints timestamp - timestamp: whole days
// ("1 day", "-3 days") and the rest of the day ("02:00:00.5"), both of
// the difference's sign, "00:00:00" for none.
func (w *writer) myInterval(us func()) {
	const day = "86400000000"
	days := func() { w.str("("); us(); w.str(" DIV " + day + ")") }
	rest := func() { w.str("ABS("); us(); w.str(" MOD " + day + ")") }
	field := func(div, mod string) {
		w.str("LPAD((")
		rest()
		w.str(" DIV " + div + ") MOD " + mod + ", 2, '0')")
	}
	w.str("(CASE WHEN ")
	us()
	w.str(" IS NULL THEN NULL ELSE CONCAT(CASE ")
	days()
	w.str(" WHEN 0 THEN '' WHEN 1 THEN '1 day' ELSE CONCAT(")
	days()
	w.str(", ' days') END, CASE WHEN ")
	days()
	w.str(" <> 0 AND ")
	us()
	w.str(" MOD " + day + " = 0 THEN '' ELSE CONCAT(CASE WHEN ")
	days()
	w.str(" <> 0 THEN ' ' ELSE '' END, CASE WHEN ")
	us()
	w.str(" < 0 THEN '-' ELSE '' END, ")
	field("3600000000", "24")
	w.str(", ':', ")
	field("60000000", "60")
	w.str(", ':', ")
	field("1000000", "60")
	w.str(", CASE WHEN ")
	rest()
	w.str(" MOD 1000000 = 0 THEN '' ELSE CONCAT('.', TRIM(TRAILING '0' FROM LPAD(")
	rest()
	w.str(" MOD 1000000, 6, '0'))) END) END) END)")
}

// temporalFunc writes the date and time functions of this file; it
// reports whether name is one of them.
func (w *writer) temporalFunc(name string, fc *pg_query.FuncCall) bool {
	a := fc.Args
	switch {
	case name == "timezone" && len(a) == 2:
		// x AT TIME ZONE 'UTC'. shepherd's sessions and its replicas run
		// in UTC (SET TimeZone to anything else is refused), and a
		// timestamptz is stored as its UTC wall-clock time: UTC turns a
		// timestamptz into that timestamp and a timestamp into the
		// timestamptz of the same digits, so the stored text is the
		// answer either way.
		zone, ok := strConst(a[0])
		if !ok || !isUTCZone(zone) {
			w.refuse("AT TIME ZONE other than 'UTC'")
		}
		if t := w.typeOf(a[1]); t != "timestamp" && t != "timestamptz" {
			w.refuse("AT TIME ZONE on a value of type %s", orUnknown(t))
		}
		w.expr(a[1])
	case name == "age" && len(a) == 2:
		x, _, ok1 := timeConst(a[0])
		y, _, ok2 := timeConst(a[1])
		if ok1 && ok2 {
			w.literal(answer.Age(x, y).String())
			return true
		}
		if !isTime(w.typeOf(a[0])) || !isTime(w.typeOf(a[1])) || w.typeOf(a[0]) == "date" || w.typeOf(a[1]) == "date" {
			w.refuse("age() of values that are not both timestamps")
		}
		if w.my() {
			w.refuse("age() of values that are not constants (MariaDB)")
		}
		w.str(ageFunction + "(")
		w.expr(a[0])
		w.str(", ")
		w.expr(a[1])
		w.str(")")
	case name == "make_date" && len(a) == 3:
		y, ok1 := intConst(a[0])
		m, ok2 := intConst(a[1])
		d, ok3 := intConst(a[2])
		if !ok1 || !ok2 || !ok3 {
			w.refuse("make_date() of values that are not constants")
		}
		if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31 {
			w.refuse("make_date() outside years 1 to 9999")
		}
		t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
		if t.Day() != int(d) {
			w.fail("22008", "date field value out of range: %d-%02d-%02d", y, m, d)
		}
		w.timeLiteralTyped(t.Format("2006-01-02"), "date")
	case name == "to_char" && len(a) == 2 && isTime(w.typeOf(a[0])):
		f, ok := strConst(a[1])
		if !ok {
			w.refuse("to_char() with a format that is not a constant")
		}
		parts, ok := answer.ParseToCharFormat(f)
		if !ok {
			w.refuse("to_char() format %q (shepherd takes YYYY, YY, MM, DD, DDD, HH24, HH12, MI, SS, MS, US, Mon, Dy, AM, Q and literal text)", f)
		}
		if w.lite() {
			w.str(toCharFunction + "(")
			w.expr(a[0])
			w.str(", ")
			w.literal(f)
			w.str(")")
			return true
		}
		mf, ok := answer.MariaDBDateFormat(parts)
		if !ok {
			w.refuse("to_char() format %q (MariaDB)", f)
		}
		w.str("DATE_FORMAT(")
		w.expr(a[0])
		w.str(", ")
		w.literal(mf)
		w.str(")")
	case name == "json_build_object" || name == "jsonb_build_object":
		w.buildObject(name, a)
	case (name == "encode") && len(a) == 2 && w.typeOf(a[0]) == "bytea":
		if f, ok := strConst(a[1]); !ok || strings.ToLower(f) != "hex" {
			w.refuse("encode() other than to 'hex'")
		}
		if w.my() {
			w.str("LOWER(HEX(")
			w.expr(a[0])
			w.str("))")
			return true
		}
		// SQLite's hex(NULL) is '', where encode(NULL) is NULL.
		w.repeated(a[0], 2, func() {
			w.str("(CASE WHEN ")
			w.expr(a[0])
			w.str(" IS NULL THEN NULL ELSE LOWER(HEX(")
			w.expr(a[0])
			w.str(")) END)")
		})
	case name == "decode" && len(a) == 2:
		s, ok1 := strConst(a[0])
		f, ok2 := strConst(a[1])
		if !ok1 || !ok2 || strings.ToLower(f) != "hex" {
			w.refuse("decode() other than of a constant from 'hex'")
		}
		for _, c := range s {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				w.fail("22023", "invalid hexadecimal digit: \"%c\"", c)
			}
		}
		if len(s)%2 != 0 {
			w.fail("22023", "invalid hexadecimal data: odd number of digits")
		}
		w.bytesLiteral(`\x` + s)
	default:
		return false
	}
	return true
}

// timeLiteralTyped writes a canonical date or time constant typed as the
// dialect computes with it (MariaDB: a CAST, as cast does).
func (w *writer) timeLiteralTyped(v, t string) {
	if w.my() {
		w.str("CAST(")
		w.literal(v)
		w.str(" AS " + myCastType(t, nil) + ")")
		return
	}
	w.literal(v)
}

// isUTCZone reports whether PostgreSQL reads zone as UTC itself.
func isUTCZone(zone string) bool {
	switch strings.ToLower(strings.TrimSpace(zone)) {
	case "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "universal", "etc/universal", "uct", "etc/uct", "+00", "-00", "+00:00", "00:00":
		return true
	}
	return false
}

// extract writes extract(field FROM x) and date_part('field', x).
func (w *writer) extract(a []*pg_query.Node) {
	field, ok := strConst(a[0])
	if !ok {
		w.refuse("extract() of a field that is not a constant")
	}
	field = strings.ToLower(field)
	t := w.typeOf(a[1])
	if t == "interval" && field == "epoch" {
		w.epochOfDifference(a[1])
		return
	}
	if !isTime(t) {
		w.refuse("extract() from a value of type %s", orUnknown(t))
	}
	switch field {
	case "hour", "minute", "second", "milliseconds", "microseconds":
		if t == "date" {
			w.refuse("extract(%s ...) of a date", field)
		}
	case "epoch", "year", "month", "day", "dow", "isodow", "doy", "quarter", "week", "isoyear":
	default:
		w.refuse("extract(%s ...)", field)
	}
	x := func() { w.expr(a[1]) }
	if w.lite() {
		old := map[string]string{"year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "dow": "%w", "doy": "%j"}
		if f, ok := old[field]; ok {
			w.str("CAST(strftime('" + f + "', ")
			x()
			w.str(") AS INTEGER)")
			return
		}
		w.str(datePartFunction + "('" + field + "', ")
		x()
		w.str(")")
		return
	}
	my := map[string]string{"year": "YEAR", "month": "MONTH", "day": "DAY", "hour": "HOUR", "minute": "MINUTE", "quarter": "QUARTER"}
	if f, ok := my[field]; ok {
		w.str("EXTRACT(" + f + " FROM ")
		x()
		w.str(")")
		return
	}
	switch field {
	case "dow":
		w.str("(DAYOFWEEK(")
		x()
		w.str(") - 1)")
	case "isodow":
		w.str("(WEEKDAY(")
		x()
		w.str(") + 1)")
	case "doy":
		w.str("DAYOFYEAR(")
		x()
		w.str(")")
	case "week":
		w.str("WEEK(")
		x()
		w.str(", 3)")
	case "isoyear":
		w.str("(YEARWEEK(")
		x()
		w.str(", 3) DIV 100)")
	case "second", "milliseconds", "microseconds":
		// Exact decimals: a product keeps the scale of its factors.
		mul := map[string][2]string{"second": {"1", "0.000001"}, "milliseconds": {"1000", "0.001"}, "microseconds": {"1000000", "1"}}[field]
		w.repeated(a[1], 2, func() {
			w.str("(SECOND(")
			x()
			w.str(") * " + mul[0] + " + MICROSECOND(")
			x()
			w.str(") * " + mul[1] + ")")
		})
	case "epoch":
		unit, scale := "MICROSECOND", " * 0.000001"
		if t == "date" {
			unit, scale = "SECOND", ""
		}
		w.str("(TIMESTAMPDIFF(" + unit + ", TIMESTAMP'1970-01-01 00:00:00', ")
		x()
		w.str(")" + scale + ")")
	}
}

// epochOfDifference writes extract(epoch FROM a - b) of two timestamps:
// the seconds between them, exactly (an interval of days and time, whose
// days are 86400 seconds each). Other intervals are refused.
func (w *writer) epochOfDifference(n *pg_query.Node) {
	e := n.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || schema.OpName(e.Name) != "-" || e.Lexpr == nil {
		w.refuse("extract(epoch ...) of an interval other than timestamp - timestamp")
	}
	lt, rt := w.typeOf(e.Lexpr), w.typeOf(e.Rexpr)
	if lt != rt || (lt != "timestamp" && lt != "timestamptz") {
		w.refuse("extract(epoch ...) of an interval other than timestamp - timestamp")
	}
	if w.lite() {
		w.str(epochDiffFunction + "(")
		w.expr(e.Lexpr)
		w.str(", ")
		w.expr(e.Rexpr)
		w.str(")")
		return
	}
	w.str("(TIMESTAMPDIFF(MICROSECOND, ")
	w.expr(e.Rexpr)
	w.str(", ")
	w.expr(e.Lexpr)
	w.str(") * 0.000001)")
}

// dateTruncWeekQuarter writes date_trunc('week', x) (the Monday of x's
// ISO week) and date_trunc('quarter', x) at midnight; it reports whether
// unit is one of them.
func (w *writer) dateTruncWeekQuarter(unit string, x *pg_query.Node) bool {
	if w.typeOf(x) == "interval" {
		w.refuse("date_trunc() of an interval")
	}
	if unit != "week" && unit != "quarter" {
		return false
	}
	if w.my() {
		w.repeated(x, 2, func() {
			w.str("CAST(")
			if unit == "week" {
				w.str("DATE(")
				w.expr(x)
				w.str(") - INTERVAL WEEKDAY(")
				w.expr(x)
				w.str(") DAY")
			} else {
				w.str("MAKEDATE(YEAR(")
				w.expr(x)
				w.str("), 1) + INTERVAL (QUARTER(")
				w.expr(x)
				w.str(") - 1) * 3 MONTH")
			}
			w.str(" AS DATETIME(6))")
		})
		return true
	}
	if unit == "week" {
		// Back six days, then on to the next Monday (or that day).
		w.str("(date(")
		w.expr(x)
		w.str(", '-6 days', 'weekday 1') || ' 00:00:00')")
		return true
	}
	w.repeated(x, 2, func() {
		w.str("(date(")
		w.expr(x)
		w.str(", 'start of month', '-' || ((CAST(strftime('%m', ")
		w.expr(x)
		w.str(") AS INTEGER) - 1) % 3) || ' months') || ' 00:00:00')")
	})
	return true
}

// temporalOpType is the type of interval arithmetic and of timestamp -
// timestamp, "" for other operators.
func temporalOpType(op, lt, rt string) string {
	switch {
	case lt == "interval" && rt == "interval" && (op == "+" || op == "-"):
		return "interval"
	case (lt == "interval" && isInt(rt) || isInt(lt) && rt == "interval") && op == "*":
		return "interval"
	case op == "-" && lt == rt && (lt == "timestamp" || lt == "timestamptz"):
		return "interval"
	}
	return ""
}
