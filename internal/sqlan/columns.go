package sqlan

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
)

// ColumnGuess is what the statement text alone tells about one result
// column: the name PostgreSQL would give it, and its type when the
// expression fixes one (Type Unknown when only the engine knows, as for
// a plain column reference).
type ColumnGuess struct {
	Name string
	Type answer.Type
	OID  uint32
	// Mod is the type modifier (char(n), numeric(p,s)); 0 when none.
	Mod int32
}

type hintsForm struct {
	once sync.Once
	cols []answer.Column
}

type columnsForm struct {
	once sync.Once
	cols []ColumnGuess // nil when not worked out (SELECT *, set operations)
}

// Columns returns the guesses for the result columns of a SELECT or
// RETURNING list, or nil when the list cannot be known from the text
// (SELECT *, UNION, ...). Engines name and type expressions differently
// (SQLite calls count(*) "count(*)" and gives it no type); these guesses
// make every replica's answer look the way PostgreSQL's would.
func (s *Stmt) Columns() []ColumnGuess {
	if !s.ReturnsRows || s.Kind == Show {
		return nil
	}
	s.columns.once.Do(func() { s.columns.cols = s.guess() })
	return s.columns.cols
}

// DigestHints returns the PostgreSQL types of the result columns, as far
// as the statement and schema tell, for reading every replica's answer
// alike when voting (see answer.DigestWith); nil when unknown.
func (s *Stmt) DigestHints() []answer.Column {
	s.hints.once.Do(func() {
		g := s.Columns()
		if g == nil {
			return
		}
		out := make([]answer.Column, len(g))
		for i, c := range g {
			out[i] = answer.Column{Name: c.Name, Type: c.Type, OID: c.OID, Mod: c.Mod}
		}
		s.hints.cols = out
	})
	return s.hints.cols
}

// guess combines what the text says (names, the types of expressions)
// with what the schema says (the declared types of columns, and of *).
func (s *Stmt) guess() []ColumnGuess {
	text := guessColumns(s.SQL)
	var typed []dialect.Typed
	if s.env != nil && s.tree != nil {
		typed = dialect.OutputTypes(s.tree, s.env.Schema)
	}
	if text == nil {
		if typed == nil {
			return nil
		}
		out := make([]ColumnGuess, len(typed))
		for i, t := range typed {
			if t.Name == "" {
				return nil
			}
			out[i] = guessOf(t)
			out[i].Name = t.Name
		}
		return out
	}
	if len(typed) == len(text) {
		for i, t := range typed {
			if g := guessOf(t); g.Type != answer.Unknown {
				g.Name = text[i].Name
				text[i] = g
			}
		}
	}
	return text
}

// guessOf turns a PostgreSQL type into a column guess, with the type
// modifier PostgreSQL reports (length + 4; (precision << 16 | scale) + 4).
func guessOf(t dialect.Typed) ColumnGuess {
	g, ok := typeByName[t.Type]
	if !ok {
		return ColumnGuess{}
	}
	switch {
	case (t.Type == "bpchar" || t.Type == "varchar") && len(t.Mods) == 1:
		g.Mod = t.Mods[0] + 4
	case t.Type == "numeric" && len(t.Mods) == 2:
		g.Mod = t.Mods[0]<<16 | t.Mods[1] + 4
	}
	return g
}

func guessColumns(sql string) []ColumnGuess {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	n := tree.Stmts[0].Stmt
	var targets []*pg_query.Node
	switch {
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 {
			return nil
		}
		targets = sel.TargetList
	case n.GetInsertStmt() != nil:
		targets = n.GetInsertStmt().ReturningList
	case n.GetUpdateStmt() != nil:
		targets = n.GetUpdateStmt().ReturningList
	case n.GetDeleteStmt() != nil:
		targets = n.GetDeleteStmt().ReturningList
	}
	var out []ColumnGuess
	for _, t := range targets {
		rt := t.GetResTarget()
		if rt == nil || isStar(rt.Val) {
			return nil
		}
		g := guessExpr(rt.Val)
		g.Name = outputName(rt.Val)
		if rt.Name != "" {
			g.Name = rt.Name
		}
		out = append(out, g)
	}
	return out
}

func isStar(n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 {
		return false
	}
	return cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}

// outputName is PostgreSQL's rule for naming an unaliased result column.
func outputName(n *pg_query.Node) string {
	switch {
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval
		}
	case n.GetFuncCall() != nil:
		f := n.GetFuncCall().Funcname
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		if name := outputName(tc.Arg); name != "?column?" {
			return name
		}
		return typeName(tc.TypeName)
	case n.GetCoalesceExpr() != nil:
		return "coalesce"
	case n.GetCaseExpr() != nil:
		return "case"
	case n.GetSubLink() != nil && n.GetSubLink().SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK:
		return "exists"
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_GREATEST {
			return "greatest"
		}
		return "least"
	case n.GetSqlvalueFunction() != nil:
		return sqlValueFunc(n.GetSqlvalueFunction().Op).name
	}
	return "?column?"
}

func typeName(t *pg_query.TypeName) string {
	if t == nil || len(t.Names) == 0 {
		return "?column?"
	}
	if s := t.Names[len(t.Names)-1].GetString_(); s != nil {
		return s.Sval
	}
	return "?column?"
}

var typeByName = map[string]ColumnGuess{
	"int2": {Type: answer.Int, OID: answer.OIDInt2}, "int4": {Type: answer.Int, OID: answer.OIDInt4},
	"int8": {Type: answer.Int, OID: answer.OIDInt8}, "numeric": {Type: answer.Numeric, OID: answer.OIDNumeric},
	"float4": {Type: answer.Float, OID: answer.OIDFloat4}, "float8": {Type: answer.Float, OID: answer.OIDFloat8},
	"bool": {Type: answer.Bool, OID: answer.OIDBool}, "text": {Type: answer.Text, OID: answer.OIDText},
	"varchar": {Type: answer.Text, OID: answer.OIDVarchar}, "bpchar": {Type: answer.Text, OID: answer.OIDBPChar},
	"date": {Type: answer.Date, OID: answer.OIDDate}, "timestamp": {Type: answer.Timestamp, OID: answer.OIDTimestamp},
	"timestamptz": {Type: answer.TimestampTZ, OID: answer.OIDTimestampTZ}, "uuid": {Type: answer.UUID, OID: answer.OIDUUID},
	"bytea": {Type: answer.Bytes, OID: answer.OIDBytea}, "time": {Type: answer.Time, OID: answer.OIDTime},
	"json": {Type: answer.JSON, OID: answer.OIDJSON}, "jsonb": {Type: answer.JSON, OID: answer.OIDJSONB},
	"interval": {Type: answer.Interval, OID: answer.OIDInterval},
}

type sqlValue struct {
	name string
	g    ColumnGuess
}

func sqlValueFunc(op pg_query.SQLValueFunctionOp) sqlValue {
	switch op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return sqlValue{"current_date", typeByName["date"]}
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return sqlValue{"current_timestamp", typeByName["timestamptz"]}
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return sqlValue{"localtimestamp", typeByName["timestamp"]}
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_USER,
		pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return sqlValue{"current_user", typeByName["text"]}
	}
	return sqlValue{"?column?", ColumnGuess{}}
}

// guessExpr works out an expression's type where PostgreSQL's typing
// rules fix it from the text alone.
func guessExpr(n *pg_query.Node) ColumnGuess {
	switch {
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil:
			return typeByName["int4"]
		case c.GetFval() != nil:
			return typeByName["numeric"]
		case c.GetSval() != nil:
			return typeByName["text"]
		case c.GetBoolval() != nil:
			return typeByName["bool"]
		}
	case n.GetTypeCast() != nil:
		name := typeName(n.GetTypeCast().TypeName)
		switch name {
		case "integer", "int":
			name = "int4"
		case "bigint":
			name = "int8"
		case "smallint":
			name = "int2"
		case "decimal":
			name = "numeric"
		case "real":
			name = "float4"
		case "boolean":
			name = "bool"
		}
		return typeByName[name]
	case n.GetFuncCall() != nil:
		return guessFunc(n.GetFuncCall())
	case n.GetAExpr() != nil:
		return guessOperator(n.GetAExpr())
	case n.GetBoolExpr() != nil, n.GetNullTest() != nil, n.GetBooleanTest() != nil:
		return typeByName["bool"]
	case n.GetSubLink() != nil && n.GetSubLink().SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK:
		return typeByName["bool"]
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if g := guessExpr(a); g.Type != answer.Unknown {
				return g
			}
		}
	case n.GetSqlvalueFunction() != nil:
		return sqlValueFunc(n.GetSqlvalueFunction().Op).g
	}
	return ColumnGuess{}
}

func guessFunc(f *pg_query.FuncCall) ColumnGuess {
	name := ""
	if s := f.Funcname[len(f.Funcname)-1].GetString_(); s != nil {
		name = strings.ToLower(s.Sval)
	}
	arg := ColumnGuess{}
	if len(f.Args) > 0 {
		arg = guessExpr(f.Args[0])
	}
	switch name {
	case "count":
		return typeByName["int8"]
	case "sum":
		if arg.Type == answer.Float {
			return typeByName["float8"]
		}
		return typeByName["numeric"]
	case "avg":
		if arg.Type == answer.Float {
			return typeByName["float8"]
		}
		return typeByName["numeric"]
	case "min", "max", "abs":
		return arg
	case "length", "char_length", "octet_length", "strpos", "position":
		return typeByName["int4"]
	case "lower", "upper", "substr", "substring", "trim", "btrim", "ltrim", "rtrim", "concat", "replace", "lpad", "rpad":
		return typeByName["text"]
	case "now", "statement_timestamp", "transaction_timestamp", "clock_timestamp":
		return typeByName["timestamptz"]
	case "random":
		return typeByName["float8"]
	case "round", "trunc":
		if arg.Type == answer.Float && len(f.Args) == 1 {
			return typeByName["float8"]
		}
		return typeByName["numeric"]
	}
	return ColumnGuess{}
}

func guessOperator(e *pg_query.A_Expr) ColumnGuess {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN, pg_query.A_Expr_Kind_AEXPR_DISTINCT,
			pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
			return typeByName["bool"]
		}
		return ColumnGuess{}
	}
	op := ""
	if s := e.Name[len(e.Name)-1].GetString_(); s != nil {
		op = s.Sval
	}
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=", "~~", "!~~":
		return typeByName["bool"]
	case "||":
		return typeByName["text"]
	case "+", "-", "*", "/", "%":
		var l, r ColumnGuess
		if e.Lexpr != nil {
			l = guessExpr(e.Lexpr)
		}
		r = guessExpr(e.Rexpr)
		switch {
		case l.Type == answer.Float || r.Type == answer.Float:
			return typeByName["float8"]
		case l.Type == answer.Numeric || r.Type == answer.Numeric:
			return typeByName["numeric"]
		case (l.Type == answer.Int || e.Lexpr == nil) && r.Type == answer.Int:
			if l.OID == answer.OIDInt8 || r.OID == answer.OIDInt8 {
				return typeByName["int8"]
			}
			return typeByName["int4"]
		}
	}
	return ColumnGuess{}
}

// Shape makes an answer's columns look the way PostgreSQL would show
// them: PostgreSQL's names, and PostgreSQL's type wherever the statement
// and the schema tell it (the primary may be an engine without booleans
// or column types).
func Shape(cols []answer.Column, guesses []ColumnGuess) []answer.Column {
	if len(guesses) != len(cols) {
		return cols
	}
	out := make([]answer.Column, len(cols))
	for i, c := range cols {
		g := guesses[i]
		c.Name = g.Name
		if g.Type != answer.Unknown && (c.Type != g.Type || c.OID != g.OID) {
			c.Type, c.OID, c.Size, c.Mod = g.Type, g.OID, sizeOf(g.OID), -1
		}
		if g.Mod != 0 {
			c.Mod = g.Mod
		}
		out[i] = c
	}
	return out
}

// sizeOf is pg_type.typlen of the OIDs guesses use.
func sizeOf(oid uint32) int16 {
	switch oid {
	case answer.OIDBool:
		return 1
	case answer.OIDInt2:
		return 2
	case answer.OIDInt4, answer.OIDFloat4, answer.OIDDate:
		return 4
	case answer.OIDInt8, answer.OIDFloat8, answer.OIDTimestamp, answer.OIDTimestampTZ, answer.OIDTime:
		return 8
	case answer.OIDUUID:
		return 16
	}
	return -1
}

// ShapeAnswer is Shape for a whole answer: the columns, and the values
// whose text PostgreSQL would write differently for the column's type
// (booleans as t/f, char(n) padded to n, numeric(p,s) with s digits). It
// returns a new answer when something changed; a is not modified.
func ShapeAnswer(a *answer.Answer, guesses []ColumnGuess) *answer.Answer {
	if a.Columns == nil {
		return a
	}
	cols := Shape(a.Columns, guesses)
	out := *a
	out.Columns = cols
	var fix []int
	for i, c := range cols {
		if c.Type == answer.Bool || c.OID == answer.OIDBPChar && c.Mod > 4 || c.Type == answer.Numeric && c.Mod > 4 {
			fix = append(fix, i)
		}
	}
	if len(fix) == 0 {
		return &out
	}
	out.Rows = make([][]answer.Value, len(a.Rows))
	for r, row := range a.Rows {
		nr := append([]answer.Value(nil), row...)
		for _, i := range fix {
			if i >= len(nr) || nr[i].Null {
				continue
			}
			nr[i] = pgValue(cols[i], nr[i])
		}
		out.Rows[r] = nr
	}
	return &out
}

// pgValue writes a value the way PostgreSQL prints it for column c.
func pgValue(c answer.Column, v answer.Value) answer.Value {
	switch {
	case c.Type == answer.Bool:
		switch strings.ToLower(v.Text) {
		case "1", "t", "true":
			return answer.Value{Type: answer.Bool, Text: "t"}
		case "0", "f", "false":
			return answer.Value{Type: answer.Bool, Text: "f"}
		}
	case c.OID == answer.OIDBPChar:
		n := int(c.Mod - 4)
		if k := utf8.RuneCountInString(v.Text); k < n {
			return answer.Value{Type: v.Type, Text: v.Text + strings.Repeat(" ", n-k)}
		}
	case c.Type == answer.Numeric:
		scale := int((c.Mod - 4) & 0xffff)
		return answer.Value{Type: answer.Numeric, Text: withScale(v.Text, scale)}
	}
	return v
}

// withScale writes a decimal number with exactly scale fractional digits
// when that loses nothing (text that is not a plain decimal, or has more
// digits, is left alone).
func withScale(s string, scale int) string {
	if f, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, "eE") {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	for _, ch := range strings.TrimPrefix(intPart, "-") + frac {
		if ch < '0' || ch > '9' {
			return s
		}
	}
	if len(frac) > scale {
		if strings.Trim(frac[scale:], "0") != "" {
			return s
		}
		frac = frac[:scale]
	}
	if scale == 0 {
		return intPart
	}
	return intPart + "." + frac + strings.Repeat("0", scale-len(frac))
}
