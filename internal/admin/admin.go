// Package admin is shepherd's admin console: the database named
// "shepherd". It answers a few commands about the cluster itself and never
// touches the replicas' data.
//
//	SHOW REPLICAS          one row per replica: name, driver, class, role, state,
//	                       mismatches, reruns, digests, differences, repaired
//	SHOW MODE              the replication mode
//	SHOW VIEW              the primaries so far
//	CHECK [TABLE t]        compare the replicas now: one row per difference
//	REPAIR [TABLE t]       compare and repair now: one row per difference, with
//	                       what was done about it
//	SHOW REPAIRS           the differences found lately, by every pass
//	SHOW REPAIR STATUS     the running pass, and a summary of the latest
//	REJOIN REPLICA name    bring back a retired replica once an operator
//	                       rebuilt it: it catches up from the log and rejoins
package admin

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/repair"
)

// Database is the database name that selects the admin console.
const Database = "shepherd"

// Session is an admin console session. It implements pgwire.Session.
type Session struct {
	c      *cluster.Cluster
	repair *repair.Service
}

// New returns an admin session on c, whose compare-and-repair is r.
func New(c *cluster.Cluster, r *repair.Service) *Session { return &Session{c: c, repair: r} }

type command string

func (c command) SQL() string { return string(c) }

// run answers one command.
func (s *Session) run(ctx context.Context, text string) (*answer.Answer, error) {
	fields := strings.Fields(strings.TrimRight(strings.TrimSpace(text), "; \t\n"))
	norm := strings.ToUpper(strings.Join(fields, " "))
	if len(fields) > 0 && (strings.EqualFold(fields[0], "CHECK") || strings.EqualFold(fields[0], "REPAIR")) {
		return s.compare(ctx, fields)
	}
	if rejoin(fields) {
		if len(fields) != 3 {
			return nil, pgerr.New(pgerr.SyntaxError, "syntax: REJOIN REPLICA name")
		}
		if err := s.c.Reinstate(strings.Trim(fields[2], `"`)); err != nil {
			return nil, err
		}
		return &answer.Answer{Tag: "REJOIN REPLICA"}, nil
	}
	switch norm {
	case "SHOW REPAIRS":
		return s.repairs(), nil
	case "SHOW REPAIR STATUS":
		return s.repairStatus(), nil
	case "SHOW REPLICAS":
		return s.replicas(), nil
	case "SHOW MODE":
		return table([]string{"mode"}, [][]string{{s.c.Mode()}}), nil
	case "SHOW VIEW":
		var rows [][]string
		for _, v := range s.c.Views() {
			rows = append(rows, []string{strconv.Itoa(v.Number), v.Primary, v.Since.UTC().Format(time.RFC3339Nano), v.Why})
		}
		a := table([]string{"view", "primary", "since", "why"}, rows)
		a.Columns[0].Type = answer.Int
		return a, nil
	}
	return nil, pgerr.New(pgerr.FeatureNotSupported, "the admin console does not know %q", strings.TrimSpace(text)).
		WithHint("available: SHOW REPLICAS, SHOW MODE, SHOW VIEW, SHOW REPAIRS, SHOW REPAIR STATUS, CHECK [TABLE t], REPAIR [TABLE t], REJOIN REPLICA name")
}

// rejoin reports whether fields are a REJOIN REPLICA command.
func rejoin(fields []string) bool {
	return len(fields) >= 2 && strings.EqualFold(fields[0], "REJOIN") && strings.EqualFold(fields[1], "REPLICA")
}

// compare runs CHECK or REPAIR [TABLE t].
func (s *Session) compare(ctx context.Context, fields []string) (*answer.Answer, error) {
	opts := repair.Options{Repair: strings.EqualFold(fields[0], "REPAIR")}
	switch {
	case len(fields) == 1:
	case len(fields) == 3 && strings.EqualFold(fields[1], "TABLE"):
		opts.Table = strings.Trim(fields[2], `"`)
		if !strings.HasPrefix(fields[2], `"`) {
			opts.Table = strings.ToLower(opts.Table)
		}
	default:
		return nil, pgerr.New(pgerr.SyntaxError, "syntax: %s [TABLE name]", strings.ToUpper(fields[0]))
	}
	rep, err := s.repair.Run(ctx, opts)
	if errors.Is(err, repair.ErrNoTable) {
		return nil, pgerr.New(pgerr.UndefinedTable, "relation %q does not exist (shepherd compares the tables created through it)", opts.Table)
	}
	if err != nil {
		return nil, err
	}
	names := []string{"replica", "table", "key", "problem", "detail"}
	if opts.Repair {
		names = append(names, "action")
	}
	var rows [][]string
	for _, f := range rep.Findings {
		row := []string{f.Replica, f.Table, f.Key, f.Problem, f.Detail}
		if opts.Repair {
			row = append(row, f.Action)
		}
		rows = append(rows, row)
	}
	return table(names, rows), nil
}

// repairStatus answers SHOW REPAIR STATUS.
func (s *Session) repairStatus() *answer.Answer {
	st := s.repair.Status()
	row := []string{st.Running, strconv.Itoa(st.Passes), "", "", "", "", "", "", "", "", ""}
	if l := st.Last; l != nil {
		row = []string{st.Running, strconv.Itoa(st.Passes), st.LastWhat, st.LastEnd.UTC().Format(time.RFC3339Nano),
			strconv.Itoa(l.Tables), strconv.Itoa(l.Rows), strconv.Itoa(l.Steps), strconv.Itoa(len(l.Findings)),
			strconv.Itoa(l.Remaining()), l.Elapsed.Round(time.Millisecond).String(), strings.Join(l.Skipped, "; ")}
	}
	return table([]string{"running", "passes", "last", "ended", "tables", "rows", "steps", "findings", "remaining", "took", "skipped"}, [][]string{row})
}

// repairs answers SHOW REPAIRS.
func (s *Session) repairs() *answer.Answer {
	var rows [][]string
	for _, f := range s.repair.History() {
		rows = append(rows, []string{f.Time.UTC().Format(time.RFC3339Nano), f.Replica, f.Table, f.Key, f.Problem, f.Detail, f.Action})
	}
	return table([]string{"time", "replica", "table", "key", "problem", "detail", "action"}, rows)
}

func (s *Session) replicas() *answer.Answer {
	var rows [][]string
	for _, r := range s.c.Replicas() {
		open, repaired := s.repair.Counts(r.Name)
		rows = append(rows, []string{r.Name, r.Driver, r.Class, r.Role, r.State,
			strconv.FormatInt(r.Mismatches, 10), strconv.FormatInt(r.Reruns, 10), strconv.FormatInt(r.Digests, 10),
			strconv.Itoa(open), strconv.Itoa(repaired), r.Reason})
	}
	a := table([]string{"name", "driver", "class", "role", "state", "mismatches", "reruns", "digests", "differences", "repaired", "reason"}, rows)
	for i := 5; i < len(a.Columns)-1; i++ {
		a.Columns[i].Type = answer.Int
	}
	return a
}

func table(names []string, rows [][]string) *answer.Answer {
	a := &answer.Answer{Tag: answer.Tag("SELECT", int64(len(rows))), RowsAffected: int64(len(rows))}
	for _, n := range names {
		a.Columns = append(a.Columns, answer.Column{Name: n, Type: answer.Text})
	}
	for _, r := range rows {
		row := make([]answer.Value, len(r))
		for i, v := range r {
			row[i] = answer.V(answer.Unknown, v)
		}
		a.Rows = append(a.Rows, row)
	}
	return a
}

// Query implements pgwire.Session: commands separated by semicolons.
func (s *Session) Query(ctx context.Context, sql string, emit func(*answer.Answer) error) error {
	any := false
	for part := range strings.SplitSeq(sql, ";") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		any = true
		a, err := s.run(ctx, part)
		if err != nil {
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	if !any {
		return pgwire.ErrEmptyQuery
	}
	return nil
}

// Prepare implements pgwire.Session.
func (s *Session) Prepare(ctx context.Context, sql string, paramOIDs []uint32) (pgwire.Statement, error) {
	if strings.TrimSpace(sql) != "" {
		if _, err := s.describe(sql); err != nil {
			return nil, err
		}
	}
	return command(sql), nil
}

// Describe implements pgwire.Session.
func (s *Session) Describe(ctx context.Context, st pgwire.Statement) ([]uint32, []answer.Column, error) {
	if strings.TrimSpace(st.SQL()) == "" {
		return nil, nil, nil
	}
	cols, err := s.describe(st.SQL())
	return nil, cols, err
}

// Execute implements pgwire.Session.
func (s *Session) Execute(ctx context.Context, st pgwire.Statement, params []pgwire.Param) (*answer.Answer, error) {
	if strings.TrimSpace(st.SQL()) == "" {
		return nil, pgwire.ErrEmptyQuery
	}
	return s.run(ctx, st.SQL())
}

// describe gives a command's result columns; CHECK and REPAIR, which take
// long, are described without running them.
func (s *Session) describe(sql string) ([]answer.Column, error) {
	fields := strings.Fields(strings.TrimRight(strings.TrimSpace(sql), "; \t\n"))
	if len(fields) > 0 && (strings.EqualFold(fields[0], "CHECK") || strings.EqualFold(fields[0], "REPAIR")) {
		names := []string{"replica", "table", "key", "problem", "detail"}
		if strings.EqualFold(fields[0], "REPAIR") {
			names = append(names, "action")
		}
		return table(names, nil).Columns, nil
	}
	if rejoin(fields) {
		return nil, nil // no rows; run only when executed
	}
	a, err := s.run(context.Background(), sql)
	if err != nil {
		return nil, err
	}
	return a.Columns, nil
}

// CloseStatement implements pgwire.Session.
func (s *Session) CloseStatement(pgwire.Statement) {}

// TxStatus implements pgwire.Session: the console has no transactions.
func (s *Session) TxStatus() byte { return 'I' }

// Cancel implements pgwire.Session: console commands do not block.
func (s *Session) Cancel() {}

// Close implements pgwire.Session.
func (s *Session) Close(context.Context) {}
