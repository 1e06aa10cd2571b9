package sqlan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// SelectFirst is an INSERT ... SELECT into a table with a column shepherd
// fills row by row (a SERIAL or IDENTITY key, a sequence default, a UUID)
// that the statement leaves out, where the SELECT's rows, and so the
// number of values to pin, are the replicas' to find (Django's
// post_migrate, INSERT INTO t (name) SELECT name FROM u). The session runs
// the SELECT first, as a statement of the same transaction (Inner: voted
// like any other answer of it), then inserts its rows as INSERT ...
// VALUES, in the order the SELECT gave them, which is the order
// PostgreSQL would call nextval() in; every replica stores the same keys.
type SelectFirst struct {
	tmpl    *pg_query.InsertStmt // the INSERT without its SELECT
	version int32
	params  int // the statement's highest $n
	width   int // the SELECT's columns
	// selParams gives, for each parameter of Inner, the client's.
	selParams []int
	// insert is the INSERT with one row of parameters, for Describe.
	insert *Stmt
}

// Insert returns the INSERT ... VALUES the statement becomes, with one
// row: what Describe describes.
func (sf *SelectFirst) Insert() *Stmt { return sf.insert }

// SelectArgs returns the arguments of Inner (the SELECT) from the
// client's.
func (sf *SelectFirst) SelectArgs(args []driver.Arg) []driver.Arg {
	out := make([]driver.Arg, len(sf.selParams))
	for i, n := range sf.selParams {
		out[i] = driver.Arg{Null: true}
		if n <= len(args) {
			out[i] = args[n-1]
		}
	}
	return out
}

// Batch is how many of the SELECT's rows one INSERT takes (the protocol
// bounds its parameters).
func (sf *SelectFirst) Batch() int {
	return max((MaxParams-sf.params)/max(sf.width, 1), 1)
}

// Expand writes the INSERT ... VALUES of rows (some of the SELECT's
// answer, whose columns are cols) with the client's arguments args: its
// text and arguments.
func (sf *SelectFirst) Expand(args []driver.Arg, cols []answer.Column, rows [][]answer.Value) (string, []driver.Arg, error) {
	if len(cols) != sf.width {
		// A SELECT * of a table another session altered since: the
		// INSERT was analysed for other columns.
		return "", nil, pgerr.New(pgerr.FeatureNotSupported,
			"shepherd does not support this INSERT ... SELECT: its SELECT now gives %d columns, not %d; run it again", len(cols), sf.width)
	}
	all := append([]driver.Arg(nil), args...)
	for len(all) < sf.params {
		all = append(all, driver.Arg{Null: true})
	}
	values := make([][]*pg_query.Node, len(rows))
	for r, row := range rows {
		for j, v := range row {
			t := v.Type
			if t == answer.Unknown && j < len(cols) {
				t = cols[j].Type
			}
			all = append(all, driver.Arg{Null: v.Null, Type: t, Text: v.Text})
			values[r] = append(values[r], pg_query.MakeParamRefNode(int32(len(all)), -1))
		}
	}
	text, out, _, err := valuesInsert(sf.tmpl, sf.version, values, all)
	return text, out, err
}

// prepareSelectFirst makes st (n, an INSERT ... SELECT that fillInsert
// refused for want of its rows) one the session runs as its SELECT and
// then an INSERT ... VALUES of its rows. ok is false when the SELECT's
// width is not known from the text and the schema: the refusal stands.
func (st *Stmt) prepareSelectFirst(n *pg_query.Node, env *Env, version int32) (ok bool, err error) {
	if st.NumParams, err = maxParam(n); err != nil {
		return false, err
	}
	ins := n.GetInsertStmt()
	selNode := proto.Clone(ins.SelectStmt).(*pg_query.Node)
	order := renumber(selNode)
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: version, Stmts: []*pg_query.RawStmt{{Stmt: selNode}}})
	if err != nil {
		return false, pgerr.Wrap(pgerr.InternalError, err, "writing the SELECT of an INSERT ... SELECT")
	}
	inner, err := ParseOneIn(text, env)
	if err != nil {
		return false, err
	}
	if inner.Kind != Read && inner.Kind != Write || !inner.ReturnsRows {
		return false, nil
	}
	width := 0
	if sel := selNode.GetSelectStmt(); sel != nil && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.ValuesLists) == 0 {
		width = len(sel.TargetList)
		for _, t := range sel.TargetList {
			if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
				width = 0
			}
		}
	}
	if width == 0 {
		width = len(inner.Columns())
	}
	if width == 0 {
		return false, nil
	}
	sf := &SelectFirst{tmpl: proto.Clone(ins).(*pg_query.InsertStmt), version: version, params: st.NumParams, width: width, selParams: order}
	sf.tmpl.SelectStmt = nil
	row := make([]*pg_query.Node, width)
	for i := range row {
		row[i] = pg_query.MakeParamRefNode(int32(st.NumParams+1+i), -1)
	}
	itext, _, iorder, err := valuesInsert(sf.tmpl, version, [][]*pg_query.Node{row}, nil)
	if err != nil {
		return false, err
	}
	if sf.insert, err = ParseOneIn(itext, env); err != nil {
		return false, err
	}
	st.tree, st.env, st.version = n, env, version
	st.SelectFirst, st.Inner = sf, inner
	// The client's parameters as PostgreSQL describes them: the
	// SELECT's, then the INSERT's own (RETURNING, ON CONFLICT).
	st.clientOIDs = make([]uint32, st.NumParams)
	for i, oid := range inner.ParamOIDs() {
		st.clientOIDs[order[i]-1] = oid
	}
	for i, oid := range sf.insert.ParamOIDs() {
		if old := iorder[i]; old <= st.NumParams && st.clientOIDs[old-1] == 0 {
			st.clientOIDs[old-1] = oid
		}
	}
	for d := range st.dialects {
		st.dialects[d] = dialectForm{sql: st.SQL}
	}
	return true, nil
}

// needsSelectFirst reports whether n is an INSERT ... SELECT that
// fillInsert refuses for want of its rows (see SelectFirst).
func needsSelectFirst(n *pg_query.Node, env *Env) bool {
	ins := n.GetInsertStmt()
	if ins == nil || ins.WithClause != nil || env.Schema == nil {
		return false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE {
		return false
	}
	r := &rewriter{schema: env.Schema, onlyNextval: !env.replicated()}
	r.fillInsert(proto.Clone(ins).(*pg_query.InsertStmt))
	return r.rowsUnknown
}
