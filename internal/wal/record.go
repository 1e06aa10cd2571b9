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
	// DDL says the statement changes the schema (the caller's
	// classification, kept for replay and for rebuilding the schema
	// catalog).
	DDL bool
	// Verb is the statement's command tag verb ("INSERT", "CREATE
	// TABLE"): drivers read it to tag the answer and to notice schema
	// changes. Empty in records of format version 1.
	Verb string
	// Forms are the statement as each dialect ran it: the text and the
	// arguments the replicas of that dialect were sent, pins included.
	// Replay sends exactly these, so that it never depends on the schema
	// of its own day. Empty in records of format version 1, which kept
	// the client's text only.
	Forms []Form
}

// Form is one statement as the replicas of one dialect ran it.
type Form struct {
	// Dialect is the caller's tag for the dialect; at most one form of a
	// statement has a given tag, and 0 is not a tag.
	Dialect uint8
	// SQL is the text sent, placeholders written the dialect's way.
	SQL string
	// Args are the values sent, in the order the placeholders take them.
	Args []Value
	// Rows says the statement returns rows (the driver reads a result
	// set rather than a count).
	Rows bool
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

// formatVersion is the first byte of every payload written. A decoder
// refuses versions it does not know instead of guessing; it still reads
// version 1 (no DDL flag, no forms), which only older shepherds wrote.
const (
	formatVersion   = 2
	formatVersionV1 = 1
)

// Flag bits. Unknown bits are refused, so that a payload has exactly one
// meaning and decoding then encoding gives back the same bytes.
const (
	stmtWrites = 1 << 0
	stmtDDL    = 1 << 1 // version 2 on
	valueNull  = 1 << 0
	formRows   = 1 << 0
)

// Smallest encodings, used to reject counts the remaining bytes cannot
// hold before anything is allocated for them.
const (
	minStatementBytes = 4 // flags, barrier, SQL length, argument count
	minValueBytes     = 2 // flags, type
	minFormBytes      = 4 // dialect, flags, text reference, arguments reference
)

// errDecode is wrapped by every decoding failure.
var errDecode = errors.New("bad record encoding")

// appendRecord appends the payload encoding of r to b, in the current
// format version.
//
// Layout (uvarint is encoding/binary's unsigned varint, str is a uvarint
// length followed by that many bytes):
//
//	payload   = version:byte txn:uvarint barrier:uvarint count:uvarint statement*
//	statement = flags:byte barrier:uvarint sql:str count:uvarint value* verb:str forms:uvarint form*
//	form      = dialect:byte flags:byte text:ref [sql:str] args:ref [count:uvarint value*]
//	value     = flags:byte type:byte [text:str, absent for NULL]
//
// A ref keeps the forms small: most dialects run the client's text or
// another dialect's with the same arguments. It is 0 when the literal
// follows, or k >= 1 for "the same as the k-th text (argument list) of
// this statement so far", counting the statement's own sql (args) first
// and then each form's, references included. The encoder always refers
// to the first equal one, and never writes a literal equal to an earlier
// one, so the encoding stays unique.
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
		if st.DDL {
			flags |= stmtDDL
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, st.Barrier)
		b = appendString(b, st.SQL)
		b = appendValues(b, st.Args)
		b = appendString(b, st.Verb)
		b = binary.AppendUvarint(b, uint64(len(st.Forms)))
		for j := range st.Forms {
			f := &st.Forms[j]
			var flags byte
			if f.Rows {
				flags |= formRows
			}
			b = append(b, f.Dialect, flags)
			if k := textRef(st, j); k > 0 {
				b = binary.AppendUvarint(b, uint64(k))
			} else {
				b = append(b, 0)
				b = appendString(b, f.SQL)
			}
			if k := argsRef(st, j); k > 0 {
				b = binary.AppendUvarint(b, uint64(k))
			} else {
				b = append(b, 0)
				b = appendValues(b, f.Args)
			}
		}
	}
	return b
}

// textRef returns the ref for form j's text: 1 + the index of the first
// equal text before it (the statement's own first), or 0 for none.
func textRef(st *Statement, j int) int {
	if st.Forms[j].SQL == st.SQL {
		return 1
	}
	for i := range j {
		if st.Forms[i].SQL == st.Forms[j].SQL {
			return i + 2
		}
	}
	return 0
}

// argsRef is textRef for argument lists.
func argsRef(st *Statement, j int) int {
	if sameValues(st.Forms[j].Args, st.Args) {
		return 1
	}
	for i := range j {
		if sameValues(st.Forms[i].Args, st.Forms[j].Args) {
			return i + 2
		}
	}
	return 0
}

func sameValues(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func appendValues(b []byte, vs []Value) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = appendValue(b, v)
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
	d.version = d.byte()
	if d.err == nil && d.version != formatVersion && d.version != formatVersionV1 {
		return Record{}, fmt.Errorf("%w: format version %d, want %d (or %d)", errDecode, d.version, formatVersion, formatVersionV1)
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
	b       []byte
	err     error
	version byte
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errDecode}, args...)...)
	}
	d.b = nil
}

func (d *decoder) statement(st *Statement) {
	flags := d.byte()
	known := byte(stmtWrites | stmtDDL)
	if d.version == formatVersionV1 {
		known = stmtWrites
	}
	if flags&^known != 0 {
		d.fail("statement flags %#x", flags)
	}
	st.Writes = flags&stmtWrites != 0
	st.DDL = flags&stmtDDL != 0
	st.Barrier = d.uvarint()
	st.SQL = d.string()
	st.Args = d.values()
	if d.version == formatVersionV1 {
		return
	}
	st.Verb = d.string()
	n := d.count(minFormBytes)
	if n > 0 {
		st.Forms = make([]Form, n)
	}
	for j := range st.Forms {
		d.form(st, j)
	}
}

// form decodes form j of st, resolving its references against the
// statement and the forms before it, and refuses what the encoder would
// not have written: a repeated dialect, a reference that is not to the
// first equal entry, a literal equal to an earlier entry.
func (d *decoder) form(st *Statement, j int) {
	f := &st.Forms[j]
	f.Dialect = d.byte()
	flags := d.byte()
	if flags&^formRows != 0 {
		d.fail("form flags %#x", flags)
	}
	f.Rows = flags&formRows != 0
	if d.err == nil && f.Dialect == 0 {
		d.fail("form of dialect 0")
	}
	for i := range j {
		if d.err == nil && st.Forms[i].Dialect == f.Dialect {
			d.fail("two forms of dialect %d", f.Dialect)
		}
	}
	k := d.ref(j)
	switch {
	case k == 1:
		f.SQL = st.SQL
	case k > 1:
		f.SQL = st.Forms[k-2].SQL
	default:
		f.SQL = d.string()
	}
	if d.err == nil && textRef(st, j) != k {
		d.fail("form text of dialect %d not encoded canonically", f.Dialect)
	}
	k = d.ref(j)
	switch {
	case k == 1:
		f.Args = st.Args
	case k > 1:
		f.Args = st.Forms[k-2].Args
	default:
		f.Args = d.values()
	}
	if d.err == nil && argsRef(st, j) != k {
		d.fail("form arguments of dialect %d not encoded canonically", f.Dialect)
	}
}

// ref reads a reference of form j: 0, or 1 to j+1.
func (d *decoder) ref(j int) int {
	k := d.uvarint()
	if k > uint64(j+1) {
		d.fail("reference %d in form %d", k, j)
		return 0
	}
	return int(k)
}

func (d *decoder) values() []Value {
	n := d.count(minValueBytes)
	if n == 0 {
		return nil
	}
	vs := make([]Value, n)
	for i := range vs {
		vs[i] = d.value()
	}
	return vs
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
// above the record's, a form of dialect 0, two forms of one dialect.
func (r *Record) validate() error {
	for i := range r.Statements {
		st := &r.Statements[i]
		if b := st.Barrier; b > r.Barrier {
			return fmt.Errorf("wal: statement %d of txn %d has barrier %d above the record's %d", i, r.Txn, b, r.Barrier)
		}
		for j, f := range st.Forms {
			if f.Dialect == 0 {
				return fmt.Errorf("wal: statement %d of txn %d has a form of dialect 0", i, r.Txn)
			}
			for _, g := range st.Forms[:j] {
				if g.Dialect == f.Dialect {
					return fmt.Errorf("wal: statement %d of txn %d has two forms of dialect %d", i, r.Txn, f.Dialect)
				}
			}
		}
	}
	return nil
}
