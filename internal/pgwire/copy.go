package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// PostgreSQL's SQLSTATEs for COPY data.
const (
	badCopyFileFormat        = "22P04"
	invalidBinaryRepresent   = "22P03"
	characterNotInRepertoire = "22021"
)

// Copy formats (CopyOptions.Format).
const (
	CopyText = iota
	CopyCSV
	CopyBinary
)

// CopyOptions are a COPY's format and options, already checked (see
// sqlan.CopySpec); per-column flags have one entry per column copied.
type CopyOptions struct {
	Format      int
	Delimiter   byte
	Null        string
	Quote       byte
	Escape      byte
	Header      bool
	HeaderMatch bool
	// ForceQuote (COPY TO, CSV); ForceNotNull and ForceNull (COPY FROM,
	// CSV): per column, nil for none.
	ForceQuote   []bool
	ForceNotNull []bool
	ForceNull    []bool
}

// CopyColumn is one column a COPY FROM fills.
type CopyColumn struct {
	Name string
	OID  uint32
}

// CopyRow is one row a COPY FROM read, with its line number (the tuple's
// number in binary), for the CONTEXT of errors about it.
type CopyRow struct {
	Line int64
	// Values are in PostgreSQL text form, bytea included ("\x..."): the
	// row becomes SQL text, not parameters.
	Values []Param
}

// Copier is the client's end of a COPY. The front hands it to the
// Session through the context of Query and Execute (CopierFrom); the
// Session calls it while it runs a COPY statement.
type Copier interface {
	// CopyIn sends CopyInResponse for cols, reads the client's CopyData
	// up to CopyDone and returns its rows, parsed as PostgreSQL parses
	// COPY FROM STDIN's data in opts' format. CopyFail is error 57014;
	// more than maxBytes of data is 54000. Errors about the data carry
	// PostgreSQL's CONTEXT ("COPY table, line n: ...").
	CopyIn(table string, cols []CopyColumn, opts CopyOptions, maxBytes int64) ([]CopyRow, error)
	// CopyOut sends CopyOutResponse, rows and then the rows of more
	// (spilled ones, read back one at a time; more may be nil), encoded
	// as PostgreSQL's COPY TO STDOUT encodes them in opts' format, each
	// column as its type in cols, as CopyData, and CopyDone.
	CopyOut(cols []answer.Column, rows [][]answer.Value, more *answer.Spilled, opts CopyOptions) error
}

type copierKey struct{}

// withCopier returns ctx carrying the connection's Copier.
func withCopier(ctx context.Context, c Copier) context.Context {
	return context.WithValue(ctx, copierKey{}, c)
}

// CopierFrom returns the Copier of the connection ctx serves, if any.
func CopierFrom(ctx context.Context) (Copier, bool) {
	c, ok := ctx.Value(copierKey{}).(Copier)
	return c, ok
}

// binarySignature opens binary COPY data.
var binarySignature = []byte("PGCOPY\n\377\r\n\x00")

func copyFormatCodes(opts CopyOptions, n int) (byte, []uint16) {
	f := uint16(formatText)
	if opts.Format == CopyBinary {
		f = uint16(formatBinary)
	}
	codes := make([]uint16, n)
	for i := range codes {
		codes[i] = f
	}
	return byte(f), codes
}

// CopyIn implements Copier.
func (c *conn) CopyIn(table string, cols []CopyColumn, opts CopyOptions, maxBytes int64) ([]CopyRow, error) {
	overall, codes := copyFormatCodes(opts, len(cols))
	c.send(&pgproto3.CopyInResponse{OverallFormat: overall, ColumnFormatCodes: codes})
	if err := c.flush(); err != nil {
		return nil, err
	}
	data, err := c.readCopyData(maxBytes)
	if err != nil {
		return nil, err
	}
	p := &copyParser{c: c, table: table, cols: cols, opts: opts, data: data}
	if opts.Format == CopyBinary {
		return p.binaryRows()
	}
	return p.textRows()
}

// readCopyData reads the client's COPY data until CopyDone. Flush and Sync
// are ignored, as PostgreSQL ignores them for the libraries that send them
// without noticing the statement was a COPY. After an error the rest of
// the client's COPY messages are ignored by the message loop.
func (c *conn) readCopyData(maxBytes int64) ([]byte, error) {
	var data []byte
	for {
		msg, err := c.be.Receive()
		if err != nil {
			c.readErr = c.receiveError(err)
			return nil, c.readErr
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if int64(len(data))+int64(len(m.Data)) > maxBytes {
				return nil, pgerr.New(programLimitExceeded, "COPY data exceeds shepherd's limit of %d bytes", maxBytes).
					WithHint("Split the data into several COPY statements.")
			}
			data = append(data, m.Data...)
		case *pgproto3.CopyDone:
			return data, nil
		case *pgproto3.CopyFail:
			return nil, pgerr.New(pgerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
		case *pgproto3.Terminate:
			c.readErr = errTerminate
			return nil, errTerminate
		default:
			// The client lost track of the protocol: PostgreSQL says
			// so and ends the connection.
			c.sendError(pgerr.New(pgerr.ProtocolViolation, "unexpected message type 0x%02X during COPY from stdin", messageType(msg)))
			c.readErr = pgerr.New(pgerr.ProtocolViolation, "terminating connection because protocol synchronization was lost").Fatal()
			return nil, c.readErr
		}
	}
}

// messageType is the type byte of a frontend message, for messages.
func messageType(msg pgproto3.FrontendMessage) byte {
	switch msg.(type) {
	case *pgproto3.Query:
		return 'Q'
	case *pgproto3.Parse:
		return 'P'
	case *pgproto3.Bind:
		return 'B'
	case *pgproto3.Execute:
		return 'E'
	case *pgproto3.Describe:
		return 'D'
	case *pgproto3.Close:
		return 'C'
	case *pgproto3.FunctionCall:
		return 'F'
	}
	return 0
}

// copyParser reads COPY FROM data as PostgreSQL 15's copyfromparse.c does.
type copyParser struct {
	c     *conn
	table string
	cols  []CopyColumn
	opts  CopyOptions
	data  []byte
	pos   int
	line  int64
	// eol is the line ending the data uses, set by its first line end
	// ("\n", "\r" or "\r\n").
	eol string
}

// maxCopyDataDisplay is how much of a line or value an error's CONTEXT
// shows (PostgreSQL's MAX_COPY_DATA_DISPLAY).
const maxCopyDataDisplay = 100

func clip(s string) string {
	if len(s) <= maxCopyDataDisplay {
		return s
	}
	n := maxCopyDataDisplay
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// lineError is an error about the current line as a whole.
func (p *copyParser) lineError(code, line, format string, args ...any) *pgerr.Error {
	return pgerr.New(code, format, args...).WithWhere("COPY %s, line %d: \"%s\"", p.table, p.line, clip(line))
}

// where is the CONTEXT of an error about the current line, not showing it.
func (p *copyParser) where(code, format string, args ...any) *pgerr.Error {
	return pgerr.New(code, format, args...).WithWhere("COPY %s, line %d", p.table, p.line)
}

// readLine returns the next line without its end, and false at the end of
// the data (the end of the stream or the end-of-copy marker \.).
func (p *copyParser) readLine() (string, bool, error) {
	if p.pos >= len(p.data) {
		return "", false, nil
	}
	p.line++
	csv := p.opts.Format == CopyCSV
	d := p.data
	start := p.pos
	i := start
	inQuote, lastWasEsc := false, false
	quote, esc := p.opts.Quote, p.opts.Escape
	if esc == quote {
		esc = 0 // the quote alone toggles
	}
	for i < len(d) {
		ch := d[i]
		if csv {
			if inQuote && ch == esc {
				lastWasEsc = !lastWasEsc
			}
			if ch == quote && !lastWasEsc {
				inQuote = !inQuote
			}
			if ch != esc {
				lastWasEsc = false
			}
		}
		if (ch == '\r' || ch == '\n') && !(csv && inQuote) {
			line := string(d[start:i])
			var err error
			switch {
			case ch == '\n' && p.eol == "":
				p.eol = "\n"
			case ch == '\r' && p.eol == "":
				p.eol = "\r"
				if i+1 < len(d) && d[i+1] == '\n' {
					p.eol = "\r\n"
				}
			case ch == '\r' && p.eol == "\n", ch == '\r' && p.eol == "\r\n" && (i+1 >= len(d) || d[i+1] != '\n'):
				err = p.literalError("carriage return", `\r`, line)
			case ch == '\n' && (p.eol == "\r" || p.eol == "\r\n"):
				err = p.literalError("newline", `\n`, line)
			}
			if err != nil {
				return "", false, err
			}
			i += len(p.eol)
			p.pos = i
			return line, true, nil
		}
		if ch == '\\' && (!csv || i == start) {
			if i+1 < len(d) && d[i+1] == '.' {
				end, ok, err := p.endMarker(i + 2)
				if err != nil {
					return "", false, err
				}
				if ok {
					line := string(d[start:i])
					p.pos = len(d)
					if line == "" {
						return "", false, nil
					}
					return line, true, nil
				}
				i = end
				continue
			}
			if !csv {
				i += 2
				continue
			}
		}
		i++
	}
	p.pos = len(d)
	return string(d[start:]), true, nil
}

// endMarker checks the line end after "\." at i: true means the data ends
// there; in CSV a "\." not alone on its line is data, and reading goes on
// at the '.' (the returned index).
func (p *copyParser) endMarker(i int) (int, bool, error) {
	dot := i - 1
	csv := p.opts.Format == CopyCSV
	d := p.data
	next := func() byte {
		if i < len(d) {
			i++
			return d[i-1]
		}
		i++
		return 0
	}
	if p.eol == "\r\n" {
		c2 := next()
		if c2 == '\n' || c2 != '\r' {
			if csv {
				return dot, false, nil
			}
			if c2 == '\n' {
				return 0, false, p.where(badCopyFileFormat, "end-of-copy marker does not match previous newline style")
			}
			return 0, false, p.where(badCopyFileFormat, "end-of-copy marker corrupt")
		}
	}
	c2 := next()
	if c2 != '\r' && c2 != '\n' {
		if csv {
			return dot, false, nil
		}
		return 0, false, p.where(badCopyFileFormat, "end-of-copy marker corrupt")
	}
	if (p.eol == "\n" || p.eol == "\r\n") && c2 != '\n' || p.eol == "\r" && c2 != '\r' {
		return 0, false, p.where(badCopyFileFormat, "end-of-copy marker does not match previous newline style")
	}
	return i, true, nil
}

func (p *copyParser) literalError(what, escape, _ string) error {
	if p.opts.Format == CopyCSV {
		return p.where(badCopyFileFormat, "unquoted %s found in data", what).
			WithHint("Use quoted CSV field to represent %s.", what)
	}
	return p.where(badCopyFileFormat, "literal %s found in data", what).
		WithHint("Use \"%s\" to represent %s.", escape, what)
}

// textRows reads text or CSV data.
func (p *copyParser) textRows() ([]CopyRow, error) {
	var rows []CopyRow
	first := true
	for {
		line, ok, err := p.readLine()
		if err != nil || !ok {
			return rows, err
		}
		if err := p.checkEncoding(line); err != nil {
			return nil, err
		}
		fields, err := p.split(line)
		if err != nil {
			return nil, err
		}
		if first && p.opts.Header {
			first = false
			if p.opts.HeaderMatch {
				if err := p.matchHeader(line, fields); err != nil {
					return nil, err
				}
			}
			continue
		}
		first = false
		if len(fields) > len(p.cols) {
			return nil, p.lineError(badCopyFileFormat, line, "extra data after last expected column")
		}
		if len(fields) < len(p.cols) {
			return nil, p.lineError(badCopyFileFormat, line, "missing data for column \"%s\"", p.cols[len(fields)].Name)
		}
		for i := range fields {
			f := &fields[i]
			switch {
			case f.Null && flag(p.opts.ForceNotNull, i):
				*f = Param{Text: p.opts.Null}
			case !f.Null && flag(p.opts.ForceNull, i) && f.Text == p.opts.Null:
				*f = Param{Null: true}
			}
			f.OID = p.cols[i].OID
		}
		rows = append(rows, CopyRow{Line: p.line, Values: fields})
	}
}

func flag(flags []bool, i int) bool { return i < len(flags) && flags[i] }

func (p *copyParser) matchHeader(line string, fields []Param) error {
	if len(fields) != len(p.cols) {
		return p.lineError(badCopyFileFormat, line, "wrong number of fields in header line: got %d, expected %d", len(fields), len(p.cols))
	}
	for i, f := range fields {
		if f.Null {
			return p.lineError(badCopyFileFormat, line, "column name mismatch in header line field %d: got null value (\"%s\"), expected \"%s\"",
				i+1, p.opts.Null, p.cols[i].Name)
		}
		if f.Text != p.cols[i].Name {
			return p.lineError(badCopyFileFormat, line, "column name mismatch in header line field %d: got \"%s\", expected \"%s\"",
				i+1, f.Text, p.cols[i].Name)
		}
	}
	return nil
}

// checkEncoding refuses a line that is not UTF-8, as PostgreSQL verifies
// input in the client encoding.
func (p *copyParser) checkEncoding(s string) error {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return p.where(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x%02x", s[i])
		}
		if r == 0 {
			return p.where(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00")
		}
		i += n
	}
	return nil
}

func (p *copyParser) split(line string) ([]Param, error) {
	if p.opts.Format == CopyCSV {
		return p.splitCSV(line)
	}
	return p.splitText(line)
}

// splitText splits a text-format line into fields, undoing the backslash
// escapes; a field whose raw text is the null string is NULL.
func (p *copyParser) splitText(line string) ([]Param, error) {
	var out []Param
	delim := p.opts.Delimiter
	i := 0
	for {
		start := i
		var b strings.Builder
		nonASCII := false
		for i < len(line) && line[i] != delim {
			ch := line[i]
			i++
			if ch != '\\' {
				b.WriteByte(ch)
				continue
			}
			if i >= len(line) {
				break
			}
			ch = line[i]
			i++
			switch {
			case ch >= '0' && ch <= '7':
				v := int(ch - '0')
				for k := 0; k < 2 && i < len(line) && line[i] >= '0' && line[i] <= '7'; k++ {
					v = v*8 + int(line[i]-'0')
					i++
				}
				ch = byte(v & 0o377)
				nonASCII = true
			case ch == 'x':
				if i < len(line) && isHex(line[i]) {
					v := hexVal(line[i])
					i++
					if i < len(line) && isHex(line[i]) {
						v = v*16 + hexVal(line[i])
						i++
					}
					ch = byte(v)
					nonASCII = true
				}
			case ch == 'b':
				ch = '\b'
			case ch == 'f':
				ch = '\f'
			case ch == 'n':
				ch = '\n'
			case ch == 'r':
				ch = '\r'
			case ch == 't':
				ch = '\t'
			case ch == 'v':
				ch = '\v'
			}
			b.WriteByte(ch)
		}
		raw := line[start:i]
		if raw == p.opts.Null {
			out = append(out, Param{Null: true})
		} else {
			s := b.String()
			if nonASCII {
				if err := p.checkEncoding(s); err != nil {
					return nil, err
				}
			}
			out = append(out, Param{Text: s})
		}
		if i >= len(line) {
			return out, nil
		}
		i++ // the delimiter
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// splitCSV splits a CSV line (which may span physical lines inside
// quotes) into fields; an unquoted field equal to the null string is NULL.
func (p *copyParser) splitCSV(line string) ([]Param, error) {
	var out []Param
	delim, quote, esc := p.opts.Delimiter, p.opts.Quote, p.opts.Escape
	i := 0
	for {
		start := i
		var b strings.Builder
		sawQuote := false
		end := i
	field:
		for {
			// Outside quotes.
			for {
				end = i
				if i >= len(line) {
					break field
				}
				ch := line[i]
				i++
				if ch == delim {
					break field
				}
				if ch == quote {
					sawQuote = true
					break
				}
				b.WriteByte(ch)
			}
			// Inside quotes.
			for {
				if i >= len(line) {
					return nil, p.lineError(badCopyFileFormat, line, "unterminated CSV quoted field")
				}
				ch := line[i]
				i++
				if ch == esc && i < len(line) && (line[i] == esc || line[i] == quote) {
					b.WriteByte(line[i])
					i++
					continue
				}
				if ch == quote {
					break
				}
				b.WriteByte(ch)
			}
		}
		if !sawQuote && line[start:end] == p.opts.Null {
			out = append(out, Param{Null: true})
		} else {
			out = append(out, Param{Text: b.String()})
		}
		if end >= len(line) {
			return out, nil
		}
	}
}

// binaryRows reads binary COPY data.
func (p *copyParser) binaryRows() ([]CopyRow, error) {
	d := p.data
	if len(d) < len(binarySignature) || !bytes.Equal(d[:len(binarySignature)], binarySignature) {
		return nil, p.headerError("COPY file signature not recognized")
	}
	d = d[len(binarySignature):]
	if len(d) < 4 {
		return nil, p.headerError("invalid COPY file header (missing flags)")
	}
	flags := binary.BigEndian.Uint32(d)
	d = d[4:]
	if flags&(1<<16) != 0 {
		return nil, p.headerError("invalid COPY file header (WITH OIDS)")
	}
	if (flags&^(1<<16))>>16 != 0 {
		return nil, p.headerError("unrecognized critical flags in COPY file header")
	}
	if len(d) < 4 || int32(binary.BigEndian.Uint32(d)) < 0 {
		return nil, p.headerError("invalid COPY file header (missing length)")
	}
	ext := int(binary.BigEndian.Uint32(d))
	d = d[4:]
	if len(d) < ext {
		return nil, p.headerError("invalid COPY file header (wrong length)")
	}
	d = d[ext:]
	var rows []CopyRow
	for {
		if len(d) < 2 {
			return rows, nil
		}
		p.line++
		n := int16(binary.BigEndian.Uint16(d))
		d = d[2:]
		if n == -1 {
			if len(d) > 0 {
				return nil, p.where(badCopyFileFormat, "received copy data after EOF marker")
			}
			return rows, nil
		}
		if int(n) != len(p.cols) {
			return nil, p.where(badCopyFileFormat, "row field count is %d, expected %d", n, len(p.cols))
		}
		vals := make([]Param, n)
		for i := range vals {
			col := p.cols[i]
			if len(d) < 4 {
				return nil, p.columnWhere(col, badCopyFileFormat, "unexpected EOF in COPY data")
			}
			size := int32(binary.BigEndian.Uint32(d))
			d = d[4:]
			switch {
			case size == -1:
				vals[i] = Param{Null: true, OID: col.OID}
				continue
			case size < -1:
				return nil, p.columnWhere(col, badCopyFileFormat, "invalid field size")
			case int(size) > len(d):
				return nil, p.columnWhere(col, badCopyFileFormat, "unexpected EOF in COPY data")
			}
			text, err := p.binaryValue(col.OID, d[:size])
			if err != nil {
				e := pgerr.From(err)
				if e.Code == pgerr.ProtocolViolation {
					e = pgerr.New(invalidBinaryRepresent, "incorrect binary data format")
				}
				return nil, e.WithWhere("COPY %s, line %d, column %s", p.table, p.line, col.Name)
			}
			d = d[size:]
			vals[i] = Param{OID: col.OID, Text: text}
		}
		rows = append(rows, CopyRow{Line: p.line, Values: vals})
	}
}

// binaryValue converts one binary field to text form (bytea as "\x" hex).
func (p *copyParser) binaryValue(oid uint32, data []byte) (string, error) {
	text, err := p.c.binaryToText(oid, data)
	if err != nil {
		return "", err
	}
	switch {
	case oid == answer.OIDBytea:
		return string(byteaHex(text)), nil
	case !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0:
		return "", pgerr.New(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	return text, nil
}

func (p *copyParser) headerError(msg string) error {
	return pgerr.New(badCopyFileFormat, "%s", msg).WithWhere("COPY %s, line 0", p.table)
}

func (p *copyParser) columnWhere(col CopyColumn, code, format string, args ...any) error {
	return pgerr.New(code, format, args...).WithWhere("COPY %s, line %d, column %s", p.table, p.line, col.Name)
}

// CopyOut implements Copier.
func (c *conn) CopyOut(cols []answer.Column, rows [][]answer.Value, more *answer.Spilled, opts CopyOptions) error {
	overall, codes := copyFormatCodes(opts, len(cols))
	c.send(&pgproto3.CopyOutResponse{OverallFormat: overall, ColumnFormatCodes: codes})
	oids := columnOIDs(cols)
	var buf []byte
	if opts.Format == CopyBinary {
		buf = append(buf, binarySignature...)
		buf = binary.BigEndian.AppendUint32(buf, 0)
		buf = binary.BigEndian.AppendUint32(buf, 0)
	} else if opts.Header {
		for i, col := range cols {
			if i > 0 {
				buf = append(buf, opts.Delimiter)
			}
			buf = appendCopyText(buf, col.Name, opts, false, len(cols) == 1)
		}
		buf = append(buf, '\n')
		c.send(&pgproto3.CopyData{Data: buf})
		buf = nil
	}
	for r := 0; ; r++ {
		var row []answer.Value
		switch {
		case r < len(rows):
			row = rows[r]
		case more.Len() > 0:
			var err error
			if row, err = more.Next(); err != nil {
				return pgerr.Wrap(pgerr.IOError, err, "")
			}
		}
		if row == nil {
			break
		}
		if len(row) != len(cols) {
			return pgerr.New(pgerr.InternalError, "result row has %d values but %d columns", len(row), len(cols))
		}
		if opts.Format == CopyBinary {
			buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
		}
		for i, v := range row {
			if opts.Format == CopyBinary {
				b, err := c.encodeResult(oids[i], formatBinary, v)
				if err != nil {
					return err
				}
				if v.Null {
					buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
					continue
				}
				buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
				buf = append(buf, b...)
				continue
			}
			if i > 0 {
				buf = append(buf, opts.Delimiter)
			}
			if v.Null {
				buf = append(buf, opts.Null...)
				continue
			}
			b, err := c.encodeResult(oids[i], formatText, v)
			if err != nil {
				return err
			}
			buf = appendCopyText(buf, string(b), opts, flag(opts.ForceQuote, i), len(cols) == 1)
		}
		if opts.Format != CopyBinary {
			buf = append(buf, '\n')
		}
		c.send(&pgproto3.CopyData{Data: buf})
		buf = nil
		if err := c.checkWrite(); err != nil {
			return err
		}
	}
	if opts.Format == CopyBinary {
		buf = binary.BigEndian.AppendUint16(buf, 0xFFFF)
		c.send(&pgproto3.CopyData{Data: buf})
	}
	c.send(&pgproto3.CopyDone{})
	return c.checkWrite()
}

// appendCopyText appends one non-null value as COPY TO writes it: in text
// format with backslash escapes (CopyAttributeOutText), in CSV quoted
// when it must be (CopyAttributeOutCSV).
func appendCopyText(buf []byte, s string, opts CopyOptions, forceQuote, singleColumn bool) []byte {
	if opts.Format != CopyCSV {
		for i := 0; i < len(s); i++ {
			ch := s[i]
			switch {
			case ch < 0x20:
				esc := map[byte]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v'}[ch]
				if esc != 0 {
					buf = append(buf, '\\', esc)
					continue
				}
				if ch == opts.Delimiter {
					buf = append(buf, '\\')
				}
				buf = append(buf, ch)
			case ch == '\\' || ch == opts.Delimiter:
				buf = append(buf, '\\', ch)
			default:
				buf = append(buf, ch)
			}
		}
		return buf
	}
	quote := forceQuote || s == opts.Null
	if !quote {
		if singleColumn && s == `\.` {
			quote = true
		} else {
			for i := 0; i < len(s); i++ {
				if ch := s[i]; ch == opts.Delimiter || ch == opts.Quote || ch == '\n' || ch == '\r' {
					quote = true
					break
				}
			}
		}
	}
	if !quote {
		return append(buf, s...)
	}
	buf = append(buf, opts.Quote)
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch == opts.Quote || ch == opts.Escape {
			buf = append(buf, opts.Escape)
		}
		buf = append(buf, s[i])
	}
	return append(buf, opts.Quote)
}
