package sqlan

import (
	"math/big"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// avg() of exact values (integers, numeric) is a numeric whose digits
// PostgreSQL chooses from the operands' magnitudes (select_div_scale in
// numeric.c: at least 16 significant digits, never fewer decimals than
// the sum has); MariaDB answers with four decimals more than its
// operand, SQLite with a double. No engine but PostgreSQL can write those
// digits, so an avg() that is a column of the statement's result is asked
// of every replica as its exact parts, sum(x)::text || '/' ||
// count(x)::text (the replicas agree on those, digit for digit, and the
// vote compares them), and shepherd writes the quotient as PostgreSQL
// would (ShapeAnswer, pgQuotient).
//
// Result columns avg(x) and round(avg(x), n) (rounded by shepherd after
// the quotient, as PostgreSQL rounds avg's value), and avg(x) op c for a
// constant c (computed by shepherd on the quotient with numeric's rules,
// see avgArith), are rewritten, and so is deeper arithmetic on averages
// (see avgExpression); the SQL writer refuses avg() of exact values
// anywhere else (in a condition, CASE, a function call, HAVING, a
// subquery) but as an ORDER BY item, where the engines' own averages
// order the rows.

// exactAverages rewrites the avg() result columns of the top-level SELECT
// sel, and records their positions in s.quotients. It must run after
// totalOrder, whose sort keys may name result columns by position: an
// ORDER BY that names a rewritten column sorts by the average itself.
func (s *Stmt) exactAverages(r *rewriter, sel *pg_query.SelectStmt) {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
		return
	}
	single := oneRowSelect(r.schema, sel)
	if single != nil && len(sel.DistinctClause) > 0 && oneRowKeys(sel, single) {
		sel.SortClause = nil // one row needs no order
	}
	if len(sel.DistinctClause) > 0 && (!oneRow(sel) && single == nil || len(sel.SortClause) > 0) {
		// Two rows with one average may have other sums and counts;
		// and the sort keys of a SELECT DISTINCT must be result
		// columns, which the parts are not.
		return
	}
	var found []int
	defer func() {
		// What no rewrite above took, in a SELECT of one row.
		if single != nil {
			if folded := s.foldOneRow(r, sel, single, found); len(folded) > 0 {
				s.quotients = append(s.quotients, folded...)
			}
		}
	}()
	for _, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil || hasStar([]*pg_query.Node{n}) {
			return // result columns shepherd cannot count
		}
	}
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		fc, places, rounded, mods := averageOf(rt.Val)
		var arith *avgArith
		if fc == nil {
			fc, places, rounded, arith = scaledAverage(rt.Val)
		}
		if fc == nil {
			if s.exactQuotient(r, sel, i, rt) || s.avgExpression(r, sel, i, rt) {
				found = append(found, i)
			}
			continue
		}
		if name := schema.FuncName(fc); name != "avg" && arith == nil {
			// The variance family: of int2 and int4 values only, whose
			// squares every engine sums exactly; not DISTINCT (the
			// distinct squares are not the squares of the distinct
			// values); not cast to numeric(p,s).
			scale, ok := squaresExact(typeIn(r.schema, sel, fc.Args[0]))
			if !ok || fc.AggDistinct || mods != nil {
				continue
			}
			if rt.Name == "" {
				rt.Name, _ = columnName(rt.Val)
			}
			// A sort key naming the column would sort by the parts'
			// text: one the client wrote leaves the aggregate to the
			// SQL writer, which refuses it; one totalOrder added only
			// orders rows the client's keys tie, which the parts
			// themselves do alike on every engine (as exactQuotient).
			user, extended := r.userSorts[sel]
			var keys []*pg_query.Node
			named := false
			for k, sn := range sel.SortClause {
				sb := sn.GetSortBy()
				if p, ok := ordinalOf(sb.Node); ok && p == i+1 || isColumn(sb.Node, rt.Name) || sameExpr(sb.Node, rt.Val) {
					if !extended || k < user {
						named = true
						break
					}
					for _, part := range varianceKeys(fc, scale) {
						keys = append(keys, sortBy(part))
					}
					continue
				}
				keys = append(keys, sn)
			}
			if named {
				continue
			}
			sel.SortClause = keys
			if rounded {
				if s.rounds == nil {
					s.rounds = map[int]int{}
				}
				s.rounds[i] = places
			}
			if s.variances == nil {
				s.variances = map[int]string{}
			}
			s.variances[i] = name + ":" + strconv.Itoa(scale)
			rt.Val = varianceParts(fc, scale)
			found = append(found, i)
			continue
		}
		exact, whole, scale := exactArgument(r.schema, sel, fc.Args[0])
		if !exact {
			continue
		}
		if mods != nil {
			// An average lies between the smallest and the largest
			// value, and rounding it to no fewer decimals than those
			// values have keeps it there; with fewer, it may gain a
			// digit. A numeric(p,s) it might not fit fails in
			// PostgreSQL, which shepherd's quotient cannot: those
			// casts are left to the SQL writer, which refuses them.
			room := int(mods[0] - mods[1])
			if whole < 0 || room < whole || room == whole && int(mods[1]) < scale {
				continue
			}
		}
		avg := rt.Val
		if rt.Name == "" {
			rt.Name, _ = columnName(avg) // PostgreSQL's name
		}
		if rounded {
			if s.rounds == nil {
				s.rounds = map[int]int{}
			}
			s.rounds[i] = places
		}
		if mods != nil {
			if s.typmods == nil {
				s.typmods = map[int][]int32{}
			}
			s.typmods[i] = mods
		}
		if arith != nil {
			// A sort key naming avg(x) op c sorts by avg(x), which
			// the engines compute (see the SQL writer's sortKey),
			// where op c keeps the order and nothing rounds: else
			// the column is left to the writer, which refuses it.
			// One totalOrder added only orders rows the client's keys
			// tie: sum(x), count(x) do that alike on every engine.
			user, extended := r.userSorts[sel]
			named := false
			var keys []*pg_query.Node
			for k, sn := range sel.SortClause {
				sb := sn.GetSortBy()
				if p, ok := ordinalOf(sb.Node); ok && p == i+1 || isColumn(sb.Node, rt.Name) || sameExpr(sb.Node, rt.Val) {
					if extended && k >= user {
						for _, part := range []string{"sum", "count"} {
							c := proto.Clone(fc).(*pg_query.FuncCall)
							c.Funcname = []*pg_query.Node{pg_query.MakeStrNode(part)}
							keys = append(keys, sortBy(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: c}}))
						}
						continue
					}
					named = true
				}
				keys = append(keys, sn)
			}
			if named && (rounded || !arith.increasing()) {
				continue
			}
			sel.SortClause = keys
			avg = &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}
			if s.ariths == nil {
				s.ariths = map[int]*avgArith{}
			}
			s.ariths[i] = arith
		}
		for _, sn := range sel.SortClause {
			// ORDER BY avg names the column even unaliased (PostgreSQL
			// reads a bare ORDER BY name as a result column's first).
			sb := sn.GetSortBy()
			if p, ok := ordinalOf(sb.Node); ok && p == i+1 || isColumn(sb.Node, rt.Name) || arith != nil && sameExpr(sb.Node, rt.Val) {
				sb.Node = proto.Clone(avg).(*pg_query.Node)
			}
		}
		rt.Val = quotientParts(fc)
		found = append(found, i)
	}
	if len(found) > 0 {
		s.quotients = found
		r.changed = true
	}
}

// averageOf returns the avg() call of a result column that is avg(x),
// round(avg(x)), round(avg(x), n) for a constant n (rounded, to places
// decimals) or avg(x)::numeric(p,s) (rounded to s, mods [p s]); nil for
// any other expression.
func averageOf(n *pg_query.Node) (avg *pg_query.FuncCall, places int, rounded bool, mods []int32) {
	if fc := n.GetFuncCall(); fc != nil && schema.FuncName(fc) == "round" && fc.Over == nil && !fc.AggStar &&
		(len(fc.Args) == 1 || len(fc.Args) == 2 && fc.Args[1].GetAConst().GetIval() != nil) {
		if len(fc.Args) == 2 {
			places = int(fc.Args[1].GetAConst().GetIval().Ival)
		}
		if avg, _, _, _ := averageOf(fc.Args[0]); avg != nil && fc.Args[0].GetFuncCall() == avg {
			return avg, places, true, nil
		}
		return nil, 0, false, nil
	}
	if tc := n.GetTypeCast(); tc != nil {
		t, m, _, ok := schema.TypeOf(tc.TypeName)
		if avg, _, _, _ := averageOf(tc.Arg); ok && t == "numeric" && len(m) == 2 && avg != nil && tc.Arg.GetFuncCall() == avg {
			return avg, int(m[1]), true, m
		}
		return nil, 0, false, nil
	}
	fc := n.GetFuncCall()
	if fc == nil || !averages[schema.FuncName(fc)] || len(fc.Args) != 1 || fc.AggStar || len(fc.AggOrder) > 0 {
		return nil, 0, false, nil
	}
	return fc, 0, false, nil
}

// avgArith is the arithmetic a result column does on an avg(): avg op c,
// or c op avg when first; c is the text of a constant integer or decimal.
type avgArith struct {
	op    string
	c     string
	first bool
}

// increasing reports whether a larger average gives a larger result.
func (a *avgArith) increasing() bool {
	positive := !strings.HasPrefix(a.c, "-") && strings.Trim(a.c, "0.") != ""
	switch a.op {
	case "+":
		return true
	case "-":
		return !a.first
	case "*":
		return positive
	case "/":
		return !a.first && positive
	}
	return false
}

// apply computes PostgreSQL's numeric result of the arithmetic on the
// average q (PostgreSQL's text of it): + - * exactly, with the scale
// PostgreSQL gives (the larger of the two; their sum for *), / as
// numeric division does (pgDivide).
func (a *avgArith) apply(q string) (string, bool) {
	x, y := q, a.c
	if a.first {
		x, y = y, x
	}
	if a.op == "/" {
		return pgDivide(x, y)
	}
	dx, ok1 := parseDecimal(x)
	dy, ok2 := parseDecimal(y)
	if !ok1 || !ok2 {
		return "", false
	}
	signed := func(d decimal) *big.Int {
		v := new(big.Int).Set(d.digits)
		if d.neg {
			v.Neg(v)
		}
		return v
	}
	vx, vy := signed(dx), signed(dy)
	var v *big.Int
	scale := max(dx.scale, dy.scale)
	switch a.op {
	case "*":
		v, scale = new(big.Int).Mul(vx, vy), dx.scale+dy.scale
	case "+", "-":
		vx.Mul(vx, pow10(scale-dx.scale))
		vy.Mul(vy, pow10(scale-dy.scale))
		if a.op == "+" {
			v = vx.Add(vx, vy)
		} else {
			v = vx.Sub(vx, vy)
		}
	default:
		return "", false
	}
	neg := v.Sign() < 0
	text := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(text) <= scale {
			text = strings.Repeat("0", scale-len(text)+1) + text
		}
		text = text[:len(text)-scale] + "." + text[len(text)-scale:]
	}
	if neg {
		text = "-" + text
	}
	return text, true
}

// scaledAverage returns the avg() call of a result column that is
// avg(x) op c or c op avg(x) (op + - * /, c an integer or decimal
// constant, not c / avg(x), which fails where the average is 0, nor a
// division by 0), bare or in round(..., n) for a constant n; nil for any
// other expression.
func scaledAverage(n *pg_query.Node) (avg *pg_query.FuncCall, places int, rounded bool, arith *avgArith) {
	if fc := n.GetFuncCall(); fc != nil && schema.FuncName(fc) == "round" && fc.Over == nil && !fc.AggStar &&
		(len(fc.Args) == 1 || len(fc.Args) == 2 && fc.Args[1].GetAConst().GetIval() != nil) {
		if len(fc.Args) == 2 {
			places = int(fc.Args[1].GetAConst().GetIval().Ival)
		}
		avg, _, _, arith = scaledAverage(fc.Args[0])
		return avg, places, avg != nil, arith
	}
	e := n.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil {
		return nil, 0, false, nil
	}
	op := schema.OpName(e.Name)
	if op != "+" && op != "-" && op != "*" && op != "/" {
		return nil, 0, false, nil
	}
	isAvg := func(x *pg_query.Node) *pg_query.FuncCall {
		if fc, _, rounded, mods := averageOf(x); fc != nil && !rounded && mods == nil && schema.FuncName(fc) == "avg" {
			return fc
		}
		return nil
	}
	c, first := e.Rexpr, false
	avg = isAvg(e.Lexpr)
	if avg == nil {
		c, first, avg = e.Lexpr, true, isAvg(e.Rexpr)
	}
	text, ok := numericConstant(c)
	if avg == nil || !ok || op == "/" && (first || strings.Trim(text, "-0.") == "") {
		return nil, 0, false, nil
	}
	return avg, 0, false, &avgArith{op: op, c: text, first: first}
}

// numericConstant returns the text of an integer or decimal constant
// (signed, without an exponent), as PostgreSQL's numeric reads it.
func numericConstant(n *pg_query.Node) (string, bool) {
	neg := false
	if e := n.GetAExpr(); e != nil && e.Lexpr == nil && schema.OpName(e.Name) == "-" {
		neg, n = true, e.Rexpr
	}
	c := n.GetAConst()
	var text string
	switch {
	case c == nil:
		return "", false
	case c.GetIval() != nil:
		text = strconv.FormatInt(int64(c.GetIval().Ival), 10)
	case c.GetFval() != nil:
		text = c.GetFval().Fval
	default:
		return "", false
	}
	if d, ok := parseDecimal(text); !ok || d.neg && neg {
		return "", false
	}
	if neg {
		text = "-" + text
	}
	return text, true
}

// averages are the aggregates averageOf finds: avg() and the variance
// family, whose numeric results PostgreSQL computes from the count, the
// sum and the sum of squares (numeric_stddev_internal).
var averages = map[string]bool{"avg": true, "stddev": true, "stddev_samp": true, "stddev_pop": true,
	"variance": true, "var_samp": true, "var_pop": true}

// varianceParts is count(x)::text || ';' || sum(x)::text || ';' ||
// sum(u * u)::text (see varianceKeys) for a variance or standard
// deviation of values x that squaresExact takes, with the aggregate's
// FILTER and window: the parts pgVariance computes PostgreSQL's answer
// from. The squares are taken in 64 bits, which they fit.
func varianceParts(agg *pg_query.FuncCall, scale int) *pg_query.Node {
	concat := func(l, r *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")}, l, r, -1)
	}
	semi := func() *pg_query.Node { return pg_query.MakeAConstStrNode(";", -1) }
	keys := varianceKeys(agg, scale)
	text := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      n,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	return concat(concat(concat(concat(text(keys[0]), semi()), text(keys[1])), semi()), text(keys[2]))
}

// squaresExact reports whether the variance family of values of type p
// is computed by shepherd (see varianceParts), and the scale of those
// values: int2 and int4, and numeric(p,s) with p <= 9, whose values
// times 10^s are integers whose squares every engine adds exactly in 64
// bits (SQLite keeps a numeric(p,s) of p <= 15 as a double, which holds
// them exactly).
func squaresExact(p pgType) (scale int, ok bool) {
	switch {
	case p.Name() == "int2" || p.Name() == "int4":
		return 0, true
	case p.Name() == "numeric" && len(p.Mods()) == 2 && p.Mods()[0] <= 9 && p.Mods()[1] >= 0:
		return int(p.Mods()[1]), true
	}
	return 0, false
}

// varianceKeys are count(x), sum(x) and sum(u * u) for the variance
// aggregate agg of x, with its FILTER and window, where u is x as an
// integer of its scale's units, (x * 10^scale)::int8.
func varianceKeys(agg *pg_query.FuncCall, scale int) []*pg_query.Node {
	x := agg.Args[0]
	int8Of := func() *pg_query.Node {
		arg := proto.Clone(x).(*pg_query.Node)
		if scale > 0 {
			arg = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
				arg, pg_query.MakeAConstIntNode(int64(pow10(scale).Int64()), -1), -1)
		}
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      arg,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("int8")}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	square := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")}, int8Of(), int8Of(), -1)
	part := func(name string, arg *pg_query.Node) *pg_query.Node {
		fc := proto.Clone(agg).(*pg_query.FuncCall)
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
		fc.Args = []*pg_query.Node{arg}
		return &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}
	}
	return []*pg_query.Node{part("count", proto.Clone(x).(*pg_query.Node)), part("sum", proto.Clone(x).(*pg_query.Node)), part("sum", square)}
}

// pgVariance writes "count;sum;sum of squares" of integers, as the
// replicas answer a rewritten variance or standard deviation (name), as
// PostgreSQL's numeric_stddev_internal computes it: NULL (null) for no
// values, or one for a sample; 0 when N*sumX2 - sumX^2 is not positive;
// else that over N*(N-1) (a sample) or N*N, divided as numeric division
// does (pgDivide: select_div_scale, rounded), and for a deviation the
// square root of that quotient rounded to the same scale (sqrt_var).
func pgVariance(parts, name string) (text string, null, ok bool) {
	// name is "stddev" or, for values of scale s, "stddev:s": the sum
	// is then in units of 10^-s and the sum of squares of 10^-2s, and
	// so is the numerator PostgreSQL divides (dscale 2s).
	name, scaleText, _ := strings.Cut(name, ":")
	scale := 0
	if scaleText != "" {
		var err error
		if scale, err = strconv.Atoi(scaleText); err != nil || scale < 0 || scale > 1000 {
			return "", false, false
		}
	}
	fields := strings.Split(parts, ";")
	if len(fields) != 3 {
		return "", false, false
	}
	var n, sum, sumSq big.Int
	for i, v := range []*big.Int{&n, &sum, &sumSq} {
		f := fields[i]
		if i == 1 {
			// The sum's text has the values' scale (every engine
			// writes it so); its digits are the units.
			whole, frac, _ := strings.Cut(f, ".")
			if len(frac) != scale {
				return "", false, false
			}
			f = whole + frac
		}
		if _, ok := v.SetString(f, 10); !ok {
			return "", false, false
		}
	}
	sample := name != "stddev_pop" && name != "var_pop"
	if n.Sign() == 0 || sample && n.Cmp(big.NewInt(1)) == 0 {
		return "", true, true
	}
	num := new(big.Int).Mul(&n, &sumSq)
	num.Sub(num, new(big.Int).Mul(&sum, &sum))
	if num.Sign() <= 0 {
		return "0", false, true
	}
	den := new(big.Int).Set(&n)
	if sample {
		den.Sub(den, big.NewInt(1))
	}
	den.Mul(den, &n)
	numText := num.String() // positive
	if r := 2 * scale; r > 0 {
		if len(numText) <= r {
			numText = strings.Repeat("0", r-len(numText)+1) + numText
		}
		numText = numText[:len(numText)-r] + "." + numText[len(numText)-r:]
	}
	q, ok := pgDivide(numText, den.String())
	if !ok || strings.HasPrefix(name, "var") || name == "variance" {
		return q, false, ok
	}
	// sqrt of q (scale r) to r decimals: isqrt(D * 10^(r+2)) is the root
	// with r+1 decimals, truncated; its last digit rounds half up, which
	// is the root rounded (an irrational root has no tie, a rational
	// one is exact).
	_, frac, _ := strings.Cut(q, ".")
	r := len(frac)
	d, _ := new(big.Int).SetString(strings.Replace(q, ".", "", 1), 10)
	root := new(big.Int).Sqrt(d.Mul(d, pow10(r+2)))
	last := new(big.Int)
	root.QuoRem(root, big.NewInt(10), last)
	if last.Int64() >= 5 {
		root.Add(root, big.NewInt(1))
	}
	text = root.String()
	if r > 0 {
		if len(text) <= r {
			text = strings.Repeat("0", r-len(text)+1) + text
		}
		text = text[:len(text)-r] + "." + text[len(text)-r:]
	}
	return text, false, true
}

// pgRound rounds the numeric text v to places decimals as PostgreSQL's
// round(numeric, int) does: half away from zero, with exactly
// max(places, 0) decimals (a negative places rounds to tens, hundreds).
func pgRound(v string, places int) (string, bool) {
	neg := strings.HasPrefix(v, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(v, "-"), ".")
	if whole == "" || strings.Trim(whole+frac, "0123456789") != "" || places > 1000 || places < -1000 {
		return "", false
	}
	u, _ := new(big.Int).SetString(whole+frac, 10)
	// u is v * 10^len(frac); the result is q * 10^-places.
	shift := len(frac) - places
	var q *big.Int
	if shift <= 0 {
		q = u.Mul(u, pow10(-shift))
	} else {
		den := pow10(shift)
		var rem *big.Int
		q, rem = new(big.Int).QuoRem(u, den, new(big.Int))
		if rem.Mul(rem, big.NewInt(2)).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
	}
	if places < 0 {
		q.Mul(q, pow10(-places))
		places = 0
	}
	text := q.String()
	if places > 0 {
		if len(text) <= places {
			text = strings.Repeat("0", places-len(text)+1) + text
		}
		text = text[:len(text)-places] + "." + text[len(text)-places:]
	}
	if neg && q.Sign() != 0 {
		text = "-" + text
	}
	return text, true
}

// ordinalOf returns the position an ORDER BY item names, if it is an
// integer constant.
func ordinalOf(n *pg_query.Node) (int, bool) {
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		return int(c.GetIval().Ival), true
	}
	return 0, false
}

// exactArgument reports whether x, in the FROM scope of sel, is an
// integer or a numeric whose scale every engine writes alike, how many
// digits its values have before the point at most (-1: unknown), and
// after it.
func exactArgument(snap *schema.Snapshot, sel *pg_query.SelectStmt, x *pg_query.Node) (exact bool, whole, scale int) {
	p := typeIn(snap, sel, x)
	switch p.Name() {
	case "int2":
		return true, 5, 0
	case "int4":
		return true, 10, 0
	case "int8":
		return true, 19, 0
	case "numeric":
		s, ok := p.NumericScale()
		if len(p.Mods()) == 2 {
			return ok, int(p.Mods()[0] - p.Mods()[1]), int(s)
		}
		return ok, -1, int(s)
	}
	return false, -1, 0
}

// quotientParts is sum(x)::text || '/' || count(x)::text for avg(x),
// with avg's DISTINCT, FILTER and window.
func quotientParts(avg *pg_query.FuncCall) *pg_query.Node {
	part := func(name string) *pg_query.Node {
		fc := proto.Clone(avg).(*pg_query.FuncCall)
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}},
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	}
	concat := func(l, r *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")}, l, r, -1)
	}
	slash := pg_query.MakeAConstStrNode("/", -1)
	return concat(concat(part("sum"), slash), part("count"))
}

// pgQuotient writes "sum/count", as the replicas answer a rewritten
// avg() (or "x/y" for a division), as PostgreSQL writes avg(): the
// quotient rounded (half away from zero) to the scale select_div_scale
// chooses (pgDivide). ok is false for text of another form.
func pgQuotient(parts string) (string, bool) {
	// "x/y", or "x/y/1" with the zero check of a division (see
	// divisionParts).
	fields := strings.Split(parts, "/")
	if len(fields) < 2 || len(fields) > 3 {
		return "", false
	}
	return pgDivide(fields[0], fields[1])
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
