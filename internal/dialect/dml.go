package dialect

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

func (w *writer) insertStmt(ins *pg_query.InsertStmt) {
	if ins.WithClause != nil {
		w.refuse("WITH on INSERT")
	}
	rv := ins.Relation
	if rv.Alias != nil {
		w.refuse("INSERT INTO ... AS alias")
	}
	table := w.schema.Table(rv.Relname)
	w.pushTable(rv, nil)
	defer w.popScope()
	oc := ins.OnConflictClause
	if oc != nil && oc.Infer != nil && oc.Infer.Conname != "" {
		w.refuse("ON CONFLICT ON CONSTRAINT")
	}
	doNothing := oc != nil && oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING
	w.str("INSERT ")
	if doNothing && w.my() {
		// MariaDB skips conflicting rows with IGNORE (which also turns
		// other errors into warnings: the session's strict mode keeps
		// NOT NULL and CHECK failures errors for single rows).
		w.str("IGNORE ")
	}
	w.str("INTO ")
	w.tableName(rv)
	// Column types for constants: the listed columns, else the table's.
	var types []*schema.Column
	if len(ins.Cols) > 0 {
		w.str(" (")
		list(w, ins.Cols, func(n *pg_query.Node) {
			rt := n.GetResTarget()
			if len(rt.Indirection) > 0 {
				w.refuse("INSERT into a subfield or element")
			}
			w.ident(rt.Name)
			var c *schema.Column
			if table != nil {
				c = table.Column(rt.Name)
			}
			types = append(types, c)
		})
		w.str(")")
	} else if table != nil {
		for i := range table.Columns {
			types = append(types, &table.Columns[i])
		}
	}
	sel := ins.SelectStmt.GetSelectStmt()
	rows := 0
	switch {
	case sel == nil:
		if w.my() {
			w.str(" () VALUES ()")
		} else {
			w.str(" DEFAULT VALUES")
		}
	case len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.SortClause) == 0 && sel.LimitCount == nil:
		w.str(" VALUES ")
		rows = len(sel.ValuesLists)
		list(w, sel.ValuesLists, func(r *pg_query.Node) {
			w.str("(")
			for i, n := range r.GetList().Items {
				if i > 0 {
					w.str(", ")
				}
				var c *schema.Column
				if i < len(types) {
					c = types[i]
				}
				w.stored(n, c)
			}
			w.str(")")
		})
	default:
		if oc != nil && w.lite() {
			w.refuse("INSERT ... SELECT with ON CONFLICT")
		}
		w.checkArraySelect(sel, types)
		w.checkJSONBSelect(sel, types)
		w.checkBytesSelect(sel, types)
		w.checkDuckSelect(sel, types)
		w.str(" ")
		if w.numericTargets(types) || w.checkedTargets(types) && (len(ins.Cols) > 0 || !selectsStar(sel)) && len(sel.SortClause) == 0 {
			w.roundedSelect(sel, types, len(ins.Cols))
		} else {
			w.selectStmt(sel, false)
		}
	}
	if oc != nil {
		w.onConflict(oc, rows)
	}
	w.returning(ins.ReturningList, "INSERT")
}

func (w *writer) onConflict(oc *pg_query.OnConflictClause, rows int) {
	if oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING {
		if w.lite() {
			w.str(" ON CONFLICT")
			w.conflictTarget(oc)
			w.str(" DO NOTHING")
		}
		return
	}
	if w.lite() {
		w.str(" ON CONFLICT")
		if oc.Infer == nil {
			w.refuse("ON CONFLICT DO UPDATE without a conflict target")
		}
		w.conflictTarget(oc)
		w.str(" DO UPDATE SET ")
		w.assignments(oc.TargetList, "")
		if oc.WhereClause != nil {
			w.str(" WHERE ")
			w.expr(oc.WhereClause)
		}
		return
	}
	// MariaDB: ON DUPLICATE KEY UPDATE, where VALUES(c) is the row that
	// was proposed. It counts an updated row twice; PostgreSQL counts
	// every proposed row once when there is no WHERE.
	if oc.WhereClause != nil {
		w.refuse("ON CONFLICT DO UPDATE ... WHERE")
	}
	if rows == 0 {
		w.refuse("INSERT ... SELECT with ON CONFLICT DO UPDATE")
	}
	// RETURNING (MariaDB 10.5 and later) gives each proposed row once:
	// the inserted row, or the row as the update left it, as PostgreSQL
	// does.
	w.countRows = int64(rows)
	w.str(" ON DUPLICATE KEY UPDATE ")
	w.excluded = true
	w.assignments(oc.TargetList, "")
	w.excluded = false
}

func (w *writer) conflictTarget(oc *pg_query.OnConflictClause) {
	if oc.Infer == nil {
		return
	}
	if oc.Infer.WhereClause != nil {
		w.refuse("ON CONFLICT (...) WHERE")
	}
	w.str(" (")
	list(w, oc.Infer.IndexElems, func(n *pg_query.Node) {
		e := n.GetIndexElem()
		if e == nil || e.Name == "" {
			w.refuse("ON CONFLICT on an expression")
		}
		w.ident(e.Name)
	})
	w.str(")")
}

// assignments writes SET lists. MariaDB evaluates them left to right
// with the values already assigned; PostgreSQL with the old row. They
// agree unless an expression reads a column assigned before it, which is
// refused for MariaDB.
func (w *writer) assignments(targets []*pg_query.Node, qualifier string) {
	assigned := map[string]bool{}
	list(w, targets, func(n *pg_query.Node) {
		rt := n.GetResTarget()
		if len(rt.Indirection) > 0 {
			w.refuse("UPDATE of a subfield or element")
		}
		if rt.Val.GetMultiAssignRef() != nil {
			w.refuse("SET (a, b) = (...)")
		}
		if w.my() && len(assigned) > 0 && readsAny(rt.Val, assigned) {
			w.refuse("an UPDATE whose SET reads a column it assigns before (MariaDB would read the new value)")
		}
		if qualifier != "" {
			w.ident(qualifier)
			w.str(".")
		}
		w.ident(rt.Name)
		w.str(" = ")
		c, _ := w.column([]string{rt.Name})
		w.stored(rt.Val, c)
		assigned[rt.Name] = true
	})
}

// readsAny reports whether expression n refers to one of the columns.
func readsAny(n *pg_query.Node, cols map[string]bool) bool {
	found := false
	walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
			f := refFields(cr)
			if len(f) > 0 && cols[f[len(f)-1]] {
				found = true
			}
		}
		return !found
	})
	return found
}

// walk visits every message under m, depth first, while visit says so.
func walk(m protoreflect.Message, visit func(protoreflect.Message) bool) bool {
	if !visit(m) {
		return false
	}
	cont := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && cont; i++ {
				cont = walk(l.Get(i).Message(), visit)
			}
			return cont
		}
		cont = walk(v.Message(), visit)
		return cont
	})
	return cont
}

// assigned writes a value stored into column c (nil: unknown). PostgreSQL
// rounds a value stored into numeric(p,s) to s places and fails one with
// p-s digits or more before the point; SQLite, which keeps it as a
// float, is told to do the same.
func (w *writer) assigned(n *pg_query.Node, c *schema.Column) {
	if c == nil {
		w.expr(n)
		return
	}
	if c.Type == "float8" && w.doubleConstant(n) {
		return
	}
	if c.Type == "jsonb" {
		w.jsonbStored(n)
		return
	}
	if w.lite() && c.Type == "numeric" && len(c.Mods) > 0 {
		w.rounding++
		defer func() { w.rounding-- }()
		w.str(numericFunction + "(")
		if !w.longConstant(n) {
			w.typed(n, c.Type)
		}
		w.str(", " + numericMods(c.Mods) + ")")
		return
	}
	w.typed(n, c.Type)
}

// stored writes a value an INSERT's VALUES or an UPDATE's SET stores
// into column c (nil: unknown), as assigned does, and on SQLite checks it
// as PostgreSQL's assignment to the column does. (An INSERT ... SELECT's
// values are not checked.)
func (w *writer) stored(n *pg_query.Node, c *schema.Column) {
	if w.duck && c != nil && c.Type == "numeric" && strings.HasPrefix(w.typeOf(n), "float") {
		w.refuseFloatIntoNumeric(c)
	}
	if c == nil || !w.lite() || n.GetSetToDefault() != nil {
		w.assigned(n, c)
		return
	}
	// SQLite stores any 64-bit integer in an INTEGER or SMALLINT
	// column, a fraction there as a REAL, and any text in a VARCHAR(n)
	// one; PostgreSQL rounds a numeric (half away from zero) or a float
	// (half to even) stored into an integer column, and fails a value
	// out of int4's or int2's range (22003) or longer than n (22001).
	// A constant PostgreSQL's parser read as an int4, or a text no
	// longer than n, needs no check.
	k := n.GetAConst()
	ival := func(lo, hi int32) bool {
		return k != nil && (k.Isnull || k.GetIval() != nil && k.GetIval().Ival >= lo && k.GetIval().Ival <= hi)
	}
	check := ""
	switch {
	case c.Type == "int4" && !ival(-1<<31, 1<<31-1):
		check = "shepherd_int4"
	case c.Type == "int2" && !ival(-1<<15, 1<<15-1):
		check = int2Function
	case c.Type == "varchar" && len(c.Mods) == 1 &&
		!(k != nil && (k.Isnull || k.GetSval() != nil && utf8.RuneCountInString(k.GetSval().Sval) <= int(c.Mods[0]))):
		w.str(varcharFunction + "(")
		w.typed(n, c.Type)
		w.str(", " + strconv.Itoa(int(c.Mods[0])) + ")")
		return
	}
	round := ""
	// (A constant without a point or an exponent is an integer already:
	// ROUND would take a large one through a double.)
	if isInt(c.Type) && (k == nil || k.GetFval() != nil && strings.ContainsAny(k.GetFval().Fval, ".eE")) {
		switch t := w.typeOf(n); {
		case k != nil:
			// A numeric constant is rounded here, exactly: SQLite's
			// ROUND goes through a double (0.49999999999999999 is 0.5
			// there, and rounds to 1).
			w.str(w.roundedConstant(k.GetFval().Fval, c.Type))
			return
		case t == "numeric":
			// SQLite's numeric values are doubles; shepherd_numeric
			// rounds the decimal of their 15 significant digits (as
			// PostgreSQL reads a double as numeric) half away from
			// zero, exactly, where ROUND adds 0.5 in double arithmetic.
			round = numericFunction
		case strings.HasPrefix(t, "float"):
			round = roundEvenFunction
		}
	}
	if check == "" && round == "" {
		w.assigned(n, c)
		return
	}
	if check != "" {
		w.str(check + "(")
	}
	switch round {
	case numericFunction:
		w.str(round + "(")
	case roundEvenFunction:
		w.str("CAST(" + round + "(")
	}
	w.typed(n, c.Type)
	switch round {
	case numericFunction:
		// 18 digits: every result fits a bigint (and is an integer); a
		// larger one fails with 22003, as most of them do on PostgreSQL.
		w.str(", 18, 0)")
	case roundEvenFunction:
		w.str(") AS INTEGER)")
	}
	if check != "" {
		w.str(")")
	}
}

// int2Function is the SQLite function that stores a value as smallint
// does (sqlite.Int2Function).
const int2Function = "shepherd_int2"

// varcharFunction is the SQLite function that stores a value as
// varchar(n) does (sqlite.VarcharFunction).
const varcharFunction = "shepherd_varchar"

// numericFunction is the SQLite function that stores a value as
// numeric(p,s) does (sqlite.NumericFunction): rounded half away from
// zero, exactly, and failing with 22003 when too large.
const numericFunction = "shepherd_numeric"

// numericMods writes the precision and scale of numeric(p,s) or
// numeric(p) as numericFunction's last two arguments.
func numericMods(mods []int32) string {
	s := int32(0)
	if len(mods) == 2 {
		s = mods[1]
	}
	return strconv.Itoa(int(mods[0])) + ", " + strconv.Itoa(int(s))
}

// numericTargets reports whether an INSERT stores into a numeric(p,s)
// column on SQLite, where the values of its SELECT must go through
// numericFunction.
func (w *writer) numericTargets(types []*schema.Column) bool {
	if !w.lite() {
		return false
	}
	for _, c := range types {
		if c != nil && c.Type == "numeric" && len(c.Mods) > 0 {
			return true
		}
	}
	return false
}

// checkedTargets reports whether an INSERT stores into a column whose
// values SQLite must check as PostgreSQL does (see stored): int2, int4,
// varchar(n). An INSERT ... SELECT * without a column list is not
// checked (the columns of * are not known here), nor one whose SELECT
// is ordered: the order of its rows is the order of their SERIAL keys
// and RETURNING rows (SQLAlchemy's sentinel column), which shepherd
// does not take through another query level for a check.
func (w *writer) checkedTargets(types []*schema.Column) bool {
	if !w.lite() {
		return false
	}
	for _, c := range types {
		if c != nil && storeCheck(c) != "" {
			return true
		}
	}
	return false
}

// storeCheck is the SQLite function that checks a value stored into c
// as PostgreSQL's assignment does, or "".
func storeCheck(c *schema.Column) string {
	switch {
	case c.Type == "int4":
		return "shepherd_int4"
	case c.Type == "int2":
		return int2Function
	case c.Type == "varchar" && len(c.Mods) == 1:
		return varcharFunction
	}
	return ""
}

// selectsStar reports whether the first SELECT of sel has a * in its
// result list.
func selectsStar(sel *pg_query.SelectStmt) bool {
	first := sel
	for first.Op != pg_query.SetOperation_SETOP_NONE && first.Larg != nil {
		first = first.Larg
	}
	for _, t := range first.TargetList {
		if rt := t.GetResTarget(); rt == nil || rt.Val.GetColumnRef() != nil && starRef(rt.Val.GetColumnRef()) {
			return true
		}
	}
	return false
}

// roundedSelect writes, for SQLite, the SELECT of an INSERT whose columns
// include numeric(p,s) ones: the SELECT becomes a common table expression
// whose columns are read back, each stored value through assigned. n is
// the number of columns the SELECT gives (the INSERT's listed columns),
// or 0 when the INSERT lists none.
func (w *writer) roundedSelect(sel *pg_query.SelectStmt, types []*schema.Column, n int) {
	if n == 0 {
		first := sel
		for first.Op != pg_query.SetOperation_SETOP_NONE && first.Larg != nil {
			first = first.Larg
		}
		for _, t := range first.TargetList {
			if rt := t.GetResTarget(); rt == nil || rt.Val.GetColumnRef() != nil && starRef(rt.Val.GetColumnRef()) {
				w.refuse("INSERT ... SELECT * into numeric(p,s) columns without a column list on SQLite")
			}
		}
		n = len(first.TargetList)
	}
	if n > len(types) {
		w.fail(pgerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	col := func(i int) string { return "c" + strconv.Itoa(i+1) }
	w.str("WITH \"shepherd_insert\"(")
	for i := range n {
		if i > 0 {
			w.str(", ")
		}
		w.ident(col(i))
	}
	w.str(") AS (")
	w.selectStmt(sel, false)
	w.str(") SELECT ")
	for i := range n {
		if i > 0 {
			w.str(", ")
		}
		c, check := types[i], ""
		if c != nil {
			check = storeCheck(c)
		}
		switch {
		case c != nil && c.Type == "numeric" && len(c.Mods) > 0:
			w.str(numericFunction + "(")
			w.ident(col(i))
			w.str(", " + numericMods(c.Mods) + ")")
		case check != "":
			w.str(check + "(")
			w.ident(col(i))
			if check == varcharFunction {
				w.str(", " + strconv.Itoa(int(c.Mods[0])))
			}
			w.str(")")
		default:
			w.ident(col(i))
		}
	}
	w.str(" FROM \"shepherd_insert\"")
}

// starRef reports whether a column reference ends in *.
func starRef(cr *pg_query.ColumnRef) bool {
	f := cr.Fields
	return len(f) > 0 && f[len(f)-1].GetAStar() != nil
}

// exactRound writes, for SQLite, x (a numeric value of scale from)
// rounded to scale to (to < 0: to tens, hundreds...; from > to) as
// PostgreSQL rounds the exact value: half away
// from zero. A float near a tie may round the wrong way, so the value is
// taken to an integer at its own scale first (exact below 2^53).
func (w *writer) exactRound(x *pg_query.Node, from, to int) {
	w.str("(CAST((CAST(ROUND((")
	w.expr(x)
	w.str(") * " + pow10(from) + ") AS INTEGER) + (CASE WHEN (")
	w.expr(x)
	w.str(") < 0 THEN -" + half(from-to) + " ELSE " + half(from-to) + " END)) / " + pow10(from-to))
	if to < 0 { // round(x, -2): to hundreds
		w.str(" * " + pow10(-to) + " AS REAL))")
		return
	}
	w.str(" AS REAL) / " + pow10(to) + ")")
}

// pow10 writes 10^n as an integer constant.
func pow10(n int) string { return "1" + strings.Repeat("0", n) }

// half writes 10^n / 2, the amount that rounds half away from zero.
func half(n int) string { return "5" + strings.Repeat("0", n-1) }

func (w *writer) returning(targets []*pg_query.Node, verb string) {
	if len(targets) == 0 {
		return
	}
	if w.my() && verb == "UPDATE" {
		w.refuse("UPDATE ... RETURNING")
	}
	w.str(" RETURNING ")
	list(w, targets, func(n *pg_query.Node) { w.target(n) })
}

func (w *writer) updateStmt(u *pg_query.UpdateStmt) {
	if u.WithClause != nil {
		w.refuse("WITH on UPDATE")
	}
	if len(u.ReturningList) > 0 && w.my() {
		w.refuse("UPDATE ... RETURNING")
	}
	if len(u.ReturningList) > 0 && len(u.FromClause) > 0 && w.lite() {
		// SQLite's RETURNING sees neither the FROM tables nor the
		// target's alias (it failed with 42703 where PostgreSQL answers).
		w.refuse("UPDATE ... FROM ... RETURNING")
	}
	w.pushTable(u.Relation, u.FromClause)
	defer w.popScope()
	w.str("UPDATE ")
	w.tableName(u.Relation)
	alias := u.Relation.Relname
	if u.Relation.Alias != nil {
		alias = u.Relation.Alias.Aliasname
		w.str(" AS ")
		w.ident(alias)
	}
	qualifier := ""
	if w.my() && len(u.FromClause) > 0 {
		for _, f := range u.FromClause {
			w.str(", ")
			w.fromItem(f)
		}
		qualifier = alias
	}
	w.str(" SET ")
	w.assignments(u.TargetList, qualifier)
	if w.lite() && len(u.FromClause) > 0 {
		w.str(" FROM ")
		list(w, u.FromClause, func(n *pg_query.Node) { w.fromItem(n) })
	}
	if u.WhereClause != nil {
		w.str(" WHERE ")
		w.expr(u.WhereClause)
	}
	w.returning(u.ReturningList, "UPDATE")
}

func (w *writer) deleteStmt(d *pg_query.DeleteStmt) {
	if d.WithClause != nil {
		w.refuse("WITH on DELETE")
	}
	w.pushTable(d.Relation, d.UsingClause)
	defer w.popScope()
	rv := d.Relation
	if w.my() {
		if rv.Alias != nil || len(d.UsingClause) > 0 {
			if len(d.ReturningList) > 0 {
				w.refuse("DELETE ... USING or with an alias, with RETURNING")
			}
			alias := rv.Relname
			if rv.Alias != nil {
				alias = rv.Alias.Aliasname
			}
			w.str("DELETE ")
			w.ident(alias)
			w.str(" FROM ")
			w.tableName(rv)
			if rv.Alias != nil {
				w.str(" AS ")
				w.ident(alias)
			}
			for _, f := range d.UsingClause {
				w.str(", ")
				w.fromItem(f)
			}
		} else {
			w.str("DELETE FROM ")
			w.tableName(rv)
		}
		if d.WhereClause != nil {
			w.str(" WHERE ")
			w.expr(d.WhereClause)
		}
		w.returning(d.ReturningList, "DELETE")
		return
	}
	w.str("DELETE FROM ")
	w.tableName(rv)
	if rv.Alias != nil {
		w.str(" AS ")
		w.ident(rv.Alias.Aliasname)
	}
	if len(d.UsingClause) > 0 {
		// SQLite has no USING: the joined rows become an EXISTS.
		w.str(" WHERE EXISTS (SELECT 1 FROM ")
		list(w, d.UsingClause, func(n *pg_query.Node) { w.fromItem(n) })
		if d.WhereClause != nil {
			w.str(" WHERE ")
			w.expr(d.WhereClause)
		}
		w.str(")")
	} else if d.WhereClause != nil {
		w.str(" WHERE ")
		w.expr(d.WhereClause)
	}
	w.returning(d.ReturningList, "DELETE")
}

func (w *writer) truncate(t *pg_query.TruncateStmt) {
	if t.Behavior == pg_query.DropBehavior_DROP_CASCADE {
		w.refuse("TRUNCATE ... CASCADE")
	}
	// TRUNCATE commits implicitly in MariaDB and fails on a table that
	// foreign keys reference; DELETE keeps PostgreSQL's transactional
	// meaning. Several tables (pgbench -i truncates its four) are one
	// DELETE each, the tables that reference others first, so that no
	// foreign key sees its referenced rows go before its own; a text of
	// several statements, separated by driver.StatementSeparator, which
	// the drivers run one after another in the transaction. (sqlan
	// checked that no table outside the list references one in it.)
	rvs := make([]*pg_query.RangeVar, len(t.Relations))
	for i, r := range t.Relations {
		rvs[i] = r.GetRangeVar()
		if strings.Contains(rvs[i].Relname, ";") {
			w.refuse("TRUNCATE of a table whose name holds a semicolon")
		}
	}
	if len(rvs) > 1 {
		rvs = w.referencingFirst(rvs)
	}
	if w.my() {
		for _, rv := range rvs {
			if t := w.schema.Table(rv.Relname); t != nil && slices.Contains(t.Parents(), t.Name) {
				// MariaDB checks a DELETE's foreign keys row by row: rows
				// referencing each other fail it (23503), where
				// PostgreSQL's TRUNCATE empties the table.
				w.refuse("TRUNCATE of a table whose foreign key references the table itself")
			}
		}
	}
	for i, rv := range rvs {
		if i > 0 {
			w.str(driver.StatementSeparator)
		}
		w.str("DELETE FROM ")
		w.tableName(rv)
	}
}

// referencingFirst orders the tables of a TRUNCATE so that each comes
// before the tables its foreign keys reference (a table referencing
// itself is one DELETE, which SQLite checks as a whole; MariaDB, which
// checks row by row, is refused it in truncate).
// Tables that reference each other in a cycle are refused: no order of
// DELETEs empties them without a violation in between.
func (w *writer) referencingFirst(rvs []*pg_query.RangeVar) []*pg_query.RangeVar {
	byName := map[string]*pg_query.RangeVar{}
	for _, rv := range rvs {
		byName[rv.Relname] = rv
	}
	var out []*pg_query.RangeVar
	done, visiting := map[string]bool{}, map[string]bool{}
	// visit places every table that references name before it: the
	// order is the reverse of a walk from referenced to referencing.
	var place func(name string)
	place = func(name string) {
		if done[name] {
			return
		}
		if visiting[name] {
			w.refuse("TRUNCATE of several tables whose foreign keys reference each other in a cycle")
		}
		visiting[name] = true
		for _, other := range rvs {
			if other.Relname == name {
				continue
			}
			if t := w.schema.Table(other.Relname); t != nil && slices.Contains(t.Parents(), name) {
				place(other.Relname)
			}
		}
		visiting[name] = false
		done[name] = true
		out = append(out, byName[name])
	}
	for _, rv := range rvs {
		place(rv.Relname)
	}
	return out
}

// roundedConstant is the numeric constant v (as PostgreSQL's parser
// gives it: digits, a point, an exponent) rounded half away from zero
// to an integer, exactly, as PostgreSQL stores it into an integer column
// of type t; out of t's range it fails as PostgreSQL fails (22003).
func (w *writer) roundedConstant(v, t string) string {
	mant, exp, hasExp := strings.Cut(strings.ToLower(v), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimLeft(mant, "+-")
	ip, fp, _ := strings.Cut(mant, ".")
	zero := strings.Trim(ip+fp, "0") == ""
	if hasExp && !zero {
		e, err := strconv.Atoi(exp)
		switch {
		case err != nil || e > 400:
			w.fail(pgerr.NumericValueOutOfRange, "%s out of range", pgTypeWord(t))
		case e < -400:
			ip, fp = "0", ""
		case e > 0:
			fp += strings.Repeat("0", e)
			ip, fp = ip+fp[:e], fp[e:]
		case e < 0:
			ip = strings.Repeat("0", -e) + ip
			ip, fp = ip[:len(ip)+e], ip[len(ip)+e:]+fp
		}
	}
	if zero {
		ip, fp = "0", ""
	}
	if neg {
		ip = "-" + ip
	}
	r, ok := roundDecimal(ip+"."+fp, 0)
	if !ok {
		w.refuse("numeric constant %q", v)
	}
	bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[t]
	if _, err := strconv.ParseInt(r, 10, bits); err != nil {
		w.fail(pgerr.NumericValueOutOfRange, "%s out of range", pgTypeWord(t))
	}
	return r
}

// refuseFloatIntoNumeric refuses, for DuckDB, a float stored into
// numeric column c: DuckDB rounds the binary value to the column's scale
// (1.005 to 1.00), PostgreSQL the float's shortest decimal (to 1.01).
func (w *writer) refuseFloatIntoNumeric(c *schema.Column) {
	w.refuse("a float value stored into numeric column %q (DuckDB rounds it otherwise; cast it to numeric first)", c.Name)
}

// checkDuckSelect refuses, for DuckDB, an INSERT ... SELECT of a float
// into a numeric column (see refuseFloatIntoNumeric).
func (w *writer) checkDuckSelect(sel *pg_query.SelectStmt, types []*schema.Column) {
	if !w.duck || sel == nil {
		return
	}
	numeric := false
	for _, c := range types {
		numeric = numeric || c != nil && c.Type == "numeric"
	}
	if !numeric {
		return
	}
	check := func(i int, v *pg_query.Node) {
		if i < len(types) && types[i] != nil && types[i].Type == "numeric" && strings.HasPrefix(w.typeOf(v), "float") {
			w.refuseFloatIntoNumeric(types[i])
		}
	}
	switch {
	case sel.Op != pg_query.SetOperation_SETOP_NONE:
		w.checkDuckSelect(sel.Larg, types)
		w.checkDuckSelect(sel.Rarg, types)
	case len(sel.ValuesLists) > 0:
		for _, r := range sel.ValuesLists {
			for i, v := range r.GetList().GetItems() {
				check(i, v)
			}
		}
	default:
		w.pushScope(sel.FromClause)
		defer w.popScope()
		for i, t := range sel.TargetList {
			v := t.GetResTarget().GetVal()
			if cr := v.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
				w.refuse("INSERT ... SELECT * into numeric columns (list the columns)")
			}
			check(i, v)
		}
	}
}
