package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// sampleRecords covers the corners of the encoding: no statements, NULLs,
// empty and binary text, multi-byte varints, the largest values.
func sampleRecords() []Record {
	return []Record{
		{Txn: 0, Barrier: 0},
		{Txn: 1, Barrier: 1, Statements: []Statement{{SQL: "SELECT 1"}}},
		{Txn: 1 << 40, Barrier: 300, Statements: []Statement{
			{SQL: "INSERT INTO t VALUES ($1, $2, $3)", Writes: true, Barrier: 299, Args: []Value{
				{Type: 3, Text: "42"},
				{Null: true, Type: 7},
				{Type: 255, Text: "\x00\xff bytea \u00e9"},
			}},
			{SQL: "", Args: []Value{{Text: ""}}},
			{SQL: strings.Repeat("x", 300), Writes: true, Barrier: 300},
		}},
		{Txn: ^uint64(0), Barrier: ^uint64(0), Statements: []Statement{{SQL: "COMMIT-less", Barrier: ^uint64(0)}}},
		// Forms: the client's text and arguments again, another form's,
		// literals, and every reference kind.
		{Txn: 7, Barrier: 9, Statements: []Statement{
			{SQL: "CREATE TABLE t (a int)", Writes: true, DDL: true, Verb: "CREATE TABLE", Forms: []Form{
				{Dialect: 1, SQL: "CREATE TABLE t (a int)"},
				{Dialect: 2, SQL: "CREATE TABLE `t` (`a` INT)"},
				{Dialect: 3, SQL: "CREATE TABLE `t` (`a` INT)"},
			}},
			{SQL: "INSERT INTO t VALUES ($1)", Writes: true, Barrier: 8, Args: []Value{{Type: 3, Text: "1"}}, Forms: []Form{
				{Dialect: 3, SQL: "INSERT INTO t VALUES (?)", Args: []Value{{Type: 3, Text: "1"}}},
				{Dialect: 1, SQL: "INSERT INTO t VALUES ($1)", Args: []Value{{Type: 3, Text: "1"}, {Null: true}}},
				{Dialect: 2, SQL: "INSERT INTO t VALUES (?)", Args: []Value{{Type: 3, Text: "1"}, {Null: true}}, Rows: true},
			}},
			{SQL: "SELECT 1", Forms: []Form{{Dialect: 9, SQL: "", Rows: true}}},
		}},
	}
}

// appendRecordV1 is the encoder of format version 1, which older
// shepherds wrote: no DDL flag, no forms.
func appendRecordV1(b []byte, r *Record) []byte {
	b = append(b, formatVersionV1)
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
		b = appendValues(b, st.Args)
	}
	return b
}

// TestRecordV1: records of format version 1 still decode, to the same
// record without forms, so a log written before forms existed is read
// (replaying one of them is the caller's decision).
func TestRecordV1(t *testing.T) {
	for _, r := range sampleRecords() {
		for i := range r.Statements {
			r.Statements[i].Forms, r.Statements[i].DDL, r.Statements[i].Verb = nil, false, ""
		}
		p := appendRecordV1(nil, &r)
		got, err := decodeRecord(p)
		if err != nil {
			t.Fatalf("decode %+v: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("version 1:\n got %+v\nwant %+v", got, r)
		}
	}
	// The DDL flag did not exist in version 1.
	if _, err := decodeRecord([]byte{1, 0, 0, 1, stmtDDL, 0, 0, 0}); !errors.Is(err, errDecode) {
		t.Errorf("DDL flag in version 1: err %v, want errDecode", err)
	}
}

// TestFormsShareText: a form equal to the client's statement, or to
// another form, costs a reference, not a second copy.
func TestFormsShareText(t *testing.T) {
	long := strings.Repeat("x", 1000)
	args := []Value{{Text: long}}
	r := Record{Txn: 1, Barrier: 1, Statements: []Statement{{SQL: long, Args: args, Writes: true, Forms: []Form{
		{Dialect: 1, SQL: long, Args: args},
		{Dialect: 2, SQL: long + "!", Args: args},
		{Dialect: 3, SQL: long + "!", Args: args},
	}}}}
	if n := len(appendRecord(nil, &r)); n > 3*1000+100 {
		t.Errorf("record of %d bytes: the forms were not shared", n)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range sampleRecords() {
		p := appendRecord(nil, &r)
		got, err := decodeRecord(p)
		if err != nil {
			t.Fatalf("decode %+v: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
		}
		// Every proper prefix fails to decode, and so does a trailing byte.
		for n := range len(p) {
			if _, err := decodeRecord(p[:n]); !errors.Is(err, errDecode) {
				t.Fatalf("prefix of %d/%d bytes: err %v, want errDecode", n, len(p), err)
			}
		}
		if _, err := decodeRecord(append(p, 0)); !errors.Is(err, errDecode) {
			t.Fatalf("trailing byte: err %v, want errDecode", err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, p := range map[string][]byte{
		"empty":              {},
		"unknown version":    {3, 0, 0, 0},
		"version 0":          {0, 0, 0, 0},
		"non-minimal varint": {1, 0x80, 0x00, 0, 0},
		"statement flags":    {1, 0, 0, 1, 2, 0, 0, 0},
		"value flags":        {1, 0, 0, 1, 0, 0, 0, 1, 2, 0},
		"huge count":         {1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"string too long":    {1, 0, 0, 1, 0, 0, 5, 'a', 0},
		// version 2: statement "s", no args, no verb, then forms.
		"form dialect 0":     {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 1, 0, 0, 1, 1},
		"form flags":         {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 1, 1, 2, 1, 1},
		"two forms, dialect": {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 2, 1, 0, 1, 1, 1, 0, 1, 1},
		"reference ahead":    {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 1, 1, 0, 2, 1},
		"literal repeats":    {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 1, 1, 0, 0, 1, 's', 1},
		"args literal empty": {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 1, 1, 0, 1, 0, 0},
		"later reference":    {2, 0, 0, 1, 0, 0, 1, 's', 0, 0, 2, 1, 0, 1, 1, 2, 0, 2, 1},
	} {
		if _, err := decodeRecord(p); !errors.Is(err, errDecode) {
			t.Errorf("%s: err %v, want errDecode", name, err)
		}
	}
}

func TestFrame(t *testing.T) {
	r := sampleRecords()[2]
	f := appendFrame(nil, &r)
	payload, size, damage := nextFrame(f)
	if damage != "" || size != len(f) || !bytes.Equal(payload, f[frameHeaderBytes:]) {
		t.Fatalf("nextFrame: size %d damage %q", size, damage)
	}
	for n := range len(f) {
		if _, _, damage := nextFrame(f[:n]); damage == "" {
			t.Fatalf("a frame cut to %d/%d bytes read as intact", n, len(f))
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the segment scanner and the payload
// decoder. Neither may panic, and whatever decodes must encode back to
// the same bytes: the format has one encoding per record.
func FuzzDecode(f *testing.F) {
	var seg []byte
	for _, r := range sampleRecords() {
		f.Add(appendRecord(nil, &r))
		seg = appendFrame(seg, &r)
	}
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := decodeRecord(data); err == nil {
			enc := appendRecord
			if data[0] == formatVersionV1 {
				enc = appendRecordV1
			}
			if again := enc(nil, &r); !bytes.Equal(again, data) {
				t.Fatalf("decode then encode changed the bytes:\n in %x\nout %x", data, again)
			}
		}
		var order barrierOrder
		s, err := scanSegment(data, segment{path: "fuzz"}, &order)
		if err == nil && s.damage == "" && s.end != int64(len(data)) {
			t.Fatalf("clean scan ended at %d of %d", s.end, len(data))
		}
		for _, r := range s.records {
			if r.validate() != nil {
				t.Fatalf("scan returned an invalid record %+v", r)
			}
		}
	})
}

// TestEncodeDecode: the exported pair gives back every sample record, and
// refuses what Enqueue refuses and what the decoder refuses, the latter
// as ErrCorrupt.
func TestEncodeDecode(t *testing.T) {
	for _, r := range sampleRecords() {
		p, err := Encode(r)
		if err != nil {
			t.Fatalf("encode %+v: %v", r, err)
		}
		if !bytes.Equal(p, appendRecord(nil, &r)) {
			t.Fatalf("Encode differs from the log's payload for %+v", r)
		}
		got, err := Decode(p)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("Decode: %+v, %v; want %+v", got, err, r)
		}
		if _, err := Decode(p[:len(p)-1]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode of a cut payload: err %v, want ErrCorrupt", err)
		}
	}
	bad := Record{Txn: 1, Barrier: 1, Statements: []Statement{{SQL: "x", Barrier: 2}}}
	if _, err := Encode(bad); err == nil {
		t.Fatal("Encode took a statement barrier above the record's")
	}
}
