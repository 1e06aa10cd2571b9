package pgcatalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"modernc.org/sqlite"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Reads reports whether a statement is a catalog query: a SELECT that
// names a relation of pg_catalog or information_schema, or calls a
// catalog function or casts to a reg* type. Such a statement is answered
// by the engine, not by the replicas.
func Reads(n *pg_query.Node) bool {
	sel := n.GetSelectStmt()
	if sel == nil || sel.IntoClause != nil || len(sel.LockingClause) > 0 {
		return false
	}
	return Names(n)
}

// Names reports whether a statement names a relation of pg_catalog or
// information_schema, calls a catalog function or casts to a reg* type
// (a sequence function's reg* argument aside). Outside a catalog query
// (Reads) the replicas would answer it from their own catalogs, each
// differently, so such a statement is refused.
func Names(n *pg_query.Node) bool {
	found, seq := false, false
	pgtree.Walk(n.ProtoReflect(), func(m protoreflect.Message) bool {
		if seq {
			return false
		}
		switch x := m.Interface().(type) {
		case *pg_query.RangeVar:
			switch x.Schemaname {
			case "pg_catalog", "information_schema":
				found = found || relByName[x.Relname] != nil || relByName["information_schema."+x.Relname] != nil
			case "":
				found = found || relByName[x.Relname] != nil && strings.HasPrefix(x.Relname, "pg_")
			}
		case *pg_query.FuncCall:
			switch name := funcName(x.Funcname); name {
			case "nextval", "currval", "setval", "lastval":
				// A sequence function (nextval('s'::regclass), as
				// pg_dump and Hibernate write it) is the session's, not
				// the catalog's, whatever reg* cast names its sequence.
				seq = true
				return false
			default:
				found = found || catalogFunction(name)
			}
		case *pg_query.TypeCast:
			if _, ok := regTypes[typeName(x.TypeName)]; ok {
				found = true
			}
		}
		return true
	})
	return found && !seq
}

// ReadsSequence reports whether a statement is a SELECT that reads a
// sequence of snap as a relation (pg_dump: SELECT last_value, is_called
// FROM public.dept_id_seq): sequences, SERIAL columns' too, are
// shepherd's alone, so the catalog answers it (see the rewriter's
// fromItem), not the replicas, which have no such relation.
func ReadsSequence(n *pg_query.Node, snap *schema.Snapshot) bool {
	sel := n.GetSelectStmt()
	if sel == nil || sel.IntoClause != nil || len(sel.LockingClause) > 0 || len(sel.FromClause) != 1 || sel.WithClause != nil {
		return false
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Schemaname != "" && rv.Schemaname != "public" || snap.Table(rv.Relname) != nil {
		return false
	}
	return isSequence(snap, rv.Relname)
}

// isSequence reports whether name is a sequence of snap: a CREATE
// SEQUENCE one, or a SERIAL or IDENTITY column's (table_column_seq).
func isSequence(snap *schema.Snapshot, name string) bool {
	if snap.Sequence(name) != nil {
		return true
	}
	_, _, ok := snap.SerialSequence(name)
	return ok
}

// catalogFunction reports whether a function is one of the catalog's
// (its mere use makes a query a catalog query).
func catalogFunction(name string) bool {
	switch name {
	case "format_type", "pg_encoding_to_char", "obj_description", "col_description", "shobj_description",
		"pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible", "pg_collation_is_visible",
		"pg_get_keywords", "current_schemas", "pg_has_role", "pg_opclass_is_visible", "pg_operator_is_visible":
		return true
	}
	return strings.HasPrefix(name, "pg_get_") || strings.HasPrefix(name, "to_reg") ||
		strings.HasPrefix(name, "has_") && strings.HasSuffix(name, "_privilege")
}

// Session is what a catalog query's answer depends on besides the
// schema.
type Session struct {
	// User is the session's user name (current_user).
	User string
	// Database is the database the session connected to ("": postgres).
	Database string
	// Databases are the other databases pg_database lists besides
	// PostgreSQL's built-in ones and Database (those made with CREATE
	// DATABASE).
	Databases []string
	// Settings are the parameters the session SET (lower-case names),
	// which current_setting() answers before pg_settings.
	Settings map[string]string
	// SetConfig, when set, is the session's SET for set_config(name,
	// value, is_local) in a catalog query (a nil value resets): it
	// returns the setting's new value. Without it set_config() is
	// refused.
	SetConfig func(name string, value *string, local bool) (string, error)
	// SeqLast, when set, gives a CREATE SEQUENCE sequence's last value
	// handed out (false: none yet), for pg_sequences.last_value.
	SeqLast func(name string) (int64, bool)
	// SerialLast, when set, is SeqLast for the sequence of SERIAL or
	// IDENTITY column table.column.
	SerialLast func(table, column string) (int64, bool)
	// ViewColumns, when set, gives a view's result columns (shepherd's
	// schema does not record them; the statement analyser works them
	// out from the view's query).
	ViewColumns func(view *schema.Table) []answer.Column
}

// prepared is a catalog query written for the engine.
type prepared struct {
	sql    string
	consts []any
	cols   []outCol
	params []string // the client's parameters' types where known (rewriter.paramTypes)
}

// prepare rewrites tree for the engine. The caller holds e.mu and has
// loaded the schema.
func (e *Engine) prepare(ctx context.Context, tree *pg_query.Node, nClient int, sess Session, setToken int64) (*prepared, error) {
	sel := tree.GetSelectStmt()
	if sel == nil {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "shepherd's catalog answers only SELECT")
	}
	sel = proto.Clone(sel).(*pg_query.SelectStmt)
	r := &rewriter{nClient: nClient, user: sess.User, database: sess.Database, settings: sess.Settings, setToken: setToken}
	if r.database == "" {
		r.database = defaultDatabase
	}
	r.lookup = func(q string, args ...any) (any, bool, error) {
		var v any
		err := e.conn.QueryRowContext(ctx, q, args...).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, nil
		}
		return v, err == nil, err
	}
	cols := r.selectCols(sel, true)
	if r.err != nil {
		return nil, r.err
	}
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion, Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil {
		return nil, pgerr.Wrap(pgerr.InternalError, err, "writing a catalog query")
	}
	p := &prepared{sql: text, consts: r.consts, params: r.paramTypes}
	for _, c := range cols {
		p.cols = append(p.cols, outCol{name: c.name, typ: c.typ})
	}
	return p, nil
}

var parseVersion = func() int32 {
	t, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0
	}
	return t.Version
}()

// Describe returns the type OIDs of a catalog query's nParams parameters
// (0 where the query does not tell it, as PostgreSQL infers them: the
// type a parameter is cast to or the column it is compared with; a client
// such as asyncpg looks up every type it is told, so an unspecified one
// is not harmless) and its result columns.
func (e *Engine) Describe(ctx context.Context, tree *pg_query.Node, nParams int, snap *schema.Snapshot, sess Session) (_ []uint32, _ []answer.Column, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer recoverInto(&err)
	if err := e.load(ctx, snap, sess.ViewColumns, sess.Database, sess.Databases); err != nil {
		return nil, nil, pgerr.Wrap(pgerr.InternalError, err, "loading shepherd's catalog")
	}
	var token int64
	if sess.SetConfig != nil {
		token = -1 // described, never run
	}
	p, err := e.prepare(ctx, tree, nParams, sess, token)
	if err != nil {
		return nil, nil, err
	}
	params := make([]uint32, nParams)
	for i, t := range p.params {
		if pt := typeByName[t]; pt != nil && i < nParams {
			params[i] = pt.oid
		}
	}
	return params, columnsOf(p.cols), nil
}

func columnsOf(cols []outCol) []answer.Column {
	out := make([]answer.Column, len(cols))
	for i, c := range cols {
		var oid uint32 = answer.OIDText
		size := int16(-1)
		if t := typeByName[c.typ]; t != nil {
			oid, size = t.oid, t.len
		}
		out[i] = answer.Column{Name: c.name, Type: answer.TypeOfOID(oid), OID: oid, Size: size, Mod: -1}
		if out[i].Type == answer.Unknown {
			out[i].Type = answer.Text
		}
	}
	return out
}

// Query answers a catalog query over the schema snap, as session sess
// sees it, with the client's arguments.
func (e *Engine) Query(ctx context.Context, tree *pg_query.Node, args []driver.Arg, snap *schema.Snapshot, sess Session) (_ *answer.Answer, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer recoverInto(&err)
	if err := e.load(ctx, snap, sess.ViewColumns, sess.Database, sess.Databases); err != nil {
		return nil, pgerr.Wrap(pgerr.InternalError, err, "loading shepherd's catalog")
	}
	if err := e.seqLast(ctx, snap, sess.SeqLast, sess.SerialLast); err != nil {
		return nil, pgerr.Wrap(pgerr.InternalError, err, "loading shepherd's catalog")
	}
	var token int64
	var set *setter
	if sess.SetConfig != nil {
		var done func()
		token, set, done = addSetter(sess.SetConfig)
		defer done()
	}
	p, err := e.prepare(ctx, tree, len(args), sess, token)
	if err != nil {
		return nil, err
	}
	bind := make([]any, 0, len(args)+len(p.consts))
	for _, a := range args {
		switch {
		case a.Null:
			bind = append(bind, nil)
		case a.Type == answer.Int:
			if n, err := strconv.ParseInt(a.Text, 10, 64); err == nil {
				bind = append(bind, n)
				continue
			}
			bind = append(bind, a.Text)
		case a.Type == answer.Bool:
			bind = append(bind, bool01(a.Text == "t" || a.Text == "true"))
		default:
			bind = append(bind, a.Text)
		}
	}
	bind = append(bind, p.consts...)
	qctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	fail := func(err error) error { return e.limited(ctx, qctx, set.fail(err), err) }
	rows, err := e.conn.QueryContext(qctx, e.bounded(p.sql), bind...)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	a := &answer.Answer{Columns: columnsOf(p.cols)}
	n, size := len(p.cols), 0
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fail(err)
		}
		row := make([]answer.Value, n)
		for i, v := range vals {
			row[i] = e.output(qctx, v, p.cols[i].typ, a.Columns[i].Type)
			size += len(row[i].Text) + 1
		}
		if size > e.maxBytes || len(a.Rows) >= e.maxRows() {
			return nil, tooLarge(e.maxBytes)
		}
		a.Rows = append(a.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	a.Tag = answer.Tag("SELECT", int64(len(a.Rows)))
	a.RowsAffected = int64(len(a.Rows))
	return a, nil
}

// bounded wraps sql, a rewritten catalog query, so that the engine can
// stop it at any point (see Query's limits): as a materialized common
// table expression, all of its work is done in the statement's first
// step, which the driver interrupts when the query's context ends (a
// later step, reading the next row, it does not), and it keeps at most
// one row more than an answer may have. The outer SELECT reads the rows
// in the order the query made them.
func (e *Engine) bounded(sql string) string {
	return "WITH shepherd_answer AS MATERIALIZED (SELECT * FROM (" + sql + ") LIMIT " +
		strconv.Itoa(e.maxRows()+1) + ") SELECT * FROM shepherd_answer"
}

// maxRows is the most rows an answer may have: every value takes a byte
// at least (see Query).
func (e *Engine) maxRows() int { return e.maxBytes }

// limited is the error of a catalog query that failed with err (failed:
// as the client would get it otherwise) where one of the engine's limits
// may have stopped it: the client's cancel (ctx) gives 57014, the time
// limit (qctx) or SQLite's limit on a value's length 54000.
func (e *Engine) limited(ctx, qctx context.Context, failed, err error) error {
	switch {
	case ctx.Err() != nil:
		return pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
	case qctx.Err() != nil:
		return pgerr.New(pgerr.ProgramLimitExceeded, "the catalog query ran longer than shepherd's limit of %s for a catalog query", e.timeout).
			WithDetail("shepherd answers catalog queries one at a time, so a long one would hold up every session's.")
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqliteTooBig {
		return tooLarge(e.maxBytes)
	}
	return failed
}

// sqliteTooBig is SQLite's SQLITE_TOOBIG: a value longer than the
// connection's length limit (set to the answer limit: see New).
const sqliteTooBig = 18

func tooLarge(limit int) error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "the catalog query's answer exceeds shepherd's limit of %d MB for a catalog query", limit>>20).
		WithDetail("shepherd answers catalog queries one at a time and holds the whole answer in memory.")
}

// recoverInto turns a panic of the rewriter (a bug: a parse tree it did
// not expect) into an error for the client; nothing shared was changed.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = pgerr.New(pgerr.InternalError, "shepherd's catalog failed on the query (a bug): %v", r)
	}
}

func engineError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "invalid input syntax"); i >= 0 {
		return pgerr.New("22P02", "%s", msg[i:])
	}
	if i := strings.Index(msg, "invalid regular expression"); i >= 0 {
		return pgerr.New("2201B", "%s", msg[i:])
	}
	return pgerr.New(pgerr.InternalError, "shepherd's catalog could not answer the query: %s", msg)
}

// output writes a value the engine returned as PostgreSQL prints a value
// of type typ.
func (e *Engine) output(ctx context.Context, v any, typ string, fam answer.Type) answer.Value {
	if v == nil {
		return answer.Null
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	switch kindOf(typ) {
	case kBool:
		switch x := v.(type) {
		case int64:
			return answer.V(fam, map[bool]string{true: "t", false: "f"}[x != 0])
		case float64:
			return answer.V(fam, map[bool]string{true: "t", false: "f"}[x != 0])
		}
	case kInt:
		if rt, ok := regTypes[typ]; ok {
			n, _ := v.(int64)
			if typ == "regtype" {
				return answer.V(answer.Text, formatType(uint32(n), -1))
			}
			var name string
			err := e.conn.QueryRowContext(ctx, "SELECT "+rt.col+" FROM pg_catalog."+rt.rel+" WHERE oid = ?", n).Scan(&name)
			if err != nil {
				return answer.V(answer.Text, toText(v))
			}
			return answer.V(answer.Text, quoteIfNeeded(name))
		}
		if f, ok := v.(float64); ok {
			return answer.V(fam, strconv.FormatInt(int64(f), 10))
		}
	case kFloat:
		switch x := v.(type) {
		case float64:
			return answer.V(fam, strconv.FormatFloat(x, 'g', -1, 64))
		case int64:
			return answer.V(fam, strconv.FormatInt(x, 10))
		}
	case kArray:
		s := toText(v)
		var arr []any
		if strings.HasPrefix(s, "[") && json.Unmarshal([]byte(s), &arr) == nil {
			return answer.V(fam, arrayText(typ, arr))
		}
		return answer.V(fam, s)
	}
	return answer.V(fam, toText(v))
}

// arrayText writes a JSON array as PostgreSQL's text form of type typ.
func arrayText(typ string, arr []any) string {
	parts := make([]string, len(arr))
	for i, e := range arr {
		switch {
		case e == nil:
			parts[i] = "NULL"
		default:
			s := elemText(e)
			if typ == "_bool" {
				if f, ok := e.(float64); ok {
					s = map[bool]string{true: "t", false: "f"}[f != 0]
				}
			}
			if typ != "int2vector" && typ != "oidvector" && (s == "" || strings.ContainsAny(s, `{},"\ `) || strings.EqualFold(s, "null")) {
				s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
			}
			parts[i] = s
		}
	}
	if typ == "int2vector" || typ == "oidvector" {
		return strings.Join(parts, " ")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// seqLast writes the sequences' last values for pg_sequences as they are
// now (they change without a new schema snapshot). The caller holds e.mu.
func (e *Engine) seqLast(ctx context.Context, snap *schema.Snapshot, last func(string) (int64, bool), serial func(string, string) (int64, bool)) error {
	if _, err := e.conn.ExecContext(ctx, "DELETE FROM pg_catalog.shepherd_seqlast"); err != nil {
		return err
	}
	if snap == nil {
		return nil
	}
	// last is pg_sequences.last_value (NULL before the first nextval);
	// rel_last and called are what the sequence read as a relation
	// shows (see the rewriter's sequenceRel): PostgreSQL's last_value
	// and is_called.
	var err error
	put := func(name string, v int64, ok bool) {
		if err != nil {
			return
		}
		var last any
		if ok {
			last = v
		}
		_, err = e.conn.ExecContext(ctx, "INSERT INTO pg_catalog.shepherd_seqlast VALUES (?, ?, ?, ?)", name, last, v, bool01(ok))
	}
	if last != nil {
		for name := range snap.Sequences {
			v, ok := last(name)
			put(name, v, ok)
		}
	}
	if serial != nil {
		for _, t := range snap.Tables {
			for _, c := range t.Columns {
				if c.Fill == schema.FillSerial && !hidden(t.Name) {
					if v, ok := serial(t.Name, c.Name); ok {
						put(seqName(t, &c), v, ok)
					}
				}
			}
		}
	}
	return err
}
