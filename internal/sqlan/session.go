package sqlan

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgcatalog"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Session functions are the functions whose value is the session's or the
// server's, not the data's (version(), current_user, current_setting(),
// advisory locks, ...). No replica may answer them: each engine would
// give its own. shepherd evaluates them: a SELECT of nothing but such
// calls is answered by shepherd alone (Kind Local), and a value-only call
// inside another statement is pinned (PinSession), so every replica
// receives the same value.

// SessionCall is one call of a session function.
type SessionCall struct {
	// Func is the function's name ("version", "current_user",
	// "pg_advisory_lock").
	Func string
	Args []CallArg
	// Column is the result column PostgreSQL would give the call.
	Column answer.Column
}

// CallArg is one argument of a session function: a constant or one of the
// client's parameters.
type CallArg struct {
	Param int // $n (1-based); 0 for a constant
	Value string
	Null  bool
	// Type is the PostgreSQL type the argument is read as ("int8",
	// "int4", "text", "bool", "float8").
	Type string
	// Column, in a call of Op "apply", takes the value from column
	// Column (1-based) of the row of Inner the call is made for.
	Column int
	// SerialOf, in a call of Op "apply", holds the arguments of
	// pg_get_serial_sequence(table, column), whose answer is the value.
	SerialOf []CallArg
}

// SessionOp is a session statement shepherd answers alone.
type SessionOp struct {
	// Op is "select" (Calls), "deallocate", "discard", "close",
	// "listen", "unlisten", "notify", "lock", "vacuum", "prepare", "execute",
	// "declare" (Cursor, the query in the Stmt's Inner) or
	// "fetch" (Fetch).
	Op string
	// Name is DEALLOCATE's statement, CLOSE's cursor, UNLISTEN's channel
	// or DISCARD's target ("all", "plans", "sequences", "temp"); "" with
	// All.
	Name string
	All  bool
	// Calls are the SELECT's result columns, in order.
	Calls []SessionCall
	// Cursor is DECLARE's options.
	Cursor CursorOptions
	// Fetch is FETCH's or MOVE's motion.
	Fetch Fetch
	// DDL is the CREATE, ALTER or DROP SEQUENCE of Op "sequence".
	DDL *pg_query.Node
	// Apply, for Op "apply" (SELECT setval(s, expr, ...) FROM ...,
	// Calls holding the one call), is the query whose rows give the
	// call's arguments (see CallArg.Column), run as the statement's
	// Inner; ApplyParams gives, for each of its parameters, the
	// client's.
	Apply       *pg_query.Node
	ApplyParams []int
	// Lock is LOCK TABLE's (Op "lock").
	Lock LockOp
	// Prepare is SQL PREPARE's (Op "prepare"), named Name.
	Prepare PrepareOp
	// Args are EXECUTE's arguments (Op "execute" of statement Name).
	Args []CallArg
	// Payload is NOTIFY's (Op "notify" on channel Name).
	Payload string
	// Vacuum is VACUUM's or ANALYZE's (Op "vacuum").
	Vacuum VacuumOp
}

// VacuumOp is a VACUUM or ANALYZE: which, and the tables it names (none:
// every table). shepherd answers it alone: it changes no answer, and the
// replicas' engines look after their own storage and statistics.
type VacuumOp struct {
	Vacuum    bool
	Relations []string
}

// LockOp is a LOCK TABLE: the relations (schema-qualified as written,
// "public." left out) and PostgreSQL's lock mode (1, ACCESS SHARE, to 8,
// ACCESS EXCLUSIVE).
type LockOp struct {
	Relations []string
	Mode      int
	NoWait    bool
}

// PrepareOp is an SQL-level PREPARE: the statement's text and the
// parameter types it declares (0 where it left one to be inferred).
type PrepareOp struct {
	Body      string
	ParamOIDs []uint32
}

// CursorOptions are a DECLARE's options.
type CursorOptions struct {
	Hold, Scroll, NoScroll bool
	// Binary is DECLARE ... BINARY: a FETCH in the simple protocol
	// answers in binary format.
	Binary bool
}

// Fetch is a FETCH or MOVE: its direction and count as PostgreSQL's
// parser gives them (FETCH LAST is ABSOLUTE -1, FETCH ALL a count of
// FetchAll, PRIOR is BACKWARD 1).
type Fetch struct {
	Direction FetchDirection
	Count     int64
	Move      bool
}

// FetchDirection is the direction of a FETCH or MOVE.
type FetchDirection uint8

// Fetch directions.
const (
	FetchForward FetchDirection = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

// FetchAll is the count of FETCH ALL.
const FetchAll = int64(1<<63 - 1)

// PostgreSQL's cursor option bits (parsenodes.h).
const (
	cursorBinary   = 0x1
	cursorScroll   = 0x2
	cursorNoScroll = 0x4
	cursorHold     = 0x20
)

// sessionFunc describes a session function: its overloads (argument
// types), its result type, and whether it changes state (such a call is
// only answered as a statement of its own, never pinned).
type sessionFunc struct {
	overloads [][]string
	result    uint32
	effect    bool
}

// OIDs of result types answer does not name.
const (
	oidInet uint32 = 869
	oidVoid uint32 = 2278
	oidXid8 uint32 = 5069
)

var none = [][]string{{}}

var lockArgs = [][]string{{"int8"}, {"int4", "int4"}}

var sessionFuncs = map[string]sessionFunc{
	"version":                  {none, answer.OIDText, false},
	"current_user":             {none, answer.OIDName, false},
	"session_user":             {none, answer.OIDName, false},
	"user":                     {none, answer.OIDName, false},
	"current_role":             {none, answer.OIDName, false},
	"current_catalog":          {none, answer.OIDName, false},
	"current_database":         {none, answer.OIDName, false},
	"current_schema":           {none, answer.OIDName, false},
	"current_setting":          {[][]string{{"text"}, {"text", "bool"}}, answer.OIDText, false},
	"pg_notify":                {[][]string{{"text", "text"}}, oidVoid, true},
	"pg_backend_pid":           {none, answer.OIDInt4, false},
	"inet_server_addr":         {none, oidInet, false},
	"inet_server_port":         {none, answer.OIDInt4, false},
	"inet_client_addr":         {none, oidInet, false},
	"inet_client_port":         {none, answer.OIDInt4, false},
	"txid_current":             {none, answer.OIDInt8, false},
	"pg_is_in_recovery":        {none, answer.OIDBool, false},
	"pg_client_encoding":       {none, answer.OIDName, false},
	"pg_postmaster_start_time": {none, answer.OIDTimestampTZ, false},
	"pg_current_xact_id":       {none, oidXid8, false},
	"set_config":               {[][]string{{"text", "text", "bool"}}, answer.OIDText, true},
	"pg_sleep":                 {[][]string{{"float8"}}, oidVoid, true},

	"pg_advisory_lock":                 {lockArgs, oidVoid, true},
	"pg_advisory_lock_shared":          {lockArgs, oidVoid, true},
	"pg_try_advisory_lock":             {lockArgs, answer.OIDBool, true},
	"pg_try_advisory_lock_shared":      {lockArgs, answer.OIDBool, true},
	"pg_advisory_unlock":               {lockArgs, answer.OIDBool, true},
	"pg_advisory_unlock_shared":        {lockArgs, answer.OIDBool, true},
	"pg_advisory_xact_lock":            {lockArgs, oidVoid, true},
	"pg_advisory_xact_lock_shared":     {lockArgs, oidVoid, true},
	"pg_try_advisory_xact_lock":        {lockArgs, answer.OIDBool, true},
	"pg_try_advisory_xact_lock_shared": {lockArgs, answer.OIDBool, true},
	"pg_advisory_unlock_all":           {none, oidVoid, true},

	// Sequences live in shepherd alone (schema.Sequence): it hands out
	// their values and pins them into what replicas run.
	"nextval": {[][]string{{"regclass"}}, answer.OIDInt8, true},
	"setval":  {[][]string{{"regclass", "int8"}, {"regclass", "int8", "bool"}}, answer.OIDInt8, true},
	"currval": {[][]string{{"regclass"}}, answer.OIDInt8, false},
	"lastval": {none, answer.OIDInt8, false},
}

// svfNames are the session functions written as SQL keywords.
var svfNames = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:    "current_user",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:    "session_user",
	pg_query.SQLValueFunctionOp_SVFOP_USER:            "user",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:    "current_role",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG: "current_catalog",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:  "current_schema",
}

// sessionCall reads n as a call of a session function; nil when it is
// not one. An error refuses a call shepherd cannot evaluate (arguments
// that are not constants or parameters) or PostgreSQL would not find.
func sessionCall(n *pg_query.Node) (*SessionCall, error) {
	if sv := n.GetSqlvalueFunction(); sv != nil {
		name, ok := svfNames[sv.Op]
		if !ok {
			return nil, nil
		}
		return &SessionCall{Func: name, Column: resultColumn(name, sessionFuncs[name].result)}, nil
	}
	fc := n.GetFuncCall()
	if fc == nil || fc.Over != nil || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, nil
	}
	name := schema.FuncName(fc)
	f, ok := sessionFuncs[name]
	if !ok || name == "current_user" || name == "session_user" || name == "user" || name == "current_role" || name == "current_catalog" {
		// (Those are keywords: "current_user"() is some other function.)
		return nil, nil
	}
	c := &SessionCall{Func: name, Column: resultColumn(name, f.result)}
	for _, a := range fc.Args {
		arg, ok := callArg(a)
		if !ok {
			return nil, unsupported("%s() with arguments other than constants and parameters", name)
		}
		c.Args = append(c.Args, arg)
	}
	var types []string
	for _, o := range f.overloads {
		if fits(c.Args, o) {
			types = o
			break
		}
	}
	if types == nil {
		var got []string
		for _, a := range c.Args {
			got = append(got, typeName(a.Type))
		}
		return nil, pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(got, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	for i := range c.Args {
		c.Args[i].Type = types[i]
	}
	return c, nil
}

// resultColumn is the column PostgreSQL gives a call of name.
func resultColumn(name string, oid uint32) answer.Column {
	c := answer.Column{Name: name, Type: answer.TypeOfOID(oid), OID: oid, Size: -1, Mod: -1}
	switch oid {
	case answer.OIDName:
		c.Size = 64
	case answer.OIDInt4, oidVoid:
		c.Size = 4
	case answer.OIDInt8, oidXid8, answer.OIDTimestampTZ:
		c.Size = 8
	case answer.OIDBool:
		c.Size = 1
	}
	switch oid {
	case oidInet, oidVoid:
		c.Type = answer.Text
	case oidXid8:
		c.Type = answer.Int
	}
	return c
}

// callArg reads a constant or parameter argument, through casts.
func callArg(n *pg_query.Node) (CallArg, bool) {
	switch {
	case n.GetParamRef() != nil:
		return CallArg{Param: int(n.GetParamRef().Number), Type: "unknown"}, true
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		a, ok := callArg(tc.Arg)
		if !ok {
			return a, false
		}
		var names []string
		for _, p := range tc.TypeName.GetNames() {
			names = append(names, p.GetString_().GetSval())
		}
		if len(names) > 0 {
			a.Type = argCastType(names[len(names)-1])
		}
		return a, true
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.Isnull:
			return CallArg{Null: true, Type: "unknown"}, true
		case c.GetIval() != nil:
			return CallArg{Value: constString(n), Type: "int4"}, true
		case c.GetFval() != nil:
			if _, err := strconv.ParseInt(c.GetFval().Fval, 10, 64); err == nil {
				// An integer too big for int4: PostgreSQL types it int8.
				return CallArg{Value: c.GetFval().Fval, Type: "int8"}, true
			}
			return CallArg{Value: c.GetFval().Fval, Type: "numeric"}, true
		case c.GetBoolval() != nil:
			return CallArg{Value: constString(n), Type: "bool"}, true
		case c.GetSval() != nil:
			return CallArg{Value: c.GetSval().Sval, Type: "unknown"}, true
		}
	}
	return CallArg{}, false
}

// argCastType names the type of a cast the way fits compares them.
func argCastType(t string) string {
	switch strings.ToLower(t) {
	case "int8", "bigint":
		return "int8"
	case "int4", "int", "integer", "int2", "smallint":
		return "int4"
	case "text", "varchar", "bpchar", "name", "character varying":
		return "text"
	case "bool", "boolean":
		return "bool"
	case "float8", "float4", "double precision", "real":
		return "float8"
	case "numeric", "decimal":
		return "numeric"
	}
	return strings.ToLower(t)
}

// fits reports whether args can be passed as types, by PostgreSQL's
// implicit casts: an untyped literal or parameter goes anywhere, an
// integer to a wider integer or a float, numeric to a float.
func fits(args []CallArg, types []string) bool {
	if len(args) != len(types) {
		return false
	}
	for i, a := range args {
		t := types[i]
		switch {
		case a.Type == "unknown" || a.Type == t:
		case a.Type == "int4" && (t == "int8" || t == "float8"):
		case a.Type == "text" && t == "regclass":
		case (a.Type == "int8" || a.Type == "numeric") && t == "float8":
		default:
			return false
		}
	}
	return true
}

// typeName is a type's name as PostgreSQL's messages write it.
func typeName(t string) string {
	switch t {
	case "int4":
		return "integer"
	case "int8":
		return "bigint"
	case "bool":
		return "boolean"
	case "float8":
		return "double precision"
	}
	return t
}

// sessionSelect reads a SELECT of nothing but session function calls
// (no FROM, WHERE, ...) as a statement shepherd answers alone; nil when
// it is not one.
func sessionSelect(sel *pg_query.SelectStmt) (*SessionOp, error) {
	if op, err := applySelect(sel); op != nil || err != nil {
		return op, err
	}
	if len(sel.FromClause) > 0 {
		return sessionFrom(sel)
	}
	if len(sel.TargetList) == 0 || sel.WhereClause != nil || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.SortClause) > 0 || sel.LimitCount != nil ||
		sel.LimitOffset != nil || len(sel.ValuesLists) > 0 || sel.WithClause != nil || len(sel.DistinctClause) > 0 ||
		len(sel.LockingClause) > 0 || sel.IntoClause != nil || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, nil
	}
	op := &SessionOp{Op: "select"}
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return nil, nil
		}
		c, err := sessionCall(rt.Val)
		if c == nil || err != nil {
			return nil, err
		}
		if rt.Name != "" {
			c.Column.Name = rt.Name
		}
		op.Calls = append(op.Calls, *c)
	}
	return op, nil
}

// sessionFrom reads SELECT * FROM f() [AS a], f a session function, as
// the call alone (TypeORM asks SELECT * FROM current_schema()); nil for
// any other SELECT with a FROM.
func sessionFrom(sel *pg_query.SelectStmt) (*SessionOp, error) {
	if len(sel.FromClause) != 1 || len(sel.TargetList) != 1 || sel.WhereClause != nil || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.WindowClause) > 0 || len(sel.SortClause) > 0 || sel.LimitCount != nil ||
		sel.LimitOffset != nil || sel.WithClause != nil || len(sel.DistinctClause) > 0 || len(sel.LockingClause) > 0 ||
		sel.IntoClause != nil || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, nil
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Name != "" || len(rt.Val.GetColumnRef().GetFields()) != 1 || rt.Val.GetColumnRef().Fields[0].GetAStar() == nil {
		return nil, nil
	}
	rf := sel.FromClause[0].GetRangeFunction()
	if rf == nil || rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || len(items) > 1 && items[1].GetNode() != nil {
		return nil, nil
	}
	c, err := sessionCall(items[0])
	if c == nil || err != nil {
		return nil, err
	}
	if a := rf.Alias; a != nil {
		c.Column.Name = a.Aliasname
		if len(a.Colnames) > 0 {
			c.Column.Name = a.Colnames[0].GetString_().GetSval()
		}
	}
	return &SessionOp{Op: "select", Calls: []SessionCall{*c}}, nil
}

// sessionInFrom refuses a session function in a FROM clause of a
// statement replicas run: pinned, it would be a parameter where a table
// must be.
func sessionInFrom(root *pg_query.Node) error {
	var err error
	walkNodes(root, func(n *pg_query.Node) {
		rf := n.GetRangeFunction()
		if rf == nil || err != nil {
			return
		}
		for _, f := range rf.Functions {
			for _, item := range f.GetList().GetItems() {
				if c, _ := sessionCall(item); c != nil {
					err = unsupported("%s() in FROM with other tables or clauses; use SELECT %s()", c.Func, c.Func)
				}
			}
		}
	})
	return err
}

// analyseSession classifies the session statements shepherd answers
// alone; ok false when n is none of them.
func analyseSession(st *Stmt, n *pg_query.Node) (ok bool, err error) {
	var op *SessionOp
	switch {
	case n.GetSelectStmt() != nil:
		if op, err = sessionSelect(n.GetSelectStmt()); op == nil || err != nil {
			return false, err
		}
		st.Verb, st.ReturnsRows = "SELECT", true
		for _, c := range op.Calls {
			for _, a := range c.Args {
				if a.Param > 0 {
					for len(st.paramTypes) < a.Param {
						st.paramTypes = append(st.paramTypes, "")
					}
					if a.Type != "unknown" && st.paramTypes[a.Param-1] == "" {
						st.paramTypes[a.Param-1] = a.Type
					}
				}
			}
		}
	case n.GetDeallocateStmt() != nil:
		d := n.GetDeallocateStmt()
		op, st.Verb = &SessionOp{Op: "deallocate", Name: d.Name, All: d.Isall}, "DEALLOCATE"
		if d.Isall {
			st.Verb = "DEALLOCATE ALL"
		}
	case n.GetDiscardStmt() != nil:
		target := map[pg_query.DiscardMode]string{
			pg_query.DiscardMode_DISCARD_ALL: "ALL", pg_query.DiscardMode_DISCARD_PLANS: "PLANS",
			pg_query.DiscardMode_DISCARD_SEQUENCES: "SEQUENCES", pg_query.DiscardMode_DISCARD_TEMP: "TEMP",
		}[n.GetDiscardStmt().Target]
		op, st.Verb = &SessionOp{Op: "discard", Name: strings.ToLower(target)}, "DISCARD "+target
	case n.GetClosePortalStmt() != nil:
		name := n.GetClosePortalStmt().Portalname
		op, st.Verb = &SessionOp{Op: "close", Name: name, All: name == ""}, "CLOSE CURSOR"
		if name == "" {
			st.Verb = "CLOSE CURSOR ALL"
		}
	case n.GetDeclareCursorStmt() != nil:
		d := n.GetDeclareCursorStmt()
		if err := checkDeclare(d); err != nil {
			return false, err
		}
		op, st.Verb = &SessionOp{Op: "declare", Name: d.Portalname, Cursor: CursorOptions{
			Hold: d.Options&cursorHold != 0, Scroll: d.Options&cursorScroll != 0, Binary: d.Options&cursorBinary != 0,
			NoScroll: d.Options&cursorNoScroll != 0 || d.Options&(cursorScroll|cursorNoScroll) == 0 && forwardOnly(d.Query),
		}}, "DECLARE CURSOR"
	case n.GetFetchStmt() != nil:
		f := n.GetFetchStmt()
		op = &SessionOp{Op: "fetch", Name: f.Portalname, Fetch: Fetch{
			Direction: map[pg_query.FetchDirection]FetchDirection{
				pg_query.FetchDirection_FETCH_FORWARD: FetchForward, pg_query.FetchDirection_FETCH_BACKWARD: FetchBackward,
				pg_query.FetchDirection_FETCH_ABSOLUTE: FetchAbsolute, pg_query.FetchDirection_FETCH_RELATIVE: FetchRelative,
			}[f.Direction],
			Count: f.HowMany,
			Move:  f.Ismove,
		}}
		st.Verb, st.ReturnsRows = "FETCH", !f.Ismove
		if f.Ismove {
			st.Verb = "MOVE"
		}
	case n.GetConstraintsSetStmt() != nil:
		// Django's TestCase runs SET CONSTRAINTS ALL IMMEDIATE, then
		// DEFERRED. Where a MariaDB or SQLite replica is present,
		// shepherd makes DEFERRABLE foreign keys immediate and refuses
		// other DEFERRABLE constraints (see prepare), so every
		// constraint is immediate and SET CONSTRAINTS ALL changes
		// nothing.
		if len(n.GetConstraintsSetStmt().Constraints) > 0 {
			return false, unsupported("SET CONSTRAINTS of named constraints; constraints are not DEFERRABLE")
		}
		op, st.Verb = &SessionOp{Op: "constraints", All: true}, "SET CONSTRAINTS"
	case n.GetCreateSeqStmt() != nil:
		op, st.Verb = &SessionOp{Op: "sequence", DDL: n}, "CREATE SEQUENCE"
	case n.GetAlterSeqStmt() != nil:
		op, st.Verb = &SessionOp{Op: "sequence", DDL: n}, "ALTER SEQUENCE"
	case n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg_query.ObjectType_OBJECT_SEQUENCE:
		op, st.Verb = &SessionOp{Op: "sequence", DDL: n}, "DROP SEQUENCE"
	case n.GetRenameStmt() != nil && n.GetRenameStmt().RenameType == pg_query.ObjectType_OBJECT_SEQUENCE:
		return false, unsupported("ALTER SEQUENCE ... RENAME")
	case n.GetLockStmt() != nil:
		l := n.GetLockStmt()
		lock := LockOp{Mode: int(l.Mode), NoWait: l.Nowait}
		for _, r := range l.Relations {
			rv := r.GetRangeVar()
			if rv == nil {
				return false, unsupported("this LOCK TABLE target")
			}
			name := rv.Relname
			if rv.Schemaname != "" && rv.Schemaname != "public" {
				name = rv.Schemaname + "." + name
			}
			lock.Relations = append(lock.Relations, name)
		}
		op, st.Verb = &SessionOp{Op: "lock", Lock: lock}, "LOCK TABLE"
	case n.GetVacuumStmt() != nil:
		v := n.GetVacuumStmt()
		vac := VacuumOp{Vacuum: v.IsVacuumcmd}
		for _, r := range v.Rels {
			rv := r.GetVacuumRelation().GetRelation()
			if rv == nil {
				return false, unsupported("this VACUUM target")
			}
			name := rv.Relname
			if rv.Schemaname != "" && rv.Schemaname != "public" {
				name = rv.Schemaname + "." + name
			}
			vac.Relations = append(vac.Relations, name)
		}
		op, st.Verb = &SessionOp{Op: "vacuum", Vacuum: vac}, "VACUUM"
		if !v.IsVacuumcmd {
			st.Verb = "ANALYZE"
		}
	case n.GetPrepareStmt() != nil:
		p := n.GetPrepareStmt()
		body, err := prepareBody(st.SQL)
		if err != nil {
			return false, err
		}
		prep := PrepareOp{Body: body}
		catalog := pgcatalog.Reads(p.Query)
		for _, t := range p.Argtypes {
			oid, err := declaredType(t.GetTypeName(), catalog)
			if err != nil {
				return false, err
			}
			prep.ParamOIDs = append(prep.ParamOIDs, oid)
		}
		op, st.Verb = &SessionOp{Op: "prepare", Name: p.Name, Prepare: prep}, "PREPARE"
	case n.GetExecuteStmt() != nil:
		e := n.GetExecuteStmt()
		op = &SessionOp{Op: "execute", Name: e.Name}
		for _, a := range e.Params {
			c, ok := callArg(a)
			if !ok {
				return false, unsupported("EXECUTE with an argument other than a constant or parameter")
			}
			op.Args = append(op.Args, c)
			if c.Param > 0 {
				for len(st.paramTypes) < c.Param {
					st.paramTypes = append(st.paramTypes, "")
				}
			}
		}
		st.Verb = "EXECUTE"
	case n.GetListenStmt() != nil:
		op, st.Verb = &SessionOp{Op: "listen", Name: n.GetListenStmt().Conditionname}, "LISTEN"
	case n.GetNotifyStmt() != nil:
		op, st.Verb = &SessionOp{Op: "notify", Name: n.GetNotifyStmt().Conditionname, Payload: n.GetNotifyStmt().Payload}, "NOTIFY"
	case n.GetUnlistenStmt() != nil:
		name := n.GetUnlistenStmt().Conditionname
		op, st.Verb = &SessionOp{Op: "unlisten", Name: name, All: name == ""}, "UNLISTEN"
	default:
		return false, nil
	}
	st.Kind, st.Session = Local, op
	return true, nil
}

// pinSession pins the session functions inside a statement that replicas
// run: each replica receives shepherd's value as a parameter. A function
// that changes state (set_config, advisory locks, pg_sleep) is refused
// there: whether and how often PostgreSQL would call it depends on the
// rows.
func (r *rewriter) pinSession(root *pg_query.Node) error {
	if err := sessionInFrom(root); err != nil {
		return err
	}
	once := onceCalls(root)
	walkNodes(root, func(n *pg_query.Node) {
		if r.err != nil {
			return
		}
		c, err := sessionCall(n)
		if err != nil {
			r.err = err
			return
		}
		if c == nil {
			return
		}
		if c.Func == "nextval" && once[n] {
			*n = *r.pin(Pin{Kind: PinSession, Call: c})
			return
		}
		if sessionFuncs[c.Func].effect {
			if c.Func == "nextval" {
				r.err = unsupported("nextval() here: how often PostgreSQL calls it depends on rows or conditions shepherd does not see " +
					"(a query with FROM or WHERE, INSERT ... SELECT, UPDATE, inside an expression); use it alone as a VALUES item, " +
					"a column default, or a result column of a SELECT without FROM")
				return
			}
			r.err = unsupported("%s() inside another statement; call it on its own (SELECT %s(...))", c.Func, c.Func)
			return
		}
		*n = *r.pin(Pin{Kind: PinSession, Call: c})
	})
	return r.err
}

// onceCalls returns the nextval() calls of a statement that PostgreSQL
// makes exactly once each, in the order walkNodes visits them: an
// INSERT's VALUES items (also of the VALUES list an INSERT ... SELECT
// reads row by row, see valuesSource) and the result columns of a SELECT without FROM
// or WHERE (one row), each the call alone or cast. Elsewhere the number
// of calls depends on rows shepherd does not see.
func onceCalls(root *pg_query.Node) map[*pg_query.Node]bool {
	out := map[*pg_query.Node]bool{}
	add := func(n *pg_query.Node) {
		if tc := n.GetTypeCast(); tc != nil {
			n = tc.Arg
		}
		if fc := n.GetFuncCall(); fc != nil && schema.FuncName(fc) == "nextval" {
			out[n] = true
		}
	}
	switch {
	case root.GetInsertStmt() != nil:
		sel := root.GetInsertStmt().GetSelectStmt().GetSelectStmt()
		if sel == nil || sel.Op != pg_query.SetOperation_SETOP_NONE {
			break
		}
		if src := valuesSource(sel); src != nil {
			// INSERT ... SELECT ... FROM (VALUES ...) (SQLAlchemy's
			// insertmanyvalues with a Sequence): the VALUES scan calls
			// each row's nextval() once, in the list's order, before
			// any sort.
			sel = src.values
		}
		for _, row := range sel.ValuesLists {
			for _, item := range row.GetList().GetItems() {
				add(item)
			}
		}
	case root.GetSelectStmt() != nil:
		sel := root.GetSelectStmt()
		if len(sel.FromClause) > 0 || sel.WhereClause != nil || len(sel.GroupClause) > 0 || sel.HavingClause != nil ||
			len(sel.ValuesLists) > 0 || sel.Op != pg_query.SetOperation_SETOP_NONE || sel.WithClause != nil ||
			sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.WindowClause) > 0 {
			break
		}
		for _, t := range sel.TargetList {
			if v := t.GetResTarget().GetVal(); v != nil {
				add(v)
			}
		}
	}
	return out
}

// pinType is the PostgreSQL type a pinned call is cast to: one every
// dialect writes (name and inet travel as text).
func (c *SessionCall) pinType() string {
	switch c.Column.OID {
	case answer.OIDInt4:
		return "int4"
	case answer.OIDInt8, oidXid8:
		return "int8"
	case answer.OIDBool:
		return "bool"
	case answer.OIDTimestampTZ:
		return "timestamptz"
	}
	return "text"
}

// quoteIdent quotes a name as PostgreSQL's quote_identifier does when it
// is not a plain lower-case identifier (keywords aside).
func quoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// applySelect reads SELECT setval(seq, expr [, expr]) [FROM ... WHERE
// ...], whose arguments are not all constants and parameters (Django's
// sqlsequencereset: setval(pg_get_serial_sequence('t', 'id'),
// coalesce(max(id), 1), max(id) IS NOT null) FROM t), as Op "apply": the
// replicas answer the query of the arguments (voted, like any read), and
// shepherd, which keeps the sequences, calls setval() once per row of it.
// nil for any other SELECT.
func applySelect(sel *pg_query.SelectStmt) (*SessionOp, error) {
	if len(sel.TargetList) != 1 || sel.Op != pg_query.SetOperation_SETOP_NONE || len(sel.ValuesLists) > 0 ||
		len(sel.DistinctClause) > 0 || sel.IntoClause != nil || len(sel.WindowClause) > 0 {
		return nil, nil
	}
	rt := sel.TargetList[0].GetResTarget()
	fc := rt.GetVal().GetFuncCall()
	if fc == nil || schema.FuncName(fc) != "setval" || fc.Over != nil || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
		return nil, nil
	}
	f := sessionFuncs["setval"]
	c := SessionCall{Func: "setval", Column: resultColumn("setval", f.result)}
	if rt.Name != "" {
		c.Column.Name = rt.Name
	}
	inner := proto.Clone(sel).(*pg_query.SelectStmt)
	inner.TargetList = nil
	computed := len(sel.FromClause) > 0
	for _, a := range fc.Args {
		if arg, ok := callArg(a); ok {
			c.Args = append(c.Args, arg)
			continue
		}
		if g := a.GetFuncCall(); g != nil && schema.FuncName(g) == "pg_get_serial_sequence" && len(g.Args) == 2 {
			t, okT := callArg(g.Args[0])
			col, okC := callArg(g.Args[1])
			if okT && okC {
				c.Args = append(c.Args, CallArg{SerialOf: []CallArg{t, col}, Type: "text"})
				computed = true // from the catalog, at execution
				continue
			}
		}
		computed = true
		inner.TargetList = append(inner.TargetList, pg_query.MakeResTargetNodeWithVal(proto.Clone(a).(*pg_query.Node), -1))
		c.Args = append(c.Args, CallArg{Column: len(inner.TargetList), Type: "unknown"})
	}
	if !computed {
		return nil, nil // constants and parameters: a plain call (sessionCall)
	}
	if len(inner.TargetList) == 0 {
		// SELECT setval('s', 1) FROM t: one call per row.
		inner.TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)}
	}
	var types []string
	for _, o := range f.overloads {
		if fits(c.Args, o) {
			types = o
		}
	}
	if types == nil {
		return nil, pgerr.New(pgerr.UndefinedFunction, "function setval with %d arguments does not exist", len(c.Args)).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	for i := range c.Args {
		c.Args[i].Type = types[i]
	}
	root := &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}}
	order := renumber(root)
	return &SessionOp{Op: "apply", Calls: []SessionCall{c}, Apply: root, ApplyParams: order}, nil
}

// prepareBody returns the statement of a PREPARE's text: what follows
// its AS (the first one outside the parenthesised parameter types).
func prepareBody(text string) (string, error) {
	sc, err := pg_query.Scan(text)
	if err != nil {
		return "", syntaxError(err)
	}
	depth := 0
	for _, t := range sc.Tokens {
		switch t.Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_AS:
			if depth == 0 {
				return strings.TrimSpace(text[t.End:]), nil
			}
		}
	}
	return "", pgerr.New(pgerr.SyntaxError, "syntax error in PREPARE: no AS")
}

// catalogParamOIDs are the types a PREPARE of a catalog query (which
// shepherd answers, see pgcatalog.Reads) may declare besides typeOIDs':
// pg_dump's PREPARE getColumnACLs(pg_catalog.oid), dumpFunc(oid), ...
var catalogParamOIDs = map[string]uint32{"oid": 26, "regclass": 2205, "regproc": 24, "regtype": 2206, "name": 19}

// declaredType is the OID of a type PREPARE declares a parameter as;
// "unknown" leaves it to be inferred, as in PostgreSQL. catalog: the
// statement is a catalog query (catalogParamOIDs).
func declaredType(tn *pg_query.TypeName, catalog bool) (uint32, error) {
	if tn == nil || len(tn.ArrayBounds) > 0 || tn.Setof {
		return 0, unsupported("this parameter type in PREPARE")
	}
	var names []string
	for _, p := range tn.GetNames() {
		names = append(names, p.GetString_().GetSval())
	}
	name := names[len(names)-1]
	if len(names) == 1 && name == "unknown" {
		return 0, nil
	}
	if oid, ok := typeOIDs[name]; ok && (len(names) == 1 || names[0] == "pg_catalog") {
		return oid, nil
	}
	if oid, ok := catalogParamOIDs[name]; ok && catalog && (len(names) == 1 || names[0] == "pg_catalog") {
		return oid, nil
	}
	return 0, unsupported("parameters of type %s in PREPARE", strings.Join(names, "."))
}
