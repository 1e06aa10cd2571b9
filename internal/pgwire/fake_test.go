package pgwire

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// fakeHandler opens fakeSessions, which answer a tiny scripted language
// instead of SQL:
//
//	select rows        two rows with a column of every supported type
//	count N            N rows of one int8 column
//	echo E, E, ...     one row; E is $N or a literal, optionally ::type
//	insert ...         "INSERT 0 1", no rows
//	begin / commit / rollback   move TxStatus between I, T and E
//	fail               error 42601 with detail and hint ('E' inside a block)
//	fatal              a FATAL error
//	sleep              blocks until cancelled (Cancel or ctx)
//	panic              panics, if the handler allows it
//	badvalue           an int4 column holding "abc"
//	badrow             a row with fewer values than columns
//	copy ...           0A000
//
// Statements in a Query are split on ';'. Anything else is 42601.
type fakeHandler struct {
	// newSessionErr, when set, is returned by NewSession.
	newSessionErr error
	// sleepReturns makes "sleep" return at once (for fuzzing).
	sleepReturns bool
	// panics makes "panic" panic.
	panics bool
	// sleeping receives each session whose "sleep" has started.
	sleeping chan *fakeSession

	mu       sync.Mutex
	sessions []*fakeSession
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{sleeping: make(chan *fakeSession, 16)}
}

func (h *fakeHandler) NewSession(ctx context.Context, info StartupInfo) (Session, error) {
	if h.newSessionErr != nil {
		return nil, h.newSessionErr
	}
	s := &fakeSession{h: h, info: info, tx: 'I', closed: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions = append(h.sessions, s)
	return s, nil
}

// allSessions returns the sessions opened so far.
func (h *fakeHandler) allSessions() []*fakeSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*fakeSession(nil), h.sessions...)
}

type fakeSession struct {
	h    *fakeHandler
	info StartupInfo
	// closed is closed by the first Close.
	closed chan struct{}

	mu            sync.Mutex
	tx            byte
	cancelRunning context.CancelFunc
	closes        int
	cancels       int
	prepared      int
	closedStmts   int
	lastParams    []Param
}

type fakeStmt struct {
	sql  string
	oids []uint32
}

func (st *fakeStmt) SQL() string { return st.sql }

func (s *fakeSession) Query(ctx context.Context, sql string, emit func(*answer.Answer) error) error {
	ran := false
	for _, stmt := range splitStatements(sql) {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		ran = true
		a, err := s.run(ctx, stmt, nil)
		if err != nil {
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	if !ran {
		return ErrEmptyQuery
	}
	return nil
}

func (s *fakeSession) Prepare(ctx context.Context, sql string, paramOIDs []uint32) (Statement, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, ErrEmptyQuery
	}
	if strings.HasPrefix(sql, "unpreparable") {
		return nil, pgerr.New(pgerr.SyntaxError, "cannot prepare %q", sql)
	}
	s.mu.Lock()
	s.prepared++
	s.mu.Unlock()
	return &fakeStmt{sql: sql, oids: paramOIDs}, nil
}

var placeholder = regexp.MustCompile(`\$(\d+)(?:::(\w+))?`)

func (s *fakeSession) Describe(ctx context.Context, st Statement) ([]uint32, []answer.Column, error) {
	fs := st.(*fakeStmt)
	var params []uint32
	for _, m := range placeholder.FindAllStringSubmatch(fs.sql, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > 100 {
			return nil, nil, pgerr.New("42P02", "there is no parameter $%s", m[1])
		}
		for len(params) < n {
			params = append(params, answer.OIDText)
		}
		if m[2] != "" {
			params[n-1] = fakeTypes[m[2]]
		}
	}
	for i, oid := range fs.oids {
		if i < len(params) && oid != 0 {
			params[i] = oid
		}
	}
	cols, err := s.columns(fs.sql)
	return params, cols, err
}

// columns returns the columns a statement answers with.
func (s *fakeSession) columns(sql string) ([]answer.Column, error) {
	verb, rest, _ := strings.Cut(strings.TrimSpace(sql), " ")
	switch verb {
	case "select":
		return rowsColumns, nil
	case "count":
		return []answer.Column{{Name: "n", Type: answer.Int}}, nil
	case "badvalue", "badrow":
		return []answer.Column{{Name: "v", Type: answer.Int, OID: answer.OIDInt4}}, nil
	case "echo":
		var cols []answer.Column
		for i, item := range splitList(rest) {
			oid := answer.OIDText
			if _, typ, ok := strings.Cut(item, "::"); ok {
				oid = fakeTypes[strings.TrimSpace(typ)]
			}
			cols = append(cols, answer.Column{Name: fmt.Sprintf("c%d", i+1), Type: answer.TypeOfOID(oid), OID: oid})
		}
		return cols, nil
	}
	return nil, nil
}

func (s *fakeSession) Execute(ctx context.Context, st Statement, params []Param) (*answer.Answer, error) {
	s.mu.Lock()
	s.lastParams = append([]Param(nil), params...)
	s.mu.Unlock()
	return s.run(ctx, st.SQL(), params)
}

func (s *fakeSession) CloseStatement(st Statement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closedStmts++
}

func (s *fakeSession) TxStatus() byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tx
}

func (s *fakeSession) Cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancels++
	if s.cancelRunning != nil {
		s.cancelRunning()
	}
}

func (s *fakeSession) Close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
	if s.closes == 1 {
		close(s.closed)
	}
}

// counts returns how often Close and CloseStatement were called, and how
// many statements were prepared.
func (s *fakeSession) counts() (closes, closedStmts, prepared int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes, s.closedStmts, s.prepared
}

func (s *fakeSession) params() []Param {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastParams
}

func (s *fakeSession) setTx(tx byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tx = tx
}

// run executes one scripted statement.
func (s *fakeSession) run(ctx context.Context, sql string, params []Param) (*answer.Answer, error) {
	sql = strings.TrimSpace(sql)
	verb, rest, _ := strings.Cut(sql, " ")
	if verb == "" {
		return nil, ErrEmptyQuery
	}
	if s.TxStatus() == 'E' && verb != "rollback" && verb != "commit" {
		return nil, pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	switch verb {
	case "begin":
		s.setTx('T')
		return &answer.Answer{Tag: "BEGIN"}, nil
	case "commit", "rollback":
		s.setTx('I')
		return &answer.Answer{Tag: strings.ToUpper(verb)}, nil
	case "insert":
		return &answer.Answer{Tag: answer.Tag("INSERT", 1), RowsAffected: 1}, nil
	case "fail":
		if s.TxStatus() == 'T' {
			s.setTx('E')
		}
		return nil, pgerr.New(pgerr.SyntaxError, "scripted failure").WithDetail("the detail").WithHint("the hint")
	case "fatal":
		return nil, pgerr.New(pgerr.AdminShutdown, "scripted fatal error").Fatal()
	case "sleep":
		return nil, s.sleep(ctx)
	case "panic":
		if s.h.panics {
			panic("scripted panic")
		}
	case "copy":
		return fakeCopy(ctx, rest)
	case "select":
		return &answer.Answer{Columns: rowsColumns, Rows: rowsValues, Tag: answer.Tag("SELECT", 2), RowsAffected: 2}, nil
	case "count":
		return countRows(rest)
	case "badvalue":
		cols, _ := s.columns(sql)
		return &answer.Answer{Columns: cols, Rows: [][]answer.Value{{answer.V(answer.Int, "abc")}}, Tag: "SELECT 1"}, nil
	case "badrow":
		cols, _ := s.columns(sql)
		return &answer.Answer{Columns: cols, Rows: [][]answer.Value{{}}, Tag: "SELECT 1"}, nil
	case "echo":
		return echo(rest, params)
	}
	return nil, pgerr.New(pgerr.SyntaxError, "syntax error at or near %q", verb)
}

func (s *fakeSession) sleep(ctx context.Context) error {
	if s.h.sleepReturns {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancelRunning = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancelRunning = nil
		s.mu.Unlock()
	}()
	select {
	case s.h.sleeping <- s:
	default:
	}
	<-ctx.Done()
	return pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
}

func countRows(arg string) (*answer.Answer, error) {
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || n < 0 || n > 100_000 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "bad count %q", arg)
	}
	a := &answer.Answer{Columns: []answer.Column{{Name: "n", Type: answer.Int}}, Tag: answer.Tag("SELECT", int64(n))}
	for i := range n {
		a.Rows = append(a.Rows, []answer.Value{answer.V(answer.Int, strconv.Itoa(i+1))})
	}
	return a, nil
}

// echo answers one row holding each item of list: a parameter ($N) or a
// literal as pgx's simple protocol writes them: a quoted string, 42, true,
// null.
func echo(list string, params []Param) (*answer.Answer, error) {
	var cols []answer.Column
	var row []answer.Value
	for i, item := range splitList(list) {
		expr, typ, _ := strings.Cut(item, "::")
		oid := answer.OIDText
		if typ != "" {
			oid = fakeTypes[strings.TrimSpace(typ)]
		}
		family := answer.TypeOfOID(oid)
		cols = append(cols, answer.Column{Name: fmt.Sprintf("c%d", i+1), Type: family, OID: oid})
		v, err := echoValue(strings.TrimSpace(expr), family, params)
		if err != nil {
			return nil, err
		}
		row = append(row, v)
	}
	return &answer.Answer{Columns: cols, Rows: [][]answer.Value{row}, Tag: "SELECT 1", RowsAffected: 1}, nil
}

func echoValue(expr string, family answer.Type, params []Param) (answer.Value, error) {
	expr = strings.TrimSpace(strings.Trim(expr, "()"))
	if n, ok := strings.CutPrefix(expr, "$"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(params) {
			return answer.Value{}, pgerr.New("42P02", "there is no parameter %s", expr)
		}
		p := params[i-1]
		if p.Null {
			return answer.Null, nil
		}
		return answer.V(family, p.Text), nil
	}
	switch {
	case strings.EqualFold(expr, "null"):
		return answer.Null, nil
	case expr == "true", expr == "false":
		return answer.V(family, expr[:1]), nil
	case strings.HasPrefix(expr, "'") && strings.HasSuffix(expr, "'") && len(expr) >= 2:
		text := strings.ReplaceAll(expr[1:len(expr)-1], "''", "'")
		if family == answer.Bytes {
			b, err := hex.DecodeString(strings.TrimPrefix(text, `\x`))
			if err != nil {
				return answer.Value{}, pgerr.New(pgerr.InvalidTextRepresentation, "bad bytea literal")
			}
			text = string(b)
		}
		return answer.V(family, text), nil
	}
	return answer.V(family, expr), nil
}

// splitStatements splits a query string on semicolons outside quotes.
func splitStatements(sql string) []string { return splitOutsideQuotes(sql, ';') }

// splitList splits an echo list on commas outside quotes.
func splitList(list string) []string {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	return splitOutsideQuotes(list, ',')
}

func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	quoted := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted
		case s[i] == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

var fakeTypes = map[string]uint32{
	"bool": answer.OIDBool, "bytea": answer.OIDBytea, "int8": answer.OIDInt8, "int2": answer.OIDInt2,
	"int4": answer.OIDInt4, "text": answer.OIDText, "json": answer.OIDJSON, "float4": answer.OIDFloat4,
	"float8": answer.OIDFloat8, "bpchar": answer.OIDBPChar, "varchar": answer.OIDVarchar, "name": answer.OIDName,
	"date": answer.OIDDate, "time": answer.OIDTime, "timestamp": answer.OIDTimestamp,
	"timestamptz": answer.OIDTimestampTZ, "interval": answer.OIDInterval, "numeric": answer.OIDNumeric,
	"uuid": answer.OIDUUID, "jsonb": answer.OIDJSONB,
}

// rowsColumns and rowsValues are the answer of "select rows".
var rowsColumns = []answer.Column{
	{Name: "id", Type: answer.Int},
	{Name: "name", Type: answer.Text},
	{Name: "price", Type: answer.Numeric},
	{Name: "ratio", Type: answer.Float},
	{Name: "ok", Type: answer.Bool},
	{Name: "data", Type: answer.Bytes},
	{Name: "day", Type: answer.Date},
	{Name: "at", Type: answer.TimestampTZ},
	{Name: "uid", Type: answer.UUID},
	{Name: "doc", Type: answer.JSON, OID: answer.OIDJSONB},
}

var rowsValues = [][]answer.Value{
	{
		answer.V(answer.Int, "1"), answer.V(answer.Text, "alice"), answer.V(answer.Numeric, "12.50"),
		answer.V(answer.Float, "0.25"), answer.V(answer.Bool, "t"), answer.V(answer.Bytes, "\x00\xff"),
		answer.V(answer.Date, "2024-01-02"), answer.V(answer.TimestampTZ, "2024-01-02 03:04:05.123456+00"),
		answer.V(answer.UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), answer.V(answer.JSON, `{"a": 1}`),
	},
	{
		answer.V(answer.Int, "2"), answer.Null, answer.Null, answer.Null, answer.Null,
		answer.Null, answer.Null, answer.Null, answer.Null, answer.Null,
	},
}

// cancelCount returns how often Close and Cancel were called.
func (s *fakeSession) cancelCount() (closes, cancels int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes, s.cancels
}

// fakeCopy runs "copy in FORMAT LIMIT" (a COPY FROM into columns a int4
// and b bytea, answering COPY n and, in the tag, the rows read) and "copy
// out FORMAT" (a COPY TO of the rows of "select").
func fakeCopy(ctx context.Context, rest string) (*answer.Answer, error) {
	cp, ok := CopierFrom(ctx)
	if !ok {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "COPY without a connection")
	}
	f := strings.Fields(rest)
	if len(f) < 2 {
		return nil, pgerr.New(pgerr.SyntaxError, "copy in|out FORMAT [LIMIT]")
	}
	opts := CopyOptions{Delimiter: '\t', Null: `\N`}
	switch f[1] {
	case "csv":
		opts = CopyOptions{Format: CopyCSV, Delimiter: ',', Quote: '"', Escape: '"'}
	case "binary":
		opts = CopyOptions{Format: CopyBinary}
	}
	if f[0] == "out" {
		if err := cp.CopyOut(rowsColumns, rowsValues, nil, opts); err != nil {
			return nil, err
		}
		return &answer.Answer{Tag: answer.Tag("COPY", int64(len(rowsValues)))}, nil
	}
	limit := int64(1 << 20)
	if len(f) > 2 {
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, pgerr.New(pgerr.SyntaxError, "bad limit")
		}
		limit = n
	}
	rows, err := cp.CopyIn("t", []CopyColumn{{Name: "a", OID: answer.OIDInt4}, {Name: "b", OID: answer.OIDBytea}}, opts, limit)
	if err != nil {
		return nil, err
	}
	var seen []string
	for _, r := range rows {
		for _, v := range r.Values {
			if v.Null {
				seen = append(seen, "NULL")
			} else {
				seen = append(seen, v.Text)
			}
		}
	}
	return &answer.Answer{Tag: answer.Tag("COPY", int64(len(rows))) + " " + strings.Join(seen, ",")}, nil
}
