package pgcatalog

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// checkExpr is a CHECK expression as PostgreSQL 15 prints it back: a
// comparison of a column with a constant shows the constant's implicit
// cast to the column's type ((0)::numeric for a numeric column, 'x'::text
// for a text one), as the parser resolved the operator. Forms it does not
// know are returned as they are.
func checkExpr(t *schema.Table, expr string) (plain, pretty string) {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return expr, ""
	}
	implicitCasts(tree.Stmts[0].Stmt, func(f []string) string {
		if len(f) != 1 || t.Column(f[0]) == nil {
			return ""
		}
		return t.Column(f[0]).Type
	})
	res := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
	out, ok := ruleExpr(res, false)
	if !ok {
		return expr, ""
	}
	if len(out) >= 2 && out[0] == '(' && out[len(out)-1] == ')' && balanced(out[1:len(out)-1]) {
		out = out[1 : len(out)-1] // the caller adds CHECK's own
	}
	pretty, _ = ruleExpr(res, true)
	return out, pretty
}

// implicitCasts puts in root's comparisons of a column with a constant
// the cast PostgreSQL's parser adds to the constant (and to a varchar
// column compared with text). colType gives a column reference's type
// ("" when unknown).
func implicitCasts(root *pg_query.Node, colType func(fields []string) string) {
	mapNodes(root, func(n *pg_query.Node) (*pg_query.Node, bool) {
		e := n.GetAExpr()
		if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || e.Rexpr == nil {
			return n, false
		}
		switch funcName(e.Name) {
		case "=", "<>", "<", ">", "<=", ">=":
		default:
			return n, false
		}
		for _, side := range [][2]**pg_query.Node{{&e.Lexpr, &e.Rexpr}, {&e.Rexpr, &e.Lexpr}} {
			col, con := *side[0], *side[1]
			typ, c := "", con.GetAConst()
			if col.GetColumnRef() != nil {
				typ = colType(strs(col.GetColumnRef().Fields))
			}
			if typ == "" || c == nil || c.Isnull {
				continue
			}
			cast := ""
			switch {
			case c.GetIval() != nil && typ == "numeric":
				cast = "numeric"
			case (c.GetIval() != nil || c.GetFval() != nil) && (typ == "float8" || typ == "float4"):
				cast = "float8" // real < integer is float48lt: the constant becomes float8
			case c.GetSval() != nil && (typ == "text" || typ == "varchar"):
				cast = "text"
				if typ == "varchar" {
					*side[0] = typeCast(col, "text")
				}
			}
			if cast != "" {
				*side[1] = typeCast(con, cast)
			}
			break
		}
		return n, true
	})
}

// ruleExpr prints n as PostgreSQL's ruleutils does without pretty
// flags: every operator, AND/OR/NOT and IS [NOT] NULL in parentheses, a
// cast's operand in parentheses unless it is a string constant. false:
// a form it does not know (the caller keeps the text it had).
func ruleExpr(n *pg_query.Node, pretty bool) (string, bool) {
	// paren puts s in parentheses, unless pretty; sub, a child's
	// printing, in pretty form keeps them for an operator or boolean
	// child (their precedence is not compared).
	paren := func(s string) string {
		if pretty {
			return s
		}
		return "(" + s + ")"
	}
	sub := func(c *pg_query.Node) (string, bool) {
		s, ok := ruleExpr(c, pretty)
		if pretty && (c.GetAExpr() != nil || c.GetBoolExpr() != nil) {
			s = "(" + s + ")"
		}
		return s, ok
	}
	switch {
	case n.GetColumnRef() != nil:
		f := strs(n.GetColumnRef().Fields)
		if len(f) == 0 || len(f) > 2 || len(f) != len(n.GetColumnRef().Fields) {
			return "", false
		}
		for i := range f {
			f[i] = quoteIfNeeded(f[i])
		}
		return strings.Join(f, "."), true
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil && c.GetIval().Ival >= 0:
			return strconv.FormatInt(int64(c.GetIval().Ival), 10), true
		case c.GetIval() != nil:
			return "'" + strconv.FormatInt(int64(c.GetIval().Ival), 10) + "'::integer", true
		case c.GetFval() != nil && !strings.HasPrefix(c.GetFval().Fval, "-"):
			return c.GetFval().Fval, true
		}
		return "", false
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		typ := sqlTypeName(typeName(tc.TypeName), nil)
		if sv := tc.Arg.GetAConst().GetSval(); sv != nil {
			return "'" + strings.ReplaceAll(sv.Sval, "'", "''") + "'::" + typ, true
		}
		arg, ok := sub(tc.Arg)
		if !ok {
			return "", false
		}
		if !pretty && !strings.HasPrefix(arg, "(") {
			arg = "(" + arg + ")"
		}
		return arg + "::" + typ, true
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || e.Rexpr == nil {
			return "", false
		}
		l, ok1 := sub(e.Lexpr)
		r, ok2 := sub(e.Rexpr)
		return paren(l + " " + funcName(e.Name) + " " + r), ok1 && ok2
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		var parts []string
		for _, a := range b.Args {
			p, ok := ruleExpr(a, pretty)
			if !ok {
				return "", false
			}
			if pretty && a.GetBoolExpr() != nil && a.GetBoolExpr().Boolop != b.Boolop {
				p = "(" + p + ")"
			}
			parts = append(parts, p)
		}
		switch b.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			return paren(strings.Join(parts, " AND ")), true
		case pg_query.BoolExprType_OR_EXPR:
			return paren(strings.Join(parts, " OR ")), true
		case pg_query.BoolExprType_NOT_EXPR:
			return paren("NOT " + parts[0]), len(parts) == 1
		}
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		a, ok := sub(nt.Arg)
		if nt.Nulltesttype == pg_query.NullTestType_IS_NULL {
			return paren(a + " IS NULL"), ok
		}
		return paren(a + " IS NOT NULL"), ok
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		if fc.AggDistinct || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return "", false
		}
		if fc.AggStar {
			return funcName(fc.Funcname) + "(*)", len(fc.Args) == 0
		}
		var args []string
		for _, a := range fc.Args {
			p, ok := ruleExpr(a, pretty)
			if !ok {
				return "", false
			}
			args = append(args, p)
		}
		return funcName(fc.Funcname) + "(" + strings.Join(args, ", ") + ")", true
	}
	return "", false
}

// balanced reports whether s's parentheses pair up (so that the
// parentheses around it are one group).
func balanced(s string) bool {
	depth := 0
	for _, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

func typeCast(n *pg_query.Node, typ string) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n,
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(typ)}, Typemod: -1}, Location: -1}}}
}
