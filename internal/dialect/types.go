package dialect

import (
	"errors"
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgfunc"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// typeOf infers the PostgreSQL type of an expression as far as the
// writer needs it: "" when it cannot tell.
func (w *writer) typeOf(n *pg_query.Node) string {
	switch {
	case n == nil:
		return ""
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.Isnull, c.GetSval() != nil:
			return ""
		case c.GetFval() != nil:
			return "numeric"
		case c.GetBoolval() != nil:
			return "bool"
		}
		return "int4"
	case n.GetColumnRef() != nil:
		if c, _ := w.column(refFields(n.GetColumnRef())); c != nil {
			return c.Type
		}
	case n.GetTypeCast() != nil:
		t, _, serial, ok := schema.TypeOf(n.GetTypeCast().TypeName)
		if ok && !serial {
			return t
		}
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
				return w.nullifType(e.Lexpr, e.Rexpr)
			}
			return "bool"
		}
		op := schema.OpName(e.Name)
		if e.Lexpr == nil {
			return w.typeOf(e.Rexpr)
		}
		lt, rt := w.typeOf(e.Lexpr), w.typeOf(e.Rexpr)
		if isJSONOp(op) {
			return jsonOpType(op, lt)
		}
		if t := temporalOpType(op, lt, rt); t != "" {
			return t
		}
		switch op {
		case "=", "<>", "<", ">", "<=", ">=":
			return "bool"
		case "||":
			return "text"
		case "+", "-", "*", "/", "%":
			switch {
			case isInt(lt) && isInt(rt):
				if lt == "int8" || rt == "int8" {
					return "int8"
				}
				return "int4"
			case isNumber(lt) && isNumber(rt):
				if strings.HasPrefix(lt, "float") || strings.HasPrefix(rt, "float") {
					return "float8"
				}
				return "numeric"
			case lt == "date" && isInt(rt), isInt(lt) && rt == "date":
				return "date"
			case lt == "date" && rt == "date":
				return "int4"
			case isTime(lt) && rt == "interval":
				if lt == "date" {
					return "timestamp"
				}
				return lt
			case lt == "interval" && isTime(rt):
				return rt
			}
		}
	case n.GetBoolExpr() != nil, n.GetNullTest() != nil, n.GetBooleanTest() != nil:
		return "bool"
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		if sl.SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK {
			return "bool"
		}
		if sub := sl.Subselect.GetSelectStmt(); sub != nil && sub.Op == pg_query.SetOperation_SETOP_NONE && len(sub.TargetList) == 1 {
			w.pushScope(sub.FromClause)
			defer w.popScope()
			return w.typeOf(sub.TargetList[0].GetResTarget().Val)
		}
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		var results []*pg_query.Node
		if ce.Defresult != nil {
			// PostgreSQL puts the ELSE first (transformCaseExpr).
			results = append(results, ce.Defresult)
		}
		for _, a := range ce.Args {
			results = append(results, a.GetCaseWhen().Result)
		}
		return w.commonType(results)
	case n.GetCoalesceExpr() != nil:
		return w.commonType(n.GetCoalesceExpr().Args)
	case n.GetMinMaxExpr() != nil:
		return w.commonType(n.GetMinMaxExpr().Args)
	case n.GetFuncCall() != nil:
		if t := w.arrayFuncType(schema.FuncName(n.GetFuncCall()), n.GetFuncCall()); t != "" {
			return t
		}
		return w.funcType(n.GetFuncCall())
	case n.GetAArrayExpr() != nil:
		return w.constructorType(n.GetAArrayExpr())
	case n.GetAIndirection() != nil:
		return w.subscriptType(n.GetAIndirection())
	}
	return ""
}

// funcType is the result type of a function call by PostgreSQL's
// catalogue (pgfunc): "" for a function shepherd does not know, or
// where the argument types leave the overload open.
func (w *writer) funcType(fc *pg_query.FuncCall) string {
	return pgfunc.Result(schema.FuncName(fc), w.argTypes(fc.Args))
}

// argTypes types the arguments of a call for pgfunc: an untyped string
// or NULL is pgfunc.Literal, which the overload resolution treats as
// PostgreSQL does.
func (w *writer) argTypes(args []*pg_query.Node) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if c := a.GetAConst(); c != nil && (c.Isnull || c.GetSval() != nil) {
			out[i] = pgfunc.Literal
			continue
		}
		out[i] = w.typeOf(a)
	}
	return out
}

// scaleOf returns the number of decimal places of an exact numeric
// expression when the writer can tell: SQLite keeps numeric values as
// binary floats, so sums and products of money must be rounded back to
// the scale PostgreSQL's exact arithmetic would give.
func (w *writer) scaleOf(n *pg_query.Node) (int, bool) {
	switch {
	case n == nil:
	case n.GetColumnRef() != nil:
		if c, _ := w.column(refFields(n.GetColumnRef())); c != nil {
			if isInt(c.Type) {
				return 0, true
			}
			if c.Type == "numeric" && len(c.Mods) == 2 {
				return int(c.Mods[1]), true
			}
			if s, ok := w.colScales[c]; ok {
				return s, true
			}
		}
	case n.GetAConst() != nil:
		c := n.GetAConst()
		if c.GetIval() != nil {
			return 0, true
		}
		if c.GetFval() != nil {
			f := c.GetFval().Fval
			if i := strings.IndexByte(f, '.'); i >= 0 && !strings.ContainsAny(f, "eE") {
				return len(f) - i - 1, true
			}
		}
	case n.GetTypeCast() != nil:
		t, mods, _, ok := schema.TypeOf(n.GetTypeCast().TypeName)
		if ok && t == "numeric" && len(mods) == 2 {
			return int(mods[1]), true
		}
		if ok && isInt(t) {
			return 0, true
		}
		if arg := n.GetTypeCast().Arg; ok && t == "numeric" && len(mods) == 0 && arg.GetAConst().GetSval() == nil {
			// x::numeric keeps the digits of an exact x.
			if at := w.typeOf(arg); isInt(at) || at == "numeric" {
				return w.scaleOf(arg)
			}
		}
	case n.GetSubLink() != nil && n.GetSubLink().SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK:
		sub := n.GetSubLink().Subselect.GetSelectStmt()
		if sub == nil || sub.Op != pg_query.SetOperation_SETOP_NONE || len(sub.TargetList) != 1 {
			break
		}
		w.pushScope(sub.FromClause)
		defer w.popScope()
		return w.scaleOf(sub.TargetList[0].GetResTarget().Val)
	case n.GetFuncCall() != nil:
		fc := n.GetFuncCall()
		switch schema.FuncName(fc) {
		case "sum", "min", "max", "abs":
			if len(fc.Args) == 1 {
				return w.scaleOf(fc.Args[0])
			}
		}
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF && isNumber(w.typeOf(e.Lexpr)) && !strings.HasPrefix(w.nullifType(e.Lexpr, e.Rexpr), "float") {
			return w.scaleOf(e.Lexpr) // its value is the first argument's
		}
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			break
		}
		if e.Lexpr == nil {
			return w.scaleOf(e.Rexpr)
		}
		ls, lok := w.scaleOf(e.Lexpr)
		rs, rok := w.scaleOf(e.Rexpr)
		if !lok || !rok {
			break
		}
		switch schema.OpName(e.Name) {
		case "+", "-":
			return max(ls, rs), true
		case "*":
			return ls + rs, true
		}
	}
	return 0, false
}

// exact reports whether an expression computes with numeric (not
// integer or float) values, where SQLite's float arithmetic needs
// rounding.
func (w *writer) exact(n *pg_query.Node) bool {
	return w.typeOf(n) == "numeric"
}

// notNull reports whether an expression can never be NULL (as far as
// the writer can tell). targets resolves ORDER BY ordinals.
func (w *writer) notNull(n *pg_query.Node, targets []*pg_query.Node) bool {
	switch {
	case n == nil:
		return false
	case n.GetAConst() != nil:
		if i, ok := ordinal(n); ok && targets != nil {
			if key := w.outputAt(targets, i); key != nil {
				return w.notNull(key, nil)
			}
			return false
		}
		return !n.GetAConst().Isnull
	case n.GetColumnRef() != nil:
		c, nullable := w.column(refFields(n.GetColumnRef()))
		return c != nil && c.NotNull && !nullable
	case n.GetTypeCast() != nil:
		return w.notNull(n.GetTypeCast().Arg, nil)
	case n.GetFuncCall() != nil:
		switch schema.FuncName(n.GetFuncCall()) {
		case "count", "row_number", "rank", "dense_rank":
			return true
		}
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_OP {
			return (e.Lexpr == nil || w.notNull(e.Lexpr, nil)) && w.notNull(e.Rexpr, nil)
		}
	}
	return false
}

// textOfFunction is the SQLite driver's shepherd_text_of
// (sqlite.TextOfFunction).
const textOfFunction = "shepherd_text_of"

// cast writes a type cast.
func (w *writer) cast(tc *pg_query.TypeCast) {
	t, mods, serial, ok := schema.TypeOf(tc.TypeName)
	if !ok || serial {
		w.refuse("casts to %s", schema.TypeText(tc.TypeName))
	}
	if schema.IsArray(t) {
		w.duckUncast(tc)
		w.arrayValue(tc.Arg, t)
		return
	}
	if fc := tc.Arg.GetFuncCall(); fc != nil && t == "text" && w.lite() && fc.Over == nil &&
		schema.FuncName(fc) == "sum" && len(fc.Args) == 1 && w.typeOf(fc.Args[0]) == "int8" {
		// shepherd_sum answers an integer or, beyond the 64-bit range,
		// its digits as text: either is PostgreSQL's text of the sum
		// (avg() is asked as sum(x)::text || '/' || count(x)::text).
		// The numeric-to-text cast would go through a 64-bit integer.
		saved := w.textSum
		w.textSum = fc
		defer func() { w.textSum = saved }()
		w.str("CAST(")
		w.expr(tc.Arg)
		w.str(" AS TEXT)")
		return
	}
	if p := tc.Arg.GetParamRef(); p != nil {
		w.paramType(int(p.Number), t) // $1::date is a date parameter
	}
	if c := tc.Arg.GetAConst(); c != nil && c.GetSval() != nil {
		switch t {
		case "date", "timestamp", "timestamptz", "time":
			v, err := NormalizeTime(c.GetSval().Sval, t)
			if err != nil {
				w.timeInputFailed(err, t, c.GetSval().Sval)
			}
			if w.my() {
				// Keep it typed, not a string, for arithmetic.
				w.str("CAST(")
				w.literal(v)
				w.str(" AS " + myCastType(t, mods) + ")")
				return
			}
			w.literal(v)
			return
		case "bool", "uuid":
			w.typed(tc.Arg, t)
			return
		case "int2", "int4", "int8", "numeric", "float4", "float8":
			// The engines read bad numbers as 0; PostgreSQL fails.
			w.numberConstant(c.GetSval().Sval, t, mods)
			return
		case "interval":
			w.refuse("interval values outside date arithmetic")
		case "bytea":
			w.bytesLiteral(c.GetSval().Sval)
			return
		case "jsonb":
			if !w.pg() {
				w.jsonbConstant(c.GetSval().Sval)
				return
			}
		}
	}
	if t == "float8" && w.doubleConstant(tc.Arg) {
		return
	}
	if w.roundedAverage(tc.Arg, t) {
		return
	}
	if src := w.typeOf(tc.Arg); (t == "int4" || t == "int2") && (src == "int8" || src == "numeric" ||
		strings.HasPrefix(src, "float") || t == "int2" && src == "int4") && w.rangedCast != tc {
		// PostgreSQL fails (22003) on a value out of the target's
		// range; MariaDB's CAST AS SIGNED and SQLite's keep 64 bits
		// (CAST(3000000000::bigint AS integer) was 3000000000).
		saved := w.rangedCast
		w.rangedCast = tc
		w.inRange(t, func() { w.cast(tc) })
		w.rangedCast = saved
		return
	}
	if c := tc.Arg.GetAConst(); t == "float4" && c != nil && (c.GetFval() != nil || c.GetIval() != nil) {
		// 0.1::real: the single-precision value, as '0.1'::real.
		if c.GetFval() != nil {
			w.numberConstant(c.GetFval().Fval, t, nil)
		} else {
			w.numberConstant(strconv.FormatInt(int64(c.GetIval().Ival), 10), t, nil)
		}
		return
	}
	src := w.typeOf(tc.Arg)
	if t == "numeric" && len(mods) == 2 || isInt(t) {
		w.rounding++
		defer func() { w.rounding-- }()
	}
	switch t {
	case "float8":
		if src == "float4" {
			if w.widenedReal(tc.Arg) {
				return
			}
			w.refuse("casts from real to double precision (the replicas keep reals as doubles)")
		}
	case "interval":
		w.refuse("interval values outside date arithmetic")
	case "uuid":
		// The replicas keep a uuid as its canonical text (see ddlType),
		// which only shepherd writes: computed text would go in as it
		// is, where PostgreSQL checks it and writes it in lower case.
		if src != "uuid" && tc.Arg.GetParamRef() == nil {
			w.refuse("casts to uuid of computed values")
		}
		w.expr(tc.Arg)
		return
	case "json", "jsonb":
		w.expr(tc.Arg)
		return
	case "bool":
		if c := tc.Arg.GetAConst(); c != nil && c.Isnull {
			// NULL::boolean is NULL on every engine; the result
			// column's type comes from PostgreSQL's rules (sqlan).
			w.str("NULL")
			return
		}
		if isInt(src) {
			w.str("(")
			w.expr(tc.Arg)
			w.str(" <> 0)")
			return
		}
		if src == "bool" {
			w.expr(tc.Arg)
			return
		}
		w.refuse("casts to boolean from %s", orUnknown(src))
	case "bytea":
		w.refuse("casts to bytea other than of a constant")
	}
	if src == "bool" && isTextual(t) && !w.pg() {
		// MariaDB and SQLite keep booleans as 1 and 0, whose text is
		// "1": PostgreSQL's is "true" (a write storing it would leave
		// the PostgreSQL replica alone with other text).
		if len(mods) == 1 && t != "text" && mods[0] < 5 {
			w.refuse("casts of booleans to text shorter than 5 characters")
		}
		w.str("(CASE WHEN ")
		w.expr(tc.Arg)
		w.str(" THEN 'true' WHEN NOT ")
		w.expr(tc.Arg)
		w.str(" THEN 'false' END)")
		return
	}
	if w.my() {
		w.str("CAST(")
		w.expr(tc.Arg)
		w.str(" AS " + myCastType(t, mods) + ")")
		return
	}
	// SQLite.
	switch {
	case isInt(t):
		if isInt(src) {
			w.expr(tc.Arg)
			return
		}
		// PostgreSQL rounds to the nearest integer; SQLite's CAST
		// truncates, and its ROUND adds 0.5 in double arithmetic
		// (0.49999999999999999 is 0.5 there). A numeric constant is
		// rounded here, exactly, half away from zero; a numeric value
		// by shepherd_numeric (see stored); a float half to even.
		switch k := tc.Arg.GetAConst(); {
		case k != nil && k.GetFval() != nil:
			w.str(w.roundedConstant(k.GetFval().Fval, t))
		case src == "numeric":
			w.str(numericFunction + "(")
			w.expr(tc.Arg)
			w.str(", 18, 0)")
		case strings.HasPrefix(src, "float"):
			w.str("CAST(" + roundEvenFunction + "(")
			w.expr(tc.Arg)
			w.str(") AS INTEGER)")
		default:
			w.str("CAST(ROUND(")
			w.expr(tc.Arg)
			w.str(") AS INTEGER)")
		}
	case t == "numeric":
		if len(mods) > 0 {
			// Rounded exactly, half away from zero, and 22003 when too
			// large, as PostgreSQL casts.
			w.str(numericFunction + "(")
			if !w.longConstant(tc.Arg) {
				w.expr(tc.Arg)
			}
			w.str(", " + numericMods(mods) + ")")
			return
		}
		if isNumber(src) {
			w.expr(tc.Arg)
			return
		}
		w.str("CAST(")
		w.expr(tc.Arg)
		w.str(" AS NUMERIC)")
	case t == "float4" || t == "float8":
		w.str("CAST(")
		w.expr(tc.Arg)
		w.str(" AS REAL)")
	case isTextual(t) && src == "numeric":
		// SQLite prints 12.50 as 12.5: PostgreSQL's text keeps the scale.
		scale, ok := w.scaleOf(tc.Arg)
		if !ok || len(mods) == 1 && t != "text" {
			w.refuse("casts of numeric values of unknown scale to text")
		}
		if scale == 0 {
			// An integral value, exact as an integer (printf would go
			// through a double; a bigint sum has 19 digits).
			w.str("CAST(CAST(")
			w.expr(tc.Arg)
			w.str(" AS INTEGER) AS TEXT)")
			return
		}
		// printf writes NULL as 0.00: keep NULL.
		w.repeated(tc.Arg, 2, func() {
			w.str("(CASE WHEN ")
			w.expr(tc.Arg)
			w.str(" IS NULL THEN NULL ELSE printf('%." + strconv.Itoa(scale) + "f', ")
			w.expr(tc.Arg)
			w.str(") END)")
		})
	case isTextual(t) && (src == "float8" || src == "float4" || src == "timestamptz"):
		// SQLite prints a float8 2 as 2.0 and keeps a timestamptz's
		// text without its offset: PostgreSQL's text is the driver's
		// (sqlite.TextOfFunction).
		if len(mods) == 1 && t != "text" {
			w.str("substr(")
		}
		w.str(textOfFunction + "(")
		w.expr(tc.Arg)
		w.str(", '" + src + "')")
		if len(mods) == 1 && t != "text" {
			w.str(", 1, " + strconv.Itoa(int(mods[0])) + ")")
		}
	case isTextual(t):
		if len(mods) == 1 && t != "text" {
			w.str("substr(CAST(")
			w.expr(tc.Arg)
			w.str(" AS TEXT), 1, " + strconv.Itoa(int(mods[0])) + ")")
			return
		}
		w.str("CAST(")
		w.expr(tc.Arg)
		w.str(" AS TEXT)")
	case t == "date":
		if isTime(src) || src == "" {
			w.str("date(")
			w.expr(tc.Arg)
			w.str(")")
			return
		}
		w.refuse("casts to date from %s", src)
	case t == "timestamp" || t == "timestamptz":
		if src == "date" {
			w.str("(")
			w.expr(tc.Arg)
			w.str(" || ' 00:00:00')")
			return
		}
		if isTime(src) || src == "" {
			w.expr(tc.Arg)
			return
		}
		w.refuse("casts to %s from %s", t, src)
	default:
		w.refuse("casts to %s", t)
	}
}

// numericRange stops writing a numeric constant (its text v, which reads
// as a number) that PostgreSQL takes but the other engines cannot hold:
// beyond a double's range (SQLite stores a double; 1e400 would be
// infinity there, and 1e-400 zero). PostgreSQL takes exponents up to
// about ±2^30 (its "value overflows numeric format", 22003, beyond); its
// own limit on digits before and after the point is far wider than what
// any engine here keeps.
func (w *writer) numericRange(v string) {
	f, err := strconv.ParseFloat(v, 64)
	tiny := err == nil && f == 0 && strings.Trim(strings.SplitN(strings.ToLower(v), "e", 2)[0], "+-0.") != ""
	if err == nil && !tiny {
		return
	}
	if !errors.Is(err, strconv.ErrRange) && !tiny {
		return
	}
	if _, exp, ok := strings.Cut(strings.ToLower(v), "e"); ok {
		if n, err := strconv.ParseInt(exp, 10, 64); err != nil || n >= math.MaxInt32/2 || n <= -(math.MaxInt32/2) {
			w.fail(pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
	}
	w.refuse("numeric constant %s beyond the range of a double precision value, as which SQLite and MariaDB read it", v)
}

// numberConstant writes a string constant cast to a number type as the
// number, after checking it reads as PostgreSQL reads it.
func (w *writer) numberConstant(s, t string, mods []int32) {
	v := strings.TrimSpace(s)
	switch {
	case isInt(t):
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[t]
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				w.fail(pgerr.NumericValueOutOfRange, "value %q is out of range for type %s", s, pgTypeWord(t))
			}
			w.fail(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", pgTypeWord(t), s)
		}
		w.str(strconv.FormatInt(n, 10))
	case t == "numeric":
		if _, err := strconv.ParseFloat(v, 64); err != nil && !errors.Is(err, strconv.ErrRange) || strings.ContainsAny(v, "xXpP_") || strings.EqualFold(v, "infinity") || strings.EqualFold(v, "nan") {
			w.fail(pgerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", s)
		}
		w.numericRange(v)
		if w.my() {
			w.str("CAST(" + v + " AS " + myCastType(t, mods) + ")")
			return
		}
		if len(mods) == 2 {
			r, ok := roundDecimal(v, int(mods[1]))
			if !ok {
				w.refuse("numeric constant %q", s)
			}
			v = r
		}
		w.str(v)
	default:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || strings.ContainsAny(v, "xXpP_") {
			w.fail(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", pgTypeWord(t), s)
		}
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0) && w.my():
			// MariaDB's DOUBLE has neither; SQLite makes NaN NULL.
			w.refuse("float constant %q", s)
		case math.IsInf(f, 1):
			w.str("9e999") // SQLite reads it as infinity
			return
		case math.IsInf(f, -1):
			w.str("-9e999")
			return
		}
		if t == "float4" {
			// PostgreSQL keeps the single-precision value: 0.1::real is
			// 0.100000001490116..., in arithmetic with doubles too.
			f = float64(float32(f))
		}
		text := strconv.FormatFloat(f, 'g', -1, 64)
		w.str(text)
		if !strings.ContainsAny(text, ".eE") {
			w.str(".0")
		}
		if w.my() && !strings.ContainsAny(text, "eE") {
			// An exponent makes the literal a DOUBLE (not a DECIMAL);
			// one already there does.
			w.str("E0")
		}
	}
}

// NormalizeUUID writes a UUID in any form PostgreSQL reads (upper case,
// braces, a hyphen after any group of four digits or none) in its
// canonical form, the one text every replica stores for it (see
// answer.PGText); ok is false for text PostgreSQL refuses.
func NormalizeUUID(s string) (string, bool) {
	return answer.PGText(answer.UUID, s)
}

// roundDecimal rounds a plain decimal number written in text to scale
// places, half away from zero, as PostgreSQL rounds numeric.
func roundDecimal(v string, scale int) (string, bool) {
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimLeft(v, "+-")
	ip, fp, _ := strings.Cut(v, ".")
	if ip == "" {
		ip = "0"
	}
	for _, c := range ip + fp {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	if len(fp) <= scale {
		fp += strings.Repeat("0", scale-len(fp))
	} else {
		up := fp[scale] >= '5'
		fp = fp[:scale]
		if up {
			digits := []byte(ip + fp)
			i := len(digits) - 1
			for ; i >= 0 && digits[i] == '9'; i-- {
				digits[i] = '0'
			}
			if i < 0 {
				digits = append([]byte{'1'}, digits...)
			} else {
				digits[i]++
			}
			ip, fp = string(digits[:len(digits)-scale]), string(digits[len(digits)-scale:])
		}
	}
	out := ip
	if scale > 0 {
		out += "." + fp
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out, true
}

func pgTypeWord(t string) string {
	switch t {
	case "int2":
		return "smallint"
	case "int4":
		return "integer"
	case "int8":
		return "bigint"
	case "float4":
		return "real"
	case "float8":
		return "double precision"
	}
	return t
}

func orUnknown(t string) string {
	if t == "" {
		return "a value of unknown type"
	}
	return t
}

// myCastType is MariaDB's CAST target for a PostgreSQL type.
func myCastType(t string, mods []int32) string {
	switch {
	case isInt(t):
		return "SIGNED"
	case t == "numeric":
		if len(mods) == 2 {
			return "DECIMAL(" + strconv.Itoa(int(mods[0])) + "," + strconv.Itoa(int(mods[1])) + ")"
		}
		if len(mods) == 1 {
			return "DECIMAL(" + strconv.Itoa(int(mods[0])) + ",0)"
		}
		return "DECIMAL(65,30)"
	case t == "float4" || t == "float8":
		return "DOUBLE"
	case t == "text" || t == "varchar":
		if len(mods) == 1 {
			return "CHAR(" + strconv.Itoa(int(mods[0])) + ")"
		}
		return "CHAR"
	case t == "bpchar":
		n := 1
		if len(mods) == 1 {
			n = int(mods[0])
		}
		return "CHAR(" + strconv.Itoa(n) + ")"
	case t == "date":
		return "DATE"
	case t == "timestamp" || t == "timestamptz":
		return "DATETIME(6)"
	case t == "time":
		return "TIME(6)"
	}
	return "CHAR"
}

// timeLiteral writes a date or time constant in the one form every
// replica stores and compares alike: ISO, UTC for timestamptz, fractional
// seconds without trailing zeros.
func (w *writer) timeLiteral(s, t string) {
	v, err := NormalizeTime(s, t)
	if err != nil {
		w.timeInputFailed(err, t, s)
	}
	w.literal(v)
}

// timeInputFailed stops writing with NormalizeTime's error: PostgreSQL's
// for text it refuses, a refusal (0A000) for what shepherd does not take.
func (w *writer) timeInputFailed(err error, t, s string) {
	pe := pgerr.From(err)
	if pe.Code == pgerr.FeatureNotSupported {
		w.refuse("%s constant %q (%s)", t, s, pe.Message)
	}
	panic(failure{pe})
}

// timeType names the PostgreSQL type of a time family, "" for others.
func timeType(f answer.Type) string {
	switch f {
	case answer.Date:
		return "date"
	case answer.Time:
		return "time"
	case answer.Timestamp:
		return "timestamp"
	case answer.TimestampTZ:
		return "timestamptz"
	}
	return ""
}

// typedArg prepares a parameter the client sent with a type of its own:
// times are written in the form the replicas store (timestamptz in UTC,
// which MariaDB cannot read an offset for), and one the statement wants
// as a date loses its time of day as PostgreSQL's cast does.
func typedArg(a driver.Arg, hint answer.Type, d driver.Dialect) driver.Arg {
	if d == driver.Postgres {
		return a
	}
	if a.Type == answer.UUID {
		if u, ok := NormalizeUUID(a.Text); ok {
			a.Text = u
		}
		return a
	}
	t := timeType(a.Type)
	if t == "" {
		return a
	}
	v, err := NormalizeTime(a.Text, t)
	if err != nil {
		return a
	}
	a.Text = v
	if hint == answer.Date && (a.Type == answer.Timestamp || a.Type == answer.TimestampTZ) && len(v) >= 10 {
		a.Type, a.Text = answer.Date, v[:10]
	}
	return a
}

// NormalizeTime rewrites a date, time, timestamp or timestamptz written
// as PostgreSQL reads it (answer.ParseTimeInput) into the canonical form
// replicas store: dates as YYYY-MM-DD, timestamps as YYYY-MM-DD
// HH:MM:SS[.ffffff] (timestamptz converted to UTC, as the replicas'
// sessions run in UTC), times as HH:MM:SS[.ffffff]. Text PostgreSQL
// refuses gets its error (22007, 22008, 22009). Words whose value depends
// on the clock ('now', 'today') are refused with 0A000: shepherd pins
// time itself; so are infinity and years before 1, which not every
// engine can store.
func NormalizeTime(s, t string) (string, error) {
	fam := Family(t)
	v, fault := answer.ParseTimeInput(fam, s)
	name := map[string]string{
		"date": "date", "time": "time",
		"timestamp": "timestamp", "timestamptz": "timestamp with time zone",
	}[t]
	quoted := `"` + s + `"`
	switch fault {
	case answer.TimeInputOK:
	case answer.TimeInputRange:
		return "", pgerr.New(pgerr.DatetimeFieldOverflow, "date/time field value out of range: %s", quoted)
	case answer.TimeInputZone:
		return "", pgerr.New(pgerr.InvalidTimeZoneDisplacement, "time zone displacement out of range: %s", quoted)
	case answer.TimeInputClock:
		return "", pgerr.New(pgerr.FeatureNotSupported, "depends on the clock; use now() or current_date")
	default:
		return "", pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %s", name, quoted)
	}
	if strings.HasSuffix(v, "infinity") || strings.HasSuffix(v, " BC") {
		return "", pgerr.New(pgerr.FeatureNotSupported, "infinity and years before 1 are not supported")
	}
	return strings.TrimSuffix(v, "+00"), nil
}

// bytesLiteral writes a bytea constant ('\x0102' or plain text).
func (w *writer) bytesLiteral(s string) {
	var raw string
	if h, ok := strings.CutPrefix(s, `\x`); ok {
		b := make([]byte, 0, len(h)/2)
		for i := 0; i+1 < len(h); i += 2 {
			v, err := strconv.ParseUint(h[i:i+2], 16, 8)
			if err != nil {
				w.refuse("bytea constant %q", s)
			}
			b = append(b, byte(v))
		}
		if len(h)%2 != 0 {
			w.refuse("bytea constant %q", s)
		}
		raw = string(b)
	} else {
		if strings.IndexByte(s, '\\') >= 0 {
			w.refuse("bytea escape format; use '\\x...'")
		}
		raw = s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("X'")
	for i := 0; i < len(raw); i++ {
		b.WriteByte(hex[raw[i]>>4])
		b.WriteByte(hex[raw[i]&15])
	}
	b.WriteString("'")
	w.str(b.String())
}

// Family returns the answer family of a PostgreSQL type name.
func Family(t string) answer.Type {
	switch {
	case isInt(t):
		return answer.Int
	case t == "numeric":
		return answer.Numeric
	case t == "float4" || t == "float8":
		return answer.Float
	case t == "bool":
		return answer.Bool
	case isTextual(t):
		return answer.Text
	case t == "bytea":
		return answer.Bytes
	case t == "date":
		return answer.Date
	case t == "time":
		return answer.Time
	case t == "timestamp":
		return answer.Timestamp
	case t == "timestamptz":
		return answer.TimestampTZ
	case t == "uuid":
		return answer.UUID
	case isJSON(t):
		return answer.JSON
	}
	return answer.Unknown
}

// Arg prepares a parameter the client sent untyped for a placeholder
// where dialect d needs a value of family hint: a LIMIT count as an
// integer, a timestamp in the UTC form replicas store.
func Arg(a driver.Arg, hint answer.Type, d driver.Dialect) driver.Arg {
	if a.Null {
		return a
	}
	if a.Type != answer.Unknown && a.Type != answer.Text {
		return typedArg(a, hint, d)
	}
	if hint == answer.Unknown {
		return a
	}
	if d == driver.Postgres && hint == answer.Bytes {
		return a // PostgreSQL reads bytea's text input itself
	}
	a.Type = hint
	if d == driver.Postgres {
		return a
	}
	t := timeType(hint)
	switch hint {
	case answer.Date, answer.Time, answer.Timestamp, answer.TimestampTZ:
	case answer.UUID:
		if u, ok := NormalizeUUID(a.Text); ok {
			a.Text = u
		}
		return a
	case answer.Bytes:
		// Untyped text for a bytea is bytea's input form ("\x0a0b"),
		// which PostgreSQL decodes and the other engines would store as
		// it is: they get the bytes. (Text that is no bytea input is left
		// for the engines to refuse or store; PostgreSQL fails it.)
		if raw, ok := answer.ParseBytea(a.Text); ok {
			a.Text = raw
		}
		return a
	default:
		return a
	}
	if v, err := NormalizeTime(a.Text, t); err == nil {
		a.Text = v
	}
	return a
}
