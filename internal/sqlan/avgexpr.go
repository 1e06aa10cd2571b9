package sqlan

import (
	"math/big"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// A result column that is arithmetic on avg() of exact values, deeper
// than avg(x) op c (see scaledAverage): signs, + - * between averages,
// constants and integer expressions, and division by a non-zero
// constant, e.g. - avg(x), count(*) + avg(x), 55 * avg(y) - min(z). The
// replicas answer its leaves, avg(x) as sum(x)::text || '/' ||
// count(x)::text (as exactAverages) and each integer operand as its
// text, joined by '|'; shepherd takes each average to PostgreSQL's
// quotient (pgDivide) and computes the arithmetic with numeric's exact
// rules (avgTree.eval). Every operator is strict, as || is on every
// engine: a NULL leaf makes the column NULL, as in PostgreSQL. No leaf
// divides, so nothing shepherd computes can fail where PostgreSQL would.

// avgTree is a node of such a column: op is "avg" or "int" for a leaf
// (the part at index part), "const" for the constant c, "null" for a
// NULL numeric, "neg" for a sign, or + - * / between l and r (/ only by
// a constant).
type avgTree struct {
	op   string
	l, r *avgTree
	c    string
	part int
}

// avgTreeOf returns the tree of n, a result column in the FROM scope of
// sel, and its leaves (the expressions the replicas answer), or nil when
// n is not such arithmetic or holds no avg().
func avgTreeOf(snap *schema.Snapshot, sel *pg_query.SelectStmt, n *pg_query.Node) (tree *avgTree, leaves, keys []*pg_query.Node) {
	hasAvg := false
	var walk func(n *pg_query.Node) *avgTree
	walk = func(n *pg_query.Node) *avgTree {
		if fc, _, rounded, mods := averageOf(n); fc != nil && !rounded && mods == nil {
			if schema.FuncName(fc) != "avg" {
				return nil
			}
			if exact, _, _ := exactArgument(snap, sel, fc.Args[0]); !exact {
				return nil
			}
			hasAvg = true
			leaves = append(leaves, quotientParts(fc))
			for _, part := range []string{"sum", "count"} {
				c := proto.Clone(fc).(*pg_query.FuncCall)
				c.Funcname = []*pg_query.Node{pg_query.MakeStrNode(part)}
				keys = append(keys, &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: c}})
			}
			return &avgTree{op: "avg", part: len(leaves) - 1}
		}
		if text, ok := signedConstant(n); ok {
			return &avgTree{op: "const", c: text}
		}
		if tc := n.GetTypeCast(); tc != nil && isNullConst(tc.Arg) {
			if t, _, _, ok := schema.TypeOf(tc.TypeName); ok && (isInteger(t) || t == "numeric") {
				return &avgTree{op: "null"}
			}
			return nil
		}
		if e := n.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP {
			op := schema.OpName(e.Name)
			if e.Lexpr == nil && (op == "-" || op == "+") {
				if !containsAvg(e.Rexpr) {
					return intLeaf(snap, sel, n, &leaves, &keys)
				}
				x := walk(e.Rexpr)
				if x == nil || op == "+" {
					return x
				}
				return &avgTree{op: "neg", l: x}
			}
			if e.Lexpr != nil && (op == "+" || op == "-" || op == "*" || op == "/") {
				if !containsAvg(n) {
					return intLeaf(snap, sel, n, &leaves, &keys)
				}
				if op == "/" {
					// By a non-zero constant only: any other divisor
					// could be 0, where PostgreSQL fails.
					text, ok := signedConstant(e.Rexpr)
					if !ok || strings.Trim(text, "-0.") == "" {
						return nil
					}
				}
				l, r := walk(e.Lexpr), walk(e.Rexpr)
				if l == nil || r == nil {
					return nil
				}
				return &avgTree{op: op, l: l, r: r}
			}
			return nil
		}
		if containsAvg(n) {
			return nil
		}
		return intLeaf(snap, sel, n, &leaves, &keys)
	}
	t := walk(n)
	if t == nil || !hasAvg {
		return nil, nil, nil
	}
	return t, leaves, keys
}

// signedConstant returns the text of an integer or decimal constant
// under any number of signs (- - 30, + 18), as numericConstant.
func signedConstant(n *pg_query.Node) (string, bool) {
	neg := false
	for {
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr != nil {
			break
		}
		switch schema.OpName(e.Name) {
		case "-":
			neg = !neg
		case "+":
		default:
			return "", false
		}
		n = e.Rexpr
	}
	text, ok := numericConstant(n)
	if !ok || !neg {
		return text, ok
	}
	if t, minus := strings.CutPrefix(text, "-"); minus {
		return t, true
	}
	return "-" + text, true
}

// intLeaf makes n a leaf the replicas answer as its text, if it is an
// integer expression (int2, int4, int8), whose text every engine writes
// alike; keys gets n as a sort key unless it is a constant.
func intLeaf(snap *schema.Snapshot, sel *pg_query.SelectStmt, n *pg_query.Node, leaves, keys *[]*pg_query.Node) *avgTree {
	if !isInteger(typeIn(snap, sel, n).Name()) {
		return nil
	}
	*leaves = append(*leaves, textOf(n))
	if !constant(n) {
		*keys = append(*keys, proto.Clone(n).(*pg_query.Node))
	}
	return &avgTree{op: "int", part: len(*leaves) - 1}
}

// containsAvg reports whether n calls avg() anywhere.
func containsAvg(n *pg_query.Node) bool {
	found := false
	pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		if fc, ok := m.Interface().(*pg_query.FuncCall); ok && schema.FuncName(fc) == "avg" {
			found = true
		}
		return !found
	})
	return found
}

// textOf is n::text.
func textOf(n *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg:      proto.Clone(n).(*pg_query.Node),
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
		Location: -1,
	}}}
}

// avgTreeParts joins the leaves with '|'.
func avgTreeParts(leaves []*pg_query.Node) *pg_query.Node {
	out := leaves[0]
	for _, l := range leaves[1:] {
		bar := pg_query.MakeAConstStrNode("|", -1)
		out = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")}, out, bar, -1)
		out = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")}, out, l, -1)
	}
	return out
}

// eval computes the column from the replicas' text of its leaves, as
// PostgreSQL's numeric does: each average its quotient (pgDivide), + and
// - exact at the larger scale, * exact at the sum of the scales, /
// pgDivide; null reports a NULL leaf (the column is NULL). ok is false
// for text of another form.
func (t *avgTree) eval(parts string) (text string, null, ok bool) {
	fields := strings.Split(parts, "|")
	var ev func(t *avgTree) (decimal, bool, bool)
	ev = func(t *avgTree) (decimal, bool, bool) {
		switch t.op {
		case "null":
			return decimal{}, true, true
		case "const":
			d, ok := parseDecimal(t.c)
			return d, false, ok
		case "avg", "int":
			if t.part >= len(fields) {
				return decimal{}, false, false
			}
			f := fields[t.part]
			if t.op == "avg" {
				q, ok := pgQuotient(f)
				if !ok {
					return decimal{}, false, false
				}
				f = q
			}
			d, ok := parseDecimal(f)
			return d, false, ok
		case "neg":
			x, null, ok := ev(t.l)
			x.neg = !x.neg
			return x, null, ok
		}
		x, nx, okx := ev(t.l)
		y, ny, oky := ev(t.r)
		if !okx || !oky {
			return decimal{}, false, false
		}
		if nx || ny {
			return decimal{}, true, true
		}
		switch t.op {
		case "/":
			q, ok := pgDivide(x.String(), y.String())
			if !ok {
				return decimal{}, false, false
			}
			d, ok := parseDecimal(q)
			return d, false, ok
		case "*":
			v := new(big.Int).Mul(x.signed(), y.signed())
			return fromSigned(v, x.scale+y.scale), false, true
		}
		scale := max(x.scale, y.scale)
		vx := new(big.Int).Mul(x.signed(), pow10(scale-x.scale))
		vy := new(big.Int).Mul(y.signed(), pow10(scale-y.scale))
		if t.op == "+" {
			return fromSigned(vx.Add(vx, vy), scale), false, true
		}
		return fromSigned(vx.Sub(vx, vy), scale), false, true
	}
	d, null, ok := ev(t)
	if !ok || null {
		return "", null, ok
	}
	return d.String(), false, true
}

// signed is d's digits with its sign.
func (d decimal) signed() *big.Int {
	v := new(big.Int).Set(d.digits)
	if d.neg {
		v.Neg(v)
	}
	return v
}

// fromSigned is the decimal v * 10^-scale.
func fromSigned(v *big.Int, scale int) decimal {
	return decimal{neg: v.Sign() < 0, digits: new(big.Int).Abs(v), scale: scale}
}

// String writes d as PostgreSQL writes a numeric: its scale's decimals,
// no sign on zero.
func (d decimal) String() string {
	text := d.digits.String()
	if d.scale > 0 {
		if len(text) <= d.scale {
			text = strings.Repeat("0", d.scale-len(text)+1) + text
		}
		text = text[:len(text)-d.scale] + "." + text[len(text)-d.scale:]
	}
	if d.neg && d.digits.Sign() != 0 {
		text = "-" + text
	}
	return text
}

// avgExpression rewrites result column i of sel, rt, when it is such
// arithmetic, and reports whether it did.
func (s *Stmt) avgExpression(r *rewriter, sel *pg_query.SelectStmt, i int, rt *pg_query.ResTarget) bool {
	tree, leaves, parts := avgTreeOf(r.schema, sel, rt.Val)
	if tree == nil {
		return false
	}
	if rt.Name == "" {
		rt.Name, _ = columnName(rt.Val) // PostgreSQL's name
	}
	for _, g := range sel.GroupClause {
		if _, ok := ordinalOf(g); ok || isColumn(g, rt.Name) {
			return false
		}
	}
	// A sort key the client wrote naming the column would sort by the
	// leaves' text: the column is left to the SQL writer, which refuses
	// it. One totalOrder added only orders rows the client's keys tie,
	// which the leaves' own values do alike on every engine.
	user, extended := r.userSorts[sel]
	var keys []*pg_query.Node
	for k, sn := range sel.SortClause {
		sb := sn.GetSortBy()
		if p, ok := ordinalOf(sb.Node); ok && p == i+1 || isColumn(sb.Node, rt.Name) || sameExpr(sb.Node, rt.Val) {
			if !extended || k < user {
				return false
			}
			for _, part := range parts {
				keys = append(keys, sortBy(proto.Clone(part).(*pg_query.Node)))
			}
			continue
		}
		keys = append(keys, sn)
	}
	sel.SortClause = keys
	if s.trees == nil {
		s.trees = map[int]*avgTree{}
	}
	s.trees[i] = tree
	rt.Val = avgTreeParts(leaves)
	return true
}

// oneRow reports whether sel answers at most one row: it aggregates (a
// call of an aggregate in its result columns, not over a window nor in
// a subquery), has no GROUP BY and no window function. DISTINCT on its
// answer changes nothing then.
func oneRow(sel *pg_query.SelectStmt) bool {
	if len(sel.GroupClause) > 0 || len(sel.WindowClause) > 0 {
		return false
	}
	aggregates, windows := false, false
	for _, n := range sel.TargetList {
		pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
			switch x := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.FuncCall:
				name := schema.FuncName(x)
				if x.Over != nil {
					windows = true
				} else if isAggregate(x) || averages[name] || name == "sum" {
					aggregates = true
				}
			}
			return true
		})
	}
	return aggregates && !windows
}
