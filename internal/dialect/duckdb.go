package dialect

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// DuckDB rewrites a statement, parsed from PostgreSQL's text, into a tree
// whose deparsed text DuckDB reads with PostgreSQL's meaning. DuckDB's
// parser is PostgreSQL's own (libpg_query), so most of the text is read
// as written; its meaning differs here and there, and those places are
// rewritten or refused:
//
//   - an integer / or % by zero gives NULL in DuckDB and fails with
//     22012 in PostgreSQL: every / and % is guarded by a CASE that
//     raises "division by zero" (the driver maps it to 22012);
//   - LIKE has no escape character in DuckDB and a backslash in
//     PostgreSQL: it is written as like_escape(s, pattern, '\');
//   - lower() and upper() change only ASCII letters in PostgreSQL's C
//     locale and every letter in DuckDB: they are written as
//     translate() of the 26 ASCII letters;
//   - btrim() is DuckDB's trim(); serial types are the integers they
//     stand for (shepherd pins the keys); a row lock (FOR UPDATE) is
//     left out, since a DuckDB replica runs one transaction at a time.
//
// What remains is checked against an allow-list of node kinds,
// functions and types whose meaning is the same on both engines;
// anything else is refused with 0A000 naming it. The session settings
// the text relies on (integer division, PostgreSQL's NULL order, UTC)
// are the driver's (package driver/duckdb). Type-dependent meaning
// (numeric division, the scale of an average) is left to the SQL writer
// of SQLite, which every statement for a DuckDB replica also passes
// (see package sqlan).
//
// varchar(n) is plain varchar on DuckDB, which neither fails a longer
// value nor cuts trailing spaces to n: every value an INSERT or UPDATE
// stores into a varchar(n) column of s is wrapped in shepherd_varchar
// (the driver's macro, PostgreSQL's assignment rule: 22001 when what is
// beyond n is not only spaces), and a cast to varchar(n) is left() of
// the text, as PostgreSQL's explicit cast cuts it.
//
// n is not modified; the result is a copy.
func DuckDB(n *pg_query.Node, s *schema.Snapshot) (out *pg_query.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			ref, ok := r.(refusal)
			if !ok {
				panic(r)
			}
			out, err = nil, pgerr.New(pgerr.FeatureNotSupported,
				"shepherd cannot write %s for DuckDB replicas", ref.what)
		}
	}()
	out = proto.Clone(n).(*pg_query.Node)
	d := &duck{schema: s, orig: n}
	d.arrays(n, out)
	d.stmt(out)
	d.storedConstants(out)
	d.varchars(out)
	d.updatedKeys(out)
	d.walk(out.ProtoReflect())
	d.noRows(out.ProtoReflect())
	return out, nil
}

type duck struct {
	schema *schema.Snapshot
	// orig is the statement as given, and types the types of its
	// operands (see operandTypes).
	orig  *pg_query.Node
	types map[int32][]string
}

func (d *duck) refuse(format string, args ...any) {
	panic(refusal{what: fmt.Sprintf(format, args...)})
}

// patternOpclass are PostgreSQL's operator classes for LIKE on text
// types, which a DuckDB index is written without.
var patternOpclass = map[string]bool{"text_pattern_ops": true, "varchar_pattern_ops": true, "bpchar_pattern_ops": true}

// stmt checks the statement kind and its statement-level options.
func (d *duck) stmt(n *pg_query.Node) {
	switch {
	case n.GetSelectStmt() != nil, n.GetInsertStmt() != nil, n.GetUpdateStmt() != nil,
		n.GetDeleteStmt() != nil, n.GetViewStmt() != nil, n.GetRenameStmt() != nil:
	case n.GetCreateStmt() != nil:
		cs := n.GetCreateStmt()
		for _, e := range cs.TableElts {
			if cd := e.GetColumnDef(); cd != nil {
				cd.Constraints = slices.DeleteFunc(cd.Constraints, filledDefault)
			}
		}
		if cs.Relation.GetRelpersistence() == "t" {
			d.refuse("temporary tables")
		}
		if len(cs.InhRelations) > 0 || cs.Partspec != nil || cs.Tablespacename != "" {
			d.refuse("CREATE TABLE options")
		}
		for _, o := range cs.Options {
			if o.GetDefElem().GetDefname() != "fillfactor" {
				d.refuse("CREATE TABLE options")
			}
		}
		// fillfactor is about PostgreSQL's pages (the SQL writer checks
		// its value as PostgreSQL does).
		cs.Options = nil
	case n.GetIndexStmt() != nil:
		ix := n.GetIndexStmt()
		if ix.WhereClause != nil {
			d.refuse("partial indexes")
		}
		if ix.AccessMethod != "" && ix.AccessMethod != "btree" {
			d.refuse("index method %s", ix.AccessMethod)
		}
		// DuckDB has one kind of index (ART) and knows no btree.
		ix.AccessMethod = ""
		if len(ix.IndexIncludingParams) > 0 || len(ix.Options) > 0 || ix.Concurrent {
			d.refuse("CREATE INDEX options")
		}
		for _, p := range ix.IndexParams {
			// The pattern operator classes (Django indexes every
			// text field so, for LIKE) only say which operators may
			// use the index: what it holds and how it compares are
			// the type's, so DuckDB's index stands for it.
			if e := p.GetIndexElem(); e != nil && len(e.Opclass) == 1 && len(e.Opclassopts) == 0 && patternOpclass[e.Opclass[0].GetString_().GetSval()] {
				e.Opclass = nil
			}
			if e := p.GetIndexElem(); e != nil && (len(e.Opclass) > 0 || len(e.Collation) > 0 ||
				e.Ordering != pg_query.SortByDir_SORTBY_DEFAULT || e.NullsOrdering != pg_query.SortByNulls_SORTBY_NULLS_DEFAULT) {
				d.refuse("index column options")
			}
		}
	case n.GetDropStmt() != nil:
		ds := n.GetDropStmt()
		if ds.Behavior == pg_query.DropBehavior_DROP_CASCADE {
			d.refuse("DROP ... CASCADE")
		}
		switch ds.RemoveType {
		case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_INDEX:
		default:
			d.refuse("DROP %s", strings.TrimPrefix(ds.RemoveType.String(), "OBJECT_"))
		}
		// Several objects: one DROP each (see sqlan).
	case n.GetAlterTableStmt() != nil:
		for _, c := range n.GetAlterTableStmt().Cmds {
			cmd := c.GetAlterTableCmd()
			switch cmd.GetSubtype() {
			case pg_query.AlterTableType_AT_AddColumn, pg_query.AlterTableType_AT_DropColumn,
				pg_query.AlterTableType_AT_ColumnDefault, pg_query.AlterTableType_AT_SetNotNull,
				pg_query.AlterTableType_AT_DropNotNull:
			case pg_query.AlterTableType_AT_AddConstraint:
				// ADD PRIMARY KEY; the others PrepareDuckDB
				// writes otherwise (addConstraint).
				if cmd.GetDef().GetConstraint().GetContype() != pg_query.ConstrType_CONSTR_PRIMARY {
					d.refuse("ALTER TABLE %s", strings.TrimPrefix(cmd.GetSubtype().String(), "AT_"))
				}
			default:
				d.refuse("ALTER TABLE %s", strings.TrimPrefix(cmd.GetSubtype().String(), "AT_"))
			}
			if cmd.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				if cmd.Subtype != pg_query.AlterTableType_AT_DropColumn {
					d.refuse("ALTER TABLE ... CASCADE")
				}
				// DROP COLUMN ... CASCADE with nothing depending on
				// the column is a plain DROP COLUMN (Django removes
				// fields so); the SQL writer, which has checked the
				// statement before (PrepareDuckDB), refuses it
				// otherwise, and package sqlan when a view may read it.
				cmd.Behavior = pg_query.DropBehavior_DROP_RESTRICT
			}
		}
		at := n.GetAlterTableStmt()
		if len(at.Cmds) > 1 {
			d.refuse("ALTER TABLE with several actions")
		}
		// ADD COLUMN ... NOT NULL: DuckDB adds a column with no
		// constraint, so the column is added, filled with its
		// default, and then set NOT NULL (PostgreSQL's outcome,
		// 23502 included); sqlan runs the actions one statement
		// each.
		if cmd := at.Cmds[0].GetAlterTableCmd(); cmd.Subtype == pg_query.AlterTableType_AT_AddColumn {
			if cd := cmd.Def.GetColumnDef(); cd != nil && slices.ContainsFunc(cd.Constraints, isNotNull) {
				if cmd.MissingOk {
					// The second action would change a column
					// that was there already.
					d.refuse("ADD COLUMN IF NOT EXISTS ... NOT NULL")
				}
				cd.Constraints = slices.DeleteFunc(cd.Constraints, isNotNull)
				at.Cmds = append(at.Cmds, &pg_query.Node{Node: &pg_query.Node_AlterTableCmd{AlterTableCmd: &pg_query.AlterTableCmd{
					Subtype: pg_query.AlterTableType_AT_SetNotNull, Name: cd.Colname, Behavior: cmd.Behavior}}})
			}
		}
	case n.GetTruncateStmt() != nil:
		ts := n.GetTruncateStmt()
		if ts.Behavior == pg_query.DropBehavior_DROP_CASCADE {
			d.refuse("TRUNCATE ... CASCADE")
		}
		// DuckDB replicas have no sequences (shepherd keeps them), and
		// several tables are one TRUNCATE each (see sqlan).
		ts.RestartSeqs = false
	default:
		d.refuse("%s statements", nodeName(n))
	}
}

func isNotNull(c *pg_query.Node) bool {
	return c.GetConstraint().GetContype() == pg_query.ConstrType_CONSTR_NOTNULL
}

// filledDefault reports whether c is a DEFAULT that is no constant:
// shepherd fills such a column itself (now(), gen_random_uuid(), ...:
// schema.Fill), and the replicas only store the value.
func filledDefault(c *pg_query.Node) bool {
	con := c.GetConstraint()
	if con.GetContype() != pg_query.ConstrType_CONSTR_DEFAULT {
		return false
	}
	e := con.RawExpr
	for e.GetTypeCast() != nil {
		e = e.GetTypeCast().Arg
	}
	return !schema.IsConstant(e)
}

// duckFuncs are the functions whose meaning is PostgreSQL's on DuckDB
// (for the arguments the SQLite writer lets through), by name.
var duckFuncs = map[string]bool{
	"count": true, "sum": true, "min": true, "max": true,
	"abs": true, "length": true, "char_length": true, "character_length": true,
	"replace": true, "concat": true, "strpos": true,
	"trim": true, "ltrim": true, "rtrim": true,
	"row_number": true, "rank": true, "dense_rank": true, "ntile": true,
	"percent_rank": true, "cume_dist": true, "lag": true, "lead": true,
	"first_value": true, "last_value": true,
	"md5": true, "ascii": true, "string_agg": true, "mod": true,
	"round": true, "ceil": true, "ceiling": true, "floor": true, "chr": true, "pi": true,
	"concat_ws": true, "starts_with": true, "bool_and": true, "bool_or": true,
	"extract": true, "position": true, "trunc": true,
	"lpad": true, "rpad": true, "left": true, "right": true, "split_part": true, "reverse": true,
	"repeat": true, "every": true,
	// Rewritten (see DuckDB).
	"lower": true, "upper": true, "btrim": true,
	// Written by the rewrites themselves.
	"like_escape": true, "translate": true, "error": true, VarcharMacro: true, AvgCountMacro: true,
}

// duckTypes are the PostgreSQL types DuckDB stores and compares alike.
var duckTypes = map[string]bool{
	"int2": true, "int4": true, "int8": true, "float4": true, "float8": true, "uuid": true, "interval": true,
	"bool": true, "text": true, "varchar": true, "bpchar": true, "date": true, "timestamp": true, "timestamptz": true,
	"bytea": true, "numeric": true, "json": true, "jsonb": true,
	"serial": true, "bigserial": true, "smallserial": true, "serial4": true, "serial8": true, "serial2": true,
}

// walk checks and rewrites every node under m, children first.
func (d *duck) walk(m protoreflect.Message) {
	if n, ok := m.Interface().(*pg_query.Node); ok && n.GetTypeCast() != nil && !d.valueCast(n, n.GetTypeCast()) {
		d.varcharCast(n, n.GetTypeCast())
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				d.walk(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			d.walk(v.Message())
		}
		return true
	})
	switch x := m.Interface().(type) {
	case *pg_query.Node:
		d.node(x)
	case *pg_query.TypeName:
		d.typeName(x)
	case *pg_query.SelectStmt:
		// One transaction at a time: a row lock has nothing to wait for.
		x.LockingClause = nil
		if x.IntoClause != nil {
			d.refuse("SELECT INTO")
		}
	case *pg_query.Constraint:
		d.constraint(x)
	case *pg_query.WindowDef:
		// ROWS and RANGE frames mean the same on both; GROUPS (0x8)
		// and EXCLUDE (0x8000 and up) are left out.
		if x.FrameOptions&(0x8|0x8000|0x10000|0x20000) != 0 {
			d.refuse("window frames in GROUPS or with EXCLUDE")
		}
	case *pg_query.CreateStmt:
		// See duckForeignKeys.
		x.TableElts = slices.DeleteFunc(x.TableElts, func(e *pg_query.Node) bool {
			return e.GetConstraint().GetContype() == pg_query.ConstrType_CONSTR_FOREIGN
		})
	case *pg_query.AlterTableCmd:
		if cd := x.Def.GetColumnDef(); cd != nil && x.Subtype == pg_query.AlterTableType_AT_AddColumn {
			// DuckDB adds a column with a DEFAULT and nothing else;
			// NOT NULL is set by a second action (see stmt).
			for _, c := range cd.Constraints {
				switch c.GetConstraint().GetContype() {
				case pg_query.ConstrType_CONSTR_DEFAULT, pg_query.ConstrType_CONSTR_NULL, pg_query.ConstrType_CONSTR_NOTNULL:
				default:
					d.refuse("ADD COLUMN with a %s constraint", strings.TrimPrefix(c.GetConstraint().GetContype().String(), "CONSTR_"))
				}
			}
		}
	case *pg_query.ColumnDef:
		// Shepherd fills an identity column as a serial one; the
		// replicas only store the value.
		x.Identity = ""
		x.Constraints = slices.DeleteFunc(x.Constraints, func(c *pg_query.Node) bool {
			t := c.GetConstraint().GetContype()
			return t == pg_query.ConstrType_CONSTR_IDENTITY || t == pg_query.ConstrType_CONSTR_FOREIGN
		})
	}
}

// node checks one expression or clause node, and rewrites it where
// DuckDB reads it otherwise.
func (d *duck) node(n *pg_query.Node) {
	switch x := n.Node.(type) {
	case nil:
		// An empty node: SELECT DISTINCT's marker.
	case *pg_query.Node_SelectStmt, *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt,
		*pg_query.Node_CreateStmt, *pg_query.Node_IndexStmt, *pg_query.Node_ViewStmt, *pg_query.Node_DropStmt,
		*pg_query.Node_AlterTableStmt, *pg_query.Node_AlterTableCmd, *pg_query.Node_RenameStmt, *pg_query.Node_TruncateStmt,
		*pg_query.Node_ResTarget, *pg_query.Node_ColumnRef, *pg_query.Node_ParamRef, *pg_query.Node_AConst,
		*pg_query.Node_String_, *pg_query.Node_Integer, *pg_query.Node_Float, *pg_query.Node_Boolean,
		*pg_query.Node_AStar, *pg_query.Node_RangeVar, *pg_query.Node_JoinExpr, *pg_query.Node_RangeSubselect,
		*pg_query.Node_SortBy, *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest,
		*pg_query.Node_CaseExpr, *pg_query.Node_CaseWhen, *pg_query.Node_CoalesceExpr, *pg_query.Node_MinMaxExpr,
		*pg_query.Node_List, *pg_query.Node_ColumnDef, *pg_query.Node_Constraint, *pg_query.Node_IndexElem,
		*pg_query.Node_WithClause, *pg_query.Node_CommonTableExpr, *pg_query.Node_TypeName, *pg_query.Node_Alias,
		*pg_query.Node_OnConflictClause, *pg_query.Node_InferClause, *pg_query.Node_MultiAssignRef,
		*pg_query.Node_LockingClause, *pg_query.Node_DefElem, *pg_query.Node_WindowDef,
		*pg_query.Node_GroupingSet, *pg_query.Node_GroupingFunc, *pg_query.Node_RowExpr:
	case *pg_query.Node_TypeCast:
		d.cast(x.TypeCast)
	case *pg_query.Node_SubLink:
		switch x.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_EXPR_SUBLINK:
		case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
			if op := opName(x.SubLink.OperName); len(x.SubLink.OperName) > 1 || op != "" && !duckComparisons[op] {
				d.refuse("%s ANY/ALL (subquery)", op)
			}
		default:
			d.refuse("%s subqueries", strings.TrimSuffix(x.SubLink.SubLinkType.String(), "_SUBLINK"))
		}
	case *pg_query.Node_AExpr:
		d.aExpr(n, x.AExpr)
	case *pg_query.Node_FuncCall:
		d.funcCall(n, x.FuncCall)
	default:
		d.refuse("%s", nodeName(n))
	}
}

// rowComparison writes (a, b, ...) op (x, y, ...) as PostgreSQL defines
// it, one column pair after another: a = x AND b = y for =, and
// a < x OR (a = x AND (b < y ...)) for the orderings, the last pair
// compared with op itself (<= and >= include equality there only). DuckDB
// compares rows as structs, and answers false where a NULL makes
// PostgreSQL's answer NULL.
func rowComparison(d *duck, op string, l, r []*pg_query.Node) *pg_query.Node {
	if len(l) != len(r) || len(l) == 0 {
		d.refuse("row comparison of rows of different lengths")
	}
	cmp := func(op string, a, b *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)},
			proto.Clone(a).(*pg_query.Node), proto.Clone(b).(*pg_query.Node), -1)
	}
	switch op {
	case "=", "<>":
		var parts []*pg_query.Node
		for i := range l {
			parts = append(parts, cmp(op, l[i], r[i]))
		}
		if len(parts) == 1 {
			return parts[0]
		}
		kind := pg_query.BoolExprType_AND_EXPR
		if op == "<>" {
			kind = pg_query.BoolExprType_OR_EXPR
		}
		return pg_query.MakeBoolExprNode(kind, parts, -1)
	case "<", "<=", ">", ">=":
		strict := op[:1]
		last := len(l) - 1
		out := cmp(op, l[last], r[last])
		for i := last - 1; i >= 0; i-- {
			out = pg_query.MakeBoolExprNode(pg_query.BoolExprType_OR_EXPR, []*pg_query.Node{
				cmp(strict, l[i], r[i]),
				pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{cmp("=", l[i], r[i]), out}, -1),
			}, -1)
		}
		return out
	}
	d.refuse("row comparison with %s", op)
	return nil
}

// noRows refuses a row constructor left after the rewrites (in an IN
// list, against a subquery): DuckDB compares it as a struct.
func (d *duck) noRows(m protoreflect.Message) {
	if n, ok := m.Interface().(*pg_query.Node); ok && n.GetRowExpr() != nil {
		d.refuse("row values other than compared with =, <>, <, <=, > or >= to a row")
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				d.noRows(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			d.noRows(v.Message())
		}
		return true
	})
}

func opName(names []*pg_query.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// duckComparisons are the comparison operators.
var duckComparisons = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true}

// duckOps are the operators DuckDB applies as PostgreSQL does.
var duckOps = map[string]bool{
	"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true,
}

func (d *duck) aExpr(n *pg_query.Node, e *pg_query.A_Expr) {
	op := opName(e.Name)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if len(e.Name) > 1 {
			d.refuse("OPERATOR(%s)", op)
		}
		if d.funcOp(n, e, op) {
			return
		}
		if !duckOps[op] {
			d.refuse("operator %s", op)
		}
		if l, r := e.Lexpr.GetRowExpr(), e.Rexpr.GetRowExpr(); l != nil && r != nil {
			n.Node = rowComparison(d, op, l.Args, r.Args).Node
			return
		}
		if (op == "/" || op == "%") && e.Lexpr != nil {
			// DuckDB answers NULL where PostgreSQL fails.
			guarded := &pg_query.A_Expr{Kind: e.Kind, Name: e.Name, Lexpr: e.Lexpr, Rexpr: e.Rexpr, Location: e.Location}
			n.Node = &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
				Args: []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{
					Expr: pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("=")},
						proto.Clone(e.Rexpr).(*pg_query.Node), pg_query.MakeAConstIntNode(0, -1), -1),
					Result: pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("error")},
						[]*pg_query.Node{pg_query.MakeAConstStrNode("division by zero", -1)}, -1),
				}}}},
				Defresult: &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: guarded}},
			}}
		}
	case pg_query.A_Expr_Kind_AEXPR_IN:
		// A row IN a list of rows: each compared with = (NOT IN: <>),
		// as PostgreSQL expands it; DuckDB would compare structs.
		if d.jsonbIn(n, e, op) {
			return
		}
		l := e.Lexpr.GetRowExpr()
		if l == nil {
			return
		}
		var parts []*pg_query.Node
		for _, r := range e.Rexpr.GetList().GetItems() {
			row := r.GetRowExpr()
			if row == nil {
				d.refuse("row IN a list of other than rows")
			}
			parts = append(parts, rowComparison(d, op, l.Args, row.Args))
		}
		if len(parts) == 0 {
			d.refuse("row IN an empty list")
		}
		if len(parts) == 1 {
			n.Node = parts[0].Node
			return
		}
		kind := pg_query.BoolExprType_OR_EXPR
		if op == "<>" {
			kind = pg_query.BoolExprType_AND_EXPR
		}
		n.Node = pg_query.MakeBoolExprNode(kind, parts, -1).Node
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
		pg_query.A_Expr_Kind_AEXPR_NULLIF,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		s, p := e.Lexpr, e.Rexpr
		// PostgreSQL reads LIKE p ESCAPE e as LIKE like_escape(p, e);
		// a constant escape of one character is DuckDB's like_escape's
		// third argument, an empty one (no escape character, Hibernate
		// writes it) DuckDB's plain LIKE, which has none. Others are
		// refused.
		escape := pg_query.MakeAConstStrNode(`\`, -1)
		if f := e.Rexpr.GetFuncCall(); f != nil {
			var esc *pg_query.String
			if len(f.Args) == 2 {
				esc = f.Args[1].GetAConst().GetSval()
			}
			if esc == nil || utf8.RuneCountInString(esc.Sval) > 1 {
				d.refuse("LIKE ... ESCAPE of other than one character or none")
			}
			p = f.Args[0]
			escape = f.Args[1]
			if esc.Sval == "" {
				escape = nil
			}
		}
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE {
			// ILIKE lowers both sides as lower() does in the C
			// locale (ASCII letters only); DuckDB's folds every
			// letter.
			s, p = asciiCase("lower", s), asciiCase("lower", p)
		}
		var call *pg_query.Node
		if escape == nil {
			call = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("~~")}, s, p, -1)
		} else {
			call = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("like_escape")},
				[]*pg_query.Node{s, p, escape}, -1)
		}
		if op == "!~~" || op == "!~~*" {
			call = pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{call}, -1)
		}
		n.Node = call.Node
	default:
		d.refuse("%s", strings.ToLower(strings.TrimPrefix(e.Kind.String(), "AEXPR_")))
	}
}

func (d *duck) funcCall(n *pg_query.Node, f *pg_query.FuncCall) {
	name := ""
	for _, p := range f.Funcname {
		name = p.GetString_().GetSval()
	}
	if len(f.Funcname) > 2 || len(f.Funcname) == 2 && f.Funcname[0].GetString_().GetSval() != "pg_catalog" {
		d.refuse("function %s", name)
	}
	if d.sharedCall(n, f, name) {
		return
	}
	if !duckFuncs[name] {
		d.refuse("function %s()", name)
	}
	if f.AggWithinGroup || f.FuncVariadic {
		d.refuse("%s() with WITHIN GROUP or VARIADIC", name)
	}
	switch name {
	case "string_agg":
		// Its order is the engine's scan order unless it says one.
		if len(f.AggOrder) == 0 {
			d.refuse("string_agg() without ORDER BY")
		}
	case "round":
		// round(x, n) is numeric's in PostgreSQL (half away from zero,
		// as DuckDB's DECIMAL rounds); round(x) of a float8 rounds half
		// to even there and away from zero in DuckDB.
		if len(f.Args) != 2 {
			d.refuse("round() of %d argument(s)", len(f.Args))
		}
	case "extract":
		// DuckDB's date_part; fields whose values agree (not second,
		// epoch, ..., which PostgreSQL gives with a fraction).
		field := f.Args[0].GetAConst().GetSval().GetSval()
		switch field {
		case "year", "month", "day", "hour", "minute", "quarter", "dow", "doy", "isodow", "week":
		default:
			d.refuse("extract(%s from ...)", field)
		}
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("date_part")}
		f.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
		return
	case "position":
		// position(a IN b) is pg_catalog.position(b, a).
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("strpos")}
		f.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
		return
	case "lpad", "rpad":
		// DuckDB has no two-argument form: it pads with spaces.
		if len(f.Args) == 2 {
			f.Args = append(f.Args, pg_query.MakeAConstStrNode(" ", -1))
		}
		if len(f.Args) != 3 {
			d.refuse("%s() of %d arguments", name, len(f.Args))
		}
		// An empty fill pads nothing in PostgreSQL and fails in DuckDB.
		if fill := f.Args[2].GetAConst().GetSval(); fill == nil || fill.Sval == "" {
			d.refuse("%s() with a fill other than a non-empty string constant", name)
		}
	case "split_part":
		// Field 0 fails in PostgreSQL and is '' in DuckDB.
		if len(f.Args) != 3 || f.Args[2].GetAConst().GetIval() == nil || f.Args[2].GetAConst().GetIval().GetIval() == 0 {
			d.refuse("split_part() of a field other than a nonzero integer constant")
		}
	case "mod":
		// As %, which is guarded against a zero divisor.
		if len(f.Args) != 2 {
			d.refuse("mod() of %d arguments", len(f.Args))
		}
		n.Node = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("%")},
			f.Args[0], f.Args[1], -1).Node
		d.aExpr(n, n.GetAExpr())
		return
	}
	switch name {
	case "lower", "upper":
		if len(f.Args) != 1 {
			d.refuse("%s() of %d arguments", name, len(f.Args))
		}
		n.Node = asciiCase(name, f.Args[0]).Node
	case "every":
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("bool_and")}
	case "btrim":
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode("trim")}
	default:
		f.Funcname = []*pg_query.Node{pg_query.MakeStrNode(name)}
	}
}

// cast checks a cast. DuckDB reads text as a number or a boolean more
// leniently than PostgreSQL ('1.5'::int is 2 there, an error here), so
// a string constant is cast only when PostgreSQL's input rules and
// DuckDB's agree on it.
func (d *duck) cast(tc *pg_query.TypeCast) {
	if n := tc.TypeName.GetNames(); len(n) > 0 && n[len(n)-1].GetString_().GetSval() == "float4" {
		// Values of real columns agree; DuckDB's answer to a cast to
		// real of a constant lost the corpus's vote.
		d.refuse("casts to real")
	}
	d.typeName(tc.TypeName)
	c := tc.Arg.GetAConst()
	if c == nil || c.GetSval() == nil {
		return
	}
	name := ""
	for _, p := range tc.TypeName.Names {
		name = p.GetString_().GetSval()
	}
	s := c.GetSval().GetSval()
	switch name {
	case "int2", "int4", "int8":
		// Both skip white space around the digits.
		if _, err := strconv.ParseInt(strings.Trim(s, " \t\n\r\v\f"), 10, 64); err != nil {
			d.refuse("casting '%s' to %s", s, name)
		}
	case "bool":
		if _, ok := answer.ParseBool(s); !ok || s != strings.TrimSpace(s) {
			d.refuse("casting '%s' to boolean", s)
		}
	case "float4", "float8", "numeric":
		if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "aAiInN_ xX") {
			d.refuse("casting '%s' to %s", s, name)
		}
	case "date", "timestamp", "timestamptz":
		if !isoDateTime.MatchString(s) {
			d.refuse("casting '%s' to %s", s, name)
		}
	case "bytea":
		d.refuse("casting a string constant to bytea")
	case "uuid":
		if !canonicalUUID.MatchString(s) {
			d.refuse("casting '%s' to uuid", s)
		}
	case "interval":
		if !simpleInterval.MatchString(s) {
			d.refuse("casting '%s' to interval", s)
		}
	}
}

// isoDateTime is the date and timestamp text both engines read alike.
var isoDateTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:\d{2})?)?)?$`)

// canonicalUUID and simpleInterval are the uuid and interval text both
// engines read alike.
var (
	canonicalUUID  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	simpleInterval = regexp.MustCompile(`^(-?\d{1,6} (year|month|week|day|hour|minute|second)s?)( -?\d{1,6} (year|month|week|day|hour|minute|second)s?)*( \d{2}:\d{2}:\d{2}(\.\d{1,6})?)?$`)
)

// typeName checks a type DuckDB must store or cast to, and writes the
// serial types as the integers they are (shepherd fills the keys).
func (d *duck) typeName(t *pg_query.TypeName) {
	if t == nil {
		return
	}
	name := ""
	for _, p := range t.Names {
		name = p.GetString_().GetSval()
	}
	if len(t.ArrayBounds) > 0 {
		d.refuse("arrays")
	}
	if t.Setof || t.PctType {
		d.refuse("type %s", name)
	}
	if !duckTypes[name] {
		d.refuse("type %s", name)
	}
	// DuckDB has no pg_catalog schema of types; it knows PostgreSQL's
	// internal names (int4, bool, timestamptz) unqualified.
	t.Names = []*pg_query.Node{pg_query.MakeStrNode(name)}
	switch name {
	case "numeric":
		// DuckDB's bare DECIMAL is DECIMAL(18,3); its precision stops
		// at 38.
		if len(t.Typmods) == 0 {
			d.refuse("numeric without a precision")
		}
		if p := t.Typmods[0].GetAConst().GetIval().GetIval(); p > 38 {
			d.refuse("numeric of more than 38 digits")
		}
	case "json", "jsonb":
		// Kept as text (see duckdb_funcs.go).
		t.Names = []*pg_query.Node{pg_query.MakeStrNode("varchar")}
	case "varchar":
		// A column's length is held by the values stored into it
		// (varchars); a cast's by varcharCast.
		t.Typmods = nil
	case "serial", "serial4":
		t.Names = []*pg_query.Node{pg_query.MakeStrNode("int4")}
	case "bigserial", "serial8":
		t.Names = []*pg_query.Node{pg_query.MakeStrNode("int8")}
	case "smallserial", "serial2":
		t.Names = []*pg_query.Node{pg_query.MakeStrNode("int2")}
	}
}

// constraint checks a table or column constraint: DuckDB's foreign keys
// take no action on delete or update, and it checks every constraint at
// once.
func (d *duck) constraint(c *pg_query.Constraint) {
	if c.Deferrable || c.Initdeferred {
		d.refuse("DEFERRABLE constraints")
	}
	switch c.Contype {
	case pg_query.ConstrType_CONSTR_NULL, pg_query.ConstrType_CONSTR_NOTNULL, pg_query.ConstrType_CONSTR_DEFAULT,
		pg_query.ConstrType_CONSTR_IDENTITY,
		pg_query.ConstrType_CONSTR_CHECK, pg_query.ConstrType_CONSTR_PRIMARY, pg_query.ConstrType_CONSTR_UNIQUE:
	case pg_query.ConstrType_CONSTR_FOREIGN:
		// DuckDB's replica has no foreign keys: a statement that
		// violates one fails on the other replicas, and its
		// transaction with it. ON DELETE CASCADE and SET NULL are
		// done after each DELETE (DuckDBAfter).
		// ON UPDATE actions: an UPDATE of a key they act on is
		// refused (updatedKeys).
		if a := c.FkUpdAction; a == "d" {
			d.refuse("foreign keys with ON UPDATE SET DEFAULT")
		}
		if a := c.FkDelAction; a != "" && a != "a" && a != "r" && a != "c" && a != "n" {
			d.refuse("foreign keys with ON DELETE SET DEFAULT")
		}
		if c.FkDelAction == "n" && len(c.FkDelSetCols) > 0 {
			d.refuse("ON DELETE SET NULL of some of the key's columns")
		}
		if c.FkMatchtype != "" && c.FkMatchtype != "s" {
			d.refuse("MATCH FULL foreign keys")
		}
	default:
		d.refuse("%s constraints", strings.TrimPrefix(c.Contype.String(), "CONSTR_"))
	}
}

// VarcharMacro is the DuckDB macro (package driver/duckdb defines it in
// every session) that stores a value into a varchar(n) column as
// PostgreSQL's assignment does: shepherd_varchar(v, n) is v as text when
// it has at most n characters, cut to n when only spaces are beyond
// them, and fails with "value too long for type character varying(n)"
// (22001) otherwise. NULL stays NULL.
const VarcharMacro = "shepherd_varchar"

// varcharLength is n of a varchar(n) column, or -1.
func varcharLength(c *schema.Column) int {
	if c == nil || c.Type != "varchar" || len(c.Mods) != 1 {
		return -1
	}
	return int(c.Mods[0])
}

// updatedKeys refuses an UPDATE, or an INSERT's ON CONFLICT ... DO
// UPDATE, that sets a column a foreign key with an ON UPDATE action
// (CASCADE, SET NULL) references: the DuckDB replica holds no foreign
// keys and does not do the action. Such keys are allowed (Sequelize makes
// every key ON UPDATE CASCADE) because a key is rarely updated.
func (d *duck) updatedKeys(n *pg_query.Node) {
	if d.schema == nil {
		return
	}
	check := func(table string, targets []*pg_query.Node) {
		parent := d.schema.Table(table)
		if parent == nil {
			return
		}
		for _, t := range d.schema.Tables {
			for _, fk := range t.ForeignKeys() {
				upd, _, _ := fk.Actions()
				if fk.RefTable != parent.Name || upd == 'a' || upd == 'r' {
					continue
				}
				refs := fk.RefColumns
				if len(refs) == 0 {
					refs = parent.Key
				}
				for _, tg := range targets {
					if rt := tg.GetResTarget(); rt != nil && (len(refs) == 0 || slices.Contains(refs, rt.Name)) {
						d.refuse("an UPDATE of column %q of table %q, which foreign key %s references with an ON UPDATE action", rt.Name, parent.Name, fk.Name)
					}
				}
			}
		}
	}
	walkNodes(n.ProtoReflect(), func(x *pg_query.Node) {
		if u := x.GetUpdateStmt(); u != nil {
			check(u.Relation.GetRelname(), u.TargetList)
		}
		if ins := x.GetInsertStmt(); ins != nil && ins.OnConflictClause != nil {
			check(ins.Relation.GetRelname(), ins.OnConflictClause.TargetList)
		}
	})
}

// varchars wraps every value an INSERT, an ON CONFLICT ... DO UPDATE or
// an UPDATE stores into a varchar(n) column in VarcharMacro, as the SQL
// writer does for SQLite (storeCheck); the SELECT of an INSERT becomes a
// derived table whose columns are stored through it.
func (d *duck) varchars(n *pg_query.Node) {
	wrap := func(v *pg_query.Node, c *schema.Column) {
		max := varcharLength(c)
		if max < 0 || v == nil || v.GetSetToDefault() != nil {
			return
		}
		if k := v.GetAConst(); k != nil && (k.Isnull || k.GetSval() != nil && utf8.RuneCountInString(k.GetSval().Sval) <= max) {
			return
		}
		orig := proto.Clone(v).(*pg_query.Node)
		v.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(VarcharMacro)},
			[]*pg_query.Node{orig, pg_query.MakeAConstIntNode(int64(max), -1)}, -1).Node
	}
	sets := func(table *schema.Table, targets []*pg_query.Node) {
		if table == nil {
			return
		}
		for _, t := range targets {
			if rt := t.GetResTarget(); rt != nil && len(rt.Indirection) == 0 {
				wrap(rt.Val, table.Column(rt.Name))
			}
		}
	}
	if u := n.GetUpdateStmt(); u != nil {
		sets(d.schema.Table(u.Relation.GetRelname()), u.TargetList)
		return
	}
	ins := n.GetInsertStmt()
	if ins == nil {
		return
	}
	table := d.schema.Table(ins.Relation.GetRelname())
	if table == nil {
		return
	}
	if oc := ins.OnConflictClause; oc != nil {
		sets(table, oc.TargetList)
	}
	var types []*schema.Column
	if len(ins.Cols) > 0 {
		for _, c := range ins.Cols {
			types = append(types, table.Column(c.GetResTarget().GetName()))
		}
	} else {
		for i := range table.Columns {
			types = append(types, &table.Columns[i])
		}
	}
	if !slices.ContainsFunc(types, func(c *schema.Column) bool { return varcharLength(c) >= 0 }) {
		return
	}
	sel := ins.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
	case len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.SortClause) == 0 &&
		sel.LimitCount == nil && sel.LimitOffset == nil && sel.WithClause == nil:
		for _, r := range sel.ValuesLists {
			for i, v := range r.GetList().GetItems() {
				if i < len(types) {
					wrap(v, types[i])
				}
			}
		}
	default:
		// INSERT ... SELECT: SELECT shepherd_varchar(c1, n), c2 FROM
		// (the SELECT) AS shepherd_insert (c1, c2).
		count := len(ins.Cols)
		if count == 0 {
			first := sel
			for first.Op != pg_query.SetOperation_SETOP_NONE && first.Larg != nil {
				first = first.Larg
			}
			if selectsStar(first) {
				d.refuse("INSERT ... SELECT * into varchar(n) columns without a column list")
			}
			count = len(first.TargetList)
			if len(first.ValuesLists) > 0 {
				count = len(first.ValuesLists[0].GetList().GetItems())
			}
		}
		if count > len(types) {
			return // PostgreSQL's error (more expressions than columns)
		}
		alias := &pg_query.Alias{Aliasname: "shepherd_insert"}
		outer := &pg_query.SelectStmt{
			FromClause: []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
				Subquery: ins.SelectStmt, Alias: alias}}}},
		}
		if sel.WithClause != nil {
			// A WITH of the INSERT's SELECT stays outside, where its
			// names are seen by the whole statement.
			outer.WithClause, sel.WithClause = sel.WithClause, nil
		}
		for i := range count {
			name := "c" + strconv.Itoa(i+1)
			alias.Colnames = append(alias.Colnames, pg_query.MakeStrNode(name))
			v := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, -1)
			wrap(v, types[i])
			outer.TargetList = append(outer.TargetList, pg_query.MakeResTargetNodeWithVal(v, -1))
		}
		ins.SelectStmt = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: outer}}
	}
}

// varcharCast writes a cast to varchar(n) as left() of the value cast to
// varchar: PostgreSQL's explicit cast cuts the text to n characters, and
// DuckDB's varchar has no length.
func (d *duck) varcharCast(n *pg_query.Node, tc *pg_query.TypeCast) {
	t := tc.TypeName
	if t == nil || len(t.Names) == 0 || t.Names[len(t.Names)-1].GetString_().GetSval() != "varchar" ||
		len(t.Typmods) == 0 || len(t.ArrayBounds) > 0 {
		return
	}
	max := t.Typmods[0].GetAConst().GetIval()
	if len(t.Typmods) != 1 || max == nil {
		d.refuse("varchar with modifiers other than a length")
	}
	t.Typmods = nil
	n.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("left")},
		[]*pg_query.Node{{Node: &pg_query.Node_TypeCast{TypeCast: tc}}, pg_query.MakeAConstIntNode(int64(max.Ival), -1)}, -1).Node
}

// asciiCase is lower(x) or upper(x) as PostgreSQL's C locale computes
// it, changing the 26 ASCII letters only: translate() of them (DuckDB's
// lower and upper change every letter).
func asciiCase(name string, x *pg_query.Node) *pg_query.Node {
	const lowers, uppers = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	from, to := uppers, lowers
	if name == "upper" {
		from, to = lowers, uppers
	}
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("translate")},
		[]*pg_query.Node{x, pg_query.MakeAConstStrNode(from, -1), pg_query.MakeAConstStrNode(to, -1)}, -1)
}

// DuckDBAfter returns the statements a DuckDB replica runs after
// statement n, in the same transaction, to do what PostgreSQL's foreign
// key actions do (the DuckDB replica has no foreign keys; see DuckDB):
// after a DELETE from a table that keys of s reference with ON DELETE
// CASCADE or SET NULL, the rows whose key no longer finds its row are
// deleted or get NULL keys, and a deletion goes on to their own
// children. Before n no such row exists (a statement that would leave
// one fails on the replicas that hold the key, and its transaction with
// it). A cycle of such actions is refused (0A000). After an ALTER TABLE
// ADD UNIQUE, the table is made again with it (duckUniqueAfter).
func DuckDBAfter(n *pg_query.Node, s *schema.Snapshot) (out []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			ref, ok := r.(refusal)
			if !ok {
				panic(r)
			}
			out, err = nil, pgerr.New(pgerr.FeatureNotSupported,
				"shepherd cannot write %s for DuckDB replicas", ref.what)
		}
	}()
	if n.GetAlterTableStmt() != nil {
		return duckUniqueAfter(n, s)
	}
	del := n.GetDeleteStmt()
	if del == nil {
		return nil, nil
	}
	d := &duck{schema: s}
	var visit func(parent string, path []string)
	visit = func(parent string, path []string) {
		pt := s.Table(parent)
		if pt == nil {
			return
		}
		children := append(s.Children(parent), parent)
		for _, name := range children {
			child := s.Table(name)
			if child == nil {
				continue
			}
			for _, fk := range child.ForeignKeys() {
				_, onDelete, _ := fk.Actions()
				if fk.RefTable != parent || onDelete != 'c' && onDelete != 'n' {
					continue
				}
				if slices.Contains(path, name) {
					d.refuse("ON DELETE CASCADE or SET NULL through a cycle of foreign keys")
				}
				refs := fk.RefColumns
				if len(refs) == 0 {
					refs = pt.Key
				}
				if len(refs) != len(fk.Columns) || len(refs) == 0 {
					d.refuse("a foreign key whose referenced columns shepherd does not know")
				}
				var keyed, matched, nulls []string
				for i, c := range fk.Columns {
					keyed = append(keyed, quoteDuck(name)+"."+quoteDuck(c)+" IS NOT NULL")
					matched = append(matched, quoteDuck(parent)+"."+quoteDuck(refs[i])+" = "+quoteDuck(name)+"."+quoteDuck(c))
					nulls = append(nulls, quoteDuck(c)+" = NULL")
				}
				orphans := " WHERE " + strings.Join(keyed, " AND ") + " AND NOT EXISTS (SELECT 1 FROM " +
					quoteDuck(parent) + " WHERE " + strings.Join(matched, " AND ") + ")"
				if onDelete == 'n' {
					out = append(out, "UPDATE "+quoteDuck(name)+" SET "+strings.Join(nulls, ", ")+orphans)
					continue
				}
				out = append(out, "DELETE FROM "+quoteDuck(name)+orphans)
				visit(name, append(path, name))
			}
		}
	}
	table := del.Relation.GetRelname()
	visit(table, []string{table})
	return out, nil
}

// quoteDuck quotes an identifier for DuckDB.
func quoteDuck(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// duckReserved are the words DuckDB's parser reserves that PostgreSQL's
// does not, so that PostgreSQL's text leaves them unquoted as names
// (found by writing each of DuckDB's keywords as a table, column and
// alias name through the deparser and DuckDB's parser); QuoteDuckNames
// quotes them.
var duckReserved = map[string]bool{
	"anti": true, "asof": true, "at": true, "by": true, "describe": true, "glob": true, "lambda": true,
	"pivot": true, "pivot_longer": true, "pivot_wider": true, "positional": true, "qualify": true,
	"semi": true, "show": true, "summarize": true, "unpack": true, "unpivot": true,
}
