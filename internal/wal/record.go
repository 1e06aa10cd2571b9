package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Record is one committed transaction, as the log keeps it.
type Record struct {
	// Txn is shepherd's id for the transaction.
	Txn uint64
	// Barrier is the transaction's place in the commit order. It grows
	// strictly from one record to the next.
	Barrier uint64
	// Statements are the transaction's statements in the order the
	// client sent them, COMMIT itself excluded: a record exists only for
	// a transaction that committed.
	Statements []Statement
}

// Statement is one statement of a committed transaction.
type Statement struct {
	// SQL is the text as the client sent it (PostgreSQL dialect).
	SQL string
	// Args are the bound parameter values, $1 first.
	Args []Value
	// Writes says the statement may change state. Replay skips the
	// statements that do not.
	Writes bool
	// Barrier is the commit barrier when the primary answered the
	// statement (commit barrier scheduling); 0 in modes that have none.
	// It is at most the record's Barrier.
	Barrier uint64
}

// Value is one parameter value, in PostgreSQL text form (bytea as raw
// bytes). Text is not stored for a NULL.
type Value struct {
	Null bool
	// Type is the caller's tag for the value's type; the log stores it
	// and gives it back untouched.
	Type uint8
	Text string
}

// formatVersion is the first byte of every payload. A decoder refuses
// versions it does not know instead of guessing.
const formatVersion = 1

// Flag bits. Unknown bits are refused, so that a payload has exactly one
// meaning and decoding then encoding gives back the same bytes.
const (
	stmtWrites = 1 << 0
	valueNull  = 1 << 0
)

// Smallest encodings, used to reject counts the remaining bytes cannot
// hold before anything is allocated for them.
const (
	minStatementBytes = 4 // flags, barrier, SQL length, argument count
	minValueBytes     = 2 // flags, type
)

// errDecode is wrapped by every decoding failure.
var errDecode = errors.New("bad record encoding")

// appendRecord appends the payload encoding of r to b.
//
// Layout (uvarint is encoding/binary's unsigned varint, str is a uvarint
// length followed by that many bytes):
//
//	payload   = version:byte txn:uvarint barrier:uvarint count:uvarint statement*
//	statement = flags:byte barrier:uvarint sql:str count:uvarint value*
//	value     = flags:byte type:byte [text:str, absent for NULL]
func appendRecord(b []byte, r *Record) []byte {
	b = append(b, formatVersion)
	b = binary.AppendUvarint(b, r.Txn)
	b = binary.AppendUvarint(b, r.Barrier)
	b = binary.AppendUvarint(b, uint64(len(r.Statements)))
	for i := range r.Statements {
		st := &r.Statements[i]
		var flags byte
		if st.Writes {
			flags |= stmtWrites
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, st.Barrier)
		b = appendString(b, st.SQL)
		b = binary.AppendUvarint(b, uint64(len(st.Args)))
		for _, v := range st.Args {
			b = appendValue(b, v)
		}
	}
	return b
}

func appendValue(b []byte, v Value) []byte {
	if v.Null {
		return append(b, valueNull, v.Type)
	}
	b = append(b, 0, v.Type)
	return appendString(b, v.Text)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decodeRecord decodes a payload written by appendRecord. It never
// panics, allocates no more than a small multiple of len(p), and refuses
// trailing bytes, unknown flags and non-minimal varints.
func decodeRecord(p []byte) (Record, error) {
	d := decoder{b: p}
	if v := d.byte(); d.err == nil && v != formatVersion {
		return Record{}, fmt.Errorf("%w: format version %d, want %d", errDecode, v, formatVersion)
	}
	var r Record
	r.Txn = d.uvarint()
	r.Barrier = d.uvarint()
	n := d.count(minStatementBytes)
	if n > 0 {
		r.Statements = make([]Statement, n)
	}
	for i := range r.Statements {
		d.statement(&r.Statements[i])
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return Record{}, d.err
	}
	return r, nil
}

// decoder reads a payload front to back. The first failure sticks: every
// later read returns a zero value, so callers check err once at the end.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errDecode}, args...)...)
	}
	d.b = nil
}

func (d *decoder) statement(st *Statement) {
	flags := d.byte()
	if flags&^stmtWrites != 0 {
		d.fail("statement flags %#x", flags)
	}
	st.Writes = flags&stmtWrites != 0
	st.Barrier = d.uvarint()
	st.SQL = d.string()
	n := d.count(minValueBytes)
	if n > 0 {
		st.Args = make([]Value, n)
	}
	for i := range st.Args {
		st.Args[i] = d.value()
	}
}

func (d *decoder) value() Value {
	flags := d.byte()
	if flags&^valueNull != 0 {
		d.fail("value flags %#x", flags)
	}
	v := Value{Null: flags&valueNull != 0, Type: d.byte()}
	if !v.Null {
		v.Text = d.string()
	}
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	if n != uvarintLen(v) {
		d.fail("non-minimal varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an element count and checks that the remaining bytes can
// hold that many elements of at least minBytes each.
func (d *decoder) count(minBytes int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/minBytes) {
		d.fail("count %d exceeds the %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("string of %d bytes exceeds the %d bytes left", n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// uvarintLen is the length of the minimal uvarint encoding of v.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// validate checks what Append promises to refuse: a statement barrier
// above the record's.
func (r *Record) validate() error {
	for i := range r.Statements {
		if b := r.Statements[i].Barrier; b > r.Barrier {
			return fmt.Errorf("wal: statement %d of txn %d has barrier %d above the record's %d", i, r.Txn, b, r.Barrier)
		}
	}
	return nil
}
