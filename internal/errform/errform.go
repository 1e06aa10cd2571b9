// Package errform puts an engine's error into PostgreSQL's words: the
// message, DETAIL and fields (schema, table, column, constraint)
// PostgreSQL 15 gives for the same failure, whichever engine answered.
//
// The drivers of engines other than PostgreSQL classify their errors by
// SQLSTATE and say, in pgerr.Error.Raw, what the engine's message named
// (a key, a constraint, a column). Only shepherd's schema catalog knows
// the rest: which table a constraint belongs to, a key's columns, a
// column's type. Every replica's engine has each constraint under the
// name PostgreSQL gives it (see schema.ConstraintNames), so a name an
// engine reports is PostgreSQL's.
//
// A key's values, which PostgreSQL's DETAIL prints, come from MariaDB's
// message for a duplicate key, and otherwise from the statement itself
// where it says them: the constants or parameters a one-row INSERT ...
// VALUES gives the key's columns, or an UPDATE sets them, and the key a
// DELETE's WHERE names. What neither says is left out rather than
// guessed: the values of an INSERT ... SELECT or of several rows, and
// the new row of a NOT NULL or CHECK violation's "Failing row contains
// (...)" unless a one-row INSERT ... VALUES gives every column.
//
// The vote compares errors by SQLSTATE only (coord.Vote), so rewriting
// the one error given to the client changes no decision.
package errform

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// publicSchema is the schema every table shepherd manages is in, as
// PostgreSQL clients see it.
const publicSchema = "public"

// Rewrite returns err in PostgreSQL's words when an engine other than
// PostgreSQL gave it (see package comment), for the statement tree run
// against the schema snap; any other error is returned as it is. err is
// never modified: it may be shared with the replicas' recorded answers.
//
// args are the statement's parameters (with shepherd's pinned values).
func Rewrite(err error, tree *pg_query.Node, snap *schema.Snapshot, args []driver.Arg) error {
	var pe *pgerr.Error
	if !errors.As(err, &pe) || pe.Raw == nil {
		return err
	}
	out := *pe
	out.Raw = nil
	f := former{e: &out, raw: pe.Raw, snap: snap, tree: tree, args: args}
	f.target, f.verb, f.assigned = target(tree)
	if f.altered() {
		return &out
	}
	switch out.Code {
	case pgerr.UniqueViolation:
		f.unique()
	case pgerr.ForeignKeyViolation:
		f.foreignKey()
	case pgerr.NotNullViolation:
		f.notNull()
	case pgerr.CheckViolation:
		f.check()
	case pgerr.UndefinedColumn:
		f.undefinedColumn()
	case pgerr.NumericValueOutOfRange:
		f.outOfRange()
	case pgerr.InvalidTextRepresentation:
		f.invalidText()
	}
	return &out
}

// former rewrites one error.
type former struct {
	e    *pgerr.Error
	raw  *pgerr.Raw
	snap *schema.Snapshot
	// target is the table the statement writes ("" for other
	// statements), verb its kind: "INSERT", "UPDATE" or "DELETE".
	target, verb string
	// assigned are the columns an INSERT lists or an UPDATE sets.
	assigned []string
	tree     *pg_query.Node
	args     []driver.Arg
}

// target returns the table an INSERT, UPDATE or DELETE writes, its verb,
// and the columns it assigns.
func target(tree *pg_query.Node) (table, verb string, assigned []string) {
	if tree == nil {
		return "", "", nil
	}
	resNames := func(l []*pg_query.Node) []string {
		var out []string
		for _, n := range l {
			if rt := n.GetResTarget(); rt != nil {
				out = append(out, rt.Name)
			}
		}
		return out
	}
	switch {
	case tree.GetInsertStmt() != nil:
		s := tree.GetInsertStmt()
		return s.Relation.GetRelname(), "INSERT", resNames(s.Cols)
	case tree.GetUpdateStmt() != nil:
		s := tree.GetUpdateStmt()
		return s.Relation.GetRelname(), "UPDATE", resNames(s.TargetList)
	case tree.GetDeleteStmt() != nil:
		return tree.GetDeleteStmt().Relation.GetRelname(), "DELETE", nil
	}
	return "", "", nil
}

// table returns the named table, or the statement's target for "".
func (f *former) table(name string) *schema.Table {
	if name == "" {
		name = f.target
	}
	if name == "" {
		return nil
	}
	return f.snap.Table(name)
}

// owner returns the table that has a constraint of that name and one of
// the kinds, looking at the statement's target first.
func (f *former) owner(name, kinds string) (*schema.Table, *schema.Constraint) {
	if name == "" || f.snap == nil {
		return nil, nil
	}
	match := func(t *schema.Table) *schema.Constraint {
		if t == nil {
			return nil
		}
		if c := t.Constraint(name); c != nil && strings.Contains(kinds, c.Kind) {
			return c
		}
		return nil
	}
	for _, n := range []string{f.raw.Table, f.target} {
		if t := f.table(n); n != "" && match(t) != nil {
			return t, match(t)
		}
	}
	names := make([]string, 0, len(f.snap.Tables))
	for n := range f.snap.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if c := match(f.snap.Tables[n]); c != nil {
			return f.snap.Tables[n], c
		}
	}
	return nil, nil
}

// setObject sets the fields PostgreSQL's errtableconstraint and
// errtablecol set.
func (f *former) setObject(table, column, constraint string) {
	f.e.Schema, f.e.Table, f.e.Column, f.e.Constraint = publicSchema, table, column, constraint
}

// unique: 'duplicate key value violates unique constraint "t_a_key"',
// DETAIL 'Key (a)=(1) already exists.' when the engine gave the value.
func (f *former) unique() {
	if f.verb != "INSERT" && f.verb != "UPDATE" {
		// CREATE UNIQUE INDEX or ADD CONSTRAINT over duplicates:
		// PostgreSQL words it otherwise ("could not create unique
		// index"; see altered).
		return
	}
	var table, name string
	var cols []string
	switch {
	case f.raw.Constraint == "PRIMARY": // MariaDB's name for every primary key
		t := f.table(f.raw.Table)
		if t == nil {
			return
		}
		for _, c := range t.Constraints {
			if c.Kind == schema.ConstraintPrimary {
				table, name, cols = t.Name, c.Name, c.Columns
			}
		}
	case f.raw.Constraint != "":
		if t, c := f.owner(f.raw.Constraint, schema.ConstraintPrimary+schema.ConstraintUnique); c != nil {
			table, name, cols = t.Name, c.Name, c.Columns
		} else if t, ok := f.snap.IndexTable(f.raw.Constraint); ok {
			// A unique index: PostgreSQL names it as the constraint.
			table, name, cols = t, f.raw.Constraint, f.snap.IndexColumns[f.raw.Constraint]
		}
	case f.raw.Table != "" && len(f.raw.Columns) > 0: // SQLite: the key's columns
		t := f.table(f.raw.Table)
		if t == nil {
			return
		}
		for _, c := range t.Constraints {
			if (c.Kind == schema.ConstraintPrimary || c.Kind == schema.ConstraintUnique) && slices.Equal(c.Columns, f.raw.Columns) {
				table, name, cols = t.Name, c.Name, c.Columns
				break
			}
		}
		if name == "" {
			for ix, tn := range f.snap.Indexes {
				if tn == t.Name && slices.Equal(f.snap.IndexColumns[ix], f.raw.Columns) {
					table, name, cols = t.Name, ix, f.raw.Columns
				}
			}
		}
	}
	if name == "" {
		return
	}
	f.e.Message = `duplicate key value violates unique constraint "` + name + `"`
	f.e.Detail = ""
	f.setObject(table, "", name)
	vals, ok := f.keyValues(table, cols, f.raw.Value)
	if !f.raw.HasValue || !ok {
		vals, ok = f.newValues(f.snap.Table(table), cols)
	}
	if ok {
		f.e.Detail = "Key " + keyList(cols, vals) + " already exists."
	}
}

// keyValues splits the value MariaDB printed for a key of cols into each
// column's value as PostgreSQL prints it; ok is false when that cannot
// be done exactly (a separator inside a value, a type MariaDB prints
// otherwise, a value MariaDB may have cut short).
func (f *former) keyValues(table string, cols []string, v string) ([]string, bool) {
	if !f.raw.HasValue {
		return nil, false
	}
	t := f.snap.Table(table)
	if t == nil || len(cols) == 0 || len(v) >= 64 {
		return nil, false
	}
	vals := []string{v}
	if len(cols) > 1 {
		if strings.Count(v, "-") != len(cols)-1 {
			return nil, false
		}
		vals = strings.Split(v, "-")
	}
	for i, name := range cols {
		c := t.Column(name)
		if c == nil {
			return nil, false
		}
		switch c.Type {
		case "int2", "int4", "int8", "text", "varchar", "uuid", "date", "numeric":
		case "bool":
			switch vals[i] {
			case "1":
				vals[i] = "t"
			case "0":
				vals[i] = "f"
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return vals, true
}

// keyList is PostgreSQL's "(a, b)=(1, 2)".
func keyList(cols, vals []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return "(" + strings.Join(q, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}

// quoteIdent quotes a name as PostgreSQL's quote_identifier does when it
// is not a plain lower-case name (keywords aside).
func quoteIdent(s string) string {
	plain := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// foreignKey: 'insert or update on table "c" violates foreign key
// constraint "c_p_fkey"', or, for a row still referenced, 'update or
// delete on table "p" violates foreign key constraint "c_p_fkey" on
// table "c"'. The table field is the referencing table in both.
func (f *former) foreignKey() {
	var child *schema.Table
	var con *schema.Constraint
	referenced := f.raw.Referenced
	if f.raw.Constraint != "" {
		child, con = f.owner(f.raw.Constraint, schema.ConstraintForeign)
	} else {
		// SQLite names nothing: the statement's side, and the one
		// foreign key it can be.
		t := f.table("")
		if t == nil {
			return
		}
		type cand struct {
			t *schema.Table
			c *schema.Constraint
		}
		var own, refs []cand
		for i := range t.Constraints {
			if c := &t.Constraints[i]; c.Kind == schema.ConstraintForeign {
				own = append(own, cand{t, c})
			}
		}
		names := make([]string, 0, len(f.snap.Tables))
		for n := range f.snap.Tables {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			o := f.snap.Tables[n]
			for i := range o.Constraints {
				if c := &o.Constraints[i]; c.Kind == schema.ConstraintForeign && c.RefTable == t.Name {
					refs = append(refs, cand{o, c})
				}
			}
		}
		var cands []cand
		switch {
		case f.verb == "INSERT", f.verb == "UPDATE" && len(refs) == 0:
			cands = own
		case f.verb == "DELETE", f.verb == "UPDATE" && len(own) == 0:
			cands, referenced = refs, true
		}
		if f.verb == "UPDATE" && len(cands) > 1 {
			// Only a foreign key on a column the UPDATE sets can fail.
			cands = slices.DeleteFunc(cands, func(c cand) bool {
				cols := c.c.Columns
				if referenced {
					cols = c.c.RefColumns
				}
				for _, a := range f.assigned {
					if slices.Contains(cols, a) {
						return false
					}
				}
				return len(cols) > 0
			})
		}
		if len(cands) != 1 {
			return
		}
		child, con = cands[0].t, cands[0].c
	}
	if con == nil {
		return
	}
	f.e.Detail = ""
	if referenced {
		f.e.Message = `update or delete on table "` + con.RefTable + `" violates foreign key constraint "` + con.Name + `" on table "` + child.Name + `"`
		parent := f.snap.Table(con.RefTable)
		refCols := con.RefColumns
		if len(refCols) == 0 && parent != nil {
			refCols = parent.Key
		}
		if f.verb == "DELETE" && parent != nil && parent.Name == f.target {
			if vals, ok := f.deletedKey(parent, refCols); ok {
				f.e.Detail = "Key " + keyList(refCols, vals) + ` is still referenced from table "` + child.Name + `".`
			}
		}
	} else {
		f.e.Message = `insert or update on table "` + child.Name + `" violates foreign key constraint "` + con.Name + `"`
		if child.Name == f.target {
			if vals, ok := f.newValues(child, con.Columns); ok {
				f.e.Detail = "Key " + keyList(con.Columns, vals) + ` is not present in table "` + con.RefTable + `".`
			}
		}
	}
	f.setObject(child.Name, "", con.Name)
}

// notNull: 'null value in column "c" of relation "t" violates not-null
// constraint'.
func (f *former) notNull() {
	if f.verb != "INSERT" && f.verb != "UPDATE" || len(f.raw.Columns) != 1 {
		return
	}
	t := f.table(f.raw.Table)
	if t == nil || t.Column(f.raw.Columns[0]) == nil {
		return
	}
	col := f.raw.Columns[0]
	f.e.Message = `null value in column "` + col + `" of relation "` + t.Name + `" violates not-null constraint`
	f.e.Detail, _ = f.failingRow(t)
	f.setObject(t.Name, col, "")
}

// check: 'new row for relation "t" violates check constraint "t_a_check"'.
func (f *former) check() {
	if f.verb != "INSERT" && f.verb != "UPDATE" {
		return
	}
	t, c := f.owner(f.raw.Constraint, schema.ConstraintCheck)
	if c == nil {
		return
	}
	f.e.Message = `new row for relation "` + t.Name + `" violates check constraint "` + c.Name + `"`
	f.e.Detail, _ = f.failingRow(t)
	f.setObject(t.Name, "", c.Name)
}

// undefinedColumn: 'column "c" of relation "t" does not exist' for a
// column an INSERT lists or an UPDATE sets.
func (f *former) undefinedColumn() {
	t := f.table("")
	if t == nil || len(f.raw.Columns) != 1 {
		return
	}
	col := f.raw.Columns[0]
	if slices.Contains(f.assigned, col) && t.Column(col) == nil {
		f.e.Message = `column "` + col + `" of relation "` + t.Name + `" does not exist`
	}
}

// outOfRange: the message of a value too large for a column, by the
// column's type; for numeric(p,s), DETAIL says what fits.
func (f *former) outOfRange() {
	precision, scale := f.raw.Precision, f.raw.Scale
	if len(f.raw.Columns) == 1 {
		t := f.table(f.raw.Table)
		if t == nil {
			return
		}
		c := t.Column(f.raw.Columns[0])
		if c == nil {
			return
		}
		switch c.Type {
		case "int2":
			f.e.Message = "smallint out of range"
		case "int4":
			f.e.Message = "integer out of range"
		case "int8":
			f.e.Message = "bigint out of range"
		case "numeric":
			if len(c.Mods) > 0 {
				precision, scale = int(c.Mods[0]), 0
				if len(c.Mods) > 1 {
					scale = int(c.Mods[1])
				}
			}
		}
	}
	if precision > 0 {
		f.e.Message = "numeric field overflow"
		digits := "1"
		if n := precision - scale; n > 0 {
			digits = fmt.Sprintf("10^%d", n)
		}
		f.e.Detail = fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than %s.", precision, scale, digits)
	}
}

// typeNames are the names PostgreSQL's input errors give the types.
var typeNames = map[string]string{
	"int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric",
	"float4": "real", "float8": "double precision", "bool": "boolean", "uuid": "uuid",
}

// invalidText: 'invalid input syntax for type integer: "abc"'.
func (f *former) invalidText() {
	if len(f.raw.Columns) != 1 || !f.raw.HasValue {
		return
	}
	t := f.table(f.raw.Table)
	if t == nil {
		return
	}
	c := t.Column(f.raw.Columns[0])
	if c == nil || typeNames[c.Type] == "" {
		return
	}
	f.e.Message = `invalid input syntax for type ` + typeNames[c.Type] + `: "` + f.raw.Value + `"`
}

// newValues returns the values the statement gives cols of t, the
// statement's target, in its one new row, as PostgreSQL prints them: a
// one-row INSERT ... VALUES (the columns it lists, or all in order), or
// an UPDATE setting each of cols. ok is false when some value is not a
// constant or parameter of a type printed as written (see value).
func (f *former) newValues(t *schema.Table, cols []string) ([]string, bool) {
	if t == nil || t.Name != f.target || len(cols) == 0 {
		return nil, false
	}
	given := map[string]*pg_query.Node{}
	switch {
	case f.tree.GetInsertStmt() != nil:
		s := f.tree.GetInsertStmt()
		sel := s.SelectStmt.GetSelectStmt()
		// ON CONFLICT DO UPDATE writes another row than VALUES says.
		if sel == nil || len(sel.ValuesLists) != 1 || s.OnConflictClause != nil {
			return nil, false
		}
		row := sel.ValuesLists[0].GetList().GetItems()
		names := f.assigned
		if len(names) == 0 {
			for _, c := range t.Columns {
				names = append(names, c.Name)
			}
		}
		for i, n := range row {
			if i < len(names) {
				given[names[i]] = n
			}
		}
	case f.tree.GetUpdateStmt() != nil:
		for _, n := range f.tree.GetUpdateStmt().TargetList {
			if rt := n.GetResTarget(); rt != nil && len(rt.Indirection) == 0 {
				given[rt.Name] = rt.Val
			}
		}
	default:
		return nil, false
	}
	return f.values(t, cols, given)
}

// deletedKey returns the values of t's key cols that a DELETE's WHERE
// fixes by equalities with constants or parameters (col = v AND ...):
// the key of the one row it can delete.
func (f *former) deletedKey(t *schema.Table, cols []string) ([]string, bool) {
	d := f.tree.GetDeleteStmt()
	if d == nil || d.UsingClause != nil {
		return nil, false
	}
	given := map[string]*pg_query.Node{}
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
			for _, a := range b.Args {
				walk(a)
			}
			return
		}
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || schema.OpName(e.Name) != "=" {
			return
		}
		for _, side := range [][2]*pg_query.Node{{e.Lexpr, e.Rexpr}, {e.Rexpr, e.Lexpr}} {
			if cr := side[0].GetColumnRef(); cr != nil && len(cr.Fields) > 0 {
				if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
					given[s.Sval] = side[1]
				}
			}
		}
	}
	if d.WhereClause == nil {
		return nil, false
	}
	walk(d.WhereClause)
	return f.values(t, cols, given)
}

// values returns, for each of cols, the value given[col] as PostgreSQL
// prints it in column col of t.
func (f *former) values(t *schema.Table, cols []string, given map[string]*pg_query.Node) ([]string, bool) {
	out := make([]string, len(cols))
	for i, name := range cols {
		c := t.Column(name)
		n := given[name]
		if c == nil || n == nil {
			return nil, false
		}
		v, ok := f.value(n, c.Type)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// failingRow is PostgreSQL's DETAIL "Failing row contains (...)." for
// a one-row INSERT ... VALUES into t that gives every column a constant
// or parameter of a type printed as written (not an UPDATE, whose row
// holds values the statement does not say, nor an INSERT leaving a
// column to its default, which the catalog does not keep).
func (f *former) failingRow(t *schema.Table) (string, bool) {
	ins := f.tree.GetInsertStmt()
	if ins == nil || t == nil || t.Name != f.target || ins.OnConflictClause != nil {
		return "", false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) != 1 {
		return "", false
	}
	row := sel.ValuesLists[0].GetList().GetItems()
	names := f.assigned
	if len(names) == 0 {
		for _, c := range t.Columns {
			names = append(names, c.Name)
		}
	}
	if len(row) != len(names) {
		return "", false
	}
	given := map[string]*pg_query.Node{}
	for i, n := range names {
		given[n] = row[i]
	}
	parts := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		n := given[c.Name]
		if n == nil {
			return "", false
		}
		v, ok := f.rowValue(n, c)
		if !ok {
			return "", false
		}
		// ExecBuildSlotValueDescription shows 64 bytes of each value,
		// and "..." after a value it cut.
		if len(v) > 64 {
			v = v[:clip(v, 64)] + "..."
		}
		parts[i] = v
	}
	return "Failing row contains (" + strings.Join(parts, ", ") + ").", true
}

// clip returns the largest length <= n that does not cut a UTF-8
// character of s.
func clip(s string, n int) int {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

// rowValue is value for a column of a row: also NULL ("null"), booleans
// and numeric(p,s) (printed at its scale).
func (f *former) rowValue(n *pg_query.Node, c schema.Column) (string, bool) {
	if k := n.GetAConst(); k != nil && k.Isnull {
		return "null", true
	}
	if p := n.GetParamRef(); p != nil {
		if i := int(p.Number) - 1; i >= 0 && i < len(f.args) && f.args[i].Null {
			return "null", true
		}
	}
	switch c.Type {
	case "bool":
		text, ok := f.constText(n)
		if k := n.GetAConst(); k != nil && k.GetBoolval() != nil {
			text, ok = strconv.FormatBool(k.GetBoolval().Boolval), true
		}
		if !ok {
			return "", false
		}
		b, ok := answer.ParseBool(text)
		if !ok {
			return "", false
		}
		if b {
			return "t", true
		}
		return "f", true
	case "numeric":
		if len(c.Mods) == 0 {
			return "", false
		}
		neg := false
		for e := n.GetAExpr(); e != nil && e.Lexpr == nil && schema.OpName(e.Name) == "-"; e = n.GetAExpr() {
			neg, n = !neg, e.Rexpr
		}
		text, ok := f.constText(n)
		if !ok {
			return "", false
		}
		r, ok := new(big.Rat).SetString(strings.TrimSpace(text))
		if !ok {
			return "", false
		}
		if neg {
			r.Neg(r)
		}
		scale := 0
		if len(c.Mods) > 1 {
			scale = int(c.Mods[1])
		}
		return r.FloatString(scale), true
	}
	return f.value(n, c.Type)
}

// constText returns the text of a constant (an integer, a decimal or a
// string) or of a parameter.
func (f *former) constText(n *pg_query.Node) (string, bool) {
	if k := n.GetAConst(); k != nil {
		switch {
		case k.GetIval() != nil:
			return strconv.Itoa(int(k.GetIval().Ival)), true
		case k.GetFval() != nil:
			return k.GetFval().Fval, true
		case k.GetSval() != nil:
			return k.GetSval().Sval, true
		}
	}
	if p := n.GetParamRef(); p != nil {
		if i := int(p.Number) - 1; i >= 0 && i < len(f.args) && !f.args[i].Null {
			return f.args[i].Text, true
		}
	}
	return "", false
}

// value returns the constant or parameter n, stored in a column of type
// typ, as PostgreSQL prints it: for integers and text only, which
// PostgreSQL prints as they were written (an integer normalised).
func (f *former) value(n *pg_query.Node, typ string) (string, bool) {
	text, neg := "", false
	for e := n.GetAExpr(); e != nil && e.Lexpr == nil && schema.OpName(e.Name) == "-"; e = n.GetAExpr() {
		neg, n = !neg, e.Rexpr
	}
	switch {
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil:
			text = strconv.Itoa(int(c.GetIval().Ival))
		case c.GetSval() != nil && !neg:
			text = c.GetSval().Sval
		default:
			return "", false
		}
	case n.GetParamRef() != nil:
		i := int(n.GetParamRef().Number) - 1
		if i < 0 || i >= len(f.args) || f.args[i].Null || neg {
			return "", false
		}
		text = f.args[i].Text
	default:
		return "", false
	}
	switch typ {
	case "int2", "int4", "int8":
		v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return "", false
		}
		if neg {
			v = -v
		}
		return strconv.FormatInt(v, 10), true
	case "text", "varchar":
		return text, !neg
	}
	return "", false
}

// altered words, as PostgreSQL does, an ALTER TABLE that adds a
// constraint (or sets NOT NULL) over rows that break it, whatever table
// the engine named (SQLite's rebuild checks the rows in a copy), and
// reports whether it did. The DETAIL PostgreSQL gives some of these
// (the repeated or missing key's values) is left out: no engine gives
// the values.
func (f *former) altered() bool {
	at := f.tree.GetAlterTableStmt()
	if at == nil || len(at.Cmds) != 1 || at.Relation == nil {
		return false
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	t := f.table(at.Relation.Relname)
	if cmd == nil || t == nil {
		return false
	}
	// MariaDB's MODIFY ... NOT NULL of a text column over NULLs says the
	// NULLs were truncated (1265): SET NOT NULL changes nothing else.
	truncated := f.e.Code == pgerr.DataException && f.raw != nil && slices.Equal(f.raw.Columns, []string{cmd.Name})
	if cmd.Subtype == pg_query.AlterTableType_AT_SetNotNull && (f.e.Code == pgerr.NotNullViolation || truncated) {
		f.e.Code = pgerr.NotNullViolation
		f.e.Message = fmt.Sprintf("column %s of relation %s contains null values", quoteName(cmd.Name), quoteName(t.Name))
		f.e.Detail = ""
		f.setObject(t.Name, cmd.Name, "")
		return true
	}
	con := cmd.Def.GetConstraint()
	if cmd.Subtype != pg_query.AlterTableType_AT_AddConstraint || con == nil {
		return false
	}
	c, ok := schema.AddedConstraint(t, con, "")
	if !ok {
		return false
	}
	switch {
	case f.e.Code == pgerr.UniqueViolation && (c.Kind == schema.ConstraintUnique || c.Kind == schema.ConstraintPrimary):
		f.e.Message = fmt.Sprintf("could not create unique index %s", quoteName(c.Name))
	case f.e.Code == pgerr.CheckViolation && c.Kind == schema.ConstraintCheck:
		f.e.Message = fmt.Sprintf("check constraint %s of relation %s is violated by some row", quoteName(c.Name), quoteName(t.Name))
	case f.e.Code == pgerr.ForeignKeyViolation && c.Kind == schema.ConstraintForeign:
		f.e.Message = fmt.Sprintf("insert or update on table %s violates foreign key constraint %s", quoteName(t.Name), quoteName(c.Name))
	default:
		return false
	}
	f.e.Detail = ""
	f.setObject(t.Name, "", c.Name)
	return true
}

// quoteName writes a name in double quotes, as PostgreSQL's messages do.
func quoteName(s string) string { return `"` + s + `"` }
