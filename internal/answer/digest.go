package answer

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math/bits"
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

// digest is DigestWith and DigestSorted, over a Digester fed a's rows:
// a whole answer and the same rows streamed get the same digest.
func (a *Answer) digest(ordered bool, keys []int, hints []Column) Digest {
	d := NewDigester(ordered, keys, hints)
	for _, r := range a.Rows {
		d.Row(a.Columns, r)
	}
	return d.Sum(a)
}

// multisetKey keys the row hashes a multiset digest adds up. The sum of
// unkeyed hashes could be made to collide by whoever chooses many rows
// (a generalised birthday search); a replica cannot search without the
// key, which never leaves the process. Digests are compared only inside
// one process.
var multisetKey = func() [32]byte {
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("answer: no randomness for the digest key: " + err.Error())
	}
	return k
}()

// Digester computes an answer's digest from its rows one at a time, as an
// engine sends them, so that no replica's answer has to be held whole to
// be voted on. Rows compared as a multiset (not ordered, or within a
// group of rows that tie on the sort keys) are hashed one by one with a
// key and added up, modulo 2^256: the sum is the same in any order.
// Ordered rows, and the groups' sums in order, go into one sequential
// hash. The zero value is not usable: see NewDigester.
type Digester struct {
	ordered bool
	keys    []int
	hints   []Column

	seq   hash.Hash // ordered rows; the groups' sums, in order
	group [4]uint64 // the current group's sum of keyed row hashes
	open  bool      // a group has rows not yet folded into seq
	rows  int64
	buf   []byte // the current row's canonical bytes
	key   []byte // the current row's sort-key bytes
	prev  []byte // the previous row's sort-key bytes
	rb    []byte // what is hashed of the current row
}

// NewDigester returns a Digester for rows compared in order (ordered),
// as groups of rows tying on the columns keys, each a multiset (keys not
// empty), or as one multiset. hints are as for DigestWith.
func NewDigester(ordered bool, keys []int, hints []Column) *Digester {
	scratch := make([]byte, 0, 1024)
	return &Digester{ordered: ordered, keys: keys, hints: hints, seq: sha256.New(),
		buf: scratch[:0:512], rb: scratch[512:512]}
}

// Row adds one row, whose columns are cols (as the engine described
// them; the same for every row of the answer).
func (d *Digester) Row(cols []Column, r []Value) {
	d.rows++
	d.buf = d.buf[:0]
	for j := range r {
		d.buf = appendCanonical(d.buf, &r[j], d.reading(&r[j], cols, j))
	}
	if d.ordered {
		d.rb = binary.BigEndian.AppendUint32(d.rb[:0], uint32(len(d.buf)))
		d.seq.Write(d.rb)
		d.seq.Write(d.buf)
		return
	}
	if len(d.keys) > 0 {
		d.key = d.key[:0]
		for _, j := range d.keys {
			if j < 0 || j >= len(r) {
				continue
			}
			d.key = appendCanonical(d.key, &r[j], d.reading(&r[j], cols, j))
		}
		if d.open && !bytes.Equal(d.key, d.prev) {
			d.fold()
		}
		d.prev, d.key = d.key, d.prev
	}
	d.rb = append(d.rb[:0], multisetKey[:]...)
	d.rb = binary.BigEndian.AppendUint32(d.rb, uint32(len(d.buf)))
	d.rb = append(d.rb, d.buf...)
	h := sha256.Sum256(d.rb)
	var carry uint64
	for i := range 4 {
		d.group[i], carry = bits.Add64(d.group[i], binary.BigEndian.Uint64(h[8*i:]), carry)
	}
	d.open = true
}

// reading is how value v of column j is read canonically.
func (d *Digester) reading(v *Value, cols []Column, j int) reading {
	var col, hint *Column
	if j < len(cols) {
		col = &cols[j]
	}
	if j < len(d.hints) {
		hint = &d.hints[j]
	}
	return readingOf(v, col, hint)
}

// fold ends the current group of tying rows: its sum goes into the
// sequential hash.
func (d *Digester) fold() {
	d.rb = append(d.rb[:0], 'g')
	for i := range 4 {
		d.rb = binary.BigEndian.AppendUint64(d.rb, d.group[i])
	}
	d.seq.Write(d.rb)
	d.group = [4]uint64{}
	d.open = false
}

// Rows returns how many rows were added.
func (d *Digester) Rows() int64 { return d.rows }

// Sum returns the digest of the rows added with a's command tag, row
// count and number of columns (a's own rows are not read: they are the
// ones added, or were).
func (d *Digester) Sum(a *Answer) Digest {
	if d.open || (!d.ordered && d.rows == 0) {
		d.fold()
	}
	h := sha256.New()
	var head []byte
	head = appendField(head, verbOf(a.Tag))
	head = appendField(head, strconv.FormatInt(a.RowsAffected, 10))
	head = appendField(head, strconv.Itoa(len(a.Columns)))
	head = appendField(head, strconv.FormatInt(d.rows, 10))
	h.Write(head)
	h.Write(d.seq.Sum(nil))
	var out Digest
	h.Sum(out[:0])
	return out
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
