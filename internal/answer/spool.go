package answer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// RowSize is what a row is counted as in memory: its values' texts and
// the headers around them.
func RowSize(r []Value) int64 {
	n := int64(24 + 24*len(r))
	for i := range r {
		n += int64(len(r[i].Text))
	}
	return n
}

// ErrSpoolFull says a Spool that may not spill reached its memory bound.
var ErrSpoolFull = errors.New("answer: rows pass the memory bound")

// Spool collects an answer's rows as an engine sends them: in memory up
// to a bound, and, when spilling is allowed, the rest in an unnamed
// temporary file (removed as soon as it is made, so nothing outlives the
// process or the Spool's file handle). A Spool is used by one goroutine
// at a time.
type Spool struct {
	limit int64
	dir   string
	spill bool

	mem  [][]Value
	size int64
	f    *os.File
	w    *bufio.Writer
	disk int64 // rows written to f
	enc  []byte
}

// NewSpool returns a Spool that keeps up to limit bytes of rows in
// memory (RowSize); beyond, with spill, rows go to a file in dir (the
// system's temporary directory when empty), and without spill Add fails
// with ErrSpoolFull. A limit of 0 or less keeps every row in memory.
func NewSpool(limit int64, spill bool, dir string) *Spool {
	return &Spool{limit: limit, spill: spill, dir: dir}
}

// Add appends a row; the Spool may keep r.
func (s *Spool) Add(r []Value) error {
	if s.f == nil {
		sz := RowSize(r)
		if s.limit <= 0 || s.size+sz <= s.limit {
			s.mem = append(s.mem, r)
			s.size += sz
			return nil
		}
		if !s.spill {
			return ErrSpoolFull
		}
		f, err := os.CreateTemp(s.dir, "shepherd-answer-*")
		if err != nil {
			return fmt.Errorf("answer: spilling rows: %w", err)
		}
		os.Remove(f.Name())
		s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	s.enc = appendRow(s.enc[:0], r)
	if _, err := s.w.Write(s.enc); err != nil {
		return fmt.Errorf("answer: spilling rows: %w", err)
	}
	s.disk++
	return nil
}

// Size returns the bytes of rows kept in memory.
func (s *Spool) Size() int64 { return s.size }

// Finish ends the rows: it returns those in memory and, when some were
// spilled, the reader of the others (which must be closed).
func (s *Spool) Finish() ([][]Value, *Spilled, error) {
	if s.f == nil {
		return s.mem, nil, nil
	}
	if err := s.w.Flush(); err != nil {
		s.f.Close()
		return nil, nil, fmt.Errorf("answer: spilling rows: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		s.f.Close()
		return nil, nil, fmt.Errorf("answer: spilling rows: %w", err)
	}
	sp := &Spilled{f: s.f, r: bufio.NewReaderSize(s.f, 64<<10), left: s.disk, total: s.disk}
	s.f = nil
	return s.mem, sp, nil
}

// Discard drops the rows and the file.
func (s *Spool) Discard() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.mem = nil
}

// Spilled is the rows of an answer that were written to disk, read back
// in order. Map, when set, is applied to each row read (the session
// shapes values as PostgreSQL prints them). Used by one goroutine at a
// time.
type Spilled struct {
	f     *os.File
	r     *bufio.Reader
	left  int64
	total int64
	Map   func([]Value) []Value
}

// Len returns the rows not read yet (0 for a nil Spilled, as the
// other methods take one: an answer without spilled rows).
func (s *Spilled) Len() int64 {
	if s == nil {
		return 0
	}
	return s.left
}

// Total returns how many rows were spilled.
func (s *Spilled) Total() int64 { return s.total }

// Next returns the next row, or io.EOF after the last.
func (s *Spilled) Next() ([]Value, error) {
	if s == nil || s.left == 0 {
		return nil, io.EOF
	}
	r, err := readRow(s.r)
	if err != nil {
		return nil, fmt.Errorf("answer: reading spilled rows: %w", err)
	}
	s.left--
	if s.Map != nil {
		r = s.Map(r)
	}
	return r, nil
}

// Close releases the file; the rows not read are dropped.
func (s *Spilled) Close() {
	if s != nil && s.f != nil {
		s.f.Close()
		s.f = nil
		s.left = 0
	}
}

// appendRow encodes r: the number of values, then each as a flag byte
// (NULL, or the type + 1) and, when not NULL, its text's length and text.
func appendRow(dst []byte, r []Value) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(r)))
	for i := range r {
		if r[i].Null {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, byte(r[i].Type)+1)
		dst = binary.AppendUvarint(dst, uint64(len(r[i].Text)))
		dst = append(dst, r[i].Text...)
	}
	return dst
}

// readRow decodes one row appendRow wrote.
func readRow(br *bufio.Reader) ([]Value, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, errors.New("corrupt row")
	}
	r := make([]Value, n)
	for i := range r {
		flag, err := br.ReadByte()
		if err != nil {
			return nil, err
		}
		if flag == 0 {
			r[i] = Null
			continue
		}
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, err
		}
		if l > 1<<31 {
			return nil, errors.New("corrupt row")
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		r[i] = Value{Type: Type(flag - 1), Text: string(b)}
	}
	return r, nil
}
