package answer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Digest is a fixed-size fingerprint of an answer's meaning, used to vote.
type Digest [32]byte

// String returns the first 12 hex digits, enough to tell digests apart in
// logs.
func (d Digest) String() string {
	const hex = "0123456789abcdef"
	var b [12]byte
	for i := range 6 {
		b[2*i] = hex[d[i]>>4]
		b[2*i+1] = hex[d[i]&15]
	}
	return string(b[:])
}

// Digest returns the fingerprint of a's meaning. Column names and engine
// type details are left out (engines name expressions differently); the
// values are compared in canonical form. Rows are compared as a multiset
// unless ordered is true.
func (a *Answer) Digest(ordered bool) Digest {
	h := sha256.New()
	var buf bytes.Buffer
	writeStr := func(s string) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(s)))
		buf.Write(l[:])
		buf.WriteString(s)
	}
	writeStr(verbOf(a.Tag))
	writeStr(strconv.FormatInt(a.RowsAffected, 10))
	writeStr(strconv.Itoa(len(a.Columns)))
	h.Write(buf.Bytes())
	rows := make([][]byte, len(a.Rows))
	for i, r := range a.Rows {
		var rb bytes.Buffer
		for j, v := range r {
			t := v.Type
			if t == Unknown && j < len(a.Columns) {
				t = a.Columns[j].Type
			}
			appendCanonical(&rb, t, v)
		}
		rows[i] = rb.Bytes()
	}
	if !ordered {
		slices.SortFunc(rows, bytes.Compare)
	}
	for _, r := range rows {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(r)))
		h.Write(l[:])
		h.Write(r)
	}
	var d Digest
	h.Sum(d[:0])
	return d
}

// verbOf returns the command tag without its counts.
func verbOf(tag string) string {
	if i := strings.IndexByte(tag, ' '); i > 0 {
		switch tag[:i] {
		case "INSERT", "SELECT", "UPDATE", "DELETE", "MERGE", "FETCH", "MOVE", "COPY":
			return tag[:i]
		}
	}
	return tag
}

// appendCanonical writes one value in canonical form: a family byte and
// the value's canonical text, length-prefixed. Numbers of every width and
// exact decimals share one form, so that 5, 5.0 and 5.00 agree.
func appendCanonical(b *bytes.Buffer, t Type, v Value) {
	var fam byte
	text := v.Text
	switch {
	case v.Null:
		b.WriteByte(0)
		return
	case t == Int || t == Numeric:
		fam, text = 'n', CanonicalDecimal(text)
	case t == Float:
		fam = 'f'
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			text = strconv.FormatFloat(f, 'g', -1, 64)
			if math.IsNaN(f) {
				text = "NaN"
			}
		}
	case t == Bool:
		fam = 'b'
	case t == Bytes:
		fam = 'x'
	default:
		fam = 's'
	}
	b.WriteByte(fam)
	var l [4]byte
	binary.BigEndian.PutUint32(l[:], uint32(len(text)))
	b.Write(l[:])
	b.WriteString(text)
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
