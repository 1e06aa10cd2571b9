package slt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Outcome is how shepherd's answer to a record compares with PostgreSQL's.
type Outcome string

// Outcomes of a record. Rejected records (PostgreSQL itself fails them)
// are not counted; every other outcome but Same is a finding.
const (
	// Same: both answered alike (command tag, column names and type
	// OIDs, values as text after the record's sort mode), and no replica
	// lost a vote or was taken out meanwhile.
	Same Outcome = "same"
	// Differs: another answer than PostgreSQL's, or an answer where
	// PostgreSQL fails the record.
	Differs Outcome = "differs"
	// Refused: shepherd refused the record with 0A000.
	Refused Outcome = "refused"
	// Failed: shepherd failed the record with another error (or the
	// connection broke, or the record timed out).
	Failed Outcome = "error"
	// Mismatch: a replica's answer lost a vote while every engine was
	// healthy (a false alarm).
	Mismatch Outcome = "mismatch"
	// ReplicaOut: a replica was taken out during the record.
	ReplicaOut Outcome = "replica-out"
	// Rejected: PostgreSQL fails the record, and so does shepherd; not
	// counted.
	Rejected Outcome = "rejected"
)

// Health is what a cluster says about its replicas after a record.
type Health struct {
	// Mismatches is the number of lost votes so far, over every replica.
	Mismatches int64
	// Out names the replicas not up, with their state and reason.
	Out []string
}

// Session is one side of the comparison: a connection that is opened
// again when it breaks.
type Session struct {
	Connect func(ctx context.Context) (*pgconn.PgConn, error)
	conn    *pgconn.PgConn
}

// Close closes the session's connection.
func (s *Session) Close(ctx context.Context) {
	if s.conn != nil {
		s.conn.Close(ctx)
		s.conn = nil
	}
}

func (s *Session) get(ctx context.Context) (*pgconn.PgConn, error) {
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	c, err := s.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s.conn = c
	return c, nil
}

// Runner runs records on shepherd and on PostgreSQL alone, in one session
// each, and compares.
type Runner struct {
	Shepherd, Postgres *Session
	// Health, if set, is asked after every record (once the cluster is
	// idle) for lost votes and replicas taken out.
	Health func(ctx context.Context) (Health, error)
	// Timeout bounds one record on one side (default 30 s).
	Timeout time.Duration

	last Health
}

// Result is the outcome of one record.
type Result struct {
	File    string
	Record  *Record
	Outcome Outcome
	// Code and Message are shepherd's error, if it failed the record.
	Code, Message string
	// Detail says what differs, for findings.
	Detail string
}

// Pos returns file:line of the record.
func (r *Result) Pos() string { return fmt.Sprintf("%s:%d", r.File, r.Record.Line) }

// answer is one side's answer to a record.
type answer struct {
	tag   string
	cols  []string // name and type OID
	rows  [][]string
	code  string
	msg   string
	fatal bool // no SQLSTATE: the connection broke or the record timed out
}

func (a *answer) failed() bool { return a.code != "" || a.fatal }

// null stands for SQL NULL among the values; no text value contains NUL.
const null = "\x00NULL"

// run sends sql through the simple protocol. With rollback, it runs inside
// a transaction block that is rolled back (to learn the answer without the
// effects).
func (s *Session) run(ctx context.Context, sql string, timeout time.Duration, rollback bool) answer {
	conn, err := s.get(ctx)
	if err != nil {
		return answer{fatal: true, msg: "connect: " + err.Error()}
	}
	if rollback {
		if err := conn.Exec(ctx, "BEGIN").Close(); err != nil {
			return errAnswer(err)
		}
		defer func() {
			if err := conn.Exec(ctx, "ROLLBACK").Close(); err != nil {
				conn.Close(ctx)
			}
		}()
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results, err := conn.Exec(rctx, sql).ReadAll()
	if err != nil {
		if conn.IsClosed() {
			s.conn = nil
		}
		return errAnswer(err)
	}
	var a answer
	for _, r := range results {
		a.tag = r.CommandTag.String()
		a.cols = a.cols[:0]
		for _, fd := range r.FieldDescriptions {
			a.cols = append(a.cols, fmt.Sprintf("%s %d", fd.Name, fd.DataTypeOID))
		}
		a.rows = make([][]string, len(r.Rows))
		for i, row := range r.Rows {
			vals := make([]string, len(row))
			for j, v := range row {
				if v == nil {
					vals[j] = null
				} else {
					vals[j] = string(v)
				}
			}
			a.rows[i] = vals
		}
	}
	return a
}

func errAnswer(err error) answer {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return answer{code: pe.Code, msg: pe.Message}
	}
	return answer{fatal: true, msg: err.Error()}
}

// sorted returns the rows in the order the sort mode asks.
func sorted(rows [][]string, mode Sort) [][]string {
	switch mode {
	case RowSort:
		rows = slices.Clone(rows)
		slices.SortFunc(rows, slices.Compare)
	case ValueSort:
		var vals []string
		for _, r := range rows {
			vals = append(vals, r...)
		}
		slices.Sort(vals)
		rows = make([][]string, len(vals))
		for i, v := range vals {
			rows[i] = []string{v}
		}
	}
	return rows
}

// Run runs the records of one file (its records in order) and returns
// their results. Records are run whatever their conditions: those say
// where the file's expected values hold, and the comparison here is with
// PostgreSQL's own answers.
func (r *Runner) Run(ctx context.Context, file string, records []Record) []Result {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	if r.Health != nil {
		r.last, _ = r.Health(ctx)
	}
	out := make([]Result, 0, len(records))
	for i := range records {
		rec := &records[i]
		if rec.Kind == Halt {
			break
		}
		res := Result{File: file, Record: rec}
		sh := r.Shepherd.run(ctx, rec.SQL, timeout, false)
		// What shepherd failed is run on PostgreSQL alone without its
		// effects, so both sides go on from the same state.
		pg := r.Postgres.run(ctx, rec.SQL, timeout, sh.failed())
		res.Code, res.Message = sh.code, sh.msg
		switch {
		case pg.fatal:
			res.Outcome, res.Detail = Failed, "PostgreSQL alone: "+pg.msg
		case pg.failed() && sh.failed():
			res.Outcome = Rejected
		case pg.failed():
			res.Outcome = Differs
			res.Detail = fmt.Sprintf("PostgreSQL fails it (%s %s), shepherd answers %s", pg.code, pg.msg, sh.tag)
		case sh.code == "0A000":
			res.Outcome = Refused
		case sh.failed():
			res.Outcome = Failed
		default:
			res.Outcome, res.Detail = compare(rec, &sh, &pg)
		}
		if r.Health != nil {
			h, err := r.Health(ctx)
			switch {
			case err != nil:
				res.Outcome, res.Detail = Failed, "health: "+err.Error()
			case len(h.Out) > len(r.last.Out):
				res.Outcome, res.Detail = ReplicaOut, strings.Join(h.Out, "; ")+" (after: "+string(res.Outcome)+" "+res.Detail+")"
			case h.Mismatches > r.last.Mismatches && res.Outcome != Rejected && res.Outcome != Differs:
				res.Outcome, res.Detail = Mismatch, fmt.Sprintf("%d lost votes (after: %s %s)", h.Mismatches-r.last.Mismatches, res.Outcome, res.Detail)
			case h.Mismatches > r.last.Mismatches:
				res.Detail += fmt.Sprintf("; and %d lost votes", h.Mismatches-r.last.Mismatches)
			}
			if err == nil {
				r.last = h
			}
		}
		out = append(out, res)
	}
	return out
}

// compare compares two successful answers.
func compare(rec *Record, sh, pg *answer) (Outcome, string) {
	if sh.tag != pg.tag {
		return Differs, fmt.Sprintf("command tag %q, PostgreSQL %q", sh.tag, pg.tag)
	}
	if !slices.Equal(sh.cols, pg.cols) {
		return Differs, fmt.Sprintf("columns %q, PostgreSQL %q", sh.cols, pg.cols)
	}
	a, b := sorted(sh.rows, rec.Sort), sorted(pg.rows, rec.Sort)
	if len(a) != len(b) {
		return Differs, fmt.Sprintf("%d rows, PostgreSQL %d", len(a), len(b))
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return Differs, fmt.Sprintf("row %d: %s, PostgreSQL %s", i+1, show(a[i]), show(b[i]))
		}
	}
	return Same, ""
}

func show(row []string) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v == null {
			parts[i] = "NULL"
		} else {
			parts[i] = fmt.Sprintf("%q", v)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
