package sqlan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgcatalog"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// MaxParams is the most parameters a statement may use (the protocol's
// limit: Bind counts them in 16 bits).
const MaxParams = 65535

// Kind is what a statement does, as far as replication cares.
type Kind uint8

// Statement kinds.
const (
	Read      Kind = iota + 1 // SELECT, VALUES, TABLE: no writes
	Write                     // INSERT, UPDATE, DELETE, MERGE, SELECT ... INTO-free writes
	DDL                       // CREATE, ALTER, DROP, TRUNCATE
	Begin                     // BEGIN, START TRANSACTION
	Commit                    // COMMIT, END
	Rollback                  // ROLLBACK, ABORT
	Set                       // SET, RESET, SET TRANSACTION: answered by shepherd
	Show                      // SHOW: answered by shepherd
	Explain                   // EXPLAIN (SHEPHERD): answered by shepherd
	Copy                      // COPY FROM STDIN / TO STDOUT: run by the session as INSERTs / a query
	Local                     // session statements and functions: answered by shepherd (see SessionOp)
	Catalog                   // a query of pg_catalog / information_schema: answered by shepherd's catalog (pgcatalog)
	Savepoint                 // SAVEPOINT, RELEASE [SAVEPOINT], ROLLBACK TO [SAVEPOINT]: run in order with the block's statements
	Database                  // CREATE DATABASE, DROP DATABASE: carried out by shepherd (see DatabaseStmt)
)

var kindNames = [...]string{"", "read", "write", "ddl", "begin", "commit", "rollback", "set", "show", "explain", "copy", "local", "catalog", "savepoint", "database"}

// SavepointOp is what a statement of Kind Savepoint does.
type SavepointOp uint8

// Savepoint operations.
const (
	SavepointDefine     SavepointOp = iota + 1 // SAVEPOINT name
	SavepointRelease                           // RELEASE [SAVEPOINT] name
	SavepointRollbackTo                        // ROLLBACK TO [SAVEPOINT] name
)

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Stmt is one analysed statement. It is immutable once built and shared
// between sessions through the statement cache.
type Stmt struct {
	// SQL is the statement's text as the client wrote it, without the
	// separating semicolon.
	SQL  string
	Kind Kind
	// Verb is the command tag verb ("SELECT", "INSERT", "CREATE TABLE").
	Verb string
	// ReturnsRows says the statement produces a result set.
	ReturnsRows bool
	// Ordered says the top-level ORDER BY fixes the row order, so answers
	// are compared row by row rather than as multisets.
	Ordered bool
	// SortKeys, when the order is not total (Ordered false), are the
	// output columns (0-based) the ORDER BY's leading keys are: answers
	// are compared as sequences of groups of rows that tie on them (see
	// answer.DigestSorted).
	SortKeys []int
	// NumParams is the highest $n the statement uses.
	NumParams int
	// TxOptions are BEGIN's options (Kind Begin) or SET TRANSACTION's.
	TxOptions driver.TxOptions
	// SetName and SetValue describe a SET (SetValue "" with SetReset
	// for RESET / SET ... TO DEFAULT); ShowName the parameter of SHOW.
	SetName  string
	SetValue string
	SetReset bool
	// SetTransaction marks SET TRANSACTION / SET SESSION CHARACTERISTICS.
	SetTransaction bool
	// SetLocal marks SET LOCAL (the value lasts until the block ends).
	SetLocal bool
	ShowName string
	// Session is what a Local statement does.
	Session *SessionOp
	// SavepointOp and SavepointName describe a statement of Kind
	// Savepoint; the name is as PostgreSQL's parser gives it (folded
	// to lower case unless quoted).
	SavepointOp   SavepointOp
	SavepointName string

	// Pins are the values shepherd chooses for the statement (now(),
	// random(), generated keys), sent as parameters NumParams+1... after
	// the client's.
	Pins []Pin
	// CountRows, per dialect, is the row count the statement reports when
	// the engine counts otherwise (see dialect.Form).
	countRows [5]int64
	// paramHints, per dialect, are the families the dialect needs untyped
	// parameters as (index n-1 for $n).
	paramHints [5][]answer.Type
	// paramTypes are the PostgreSQL types the client's parameters are
	// expected as, where the writer could tell (see ParamOIDs).
	paramTypes []string
	// quotients are the result columns (0-based) that the replicas
	// answer as "sum/count" for an avg() (see exactAverages).
	quotients []int
	// rounds gives, for the quotients of round(avg(x), n), n.
	rounds map[int]int
	// typmods gives, for the quotients of avg(x)::numeric(p,s), [p s].
	typmods map[int][]int32
	// variances gives, for the quotients that are a variance or a
	// standard deviation, the aggregate's name; the replicas answer
	// "count;sum;sum of squares" (see exactAverages, pgVariance).
	variances map[int]string
	// ariths gives, for the quotients of an avg() in arithmetic with a
	// constant (avg(x) * 2), that arithmetic (see scaledAverage).
	ariths map[int]*avgArith
	// trees gives, for the quotients of deeper arithmetic on avg(),
	// that arithmetic (see avgExpression).
	trees map[int]*avgTree

	// limitParams are the parameters that give a LIMIT or OFFSET (see
	// CheckArgs).
	limitParams []limitParam

	// upsertKeys are the keys an INSERT ... ON CONFLICT DO UPDATE
	// proposes, when parameters give some (see CheckArgs).
	upsertKeys [][]keyPart

	// Inner is the statement EXPLAIN (SHEPHERD) explains.
	Inner *Stmt
	// Copy describes a COPY (Kind Copy).
	Copy *CopySpec
	// Database describes a CREATE or DROP DATABASE (Kind Database).
	Database *DatabaseStmt
	// Unnest, for an INSERT ... SELECT FROM unnest(arrays), is how the
	// session expands it into an INSERT ... VALUES at execution; Inner
	// is then that expansion with one row, for Describe.
	Unnest *Unnest
	// SelectFirst, for an INSERT ... SELECT whose rows shepherd must see
	// to fill their keys, is how the session runs it: Inner (the SELECT)
	// first, then an INSERT ... VALUES of its rows.
	SelectFirst *SelectFirst
	// clientOIDs are ParamOIDs of an Unnest or SelectFirst statement.
	clientOIDs []uint32

	// tree is the parsed (and rewritten) statement.
	tree    *pg_query.Node
	version int32
	env     *Env

	dialects [5]dialectForm
	describe describeForm
	columns  columnsForm
	hints    hintsForm
}

// Env is what the analysis of a statement depends on besides its text:
// which dialects the cluster's replicas speak (with their names, for
// messages) and the schema shepherd knows. Statements are translated for
// exactly those dialects; a construct one of them cannot express refuses
// the statement.
type Env struct {
	// Replicas lists the replicas' names by dialect.
	Replicas map[driver.Dialect][]string
	// Schema is the catalog's snapshot (nil: no tables known).
	Schema *schema.Snapshot
}

// replicated reports whether more than one replica runs each statement,
// which is when answers must be made deterministic.
func (e *Env) replicated() bool {
	n := 0
	for _, names := range e.Replicas {
		n += len(names)
	}
	return n > 1
}

// DefaultEnv is the environment of Parse: one replica of each dialect.
var DefaultEnv = &Env{Replicas: map[driver.Dialect][]string{
	driver.Postgres: {"postgres"}, driver.MySQL: {"mysql"}, driver.SQLite: {"sqlite"},
}}

// dialectForm is the statement written for one dialect.
type dialectForm struct {
	sql string
	// args maps the dialect's placeholders, in order, to 0-based indexes
	// of the client's parameters; nil means "the client's order".
	args []int
}

// For returns the statement's text in dialect d and, when the dialect's
// placeholders do not follow the $n numbering, the parameter index
// (0-based, over the client's parameters followed by the pins) each
// placeholder takes (nil: in order).
func (s *Stmt) For(d driver.Dialect) (sql string, argOrder []int) {
	f := s.dialects[d]
	return f.sql, f.args
}

// Hints returns, for dialect d, the family each parameter ($n at index
// n-1) must be sent as when the client left it untyped; nil for none.
func (s *Stmt) Hints(d driver.Dialect) []answer.Type { return s.paramHints[d] }

// ParamOIDs returns, for each of the client's parameters ($1 to
// $NumParams), the PostgreSQL type OID the statement expects it as where
// shepherd could tell (an INSERT's or UPDATE's column, a comparison with
// a column), 0 elsewhere: what a PostgreSQL server would describe, so
// that clients send typed values (a Go time.Time as a date for a date
// column). It is known when some replica's dialect is written from the
// parse tree (MariaDB or SQLite replicas).
func (s *Stmt) ParamOIDs() []uint32 {
	if s.Unnest != nil || s.SelectFirst != nil {
		return append([]uint32(nil), s.clientOIDs...)
	}
	out := make([]uint32, s.NumParams)
	for i := range out {
		if i < len(s.paramTypes) {
			out[i] = typeOIDs[s.paramTypes[i]]
		}
	}
	return out
}

// typeOIDs are the OIDs of the PostgreSQL types the catalog knows.
var typeOIDs = map[string]uint32{
	"int2": 21, "int4": 23, "int8": 20, "numeric": 1700, "float4": 700, "float8": 701,
	"bool": 16, "text": 25, "varchar": 1043, "bpchar": 1042, "bytea": 17,
	"date": 1082, "time": 1083, "timestamp": 1114, "timestamptz": 1184,
	"uuid": 2950, "json": 114, "jsonb": 3802,
}

// CountRows returns the row count to report for dialect d in place of the
// engine's, or 0 to keep the engine's.
func (s *Stmt) CountRows(d driver.Dialect) int64 { return s.countRows[d] }

// Forms describes what each dialect's replicas receive for s: one entry
// per dialect in use, in a fixed order (EXPLAIN (SHEPHERD)).
func (s *Stmt) Forms() []Form {
	var out []Form
	if s.Kind == Local {
		return nil // no replica receives it
	}
	if s.Unnest != nil {
		return s.Inner.Forms() // with one row per array element
	}
	if s.SelectFirst != nil {
		// The SELECT, then the INSERT of its rows (one shown).
		return append(s.Inner.Forms(), s.SelectFirst.insert.Forms()...)
	}
	for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite, driver.DuckDB} {
		names := s.env.Replicas[d]
		if len(names) == 0 {
			continue
		}
		sql, order := s.For(d)
		f := Form{Dialect: d, Replicas: names, SQL: sql}
		n := s.NumParams + len(s.Pins)
		if order == nil {
			for i := 0; i < n && d != driver.SQLite; i++ {
				order = append(order, i)
			}
		}
		for _, i := range order {
			f.Params = append(f.Params, s.paramName(i))
		}
		out = append(out, f)
	}
	return out
}

// paramName names parameter i (0-based): $n for the client's, the pin
// otherwise.
func (s *Stmt) paramName(i int) string {
	if i < s.NumParams {
		return "$" + strconv.Itoa(i+1)
	}
	p := s.Pins[i-s.NumParams]
	if p.Kind == PinSerial {
		return "nextval(" + p.Table + "." + p.Column + ")"
	}
	if p.Kind == PinSession {
		return p.Call.Func
	}
	return p.Kind.String()
}

// Form is one dialect's text of a statement, for EXPLAIN (SHEPHERD).
type Form struct {
	Dialect  driver.Dialect
	Replicas []string
	SQL      string
	// Params names what each placeholder receives, in order ("$1",
	// "now", "nextval(t.id)").
	Params []string
}

// Query writes s for dialect d: the text, and the arguments (the
// client's, then the pinned values) in the order and the form the
// dialect's placeholders take them.
func Query(s *Stmt, d driver.Dialect, args []driver.Arg) driver.Query {
	sql, order := s.For(d)
	if d != driver.Postgres {
		// Untyped values as the dialect needs them (hints), typed ones
		// in the form its replicas store.
		hints := s.Hints(d)
		if d == driver.DuckDB {
			// DuckDB infers its parameters' types itself; the SQLite
			// writer's hints say which untyped values are bytes or
			// booleans.
			hints = s.Hints(driver.SQLite)
		}
		args = append([]driver.Arg(nil), args...)
		for i := range args {
			h := answer.Unknown
			if i < len(hints) {
				h = hints[i]
			}
			args[i] = dialect.Arg(args[i], h, d)
		}
	}
	if order != nil {
		ordered := make([]driver.Arg, len(order))
		for i, j := range order {
			if j < len(args) {
				ordered[i] = args[j]
			} else {
				ordered[i] = driver.Arg{Null: true}
			}
		}
		args = ordered
	}
	return driver.Query{SQL: sql, Args: args, ReturnsRows: s.ReturnsRows, Verb: s.Verb}
}

// Tree returns the parsed statement (after shepherd's rewriting). It must
// not be modified.
func (s *Stmt) Tree() *pg_query.Node { return s.tree }

// Schema returns the schema the statement was analysed against (nil when
// none).
func (s *Stmt) Schema() *schema.Snapshot {
	if s.env == nil {
		return nil
	}
	return s.env.Schema
}

// IsTransactionControl reports whether s begins or ends a transaction.
func (s *Stmt) IsTransactionControl() bool {
	return s.Kind == Begin || s.Kind == Commit || s.Kind == Rollback
}

// Parse splits sql into statements and analyses each. A query string with
// only whitespace, comments and semicolons gives no statements and no
// error. Errors carry a SQLSTATE: 42601 for syntax, 0A000 for constructs
// shepherd refuses.
func Parse(sql string) ([]*Stmt, error) { return ParseIn(sql, DefaultEnv) }

// ParseIn is Parse for the replicas and schema of env.
func ParseIn(sql string, env *Env) (_ []*Stmt, err error) {
	defer func() {
		// Analysis and translation run before any replica sees the
		// statement and change nothing shared, so a bug that panics
		// here fails the statement, not the session (or the process).
		if r := recover(); r != nil {
			err = pgerr.New(pgerr.InternalError, "shepherd failed to analyse the statement (a bug; nothing ran): %v", r)
		}
	}()
	if err := checkEncoding(sql); err != nil {
		return nil, err
	}
	if err := checkDepth(sql); err != nil {
		return nil, err
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, syntaxError(err)
	}
	var out []*Stmt
	for _, raw := range tree.Stmts {
		text := statementText(sql, raw)
		if err := reservedRelation(raw.Stmt); err != nil {
			return nil, err
		}
		if err := catalogInside(raw.Stmt); err != nil {
			return nil, err
		}
		if pgcatalog.Reads(raw.Stmt) || env != nil && pgcatalog.ReadsSequence(raw.Stmt, env.Schema) {
			// Answered from shepherd's own catalog, not by the replicas:
			// nothing to translate.
			st := &Stmt{SQL: text, Kind: Catalog, Verb: "SELECT", ReturnsRows: true, tree: raw.Stmt, env: env, version: tree.Version}
			st.Ordered = len(raw.Stmt.GetSelectStmt().SortClause) > 0
			if st.NumParams, err = maxParam(raw.Stmt); err != nil {
				return nil, err
			}
			out = append(out, st)
			continue
		}
		st, err := analyse(text, raw.Stmt)
		if err != nil {
			return nil, err
		}
		if u := unnestInsert(raw.Stmt); u != nil {
			if ok, err := st.prepareUnnest(u, raw.Stmt, env, tree.Version); err != nil {
				return nil, err
			} else if ok {
				out = append(out, st)
				continue
			}
		}
		if needsSelectFirst(raw.Stmt, env) {
			if ok, err := st.prepareSelectFirst(raw.Stmt, env, tree.Version); err != nil {
				return nil, err
			} else if ok {
				out = append(out, st)
				continue
			}
		}
		st.tree, st.env, st.version = raw.Stmt, env, tree.Version
		if err := st.prepare(); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Split returns the text of each statement of sql, unanalysed (for a
// string whose later statements depend on the DDL of earlier ones, which
// are analysed one at a time). Errors are ParseIn's for the string as a
// whole: encoding, nesting depth, syntax.
func Split(sql string) ([]string, error) {
	if err := checkEncoding(sql); err != nil {
		return nil, err
	}
	if err := checkDepth(sql); err != nil {
		return nil, err
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, syntaxError(err)
	}
	out := make([]string, len(tree.Stmts))
	for i, raw := range tree.Stmts {
		out[i] = statementText(sql, raw)
	}
	return out, nil
}

// ParseOne parses a query string that must hold at most one statement
// (the extended protocol's rule). It returns nil for an empty string.
func ParseOne(sql string) (*Stmt, error) { return ParseOneIn(sql, DefaultEnv) }

// ParseOneIn is ParseOne for the replicas and schema of env.
func ParseOneIn(sql string, env *Env) (*Stmt, error) {
	sts, err := ParseIn(sql, env)
	if err != nil {
		return nil, err
	}
	switch len(sts) {
	case 0:
		return nil, nil
	case 1:
		return sts[0], nil
	}
	return nil, pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
}

func statementText(sql string, raw *pg_query.RawStmt) string {
	start := int(raw.StmtLocation)
	end := len(sql)
	if raw.StmtLen > 0 {
		end = start + int(raw.StmtLen)
	}
	if start < 0 || start > len(sql) || end > len(sql) || end < start {
		return strings.TrimSpace(sql)
	}
	return strings.TrimSpace(sql[start:end])
}

func syntaxError(err error) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		if strings.HasPrefix(pe.Message, "invalid byte sequence for encoding") {
			// A literal such as E'\x00' (PostgreSQL's scanner refuses it
			// with this code).
			return pgerr.New(characterNotInRepertoire, "%s", pe.Message)
		}
		e := pgerr.New(pgerr.SyntaxError, "%s", pe.Message)
		if pe.Cursorpos > 0 {
			e = e.WithDetail("at character %d", pe.Cursorpos)
		}
		return e
	}
	return pgerr.Wrap(pgerr.SyntaxError, err, "")
}

func unsupported(format string, args ...any) error {
	return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support "+format, args...)
}

// analyse classifies one parsed statement.
func analyse(text string, n *pg_query.Node) (*Stmt, error) {
	st := &Stmt{SQL: text}
	if ok, err := analyseSession(st, n); ok || err != nil {
		return st, err
	}
	if ok, err := analyseDatabase(st, n); ok || err != nil {
		return st, err
	}
	switch {
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		if sel.IntoClause != nil {
			return nil, unsupported("SELECT INTO; use CREATE TABLE ... AS")
		}
		st.Kind, st.Verb, st.ReturnsRows = Read, "SELECT", true
		st.Ordered = len(sel.SortClause) > 0
		if len(sel.LockingClause) > 0 {
			st.Kind = Write // row locks make it part of the write set
			if err := lockable(sel); err != nil {
				return nil, err
			}
		}
		if wc := sel.WithClause; wc != nil {
			for _, c := range wc.Ctes {
				if c.GetCommonTableExpr().GetCtequery().GetSelectStmt() == nil {
					st.Kind = Write // WITH d AS (DELETE ...) SELECT ...
				}
			}
		}
	case n.GetInsertStmt() != nil:
		st.Kind, st.Verb = Write, "INSERT"
		st.ReturnsRows = len(n.GetInsertStmt().ReturningList) > 0
	case n.GetUpdateStmt() != nil:
		st.Kind, st.Verb = Write, "UPDATE"
		st.ReturnsRows = len(n.GetUpdateStmt().ReturningList) > 0
	case n.GetDeleteStmt() != nil:
		st.Kind, st.Verb = Write, "DELETE"
		st.ReturnsRows = len(n.GetDeleteStmt().ReturningList) > 0
	case n.GetTransactionStmt() != nil:
		if err := analyseTransaction(st, n.GetTransactionStmt()); err != nil {
			return nil, err
		}
	case n.GetVariableSetStmt() != nil:
		if err := analyseSet(st, n.GetVariableSetStmt()); err != nil {
			return nil, err
		}
	case n.GetVariableShowStmt() != nil:
		st.Kind, st.Verb, st.ReturnsRows = Show, "SHOW", true
		st.ShowName = strings.ToLower(n.GetVariableShowStmt().Name)
	case n.GetExplainStmt() != nil:
		ex := n.GetExplainStmt()
		ours := false
		for _, o := range ex.Options {
			if d := o.GetDefElem(); d != nil && strings.EqualFold(d.Defname, "shepherd") {
				ours = true
			} else {
				return nil, unsupported("EXPLAIN options other than (SHEPHERD)")
			}
		}
		if !ours {
			return nil, unsupported("EXPLAIN: every engine plans differently; EXPLAIN (SHEPHERD) statement shows what each replica receives")
		}
		st.Kind, st.Verb, st.ReturnsRows = Explain, "EXPLAIN", true
	case n.GetCopyStmt() != nil:
		if err := analyseCopy(st, n.GetCopyStmt()); err != nil {
			return nil, err
		}
	default:
		verb, ok := ddlVerb(n)
		if !ok {
			return nil, unsupported("%s statements", nodeName(n))
		}
		st.Kind, st.Verb = DDL, verb
	}
	return st, nil
}

func analyseTransaction(st *Stmt, t *pg_query.TransactionStmt) error {
	switch t.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		st.Kind, st.Verb = Begin, "BEGIN"
		if t.Kind == pg_query.TransactionStmtKind_TRANS_STMT_START {
			st.Verb = "START TRANSACTION"
		}
		opts, err := txOptions(t.Options)
		if err != nil {
			return err
		}
		st.TxOptions = opts
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		if t.Chain {
			return unsupported("COMMIT AND CHAIN")
		}
		st.Kind, st.Verb = Commit, "COMMIT"
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if t.Chain {
			return unsupported("ROLLBACK AND CHAIN")
		}
		st.Kind, st.Verb = Rollback, "ROLLBACK"
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		st.Kind, st.Verb, st.SavepointOp, st.SavepointName = Savepoint, "SAVEPOINT", SavepointDefine, t.SavepointName
	case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
		st.Kind, st.Verb, st.SavepointOp, st.SavepointName = Savepoint, "RELEASE", SavepointRelease, t.SavepointName
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		st.Kind, st.Verb, st.SavepointOp, st.SavepointName = Savepoint, "ROLLBACK", SavepointRollbackTo, t.SavepointName
	default:
		return unsupported("two-phase commit (PREPARE TRANSACTION, COMMIT PREPARED)")
	}
	return nil
}

// NewSavepoint returns the statement the replicas run for a client's
// savepoint statement: op on the savepoint the replicas know as name. The
// session names the replicas' savepoints itself (one new name per
// SAVEPOINT), since the engines differ on names: MariaDB folds their case
// and PostgreSQL does not.
func NewSavepoint(op SavepointOp, name string) *Stmt {
	verb := map[SavepointOp]string{SavepointDefine: "SAVEPOINT", SavepointRelease: "RELEASE", SavepointRollbackTo: "ROLLBACK"}[op]
	st := &Stmt{Kind: Savepoint, Verb: verb, SavepointOp: op, SavepointName: name, SQL: savepointSQL(op, name)}
	for d := range st.dialects {
		st.dialects[d] = dialectForm{sql: st.SQL}
	}
	return st
}

// savepointSQL writes a savepoint statement with its name quoted.
func savepointSQL(op SavepointOp, name string) string {
	q := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	switch op {
	case SavepointRelease:
		return "RELEASE SAVEPOINT " + q
	case SavepointRollbackTo:
		return "ROLLBACK TO SAVEPOINT " + q
	}
	return "SAVEPOINT " + q
}

// txOptions reads BEGIN / SET TRANSACTION options (DefElem list).
func txOptions(opts []*pg_query.Node) (driver.TxOptions, error) {
	var o driver.TxOptions
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		val := constString(d.Arg)
		switch d.Defname {
		case "transaction_isolation":
			o.Isolation = strings.ToLower(val)
		case "transaction_read_only":
			o.ReadOnly = val == "1" || val == "true" || val == "on"
		case "transaction_deferrable":
			// DEFERRABLE only matters for SERIALIZABLE READ ONLY on
			// PostgreSQL; accepted and ignored.
		default:
			return o, unsupported("transaction option %s", d.Defname)
		}
	}
	return o, nil
}

// constString returns the text of a constant node (string, integer or
// boolean), or "".
func constString(n *pg_query.Node) string {
	if n == nil {
		return ""
	}
	if c := n.GetAConst(); c != nil {
		switch {
		case c.GetSval() != nil:
			return c.GetSval().Sval
		case c.GetIval() != nil:
			return strconv.Itoa(int(c.GetIval().Ival))
		case c.GetBoolval() != nil:
			return strconv.FormatBool(c.GetBoolval().Boolval)
		case c.GetFval() != nil:
			return c.GetFval().Fval
		}
	}
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	if i := n.GetInteger(); i != nil {
		return strconv.Itoa(int(i.Ival))
	}
	if t := n.GetTypeCast(); t != nil {
		return constString(t.Arg)
	}
	return ""
}

func analyseSet(st *Stmt, v *pg_query.VariableSetStmt) error {
	st.Kind, st.Verb = Set, "SET"
	switch v.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		st.SetName = strings.ToLower(v.Name)
		var vals []string
		for _, a := range v.Args {
			val := constString(a)
			if st.SetName == "search_path" && a.GetAConst().GetSval() != nil {
				// A list of names: PostgreSQL quotes each as an
				// identifier (GUC_LIST_QUOTE).
				val = quoteIdent(val)
			}
			vals = append(vals, val)
		}
		st.SetValue = strings.Join(vals, ", ")
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		st.SetName, st.SetReset = strings.ToLower(v.Name), true
		if v.Kind == pg_query.VariableSetKind_VAR_RESET {
			st.Verb = "RESET"
		}
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		st.SetName, st.SetReset, st.Verb = "all", true, "RESET"
	case pg_query.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...
		opts, err := txOptions(v.Args)
		if err != nil {
			return err
		}
		st.SetTransaction, st.TxOptions, st.SetName = true, opts, strings.ToLower(v.Name)
	default:
		return unsupported("SET %s", v.Name)
	}
	st.SetLocal = v.IsLocal
	return nil
}

// ddlVerb returns the command tag of the DDL statements shepherd
// replicates.
func ddlVerb(n *pg_query.Node) (string, bool) {
	switch {
	case n.GetCreateStmt() != nil:
		return "CREATE TABLE", true
	case n.GetIndexStmt() != nil:
		return "CREATE INDEX", true
	case n.GetViewStmt() != nil:
		return "CREATE VIEW", true
	case n.GetAlterTableStmt() != nil:
		return "ALTER TABLE", true
	case n.GetTruncateStmt() != nil:
		return "TRUNCATE TABLE", true
	case n.GetRenameStmt() != nil:
		return "ALTER TABLE", true
	case n.GetDropStmt() != nil:
		switch n.GetDropStmt().RemoveType {
		case pg_query.ObjectType_OBJECT_TABLE:
			return "DROP TABLE", true
		case pg_query.ObjectType_OBJECT_INDEX:
			return "DROP INDEX", true
		case pg_query.ObjectType_OBJECT_VIEW:
			return "DROP VIEW", true
		}
	}
	return "", false
}

// nodeName returns a readable name of a statement node type for messages
// ("CreateFunctionStmt" → "CREATE FUNCTION"-ish names are not worth a
// table; the node name is precise and searchable).
func nodeName(n *pg_query.Node) string {
	name := fmt.Sprintf("%T", n.GetNode())
	name = strings.TrimPrefix(name, "*pg_query.Node_")
	return name
}

// prepare rewrites the statement for determinism and writes it in every
// dialect the cluster needs.
func (s *Stmt) prepare() error {
	n, err := maxParam(s.tree)
	if err != nil {
		return err
	}
	s.NumParams = n
	for d := range s.dialects {
		s.dialects[d] = dialectForm{sql: s.SQL}
	}
	switch s.Kind {
	case Read, Write, DDL:
	case Explain:
		inner, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: s.tree.GetExplainStmt().Query}}})
		if err != nil {
			return pgerr.Wrap(pgerr.InternalError, err, "EXPLAIN (SHEPHERD)")
		}
		s.Inner, err = ParseOneIn(inner, s.env)
		return err
	case Copy:
		return s.prepareCopy()
	case Savepoint:
		// One text every engine reads alike (MariaDB runs with
		// ANSI_QUOTES; SQLite's RELEASE commits only outside BEGIN,
		// and replicas always run it inside one; DuckDB has no
		// savepoints, and its driver does what this text asks itself).
		text := savepointSQL(s.SavepointOp, s.SavepointName)
		for d := range s.dialects {
			s.dialects[d] = dialectForm{sql: text}
		}
		return nil
	case Local:
		if s.Session.Op == "constraints" && len(s.env.Replicas[driver.MySQL])+len(s.env.Replicas[driver.SQLite])+len(s.env.Replicas[driver.DuckDB]) == 0 {
			// Only PostgreSQL replicas: DEFERRABLE constraints may exist,
			// and SET CONSTRAINTS would have to reach them.
			return unsupported("SET CONSTRAINTS on a cluster of PostgreSQL replicas only")
		}
		if s.Session.Op == "apply" {
			// The query of the call's arguments, which the replicas
			// answer.
			text, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: s.Session.Apply}}})
			if err != nil {
				return pgerr.Wrap(pgerr.InternalError, err, "setval()")
			}
			s.Inner, err = ParseOneIn(text, s.env)
			if err == nil && s.Inner.Kind != Read {
				err = unsupported("setval() of the answer of a query that writes")
			}
			return err
		}
		if s.Session.Op != "declare" {
			return nil
		}
		// The cursor's query is a statement of its own, run at DECLARE.
		inner, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: s.tree.GetDeclareCursorStmt().Query}}})
		if err != nil {
			return pgerr.Wrap(pgerr.InternalError, err, "DECLARE")
		}
		s.Inner, err = ParseOneIn(inner, s.env)
		return err
	default:
		return nil
	}
	env := s.env
	r := &rewriter{schema: env.Schema, params: s.NumParams,
		mixedEngines: len(env.Replicas[driver.MySQL])+len(env.Replicas[driver.SQLite])+len(env.Replicas[driver.DuckDB]) > 0}
	if s.Kind == DDL && len(env.Replicas[driver.MySQL])+len(env.Replicas[driver.SQLite])+len(env.Replicas[driver.DuckDB]) > 0 && immediateForeignKeys(s.tree) {
		// See immediateForeignKeys: every replica checks them at once.
		r.changed = true
	}
	if s.Kind != DDL || s.tree.GetViewStmt() != nil {
		if err := sequenceAsRelation(s.tree, env.Schema); err != nil {
			return err
		}
	}
	if s.Kind != DDL {
		// Also with one replica: its engine's values are not shepherd's.
		if err := r.pinSession(s.tree); err != nil {
			return err
		}
	}
	if cs := s.tree.GetCreateStmt(); cs != nil {
		if err := checkSequenceDefaults(env.Schema, cs); err != nil {
			return err
		}
	}
	for _, c := range s.tree.GetAlterTableStmt().GetCmds() {
		if cmd := c.GetAlterTableCmd(); cmd != nil && cmd.Subtype == pg_query.AlterTableType_AT_ColumnDefault {
			if _, ok := schema.SeqDefault(cmd.Def); ok {
				// The catalog would have to fill the column from then
				// on, and a PostgreSQL replica has no such sequence.
				return unsupported("ALTER TABLE ... ALTER COLUMN %s SET DEFAULT nextval(...); give the DEFAULT in CREATE TABLE", cmd.Name)
			}
		}
	}
	if s.Kind == Read || s.Kind == Write {
		s.foldQuotients(r)
	}
	if env.replicated() {
		if err := s.rewrite(r); err != nil {
			return err
		}
	} else if ins := s.tree.GetInsertStmt(); ins != nil {
		// One replica fills its own defaults but has no sequences.
		r.onlyNextval = true
		if r.fillInsert(ins); r.err != nil {
			return r.err
		}
	} else if sel := s.tree.GetSelectStmt(); sel != nil && s.Kind == Read {
		// One replica needs no determinism, but its avg() digits are
		// still not PostgreSQL's (and the SQL writer refuses an avg()
		// of exact values that is not asked as sum and count).
		s.exactAverages(r, sel)
	}
	s.Pins = r.pins
	s.limitParams = limitParams(s.tree)
	total := s.NumParams + len(s.Pins)
	// In a fixed order, so that the same statement gets the same
	// refusal, and its parameters the same types, every time (the map's
	// order is random).
	for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite, driver.DuckDB} {
		names := env.Replicas[d]
		if len(names) == 0 {
			continue
		}
		if d == driver.Postgres {
			if tree := withoutSequenceDefaults(s.tree); r.changed || tree != s.tree {
				text, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: tree}}})
				if err != nil {
					return pgerr.Wrap(pgerr.InternalError, err, "writing the statement back")
				}
				s.dialects[d] = dialectForm{sql: text}
			}
			continue
		}
		if d == driver.DuckDB {
			text, err := s.duckDB(env, names)
			if err != nil {
				return err
			}
			s.dialects[d] = dialectForm{sql: text}
			continue
		}
		f, err := dialect.Write(s.tree, d, env.Schema)
		if err != nil {
			// A refusal (or a statement too deep for a replica) names
			// the replicas it is for; an error PostgreSQL itself gives
			// (a constant that does not read as its type) keeps
			// PostgreSQL's message.
			var pe *pgerr.Error
			if errors.As(err, &pe) && (pe.Code == pgerr.FeatureNotSupported || pe.Code == stackDepthExceeded) {
				pe.Message += " (" + strings.Join(names, ", ") + ")"
			}
			return err
		}
		form := dialectForm{sql: f.SQL}
		if f.Params != nil {
			form.args = make([]int, len(f.Params))
			for i, p := range f.Params {
				if p > total {
					return undefinedParam(p)
				}
				form.args[i] = p - 1
			}
		}
		s.dialects[d] = form
		s.paramHints[d] = f.Hints
		s.countRows[d] = f.CountRows
		for i, t := range f.ParamTypes {
			for len(s.paramTypes) <= i {
				s.paramTypes = append(s.paramTypes, "")
			}
			if s.paramTypes[i] == "" {
				s.paramTypes[i] = t
			}
		}
	}
	return nil
}

// checkSequenceDefaults refuses a CREATE TABLE as PostgreSQL does when
// a column's DEFAULT nextval('s') names no sequence, or the table's name
// is a sequence's.
func checkSequenceDefaults(sn *schema.Snapshot, cs *pg_query.CreateStmt) error {
	if sn.Sequence(cs.Relation.Relname) != nil {
		if cs.IfNotExists {
			// PostgreSQL would skip it; the replicas, which have no
			// sequences, would create the table.
			return unsupported("CREATE TABLE IF NOT EXISTS %s where %s is a sequence", cs.Relation.Relname, cs.Relation.Relname)
		}
		return pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", cs.Relation.Relname)
	}
	for _, e := range cs.TableElts {
		for _, n := range e.GetColumnDef().GetConstraints() {
			if con := n.GetConstraint(); con != nil && con.Contype == pg_query.ConstrType_CONSTR_DEFAULT {
				if seq, ok := schema.SeqDefault(con.RawExpr); ok && sn.Sequence(seq) == nil {
					return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", seq)
				}
			}
		}
	}
	return nil
}

// sequenceAsRelation refuses a statement that reads or writes a sequence
// as a table (SELECT last_value FROM s): sequences are shepherd's alone,
// and a replica would answer that no such table exists.
func sequenceAsRelation(root *pg_query.Node, sn *schema.Snapshot) error {
	if sn == nil || len(sn.Sequences) == 0 {
		return nil
	}
	ctes := map[string]bool{} // WITH s AS (...) hides sequence s
	walkNodes(root, func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			ctes[c.Ctename] = true
		}
	})
	var err error
	walkNodes(root, func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil && err == nil && !ctes[rv.Relname] && sn.Sequence(rv.Relname) != nil && sn.Table(rv.Relname) == nil {
			err = unsupported("sequence %s as a relation (SELECT ... FROM %s); use currval('%s') or nextval('%s')", rv.Relname, rv.Relname, rv.Relname, rv.Relname)
		}
	})
	return err
}

// withoutSequenceDefaults returns a CREATE TABLE without its DEFAULT
// nextval('s') clauses, for PostgreSQL replicas: the sequence is
// shepherd's, which fills the column. Any other statement (or one with
// none) is returned as it is. (The tree itself keeps them: the catalog
// records the column's sequence from it.)
func withoutSequenceDefaults(n *pg_query.Node) *pg_query.Node {
	cs := n.GetCreateStmt()
	if cs == nil {
		return n
	}
	has := func(cd *pg_query.ColumnDef) bool {
		for _, c := range cd.GetConstraints() {
			if con := c.GetConstraint(); con != nil && con.Contype == pg_query.ConstrType_CONSTR_DEFAULT {
				if _, ok := schema.SeqDefault(con.RawExpr); ok {
					return true
				}
			}
		}
		return false
	}
	found := false
	for _, e := range cs.TableElts {
		found = found || has(e.GetColumnDef())
	}
	if !found {
		return n
	}
	out := proto.Clone(n).(*pg_query.Node)
	for _, e := range out.GetCreateStmt().TableElts {
		if cd := e.GetColumnDef(); cd != nil && has(cd) {
			cd.Constraints = slices.DeleteFunc(cd.Constraints, func(c *pg_query.Node) bool {
				con := c.GetConstraint()
				if con == nil || con.Contype != pg_query.ConstrType_CONSTR_DEFAULT {
					return false
				}
				_, ok := schema.SeqDefault(con.RawExpr)
				return ok
			})
		}
	}
	return out
}

// foreignKeyTo names t's foreign key to table parent.
func foreignKeyTo(t *schema.Table, parent string) string {
	if t != nil {
		for _, c := range t.Constraints {
			if c.Kind == schema.ConstraintForeign && c.RefTable == parent {
				return c.Name
			}
		}
	}
	return parent + "_fkey"
}

// dependentObjects is PostgreSQL's SQLSTATE for a drop that other
// objects depend on.
const dependentObjects = "2BP01"

// rewrite pins nondeterministic values, fills generated columns and
// completes row orders (see rewriter).
func (s *Stmt) rewrite(r *rewriter) error {
	if cs := s.tree.GetCreateStmt(); cs != nil {
		// Refuse what the catalog could not record or replicas would
		// fill differently, also when only PostgreSQL replicas run it.
		t, err := schema.TableOf(cs)
		if err != nil {
			return err
		}
		if len(s.env.Replicas[driver.SQLite]) > 0 {
			// SQLite accepts a foreign key to a table that does not
			// exist, where the others fail as PostgreSQL does.
			for _, p := range t.Parents() {
				if p != t.Name && s.env.Schema.Table(p) == nil {
					return pgerr.New(pgerr.UndefinedTable, "relation %q does not exist", p)
				}
			}
		}
		return nil
	}
	if tr := s.tree.GetTruncateStmt(); tr != nil && s.env.Schema != nil {
		if err := checkTruncate(s.env.Schema, tr); err != nil {
			return err
		}
	}
	if d := s.tree.GetDropStmt(); d != nil && s.env.Schema != nil && (len(s.env.Replicas[driver.SQLite]) > 0 || len(s.env.Replicas[driver.MySQL]) > 0 || len(s.env.Replicas[driver.DuckDB]) > 0) {
		// Checked before any replica runs it: MariaDB drops the
		// tables it has of a list naming a missing one, and SQLite
		// runs a list as one DROP after another (dialect), so a
		// failure part way would leave the engines split.
		if err := checkDropObjects(s.env.Schema, d); err != nil {
			return err
		}
	}
	if d := s.tree.GetDropStmt(); d != nil && d.RemoveType == pg_query.ObjectType_OBJECT_TABLE &&
		(len(s.env.Replicas[driver.SQLite]) > 0 || len(s.env.Replicas[driver.MySQL]) > 0 || len(s.env.Replicas[driver.DuckDB]) > 0) {
		// SQLite drops a referenced table whose referencing rows are
		// gone; PostgreSQL refuses while the key exists, and MariaDB
		// would drop the other tables of the list. A table the same
		// statement drops does not count. With CASCADE PostgreSQL
		// drops the foreign keys, which the other engines cannot.
		dropped := map[string]bool{}
		for _, o := range d.Objects {
			dropped[lastName(o)] = true
		}
		for _, o := range d.Objects {
			name := lastName(o)
			var kids []string
			for _, k := range s.env.Schema.Children(name) {
				if !dropped[k] {
					kids = append(kids, k)
				}
			}
			if len(kids) == 0 {
				continue
			}
			slices.Sort(kids)
			if d.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				return unsupported("DROP TABLE ... CASCADE of %s, which foreign keys of %s reference: PostgreSQL would drop the foreign keys, the other engines cannot; drop them first",
					name, strings.Join(kids, ", "))
			}
			msg := fmt.Sprintf("cannot drop table %s because other objects depend on it", name)
			if len(d.Objects) > 1 {
				msg = "cannot drop desired object(s) because other objects depend on them"
			}
			return pgerr.New(dependentObjects, "%s", msg).
				WithDetail("constraint %s on table %s depends on table %s", foreignKeyTo(s.env.Schema.Table(kids[0]), name), kids[0], name).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
	}
	if d := s.tree.GetDropStmt(); d != nil {
		if err := checkDrop(s.env.Schema, d); err != nil {
			return err
		}
	}
	if at := s.tree.GetAlterTableStmt(); at != nil {
		if err := checkAlter(s.env.Schema, at); err != nil {
			return err
		}
	}
	if rn := s.tree.GetRenameStmt(); rn != nil {
		if err := checkRename(s.env.Schema, rn); err != nil {
			return err
		}
	}
	if s.tree.GetViewStmt() != nil {
		return s.determinism(r)
	}
	if s.Kind == DDL {
		return nil
	}
	if ins := s.tree.GetInsertStmt(); ins != nil {
		keys, err := checkUpsert(s.env.Schema, ins)
		if err != nil {
			return err
		}
		s.upsertKeys = keys
		if err := r.listColumns(ins); err != nil {
			return err
		}
		r.fillInsert(ins)
		if r.err != nil {
			return r.err
		}
		r.leaveOutDefaults(ins)
		r.writeDefaults(ins)
	}
	if u := s.tree.GetUpdateStmt(); u != nil {
		if r.checkUpdate(u); r.err != nil {
			return r.err
		}
	}
	r.pinExpressions(s.tree)
	if r.err != nil {
		return r.err
	}
	if err := r.checkPostgresRules(s.tree); err != nil {
		return err
	}
	if err := s.determinism(r); err != nil {
		return err
	}
	if sel := s.tree.GetSelectStmt(); sel != nil {
		s.exactAverages(r, sel)
	}
	return r.err
}

// catalogInside refuses a statement that is not a catalog query (a SELECT
// shepherd answers from its own catalog, pgcatalog.Reads) but names a
// system catalog relation or function: a write reading pg_class, say.
// The replicas would each answer it from their own catalog (MariaDB and
// SQLite have no pg_class), and the PostgreSQL replica, right by
// PostgreSQL's rules, would be outvoted and taken out.
func catalogInside(n *pg_query.Node) error {
	switch {
	case n.GetInsertStmt() != nil, n.GetUpdateStmt() != nil, n.GetDeleteStmt() != nil, n.GetMergeStmt() != nil,
		n.GetCreateTableAsStmt() != nil, n.GetViewStmt() != nil:
	case n.GetSelectStmt() != nil && (n.GetSelectStmt().IntoClause != nil || len(n.GetSelectStmt().LockingClause) > 0):
	default:
		return nil
	}
	if !pgcatalog.Names(n) {
		return nil
	}
	return unsupported("a system catalog (pg_catalog, information_schema) inside a statement other than a plain SELECT: shepherd answers catalog queries itself, and the replicas' own catalogs differ")
}
