package answer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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
// values are compared in canonical form (see the package doc). Rows are
// compared as a multiset unless ordered is true.
func (a *Answer) Digest(ordered bool) Digest {
	return a.DigestWith(ordered, nil)
}

// DigestWith is Digest with hints about the columns: hints[j], when
// present and of a family other than Unknown, says what column j is in
// PostgreSQL terms (family, and OID where it matters: character(n),
// real). A value the engine could only type as text is then read as a
// value of the hinted family, so that, say, SQLite's text
// "2026-01-01 12:00:00+02" for an expression matches PostgreSQL's
// timestamptz. The caller must pass the same hints for every replica's
// answer to one statement; hints may be shorter than the row.
func (a *Answer) DigestWith(ordered bool, hints []Column) Digest {
	return a.digest(ordered, nil, hints)
}

// DigestSorted is DigestWith for a query whose ORDER BY is not total:
// keys are the output columns (0-based) its leading sort keys are, and
// the rows are compared as a sequence of groups of rows that tie on
// them, each group as a multiset. Replicas that return the same rows in
// any order the ORDER BY allows agree; one that returns a row out of
// that order does not. No keys: a multiset, as DigestWith(false).
func (a *Answer) DigestSorted(keys []int, hints []Column) Digest {
	return a.digest(false, keys, hints)
}

// digest is DigestWith and DigestSorted: with ordered false, rows are
// sorted within each run of rows that are equal on the keys' columns
// (the whole answer when there are no keys).
func (a *Answer) digest(ordered bool, keys []int, hints []Column) Digest {
	h := sha256.New()
	var head []byte
	head = appendField(head, verbOf(a.Tag))
	head = appendField(head, strconv.FormatInt(a.RowsAffected, 10))
	head = appendField(head, strconv.Itoa(len(a.Columns)))
	h.Write(head)

	// Every row's canonical bytes go into one buffer; spans marks them.
	// Canonical forms are about as long as the text plus 5 bytes.
	size := 0
	for _, r := range a.Rows {
		for j := range r {
			size += len(r[j].Text) + 8
		}
	}
	buf := make([]byte, 0, size)
	spans := make([][2]int, len(a.Rows))
	for i, r := range a.Rows {
		start := len(buf)
		for j := range r {
			var col, hint *Column
			if j < len(a.Columns) {
				col = &a.Columns[j]
			}
			if j < len(hints) {
				hint = &hints[j]
			}
			buf = appendCanonical(buf, &r[j], readingOf(&r[j], col, hint))
		}
		spans[i] = [2]int{start, len(buf)}
	}
	if !ordered {
		byRow := func(x, y [2]int) int {
			return bytes.Compare(buf[x[0]:x[1]], buf[y[0]:y[1]])
		}
		if len(keys) == 0 {
			slices.SortFunc(spans, byRow)
		} else {
			for _, run := range a.tieRuns(keys, hints) {
				slices.SortFunc(spans[run[0]:run[1]], byRow)
			}
		}
	}
	var l [4]byte
	for _, s := range spans {
		binary.BigEndian.PutUint32(l[:], uint32(s[1]-s[0]))
		h.Write(l[:])
		h.Write(buf[s[0]:s[1]])
	}
	var d Digest
	h.Sum(d[:0])
	return d
}

// appendField appends s with its length in front.
func appendField(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
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

// tieRuns returns the runs [from, to) of consecutive rows whose values in
// the key columns are equal (compared canonically).
func (a *Answer) tieRuns(keys []int, hints []Column) [][2]int {
	var runs [][2]int
	var prev, cur []byte
	for i, r := range a.Rows {
		cur = cur[:0]
		for _, j := range keys {
			if j < 0 || j >= len(r) {
				continue
			}
			var col, hint *Column
			if j < len(a.Columns) {
				col = &a.Columns[j]
			}
			if j < len(hints) {
				hint = &hints[j]
			}
			cur = appendCanonical(cur, &r[j], readingOf(&r[j], col, hint))
		}
		if i > 0 && bytes.Equal(cur, prev) {
			runs[len(runs)-1][1] = i + 1
		} else {
			runs = append(runs, [2]int{i, i + 1})
		}
		prev, cur = cur, prev
	}
	return runs
}
