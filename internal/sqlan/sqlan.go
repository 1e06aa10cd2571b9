package sqlan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// MaxParams is the most parameters a statement may use (the protocol's
// limit: Bind counts them in 16 bits).
const MaxParams = 65535

// Kind is what a statement does, as far as replication cares.
type Kind uint8

// Statement kinds.
const (
	Read     Kind = iota + 1 // SELECT, VALUES, TABLE: no writes
	Write                    // INSERT, UPDATE, DELETE, MERGE, SELECT ... INTO-free writes
	DDL                      // CREATE, ALTER, DROP, TRUNCATE
	Begin                    // BEGIN, START TRANSACTION
	Commit                   // COMMIT, END
	Rollback                 // ROLLBACK, ABORT
	Set                      // SET, RESET, SET TRANSACTION: answered by shepherd
	Show                     // SHOW: answered by shepherd
)

var kindNames = [...]string{"", "read", "write", "ddl", "begin", "commit", "rollback", "set", "show"}

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
	ShowName       string

	dialects [4]dialectForm
	describe describeForm
	columns  columnsForm
}

// dialectForm is the statement written for one dialect.
type dialectForm struct {
	sql string
	// args maps the dialect's placeholders, in order, to 0-based indexes
	// of the client's parameters; nil means "the client's order".
	args []int
}

// For returns the statement's text in dialect d and, when the dialect's
// placeholders do not follow the client's $n numbering, the client
// parameter index each placeholder takes (nil: use the client's order).
func (s *Stmt) For(d driver.Dialect) (sql string, argOrder []int) {
	f := s.dialects[d]
	return f.sql, f.args
}

// IsTransactionControl reports whether s begins or ends a transaction.
func (s *Stmt) IsTransactionControl() bool {
	return s.Kind == Begin || s.Kind == Commit || s.Kind == Rollback
}

// Parse splits sql into statements and analyses each. A query string with
// only whitespace, comments and semicolons gives no statements and no
// error. Errors carry a SQLSTATE: 42601 for syntax, 0A000 for constructs
// shepherd refuses.
func Parse(sql string) ([]*Stmt, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, syntaxError(err)
	}
	var out []*Stmt
	for _, raw := range tree.Stmts {
		text := statementText(sql, raw)
		st, err := analyse(text, raw.Stmt)
		if err != nil {
			return nil, err
		}
		if err := st.writeDialects(); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ParseOne parses a query string that must hold at most one statement
// (the extended protocol's rule). It returns nil for an empty string.
func ParseOne(sql string) (*Stmt, error) {
	sts, err := Parse(sql)
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
	case n.GetCopyStmt() != nil:
		return nil, unsupported("COPY yet; use INSERT")
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
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT,
		pg_query.TransactionStmtKind_TRANS_STMT_RELEASE,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return unsupported("savepoints yet (SAVEPOINT, RELEASE, ROLLBACK TO)")
	default:
		return unsupported("two-phase commit (PREPARE TRANSACTION, COMMIT PREPARED)")
	}
	return nil
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
			vals = append(vals, constString(a))
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
	if v.IsLocal {
		return unsupported("SET LOCAL")
	}
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

// writeDialects fills the per-dialect texts: placeholders rewritten with
// the scanner, so that $n inside strings, comments and identifiers is left
// alone.
func (s *Stmt) writeDialects() error {
	s.dialects[driver.Postgres] = dialectForm{sql: s.SQL}
	scan, err := pg_query.Scan(s.SQL)
	if err != nil {
		return syntaxError(err)
	}
	var my, lite strings.Builder
	var order []int
	last := 0
	rewritten := false
	for _, tok := range scan.Tokens {
		start, end := int(tok.Start), int(tok.End)
		if tok.Token == pg_query.Token_SQL_COMMENT || tok.Token == pg_query.Token_C_COMMENT {
			// MySQL wants a space after "--"; other engines do not need
			// to see comments at all.
			my.WriteString(s.SQL[last:start])
			lite.WriteString(s.SQL[last:start])
			last, rewritten = end, true
			continue
		}
		if tok.Token != pg_query.Token_PARAM {
			continue
		}
		rewritten = true
		n, err := strconv.Atoi(s.SQL[start+1 : end])
		if err != nil || n < 1 || n > MaxParams {
			return pgerr.New(pgerr.UndefinedParameterRef, "there is no parameter %s", s.SQL[start:end])
		}
		s.NumParams = max(s.NumParams, n)
		my.WriteString(s.SQL[last:start])
		my.WriteString("?")
		lite.WriteString(s.SQL[last:start])
		lite.WriteString("?")
		lite.WriteString(s.SQL[start+1 : end])
		order = append(order, n-1)
		last = end
	}
	if !rewritten {
		s.dialects[driver.MySQL] = dialectForm{sql: s.SQL}
		s.dialects[driver.SQLite] = dialectForm{sql: s.SQL}
		return nil
	}
	my.WriteString(s.SQL[last:])
	lite.WriteString(s.SQL[last:])
	if order == nil {
		s.dialects[driver.MySQL] = dialectForm{sql: strings.TrimSpace(my.String())}
		s.dialects[driver.SQLite] = dialectForm{sql: strings.TrimSpace(lite.String())}
		return nil
	}
	s.dialects[driver.MySQL] = dialectForm{sql: strings.TrimSpace(my.String()), args: order}
	s.dialects[driver.SQLite] = dialectForm{sql: strings.TrimSpace(lite.String())}
	return nil
}
