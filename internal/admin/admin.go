// Package admin is shepherd's admin console: the database named
// "shepherd". It answers a few commands about the cluster itself and never
// touches the replicas' data.
//
//	SHOW REPLICAS   one row per replica: name, driver, class, role, state, mismatches, reruns
//	SHOW MODE       the replication mode
package admin

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
)

// Database is the database name that selects the admin console.
const Database = "shepherd"

// Session is an admin console session. It implements pgwire.Session.
type Session struct {
	c *cluster.Cluster
}

// New returns an admin session on c.
func New(c *cluster.Cluster) *Session { return &Session{c: c} }

type command string

func (c command) SQL() string { return string(c) }

// run answers one command.
func (s *Session) run(text string) (*answer.Answer, error) {
	norm := strings.ToUpper(strings.Join(strings.Fields(strings.TrimRight(strings.TrimSpace(text), "; \t\n")), " "))
	switch norm {
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
		WithHint("available: SHOW REPLICAS, SHOW MODE, SHOW VIEW")
}

func (s *Session) replicas() *answer.Answer {
	var rows [][]string
	for _, r := range s.c.Replicas() {
		rows = append(rows, []string{r.Name, r.Driver, r.Class, r.Role, r.State,
			strconv.FormatInt(r.Mismatches, 10), strconv.FormatInt(r.Reruns, 10), strconv.FormatInt(r.Digests, 10)})
	}
	a := table([]string{"name", "driver", "class", "role", "state", "mismatches", "reruns", "digests"}, rows)
	a.Columns[5].Type = answer.Int
	a.Columns[6].Type = answer.Int
	a.Columns[7].Type = answer.Int
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
		a, err := s.run(part)
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
	if _, err := s.run(sql); err != nil && strings.TrimSpace(sql) != "" {
		return nil, err
	}
	return command(sql), nil
}

// Describe implements pgwire.Session.
func (s *Session) Describe(ctx context.Context, st pgwire.Statement) ([]uint32, []answer.Column, error) {
	if strings.TrimSpace(st.SQL()) == "" {
		return nil, nil, nil
	}
	a, err := s.run(st.SQL())
	if err != nil {
		return nil, nil, err
	}
	return nil, a.Columns, nil
}

// Execute implements pgwire.Session.
func (s *Session) Execute(ctx context.Context, st pgwire.Statement, params []pgwire.Param) (*answer.Answer, error) {
	if strings.TrimSpace(st.SQL()) == "" {
		return nil, pgwire.ErrEmptyQuery
	}
	return s.run(st.SQL())
}

// CloseStatement implements pgwire.Session.
func (s *Session) CloseStatement(pgwire.Statement) {}

// TxStatus implements pgwire.Session: the console has no transactions.
func (s *Session) TxStatus() byte { return 'I' }

// Cancel implements pgwire.Session: console commands do not block.
func (s *Session) Cancel() {}

// Close implements pgwire.Session.
func (s *Session) Close(context.Context) {}
