package sqlan

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// PinKind says which value shepherd chooses for a pinned expression.
type PinKind uint8

// Pin kinds. The transaction-stable ones have one value per transaction,
// as PostgreSQL defines them; the others one per statement (and, for
// random and UUIDs, per occurrence in the statement).
const (
	PinNow          PinKind = iota + 1 // now(), current_timestamp, transaction_timestamp(): timestamptz
	PinLocalNow                        // localtimestamp: timestamp
	PinDate                            // current_date
	PinLocalTime                       // localtime: time
	PinStatementNow                    // statement_timestamp(), clock_timestamp()
	PinRandom                          // random(): float8 in [0, 1)
	PinUUID                            // gen_random_uuid()
	PinSerial                          // the next value of a SERIAL/IDENTITY column
	PinSession                         // a session function's value (Pin.Call)
)

var pinNames = [...]string{"", "now", "localtimestamp", "current_date", "localtime", "statement_timestamp", "random", "uuid", "serial", "session"}

// String returns the pin's name.
func (k PinKind) String() string {
	if int(k) < len(pinNames) {
		return pinNames[k]
	}
	return "pin?"
}

// Pin is one value shepherd chooses and sends to every replica as an
// extra parameter, so that all of them store the same thing.
type Pin struct {
	Kind PinKind
	// Table and Column name the sequence of a PinSerial.
	Table, Column string
	// Call is the call a PinSession stands for.
	Call *SessionCall
}

// pinType is the PostgreSQL type a pinned parameter is cast to.
func (k PinKind) pinType() string {
	switch k {
	case PinNow, PinStatementNow:
		return "timestamptz"
	case PinLocalNow:
		return "timestamp"
	case PinDate:
		return "date"
	case PinLocalTime:
		return "time"
	case PinRandom:
		return "float8"
	case PinUUID:
		return "uuid"
	}
	return "int8"
}

// rewriter changes a parsed statement so that every replica computes the
// same answer: nondeterministic functions become parameters, generated
// columns get explicit values, and a LIMIT over an order with ties gets a
// total order.
type rewriter struct {
	schema  *schema.Snapshot
	params  int // the client's parameters
	pins    []Pin
	shared  map[PinKind]int // pin kind -> parameter number, for shared pins
	changed bool
	err     error
	// onlyNextval limits fillInsert to sequence defaults (one replica:
	// its engine fills the rest itself, but has no sequences).
	onlyNextval bool
	// userSorts is, for a SELECT whose ORDER BY totalOrder extended,
	// how many sort keys the client wrote (see exactQuotient).
	userSorts map[*pg_query.SelectStmt]int
	// ctes are the names the statement's WITH clauses give (see
	// keyOrdered).
	ctes map[string]bool
	// rowsUnknown says fillInsert refused an INSERT ... SELECT because
	// it would fill a column row by row in rows it cannot see (see
	// SelectFirst).
	rowsUnknown bool
	// mixedEngines says replicas of engines other than PostgreSQL run
	// the statement (see undecided).
	mixedEngines bool
}

// pin returns a parameter reference for a new (or shared) pinned value.
func (r *rewriter) pin(p Pin) *pg_query.Node {
	r.changed = true
	n := 0
	switch p.Kind {
	case PinNow, PinLocalNow, PinDate, PinLocalTime, PinStatementNow:
		if r.shared == nil {
			r.shared = map[PinKind]int{}
		}
		if n = r.shared[p.Kind]; n == 0 {
			r.pins = append(r.pins, p)
			n = r.params + len(r.pins)
			r.shared[p.Kind] = n
		}
	default:
		r.pins = append(r.pins, p)
		n = r.params + len(r.pins)
	}
	typ := p.Kind.pinType()
	if p.Call != nil {
		typ = p.Call.pinType()
	}
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg:      pg_query.MakeParamRefNode(int32(n), -1),
		TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode(typ)}, Typemod: -1, Location: -1},
		Location: -1,
	}}}
}

// pinExpressions replaces nondeterministic calls anywhere in the tree.
func (r *rewriter) pinExpressions(root *pg_query.Node) {
	walkNodes(root, func(n *pg_query.Node) {
		if r.err != nil {
			return
		}
		if fc := n.GetFuncCall(); fc != nil && fc.Over == nil {
			kind := PinKind(0)
			switch schema.FuncName(fc) {
			case "now", "transaction_timestamp":
				kind = PinNow
			case "statement_timestamp", "clock_timestamp":
				kind = PinStatementNow
			case "random":
				kind = PinRandom
			case "gen_random_uuid", "uuid_generate_v4":
				kind = PinUUID
			case "timeofday", "pg_backend_pid", "inet_client_addr", "txid_current", "version", "pg_sleep":
				r.err = unsupported("%s(): its value differs between replicas", schema.FuncName(fc))
				return
			}
			if kind != 0 {
				if len(fc.Args) > 0 {
					r.err = unsupported("%s() with arguments", schema.FuncName(fc))
					return
				}
				*n = *r.pin(Pin{Kind: kind})
			}
			return
		}
		if sv := n.GetSqlvalueFunction(); sv != nil {
			var kind PinKind
			switch sv.Op {
			case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
				kind = PinNow
			case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
				kind = PinLocalNow
			case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
				kind = PinDate
			case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
				kind = PinLocalTime
			default:
				r.err = unsupported("%s: its value differs between replicas", sv.Op.String())
				return
			}
			*n = *r.pin(Pin{Kind: kind})
		}
	})
}

// fillInsert gives the columns shepherd fills (SERIAL keys, now() and
// UUID defaults) explicit values in an INSERT that leaves them out or
// asks for DEFAULT.
func (r *rewriter) fillInsert(ins *pg_query.InsertStmt) {
	t := r.schema.Table(ins.Relation.Relname)
	if t == nil || !t.HasFills() {
		return
	}
	// The pins before are the statement's own calls (pinSession).
	listedPins := len(r.pins)
	sel := ins.SelectStmt.GetSelectStmt()
	values := sel != nil && len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE
	if sel == nil {
		// DEFAULT VALUES: one row of defaults. (The enums' zero values
		// are "undefined", not what the parser gives a plain VALUES.)
		sel = &pg_query.SelectStmt{
			ValuesLists: []*pg_query.Node{{Node: &pg_query.Node_List{List: &pg_query.List{}}}},
			Op:          pg_query.SetOperation_SETOP_NONE,
			LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		}
		ins.SelectStmt = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}
		values = true
	}
	// Make the column list explicit.
	if len(ins.Cols) == 0 {
		width := len(sel.TargetList)
		if values {
			width = len(sel.ValuesLists[0].GetList().Items)
		}
		if width > len(t.Columns) || !values && sel.Op != pg_query.SetOperation_SETOP_NONE {
			if width > len(t.Columns) {
				return // the engines report too many values
			}
		}
		for _, c := range t.Columns[:width] {
			ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
		}
	}
	listed := map[string]int{}
	for i, n := range ins.Cols {
		listed[n.GetResTarget().Name] = i
	}
	always := false
	for _, c := range t.Columns {
		if c.Fill == schema.FillNone || r.onlyNextval && c.Fill != schema.FillNextval {
			continue
		}
		pin := func() *pg_query.Node {
			switch c.Fill {
			case schema.FillSerial:
				always = always || c.Always
				return r.pin(Pin{Kind: PinSerial, Table: t.Name, Column: c.Name})
			case schema.FillNow:
				if c.Type == "timestamp" {
					return r.pin(Pin{Kind: PinLocalNow})
				}
				return r.pin(Pin{Kind: PinNow})
			case schema.FillDate:
				return r.pin(Pin{Kind: PinDate})
			case schema.FillNextval:
				if r.callsNextval(c.Seq, listedPins) {
					// PostgreSQL calls the defaults and the listed
					// nextval()s row by row, in column order; shepherd
					// pins the listed ones first.
					r.err = unsupported("nextval('%s') in an INSERT that also fills column %s of %s from that sequence; give the column's value as nextval('%s') too",
						c.Seq, c.Name, t.Name, c.Seq)
				}
				return r.pin(Pin{Kind: PinSession, Call: nextvalCall(c.Seq)})
			case schema.FillUUID:
				return r.pin(Pin{Kind: PinUUID})
			default:
				return r.pin(Pin{Kind: PinRandom})
			}
		}
		if i, ok := listed[c.Name]; ok {
			if c.Always && ins.Override != pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE && !allDefault(sel, i, values) {
				r.err = pgerr.New(generatedAlways, "cannot insert a non-DEFAULT value into column %q", c.Name).
					WithDetail("Column %q is an identity column defined as GENERATED ALWAYS.", c.Name)
				return
			}
			if !values {
				continue
			}
			for _, row := range sel.ValuesLists {
				items := row.GetList().Items
				if i < len(items) && items[i].GetSetToDefault() != nil {
					items[i] = pin()
				}
			}
			continue
		}
		switch {
		case values:
			ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
			for _, row := range sel.ValuesLists {
				l := row.GetList()
				l.Items = append(l.Items, pin())
			}
		case (c.Fill == schema.FillNow || c.Fill == schema.FillDate) && sel.Op == pg_query.SetOperation_SETOP_NONE &&
			len(sel.DistinctClause) == 0 && len(sel.GroupClause) == 0:
			ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
			sel.TargetList = append(sel.TargetList, pg_query.MakeResTargetNodeWithVal(pin(), -1))
		default:
			if src := valuesSource(sel); src != nil {
				// INSERT ... SELECT ... FROM (VALUES ...) AS v(...)
				// (SQLAlchemy's insertmanyvalues): each VALUES row
				// carries its row's value, in the order the rows are
				// inserted, and the SELECT passes it on.
				ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
				name := "shepherd_" + c.Name
				src.alias.Colnames = append(src.alias.Colnames, pg_query.MakeStrNode(name))
				for _, i := range src.order {
					l := src.values.ValuesLists[i].GetList()
					l.Items = append(l.Items, pin())
				}
				sel.TargetList = append(sel.TargetList, pg_query.MakeResTargetNodeWithVal(
					pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(src.alias.Aliasname), pg_query.MakeStrNode(name)}, -1), -1))
				continue
			}
			r.rowsUnknown = true
			r.err = unsupported("INSERT ... SELECT into %s without a value for column %s, which shepherd fills in row by row (%s); list the column "+
				"(or select from a VALUES list alone, each row once, in the order of its own integer column)",
				t.Name, c.Name, c.Fill)
			return
		}
	}
	if always {
		ins.Override = pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE
	}
	r.changed = true
}

// callsNextval reports whether one of the first n pins is a nextval()
// call of seq (or of a sequence a parameter names).
func (r *rewriter) callsNextval(seq string, n int) bool {
	for _, p := range r.pins[:n] {
		if p.Kind != PinSession || p.Call.Func != "nextval" || len(p.Call.Args) != 1 {
			continue
		}
		a := p.Call.Args[0]
		if name, err := schema.SequenceName(a.Value); a.Param > 0 || err != nil || name == seq {
			return true
		}
	}
	return false
}

// nextvalCall is the call nextval('seq') a sequence default stands for.
func nextvalCall(seq string) *SessionCall {
	return &SessionCall{Func: "nextval", Args: []CallArg{{Value: quoteIdent(seq), Type: "regclass"}},
		Column: resultColumn("nextval", answer.OIDInt8)}
}

// valuesRows is the VALUES list an INSERT ... SELECT reads its rows from
// one by one (see valuesSource).
type valuesRows struct {
	values *pg_query.SelectStmt
	alias  *pg_query.Alias
	// order lists the VALUES rows (0-based) in the order PostgreSQL
	// inserts them, which is the order it calls nextval() in.
	order []int
}

// valuesSource returns the VALUES list sel selects from when each of its
// rows becomes exactly one inserted row in an order shepherd can tell:
// SELECT of columns, constants and parameters (cast or not) FROM (VALUES
// ...) AS v(...) alone, without WHERE, grouping, DISTINCT, LIMIT or
// windows, and ORDER BY nothing (the list's order) or one column of v
// holding distinct integer constants (SQLAlchemy's sentinel counter).
// Anything else returns nil: its rows, or their order, are the engine's.
func valuesSource(sel *pg_query.SelectStmt) *valuesRows {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 || len(sel.FromClause) != 1 ||
		sel.WhereClause != nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.WindowClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 ||
		sel.WithClause != nil || sel.IntoClause != nil || len(sel.SortClause) > 1 {
		return nil
	}
	rs := sel.FromClause[0].GetRangeSubselect()
	if rs == nil || rs.Lateral || rs.Alias == nil {
		return nil
	}
	values := rs.Subquery.GetSelectStmt()
	if values == nil || len(values.ValuesLists) == 0 || values.Op != pg_query.SetOperation_SETOP_NONE ||
		len(values.SortClause) > 0 || values.LimitCount != nil || values.LimitOffset != nil || values.WithClause != nil {
		return nil
	}
	for _, t := range sel.TargetList {
		v := t.GetResTarget().GetVal()
		if tc := v.GetTypeCast(); tc != nil {
			v = tc.Arg
		}
		if cr := v.GetColumnRef(); cr != nil {
			if f := cr.Fields; f[len(f)-1].GetAStar() != nil {
				return nil // * would take the added column too
			}
			continue
		}
		if v.GetAConst() == nil && v.GetParamRef() == nil {
			return nil
		}
	}
	width := len(values.ValuesLists[0].GetList().GetItems())
	if len(rs.Alias.Colnames) == 0 {
		for i := 1; i <= width; i++ {
			rs.Alias.Colnames = append(rs.Alias.Colnames, pg_query.MakeStrNode("column"+strconv.Itoa(i)))
		}
	}
	if len(rs.Alias.Colnames) != width {
		return nil
	}
	src := &valuesRows{values: values, alias: rs.Alias}
	for i := range values.ValuesLists {
		src.order = append(src.order, i)
	}
	if len(sel.SortClause) == 0 {
		return src
	}
	sb := sel.SortClause[0].GetSortBy()
	if sb.SortbyNulls != pg_query.SortByNulls_SORTBY_NULLS_DEFAULT || len(sb.UseOp) > 0 ||
		sb.SortbyDir != pg_query.SortByDir_SORTBY_DEFAULT && sb.SortbyDir != pg_query.SortByDir_SORTBY_ASC && sb.SortbyDir != pg_query.SortByDir_SORTBY_DESC {
		return nil
	}
	cr := sb.Node.GetColumnRef()
	if cr == nil || len(cr.Fields) > 2 || len(cr.Fields) == 2 && cr.Fields[0].GetString_().GetSval() != rs.Alias.Aliasname {
		return nil
	}
	name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	col := -1
	for i, c := range rs.Alias.Colnames {
		if c.GetString_().GetSval() == name {
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	key := map[int]int64{}
	seen := map[int64]bool{}
	for i, row := range values.ValuesLists {
		items := row.GetList().GetItems()
		if col >= len(items) {
			return nil
		}
		c := items[col].GetAConst()
		if c == nil || c.GetIval() == nil || seen[int64(c.GetIval().Ival)] {
			return nil
		}
		key[i] = int64(c.GetIval().Ival)
		seen[key[i]] = true
	}
	desc := sb.SortbyDir == pg_query.SortByDir_SORTBY_DESC
	slices.SortFunc(src.order, func(a, b int) int {
		if desc {
			a, b = b, a
		}
		return cmp.Compare(key[a], key[b])
	})
	return src
}

// leaveOutDefaults takes out of an INSERT ... VALUES the columns that
// every row gives as DEFAULT (TypeORM writes DEFAULT for each value an
// entity leaves unset): PostgreSQL fills an omitted column with its
// default just as it does for DEFAULT, and SQLite has no DEFAULT in
// VALUES. A column list is made explicit from the catalog for it. When
// every column would go, one row becomes DEFAULT VALUES; several such
// rows stay as they are (SQLite refuses them).
func (r *rewriter) leaveOutDefaults(ins *pg_query.InsertStmt) {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return
	}
	width := len(sel.ValuesLists[0].GetList().GetItems())
	var drop []int
	for i := 0; i < width; i++ {
		if allDefault(sel, i, true) {
			drop = append(drop, i)
		}
	}
	if len(drop) == 0 || len(drop) == width && len(sel.ValuesLists) > 1 {
		return
	}
	if len(ins.Cols) == 0 {
		t := r.schema.Table(ins.Relation.Relname)
		if t == nil || t.View || width > len(t.Columns) {
			return
		}
		for _, c := range t.Columns[:width] {
			ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
		}
	}
	if len(ins.Cols) != width {
		return // the engines report the mismatch
	}
	for _, c := range ins.Cols {
		if len(c.GetResTarget().Indirection) > 0 {
			return // a[1], c.f: not a whole column
		}
	}
	if len(drop) == width {
		ins.Cols, ins.SelectStmt = nil, nil // INSERT ... DEFAULT VALUES
		r.changed = true
		return
	}
	for k := len(drop) - 1; k >= 0; k-- {
		i := drop[k]
		ins.Cols = slices.Delete(ins.Cols, i, i+1)
		for _, row := range sel.ValuesLists {
			l := row.GetList()
			l.Items = slices.Delete(l.Items, i, i+1)
		}
	}
	r.changed = true
}

// writeDefaults replaces the DEFAULT keywords left in an INSERT ... VALUES
// (a column some rows give a value and others DEFAULT, after fillInsert
// and leaveOutDefaults) by the column's default where that is a constant:
// NULL for a column without a default, or a default with no function,
// column or subquery in it ('none', 7, -1.5, 'x'::text). SQLite has no
// DEFAULT in VALUES; a constant means the same on every engine. Any
// other default stays DEFAULT (and SQLite's dialect refuses it).
func (r *rewriter) writeDefaults(ins *pg_query.InsertStmt) {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return
	}
	t := r.schema.Table(ins.Relation.Relname)
	if t == nil || t.View {
		return
	}
	column := func(i int) *schema.Column {
		name := ""
		switch {
		case len(ins.Cols) == 0 && i < len(t.Columns):
			return &t.Columns[i]
		case i < len(ins.Cols) && len(ins.Cols[i].GetResTarget().Indirection) == 0:
			name = ins.Cols[i].GetResTarget().Name
		default:
			return nil
		}
		for k := range t.Columns {
			if t.Columns[k].Name == name {
				return &t.Columns[k]
			}
		}
		return nil
	}
	for _, row := range sel.ValuesLists {
		items := row.GetList().Items
		for i, it := range items {
			if it.GetSetToDefault() == nil {
				continue
			}
			c := column(i)
			if c == nil || c.Fill != schema.FillNone || c.Identity {
				continue
			}
			if d := constantDefault(c.Default); d != nil {
				items[i] = d
				r.changed = true
			}
		}
	}
}

// constantDefault parses a column's DEFAULT text (as the schema keeps it)
// and returns it when it is a constant: NULL for "", a literal, or casts
// and signs of literals. Otherwise nil.
func constantDefault(text string) *pg_query.Node {
	if text == "" {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}
	}
	tree, err := pg_query.Parse("SELECT " + text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 {
		return nil
	}
	e := sel.TargetList[0].GetResTarget().GetVal()
	constant := true
	pgtree.Walk(e.ProtoReflect(), func(m protoreflect.Message) bool {
		switch m.Interface().(type) {
		case *pg_query.FuncCall, *pg_query.ColumnRef, *pg_query.SubLink, *pg_query.ParamRef,
			*pg_query.SQLValueFunction, *pg_query.A_ArrayExpr, *pg_query.RowExpr:
			constant = false
		}
		return constant
	})
	if !constant {
		return nil
	}
	return e
}

// generatedAlways is PostgreSQL's SQLSTATE for a value given to a
// GENERATED ALWAYS column.
const generatedAlways = "428C9"

// allDefault reports whether every row gives column i the DEFAULT
// keyword.
func allDefault(sel *pg_query.SelectStmt, i int, values bool) bool {
	if !values {
		return false
	}
	for _, row := range sel.ValuesLists {
		items := row.GetList().Items
		if i >= len(items) || items[i].GetSetToDefault() == nil {
			return false
		}
	}
	return true
}

// checkUpdate refuses, as PostgreSQL does, an UPDATE that sets a
// GENERATED ALWAYS column to anything but DEFAULT.
func (r *rewriter) checkUpdate(u *pg_query.UpdateStmt) {
	t := r.schema.Table(u.Relation.Relname)
	if t == nil {
		return
	}
	for _, n := range u.TargetList {
		rt := n.GetResTarget()
		if c := t.Column(rt.Name); c != nil && c.Always && rt.Val.GetSetToDefault() == nil {
			r.err = pgerr.New(generatedAlways, "column %q can only be updated to DEFAULT", c.Name).
				WithDetail("Column %q is an identity column defined as GENERATED ALWAYS.", c.Name)
			return
		}
	}
}

// totalOrder makes the row order of a query complete where it matters:
// a query with ORDER BY gets the output columns it does not sort by
// appended as further keys (rows that tie on every column are identical,
// so any order of them is the same answer), and a LIMIT, OFFSET or
// DISTINCT ON without ORDER BY gets every output column as its order
// (DISTINCT ON its own expressions first). It returns whether the order
// is now total.
func (r *rewriter) totalOrder(sel *pg_query.SelectStmt) bool {
	if len(sel.SortClause) == 0 && !limited(sel) && !distinctOn(sel) {
		return false
	}
	if withTies(sel) {
		// FETCH ... WITH TIES keeps every row that ties with the last:
		// more keys would change which rows those are.
		return false
	}
	targets := r.outputs(sel)
	if targets == nil {
		return false
	}
	if distinctOn(sel) && len(sel.SortClause) == 0 {
		// DISTINCT ON keeps the first row of each group: order by its
		// expressions (as PostgreSQL requires of an ORDER BY), then by
		// the output, so that the first row is the same everywhere.
		for _, d := range sel.DistinctClause {
			sel.SortClause = append(sel.SortClause, sortBy(d))
		}
		r.changed = true
	}
	if r.userSorts == nil {
		r.userSorts = map[*pg_query.SelectStmt]int{}
	}
	r.userSorts[sel] = len(sel.SortClause)
	covered := map[int]bool{}
	for _, s := range sel.SortClause {
		sb := s.GetSortBy()
		if c := sb.Node.GetAConst(); c != nil && c.GetIval() != nil {
			covered[int(c.GetIval().Ival)] = true
			continue
		}
		for i, t := range targets {
			if t.GetResTarget() != nil && sameExpr(t.GetResTarget().Val, sb.Node) ||
				t.GetResTarget().Name != "" && isColumn(sb.Node, t.GetResTarget().Name) {
				covered[i+1] = true
			}
		}
	}
	total := true
	for i, t := range targets {
		if covered[i+1] {
			continue
		}
		if !orderable(r.schema, sel, t.GetResTarget().Val) {
			total = false
			continue
		}
		sel.SortClause = append(sel.SortClause, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
			Node: pg_query.MakeAConstIntNode(int64(i+1), -1), Location: -1,
		}}})
		covered[i+1] = true
		r.changed = true
	}
	return total || keyOrdered(r.schema, r.ctes, sel, targets, covered)
}

// keyOrdered reports whether the sort keys (output positions, 1-based, in
// keyed) hold every column of the primary key of the one table sel reads:
// rows that tie on them are one row, so the order is total although
// some outputs (json columns) could not be sort keys (Django's
// select_for_update().get(): LIMIT 21 FOR UPDATE of a model with a
// JSONField).
// A name some WITH of the statement gives may not be the table's, and is
// not trusted.
func keyOrdered(s *schema.Snapshot, ctes map[string]bool, sel *pg_query.SelectStmt, targets []*pg_query.Node, keyed map[int]bool) bool {
	if sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.FromClause) != 1 {
		return false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || ctes[rv.Relname] {
		return false
	}
	t := s.Table(rv.Relname)
	if t == nil || t.View || len(t.Key) == 0 {
		return false
	}
	alias := rv.Relname
	if rv.Alias != nil {
		if len(rv.Alias.Colnames) > 0 {
			return false
		}
		alias = rv.Alias.Aliasname
	}
	have := map[string]bool{}
	for i, tg := range targets {
		cr := tg.GetResTarget().GetVal().GetColumnRef()
		if !keyed[i+1] || cr == nil || len(cr.Fields) > 2 || len(cr.Fields) == 2 && cr.Fields[0].GetString_().GetSval() != alias {
			continue
		}
		have[cr.Fields[len(cr.Fields)-1].GetString_().GetSval()] = true
	}
	for _, k := range t.Key {
		if !have[k] {
			return false
		}
	}
	return true
}

// outputs returns the output columns of a query, with * expanded from the
// schema; nil when they cannot be known.
func (r *rewriter) outputs(sel *pg_query.SelectStmt) []*pg_query.Node {
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		left := sel.Larg
		for left.Op != pg_query.SetOperation_SETOP_NONE {
			left = left.Larg
		}
		if hasStar(left.TargetList) {
			return nil
		}
		return left.TargetList
	}
	if len(sel.ValuesLists) > 0 || len(sel.TargetList) == 0 {
		return nil
	}
	if !hasStar(sel.TargetList) {
		return sel.TargetList
	}
	// Expand * when every FROM item is a table shepherd knows.
	var out []*pg_query.Node
	for _, t := range sel.TargetList {
		cr := t.GetResTarget().Val.GetColumnRef()
		if cr == nil || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
			out = append(out, t)
			continue
		}
		qual := ""
		if len(cr.Fields) == 2 {
			qual = cr.Fields[0].GetString_().GetSval()
		}
		cols, ok := r.starColumns(sel.FromClause, qual)
		if !ok {
			return nil
		}
		out = append(out, cols...)
	}
	sel.TargetList = out
	r.changed = true
	return out
}

// starColumns lists the columns * (or alias.*) stands for: those of the
// tables shepherd knows, of subqueries whose output columns have names,
// and of joins of them (USING columns once, first, as PostgreSQL lists
// them). It fails on views, NATURAL joins and anything else it cannot
// list.
func (r *rewriter) starColumns(from []*pg_query.Node, qual string) ([]*pg_query.Node, bool) {
	var out []*pg_query.Node
	for _, f := range from {
		cols, ok := r.itemColumns(f, qual)
		if !ok {
			return nil, false
		}
		out = append(out, cols...)
	}
	return out, len(out) > 0
}

// itemColumns is starColumns for one FROM item; a qualifier that names
// another item gives no columns.
func (r *rewriter) itemColumns(f *pg_query.Node, qual string) ([]*pg_query.Node, bool) {
	var names []string
	alias := ""
	switch {
	case f.GetRangeVar() != nil:
		rv := f.GetRangeVar()
		alias = rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		if qual != "" && alias != qual {
			return nil, true
		}
		t := r.schema.Table(rv.Relname)
		switch {
		case t == nil:
			return nil, false
		case t.View:
			// A view's columns are its query's output columns (renamed by
			// the view's aliases), unless it lists them with a *, which
			// PostgreSQL expanded when the view was made, and today's
			// tables may have more columns.
			tree, err := pg_query.Parse(t.Query)
			if t.Query == "" || err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
				return nil, false
			}
			sel := tree.Stmts[0].Stmt.GetSelectStmt()
			left := sel
			for left.Op != pg_query.SetOperation_SETOP_NONE && left.Larg != nil {
				left = left.Larg
			}
			if hasStar(left.TargetList) {
				return nil, false
			}
			var aliases []*pg_query.Node
			for _, a := range t.Aliases {
				aliases = append(aliases, pg_query.MakeStrNode(a))
			}
			var ok bool
			if names, ok = outputNames(r.outputs(sel), aliases); !ok {
				return nil, false
			}
		default:
			for _, c := range t.Columns {
				names = append(names, c.Name)
			}
		}
		if rv.Alias != nil && len(rv.Alias.Colnames) > 0 {
			return nil, false // renamed columns: rare, not worth the rules
		}
	case f.GetRangeSubselect() != nil:
		rs := f.GetRangeSubselect()
		if rs.Alias == nil || rs.Lateral {
			return nil, false
		}
		alias = rs.Alias.Aliasname
		if qual != "" && alias != qual {
			return nil, true
		}
		sub := rs.Subquery.GetSelectStmt()
		if sub == nil {
			return nil, false
		}
		var ok bool
		if names, ok = outputNames(r.outputs(sub), rs.Alias.Colnames); !ok {
			return nil, false
		}
	case f.GetJoinExpr() != nil:
		j := f.GetJoinExpr()
		if j.IsNatural || j.Alias != nil || j.JoinUsingAlias != nil {
			return nil, false
		}
		left, ok := r.itemColumns(j.Larg, qual)
		if !ok {
			return nil, false
		}
		right, ok := r.itemColumns(j.Rarg, qual)
		if !ok {
			return nil, false
		}
		if qual != "" || len(j.UsingClause) == 0 {
			return append(left, right...), true
		}
		using := map[string]bool{}
		var out []*pg_query.Node
		for _, u := range j.UsingClause {
			name := u.GetString_().GetSval()
			using[name] = true
			out = append(out, pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, -1), -1))
		}
		for _, c := range append(left, right...) {
			cr := c.GetResTarget().GetVal().GetColumnRef()
			if cr == nil || !using[cr.Fields[len(cr.Fields)-1].GetString_().GetSval()] {
				out = append(out, c)
			}
		}
		return out, true
	default:
		return nil, false
	}
	var out []*pg_query.Node
	for _, name := range names {
		ref := pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode(name)}, -1)
		out = append(out, pg_query.MakeResTargetNodeWithVal(ref, -1))
	}
	return out, true
}

// outputNames returns the names of a query's output columns, renamed by
// colnames where given; false when one has no name shepherd can tell
// (an expression PostgreSQL names itself) or they are unknown.
func outputNames(targets []*pg_query.Node, colnames []*pg_query.Node) ([]string, bool) {
	if targets == nil {
		return nil, false
	}
	var names []string
	for i, t := range targets {
		name := t.GetResTarget().GetName()
		if i < len(colnames) {
			name = colnames[i].GetString_().GetSval()
		} else if cr := t.GetResTarget().GetVal().GetColumnRef(); name == "" && cr != nil {
			name = cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
		}
		if name == "" {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}

func hasStar(targets []*pg_query.Node) bool {
	for _, t := range targets {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return true
		}
	}
	return false
}

// orderable reports whether a column may be a sort key: PostgreSQL cannot
// sort json, and the other engines do not sort jsonb or intervals as it
// does.
func orderable(s *schema.Snapshot, sel *pg_query.SelectStmt, n *pg_query.Node) bool {
	// Values the replicas hold as text that PostgreSQL orders otherwise
	// (or not at all): json, jsonb, intervals and arrays (shepherd writes
	// them as PostgreSQL prints them).
	switch name := typeIn(s, sel, n).Name(); {
	case name == "json", name == "jsonb", name == "interval", schema.IsArray(name):
		return false
	}
	cr := n.GetColumnRef()
	if cr == nil {
		return true
	}
	name := cr.Fields[len(cr.Fields)-1].GetString_().GetSval()
	for _, f := range sel.FromClause {
		if rv := f.GetRangeVar(); rv != nil {
			if t := s.Table(rv.Relname); t != nil {
				if c := t.Column(name); c != nil && (c.Type == "json" || c.Type == "jsonb" || schema.IsArray(c.Type)) {
					return false
				}
			}
		}
	}
	return true
}

func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}

func isColumn(n *pg_query.Node, name string) bool {
	cr := n.GetColumnRef()
	return cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_().GetSval() == name
}

// sameExpr compares two expressions ignoring source locations.
func sameExpr(a, b *pg_query.Node) bool {
	fa, err1 := pg_query.Deparse(wrapExpr(a))
	fb, err2 := pg_query.Deparse(wrapExpr(b))
	return err1 == nil && err2 == nil && fa == fb
}

func wrapExpr(n *pg_query.Node) *pg_query.ParseResult {
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(n, -1)}}
	return &pg_query.ParseResult{Version: pgVersion, Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}}
}

// pgVersion is the parse tree version of the linked parser.
var pgVersion = func() int32 {
	t, err := pg_query.Parse("SELECT 1")
	if err != nil {
		panic("pg_query cannot parse SELECT 1: " + err.Error())
	}
	return t.Version
}()

// walkNodes calls visit on every Node in the tree, parents before
// children; visit may replace the node's content (the replacement is not
// walked).
func walkNodes(root *pg_query.Node, visit func(*pg_query.Node)) {
	pgtree.Walk(root.ProtoReflect(), func(m protoreflect.Message) bool {
		if n, ok := m.Interface().(*pg_query.Node); ok {
			before := n.Node
			visit(n)
			return n.Node == before
		}
		return true
	})
}

// ReservedTable is the table shepherd keeps on every replica for its
// write-ahead log (replica.LogTable): its rows differ between replicas by
// design, so clients may neither read nor write it, nor create their own.
const ReservedTable = "shepherd_log"

// reservedRelation refuses a statement that names ReservedTable.
func reservedRelation(root *pg_query.Node) error {
	found := false
	pgtree.Walk(root.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.RangeVar:
			found = found || strings.EqualFold(x.Relname, ReservedTable)
		case *pg_query.DropStmt:
			// DROP names its objects as lists of strings.
			for _, o := range x.Objects {
				if l := o.GetList(); l != nil && len(l.Items) > 0 {
					found = found || strings.EqualFold(l.Items[len(l.Items)-1].GetString_().GetSval(), ReservedTable)
				}
			}
		}
		return !found
	})
	if found {
		return pgerr.New(reservedName, "%s is shepherd's own table on every replica; clients may not use it", ReservedTable)
	}
	return nil
}

// reservedName is PostgreSQL's SQLSTATE for a name reserved by the
// system.
const reservedName = "42939"

// maxParam returns the highest $n in the tree.
func maxParam(root *pg_query.Node) (int, error) {
	hi := 0
	var err error
	walkNodes(root, func(n *pg_query.Node) {
		if p := n.GetParamRef(); p != nil {
			if p.Number < 1 || p.Number > MaxParams {
				err = undefinedParam(int(p.Number))
			}
			hi = max(hi, int(p.Number))
		}
	})
	return hi, err
}

func undefinedParam(n int) error {
	return pgerr.New(pgerr.UndefinedParameterRef, "there is no parameter $%d", n)
}

// PinSource supplies the values of pins.
type PinSource struct {
	// TxnTime is the transaction's timestamp (now()); StmtTime the
	// statement's (statement_timestamp(), clock_timestamp()).
	TxnTime, StmtTime time.Time
	// Next reserves the next value of a column's sequence.
	Next func(table, column string) (int64, error)
	// Session evaluates a session function (PinSession).
	Session func(*SessionCall) (driver.Arg, error)
}

// PinArgs returns the values of the statement's pins, as parameters that
// follow the client's.
func (s *Stmt) PinArgs(src PinSource) ([]driver.Arg, error) {
	out := make([]driver.Arg, len(s.Pins))
	for i, p := range s.Pins {
		switch p.Kind {
		case PinNow:
			// No offset: every replica's session runs in UTC, and neither
			// MariaDB nor SQLite reads one.
			out[i] = driver.Arg{Type: answer.TimestampTZ, Text: src.TxnTime.UTC().Format(tsLayout)}
		case PinLocalNow:
			out[i] = driver.Arg{Type: answer.Timestamp, Text: src.TxnTime.UTC().Format(tsLayout)}
		case PinDate:
			out[i] = driver.Arg{Type: answer.Date, Text: src.TxnTime.UTC().Format("2006-01-02")}
		case PinLocalTime:
			out[i] = driver.Arg{Type: answer.Time, Text: src.TxnTime.UTC().Format("15:04:05.999999")}
		case PinStatementNow:
			out[i] = driver.Arg{Type: answer.TimestampTZ, Text: src.StmtTime.UTC().Format(tsLayout)}
		case PinRandom:
			var b [8]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, pgerr.Wrap(pgerr.InternalError, err, "random()")
			}
			f := float64(binary.BigEndian.Uint64(b[:])>>11) / (1 << 53)
			out[i] = driver.Arg{Type: answer.Float, Text: strconv.FormatFloat(f, 'g', -1, 64)}
		case PinUUID:
			var b [16]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, pgerr.Wrap(pgerr.InternalError, err, "gen_random_uuid()")
			}
			b[6] = b[6]&0x0f | 0x40 // version 4
			b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
			h := hex.EncodeToString(b[:])
			out[i] = driver.Arg{Type: answer.UUID, Text: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]}
		case PinSerial:
			if src.Next == nil {
				return nil, pgerr.New(pgerr.InternalError, "no sequence for %s.%s", p.Table, p.Column)
			}
			v, err := src.Next(p.Table, p.Column)
			var pe *pgerr.Error
			if errors.As(err, &pe) {
				return nil, err // the sequence's own error (2200H, 55P03)
			}
			if err != nil {
				return nil, pgerr.Wrap(pgerr.InternalError, err, "sequence of "+p.Table+"."+p.Column)
			}
			out[i] = driver.Arg{Type: answer.Int, Text: strconv.FormatInt(v, 10)}
		case PinSession:
			if src.Session == nil {
				return nil, pgerr.New(pgerr.InternalError, "no session to evaluate %s()", p.Call.Func)
			}
			v, err := src.Session(p.Call)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
	}
	return out, nil
}

// tsLayout prints timestamps with microseconds and no trailing zeros.
const tsLayout = "2006-01-02 15:04:05.999999"

// insertWidth is how many columns the rows of an INSERT's query or
// VALUES have, false when shepherd cannot count them (a star).
func insertWidth(sel *pg_query.SelectStmt) (int, bool) {
	for sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE {
		sel = sel.Larg
	}
	if sel == nil {
		return 0, false
	}
	if len(sel.ValuesLists) > 0 {
		return len(sel.ValuesLists[0].GetList().GetItems()), true
	}
	for _, t := range sel.TargetList {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return 0, false
		}
	}
	return len(sel.TargetList), true
}

// listColumns makes an INSERT's target columns explicit when its rows
// are narrower than the table: PostgreSQL fills the first columns and
// defaults the rest, where MariaDB and SQLite refuse a short row. Rows
// wider than the target columns fail with PostgreSQL's 42601 (the
// engines' errors differ).
func (r *rewriter) listColumns(ins *pg_query.InsertStmt) error {
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || ins.Relation == nil {
		return nil
	}
	width, ok := insertWidth(sel)
	// An unknown table is the engines' error, which comes first.
	t := r.schema.Table(ins.Relation.Relname)
	if !ok || t == nil || t.View || ins.Relation.Schemaname != "" && ins.Relation.Schemaname != "public" {
		return nil
	}
	if len(ins.Cols) > 0 {
		switch {
		case width > len(ins.Cols):
			return pgerr.New(pgerr.SyntaxError, "INSERT has more expressions than target columns")
		case width < len(ins.Cols):
			return pgerr.New(pgerr.SyntaxError, "INSERT has more target columns than expressions")
		}
		return nil
	}
	if width > len(t.Columns) {
		return pgerr.New(pgerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	if width == len(t.Columns) {
		return nil
	}
	for _, c := range t.Columns[:width] {
		ins.Cols = append(ins.Cols, pg_query.MakeResTargetNodeWithName(c.Name, -1))
	}
	r.changed = true
	return nil
}
