package pgwire

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// programLimitExceeded is SQLSTATE 54000.
const programLimitExceeded = "54000"

// prepared is a prepared statement as the front knows it.
type prepared struct {
	// st is nil for an empty query, which the front answers itself.
	st Statement
	// sql is the statement's text, for the error hook (Server.OnError).
	sql string
	// described is set once params and cols hold Session.Describe's answer.
	described bool
	params    []uint32
	cols      []answer.Column
	// oids are cols' types, once an Execute wanted them (the portals
	// of p share them, read only).
	oids []uint32
}

// portal is a bound statement. Its answer is computed by the first Execute
// and handed out over one or more Executes.
type portal struct {
	stmt   *prepared
	params []Param
	// formatCodes are the Bind's result format codes, checked but not yet
	// expanded to the columns.
	formatCodes []int16

	executed bool
	empty    bool // the Session reported an empty query
	tag      string
	oids     []uint32 // column types the rows are encoded with
	formats  []int16
	rows     [][]answer.Value // rows not yet sent
	// more holds the rows not yet sent after rows, spilled to disk
	// (answer.Answer.More); closed when the portal goes.
	more *answer.Spilled
}

func (c *conn) parse(ctx context.Context, m *pgproto3.Parse) error {
	if m.Name == "" {
		c.closeStatement("")
	} else if _, ok := c.statements[m.Name]; ok {
		return pgerr.New(pgerr.DuplicatePreparedStmt, "prepared statement %q already exists", m.Name)
	}
	if len(c.statements) >= c.srv.maxStatements() {
		return pgerr.New(programLimitExceeded, "too many prepared statements (limit %d)", c.srv.maxStatements())
	}
	c.current = m.Query
	st, err := c.sess.Prepare(ctx, m.Query, slices.Clone(m.ParameterOIDs))
	p := &prepared{st: st, sql: m.Query}
	if errors.Is(err, ErrEmptyQuery) {
		p = &prepared{described: true}
	} else if err != nil {
		return err
	}
	c.statements[m.Name] = p
	c.send(&pgproto3.ParseComplete{})
	return nil
}

// describeStatement asks the Session, once, for p's parameter and result
// types.
func (c *conn) describeStatement(ctx context.Context, p *prepared) error {
	if p.described {
		return nil
	}
	params, cols, err := c.sess.Describe(ctx, p.st)
	if err != nil {
		return err
	}
	p.params, p.cols, p.described = params, cols, true
	return nil
}

func (c *conn) statement(name string) (*prepared, error) {
	p, ok := c.statements[name]
	if !ok {
		return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement %q does not exist", name)
	}
	return p, nil
}

func (c *conn) portal(name string) (*portal, error) {
	pt, ok := c.portals[name]
	if !ok {
		return nil, pgerr.New(pgerr.InvalidCursorName, "portal %q does not exist", name)
	}
	return pt, nil
}

func (c *conn) bind(ctx context.Context, m *pgproto3.Bind) error {
	if m.DestinationPortal == "" {
		c.dropPortal("")
	} else if _, ok := c.portals[m.DestinationPortal]; ok {
		return pgerr.New(pgerr.DuplicateCursor, "portal %q already exists", m.DestinationPortal)
	}
	if len(c.portals) >= c.srv.maxPortals() {
		return pgerr.New(programLimitExceeded, "too many portals (limit %d)", c.srv.maxPortals())
	}
	p, err := c.statement(m.PreparedStatement)
	if err != nil {
		return err
	}
	c.current = p.sql
	if err := c.describeStatement(ctx, p); err != nil {
		return err
	}
	if len(m.Parameters) != len(p.params) {
		return pgerr.New(pgerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(p.params))
	}
	paramFormats, err := normaliseFormats(m.ParameterFormatCodes, len(p.params), "parameter")
	if err != nil {
		return err
	}
	if p.cols != nil {
		if _, err := normaliseFormats(m.ResultFormatCodes, len(p.cols), "result"); err != nil {
			return err
		}
	} else if _, err := normaliseFormats(m.ResultFormatCodes, len(m.ResultFormatCodes), "result"); err != nil {
		return err
	}
	params := make([]Param, len(m.Parameters))
	for i, data := range m.Parameters {
		if params[i], err = c.decodeParam(p.params[i], formatAt(paramFormats, i), data); err != nil {
			return err
		}
	}
	pt := &portal{}
	if m.DestinationPortal == "" && c.spare != nil {
		pt, c.spare = c.spare, nil
	}
	*pt = portal{
		stmt:        p,
		params:      params,
		formatCodes: slices.Clone(m.ResultFormatCodes),
	}
	c.portals[m.DestinationPortal] = pt
	c.send(&pgproto3.BindComplete{})
	return nil
}

func (c *conn) describe(ctx context.Context, m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		p, err := c.statement(m.Name)
		if err != nil {
			return err
		}
		if err := c.describeStatement(ctx, p); err != nil {
			return err
		}
		c.send(&pgproto3.ParameterDescription{ParameterOIDs: p.params})
		c.sendRowDescription(p.cols, nil)
		return nil
	case 'P':
		pt, err := c.portal(m.Name)
		if cd, ok := c.sess.(CursorDescriber); ok && err != nil && m.Name != "" {
			if cols, ok := cd.DescribeCursor(m.Name); ok {
				c.sendRowDescription(cols, nil)
				return nil
			}
		}
		if err != nil {
			return err
		}
		if pt.stmt.cols == nil {
			c.send(&pgproto3.NoData{})
			return nil
		}
		formats, err := normaliseFormats(pt.formatCodes, len(pt.stmt.cols), "result")
		if err != nil {
			return err
		}
		c.send(rowDescription(pt.stmt.cols, formats))
		return nil
	}
	return pgerr.New(pgerr.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType)
}

func (c *conn) sendRowDescription(cols []answer.Column, formats []int16) {
	if cols == nil {
		c.send(&pgproto3.NoData{})
		return
	}
	c.send(rowDescription(cols, formats))
}

func (c *conn) execute(ctx context.Context, m *pgproto3.Execute) error {
	pt, err := c.portal(m.Portal)
	if err != nil {
		return err
	}
	if pt.stmt.st == nil || pt.empty {
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	c.current = pt.stmt.sql
	if !pt.executed {
		if err := c.runPortal(ctx, pt); err != nil {
			return err
		}
	}
	return c.sendPortalRows(pt, m.MaxRows)
}

// runPortal executes pt's statement and keeps its answer in the portal.
func (c *conn) runPortal(ctx context.Context, pt *portal) error {
	a, err := c.sess.Execute(ctx, pt.stmt.st, pt.params)
	if errors.Is(err, ErrEmptyQuery) {
		pt.executed, pt.empty = true, true
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if err != nil {
		return err
	}
	if a == nil {
		return pgerr.New(pgerr.InternalError, "statement produced no answer")
	}
	if pt.oids, err = resultTypes(pt.stmt, a); err != nil {
		a.More.Close()
		return err
	}
	if pt.oids != nil {
		if pt.formats, err = normaliseFormats(pt.formatCodes, len(pt.oids), "result"); err != nil {
			a.More.Close()
			return err
		}
	}
	pt.executed, pt.tag, pt.rows, pt.more = true, a.Tag, a.Rows, a.More
	return nil
}

// resultTypes returns the column types to encode a's rows with: those the
// client was told by Describe, or, when Describe said the statement
// returns nothing, a's own.
func resultTypes(p *prepared, a *answer.Answer) ([]uint32, error) {
	described := p.cols
	if a.Columns == nil {
		if len(a.Rows) > 0 {
			return nil, pgerr.New(pgerr.InternalError, "answer has rows but no columns")
		}
		return nil, nil
	}
	if described == nil {
		return columnOIDs(a.Columns), nil
	}
	if len(described) != len(a.Columns) {
		return nil, pgerr.New(pgerr.InternalError, "statement returned %d columns but was described with %d",
			len(a.Columns), len(described))
	}
	if p.oids == nil {
		p.oids = columnOIDs(described)
	}
	return p.oids, nil
}

// sendPortalRows sends up to maxRows (0: all) of pt's remaining rows, then
// PortalSuspended if some remain, else CommandComplete.
// Spilled rows are read back one at a time, so a portal of any size
// costs the memory of one row while it is sent.
func (c *conn) sendPortalRows(pt *portal, maxRows uint32) error {
	n := len(pt.rows)
	if maxRows > 0 && uint64(maxRows) < uint64(n) {
		n = int(maxRows)
	}
	for i := range n {
		dr, err := c.dataRow(pt.oids, pt.formats, pt.rows[i])
		if err != nil {
			pt.rows = pt.rows[i:]
			return err
		}
		c.send(dr)
	}
	pt.rows = pt.rows[n:]
	if len(pt.rows) == 0 && pt.more != nil {
		for sent := uint64(n); pt.more.Len() > 0 && (maxRows == 0 || sent < uint64(maxRows)); sent++ {
			row, err := pt.more.Next()
			if err != nil {
				pt.more.Close()
				pt.more = nil
				return pgerr.Wrap(pgerr.IOError, err, "")
			}
			dr, err := c.dataRow(pt.oids, pt.formats, row)
			if err != nil {
				return err
			}
			if err := c.sendRow(dr); err != nil {
				return err
			}
		}
	}
	if len(pt.rows) > 0 || pt.more != nil && pt.more.Len() > 0 {
		c.send(&pgproto3.PortalSuspended{})
		return nil
	}
	pt.rows = nil
	pt.more.Close()
	pt.more = nil
	c.sendComplete(pt.tag)
	return nil
}

func (c *conn) close(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		c.closeStatement(m.Name)
	case 'P':
		c.dropPortal(m.Name)
	default:
		return pgerr.New(pgerr.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType)
	}
	c.send(&pgproto3.CloseComplete{})
	return nil
}

// closeStatement forgets the statement name, if it exists, and the portals
// bound from it, and releases it in the Session.
func (c *conn) closeStatement(name string) {
	p, ok := c.statements[name]
	if !ok {
		return
	}
	delete(c.statements, name)
	for pname, pt := range c.portals {
		if pt.stmt == p {
			pt.more.Close()
			delete(c.portals, pname)
		}
	}
	if p.st != nil {
		c.sess.CloseStatement(p.st)
	}
}

func (c *conn) dropPortal(name string) {
	if pt, ok := c.portals[name]; ok {
		pt.more.Close()
		if name == "" {
			// Nothing else holds it: the next Bind of the unnamed
			// portal reuses it.
			*pt = portal{}
			c.spare = pt
		}
	}
	delete(c.portals, name)
}

// dropAllPortals forgets every portal.
func (c *conn) dropAllPortals() {
	for _, pt := range c.portals {
		pt.more.Close()
	}
	clear(c.portals)
}
