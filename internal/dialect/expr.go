package dialect

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// expr writes an expression. Operators are fully parenthesised: the
// dialects' precedence tables differ in corners (NOT, ||, comparison
// chains), parentheses make them irrelevant.
func (w *writer) expr(n *pg_query.Node) {
	if w.havingAt != nil && w.havingGroupExpr(n) {
		return
	}
	switch {
	case n == nil:
		w.refuse("an empty expression")
	case n.GetAConst() != nil:
		w.constant(n.GetAConst())
	case n.GetColumnRef() != nil:
		w.columnRef(n.GetColumnRef())
	case n.GetParamRef() != nil:
		w.param(int(n.GetParamRef().Number), 0)
	case n.GetAExpr() != nil:
		w.aExpr(n.GetAExpr())
	case n.GetBoolExpr() != nil:
		w.boolExpr(n.GetBoolExpr())
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		if nt.Arg.GetRowExpr() != nil {
			w.refuse("IS NULL on a row value")
		}
		w.hide(nt.Arg, false) // only whether it is NULL is seen
		w.str("(")
		w.expr(nt.Arg)
		if nt.Nulltesttype == pg_query.NullTestType_IS_NULL {
			w.str(" IS NULL)")
		} else {
			w.str(" IS NOT NULL)")
		}
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		w.str("(")
		w.expr(bt.Arg)
		switch bt.Booltesttype {
		case pg_query.BoolTestType_IS_TRUE:
			w.str(" IS TRUE)")
		case pg_query.BoolTestType_IS_NOT_TRUE:
			w.str(" IS NOT TRUE)")
		case pg_query.BoolTestType_IS_FALSE:
			w.str(" IS FALSE)")
		case pg_query.BoolTestType_IS_NOT_FALSE:
			w.str(" IS NOT FALSE)")
		case pg_query.BoolTestType_IS_UNKNOWN:
			w.str(" IS NULL)")
		case pg_query.BoolTestType_IS_NOT_UNKNOWN:
			w.str(" IS NOT NULL)")
		}
	case n.GetTypeCast() != nil:
		if t, _, _, _ := schema.TypeOf(n.GetTypeCast().TypeName); isInt(t) && !w.pg() {
			w.constantAverages(n.GetTypeCast().Arg)
		}
		w.cast(n.GetTypeCast())
	case n.GetFuncCall() != nil:
		w.funcCall(n.GetFuncCall())
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		if ce.Arg != nil && !w.pg() {
			w.constantAverages(ce.Arg)
			for _, a := range ce.Args {
				w.constantAverages(a.GetCaseWhen().Expr)
			}
		}
		common := w.typeOf(n)
		w.str("CASE")
		if ce.Arg != nil {
			w.str(" ")
			w.expr(ce.Arg)
		}
		for _, a := range ce.Args {
			cw := a.GetCaseWhen()
			w.str(" WHEN ")
			w.expr(cw.Expr)
			w.str(" THEN ")
			w.asFloat(cw.Result, common)
		}
		if ce.Defresult != nil {
			w.str(" ELSE ")
			w.asFloat(ce.Defresult, common)
		}
		w.str(" END")
	case n.GetCoalesceExpr() != nil:
		common := w.commonType(n.GetCoalesceExpr().Args)
		w.str("COALESCE(")
		list(w, n.GetCoalesceExpr().Args, func(a *pg_query.Node) { w.asFloat(a, common) })
		w.str(")")
	case n.GetMinMaxExpr() != nil:
		w.minMax(n.GetMinMaxExpr())
	case n.GetSubLink() != nil:
		w.subLink(n.GetSubLink())
	case n.GetRowExpr() != nil:
		w.str("(")
		list(w, n.GetRowExpr().Args, func(a *pg_query.Node) { w.expr(a) })
		w.str(")")
	case n.GetSqlvalueFunction() != nil:
		w.refuse("%s (shepherd pins it to a value first)", sqlValueName(n.GetSqlvalueFunction().Op))
	case n.GetSetToDefault() != nil:
		if w.lite() {
			// sqlan leaves out a column every row gives as DEFAULT.
			w.refuse("DEFAULT in VALUES for a column that other rows give a value (SQLite has no DEFAULT there; give every row DEFAULT or a value)")
		}
		w.str("DEFAULT")
	case n.GetCollateClause() != nil:
		w.refuse("COLLATE")
	case n.GetAArrayExpr() != nil:
		t := w.constructorType(n.GetAArrayExpr())
		if t == "" {
			w.refuse("ARRAY[...] of values whose type shepherd cannot tell (cast it, e.g. ARRAY[...]::text[])")
		}
		v := w.arrayConstructor(n.GetAArrayExpr(), t)
		w.duckConst(n, v)
		w.literal(v)
	case n.GetAIndirection() != nil:
		w.arraySubscript(n.GetAIndirection())
	default:
		w.refuse("%s expressions", nodeName(n))
	}
}

// liteExact reports whether SQLite reads the numeric constant v exactly:
// an integer within its 64 bits, or a decimal of at most 15 significant
// digits (which a double holds and gives back).
func liteExact(v string) bool {
	v = strings.TrimLeft(v, "+-")
	if isDigits(v) {
		// 2^63 (negated, bigint's minimum) is a double exactly.
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil || strings.TrimLeft(v, "0") == "9223372036854775808"
	}
	mantissa, _, _ := strings.Cut(strings.ToLower(v), "e")
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+strings.TrimRight(frac, "0"), "0")
	return len(digits) <= 15
}

// longConstant writes a numeric constant SQLite cannot read exactly
// (liteExact) as text, which shepherd_numeric reads exactly, and reports
// whether n was one.
func (w *writer) longConstant(n *pg_query.Node) bool {
	c := n.GetAConst()
	if c == nil || c.GetFval() == nil || liteExact(c.GetFval().Fval) {
		return false
	}
	w.literal(c.GetFval().Fval)
	return true
}

// doubleConstant writes, for SQLite, a decimal constant of more than 15
// significant digits (see liteExact) that PostgreSQL makes a double
// precision value (stored into a float8 column, cast to float8) as it
// is: SQLite reads it as the nearest double, as PostgreSQL converts it.
// It reports whether n was one; other constants are written as before
// (an integer beyond int4 is cast to REAL there).
func (w *writer) doubleConstant(n *pg_query.Node) bool {
	c := n.GetAConst()
	if !w.lite() || c == nil || c.GetFval() == nil || liteExact(c.GetFval().Fval) || isDigits(strings.TrimLeft(c.GetFval().Fval, "+-")) {
		return false
	}
	w.numericRange(c.GetFval().Fval)
	w.str(c.GetFval().Fval)
	return true
}

func sqlValueName(op pg_query.SQLValueFunctionOp) string {
	name := strings.TrimPrefix(op.String(), "SVFOP_")
	return strings.ToLower(strings.TrimSuffix(name, "_N"))
}

func (w *writer) constant(c *pg_query.A_Const) {
	switch {
	case c.Isnull:
		w.str("NULL")
	case c.GetIval() != nil:
		w.str(strconv.FormatInt(int64(c.GetIval().Ival), 10))
	case c.GetFval() != nil:
		w.numericRange(c.GetFval().Fval)
		if w.lite() && !liteExact(c.GetFval().Fval) {
			w.refuse("numeric constant %s of more than 15 significant digits (SQLite reads it as a double precision value)", c.GetFval().Fval)
		}
		w.str(c.GetFval().Fval)
	case c.GetBoolval() != nil:
		if c.GetBoolval().Boolval {
			w.str("TRUE")
		} else {
			w.str("FALSE")
		}
	case c.GetSval() != nil:
		w.literal(c.GetSval().Sval)
	case c.GetBsval() != nil:
		w.refuse("bit-string constants")
	default:
		// An integer constant 0 has an empty value.
		w.str("0")
	}
}

func (w *writer) columnRef(cr *pg_query.ColumnRef) {
	if len(cr.Fields) > 2 {
		w.refuse("schema-qualified column references")
	}
	if f := refFields(cr); len(f) == 2 && f[0] == "excluded" && w.excluded {
		w.str("VALUES(")
		w.ident(f[1])
		w.str(")")
		return
	}
	if w.havingMin(refFields(cr)) {
		w.str("MIN(")
		w.outsideHaving(func() { w.columnRef(cr) })
		w.str(")")
		return
	}
	for i, f := range cr.Fields {
		if i > 0 {
			w.str(".")
		}
		switch {
		case f.GetString_() != nil:
			w.ident(f.GetString_().Sval)
		case f.GetAStar() != nil:
			w.str("*")
		default:
			w.refuse("this column reference")
		}
	}
}

func refFields(cr *pg_query.ColumnRef) []string {
	var out []string
	for _, f := range cr.Fields {
		if s := f.GetString_(); s != nil {
			out = append(out, s.Sval)
		} else {
			return nil
		}
	}
	return out
}

func (w *writer) boolExpr(b *pg_query.BoolExpr) {
	if b.Boolop == pg_query.BoolExprType_NOT_EXPR {
		w.str("(NOT ")
		w.expr(b.Args[0])
		w.str(")")
		return
	}
	op := " AND "
	if b.Boolop == pg_query.BoolExprType_OR_EXPR {
		op = " OR "
	}
	w.str("(")
	for i, a := range b.Args {
		if i > 0 {
			w.str(op)
		}
		w.expr(a)
	}
	w.str(")")
}

// minMax writes GREATEST / LEAST. PostgreSQL ignores NULL arguments; the
// other engines return NULL if any is NULL, so arguments that may be NULL
// are folded pairwise with explicit NULL handling.
func (w *writer) minMax(m *pg_query.MinMaxExpr) {
	greatest := m.Op == pg_query.MinMaxOp_IS_GREATEST
	if schema.IsArray(w.commonType(m.Args)) {
		w.refuse("GREATEST and LEAST of arrays (the replicas hold them as text)")
	}
	fn := "LEAST"
	if greatest {
		fn = "GREATEST"
	}
	if w.lite() {
		fn = "MIN"
		if greatest {
			fn = "MAX"
		}
	}
	nullable := false
	for _, a := range m.Args {
		if !w.notNull(a, nil) {
			nullable = true
		}
	}
	if !nullable || len(m.Args) == 1 {
		if len(m.Args) == 1 {
			w.expr(m.Args[0])
			return
		}
		w.str(fn + "(")
		list(w, m.Args, func(a *pg_query.Node) { w.expr(a) })
		w.str(")")
		return
	}
	if len(m.Args) > 3 {
		w.refuse("%s of more than three arguments that may be NULL", fn)
	}
	// Each argument is written twice (two arguments) or four times
	// (three).
	times := 2 * (len(m.Args) - 1)
	arg := func(a *pg_query.Node) { w.repeated(a, times, func() { w.expr(a) }) }
	// f(a, b) ignoring NULLs = COALESCE(fn(a, b), a, b).
	w.str("COALESCE(" + fn + "(")
	list(w, m.Args, arg)
	w.str(")")
	if len(m.Args) == 2 {
		for _, a := range m.Args {
			w.str(", ")
			arg(a)
		}
		w.str(")")
		return
	}
	// Three arguments: any two non-NULL, else the one.
	pairs := [][2]int{{0, 1}, {0, 2}, {1, 2}}
	for _, p := range pairs {
		w.str(", " + fn + "(")
		arg(m.Args[p[0]])
		w.str(", ")
		arg(m.Args[p[1]])
		w.str(")")
	}
	for _, a := range m.Args {
		w.str(", ")
		arg(a)
	}
	w.str(")")
}

func (w *writer) subLink(s *pg_query.SubLink) {
	sub := s.Subselect.GetSelectStmt()
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		w.str("EXISTS (")
		w.selectStmt(sub, false)
		w.str(")")
	case pg_query.SubLinkType_EXPR_SUBLINK:
		if w.lite() && sub.Op == pg_query.SetOperation_SETOP_NONE && len(sub.TargetList) == 1 &&
			len(sub.FromClause) > 0 && sub.LimitCount == nil && sub.LimitOffset == nil && len(sub.DistinctClause) == 0 {
			// SQLite answers the first of several rows, PostgreSQL fails
			// (21000): the value goes through singleFunction with the
			// subquery's row count, counted by a window over its rows
			// (after its grouping; a LIMIT or DISTINCT would come after
			// the window, so such subqueries are left as they are).
			if w.single == nil {
				w.single = map[*pg_query.Node]bool{}
			}
			w.single[sub.TargetList[0].GetResTarget().GetVal()] = true
		}
		w.str("(")
		w.selectStmt(sub, false)
		w.str(")")
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		op := schema.OpName(s.OperName)
		if op == "" {
			op = "="
		}
		if w.lite() && !(s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && op == "=") {
			w.liteAnyAll(op, s.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK, s.Testexpr, sub)
			return
		}
		w.str("(")
		w.expr(s.Testexpr)
		switch {
		case s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK && op == "=":
			w.str(" IN (")
		case w.lite():
			w.refuse("%s ANY/ALL (subquery)", op)
		default:
			if !comparison[op] {
				w.refuse("operator %s with ANY/ALL", op)
			}
			w.str(" " + op)
			if s.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK {
				w.str(" ANY (")
			} else {
				w.str(" ALL (")
			}
		}
		if w.my() && (sub.LimitCount != nil || sub.LimitOffset != nil) {
			// MariaDB refuses LIMIT in an IN/ANY/ALL subquery (error
			// 1235) but takes it in a derived table, which keeps the
			// same rows: the others would commit a write MariaDB fails.
			w.str(`SELECT * FROM (`)
			w.selectStmt(sub, false)
			w.str(`) AS "shepherd_limited"`)
		} else {
			w.selectStmt(sub, false)
		}
		w.str("))")
	default:
		w.refuse("ARRAY(subquery) and other subquery forms")
	}
}

var comparison = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true}

func (w *writer) aExpr(e *pg_query.A_Expr) {
	w.note(e.Location, e.Lexpr, e.Rexpr)
	if nullOperands(e) || nullBetween(e) {
		// NULL whatever the digits in it (see hide).
		w.hide(e.Lexpr, true)
		w.hide(e.Rexpr, true)
	}
	op := schema.OpName(e.Name)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		w.hiddenDiv = w.hidden[e]
		w.operator(op, e.Lexpr, e.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if !w.pg() && (w.typeOf(e.Lexpr) == "jsonb" || w.typeOf(e.Rexpr) == "jsonb") {
			w.refuse("IS [NOT] DISTINCT FROM on jsonb")
		}
		not := e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT
		w.str("(")
		if w.my() {
			if !not {
				w.str("NOT ")
			}
			w.str("(")
			w.expr(e.Lexpr)
			w.str(" <=> ")
			w.expr(e.Rexpr)
			w.str("))")
			return
		}
		w.expr(e.Lexpr)
		if not {
			w.str(" IS ")
		} else {
			w.str(" IS NOT ")
		}
		w.expr(e.Rexpr)
		w.str(")")
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		if !w.pg() {
			w.constantAverages(e.Rexpr)
		}
		w.str("NULLIF(")
		w.asFloat(e.Lexpr, w.nullifType(e.Lexpr, e.Rexpr))
		w.str(", ")
		w.expr(e.Rexpr)
		w.str(")")
	case pg_query.A_Expr_Kind_AEXPR_IN:
		if items := e.Rexpr.GetList().Items; w.inFoldsToNull(e.Lexpr, items) {
			w.notes.fold(e.Lexpr, nil)
			w.nullFolded(func() { w.in(op, e.Lexpr, items) })
			return
		}
		w.in(op, e.Lexpr, e.Rexpr.GetList().Items)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		w.arrayAnyAll(op, e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL, e.Lexpr, e.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		w.like(op, e.Lexpr, e.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if !w.pg() && w.typeOf(e.Lexpr) == "jsonb" {
			w.refuse("BETWEEN on jsonb")
		}
		bounds := e.Rexpr.GetList().Items
		if schema.IsArray(w.typeOf(e.Lexpr)) {
			w.refuse("BETWEEN on arrays (the replicas hold them as text)")
		}
		w.str("(")
		w.expr(e.Lexpr)
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			w.str(" NOT")
		}
		w.str(" BETWEEN ")
		w.typed(bounds[0], w.typeOf(e.Lexpr))
		w.str(" AND ")
		w.typed(bounds[1], w.typeOf(e.Lexpr))
		w.str(")")
	default:
		w.refuse("%s", strings.ToLower(strings.TrimPrefix(e.Kind.String(), "AEXPR_")))
	}
}

// in writes x IN (a, b) and row-value (x, y) IN ((1, 2), (3, 4)), which
// SQLite takes only as IN (VALUES ...).
func (w *writer) in(op string, l *pg_query.Node, items []*pg_query.Node) {
	if !w.pg() && w.typeOf(l) == "jsonb" {
		// Compared as jsonb compares (jsonbCompare), not as the text
		// the engines hold: x = a OR x = b.
		if op == "<>" {
			w.str("(NOT ")
		}
		w.repeated(l, len(items), func() {
			w.str("(")
			for i, n := range items {
				if i > 0 {
					w.str(" OR ")
				}
				w.jsonbCompare("=", l, n, "jsonb", w.typeOf(n))
			}
			w.str(")")
		})
		if op == "<>" {
			w.str(")")
		}
		return
	}
	w.str("(")
	w.expr(l)
	if op == "<>" {
		w.str(" NOT IN (")
	} else {
		w.str(" IN (")
	}
	if l.GetRowExpr() != nil && w.lite() {
		w.str("VALUES ")
	}
	t := w.typeOf(l)
	list(w, items, func(n *pg_query.Node) { w.typed(n, t) })
	w.str("))")
}

// like writes LIKE / ILIKE with PostgreSQL's default escape character,
// which neither MariaDB (with NO_BACKSLASH_ESCAPES) nor SQLite has unless
// told.
func (w *writer) like(op string, l, r *pg_query.Node) {
	not := strings.HasPrefix(op, "!")
	ilike := strings.HasSuffix(op, "*")
	esc, noEscape := " ESCAPE '\\'", false
	if fc := r.GetFuncCall(); fc != nil && schema.FuncName(fc) == "like_escape" {
		r = fc.Args[0]
		c := fc.Args[1].GetAConst()
		switch {
		case c == nil || c.GetSval() == nil || utf8.RuneCountInString(c.GetSval().Sval) > 1:
			w.refuse("LIKE ... ESCAPE with an escape that is not one character or none")
		case c.GetSval().Sval == "":
			// ESCAPE '' (Hibernate's): no escape character. SQLite has
			// none unless told. MariaDB refuses ESCAPE '' and, even
			// under NO_BACKSLASH_ESCAPES, escapes with \ when told
			// nothing: the pattern's backslashes are doubled, so that
			// each stands for itself.
			esc, noEscape = "", true
		default:
			esc = " ESCAPE '" + strings.ReplaceAll(c.GetSval().Sval, "'", "''") + "'"
		}
	}
	w.str("(")
	if ilike {
		w.caseMap(false, l)
	} else {
		w.expr(l)
	}
	if not {
		w.str(" NOT")
	}
	w.str(" LIKE ")
	doubled := noEscape && w.my()
	if doubled {
		w.str("REPLACE(")
	}
	if ilike {
		w.caseMap(false, r)
	} else {
		w.expr(r)
	}
	if doubled {
		w.str(", '\\', '\\\\')")
		esc = " ESCAPE '\\'"
	}
	w.str(esc + ")")
}

// operator writes a binary or prefix operator.
func (w *writer) operator(op string, l, r *pg_query.Node) {
	if w.foldsToNull(op, l, r) {
		w.notes.fold(l, r)
		w.nullFolded(func() { w.operation(op, l, r) })
		return
	}
	w.noteWiden(op, l, r)
	w.operation(op, l, r)
}

// operation writes a binary or prefix operator as the engine computes it.
func (w *writer) operation(op string, l, r *pg_query.Node) {
	hidden := w.hiddenDiv // this operator's (see aExpr), not its operands'
	w.hiddenDiv = false
	if l == nil && w.temporalOp(op, nil, r, "", w.typeOf(r)) {
		return
	}
	if l == nil {
		switch op {
		case "-", "+":
			prefix := func() {
				w.str("(" + op)
				mark := w.b.Len()
				w.expr(r)
				if s := w.b.String(); len(s) > mark && (s[mark] == '-' || s[mark] == '+') {
					// - -15, not --15: SQLite and MariaDB read -- as the
					// start of a comment.
					w.b.Reset()
					w.b.WriteString(s[:mark] + " " + s[mark:])
				}
				w.str(")")
			}
			if op == "-" && w.my() && strings.HasPrefix(w.typeOf(r), "float") && zeroValued(r) && !nullValued(r) {
				// PostgreSQL's - x of a float zero is -0; MariaDB
				// computes it but writes 0 (and the vote takes -0 and
				// 0 as one value). A zero whenever not NULL, e.g.
				// - NULLIF(0, f), is refused.
				w.refuse("negation of a floating-point zero (MariaDB writes -0 as 0)")
			}
			if op == "-" && w.lite() && strings.HasPrefix(w.typeOf(r), "float") {
				// SQLite's - x is 0 - x, whose zero is 0: x * -1 is
				// -0, as PostgreSQL's - x of a float zero.
				w.str("(")
				w.expr(r)
				w.str(" * -1)")
				return
			}
			if op == "-" && w.my() && w.typeOf(r) == "int8" {
				// MariaDB's - x of a constant -9223372036854775808
				// is a DECIMAL, 9223372036854775808 (and its 0 - x
				// wraps around); -1 * x fails as PostgreSQL's - x.
				w.str("(-1 * ")
				w.expr(r)
				w.str(")")
				return
			}
			if op == "-" {
				// PostgreSQL negates in x's own type: - x of its
				// minimum is out of range (22003).
				w.inRange(w.typeOf(r), prefix)
				return
			}
			prefix()
			return
		case "@":
			// @ x is abs(x) for every number type PostgreSQL has.
			if t := w.typeOf(r); isNumber(t) {
				w.inRange(t, func() {
					w.str("ABS(")
					w.expr(r)
					w.str(")")
				})
				return
			}
		}
		w.refuse("prefix operator %s", op)
	}
	lt, rt := w.typeOf(l), w.typeOf(r)
	if w.arrayOp(op, l, r, lt, rt) {
		return
	}
	if isJSONOp(op) {
		w.jsonOp(op, l, r, lt, rt)
		return
	}
	if w.temporalOp(op, l, r, lt, rt) {
		return
	}
	if (lt == "jsonb" || rt == "jsonb") && !w.pg() {
		switch op {
		case "=", "<>", "<", ">", "<=", ">=":
			w.jsonbCompare(op, l, r, lt, rt)
			return
		}
	}
	if w.avgCompare(op, l, r) {
		return
	}
	switch op {
	case "=", "<>", "<", ">", "<=", ">=", "+", "-", "*", "/", "%":
		w.mootAverages(l, r)
	}
	if comparison[op] && !w.pg() {
		w.constantAverages(l)
		w.constantAverages(r)
	}
	switch op {
	case "=", "<>", "<", ">", "<=", ">=":
		w.str("(")
		w.typed(l, rt)
		w.str(" " + op + " ")
		w.typed(r, lt)
		w.str(")")
	case "~", "~*", "!~", "!~*":
		w.regexMatch(op, l, r)
		return
	case "||":
		if isJSON(lt) || isJSON(rt) {
			w.refuse("|| on json values")
		}
		w.textConcat(l, r, lt, rt)
	case "*":
		w.int4(lt, rt, l, r, func() { w.rounded(func() { w.binary(l, op, r) }, lt, rt, l, r, op) })
	case "+", "-":
		w.int4(lt, rt, l, r, func() { w.rounded(func() { w.arith(op, l, r, lt, rt) }, lt, rt, l, r, op) })
	case "/":
		w.divide(l, r, lt, rt, hidden)
	case "%":
		if !isInt(lt) || !isInt(rt) {
			w.numericMod(l, r, lt, rt, "%")
			return
		}
		w.str("(")
		w.expr(l)
		w.str(" % ")
		w.divisor(l, r)
		w.str(")")
	default:
		w.refuse("operator %s", op)
	}
}

// int4 writes integer arithmetic that PostgreSQL does in 32 bits (both
// operands int4 or int2) with PostgreSQL's overflow check: the others
// compute in 64 bits and would answer 2147483648 where PostgreSQL fails
// with 22003. SQLite calls shepherd's range check.
//
// MariaDB, which cannot raise an error at will, is made to overflow its
// unsigned arithmetic exactly when x is out of range, with x written
// once (a check that repeated its operand grew as 3^depth in a chain
// such as 1+1+...+1):
//
//	CAST(18446744071562067968 + x - 18446744069414584320 AS SIGNED) - 2147483648
//
// The first sum (2^64 - 2^31 + x) overflows when x >= 2^31; the
// difference that follows (x + 2^31) is negative, an unsigned overflow
// too, when x < -2^31; what is left is x + 2^31, taken back to x. The
// driver reports both errors as 22003 "integer out of range" (see
// mysql.Int4RangeMark).
func (w *writer) int4(lt, rt string, l, r *pg_query.Node, write func()) {
	small := func(t string) bool { return t == "int4" || t == "int2" }
	switch {
	case lt == "int2" && rt == "int2":
		// PostgreSQL's int2 + int2 is an int2 (22003 "smallint out of
		// range" past it).
		w.inRange("int2", write)
	case small(lt) && small(rt):
		w.inRange("int4", write)
	case isInt(lt) && isInt(rt) && w.lite():
		// int8: SQLite makes a result beyond 64 bits a real.
		w.inRange("int8", write)
	default:
		write()
	}
}

// inRange writes an integer expression of PostgreSQL type t (written by
// write) with PostgreSQL's range check for t, which the others, computing
// in 64 bits, lack: - x and abs(x) of t's minimum, 32-bit arithmetic (see
// int4). SQLite calls shepherd's range check (for int8, one that fails
// where SQLite made an overflowing integer a real); MariaDB overflows its
// unsigned arithmetic exactly when the value is out of t's range (see
// int4), or its own BIGINT arithmetic for int8. Other types are written
// as they are.
func (w *writer) inRange(t string, write func()) {
	switch {
	case !w.my() && !w.lite() || t != "int4" && t != "int2" && t != "int8" || t == "int8" && w.my():
		write()
	case w.lite():
		w.str(map[string]string{"int4": "shepherd_int4(", "int2": int2Function + "(", "int8": int8Function + "("}[t])
		write()
		w.str(")")
	case t == "int2":
		// 2^64 - 2^15 + x, less 2^64 - 2^16: x + 2^15, taken back to x.
		w.str("(CAST(" + int2RangeMark)
		write()
		w.str(" - 18446744073709486080 AS SIGNED) - 32768)")
	default:
		w.str("(CAST(" + int4RangeMark)
		write()
		w.str(" - 18446744069414584320 AS SIGNED) - 2147483648)")
	}
}

// int4RangeMark opens MariaDB's int4 range check; it is the text of
// mysql.Int4RangeMark, which the driver looks for in the overflow's
// message (the writer does not import drivers).
const int4RangeMark = "18446744071562067968 + "

// int2RangeMark opens MariaDB's int2 range check (mysql.Int2RangeMark).
const int2RangeMark = "18446744073709518848 + "

// int8Function is the SQLite function that checks an int8 result
// (sqlite.Int8Function).
const int8Function = "shepherd_int8"

// rounded writes an arithmetic expression; in SQLite, one on numeric
// values of known scale is rounded to the decimals PostgreSQL's exact
// result can have (valueScale).
func (w *writer) rounded(write func(), lt, rt string, l, r *pg_query.Node, op string) {
	if !w.lite() || lt != "numeric" && rt != "numeric" {
		write()
		return
	}
	ls, lok := w.valueScale(l)
	rs, rok := w.valueScale(r)
	if !lok || !rok {
		write()
		return
	}
	scale := max(ls, rs)
	if op == "*" {
		scale = ls + rs
	}
	w.str("ROUND(")
	write()
	w.str(", " + strconv.Itoa(scale) + ")")
}

func (w *writer) binary(l *pg_query.Node, op string, r *pg_query.Node) {
	w.str("(")
	w.expr(l)
	w.str(" " + op + " ")
	w.expr(r)
	w.str(")")
}

// divide writes /. PostgreSQL divides integers by truncating toward zero,
// as SQLite does; MariaDB's / gives a decimal, its DIV truncates. SQLite
// keeps an integral numeric value as an integer, so a numeric operand is
// made real there. hidden says no answer sees the quotient's digits (see hide).
//
// PostgreSQL divides integers in the operands' type, so its minimum / -1
// is out of range (22003), where the others, computing in 64 bits,
// answered (SQLite making int8's a real): the quotient gets the range
// check int4 gives arithmetic, unless the divisor is a constant other
// than -1 or the dividend one other than int4's minimum (no other
// quotient leaves the range).
// x % -1 is 0 everywhere, the minimum's too, and needs none.
func (w *writer) divide(l, r *pg_query.Node, lt, rt string, hidden bool) {
	if isInt(lt) && isInt(rt) {
		check := w.int4
		d, dok := intConst(r)
		n, nok := intConst(l)
		if dok && d != -1 || nok && n != math.MinInt32 {
			check = func(_, _ string, _, _ *pg_query.Node, write func()) { write() }
		}
		check(lt, rt, l, r, func() {
			if w.liteDivide(l, r, lt, rt, hidden) {
				return
			}
			op := "/"
			if w.my() {
				op = "DIV"
			}
			w.str("(")
			w.expr(l)
			w.str(" " + op + " ")
			w.divisor(l, r)
			w.str(")")
		})
		return
	}
	if w.liteDivide(l, r, lt, rt, hidden) {
		return
	}
	switch {
	case isNumber(lt) && isNumber(rt) && (!isInt(lt) || !isInt(rt)):
		if w.rounding == 0 && !hidden && !strings.HasPrefix(lt, "float") && !strings.HasPrefix(rt, "float") && !nullValued(l) && !nullValued(r) {
			// PostgreSQL gives at least 16 significant digits, chosen by
			// the operands' magnitudes; the others give other digits.
			// Once rounded to a stated scale, all agree. A NULL
			// operand makes the quotient NULL everywhere (division is
			// strict, NULL / 0 too).
			w.refuse("numeric division whose result is not rounded (PostgreSQL's digits depend on the values); round it, e.g. round(a / b, 4), or cast it to numeric(p,s)")
		}
		w.str("(")
		float := (strings.HasPrefix(lt, "float") || strings.HasPrefix(rt, "float")) && !heldAsFloat(l, lt)
		switch {
		case w.lite() && (lt == "numeric" || rt == "numeric" || float):
			// A double precision value may be held as an integer
			// there (ceil(x) of an integer x), which / would truncate.
			w.str("CAST(")
			w.expr(l)
			w.str(" AS REAL)")
		case w.my() && float:
			// As on SQLite; MariaDB's / of integers gives four
			// decimals.
			w.str("CAST(")
			w.expr(l)
			w.str(" AS DOUBLE)")
		default:
			w.expr(l)
		}
		w.str(" / ")
		w.divisor(l, r)
		w.str(")")
	default:
		w.refuse("division whose operand types shepherd cannot tell (add a cast, e.g. x::numeric / y)")
	}
}

// liteDivide writes, for SQLite, a division whose dividend may be NULL
// but cannot be written a second time for the divisor's check (see
// divisor) as shepherd_divide(l, r), SQLite's division that fails on a
// zero divisor only when the dividend is not NULL: NULL / 0 is NULL, as
// PostgreSQL's strict division answers, where a divisor check alone
// failed it (and the other engines outvoted SQLite).
func (w *writer) liteDivide(l, r *pg_query.Node, lt, rt string, hidden bool) bool {
	if !w.lite() || nonZeroConst(r) || w.notNull(l, nil) || repeatable(l) || !isNumber(lt) || !isNumber(rt) {
		return false
	}
	if !isInt(lt) || !isInt(rt) {
		if w.rounding == 0 && !hidden && !strings.HasPrefix(lt, "float") && !strings.HasPrefix(rt, "float") && !nullValued(l) && !nullValued(r) {
			return false // refused by divide
		}
	}
	w.str(divideFunction + "(")
	if lt == "numeric" || rt == "numeric" || strings.HasPrefix(lt, "float") || strings.HasPrefix(rt, "float") {
		// A double precision value may be held as an integer (ceil(x)
		// of an integer): SQLite would divide it as one.
		w.str("CAST(")
		w.expr(l)
		w.str(" AS REAL)")
	} else {
		w.expr(l)
	}
	w.str(", ")
	w.expr(r)
	w.str(")")
	return true
}

// divideFunction is sqlite.DivideFunction.
const divideFunction = "shepherd_divide"

// heldAsFloat reports whether the engines hold n's value (of type t) as
// a float whatever it is: a double precision or real column (REAL
// affinity, DOUBLE), or a cast to one. Other double precision values,
// ceil(x) of an integer x, may be integers there.
func heldAsFloat(n *pg_query.Node, t string) bool {
	return strings.HasPrefix(t, "float") && (n.GetTypeCast() != nil || n.GetColumnRef() != nil)
}

// nullValued reports whether n is NULL whatever the values: a NULL
// constant, cast or signed, arithmetic and comparisons (strict: + - * /
// % = <> < > <= >=) with such an operand, NULLIF of such a value,
// COALESCE of only such values, CASE whose every arm that can be taken
// gives one (a CASE without ELSE has a NULL one), and sum, avg, min and
// max of such a value.
func nullValued(n *pg_query.Node) bool {
	switch {
	case isNullConst(n):
		return true
	case n.GetTypeCast() != nil:
		return nullValued(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_OP:
		e := n.GetAExpr()
		switch schema.OpName(e.Name) {
		case "+", "-", "*", "/", "%", "=", "<>", "<", ">", "<=", ">=":
			return e.Lexpr != nil && nullValued(e.Lexpr) || nullValued(e.Rexpr)
		}
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return nullValued(n.GetAExpr().Lexpr)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if !nullValued(a) {
				return false
			}
		}
		return true
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		if c.Defresult != nil && !nullValued(c.Defresult) {
			return false
		}
		for _, a := range c.Args {
			cw := a.GetCaseWhen()
			if cw == nil {
				return false
			}
			// A WHEN that is NULL (CASE x WHEN v with x or v NULL)
			// or compares two different constants is never taken.
			never := nullValued(cw.Expr) || c.Arg != nil && (nullValued(c.Arg) || constantsDiffer(c.Arg, cw.Expr))
			if !never && !nullValued(cw.Result) {
				return false
			}
		}
		return true
	case n.GetFuncCall() != nil:
		return nullAggregate(n.GetFuncCall())
	}
	return false
}

// divisor writes the right operand r of /, % and mod() of l. PostgreSQL
// fails a division by zero (22012) unless l is NULL (its division is
// strict: NULL / 0 is NULL); MariaDB and SQLite return NULL, so a divisor
// that may be zero is checked: SQLite calls shepherd's function, which
// fails on zero; MariaDB, which has no way to raise an error from an
// expression at will, evaluates an unsigned overflow only when the
// divisor is zero, an error its driver reports as 22012 (see
// mysql.DivisionByZeroMark). A dividend that may be NULL is written once
// more, in the check, when that keeps the text linear in the statement
// (see repeatable); else NULL / 0 fails as x / 0 does.
func (w *writer) divisor(l, r *pg_query.Node) {
	if nonZeroConst(r) {
		w.expr(r)
		return
	}
	nullable := !w.notNull(l, nil) && repeatable(l)
	dividend := func() {
		w.repeated(l, 2, func() { w.expr(l) })
	}
	if w.lite() {
		if !nullable {
			w.str("shepherd_divisor(")
			w.expr(r)
			w.str(")")
			return
		}
		w.str(divisorIfFunction + "(")
		w.expr(r)
		w.str(", ")
		dividend()
		w.str(" IS NOT NULL)")
		return
	}
	// r appears three times.
	divisor := func() { w.repeated(r, 3, func() { w.expr(r) }) }
	w.str("(CASE WHEN ")
	divisor()
	w.str(" = 0")
	if nullable {
		w.str(" AND ")
		dividend()
		w.str(" IS NOT NULL")
	}
	w.str(" THEN 18446744073709551615 + (")
	divisor()
	w.str(" + 22012) ELSE ")
	divisor()
	w.str(" END)")
}

// maxCopies bounds how many times a piece of the statement may appear in
// its translation. A few constructs write an operand more than once
// (MariaDB's zero check of a divisor, GREATEST and LEAST of values that
// may be NULL, a MariaDB sort key that may be NULL); nested in one
// another, they would multiply the text at each level, exponentially in
// the nesting depth. With the bound, the translation stays within a
// constant factor of the statement's size.
const maxCopies = 64

// statementTooComplex is PostgreSQL's SQLSTATE for a statement beyond
// what it can process (stack depth limit exceeded).
const statementTooComplex = "54001"

// repeated calls write, which writes n times times. Writing a column, a
// constant or a parameter again costs little; anything else counts
// against maxCopies for everything written inside it.
func (w *writer) repeated(n *pg_query.Node, times int, write func()) {
	if isLeaf(n) {
		write()
		return
	}
	saved := w.copies
	w.copies = max(saved, 1) * times
	if w.copies > maxCopies {
		w.fail(statementTooComplex, "statement too complex to write for %s replicas: divisions by expressions, "+
			"GREATEST or LEAST of values that may be NULL, or ORDER BY keys that may be NULL are nested too deeply in one another",
			dialectName(w.d))
	}
	write()
	w.copies = saved
}

// isLeaf reports whether n is a column, a constant or a parameter,
// possibly cast.
func isLeaf(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	return n.GetColumnRef() != nil || n.GetAConst() != nil || n.GetParamRef() != nil
}

// arith writes + and -, including date and timestamp arithmetic.
func (w *writer) arith(op string, l, r *pg_query.Node, lt, rt string) {
	switch {
	case isNumber(lt) && isNumber(rt), lt == "" && isNumber(rt), isNumber(lt) && rt == "":
		w.binary(l, op, r)
	case lt == "date" && isInt(rt):
		if w.my() {
			w.str("(")
			w.expr(l)
			w.str(" " + op + " INTERVAL ")
			w.expr(r)
			w.str(" DAY)")
			return
		}
		w.str("date(")
		w.expr(l)
		w.str(", (")
		w.expr(r)
		if op == "-" {
			w.str(" * -1")
		}
		w.str(") || ' days')")
	case isInt(lt) && rt == "date" && op == "+":
		w.arith(op, r, l, rt, lt)
	case lt == "date" && rt == "date" && op == "-":
		if w.my() {
			w.str("DATEDIFF(")
			w.expr(l)
			w.str(", ")
			w.expr(r)
			w.str(")")
			return
		}
		w.str("CAST(julianday(")
		w.expr(l)
		w.str(") - julianday(")
		w.expr(r)
		w.str(") AS INTEGER)")
	case isTime(lt) && rt == "interval":
		w.timePlusInterval(op, l, r, lt)
	case lt == "interval" && isTime(rt) && op == "+":
		w.arith(op, r, l, rt, lt)
	default:
		if lt == "" || rt == "" {
			w.refuse("%s on operands whose types shepherd cannot tell (add a cast)", op)
		}
		w.refuse("%s between %s and %s", op, lt, rt)
	}
}

// paramType records that $n is expected as a value of type t (the first
// context that tells wins, as in PostgreSQL's inference).
func (w *writer) paramType(n int, t string) {
	if n < 1 || n > 65535 || t == "" {
		return
	}
	for len(w.ptypes) < n {
		w.ptypes = append(w.ptypes, "")
	}
	if w.ptypes[n-1] == "" {
		w.ptypes[n-1] = t
	}
}

// typed writes n where a value of type t is expected: a string constant
// for a date, timestamp or boolean is written in the form the dialect
// reads (MariaDB cannot read a time zone offset, SQLite compares dates as
// text), and a parameter gets t's family as its hint (see Arg: untyped
// text for a bytea is decoded as PostgreSQL would).
func (w *writer) typed(n *pg_query.Node, t string) {
	if schema.IsArray(t) {
		w.arrayValue(n, t)
		return
	}
	if c := n.GetAConst(); t == "jsonb" && !w.pg() && c != nil && c.GetSval() != nil {
		w.jsonbConstant(c.GetSval().Sval)
		return
	}
	if p := n.GetParamRef(); p != nil && t != "" {
		w.paramType(int(p.Number), t)
		switch f := Family(t); f {
		case answer.Date, answer.Time, answer.Timestamp, answer.TimestampTZ, answer.Bool, answer.UUID, answer.Bytes:
			w.param(int(p.Number), f)
			return
		}
	}
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil || t == "" {
		w.expr(n)
		return
	}
	switch {
	case t == "date" || t == "timestamp" || t == "timestamptz" || t == "time":
		w.timeLiteral(c.GetSval().Sval, t)
	case t == "uuid":
		u, ok := NormalizeUUID(c.GetSval().Sval)
		if !ok {
			w.fail(pgerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", c.GetSval().Sval)
		}
		w.literal(u)
	case isInt(t):
		// Read as PostgreSQL reads the text ('x1' fails with 22P02),
		// where SQLite would store it as text and MariaDB read 0.
		w.numberConstant(c.GetSval().Sval, t, nil)
	case t == "bytea":
		w.bytesLiteral(c.GetSval().Sval)
	case t == "bool":
		b, ok := answer.ParseBool(c.GetSval().Sval)
		if !ok {
			w.refuse("boolean constant %q", c.GetSval().Sval)
		}
		if b {
			w.str("TRUE")
		} else {
			w.str("FALSE")
		}
	default:
		w.expr(n)
	}
}

func isInt(t string) bool     { return schema.IsInteger(t) }
func isNumber(t string) bool  { return isInt(t) || t == "numeric" || t == "float4" || t == "float8" }
func isTime(t string) bool    { return t == "date" || t == "timestamp" || t == "timestamptz" }
func isJSON(t string) bool    { return t == "json" || t == "jsonb" }
func isTextual(t string) bool { return schema.IsText(t) }

// asFloat writes n, an argument of CASE, COALESCE or NULLIF whose result
// PostgreSQL types as common, as a float when common is one and n is an
// integer or numeric value: the engines give such a conditional the
// type of the argument it returns, so that SQLite divided an integer 5
// of COALESCE(5, real) by 2 as integers, and -NULLIF(0, real) was 0
// where PostgreSQL's float is -0.
func (w *writer) asFloat(n *pg_query.Node, common string) {
	t := w.typeOf(n)
	if w.pg() || !strings.HasPrefix(common, "float") || !isInt(t) && t != "numeric" {
		w.expr(n)
		return
	}
	w.str("CAST(")
	w.expr(n)
	if w.my() {
		w.str(" AS DOUBLE)")
	} else {
		w.str(" AS REAL)")
	}
}

// repeatable reports whether n may be written twice without the text
// growing faster than the statement: it holds none of the constructs
// that are themselves written more than once (divisions, %, mod(),
// GREATEST and LEAST) and no subquery.
func repeatable(n *pg_query.Node) bool {
	ok := true
	walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.A_Expr:
			if op := schema.OpName(x.Name); op == "/" || op == "%" {
				ok = false
			}
		case *pg_query.FuncCall:
			if schema.FuncName(x) == "mod" {
				ok = false
			}
		case *pg_query.MinMaxExpr, *pg_query.SubLink:
			ok = false
		}
		return ok
	})
	return ok
}

// nonZeroConst reports whether n is a number constant other than zero.
func nonZeroConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	if c == nil || c.Isnull {
		return false
	}
	if v, ok := intConst(n); ok && v != 0 {
		return true
	}
	return c.GetFval() != nil && strings.Trim(c.GetFval().Fval, "0.-+") != ""
}

// zeroValued reports whether n is zero whenever it is not NULL: a zero
// constant, signed or cast, NULL, NULLIF of such a value, and COALESCE
// and CASE whose every result is one.
func zeroValued(n *pg_query.Node) bool {
	switch {
	case n == nil:
		return false
	case isNullConst(n):
		return true
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil:
			return c.GetIval().Ival == 0
		case c.GetFval() != nil:
			mantissa, _, _ := strings.Cut(strings.ToLower(c.GetFval().Fval), "e")
			return strings.Trim(mantissa, "-+0.") == ""
		}
		return c.Val == nil && !c.Isnull // pg_query's integer 0
	case n.GetTypeCast() != nil:
		return zeroValued(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		switch {
		case e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return zeroValued(e.Lexpr)
		case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr == nil:
			op := schema.OpName(e.Name)
			return (op == "-" || op == "+") && zeroValued(e.Rexpr)
		}
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if !zeroValued(a) {
				return false
			}
		}
		return true
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		for _, a := range c.Args {
			if !zeroValued(a.GetCaseWhen().Result) {
				return false
			}
		}
		return c.Defresult == nil || zeroValued(c.Defresult)
	}
	return false
}
