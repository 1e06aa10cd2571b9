package session

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// MaxCopyBytes is the most data one COPY FROM STDIN may send: the data is
// held in memory until it has all been read and parsed (its rows take
// about two to four times its size), so a larger COPY is refused (54000)
// rather than allowed to exhaust memory.
var MaxCopyBytes int64 = 128 << 20

// A COPY FROM's rows become multi-row INSERTs of at most copyBatchRows
// rows and about copyBatchBytes of SQL each: small enough for every
// engine's limits on statement size and placeholders (the pins of SERIAL
// columns), large enough that the round trips don't dominate.
const (
	copyBatchRows  = 500
	copyBatchBytes = 1 << 20
)

// PostgreSQL's SQLSTATEs for COPY's checks.
const (
	objectNotInPrerequisiteState = "55000"
	wrongObjectType              = "42809"
	invalidColumnReference       = "42P10"
)

// castTypes are the column types whose values a COPY FROM writes as
// typed constants ('v'::type), so that the statement analysis reads them
// with PostgreSQL's input rules for the type before any replica sees
// them, as it reads any typed constant. Character and json types are
// written as plain string constants, which every engine stores as given.
var castTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "numeric": true, "float4": true, "float8": true,
	"bool": true, "bytea": true, "date": true, "time": true, "timestamp": true, "timestamptz": true,
	"uuid": true, "interval": true,
}

// copy runs a COPY statement: FROM STDIN as INSERTs through the normal
// write path, TO STDOUT as a query through the normal read path, the
// client's data read and written by the connection's Copier.
func (s *Session) copy(ctx context.Context, spec *sqlan.CopySpec) (*answer.Answer, error) {
	cp, ok := pgwire.CopierFrom(ctx)
	if !ok {
		s.fail()
		return nil, pgerr.New(pgerr.FeatureNotSupported, "COPY is only possible over a client connection")
	}
	if spec.From {
		return s.copyFrom(ctx, cp, spec)
	}
	return s.copyTo(ctx, cp, spec)
}

// copyTable resolves a COPY's table and column list as PostgreSQL does
// before it enters COPY mode.
func (s *Session) copyTable(spec *sqlan.CopySpec) (*schema.Table, []schema.Column, error) {
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, nil, err
	}
	t := snap.Table(spec.Table)
	if t == nil {
		return nil, nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", spec.Table)
	}
	if t.View {
		if spec.From {
			return nil, nil, pgerr.New(wrongObjectType, "cannot copy to view \"%s\"", t.Name).
				WithHint("To enable copying to a view, provide an INSTEAD OF INSERT trigger.")
		}
		return nil, nil, pgerr.New(wrongObjectType, "cannot copy from view \"%s\"", t.Name).
			WithHint("Try the COPY (SELECT ...) TO variant.")
	}
	if spec.Columns == nil {
		return t, t.Columns, nil
	}
	cols := make([]schema.Column, 0, len(spec.Columns))
	for _, name := range spec.Columns {
		i := slices.IndexFunc(t.Columns, func(c schema.Column) bool { return c.Name == name })
		if i < 0 {
			return nil, nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
		}
		if slices.ContainsFunc(cols, func(c schema.Column) bool { return c.Name == name }) {
			return nil, nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", name)
		}
		cols = append(cols, t.Columns[i])
	}
	return t, cols, nil
}

// copyOptions turns spec's options into the front's, the FORCE_ column
// lists into flags over names (the columns copied).
func copyOptions(spec *sqlan.CopySpec, names []string) (pgwire.CopyOptions, error) {
	o := pgwire.CopyOptions{Null: spec.Null, Header: spec.Header, HeaderMatch: spec.HeaderMatch}
	switch spec.Format {
	case sqlan.CopyCSV:
		o.Format = pgwire.CopyCSV
		o.Quote, o.Escape = spec.Quote[0], spec.Escape[0]
	case sqlan.CopyBinary:
		o.Format = pgwire.CopyBinary
	}
	if spec.Delimiter != "" {
		o.Delimiter = spec.Delimiter[0]
	}
	flags := func(option string, list []string) ([]bool, error) {
		if list == nil {
			return nil, nil
		}
		out := make([]bool, len(names))
		for _, n := range list {
			i := slices.Index(names, n)
			if i < 0 {
				return nil, pgerr.New(invalidColumnReference, "%s column \"%s\" not referenced by COPY", option, n)
			}
			out[i] = true
		}
		return out, nil
	}
	var err error
	if spec.ForceQuoteAll {
		o.ForceQuote = make([]bool, len(names))
		for i := range o.ForceQuote {
			o.ForceQuote[i] = true
		}
	} else if o.ForceQuote, err = flags("FORCE_QUOTE", spec.ForceQuote); err != nil {
		return o, err
	}
	if o.ForceNotNull, err = flags("FORCE_NOT_NULL", spec.ForceNotNull); err != nil {
		return o, err
	}
	if o.ForceNull, err = flags("FORCE_NULL", spec.ForceNull); err != nil {
		return o, err
	}
	return o, nil
}

// copyFrom reads the client's rows and writes them with multi-row
// INSERTs, analysed and run like any INSERT: each value a constant of its
// column's type (checked with PostgreSQL's input rules), omitted columns
// filled as INSERT fills them (SERIAL, now(): pinned), every batch's row
// count voted and logged. The COPY is one statement: outside a block its
// INSERTs form one transaction, committed at the end; any error leaves
// nothing written (outside a block) or fails the block.
func (s *Session) copyFrom(ctx context.Context, cp pgwire.Copier, spec *sqlan.CopySpec) (*answer.Answer, error) {
	t, cols, err := s.copyTable(spec)
	if err != nil {
		s.fail()
		return nil, err
	}
	names := make([]string, len(cols))
	pcols := make([]pgwire.CopyColumn, len(cols))
	for i, c := range cols {
		names[i] = c.Name
		pcols[i] = pgwire.CopyColumn{Name: c.Name, OID: sqlan.TypeOID(c.Type)}
	}
	opts, err := copyOptions(spec, names)
	if err != nil {
		s.fail()
		return nil, err
	}
	if s.readOnly() {
		s.fail()
		return nil, pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute COPY FROM in a read-only transaction")
	}
	if spec.Freeze && !s.createdInBlock(t.Name) {
		s.fail()
		return nil, pgerr.New(objectNotInPrerequisiteState,
			"cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction")
	}
	rows, err := cp.CopyIn(t.Name, pcols, opts, MaxCopyBytes)
	if err != nil {
		s.fail()
		return nil, err
	}
	own := !s.inBlock && !s.implicit
	if own {
		// The INSERTs run as the statements of an implicit block.
		s.implicit, s.txOpts = true, s.defaults
	}
	abort := func(err error) (*answer.Answer, error) {
		if own {
			s.implicit = false
			s.endBlock(false)
		} else {
			s.fail()
		}
		return nil, err
	}
	w := copyWriter{table: t.Name, cols: cols, binary: opts.Format == pgwire.CopyBinary}
	var n int64
	env, err := s.env()
	if err != nil {
		return abort(err)
	}
	for start := 0; start < len(rows); {
		end := w.batchEnd(rows, start)
		st, err := sqlan.ParseOneIn(w.insert(rows[start:end], -1), env)
		if err != nil {
			return abort(w.locate(env, rows[start:end], err))
		}
		a, err := s.exec(ctx, st, nil)
		if err != nil {
			return abort(err)
		}
		n += a.RowsAffected
		clear(rows[start:end]) // written: let the memory go
		start = end
	}
	if own {
		s.implicit = false
		if err := s.commit(ctx); err != nil {
			return nil, err
		}
	}
	return &answer.Answer{Tag: answer.Tag("COPY", n), RowsAffected: n}, nil
}

// readOnly reports whether the statement would run in a read-only
// transaction.
func (s *Session) readOnly() bool {
	if s.inBlock || s.implicit {
		return s.txOpts.ReadOnly
	}
	return s.defaults.ReadOnly
}

// createdInBlock reports whether the open transaction created or
// truncated table (COPY FREEZE's condition).
func (s *Session) createdInBlock(table string) bool {
	for _, st := range s.ddl {
		n := st.Tree()
		if c := n.GetCreateStmt(); c != nil && c.Relation.GetRelname() == table {
			return true
		}
		for _, r := range n.GetTruncateStmt().GetRelations() {
			if r.GetRangeVar().GetRelname() == table {
				return true
			}
		}
	}
	return false
}

// copyWriter writes a COPY FROM's rows as INSERT statements.
type copyWriter struct {
	table  string
	cols   []schema.Column
	binary bool
}

// batchEnd returns the end of the batch of rows starting at start.
func (w *copyWriter) batchEnd(rows []pgwire.CopyRow, start int) int {
	size := 0
	end := start
	for end < len(rows) && end-start < copyBatchRows && size < copyBatchBytes {
		for _, v := range rows[end].Values {
			size += len(v.Text) + 16
		}
		end++
	}
	return end
}

// insert writes the INSERT of rows; with only >= 0, of that column alone.
func (w *copyWriter) insert(rows []pgwire.CopyRow, only int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(quoteIdent(w.table))
	b.WriteString(" (")
	for i, c := range w.cols {
		if only >= 0 && i != only {
			continue
		}
		if i > 0 && only < 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
	}
	b.WriteString(") VALUES ")
	for r, row := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i, v := range row.Values {
			if only >= 0 && i != only {
				continue
			}
			if i > 0 && only < 0 {
				b.WriteString(", ")
			}
			if v.Null {
				b.WriteString("NULL")
				continue
			}
			b.WriteByte('\'')
			b.WriteString(strings.ReplaceAll(v.Text, "'", "''"))
			b.WriteByte('\'')
			if t := w.cols[i].Type; castTypes[t] {
				b.WriteString("::")
				b.WriteString(t)
				// numeric(p,s) keeps its typmod: the value rounds and
				// overflows as the column's (PostgreSQL's outcome
				// either way), and DuckDB replicas, which refuse a
				// numeric without a precision, can take it.
				if mods := w.cols[i].Mods; t == "numeric" && len(mods) > 0 {
					b.WriteByte('(')
					for j, m := range mods {
						if j > 0 {
							b.WriteString(", ")
						}
						b.WriteString(strconv.Itoa(int(m)))
					}
					b.WriteByte(')')
				}
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// locate finds the row, and the column, whose value made the analysis of
// a batch fail, and gives the error PostgreSQL's CONTEXT for it ("COPY t,
// line 3, column a: "x"").
func (w *copyWriter) locate(env *sqlan.Env, rows []pgwire.CopyRow, err error) error {
	for r := range rows {
		one := rows[r : r+1]
		if _, rerr := sqlan.ParseOneIn(w.insert(one, -1), env); rerr == nil {
			continue
		} else {
			err = rerr
		}
		for i, c := range w.cols {
			if _, cerr := sqlan.ParseOneIn(w.insert(one, i), env); cerr != nil {
				pe := pgerr.From(cerr)
				if w.binary {
					return pe.WithWhere("COPY %s, line %d, column %s", w.table, rows[r].Line, c.Name)
				}
				return pe.WithWhere("COPY %s, line %d, column %s: \"%s\"", w.table, rows[r].Line, c.Name, clip(rows[r].Values[i].Text))
			}
		}
		return pgerr.From(err).WithWhere("COPY %s, line %d", w.table, rows[r].Line)
	}
	return err
}

// clip shortens a value shown in an error's CONTEXT as PostgreSQL does.
func clip(s string) string {
	const maxShown = 100
	if len(s) <= maxShown {
		return s
	}
	return s[:maxShown] + "..."
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// copyTo runs COPY TO STDOUT's query (a table's columns, in the order of
// its primary key when it has one, or the query given) as any read runs,
// voted, and sends the answer as COPY data.
func (s *Session) copyTo(ctx context.Context, cp pgwire.Copier, spec *sqlan.CopySpec) (*answer.Answer, error) {
	sql := spec.Query
	if spec.Table != "" {
		t, cols, err := s.copyTable(spec)
		if err != nil {
			s.fail()
			return nil, err
		}
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = quoteIdent(c.Name)
		}
		sql = "SELECT " + strings.Join(names, ", ") + " FROM " + quoteIdent(t.Name)
		if len(t.Key) > 0 {
			keys := make([]string, len(t.Key))
			for i, k := range t.Key {
				keys[i] = quoteIdent(k)
			}
			sql += " ORDER BY " + strings.Join(keys, ", ")
		}
	}
	sts, err := s.parse(sql)
	if err != nil {
		s.fail()
		return nil, err
	}
	if len(sts) == 1 && sts[0].NumParams > 0 {
		s.fail()
		return nil, pgerr.New(pgerr.UndefinedParameterRef, "there is no parameter $1")
	}
	if len(sts) != 1 || !sts[0].ReturnsRows {
		s.fail()
		if len(sts) == 1 && sts[0].Kind == sqlan.Write {
			return nil, pgerr.New(pgerr.FeatureNotSupported, "COPY query must have a RETURNING clause")
		}
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support this COPY query")
	}
	// Its rows go to the client as they are: they may come partly
	// spilled (cluster.WithSpill).
	a, err := s.exec(cluster.WithSpill(ctx), sts[0], nil)
	if err != nil {
		return nil, err
	}
	defer a.More.Close()
	names := make([]string, len(a.Columns))
	for i, c := range a.Columns {
		names[i] = c.Name
	}
	opts, err := copyOptions(spec, names)
	if err != nil {
		s.fail()
		return nil, err
	}
	n := a.RowCount()
	if err := cp.CopyOut(a.Columns, a.Rows, a.More, opts); err != nil {
		return nil, err
	}
	return &answer.Answer{Tag: answer.Tag("COPY", n), RowsAffected: n}, nil
}
