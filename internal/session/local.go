package session

import (
	"context"
	"fmt"
	"math"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Version is what version() answers: PostgreSQL's form ("PostgreSQL 15.0
// (...) on <platform>, compiled by ..., 64-bit"), which clients parse for
// the version number, naming shepherd.
var Version = fmt.Sprintf("PostgreSQL %s on %s, compiled by %s, %d-bit",
	ServerVersion, platform(), runtime.Version(), strconv.IntSize)

// platform names the platform as PostgreSQL's build does
// (x86_64-pc-linux-gnu).
func platform() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	if runtime.GOOS == "linux" {
		return arch + "-pc-linux-gnu"
	}
	return arch + "-" + runtime.GOOS
}

// Attach implements pgwire.Attacher: the connection's protocol state, for
// DEALLOCATE and CLOSE, and its process id and addresses, for
// pg_backend_pid() and inet_server_addr().
func (s *Session) Attach(c pgwire.Conn) { s.conn = c }

// runLocal answers a statement shepherd answers alone (Kind Local).
func (s *Session) runLocal(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	op := st.Session
	tag := &answer.Answer{Tag: st.Verb}
	switch op.Op {
	case "select":
		return s.callAll(ctx, op.Calls, args)
	case "apply":
		return s.applyCall(ctx, st, args)
	case "sequence":
		if err := s.sequenceDDL(st); err != nil {
			return nil, err
		}
	case "deallocate":
		switch {
		case s.conn == nil:
		case op.All:
			s.conn.DropAllStatements()
		case !s.conn.DropStatement(op.Name):
			return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement %q does not exist", op.Name)
		}
	case "lock":
		return s.lockTables(ctx, st)
	case "vacuum":
		// VACUUM and ANALYZE (pgbench -i runs them) change no answer:
		// PostgreSQL's checks, then nothing.
		if op.Vacuum.Vacuum && (s.inBlock || s.implicit) {
			return nil, pgerr.New(pgerr.ActiveSQLTransaction, "VACUUM cannot run inside a transaction block")
		}
		snap, err := s.visibleSchema()
		if err != nil {
			return nil, err
		}
		for _, name := range op.Vacuum.Relations {
			if strings.Contains(name, ".") || snap.Table(name) == nil {
				return nil, pgerr.New(pgerr.UndefinedTable, "relation %q does not exist", name)
			}
		}
	case "prepare":
		if err := s.prepareSQL(ctx, op); err != nil {
			return nil, err
		}
	case "execute":
		return s.executeSQL(ctx, op, args)
	case "declare":
		return s.declare(ctx, st, args)
	case "fetch":
		return s.fetch(st)
	case "close":
		if !op.All {
			if err := s.closeCursor(op.Name); err != nil {
				return nil, err
			}
			break
		}
		clear(s.cursors)
		if s.conn != nil {
			s.conn.DropAllPortals()
		}
	case "discard":
		if op.Name == "all" {
			if s.inBlock || s.implicit {
				return nil, pgerr.New(pgerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
			}
			// PostgreSQL's DISCARD ALL: SET SESSION AUTHORIZATION DEFAULT;
			// RESET ALL; DEALLOCATE ALL; CLOSE ALL; UNLISTEN *;
			// SELECT pg_advisory_unlock_all(); DISCARD PLANS, TEMP,
			// SEQUENCES.
			clear(s.params)
			s.defaults = s.startDefaults
			s.lastXid = 0
			s.seqs.curr, s.seqs.last = nil, ""
			clear(s.cursors)
			if s.conn != nil {
				s.conn.DropAllStatements()
				s.conn.DropAllPortals()
			}
			s.shared.locks.release(&s.owner, true)
			s.listen(listenOp{all: true})
		}
		if op.Name == "sequences" {
			s.seqs.curr, s.seqs.last = nil, ""
		}
		// PLANS (nothing cached) and TEMP (temporary tables are
		// refused) leave nothing to do.
	case "listen":
		s.listen(listenOp{channel: op.Name, listen: true})
	case "unlisten":
		s.listen(listenOp{channel: op.Name, all: op.All})
	case "notify":
		if err := s.notify(op.Name, op.Payload); err != nil {
			return nil, err
		}
	}
	return tag, nil
}

// applyCall answers SELECT setval(seq, expr, ...) FROM ... (Op "apply"): the
// replicas answer the query of the arguments, a read like any other
// (voted), and the call is made once per row of its answer, in its
// order, as PostgreSQL makes it.
func (s *Session) applyCall(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	op := st.Session
	inArgs := make([]driver.Arg, len(op.ApplyParams))
	for i, n := range op.ApplyParams {
		inArgs[i] = driver.Arg{Null: true}
		if n <= len(args) {
			inArgs[i] = args[n-1]
		}
	}
	rows, err := s.exec(ctx, st.Inner, inArgs)
	if err != nil {
		return nil, err
	}
	tmpl := op.Calls[0]
	a := &answer.Answer{Columns: []answer.Column{tmpl.Column}}
	for _, row := range rows.Rows {
		c := tmpl
		c.Args = append([]sqlan.CallArg(nil), tmpl.Args...)
		for i, arg := range c.Args {
			switch {
			case arg.Column > 0:
				v := row[arg.Column-1]
				c.Args[i] = sqlan.CallArg{Value: v.Text, Null: v.Null, Type: arg.Type}
			case arg.SerialOf != nil:
				seq, err := s.serialSequence(ctx, arg.SerialOf, args)
				if err != nil {
					return nil, err
				}
				c.Args[i] = sqlan.CallArg{Value: seq.Text, Null: seq.Null, Type: arg.Type}
			}
		}
		v, err := s.evalCall(ctx, &c, args)
		if err != nil {
			return nil, err
		}
		a.Rows = append(a.Rows, []answer.Value{v})
	}
	a.RowsAffected = int64(len(a.Rows))
	a.Tag = answer.Tag("SELECT", a.RowsAffected)
	return a, nil
}

// serialSequence answers pg_get_serial_sequence(table, column) from
// shepherd's catalog.
func (s *Session) serialSequence(ctx context.Context, callArgs []sqlan.CallArg, args []driver.Arg) (answer.Value, error) {
	sts, err := s.parse("SELECT pg_catalog.pg_get_serial_sequence($1::text, $2::text)")
	if err != nil {
		return answer.Value{}, err
	}
	in := make([]driver.Arg, len(callArgs))
	for i, a := range callArgs {
		in[i] = driver.Arg{Text: a.Value, Null: a.Null}
		if a.Param > 0 && a.Param <= len(args) {
			in[i] = args[a.Param-1]
		}
	}
	if !in[0].Null {
		// The table's name is read as SQL names are (quotes, case, the
		// schema), the column's as it is.
		name, err := schema.SequenceName(in[0].Text)
		if err != nil {
			return answer.Value{}, err
		}
		in[0] = driver.Arg{Text: name}
		// PostgreSQL's errors for a table or column that is not there
		// (the catalog's function would answer NULL).
		snap, err := s.visibleSchema()
		if err != nil {
			return answer.Value{}, err
		}
		t := snap.Table(name)
		switch {
		case t == nil:
			return answer.Value{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
		case !in[1].Null && t.Column(in[1].Text) == nil:
			return answer.Value{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", in[1].Text, name)
		}
	}
	r, err := s.catalogQuery(ctx, sts[0], in)
	if err != nil {
		return answer.Value{}, err
	}
	if len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return answer.Value{}, pgerr.New(pgerr.InternalError, "pg_get_serial_sequence gave no answer (a bug)")
	}
	return r.Rows[0][0], nil
}

// callAll answers a SELECT of session function calls.
func (s *Session) callAll(ctx context.Context, calls []sqlan.SessionCall, args []driver.Arg) (*answer.Answer, error) {
	a := &answer.Answer{Tag: "SELECT", RowsAffected: 1}
	row := make([]answer.Value, len(calls))
	for i := range calls {
		c := &calls[i]
		a.Columns = append(a.Columns, c.Column)
		v, err := s.evalCall(ctx, c, args)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	a.Rows = [][]answer.Value{row}
	a.Tag = answer.Tag("SELECT", 1)
	return a, nil
}

// callArgs reads c's arguments: constants and the client's parameters,
// each converted to the type the function takes. ok false means one is
// NULL (every session function is strict: the answer is NULL).
func callArgs(c *sqlan.SessionCall, args []driver.Arg) (vals []string, ok bool, err error) {
	for _, a := range c.Args {
		v, null := a.Value, a.Null
		if a.Param > 0 {
			if a.Param > len(args) {
				return nil, false, pgerr.New(pgerr.UndefinedParameterRef, "there is no parameter $%d", a.Param)
			}
			v, null = args[a.Param-1].Text, args[a.Param-1].Null
		}
		if null && c.Func == "set_config" {
			// Not strict: a NULL value resets, a NULL name is an error.
			switch len(vals) {
			case 0:
				return nil, false, pgerr.New(pgerr.InvalidParameterValue, "SET requires parameter name")
			case 1:
				vals = append(vals, resetMark)
				continue
			}
		}
		if null {
			return nil, false, nil
		}
		switch a.Type {
		case "int8", "int4":
			bits, name := 64, "bigint"
			if a.Type == "int4" {
				bits, name = 32, "integer"
			}
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return nil, false, pgerr.New(numericValueOutOfRange, "value %q is out of range for type %s", v, name)
				}
				return nil, false, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", name, v)
			}
			v = strconv.FormatInt(n, 10)
		case "float8":
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil && !isRangeErr(err) {
				return nil, false, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type double precision: %q", v)
			}
			v = strconv.FormatFloat(f, 'g', -1, 64)
		case "bool":
			b, ok := parseBool(v)
			if !ok {
				return nil, false, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", v)
			}
			v = strconv.FormatBool(b)
		}
		vals = append(vals, v)
	}
	return vals, true, nil
}

// resetMark stands for set_config's NULL value (RESET), which no text
// value can be (it holds a NUL byte).
const resetMark = "\x00reset"

// numericValueOutOfRange is SQLSTATE 22003.
const numericValueOutOfRange = "22003"

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// evalCall evaluates one session function call.
func (s *Session) evalCall(ctx context.Context, c *sqlan.SessionCall, args []driver.Arg) (answer.Value, error) {
	null := answer.Value{Type: c.Column.Type, Null: true}
	text := func(v string) (answer.Value, error) { return answer.V(c.Column.Type, v), nil }
	void := func() (answer.Value, error) { return answer.V(answer.Text, ""), nil }
	boolean := func(b bool) (answer.Value, error) {
		if b {
			return answer.V(answer.Bool, "t"), nil
		}
		return answer.V(answer.Bool, "f"), nil
	}
	vals, ok, err := callArgs(c, args)
	if err != nil || !ok {
		return null, err
	}
	switch c.Func {
	case "version":
		return text(Version)
	case "current_user", "session_user", "user", "current_role":
		return text(s.user)
	case "current_catalog", "current_database":
		return text(s.database)
	case "current_schema":
		if schema := s.currentSchema(); schema != "" {
			return text(schema)
		}
		return null, nil
	case "current_setting":
		name := strings.ToLower(vals[0])
		v, ok := s.param(name)
		if !ok {
			if len(vals) > 1 && vals[1] == "true" {
				return null, nil
			}
			return null, unrecognized(name)
		}
		return text(v)
	case "set_config":
		st := &sqlan.Stmt{Verb: "SET", SetName: strings.ToLower(vals[0]), SetValue: vals[1], SetLocal: vals[2] == "true", SetReset: vals[1] == resetMark}
		v, err := s.apply(st)
		if err != nil {
			return null, err
		}
		if !st.SetLocal || s.inBlock || s.implicit {
			v, _ = s.param(st.SetName)
		}
		return text(v)
	case "pg_backend_pid":
		if s.conn == nil {
			return null, nil
		}
		return text(strconv.Itoa(int(s.conn.ProcessID())))
	case "inet_server_addr", "inet_server_port", "inet_client_addr", "inet_client_port":
		var addr net.Addr
		if s.conn != nil {
			addr = s.conn.LocalAddr()
			if strings.HasPrefix(c.Func, "inet_client") {
				addr = s.conn.RemoteAddr()
			}
		}
		tcp, ok := addr.(*net.TCPAddr)
		if !ok {
			return null, nil // a Unix socket: NULL, as in PostgreSQL
		}
		if strings.HasSuffix(c.Func, "_port") {
			return text(strconv.Itoa(tcp.Port))
		}
		ip := tcp.IP.String()
		if v4 := tcp.IP.To4(); v4 != nil {
			ip = v4.String()
		}
		return text(ip)
	case "txid_current", "pg_current_xact_id":
		if s.lastXid == 0 {
			n, err := s.cache.Catalog().Next(xidSequence, "txid", 1)
			if err != nil {
				return null, pgerr.Wrap(pgerr.InternalError, err, "txid_current()")
			}
			s.lastXid = n + firstXid
		}
		return text(strconv.FormatInt(s.lastXid, 10))
	case "pg_is_in_recovery":
		return boolean(false)
	case "pg_client_encoding":
		return text("UTF8")
	case "pg_postmaster_start_time":
		return text(started)
	case "pg_sleep":
		f, _ := strconv.ParseFloat(vals[0], 64)
		if f > 0 {
			d := time.Duration(math.Min(f, math.MaxInt64/1e9) * float64(time.Second))
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return null, pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
			}
		}
		return void()
	case "nextval", "currval", "setval", "lastval":
		return s.evalSequence(c, vals)
	case "pg_notify":
		if err := s.notify(vals[0], vals[1]); err != nil {
			return null, err
		}
		return void()
	case "pg_advisory_unlock_all":
		s.shared.locks.release(&s.owner, true)
		return void()
	}
	// The advisory lock functions.
	k := lockKey{}
	if len(vals) == 2 {
		a, _ := strconv.ParseInt(vals[0], 10, 64)
		b, _ := strconv.ParseInt(vals[1], 10, 64)
		k = lockKey{a: a, b: b, two: true}
	} else {
		k.a, _ = strconv.ParseInt(vals[0], 10, 64)
	}
	name := strings.TrimPrefix(c.Func, "pg_")
	exclusive := !strings.HasSuffix(name, "_shared")
	name = strings.TrimSuffix(name, "_shared")
	switch name {
	case "advisory_unlock":
		return boolean(s.shared.locks.unlock(&s.owner, k, exclusive))
	case "advisory_lock", "advisory_xact_lock":
		if err := s.waitLock(ctx, k, exclusive, s.xactLock(name)); err != nil {
			return null, err
		}
		return void()
	default: // try_advisory_lock, try_advisory_xact_lock
		got, err := s.shared.locks.lock(ctx, &s.owner, k, exclusive, s.xactLock(name), false)
		if err != nil {
			return null, err
		}
		return boolean(got)
	}
}

// xactLock reports whether an advisory lock function's lock lasts for
// the transaction: outside a block, the statement is the transaction
// (released once it is answered).
func (s *Session) xactLock(name string) bool { return strings.Contains(name, "xact") }

// started is pg_postmaster_start_time(): when this shepherd started, in
// PostgreSQL's text form (UTC, the sessions' zone).
var started = time.Now().UTC().Format("2006-01-02 15:04:05.999999") + "+00"

// xidSequence names the catalog sequence txid_current() draws from (a
// name no table has: it is not an identifier).
const xidSequence = " shepherd"

// firstXid keeps transaction ids above PostgreSQL's reserved ones.
const firstXid = 1000

// currentSchema is current_schema(): the first schema of search_path that
// exists (shepherd has public, and the system schemas).
func (s *Session) currentSchema() string {
	path, _ := s.param("search_path")
	for _, p := range strings.Split(path, ",") {
		p = strings.Trim(strings.TrimSpace(p), `"`)
		switch p {
		case "public", "pg_catalog", "information_schema":
			return p
		}
	}
	return ""
}

// sessionPin evaluates a session function pinned inside a statement the
// replicas run: its value goes to every one of them as a parameter.
func (s *Session) sessionPin(ctx context.Context, args []driver.Arg) func(*sqlan.SessionCall) (driver.Arg, error) {
	return func(c *sqlan.SessionCall) (driver.Arg, error) {
		v, err := s.evalCall(ctx, c, args)
		if err != nil {
			return driver.Arg{}, err
		}
		typ := answer.Text
		switch c.Column.OID {
		case answer.OIDInt4, answer.OIDInt8, 5069: // xid8
			typ = answer.Int
		case answer.OIDBool:
			typ = answer.Bool
		case answer.OIDTimestampTZ:
			typ = answer.TimestampTZ
		}
		return driver.Arg{Type: typ, Null: v.Null, Text: v.Text}, nil
	}
}
