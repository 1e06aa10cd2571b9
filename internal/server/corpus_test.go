package server

// The cross-engine SQL corpus (issue 4): testdata/corpus/*.sql, written the
// way a PostgreSQL application writes SQL, run statement by statement
// through shepherd on each setup of corpusSetups (cbs mode over MariaDB,
// PostgreSQL and SQLite; the embedded default, config.Embedded), and
// directly on a PostgreSQL database of its own per setup ("PostgreSQL
// alone"), in one session each. Every statement must come out the same on
// both, or be refused by shepherd with 0A000.
//
// Corpus files are run in name order. Statements end with a semicolon at
// the end of a line. Comment lines before a statement may hold directives:
//
//	-- feature: NAME          the feature of this and the following statements
//	-- error: SQLSTATE        PostgreSQL itself fails the next statement so
//	-- params: v1, v2, ...    run the next statement through the extended
//	                          protocol with these parameters (SQL literals:
//	                          numbers, 'text', true, NULL), sent as text of
//	                          unspecified type
//	-- compare: unordered     compare the rows as a multiset although the
//	                          statement has an ORDER BY (it orders ties)
//	-- compare: count         compare the command tag and the number of
//	                          rows and columns only (the values depend on
//	                          time, chance or the order of ties)
//
// Outcomes, one per statement:
//
//	same     both succeeded with the same command tag, column names, column
//	         type families and canonical rows (package answer's digest; in
//	         order when the statement ends with ORDER BY, as a multiset
//	         otherwise), or both failed with the same SQLSTATE, which is the
//	         one the corpus names
//	refused  shepherd answered 0A000; recorded as refused:ENGINE when
//	         the message names the engine whose replicas cannot take the
//	         construct ("for SQLite replicas"), see refusalOutcome
//	cascade  both failed with the same SQLSTATE, or both succeeded alike,
//	         but not the way PostgreSQL handles the statement by itself:
//	         an earlier statement was refused or failed on shepherd, and
//	         PostgreSQL alone followed it there (see below)
//	differs  anything else: a different answer, an error on one side only,
//	         a different SQLSTATE; also a broken connection or a timeout
//
// Keeping the two sides comparable after a refusal or a failure: PostgreSQL
// alone only keeps the effects of statements shepherd ran successfully. A
// statement shepherd refused is not run on PostgreSQL alone at all (so a
// refused CREATE TABLE leaves the table missing on both sides); a statement
// shepherd failed is run on PostgreSQL alone inside a transaction or a
// savepoint that is rolled back, so its answer can be compared without its
// effects. Transaction blocks are mirrored: when one session is in a failed
// block and the other is not, the other is failed on purpose too (a
// SELECT from a table that does not exist), and when one is outside a
// block and the other is not, the other is rolled back.
//
// After the corpus, SHOW REPLICAS must show every replica up with no
// mismatch, and every table must hold the same rows on the three replicas.
//
// testdata/corpus/expected.txt holds the outcome of every statement on
// every setup (a column each); the test fails when an outcome changes (a new difference, or a statement
// now refused), and, unless SHEPHERD_CORPUS_ALLOW_DIFFERS=1, while any
// statement differs.
// docs/sql-support.md is generated from the corpus and expected.txt.
// Rewrite both with
//
//	go test ./internal/server -run 'TestCorpus$' -update-corpus
//
// (-run 'TestCorpus$/setups/embedded' runs and rewrites one setup's
// column alone.)
//
// SHEPHERD_CORPUS_TRACE=1 with -v logs every statement before it runs
// (to find the one that crashes or hangs shepherd).
//
// TestCorpus and TestCorpusPinnedValues run in every run but -short.
// TestCorpusFiles (the corpus parses, the
// expected outcomes and the document are up to date) and
// TestCorpusOnPostgres (every statement does on PostgreSQL what the corpus
// says) always run.

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

var updateCorpus = flag.Bool("update-corpus", false,
	"rewrite testdata/corpus/expected.txt and docs/sql-support.md from this run of TestCorpus")

const (
	corpusDir      = "testdata/corpus"
	corpusExpected = "testdata/corpus/expected.txt"
	sqlSupportDoc  = "../../docs/sql-support.md"
	// corpusMinStatements is the size issue 4 asks of the corpus.
	corpusMinStatements = 300
	// corpusStatementTimeout bounds one statement on either side; a
	// statement that takes longer is a hang.
	corpusStatementTimeout = 20 * time.Second
	// corpusMaxHangs stops the run after this many hung statements.
	corpusMaxHangs = 3
)

// Outcomes of a corpus statement.
const (
	outSame    = "same"
	outRefused = "refused"
	outCascade = "cascade"
	outDiffers = "differs"
)

var outcomeOrder = []string{outSame, outRefused, outCascade, outDiffers}

// corpusStmt is one statement of the corpus with its directives.
type corpusStmt struct {
	File    string
	Line    int // line of the statement's first line
	Feature string
	SQL     string // without the final semicolon
	// Extended is set by a params directive: the statement runs through
	// the extended protocol with Params (nil entries are NULL).
	Extended bool
	Params   []*string
	Compare  string // "", "unordered" or "count"
	Error    string // SQLSTATE PostgreSQL fails the statement with, or ""
}

// Pos returns file:line.
func (s *corpusStmt) Pos() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Short returns the statement on one line, cut to 60 characters.
func (s *corpusStmt) Short() string {
	one := strings.Join(strings.Fields(s.SQL), " ")
	if utf8.RuneCountInString(one) > 60 {
		r := []rune(one)
		one = string(r[:60])
	}
	return one
}

// Ordered reports whether rows are compared in order.
func (s *corpusStmt) Ordered() bool {
	return s.Compare == "" && hasTopLevelOrderBy(s.SQL)
}

var sqlstateRE = regexp.MustCompile(`^[0-9A-Z]{5}$`)

// loadCorpus reads every corpus file in name order.
func loadCorpus(dir string) ([]*corpusStmt, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus files in %s", dir)
	}
	var all []*corpusStmt
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		stmts, err := parseCorpus(filepath.Base(f), string(b))
		if err != nil {
			return nil, err
		}
		all = append(all, stmts...)
	}
	return all, nil
}

// parseCorpus splits one corpus file into statements.
func parseCorpus(name, text string) ([]*corpusStmt, error) {
	var (
		out     []*corpusStmt
		feature string
		pending = &corpusStmt{}
		hasDir  bool
		cur     []string
		start   int
	)
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if cur == nil && trim == "" {
			continue
		}
		if strings.HasPrefix(trim, "--") {
			key, val, isDir := directive(trim)
			if !isDir {
				continue // a plain comment
			}
			if cur != nil {
				return nil, fail(n, "directive inside a statement")
			}
			switch key {
			case "feature":
				if val == "" {
					return nil, fail(n, "empty feature")
				}
				feature = val
				continue
			case "error":
				if !sqlstateRE.MatchString(val) {
					return nil, fail(n, "error directive wants a SQLSTATE, got %q", val)
				}
				pending.Error = val
			case "params":
				ps, err := parseParams(val)
				if err != nil {
					return nil, fail(n, "%v", err)
				}
				pending.Extended, pending.Params = true, ps
			case "compare":
				if val != "unordered" && val != "count" {
					return nil, fail(n, "compare is unordered or count, not %q", val)
				}
				pending.Compare = val
			}
			hasDir = true
			continue
		}
		if cur == nil {
			start = n
		}
		cur = append(cur, strings.TrimRight(line, " \t"))
		if strings.HasSuffix(trim, ";") {
			sql := strings.TrimSpace(strings.Join(cur, "\n"))
			sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
			if feature == "" {
				return nil, fail(start, "statement before any feature directive")
			}
			st := *pending
			st.File, st.Line, st.Feature, st.SQL = name, start, feature, sql
			out = append(out, &st)
			pending, hasDir, cur = &corpusStmt{}, false, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fail(start, "statement without a final semicolon")
	}
	if hasDir {
		return nil, fmt.Errorf("%s: directive after the last statement", name)
	}
	return out, nil
}

// directive recognises "-- key: value" comment lines.
func directive(line string) (key, val string, ok bool) {
	for _, k := range []string{"feature", "error", "params", "compare"} {
		if rest, found := strings.CutPrefix(line, "-- "+k+":"); found {
			return k, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// parseParams parses a params directive: SQL literals separated by
// commas. 'text' (quotes doubled inside) is a string, NULL is NULL, and any
// other token (a number, true) is sent as written.
func parseParams(s string) ([]*string, error) {
	ps := []*string{}
	if strings.TrimSpace(s) == "" {
		return ps, nil
	}
	skip := func(i int) int {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		return i
	}
	for i := 0; ; {
		i = skip(i)
		if i >= len(s) {
			return nil, errors.New("trailing comma in params")
		}
		var v *string
		if s[i] == '\'' {
			var b strings.Builder
			for i++; ; i++ {
				if i >= len(s) {
					return nil, errors.New("unterminated string in params")
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						b.WriteByte('\'')
						i++
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
			}
			text := b.String()
			v = &text
		} else {
			j := strings.IndexByte(s[i:], ',')
			if j < 0 {
				j = len(s) - i
			}
			tok := strings.TrimSpace(s[i : i+j])
			if tok == "" {
				return nil, errors.New("empty parameter in params")
			}
			if !strings.EqualFold(tok, "NULL") {
				v = &tok
			}
			i += j
		}
		ps = append(ps, v)
		if i = skip(i); i == len(s) {
			return ps, nil
		}
		if s[i] != ',' {
			return nil, errors.New("parameters are separated by commas")
		}
		i++
	}
}

// hasTopLevelOrderBy reports whether the statement's own result is
// ordered: an ORDER BY outside parentheses (window definitions, aggregate
// arguments, subqueries and CTE bodies are all parenthesised), string
// literals, quoted identifiers and comments.
func hasTopLevelOrderBy(sql string) bool {
	depth := 0
	var words []string
	word := func(w string) {
		if depth == 0 {
			words = append(words, strings.ToUpper(w))
		}
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = j + 1
			word("")
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			word(sql[i:j])
			i = j
		default:
			i++
		}
	}
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "ORDER" && words[i+1] == "BY" {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// isSessionControl reports whether a statement controls the session
// (transactions, settings) and so must run as is on PostgreSQL alone, never
// inside a guard that would undo it.
func isSessionControl(sql string) bool {
	f := strings.Fields(strings.ToUpper(sql))
	if len(f) == 0 {
		return false
	}
	switch strings.TrimSuffix(f[0], ";") {
	case "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SET", "SHOW", "RESET":
		return true
	}
	return false
}

// stmtResult is what one side answered.
type stmtResult struct {
	ans  *answer.Answer
	err  error
	code string // the SQLSTATE of err, "" when err is not a server error
}

func (r stmtResult) failed() bool { return r.err != nil }

func (r stmtResult) String() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	return renderAnswer(r.ans)
}

// runStmt runs st on conn: the simple protocol, or the extended one with
// text parameters of unspecified type.
func runStmt(ctx context.Context, conn *pgconn.PgConn, st *corpusStmt) stmtResult {
	ctx, cancel := context.WithTimeout(ctx, corpusStatementTimeout)
	defer cancel()
	var res *pgconn.Result
	if st.Extended {
		vals := make([][]byte, len(st.Params))
		for i, p := range st.Params {
			if p != nil {
				vals[i] = []byte(*p)
			}
		}
		res = conn.ExecParams(ctx, st.SQL, vals, nil, nil, nil).Read()
	} else {
		rs, err := conn.Exec(ctx, st.SQL).ReadAll()
		if err != nil {
			return resultOf(nil, err)
		}
		if len(rs) == 0 {
			return resultOf(nil, errors.New("no result"))
		}
		res = rs[len(rs)-1]
	}
	if res.Err != nil {
		return resultOf(nil, res.Err)
	}
	return resultOf(toAnswer(res), nil)
}

// execRaw runs a harness statement (BEGIN, SAVEPOINT, ...) on conn.
func execRaw(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, corpusStatementTimeout)
	defer cancel()
	_, err := conn.Exec(ctx, sql).ReadAll()
	return err
}

func resultOf(a *answer.Answer, err error) stmtResult {
	r := stmtResult{ans: a, err: err}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		r.code = pe.Code
	}
	return r
}

// toAnswer turns a wire result (text format) into an answer, typed by the
// column OIDs the server reported.
func toAnswer(r *pgconn.Result) *answer.Answer {
	a := &answer.Answer{Tag: r.CommandTag.String(), RowsAffected: r.CommandTag.RowsAffected()}
	for _, fd := range r.FieldDescriptions {
		a.Columns = append(a.Columns, answer.Column{Name: fd.Name, Type: answer.TypeOfOID(fd.DataTypeOID), OID: fd.DataTypeOID})
	}
	for _, row := range r.Rows {
		vals := make([]answer.Value, len(row))
		for i, b := range row {
			if b == nil {
				vals[i] = answer.Null
				continue
			}
			text := string(b)
			if i < len(a.Columns) && a.Columns[i].Type == answer.Bytes {
				// bytea travels as \x hex in text format; answers hold raw bytes.
				if raw, err := hex.DecodeString(strings.TrimPrefix(text, `\x`)); err == nil {
					text = string(raw)
				}
			}
			vals[i] = answer.V(answer.Unknown, text)
		}
		a.Rows = append(a.Rows, vals)
	}
	return a
}

// renderAnswer prints an answer for a failure message.
func renderAnswer(a *answer.Answer) string {
	if a == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(a.Tag)
	if a.Columns == nil {
		return b.String()
	}
	b.WriteString(" [")
	for i, c := range a.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s:%s(%d)", c.Name, c.Type, c.TypeOID())
	}
	b.WriteString("]")
	const maxRows = 12
	for i, r := range a.Rows {
		if i == maxRows {
			fmt.Fprintf(&b, "\n      ... %d more rows", len(a.Rows)-maxRows)
			break
		}
		b.WriteString("\n      (")
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			if v.Null {
				b.WriteString("NULL")
			} else if j < len(a.Columns) && a.Columns[j].Type == answer.Bytes {
				b.WriteString(`\x` + hex.EncodeToString([]byte(v.Text)))
			} else {
				fmt.Fprintf(&b, "%q", v.Text)
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// compareAnswers returns "" when two successful answers agree, or what
// differs.
func compareAnswers(st *corpusStmt, sh, pg *answer.Answer) string {
	if sh.Tag != pg.Tag {
		return fmt.Sprintf("command tag %q, PostgreSQL %q", sh.Tag, pg.Tag)
	}
	if len(sh.Columns) != len(pg.Columns) {
		return fmt.Sprintf("%d columns, PostgreSQL %d", len(sh.Columns), len(pg.Columns))
	}
	if st.Compare == "count" {
		if len(sh.Rows) != len(pg.Rows) {
			return fmt.Sprintf("%d rows, PostgreSQL %d", len(sh.Rows), len(pg.Rows))
		}
		return ""
	}
	for i := range sh.Columns {
		s, p := sh.Columns[i], pg.Columns[i]
		if s.Name != p.Name {
			return fmt.Sprintf("column %d is named %q, PostgreSQL %q", i+1, s.Name, p.Name)
		}
		if s.Type != p.Type {
			return fmt.Sprintf("column %s is %s (OID %d), PostgreSQL %s (OID %d)", p.Name, s.Type, s.TypeOID(), p.Type, p.TypeOID())
		}
	}
	// PostgreSQL's column types say how to read both answers' values.
	hints := pg.Columns
	if sh.DigestWith(st.Ordered(), hints) != pg.DigestWith(st.Ordered(), hints) {
		if st.Ordered() && sh.DigestWith(false, hints) == pg.DigestWith(false, hints) {
			return "same rows in another order"
		}
		return "rows differ"
	}
	return ""
}

// corpusResult is the outcome of one statement.
type corpusResult struct {
	st      *corpusStmt
	outcome string
	detail  string // why, for differs and cascade
}

// corpusRun drives the two sessions through the corpus.
type corpusRun struct {
	t         *testing.T
	ctx       context.Context
	shepherd  *pgconn.PgConn
	alone     *pgconn.PgConn
	reconnect func() (*pgconn.PgConn, error)
	hangs     int
}

// shepherdRefusal reports whether a 0A000 is shepherd's refusal ("shepherd
// cannot write ...", "shepherd does not support ...") rather than
// PostgreSQL's own feature_not_supported (TRUNCATE of a table a foreign
// key references), which is compared like any other answer.
func shepherdRefusal(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe) || strings.HasPrefix(pe.Message, "shepherd ")
}

// one runs a statement on both sides and classifies the outcome.
func (r *corpusRun) one(st *corpusStmt) (res corpusResult) {
	res.st = st
	if os.Getenv("SHEPHERD_CORPUS_TRACE") == "1" {
		r.t.Logf("run %s %s", st.Pos(), st.Short())
	}
	sh := runStmt(r.ctx, r.shepherd, st)
	defer r.mirror(&res)
	if sh.code == "0A000" && shepherdRefusal(sh.err) {
		res.outcome = refusalOutcome(sh.err.Error())
		res.detail = sh.err.Error()
		return res
	}
	if sh.failed() && sh.code == "" {
		// Not an answer of the server: a timeout or a broken connection.
		res.outcome = outDiffers
		res.detail = "shepherd: " + sh.err.Error()
		if errors.Is(sh.err, context.DeadlineExceeded) || r.shepherd.IsClosed() {
			r.hangs++
		}
		if r.shepherd.IsClosed() {
			c, err := r.reconnect()
			if err != nil {
				r.t.Fatalf("%s: reconnecting to shepherd: %v", st.Pos(), err)
			}
			r.shepherd = c
		}
		return res
	}
	var pg stmtResult
	if sh.failed() && !isSessionControl(st.SQL) {
		pg = r.guarded(st)
	} else {
		pg = runStmt(r.ctx, r.alone, st)
	}
	if pg.failed() && pg.code == "" {
		r.t.Fatalf("%s: PostgreSQL alone: %v", st.Pos(), pg.err)
	}
	switch {
	case sh.failed() && pg.failed():
		if sh.code != pg.code {
			res.outcome = outDiffers
			res.detail = fmt.Sprintf("shepherd %s, PostgreSQL %s\n    shepherd:   %v\n    PostgreSQL: %v", sh.code, pg.code, sh.err, pg.err)
		} else if pg.code != st.Error {
			res.outcome = outCascade
			res.detail = fmt.Sprintf("both fail with %s: %v", pg.code, pg.err)
		} else {
			res.outcome = outSame
		}
	case sh.failed() || pg.failed():
		res.outcome = outDiffers
		res.detail = fmt.Sprintf("shepherd: %s\n    PostgreSQL: %s", indent(sh.String()), indent(pg.String()))
	default:
		if why := compareAnswers(st, sh.ans, pg.ans); why != "" {
			res.outcome = outDiffers
			res.detail = fmt.Sprintf("%s\n    shepherd:   %s\n    PostgreSQL: %s", why, indent(renderAnswer(sh.ans)), indent(renderAnswer(pg.ans)))
		} else if st.Error != "" {
			res.outcome = outCascade
			res.detail = fmt.Sprintf("both succeed; PostgreSQL by itself fails it with %s", st.Error)
		} else {
			res.outcome = outSame
		}
	}
	return res
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// guarded runs st on PostgreSQL alone without keeping its effects: inside
// a transaction rolled back, or a savepoint rolled back to. In a failed
// block it just runs (and fails, changing nothing).
func (r *corpusRun) guarded(st *corpusStmt) stmtResult {
	var begin, end string
	switch r.alone.TxStatus() {
	case 'I':
		begin, end = "BEGIN", "ROLLBACK"
	case 'T':
		begin, end = "SAVEPOINT corpus_guard", "ROLLBACK TO SAVEPOINT corpus_guard; RELEASE SAVEPOINT corpus_guard"
	default:
		return runStmt(r.ctx, r.alone, st)
	}
	if err := execRaw(r.ctx, r.alone, begin); err != nil {
		r.t.Fatalf("%s: PostgreSQL alone: %s: %v", st.Pos(), begin, err)
	}
	res := runStmt(r.ctx, r.alone, st)
	if err := execRaw(r.ctx, r.alone, end); err != nil {
		r.t.Fatalf("%s: PostgreSQL alone: %s: %v", st.Pos(), end, err)
	}
	return res
}

// failBlock is a statement that fails on every engine and changes
// nothing, to put a transaction block into the failed state.
const failBlock = "SELECT * FROM corpus_no_such_table"

// mirror brings the two sessions' transaction states together again.
func (r *corpusRun) mirror(res *corpusResult) {
	sh, pg := r.shepherd.TxStatus(), r.alone.TxStatus()
	if sh == pg {
		return
	}
	note := fmt.Sprintf("transaction states diverged (shepherd %c, PostgreSQL %c)", sh, pg)
	switch {
	case sh == 'I':
		_ = execRaw(r.ctx, r.alone, "ROLLBACK")
	case pg == 'I':
		_ = execRaw(r.ctx, r.shepherd, "ROLLBACK")
	case sh == 'E':
		_ = execRaw(r.ctx, r.alone, failBlock)
	case pg == 'E':
		_ = execRaw(r.ctx, r.shepherd, failBlock)
	}
	if res.detail != "" {
		res.detail += "\n    "
	}
	res.detail += note
	if r.shepherd.TxStatus() != r.alone.TxStatus() {
		r.t.Fatalf("%s: cannot bring the sessions together: shepherd %c, PostgreSQL %c", res.st.Pos(), r.shepherd.TxStatus(), r.alone.TxStatus())
	}
}

// skipUnlessCorpus skips the real-engine corpus tests in -short runs.
func skipUnlessCorpus(t *testing.T) {
	t.Helper()
	if testing.Short() && !*updateCorpus {
		t.Skip("corpus: real engines (not in -short)")
	}
}

// corpusSetup is one set of replicas TestCorpus runs the corpus on.
type corpusSetup struct {
	// Name names the setup's subtest and its column in expected.txt.
	Name string
	// About says what the setup is, for the document.
	About string
	// Drivers are its replicas' drivers, in order.
	Drivers []string
	// config configures (and starts) the replicas for t.
	config func(t *testing.T) *config.Config
}

// corpusSetups are the setups of TestCorpus: a CBS cluster of three
// different engines, and the configuration shepherd runs with when no
// file is given (config.Embedded, whatever replicas it holds).
func corpusSetups() []corpusSetup {
	var emb []string
	for _, r := range config.Embedded().Replicas {
		emb = append(emb, r.Driver)
	}
	var diverse []string
	for _, r := range config.EmbeddedDiverse() {
		diverse = append(diverse, r.Driver)
	}
	return []corpusSetup{
		{Name: "cbs", About: "a cluster in mode cbs", Drivers: []string{"mysql", "postgres", "sqlite"},
			config: func(t *testing.T) *config.Config { return realCluster(t, "cbs") }},
		{Name: "embedded", About: "the embedded default (no configuration file)", Drivers: emb,
			config: embedded},
		{Name: "diverse", About: "the diverse embedded cluster (config.EmbeddedDiverse)", Drivers: diverse,
			config: func(t *testing.T) *config.Config {
				cfg := config.EmbeddedWith(config.EmbeddedDiverse())
				cfg.DataDir = t.TempDir()
				return cfg
			}},
	}
}

// engineNames are the engines of the drivers, as the document names them.
var engineNames = map[string]string{
	"mysql":      "MariaDB",
	"postgres":   "PostgreSQL",
	"sqlite":     "SQLite",
	"sqlite-cgo": "SQLite (cgo)",
	"duckdb":     "DuckDB",
}

// Engines names the setup's replicas' engines, "MariaDB + PostgreSQL +
// SQLite".
func (s corpusSetup) Engines() string {
	var names []string
	for _, d := range s.Drivers {
		n, ok := engineNames[d]
		if !ok {
			n = d
		}
		names = append(names, n)
	}
	return strings.Join(names, " + ")
}

// refusalEngineRE finds the engine a refusal names: shepherd's messages
// say "cannot write X for SQLite replicas (lite)", "... on SQLite
// replicas", "... with MariaDB replicas: ...".
var refusalEngineRE = regexp.MustCompile(`\b(?:for|on|with) ([A-Z][A-Za-z]*)(?:/[A-Za-z]+)? replicas\b`)

// refusalOutcome is the outcome of a statement shepherd refused with
// message msg: "refused:ENGINE" when the message names the engine whose
// replicas cannot take the construct (the last one it names), "refused"
// when shepherd refuses it whatever the engines.
func refusalOutcome(msg string) string {
	m := refusalEngineRE.FindAllStringSubmatch(msg, -1)
	if len(m) == 0 {
		return outRefused
	}
	return outRefused + ":" + m[len(m)-1][1]
}

// outcomeBase is the outcome without the refusing engine.
func outcomeBase(outcome string) string {
	base, _, _ := strings.Cut(outcome, ":")
	return base
}

// TestCorpus runs the corpus through shepherd on every setup of
// corpusSetups, in parallel subtests, each against a PostgreSQL database
// of its own ("PostgreSQL alone"); see the top of this file.
func TestCorpus(t *testing.T) {
	skipUnlessCorpus(t)
	stmts, err := loadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	setups := corpusSetups()
	outcomes := make([][]string, len(setups))
	ran := make([]bool, len(setups))
	t.Run("setups", func(t *testing.T) {
		for i, s := range setups {
			t.Run(s.Name, func(t *testing.T) {
				t.Parallel()
				ran[i] = true
				outcomes[i] = runCorpus(t, s, stmts)
			})
		}
	})
	if *updateCorpus {
		writeCorpusOutcomes(t, stmts, setups, ran, outcomes)
	}
}

// runCorpus runs the corpus on one setup, checks that the replicas agree
// and compares the outcomes with the setup's column of expected.txt. It
// returns the outcomes, or nil if the run did not reach the end.
func runCorpus(t *testing.T, setup corpusSetup, stmts []*corpusStmt) []string {
	ctx := context.Background()
	cfg := setup.config(t)
	var drivers []string
	for _, r := range cfg.Replicas {
		drivers = append(drivers, r.Driver)
	}
	if !slices.Equal(drivers, setup.Drivers) {
		t.Fatalf("setup %s has replicas of %v, its description says %v", setup.Name, drivers, setup.Drivers)
	}
	addr, srv := start(t, cfg)
	shepherdDSN := fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)
	connectShepherd := func() (*pgconn.PgConn, error) { return pgconn.Connect(ctx, shepherdDSN) }
	sh, err := connectShepherd()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { sh.Close(ctx) }()
	aloneCfg, err := pgconn.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	aloneCfg.RuntimeParams["timezone"] = "UTC" // as shepherd's sessions
	alone, err := pgconn.ConnectConfig(ctx, aloneCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close(ctx)

	// shepherd builds its catalog engine (PostgreSQL's built-in catalog
	// rows in an in-memory SQLite) at the first catalog query; under
	// -race, with the other setup doing the same, that alone can take
	// longer than corpusStatementTimeout, which is there to find hangs.
	warmCtx, cancelWarm := context.WithTimeout(ctx, 5*time.Minute)
	_, err = sh.Exec(warmCtx, "SELECT count(*) FROM pg_catalog.pg_namespace").ReadAll()
	cancelWarm()
	if err != nil {
		t.Fatalf("first catalog query: %v", err)
	}

	began := time.Now()
	run := &corpusRun{t: t, ctx: ctx, shepherd: sh, alone: alone, reconnect: connectShepherd}
	results := make([]corpusResult, 0, len(stmts))
	for _, st := range stmts {
		results = append(results, run.one(st))
		if run.hangs >= corpusMaxHangs {
			t.Fatalf("%s: %d statements hung or broke the connection; stopping (last: %s)", st.Pos(), run.hangs, results[len(results)-1].detail)
		}
	}
	sh = run.shepherd
	t.Logf("%s: %d statements in %v", setup.Engines(), len(stmts), time.Since(began).Round(time.Millisecond))

	idleCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idleCtx); err != nil {
		t.Fatalf("cluster not idle after the corpus: %v", err)
	}
	assertReplicas(t, addr, len(cfg.Replicas))
	assertSameTables(t, cfg)

	return checkCorpusOutcomes(t, stmts, setup, results)
}

// checkCorpusOutcomes reports one setup's run and compares it with its
// column of expected.txt (unless -update-corpus). It returns the
// outcomes.
func checkCorpusOutcomes(t *testing.T, stmts []*corpusStmt, setup corpusSetup, results []corpusResult) []string {
	t.Helper()
	counts := map[string]int{}
	var differs []string
	for _, r := range results {
		counts[outcomeBase(r.outcome)]++
		if r.outcome == outDiffers {
			differs = append(differs, fmt.Sprintf("%s [%s] %s\n    %s", r.st.Pos(), r.st.Feature, r.st.Short(), r.detail))
		}
		if testing.Verbose() && r.outcome != outSame {
			t.Logf("%s %s [%s] %s\n    %s", r.outcome, r.st.Pos(), r.st.Feature, r.st.Short(), r.detail)
		}
	}
	t.Logf("%s: outcomes: %d same, %d refused, %d cascade, %d differs", setup.Name, counts[outSame], counts[outRefused], counts[outCascade], counts[outDiffers])

	outcomes := make([]string, len(results))
	for i, r := range results {
		outcomes[i] = r.outcome
	}
	if !*updateCorpus {
		expected, err := readExpected(corpusExpected, stmts, corpusSetups())
		if err != nil {
			t.Fatalf("%v (rewrite it with -update-corpus)", err)
		}
		col := slices.IndexFunc(corpusSetups(), func(s corpusSetup) bool { return s.Name == setup.Name })
		var changed []string
		for i, r := range results {
			if want := expected[col][i]; want != r.outcome {
				changed = append(changed, fmt.Sprintf("%s [%s] %s: was %s, now %s\n    %s", r.st.Pos(), r.st.Feature, r.st.Short(), want, r.outcome, r.detail))
			}
		}
		if len(changed) > 0 {
			t.Errorf("%s: %d statements changed outcome against %s (rewrite it with -update-corpus once the change is intended):\n%s",
				setup.Name, len(changed), corpusExpected, strings.Join(changed, "\n"))
		}
	}
	// Every statement answers as PostgreSQL alone does or is refused;
	// SHEPHERD_CORPUS_ALLOW_DIFFERS=1 tolerates differences while working
	// on the translator.
	if len(differs) > 0 && os.Getenv("SHEPHERD_CORPUS_ALLOW_DIFFERS") != "1" {
		t.Errorf("%s: %d statements differ from PostgreSQL alone (SHEPHERD_CORPUS_ALLOW_DIFFERS=1 tolerates them):\n%s",
			setup.Name, len(differs), strings.Join(differs, "\n"))
	}
	return outcomes
}

// writeCorpusOutcomes rewrites expected.txt and the document from the
// setups' outcomes. A setup the run left out (-run 'TestCorpus$/setups/cbs')
// keeps its column of expected.txt; one that stopped before the end
// keeps the files as they are.
func writeCorpusOutcomes(t *testing.T, stmts []*corpusStmt, setups []corpusSetup, ran []bool, outcomes [][]string) {
	t.Helper()
	var old [][]string
	for i, s := range setups {
		if ran[i] && outcomes[i] == nil {
			t.Fatalf("not rewriting %s: setup %s stopped before the end of the corpus", corpusExpected, s.Name)
		}
		if outcomes[i] != nil {
			continue
		}
		if old == nil {
			var err error
			if old, err = readExpected(corpusExpected, stmts, setups); err != nil {
				t.Fatalf("setup %s did not run, and its outcomes cannot be kept: %v", s.Name, err)
			}
		}
		outcomes[i] = old[i]
	}
	if err := os.WriteFile(corpusExpected, []byte(formatExpected(stmts, setups, outcomes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sqlSupportDoc, []byte(formatSupportDoc(stmts, setups, outcomes)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s and %s", corpusExpected, sqlSupportDoc)
}

// TestCorpusFiles checks, without any engine, that the corpus parses, is
// big enough, and that expected.txt and docs/sql-support.md match it.
func TestCorpusFiles(t *testing.T) {
	stmts, err := loadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) < corpusMinStatements {
		t.Errorf("the corpus has %d statements, issue 4 asks for at least %d", len(stmts), corpusMinStatements)
	}
	for _, st := range stmts {
		if st.Compare == "unordered" && !hasTopLevelOrderBy(st.SQL) {
			t.Errorf("%s: compare: unordered on a statement without ORDER BY", st.Pos())
		}
	}
	setups := corpusSetups()
	outcomes, err := readExpected(corpusExpected, stmts, setups)
	if err != nil {
		t.Fatalf("%v (rewrite it with go test ./internal/server -run 'TestCorpus$' -update-corpus)", err)
	}
	doc, err := os.ReadFile(sqlSupportDoc)
	if err != nil {
		t.Fatal(err)
	}
	if want := formatSupportDoc(stmts, setups, outcomes); string(doc) != want {
		t.Errorf("%s is out of date: rewrite it with go test ./internal/server -run 'TestCorpus$' -update-corpus", sqlSupportDoc)
	}
}

// TestRefusalOutcome: a refusal is attributed to the engine its message
// names, in each form shepherd's messages name one.
func TestRefusalOutcome(t *testing.T) {
	for msg, want := range map[string]string{
		"ERROR: shepherd cannot write UPDATE ... RETURNING for MariaDB/MySQL replicas (maria) (SQLSTATE 0A000)":                                              "refused:MariaDB",
		"ERROR: shepherd cannot write DEFAULT in VALUES (SQLite has no DEFAULT there; give every row DEFAULT or a value) for SQLite replicas (lite1, lite3)": "refused:SQLite",
		"ERROR: shepherd cannot use a non-text value as a string function's text argument on SQLite replicas (SQLSTATE 0A000)":                               "refused:SQLite",
		"ERROR: shepherd does not support AT TIME ZONE in a statement that writes, with MariaDB replicas: MariaDB prints ...":                                "refused:MariaDB",
		"ERROR: shepherd cannot write operator ? for DuckDB replicas (duck)":                                                                                 "refused:DuckDB",
		"ERROR: shepherd does not support SELECT INTO; use CREATE TABLE ... AS (SQLSTATE 0A000)":                                                             "refused",
		"ERROR: shepherd cannot write x for replicas":                                                                                                        "refused",
	} {
		if got := refusalOutcome(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}

// TestCorpusOnPostgres runs the corpus on PostgreSQL by itself and checks
// that it does what the corpus says: every statement succeeds except those
// with an error directive, which fail with that SQLSTATE. It keeps the
// corpus honest; TestCorpus relies on it.
func TestCorpusOnPostgres(t *testing.T) {
	stmts, err := loadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg, err := pgconn.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["timezone"] = "UTC"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	t.Logf("%d statements", len(stmts))
	for _, st := range stmts {
		res := runStmt(ctx, conn, st)
		switch {
		case res.failed() && res.code == "":
			t.Fatalf("%s: %v", st.Pos(), res.err)
		case res.code != st.Error && st.Error == "":
			t.Errorf("%s: %s: PostgreSQL fails it (%v); mark it -- error: %s or fix it", st.Pos(), st.Short(), res.err, res.code)
		case res.code != st.Error:
			t.Errorf("%s: %s: want SQLSTATE %s from PostgreSQL, got %s", st.Pos(), st.Short(), st.Error, res)
		}
	}
}

// formatExpected writes expected.txt: one line per statement, an
// outcome per setup.
func formatExpected(stmts []*corpusStmt, setups []corpusSetup, outcomes [][]string) string {
	var b strings.Builder
	b.WriteString("# Outcome of every corpus statement through shepherd on each setup against\n")
	b.WriteString("# PostgreSQL alone; see corpus_test.go. refused:ENGINE is a refusal for\n")
	b.WriteString("# that engine's replicas, refused alone one whatever the engines.\n")
	for _, s := range setups {
		fmt.Fprintf(&b, "# %s: %s, %s\n", s.Name, s.Engines(), s.About)
	}
	b.WriteString("# Rewrite: go test ./internal/server -run 'TestCorpus$' -update-corpus\n")
	b.WriteString(expectedHeader(setups) + "\n")
	for i, st := range stmts {
		fmt.Fprintf(&b, "%s\t", st.Pos())
		for j := range setups {
			fmt.Fprintf(&b, "%s\t", outcomes[j][i])
		}
		fmt.Fprintf(&b, "%s\t%s\n", st.Feature, st.Short())
	}
	return b.String()
}

// expectedHeader is the line of expected.txt naming its columns.
func expectedHeader(setups []corpusSetup) string {
	h := "# position"
	for _, s := range setups {
		h += "\t" + s.Name
	}
	return h + "\tfeature\tstatement (first 60 characters)"
}

// readExpected reads expected.txt and returns the outcomes of each setup
// (outcomes[setup][statement]), checking the file lists exactly the
// corpus and the setups.
func readExpected(path string, stmts []*corpusStmt, setups []corpusSetup) ([][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	outcomes := make([][]string, len(setups))
	n, header := 0, false
	for ln, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "# position\t") {
			if line != expectedHeader(setups) {
				return nil, fmt.Errorf("%s:%d: the columns are %q, the setups are %q: the setups changed", path, ln+1, line, expectedHeader(setups))
			}
			header = true
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !header {
			return nil, fmt.Errorf("%s:%d: no line naming the setups before the outcomes", path, ln+1)
		}
		f := strings.SplitN(line, "\t", 3+len(setups))
		if len(f) != 3+len(setups) {
			return nil, fmt.Errorf("%s:%d: want %d tab-separated fields", path, ln+1, 3+len(setups))
		}
		if n >= len(stmts) {
			return nil, fmt.Errorf("%s:%d: more lines than corpus statements (%d)", path, ln+1, len(stmts))
		}
		st := stmts[n]
		feature, short := f[1+len(setups)], f[2+len(setups)]
		if f[0] != st.Pos() || feature != st.Feature || short != st.Short() {
			return nil, fmt.Errorf("%s:%d: lists %s %q, the corpus has %s %q there: the corpus changed", path, ln+1, f[0], short, st.Pos(), st.Short())
		}
		for j := range setups {
			o := f[1+j]
			if !slices.Contains(outcomeOrder, outcomeBase(o)) || (o != outcomeBase(o) && outcomeBase(o) != outRefused) {
				return nil, fmt.Errorf("%s:%d: unknown outcome %q", path, ln+1, o)
			}
			outcomes[j] = append(outcomes[j], o)
		}
		n++
	}
	if n != len(stmts) {
		return nil, fmt.Errorf("%s lists %d statements, the corpus has %d", path, n, len(stmts))
	}
	return outcomes, nil
}

// outcomeTally counts outcomes, and refusals by engine.
type outcomeTally struct {
	n       int
	counts  map[string]int // by outcomeBase
	refused map[string]int // by engine, "" for shepherd's own
}

func newTally() *outcomeTally {
	return &outcomeTally{counts: map[string]int{}, refused: map[string]int{}}
}

func (c *outcomeTally) add(outcome string) {
	c.n++
	c.counts[outcomeBase(outcome)]++
	if base, engine, _ := strings.Cut(outcome, ":"); base == outRefused {
		c.refused[engine]++
	}
}

// refusedBy says which engines' replicas the refusals are for:
// "MariaDB 3, SQLite 1, any 2" ("any": shepherd refuses the construct
// whatever the engines).
func (c *outcomeTally) refusedBy() string {
	var engines []string
	for e := range c.refused {
		engines = append(engines, e)
	}
	slices.Sort(engines)
	if len(engines) > 0 && engines[0] == "" {
		engines = append(engines[1:], "") // "any" last
	}
	var parts []string
	for _, e := range engines {
		name := e
		if e == "" {
			name = "any"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, c.refused[e]))
	}
	return strings.Join(parts, ", ")
}

// cell is a feature's outcomes on one setup: "all same", or "3 same, 2
// refused (MariaDB 2), 1 cascade".
func (c *outcomeTally) cell() string {
	if c.counts[outSame] == c.n {
		return "all same"
	}
	var parts []string
	for _, o := range outcomeOrder {
		if c.counts[o] == 0 {
			continue
		}
		p := fmt.Sprintf("%d %s", c.counts[o], o)
		if o == outRefused {
			p += " (" + c.refusedBy() + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// describeOutcome says an outcome in words: "refused for MariaDB".
func describeOutcome(o string) string {
	base, engine, _ := strings.Cut(o, ":")
	switch {
	case base != outRefused:
		return base
	case engine == "":
		return "refused on any engine"
	}
	return "refused for " + engine
}

// formatSupportDoc writes docs/sql-support.md from the outcomes of each
// setup (outcomes[setup][statement]).
func formatSupportDoc(stmts []*corpusStmt, setups []corpusSetup, outcomes [][]string) string {
	type feature struct {
		name    string
		tallies []*outcomeTally // by setup
		others  []int           // statements not "same" on some setup
	}
	var features []*feature
	byName := map[string]*feature{}
	totals := make([]*outcomeTally, len(setups))
	for j := range setups {
		totals[j] = newTally()
	}
	for i, st := range stmts {
		f := byName[st.Feature]
		if f == nil {
			f = &feature{name: st.Feature}
			for range setups {
				f.tallies = append(f.tallies, newTally())
			}
			byName[st.Feature] = f
			features = append(features, f)
		}
		other := false
		for j := range setups {
			f.tallies[j].add(outcomes[j][i])
			totals[j].add(outcomes[j][i])
			other = other || outcomes[j][i] != outSame
		}
		if other {
			f.others = append(f.others, i)
		}
	}
	var b strings.Builder
	b.WriteString("# SQL support\n\n")
	b.WriteString("<!-- Generated from internal/server/testdata/corpus by\n")
	b.WriteString("     go test ./internal/server -run 'TestCorpus$' -update-corpus\n")
	b.WriteString("     Do not edit: TestCorpusFiles fails when this file is out of date. -->\n\n")
	b.WriteString("What shepherd does with each statement of its cross-engine SQL corpus\n")
	b.WriteString("(`internal/server/testdata/corpus`), statements written the way a PostgreSQL\n")
	b.WriteString("application writes them. The test `TestCorpus` runs every statement through\n")
	b.WriteString("shepherd on each setup below, and on PostgreSQL alone, and compares:\n\n")
	b.WriteString("- **same**: the same command tag, column names and types and rows (or the\n")
	b.WriteString("  same SQLSTATE for a statement that must fail) as PostgreSQL;\n")
	b.WriteString("- **refused**: shepherd refuses the statement with SQLSTATE 0A000 before\n")
	b.WriteString("  any replica runs it; the message names the construct and the engine\n")
	b.WriteString("  whose replicas cannot take it (counted below by engine; \"any\" when\n")
	b.WriteString("  shepherd refuses it whatever the engines);\n")
	b.WriteString("- **cascade**: the statement fails (or succeeds) the same way on both only\n")
	b.WriteString("  because an earlier statement was refused or failed, for example a table\n")
	b.WriteString("  that could not be created;\n")
	b.WriteString("- **differs**: shepherd's answer is not PostgreSQL's (a gap in translation\n")
	b.WriteString("  or a bug).\n\n")
	b.WriteString("After the corpus, every replica must be up with no mismatch and hold the\n")
	b.WriteString("same rows as the others.\n\n")
	b.WriteString("## Setups\n\n")
	b.WriteString("| setup | replicas | statements | same | refused | cascade | differs | refused for |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---|\n")
	for j, s := range setups {
		c := totals[j]
		fmt.Fprintf(&b, "| %s | %s, %s | %d | %d | %d (%.1f %%) | %d | %d | %s |\n", s.Name, s.Engines(), s.About, c.n,
			c.counts[outSame], c.counts[outRefused], 100*float64(c.counts[outRefused])/float64(max(c.n, 1)),
			c.counts[outCascade], c.counts[outDiffers], c.refusedBy())
	}
	b.WriteString("\n## By feature\n\n")
	b.WriteString("| feature | statements |")
	for _, s := range setups {
		fmt.Fprintf(&b, " %s |", s.Name)
	}
	b.WriteString("\n|---|---:|")
	for range setups {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, f := range features {
		fmt.Fprintf(&b, "| %s | %d |", f.name, f.tallies[0].n)
		for j := range setups {
			fmt.Fprintf(&b, " %s |", f.tallies[j].cell())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Statements not answered as PostgreSQL answers them on every setup\n")
	anyOther := false
	for _, f := range features {
		if len(f.others) == 0 {
			continue
		}
		anyOther = true
		fmt.Fprintf(&b, "\n### %s\n\n", f.name)
		for _, i := range f.others {
			st := stmts[i]
			var says []string
			for j, s := range setups {
				says = append(says, s.Name+": "+describeOutcome(outcomes[j][i]))
			}
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", st.Short(), st.Pos(), strings.Join(says, "; "))
		}
	}
	if !anyOther {
		b.WriteString("\nNone.\n")
	}
	return b.String()
}

// catalogQuery lists the user tables of an engine, by driver name.
var catalogQuery = map[string]string{
	"postgres":   "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
	"mysql":      "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
	"sqlite":     "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
	"sqlite-cgo": "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
}

// replicaConn is a direct session on one replica of cfg.
type replicaConn struct {
	name, driver string
	engine       driver.Engine
	conn         driver.Conn
}

// openReplicas opens a direct session on every replica of cfg, closed when
// the test ends.
func openReplicas(t *testing.T, cfg *config.Config) []*replicaConn {
	t.Helper()
	ctx := context.Background()
	var out []*replicaConn
	for _, r := range cfg.Replicas {
		open, ok := driver.Lookup(r.Driver)
		if !ok {
			t.Fatalf("no driver %q", r.Driver)
		}
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(ctx)
		if err != nil {
			e.Close()
			t.Fatal(err)
		}
		rc := &replicaConn{name: r.Name, driver: r.Driver, engine: e, conn: c}
		t.Cleanup(func() { rc.conn.Close(); rc.engine.Close() })
		out = append(out, rc)
	}
	return out
}

// query runs a read on the replica.
func (rc *replicaConn) query(sql string) (*answer.Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), corpusStatementTimeout)
	defer cancel()
	return rc.conn.Exec(ctx, driver.Query{SQL: sql, ReturnsRows: true, Verb: "SELECT"})
}

// tables lists the replica's user tables, lower case, sorted. Tables of
// shepherd's own (named shepherd_...) are left out.
func (rc *replicaConn) tables() ([]string, error) {
	q, ok := catalogQuery[rc.driver]
	if !ok {
		return nil, fmt.Errorf("no catalog query for driver %q", rc.driver)
	}
	a, err := rc.query(q)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range a.Rows {
		n := strings.ToLower(r[0].Text)
		if !strings.HasPrefix(n, "shepherd_") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// assertSameTables checks that every replica of cfg has the same user
// tables with the same columns and the same rows (as multisets, compared
// canonically).
func assertSameTables(t *testing.T, cfg *config.Config) {
	t.Helper()
	reps := openReplicas(t, cfg)
	var lists [][]string
	for _, rc := range reps {
		names, err := rc.tables()
		if err != nil {
			t.Errorf("replica %s: listing tables: %v", rc.name, err)
			return
		}
		lists = append(lists, names)
	}
	for i := 1; i < len(reps); i++ {
		if !slices.Equal(lists[0], lists[i]) {
			t.Errorf("replica %s has tables %v, %s has %v", reps[i].name, lists[i], reps[0].name, lists[0])
		}
	}
	// Compare the tables every replica has.
	for _, table := range lists[0] {
		if !slices.Contains(lists[1], table) || (len(lists) > 2 && !slices.Contains(lists[2], table)) {
			continue
		}
		assertSameRows(t, reps, fmt.Sprintf("SELECT * FROM %q", table), table)
	}
}

// assertSameRows runs query on every replica and checks the answers hold
// the same column names and the same rows. The columns of a PostgreSQL
// replica, if there is one, else of a SQLite one, say how to read every
// replica's values (a boolean that MariaDB stores as a number is still a
// boolean).
func assertSameRows(t *testing.T, reps []*replicaConn, query, what string) {
	t.Helper()
	answers := make([]*answer.Answer, len(reps))
	var hints []answer.Column
	for i, rc := range reps {
		a, err := rc.query(query)
		if err != nil {
			t.Errorf("replica %s: %s: %v", rc.name, query, err)
			return
		}
		answers[i] = a
		if rc.driver == "postgres" && hints == nil {
			hints = a.Columns
		}
	}
	for i, rc := range reps {
		// Without PostgreSQL, a SQLite replica's columns: DuckDB keeps
		// json as text, which SQLite's declared type says is json.
		if hints == nil && strings.HasPrefix(rc.driver, "sqlite") {
			hints = answers[i].Columns
		}
	}
	for i := 1; i < len(reps); i++ {
		if d := diffAnswers(answers[0], answers[i], hints); d != "" {
			t.Errorf("%s: replica %s differs from %s: %s", what, reps[i].name, reps[0].name, d)
		}
	}
}

// diffAnswers compares two replicas' answers as multisets of rows, reading
// values as hinted, and says how they differ.
func diffAnswers(a, b *answer.Answer, hints []answer.Column) string {
	var an, bn []string
	for _, c := range a.Columns {
		an = append(an, strings.ToLower(c.Name))
	}
	for _, c := range b.Columns {
		bn = append(bn, strings.ToLower(c.Name))
	}
	if !slices.Equal(an, bn) {
		return fmt.Sprintf("columns %v against %v", bn, an)
	}
	if a.DigestWith(false, hints) == b.DigestWith(false, hints) {
		return ""
	}
	onlyA, onlyB := rowDiff(a, b, hints), rowDiff(b, a, hints)
	var out strings.Builder
	fmt.Fprintf(&out, "%d rows against %d", len(b.Rows), len(a.Rows))
	show := func(label string, rows [][]answer.Value, cols []answer.Column) {
		for i, r := range rows {
			if i == 5 {
				fmt.Fprintf(&out, "\n      ... %d more", len(rows)-5)
				break
			}
			one := &answer.Answer{Columns: cols, Rows: [][]answer.Value{r}, Tag: "SELECT 1"}
			fmt.Fprintf(&out, "\n      %s %s", label, strings.SplitN(renderAnswer(one), "\n      ", 2)[1])
		}
	}
	show("only here:   ", onlyB, b.Columns)
	show("only there:  ", onlyA, a.Columns)
	return out.String()
}

// rowDiff returns the rows of a that b lacks (multiset difference, by
// canonical form).
func rowDiff(a, b *answer.Answer, hints []answer.Column) [][]answer.Value {
	key := func(x *answer.Answer, r []answer.Value) answer.Digest {
		return (&answer.Answer{Columns: x.Columns, Rows: [][]answer.Value{r}, Tag: "SELECT 1", RowsAffected: 1}).DigestWith(true, hints)
	}
	have := map[answer.Digest]int{}
	for _, r := range b.Rows {
		have[key(b, r)]++
	}
	var out [][]answer.Value
	for _, r := range a.Rows {
		k := key(a, r)
		if have[k] > 0 {
			have[k]--
			continue
		}
		out = append(out, r)
	}
	return out
}

// TestCorpusPinnedValues: now(), current_timestamp, current_date,
// random(), gen_random_uuid() and SERIAL keys written through shepherd
// leave the three replicas with identical rows, with the values PostgreSQL
// would have chosen: one timestamp per transaction, near the wall clock; a
// fresh random number and UUID per call; keys 1, 2, 3, ...
func TestCorpusPinnedValues(t *testing.T) {
	skipUnlessCorpus(t)
	checkPinnedValues(t, realCluster(t, "cbs"))
}

// checkPinnedValues writes the pinned values through a shepherd for cfg
// and checks what the replicas hold.
func checkPinnedValues(t *testing.T, cfg *config.Config) {
	ctx := context.Background()
	addr, srv := start(t, cfg)
	c, err := pgconn.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	before := time.Now()
	steps := []string{
		`CREATE TABLE pinned (
			id serial PRIMARY KEY,
			at timestamptz NOT NULL DEFAULT now(),
			ts timestamp DEFAULT current_timestamp,
			d date DEFAULT current_date,
			luck double precision,
			token uuid,
			note text NOT NULL)`,
		"INSERT INTO pinned (note) VALUES ('defaults')",
		"INSERT INTO pinned (at, ts, d, luck, token, note) VALUES (now(), current_timestamp, current_date, random(), gen_random_uuid(), 'explicit')",
		"INSERT INTO pinned (luck, token, note) VALUES (random(), gen_random_uuid(), 'row-1'), (random(), gen_random_uuid(), 'row-2')",
		"BEGIN",
		"INSERT INTO pinned (luck, note) VALUES (random(), 'tx-1')",
		"INSERT INTO pinned (at, luck, note) VALUES (now(), random(), 'tx-2')",
		"COMMIT",
		"UPDATE pinned SET luck = random(), token = gen_random_uuid() WHERE note = 'defaults'",
	}
	for _, s := range steps {
		if err := execRaw(ctx, c, s); err != nil {
			t.Fatalf("%s: %v", strings.Join(strings.Fields(s), " "), err)
		}
	}
	res := runStmt(ctx, c, &corpusStmt{SQL: "INSERT INTO pinned (note) VALUES ('returning') RETURNING id"})
	if res.failed() {
		t.Fatalf("INSERT ... RETURNING id: %v", res.err)
	}
	after := time.Now()
	idleCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idleCtx); err != nil {
		t.Fatal(err)
	}
	const read = "SELECT id, at, ts, d, luck, token, note FROM pinned ORDER BY id"
	reps := openReplicas(t, cfg)
	assertSameRows(t, reps, read, "pinned")
	assertReplicas(t, addr, len(cfg.Replicas))

	// What the client reads is what the replicas hold.
	got := runStmt(ctx, c, &corpusStmt{SQL: read})
	var pg *answer.Answer
	for _, rc := range reps {
		if rc.driver == "postgres" {
			if pg, err = rc.query(read); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got.failed() {
		t.Fatalf("reading through shepherd: %v", got.err)
	}
	if got.ans.DigestWith(true, pg.Columns) != pg.DigestWith(true, pg.Columns) {
		t.Errorf("shepherd answers\n  %s\nthe PostgreSQL replica holds\n  %s", indent(renderAnswer(got.ans)), indent(renderAnswer(pg)))
	}
	checkPinned(t, pg, res.ans, before, after)
}

// checkPinned checks the pinned rows (as the PostgreSQL replica holds
// them) against PostgreSQL's own semantics.
func checkPinned(t *testing.T, a, returning *answer.Answer, before, after time.Time) {
	t.Helper()
	const want = 7
	if len(a.Rows) != want {
		t.Fatalf("%d rows, want %d:\n%s", len(a.Rows), want, renderAnswer(a))
	}
	row := map[string][]answer.Value{}
	parseTime := func(v answer.Value, layout string) time.Time {
		tm, err := time.Parse(layout, v.Text)
		if err != nil {
			t.Errorf("%q: %v", v.Text, err)
		}
		return tm
	}
	tokens := map[string]bool{}
	lucks := map[string]bool{}
	for i, r := range a.Rows {
		note := r[6].Text
		row[note] = r
		if r[0].Text != fmt.Sprint(i+1) {
			t.Errorf("row %q has id %s, want %d", note, r[0].Text, i+1)
		}
		at := parseTime(r[1], "2006-01-02 15:04:05.999999999Z07")
		ts := parseTime(r[2], "2006-01-02 15:04:05.999999999")
		if slack := 2 * time.Second; at.Before(before.Add(-slack)) || at.After(after.Add(slack)) {
			t.Errorf("row %q: at %s is not between %s and %s", note, r[1].Text, before.UTC(), after.UTC())
		}
		if !ts.Equal(at.UTC()) {
			t.Errorf("row %q: current_timestamp %s and now() %s differ in one transaction", note, r[2].Text, r[1].Text)
		}
		if r[3].Text != at.UTC().Format("2006-01-02") {
			t.Errorf("row %q: current_date %s is not the date of now() %s", note, r[3].Text, r[1].Text)
		}
		if note != "returning" {
			var luck float64
			if _, err := fmt.Sscan(r[4].Text, &luck); err != nil || luck < 0 || luck >= 1 {
				t.Errorf("row %q: random() gave %q", note, r[4].Text)
			}
			if lucks[r[4].Text] {
				t.Errorf("row %q: random() repeated %s", note, r[4].Text)
			}
			lucks[r[4].Text] = true
		}
		if !r[5].Null {
			if len(r[5].Text) != 36 || tokens[r[5].Text] {
				t.Errorf("row %q: gen_random_uuid() gave %q (repeated or malformed)", note, r[5].Text)
			}
			tokens[r[5].Text] = true
		}
	}
	if len(tokens) != 4 {
		t.Errorf("%d distinct UUIDs, want 4", len(tokens))
	}
	same := func(x, y string) {
		if row[x] != nil && row[y] != nil && row[x][1].Text != row[y][1].Text {
			t.Errorf("rows %q and %q were written in one transaction but have now() %s and %s", x, y, row[x][1].Text, row[y][1].Text)
		}
	}
	same("row-1", "row-2")
	same("tx-1", "tx-2")
	if returning == nil || len(returning.Rows) != 1 || returning.Rows[0][0].Text != fmt.Sprint(want) {
		t.Errorf("INSERT ... RETURNING id answered %s, want id %d", renderAnswer(returning), want)
	}
}
