package sqlan

import (
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
)

// ColumnGuess is what the statement text alone tells about one result
// column: the name PostgreSQL would give it, and its type when the
// expression fixes one (Type Unknown when only the engine knows, as for
// a plain column reference).
type ColumnGuess struct {
	Name string
	Type answer.Type
	OID  uint32
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
	s.columns.once.Do(func() { s.columns.cols = guessColumns(s.SQL) })
	return s.columns.cols
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
// them: PostgreSQL's names, and the guessed type for columns the engine
// could not type. Values keep their own types.
func Shape(cols []answer.Column, guesses []ColumnGuess) []answer.Column {
	if len(guesses) != len(cols) {
		return cols
	}
	out := make([]answer.Column, len(cols))
	for i, c := range cols {
		g := guesses[i]
		c.Name = g.Name
		if c.Type == answer.Unknown && g.Type != answer.Unknown {
			c.Type, c.OID, c.Size, c.Mod = g.Type, g.OID, 0, -1
		}
		out[i] = c
	}
	return out
}
