package mysql

import (
	"context"
	"database/sql"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// Exec runs q. Statements that return rows go through Query and are read
// as raw text; the others through Exec, tagged with their affected rows.
func (c *Conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	args := convertArgs(q.Args)
	verb := q.Command()
	var a *answer.Answer
	var err error
	if q.ReturnsRows {
		err = c.guard(ctx, isWrite(verb), func(ctx context.Context) error {
			var qerr error
			a, qerr = c.query(ctx, q.SQL, args, q.Sink)
			return qerr
		})
	} else {
		err = c.guard(ctx, true, func(ctx context.Context) error {
			if len(args) == 0 && strings.Contains(q.SQL, driver.StatementSeparator) {
				// Several statements (a TRUNCATE of several tables):
				// the connection runs one per call, in the transaction.
				// The tag carries no count.
				for _, part := range strings.Split(q.SQL, driver.StatementSeparator) {
					if _, xerr := c.conn.ExecContext(ctx, part); xerr != nil {
						return xerr
					}
				}
				a = &answer.Answer{Tag: answer.Tag(verb, 0)}
				return nil
			}
			res, xerr := c.conn.ExecContext(ctx, q.SQL, args...)
			if xerr != nil {
				return xerr
			}
			var n int64
			if driver.CountsRows(verb) {
				n, _ = res.RowsAffected() // the protocol always carries it
			}
			a = &answer.Answer{Tag: answer.Tag(verb, n), RowsAffected: n}
			return nil
		})
	}
	if err != nil {
		return nil, c.failure(ctx, q, err)
	}
	if q.ReturnsRows {
		a.Tag = answer.Tag(verb, a.RowsAffected)
	}
	return a, nil
}

// query runs a statement that returns rows and reads them all, into the
// answer or, when there is one, into sink (driver.Query.Sink).
func (c *Conn) query(ctx context.Context, stmt string, args []any, sink func([]answer.Column, []answer.Value) error) (*answer.Answer, error) {
	rows, err := c.conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	cols := make([]answer.Column, len(types))
	kinds := make([]columnKind, len(types))
	for i, ct := range types {
		kinds[i] = kindOf(ct.DatabaseTypeName())
		cols[i] = kinds[i].column(ct.Name())
	}
	raw := make([]sql.RawBytes, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	a := &answer.Answer{Columns: cols}
	var n int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]answer.Value, len(raw))
		for i, b := range raw {
			row[i] = kinds[i].value(b)
		}
		n++
		if sink == nil {
			a.Rows = append(a.Rows, row)
		} else if err := sink(cols, row); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	a.RowsAffected = n
	return a, nil
}

// isWrite reports whether a row-returning statement changes data (INSERT
// ... RETURNING), so that its success stands even after a KILL QUERY.
func isWrite(verb string) bool { return driver.CountsRows(verb) }

// convertArgs turns Args into values go-sql-driver sends as parameters.
// Untyped ones go as strings and the server coerces them, as PostgreSQL
// would infer them; typed ones become the Go type MySQL expects.
func convertArgs(args []driver.Arg) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = convertArg(a)
	}
	return out
}

func convertArg(a driver.Arg) any {
	if a.Null {
		return nil
	}
	switch a.Type {
	case answer.Int:
		if n, err := strconv.ParseInt(a.Text, 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(a.Text, 10, 64); err == nil {
			return n
		}
	case answer.Float:
		if f, err := strconv.ParseFloat(a.Text, 64); err == nil {
			return f
		}
	case answer.Bool:
		if b, ok := parseBool(a.Text); ok {
			if b {
				return int64(1)
			}
			return int64(0)
		}
	case answer.Bytes:
		return []byte(a.Text)
	case answer.TimestampTZ:
		// The session's time zone is UTC; MySQL does not read the offset.
		for _, utc := range []string{"+00:00", "+00", "Z"} {
			if t, ok := strings.CutSuffix(a.Text, utc); ok {
				return t
			}
		}
	}
	// Numeric stays text to stay exact; anything unparsable is left for
	// the server to reject.
	return a.Text
}

// parseBool reads PostgreSQL's boolean input forms.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}
