package answer

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The property tests draw values from fixed seeds, write each the ways
// the engines hand it over (the "same" representations) and change it in
// small ways that change its meaning (the "diff" ones): every same
// representation must get the first one's canonical bytes, and no diff
// representation may.

var seeds = []uint64{1, 2, 3, 42, 1234567, 0xdeadbeef}

const drawsPerSeed = 1500

// meaning is one drawn value: its representations and its near misses.
type meaning struct {
	what       string
	same, diff []repr
}

// checkProperty runs gen for every seed and checks each drawn meaning.
func checkProperty(t *testing.T, gen func(r *rand.Rand) meaning) {
	t.Helper()
	for _, seed := range seeds {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for range drawsPerSeed {
			m := gen(r)
			want := m.same[0].canon()
			for _, s := range m.same[1:] {
				if got := s.canon(); !bytes.Equal(got, want) {
					t.Fatalf("seed %d, %s: %v -> %q but %v -> %q", seed, m.what, m.same[0], want, s, got)
				}
			}
			for _, d := range m.diff {
				if got := d.canon(); bytes.Equal(got, want) {
					t.Fatalf("seed %d, %s: %v and %v both -> %q", seed, m.what, m.same[0], d, got)
				}
			}
		}
	}
}

// decimalText writes a decimal from its sign, integer and fraction digits
// (without leading or trailing zeros), with at least scale fraction
// digits and at least one integer digit.
func decimalText(neg bool, intDigits, frac string, scale int) string {
	if intDigits == "" {
		intDigits = "0"
	}
	for len(frac) < scale {
		frac += "0"
	}
	s := intDigits
	if frac != "" {
		s += "." + frac
	}
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	return s
}

func randDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

func TestPropertyDecimals(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		neg := r.IntN(2) == 0
		intDigits := strings.TrimLeft(randDigits(r, r.IntN(20)), "0")
		frac := strings.TrimRight(randDigits(r, r.IntN(12)), "0")
		canonical := decimalText(neg, intDigits, frac, 0)
		m := meaning{what: "decimal " + canonical}
		// PostgreSQL numeric(p, s) pads to its scale, MariaDB DECIMAL(65,30) to 30.
		m.same = append(m.same,
			pg(OIDNumeric, decimalText(neg, intDigits, frac, len(frac)+r.IntN(4))),
			repr{v: Value{Text: decimalText(neg, intDigits, frac, 30)}, col: col(Numeric)},
			val(Numeric, canonical),
			val(Numeric, strings.Replace(canonical, "-", "-00", 1)),
		)
		if frac == "" {
			m.same = append(m.same, val(Int, canonical), pg(OIDInt8, canonical))
		}
		// In exponent form: all digits after the point.
		if digits := strings.TrimLeft(intDigits+frac, "0"); digits != "" {
			exp := len(intDigits) - 1 - (len(intDigits+frac) - len(digits))
			sign := ""
			if neg {
				sign = "-"
			}
			m.same = append(m.same, val(Numeric, sign+digits[:1]+"."+digits[1:]+"e"+strconv.Itoa(exp)))
		}
		// SQLite keeps a NUMERIC as a REAL (or an INTEGER when integral):
		// exact while it has at most 15 significant digits.
		if sig := strings.TrimLeft(intDigits+frac, "0"); len(sig) <= 15 {
			f, err := strconv.ParseFloat(canonical, 64)
			if err != nil {
				t.Fatal(err)
			}
			m.same = append(m.same, val(Numeric, strconv.FormatFloat(f, 'f', -1, 64)), val(Float, FormatFloat(f, 64)))
			if frac == "" && math.Abs(f) < 1<<62 {
				m.same = append(m.same, val(Int, strconv.FormatInt(int64(f), 10)))
			}
		}
		// Near misses: one digit changed, a digit appended, the sign
		// flipped, the point moved.
		all := []byte(intDigits + frac)
		if len(all) > 0 {
			i := r.IntN(len(all))
			all[i] = byte('0' + (int(all[i]-'0')+1+r.IntN(9))%10)
			changed := string(all)
			m.diff = append(m.diff, val(Numeric, decimalText(neg, changed[:len(intDigits)], changed[len(intDigits):], 0)))
		}
		m.diff = append(m.diff, val(Numeric, decimalText(neg, intDigits, frac+string(byte('1'+r.IntN(9))), 0)))
		if canonical != "0" {
			times10 := decimalText(neg, intDigits+"0", frac, 0)
			if frac != "" {
				times10 = decimalText(neg, intDigits+frac[:1], frac[1:], 0)
			}
			m.diff = append(m.diff, val(Numeric, decimalText(!neg, intDigits, frac, 0)), val(Numeric, times10))
		}
		return m
	})
}

// randFloat draws floats of every kind: random bits, short decimals,
// integers, tiny and huge ones, the specials.
func randFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return math.Float64frombits(r.Uint64())
	case 1:
		return float64(r.IntN(2000)-1000) / math.Pow10(r.IntN(6))
	case 2:
		return float64(r.Int64N(1<<53) - 1<<52)
	case 3:
		return math.Float64frombits(r.Uint64N(1 << 52)) // subnormal
	case 4:
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}[r.IntN(7)]
	}
	return r.NormFloat64() * math.Pow10(r.IntN(40)-20)
}

func TestPropertyFloat8(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		f := randFloat(r)
		m := meaning{what: fmt.Sprintf("float8 %v", f)}
		m.same = append(m.same,
			pg(OIDFloat8, FormatFloat(f, 64)),
			val(Float, strconv.FormatFloat(f, 'g', -1, 64)),
			val(Float, strconv.FormatFloat(f, 'e', 20, 64)), // more digits than needed
			val(Float, strconv.FormatFloat(f, 'g', 17, 64)),
		)
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			// SQLite's numeric columns print the float in full.
			m.same = append(m.same, val(Numeric, strconv.FormatFloat(f, 'f', -1, 64)))
			// An integral float equals the integer while every integer
			// near it is a float64 (up to 2^53); past that, a float is its
			// shortest decimal, which may end in zeros the integer lacks.
			if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
				m.same = append(m.same, val(Int, strconv.FormatInt(int64(f), 10)))
			}
			if f != 0 && f != math.MaxFloat64 {
				m.diff = append(m.diff, val(Float, FormatFloat(math.Nextafter(f, math.Inf(1)), 64)))
			}
			if f != 0 && f != -math.MaxFloat64 {
				m.diff = append(m.diff, val(Float, FormatFloat(math.Nextafter(f, math.Inf(-1)), 64)))
			}
			if f != 0 {
				m.diff = append(m.diff, val(Float, FormatFloat(-f, 64)))
			}
		} else {
			m.diff = append(m.diff, val(Float, "0"), val(Float, "1.7976931348623157e+308"))
		}
		return m
	})
}

func TestPropertyFloat4(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		var f float32
		switch r.IntN(3) {
		case 0:
			f = math.Float32frombits(r.Uint32())
		case 1:
			f = float32(r.IntN(2000)-1000) / float32(math.Pow10(r.IntN(6)))
		default:
			f = float32(r.NormFloat64() * math.Pow10(r.IntN(20)-10))
		}
		short := FormatFloat(float64(f), 32)
		m := meaning{what: "float4 " + short}
		m.same = append(m.same,
			pg(OIDFloat4, short),
			// The float32 widened and printed as a float8, in a real column.
			repr{v: V(Float, strconv.FormatFloat(float64(f), 'g', -1, 64)), col: colOID(OIDFloat4)},
			// SQLite keeps the float4's text as a double; a hint says real.
			repr{v: V(Float, short), col: col(Float), hint: &Column{Type: Float, OID: OIDFloat4}},
		)
		if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			// A double close enough to round to the same float32.
			m.same = append(m.same, repr{v: V(Float, strconv.FormatFloat(float64(f)*(1+1e-9), 'g', -1, 64)), col: col(Float), hint: &Column{Type: Float, OID: OIDFloat4}})
			if f != 0 && !math.IsInf(float64(math.Nextafter32(f, float32(math.Inf(1)))), 0) {
				m.diff = append(m.diff, pg(OIDFloat4, FormatFloat(float64(math.Nextafter32(f, float32(math.Inf(1)))), 32)))
			}
		}
		return m
	})
}

// offsetText writes a zone offset in seconds the ways engines write it.
func offsetText(r *rand.Rand, off int) string {
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	h, m := off/3600, off/60%60
	switch {
	case off == 0 && r.IntN(3) == 0:
		return "Z"
	case m == 0 && r.IntN(2) == 0:
		return fmt.Sprintf("%s%02d", sign, h)
	case r.IntN(2) == 0:
		return fmt.Sprintf("%s%02d%02d", sign, h, m)
	}
	return fmt.Sprintf("%s%02d:%02d", sign, h, m)
}

// pgTimestamp writes t's wall clock as PostgreSQL prints it: fraction
// without trailing zeros, BC years.
func pgTimestamp(t time.Time, withDate, withTime bool, suffix string) string {
	y := t.Year()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	var s string
	if withDate {
		s = fmt.Sprintf("%04d-%02d-%02d", y, t.Month(), t.Day())
	}
	if withTime {
		if s != "" {
			s += " "
		}
		s += t.Format("15:04:05.999999999")
	}
	s += suffix
	if bc && withDate {
		s += " BC"
	}
	return s
}

func randInstant(r *rand.Rand) time.Time {
	// From 4713 BC to AD 9999, to the microsecond; now and then a round
	// second or midnight.
	lo := time.Date(-4712, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix()
	t := time.Unix(lo+r.Int64N(hi-lo), int64(r.IntN(1e6))*1000).UTC()
	switch r.IntN(4) {
	case 0:
		t = t.Truncate(time.Second)
	case 1:
		t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return t
}

func TestPropertyTimestamps(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		u := randInstant(r)
		m := meaning{what: "timestamp " + pgTimestamp(u, true, true, "")}
		m.same = append(m.same,
			pg(OIDTimestampTZ, pgTimestamp(u, true, true, "+00")),
			pg(OIDTimestamp, pgTimestamp(u, true, true, "")),
		)
		if u.Year() > 0 {
			// MariaDB DATETIME(6): always six digits, as the server sends it.
			m.same = append(m.same, val(Timestamp, u.Format("2006-01-02 15:04:05.000000")))
		}
		// SQLite text, stored with any offset, read as timestamptz (the
		// declared type, or a hint for an expression).
		off := (r.IntN(27*4) - 12*4) * 15 * 60
		local := u.Add(time.Duration(off) * time.Second)
		text := pgTimestamp(local, true, true, offsetText(r, off))
		if r.IntN(2) == 0 && local.Year() > 0 {
			text = local.Format("2006-01-02T15:04:05.999999999") + offsetText(r, off)
		}
		m.same = append(m.same, val(TimestampTZ, text), hinted(text, col(TimestampTZ)))
		// A timestamp without time zone keeps the clock and drops the offset.
		m.same = append(m.same, val(Timestamp, pgTimestamp(u, true, true, offsetText(r, off))))
		for _, d := range []time.Duration{time.Microsecond, -time.Microsecond, time.Second, 24 * time.Hour} {
			m.diff = append(m.diff, pg(OIDTimestampTZ, pgTimestamp(u.Add(d), true, true, "+00")))
		}
		if off != 0 {
			// The offset read with the wrong sign.
			m.diff = append(m.diff, val(TimestampTZ, pgTimestamp(local, true, true, offsetText(r, -off))))
		}
		m.diff = append(m.diff, pg(OIDDate, pgTimestamp(u, true, false, "")), pg(OIDText, pgTimestamp(u, true, true, "+00")))
		return m
	})
}

func TestPropertyDatesAndTimes(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		u := randInstant(r)
		if r.IntN(2) == 0 {
			m := meaning{what: "date " + pgTimestamp(u, true, false, "")}
			m.same = append(m.same, pg(OIDDate, pgTimestamp(u, true, false, "")),
				val(Date, pgTimestamp(u, true, true, "")), hinted(pgTimestamp(u, true, false, ""), col(Date)))
			m.diff = append(m.diff, pg(OIDDate, pgTimestamp(u.AddDate(0, 0, 1), true, false, "")),
				pg(OIDDate, pgTimestamp(u.AddDate(0, 0, -1), true, false, "")))
			return m
		}
		m := meaning{what: "time " + pgTimestamp(u, false, true, "")}
		m.same = append(m.same, pg(OIDTime, pgTimestamp(u, false, true, "")),
			val(Time, u.Format("15:04:05.000000")), hinted(pgTimestamp(u, false, true, ""), col(Time)))
		if u.Second() == 0 && u.Nanosecond() == 0 {
			m.same = append(m.same, val(Time, u.Format("15:04")))
		}
		m.diff = append(m.diff, pg(OIDTime, pgTimestamp(u.Add(time.Microsecond), false, true, "")),
			pg(OIDTime, pgTimestamp(u.Add(time.Hour), false, true, "")))
		return m
	})
}

// randText draws strings of bytes engines treat differently: spaces,
// multi-byte UTF-8, NUL, bytes that are not UTF-8.
func randText(r *rand.Rand) string {
	alphabet := []string{"a", "b", " ", "é", "\x00", "\xff", "\t", "'", "\\", "😀", "\u00a0"}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

func TestPropertyText(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		s := randText(r)
		m := meaning{what: fmt.Sprintf("text %q", s)}
		m.same = append(m.same, pg(OIDText, s), pg(OIDVarchar, s), pg(OIDBytea, s), val(Text, s), val(Bytes, s))
		m.diff = append(m.diff, pg(OIDText, s+" "), pg(OIDText, " "+s), pg(OIDText, s+"a"), repr{v: Null, col: col(Text)})
		if s != "" {
			m.diff = append(m.diff, pg(OIDText, s[:len(s)-1]))
			b := []byte(s)
			i := r.IntN(len(b))
			b[i] ^= byte(1 + r.IntN(255))
			m.diff = append(m.diff, pg(OIDText, string(b)))
		}
		return m
	})
}

func TestPropertyBPChar(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		s := strings.TrimRight(randText(r), " ")
		m := meaning{what: fmt.Sprintf("char(n) %q", s)}
		pad := strings.Repeat(" ", r.IntN(5))
		m.same = append(m.same,
			pg(OIDBPChar, s+strings.Repeat(" ", 8)),                                            // PostgreSQL pads
			repr{v: Value{Text: s}, col: col(Text)},                                            // MariaDB strips
			repr{v: V(Text, s+pad), col: col(Text), hint: &Column{Type: Text, OID: OIDBPChar}}, // SQLite keeps
		)
		m.diff = append(m.diff, pg(OIDBPChar, "a"+s), pg(OIDBPChar, s+"a"), repr{v: Null, col: colOID(OIDBPChar)})
		if s != "" {
			m.diff = append(m.diff, pg(OIDBPChar, " "+s))
		}
		return m
	})
}

func TestPropertyUUID(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		var b [16]byte
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		hex := fmt.Sprintf("%x", b)
		std := hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
		m := meaning{what: "uuid " + std}
		m.same = append(m.same, pg(OIDUUID, std), val(UUID, strings.ToUpper(std)), val(UUID, hex),
			val(UUID, "{"+std+"}"), hinted(strings.ToUpper(hex), col(UUID)), pg(OIDText, std))
		i := r.IntN(32)
		flipped := []byte(hex)
		flipped[i] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", flipped[i])+1+r.IntN(15))%16]
		m.diff = append(m.diff, val(UUID, string(flipped)), pg(OIDText, strings.ToUpper(std)))
		return m
	})
}

// jsonNode is a drawn JSON value, rendered in many equivalent ways.
type jsonNode struct {
	kind  byte // o object, a array, s string, n number, t true, f false, z null
	str   string
	num   [3]string // sign, integer digits, fraction digits (canonical)
	keys  []string
	elems []*jsonNode
}

func randJSON(r *rand.Rand, depth int) *jsonNode {
	k := "stnfz"
	if depth < 3 {
		k = "oaoasn"
	}
	n := &jsonNode{kind: k[r.IntN(len(k))]}
	switch n.kind {
	case 'o':
		keys := []string{"a", "b", "ab", "é", "", "a\"b", "A"}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, key := range keys[:r.IntN(4)] {
			n.keys = append(n.keys, key)
			n.elems = append(n.elems, randJSON(r, depth+1))
		}
	case 'a':
		for range r.IntN(4) {
			n.elems = append(n.elems, randJSON(r, depth+1))
		}
	case 's':
		n.str = strings.ToValidUTF8(strings.ReplaceAll(randText(r), "\x00", "\x01"), "?")
	case 'n':
		n.num = [3]string{"", strings.TrimLeft(randDigits(r, r.IntN(5)), "0"), strings.TrimRight(randDigits(r, r.IntN(4)), "0")}
		if r.IntN(2) == 0 && n.num[1]+n.num[2] != "" {
			n.num[0] = "-"
		}
	}
	return n
}

// render writes n as JSON, choosing at random among equivalent forms:
// member order, white space, escapes, number spellings.
func (n *jsonNode) render(r *rand.Rand, b *strings.Builder) {
	ws := func() {
		b.WriteString([]string{"", "", " ", "\n  ", "\t"}[r.IntN(5)])
	}
	switch n.kind {
	case 'o':
		b.WriteByte('{')
		order := r.Perm(len(n.keys))
		for i, j := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			renderString(r, b, n.keys[j])
			ws()
			b.WriteByte(':')
			ws()
			n.elems[j].render(r, b)
		}
		ws()
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			e.render(r, b)
		}
		b.WriteByte(']')
	case 's':
		renderString(r, b, n.str)
	case 'n':
		sign, intDigits, frac := n.num[0], n.num[1], n.num[2]
		if intDigits+frac == "" {
			sign = ""
		}
		if intDigits == "" {
			intDigits = "0"
		}
		switch r.IntN(3) {
		case 0: // trailing zeros
			b.WriteString(sign + intDigits + "." + frac + "00")
		case 1: // exponent form, the point moved one place left
			if intDigits == "0" {
				b.WriteString(sign + "0." + frac + "0e0")
			} else {
				b.WriteString(sign + intDigits[:len(intDigits)-1])
				if intDigits[:len(intDigits)-1] == "" {
					b.WriteString("0")
				}
				b.WriteString("." + intDigits[len(intDigits)-1:] + frac + "E+1")
			}
		default:
			b.WriteString(sign + intDigits)
			if frac != "" {
				b.WriteString("." + frac)
			}
		}
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	case 'z':
		b.WriteString("null")
	}
}

func renderString(r *rand.Rand, b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteString(`\` + string(c))
		case c < 0x20 || r.IntN(4) == 0:
			if c > 0xffff {
				hi, lo := 0xd800+((c-0x10000)>>10), 0xdc00+((c-0x10000)&0x3ff)
				fmt.Fprintf(b, `\u%04x\u%04X`, hi, lo)
			} else {
				fmt.Fprintf(b, `\u%04x`, c)
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// mutate changes one leaf of n (or adds an element), so that the
// document means something else.
func (n *jsonNode) mutate(r *rand.Rand) *jsonNode {
	c := *n
	c.elems = slices.Clone(n.elems)
	switch {
	case (c.kind == 'o' || c.kind == 'a') && len(c.elems) > 0 && r.IntN(4) > 0:
		i := r.IntN(len(c.elems))
		c.elems[i] = c.elems[i].mutate(r)
	case c.kind == 'o':
		c.keys = append(slices.Clone(c.keys), "new")
		c.elems = append(c.elems, &jsonNode{kind: 'z'})
	case c.kind == 'a':
		c.elems = append(c.elems, &jsonNode{kind: 'z'})
	case c.kind == 's':
		c.str += "x"
	case c.kind == 'n':
		c.num[2] += "1"
	case c.kind == 't':
		c.kind = 'f'
	default:
		c.kind = 't'
	}
	return &c
}

func TestPropertyJSON(t *testing.T) {
	checkProperty(t, func(r *rand.Rand) meaning {
		n := randJSON(r, 0)
		text := func(n *jsonNode) string {
			var b strings.Builder
			n.render(r, &b)
			return b.String()
		}
		first := text(n)
		m := meaning{what: "json " + first}
		m.same = append(m.same, pg(OIDJSONB, first), pg(OIDJSON, text(n)), val(JSON, text(n)), hinted(text(n), col(JSON)))
		m.diff = append(m.diff, pg(OIDJSONB, text(n.mutate(r))), pg(OIDJSONB, text(n.mutate(r))))
		return m
	})
}

// TestPropertyRows: rows compare as a multiset unless ordered.
func TestPropertyRows(t *testing.T) {
	for _, seed := range seeds {
		r := rand.New(rand.NewPCG(seed, 7))
		for range 200 {
			cols := []Column{{Type: Int}, {Type: Text}}
			a := &Answer{Columns: cols, Tag: "SELECT"}
			for range 1 + r.IntN(6) {
				a.Rows = append(a.Rows, []Value{V(Int, strconv.Itoa(r.IntN(3))), V(Text, randText(r))})
			}
			a.RowsAffected = int64(len(a.Rows))
			b := &Answer{Columns: cols, Tag: a.Tag, RowsAffected: a.RowsAffected, Rows: slices.Clone(a.Rows)}
			r.Shuffle(len(b.Rows), func(i, j int) { b.Rows[i], b.Rows[j] = b.Rows[j], b.Rows[i] })
			if a.Digest(false) != b.Digest(false) {
				t.Fatalf("seed %d: shuffled rows changed the unordered digest", seed)
			}
			sameOrder := true
			for i := range a.Rows {
				if !bytes.Equal(rowBytes(a.Rows[i], cols), rowBytes(b.Rows[i], cols)) {
					sameOrder = false
				}
			}
			if (a.Digest(true) == b.Digest(true)) != sameOrder {
				t.Fatalf("seed %d: ordered digest equal=%v, rows in the same order=%v", seed, a.Digest(true) == b.Digest(true), sameOrder)
			}
			// One row repeated in place of another: a different multiset
			// unless the two rows were equal.
			i, j := r.IntN(len(a.Rows)), r.IntN(len(a.Rows))
			c := &Answer{Columns: cols, Tag: a.Tag, RowsAffected: a.RowsAffected, Rows: slices.Clone(a.Rows)}
			c.Rows[i] = c.Rows[j]
			equalRows := bytes.Equal(rowBytes(a.Rows[i], cols), rowBytes(a.Rows[j], cols))
			if (a.Digest(false) == c.Digest(false)) != equalRows {
				t.Fatalf("seed %d: repeating a row: digest equal=%v, rows equal=%v", seed, !equalRows, equalRows)
			}
		}
	}
}

func rowBytes(row []Value, cols []Column) []byte {
	var b []byte
	for j := range row {
		b = appendCanonical(b, &row[j], readingOf(&row[j], &cols[j], nil))
	}
	return b
}
