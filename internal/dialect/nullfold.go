package dialect

import (
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// PostgreSQL's planner folds a strict operator one of whose operands is
// a NULL constant to NULL (eval_const_expressions), so the other operand
// is never evaluated: col / 0 = NULL and NULL IN (col / col) are NULL
// there, while MariaDB and SQLite evaluate the division and fail it with
// 22012 (shepherd's zero checks). The writer folds such an operation to
// NULL as PostgreSQL does, but only where that cannot hide an error
// PostgreSQL gives: it still writes (and so checks) the operation,
// discarding the text, and folds only operands whose constant parts
// PostgreSQL folds without failing (1 / 0 = NULL fails there, when
// planning) and that hold no parameter, subquery or aggregate (an
// aggregate makes the query one row per group, folded or not).

// foldOps are the strict operators folded: arithmetic and comparisons.
var foldOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true,
	"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true}

// foldsToNull reports whether the binary operation op over l and r is
// folded to NULL (see above).
func (w *writer) foldsToNull(op string, l, r *pg_query.Node) bool {
	return !w.pg() && l != nil && foldOps[op] && (nullValued(l) || nullValued(r)) && foldSafe(l) && foldSafe(r) &&
		w.foldTypes(op, l, r)
}

// foldTypes reports whether the operands of op have types PostgreSQL
// takes for it, so that folding hides no 42883 (integer = text): each
// an untyped NULL or of a known type, numbers for arithmetic, the same
// family for a comparison.
func (w *writer) foldTypes(op string, l, r *pg_query.Node) bool {
	lt, rt := w.typeOf(l), w.typeOf(r)
	if isStringConst(l) || isStringConst(r) {
		// An untyped string takes the other side's type: NULL = 'a'
		// compares text, CAST(NULL AS INTEGER) = 'a' fails (22P02).
		return comparison[op] && (isNullConst(l) || isNullConst(r) || isTextual(lt) || isTextual(rt))
	}
	if lt == "" && !isNullConst(l) || rt == "" && !isNullConst(r) {
		return false
	}
	if !comparison[op] {
		return (lt == "" || isNumber(lt)) && (rt == "" || isNumber(rt))
	}
	return lt == "" || rt == "" || lt == rt || isNumber(lt) && isNumber(rt) || isTextual(lt) && isTextual(rt)
}

// inFoldsToNull reports whether l IN (items) (or NOT IN) is folded to
// NULL: PostgreSQL writes it as l = a OR l = b ... (AND of <> for NOT
// IN), each folded when l is NULL; with one item, as l = a, folded when
// a is NULL.
func (w *writer) inFoldsToNull(l *pg_query.Node, items []*pg_query.Node) bool {
	if w.pg() || !foldSafe(l) {
		return false
	}
	for _, it := range items {
		if !foldSafe(it) {
			return false
		}
	}
	if len(items) == 1 {
		return w.foldsToNull("=", l, items[0])
	}
	if !nullValued(l) {
		return false
	}
	for _, it := range items {
		if !w.foldTypes("=", l, it) {
			return false
		}
	}
	return true
}

// nullFolded writes NULL for an operation write would write, after
// writing it and discarding the text, so that whatever the writer
// refuses or fails in it is refused or failed still.
func (w *writer) nullFolded(write func()) {
	mark := w.b.Len()
	write()
	s := w.b.String()[:mark]
	w.b.Reset()
	w.b.WriteString(s)
	w.str("NULL")
}

// foldSafe reports whether n may be left unevaluated where PostgreSQL
// folds an operation over it to NULL: its constant parts fold without
// failing, and it holds no parameter, subquery, aggregate or window.
func foldSafe(n *pg_query.Node) bool {
	_, safe := foldClass(n)
	return safe
}

// foldClass says whether n is constant (PostgreSQL folds it when
// planning) and whether folding it, and evaluating none of it, is safe
// (see foldSafe). Whatever it does not know is unsafe.
func foldClass(n *pg_query.Node) (constant, safe bool) {
	switch {
	case n == nil:
		return true, true
	case n.GetAConst() != nil:
		return true, true
	case n.GetColumnRef() != nil:
		return false, true
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		c, s := foldClass(tc.Arg)
		if !s || !c {
			return c, s
		}
		t, _, serial, ok := schema.TypeOf(tc.TypeName)
		if !ok || serial {
			return true, false
		}
		if nullValued(tc.Arg) {
			return true, true
		}
		v, ok := constInt4(tc.Arg)
		if !ok {
			return true, false
		}
		switch t {
		case "int8", "numeric", "float4", "float8":
			return true, len(tc.TypeName.Typmods) == 0
		case "int4":
			return true, true
		case "int2":
			return true, v >= math.MinInt16 && v <= math.MaxInt16
		}
		return true, false
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || !foldOps[schema.OpName(e.Name)] {
			return false, false
		}
		lc, ls := foldClass(e.Lexpr)
		rc, rs := foldClass(e.Rexpr)
		if !ls || !rs {
			return false, false
		}
		if !lc || !rc {
			return false, true
		}
		// Constant: PostgreSQL computes it when planning.
		if nullValued(n) || signedNumber(n) {
			return true, true
		}
		_, ok := constInt4(n)
		return true, ok
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		if fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 ||
			aggregates[schema.FuncName(fc)] || len(fc.Args) == 0 {
			return false, false
		}
		return allFoldSafe(fc.Args)
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		parts := []*pg_query.Node{ce.Arg, ce.Defresult}
		for _, a := range ce.Args {
			parts = append(parts, a.GetCaseWhen().Expr, a.GetCaseWhen().Result)
		}
		return allFoldSafe(parts)
	case n.GetCoalesceExpr() != nil:
		return allFoldSafe(n.GetCoalesceExpr().Args)
	case n.GetBoolExpr() != nil:
		return allFoldSafe(n.GetBoolExpr().Args)
	case n.GetNullTest() != nil:
		return allFoldSafe([]*pg_query.Node{n.GetNullTest().Arg})
	}
	return false, false
}

// allFoldSafe classifies an expression made of parts: safe when it is
// not constant and every part is safe (a constant one might fail when
// PostgreSQL folds it; it is not worth telling).
func allFoldSafe(parts []*pg_query.Node) (constant, safe bool) {
	constant = true
	for _, p := range parts {
		if p == nil {
			continue
		}
		c, s := foldClass(p)
		if !s {
			return false, false
		}
		constant = constant && c
	}
	return constant, !constant
}

// signedNumber reports whether n is a number constant under signs
// (- + 0, - 1.5), which folds without failing.
func signedNumber(n *pg_query.Node) bool {
	if c := n.GetAConst(); c != nil {
		return c.GetFval() != nil || c.GetIval() != nil || !c.Isnull && c.GetSval() == nil && c.GetBoolval() == nil && c.GetBsval() == nil
	}
	e := n.GetAExpr()
	return e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr == nil && schema.OpName(e.Name) == "+" && signedNumber(e.Rexpr)
}

// constInt4 computes n, integer constants under + - * / % and signs, in
// PostgreSQL's int4 arithmetic; ok is false where it fails (overflow,
// division by zero) or n is something else.
func constInt4(n *pg_query.Node) (v int64, ok bool) {
	if c := n.GetAConst(); c != nil {
		v, ok := intConst(n)
		return v, ok && v >= math.MinInt32 && v <= math.MaxInt32
	}
	e := n.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		return 0, false
	}
	op := schema.OpName(e.Name)
	r, ok := constInt4(e.Rexpr)
	if !ok {
		return 0, false
	}
	if e.Lexpr == nil {
		switch op {
		case "+":
			return r, true
		case "-":
			return -r, r != math.MinInt32
		}
		return 0, false
	}
	l, ok := constInt4(e.Lexpr)
	if !ok {
		return 0, false
	}
	switch op {
	case "+":
		v = l + r
	case "-":
		v = l - r
	case "*":
		v = l * r
	case "/", "%":
		if r == 0 {
			return 0, false
		}
		if op == "/" {
			v = l / r
		} else {
			v = l % r
		}
	default:
		return 0, false
	}
	return v, v >= math.MinInt32 && v <= math.MaxInt32
}
