package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// SQLite result codes (https://sqlite.org/rescode.html). An extended code
// keeps its primary code in the low byte.
const (
	codeError      = 1
	codeBusy       = 5
	codeLocked     = 6
	codeInterrupt  = 9
	codeConstraint = 19
	codeMismatch   = 20

	codeConstraintCheck      = codeConstraint | 1<<8
	codeConstraintForeignKey = codeConstraint | 3<<8
	codeConstraintNotNull    = codeConstraint | 5<<8
	codeConstraintPrimaryKey = codeConstraint | 6<<8
	codeConstraintUnique     = codeConstraint | 8<<8
)

// classify maps an error of the library onto a SQLSTATE error.
func (e *Engine) classify(ctx context.Context, err error) *pgerr.Error {
	var out *pgerr.Error
	code, msg, isSQLite := e.lib.resultCode(err)
	switch {
	case errors.As(err, &out):
	case ctx.Err() != nil && (!isSQLite || code&0xff == codeInterrupt):
		out = pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request")
	case isSQLite && isPGFunctionError(msg):
		// A shepherd function failed as PostgreSQL's does (strfuncs.go).
		c, m, _ := pgFunctionErrorOf(msg)
		out = pgerr.Wrap(c, err, "")
		out.Message = m
	case isSQLite:
		out = pgerr.Wrap(sqlstateOf(code, msg), err, "")
		if m, ok := undefinedColumnMessage(msg); ok {
			out.Message = m
			if name, _ := strings.CutPrefix(m, `column "`); name != m {
				// An UPDATE's target: errform names its relation.
				out.Raw = &pgerr.Raw{Columns: []string{strings.TrimSuffix(name, `" does not exist`)}}
			}
		} else {
			inPostgresWords(out, bareMessage(msg))
		}
	default:
		out = pgerr.Wrap(pgerr.InternalError, err, "")
	}
	return e.tagged(out)
}

// sqlstateOf maps an extended result code onto a SQLSTATE.
func sqlstateOf(code int, msg string) string {
	switch code {
	case codeConstraintUnique, codeConstraintPrimaryKey:
		return pgerr.UniqueViolation
	case codeConstraintNotNull:
		return pgerr.NotNullViolation
	case codeConstraintForeignKey:
		return pgerr.ForeignKeyViolation
	case codeConstraintCheck:
		return pgerr.CheckViolation
	}
	switch code & 0xff {
	case codeConstraint:
		return pgerr.IntegrityConstraint
	case codeBusy, codeLocked:
		return pgerr.SerializationFailure
	case codeInterrupt:
		return pgerr.QueryCanceled
	case codeMismatch:
		return pgerr.DatatypeMismatch
	case codeError:
		return classifyGenericError(msg)
	}
	return pgerr.InternalError
}

// genericErrors are the SQLSTATEs of the SQLITE_ERROR messages shepherd
// tells apart, matched in order.
var genericErrors = []struct {
	fragment string
	code     string
}{
	{"syntax error", pgerr.SyntaxError},
	{"incomplete input", pgerr.SyntaxError},
	{"unrecognized token", pgerr.SyntaxError},
	{"no such table", pgerr.UndefinedTable},
	{" values for ", pgerr.SyntaxError}, // "2 values for 1 columns": PostgreSQL's INSERT has more expressions than target columns
	{"no such column", pgerr.UndefinedColumn},
	{"has no column named", pgerr.UndefinedColumn},
	{"ambiguous column name", pgerr.AmbiguousColumn},
	{"duplicate column name", pgerr.DuplicateColumn},
	{"already exists", pgerr.DuplicateTable},
	{"no such function", pgerr.UndefinedFunction},
	{"wrong number of arguments to function", pgerr.UndefinedFunction},
	{"no such index", pgerr.UndefinedObject},
	{"cannot commit - no transaction is active", pgerr.NoActiveSQLTransaction},
	{"cannot rollback - no transaction is active", pgerr.NoActiveSQLTransaction},
	{"cannot start a transaction within a transaction", pgerr.ActiveSQLTransaction},
	{"integer overflow", pgerr.NumericValueOutOfRange},
	// An aggregate where PostgreSQL refuses one (in WHERE, nested):
	// "misuse of aggregate function SUM()", "misuse of aggregate: x()".
	{"misuse of aggregate", groupingError},
	{errDivisionByZero.Error(), pgerr.DivisionByZero},           // DivisorFunction
	{errNumericOverflow.Error(), pgerr.NumericValueOutOfRange},  // NumericFunction
	{errNumericSyntax.Error(), pgerr.InvalidTextRepresentation}, // NumericFunction
	{errInt4Range.Error(), pgerr.NumericValueOutOfRange},        // Int4Function
	{errInt2Range.Error(), pgerr.NumericValueOutOfRange},        // Int2Function
	{errVarcharLength, pgerr.StringDataRightTruncation},         // VarcharFunction
	{errMoreThanOneRow.Error(), cardinalityViolation},           // SingleFunction
	{errSumRange.Error(), pgerr.FeatureNotSupported},            // SumInExprFunction
	// SQLite's limits on nesting (SQLITE_MAX_EXPR_DEPTH, which counts
	// the expressions around nested subqueries too, and the parser's
	// stack): PostgreSQL's class for a statement too complex.
	{"Expression tree is too large", statementTooComplex},
	{"parser stack overflow", statementTooComplex},
}

// groupingError is SQLSTATE 42803, which package pgerr does not name.
const groupingError = "42803"

// cardinalityViolation is SQLSTATE 21000, which package pgerr does not
// name.
const cardinalityViolation = "21000"

// statementTooComplex is SQLSTATE 54001, which package pgerr does not
// name.
const statementTooComplex = "54001"

// classifyGenericError picks the SQLSTATE of a SQLITE_ERROR.
//
// This is the one place shepherd reads an engine's message text, against
// its own rule, because SQLite leaves no other choice: a syntax error, a
// missing table, a missing column, a duplicate table and an unknown
// function all come back as the same result code, SQLITE_ERROR (1), with
// no extended code to tell them apart, and those are distinctions a
// client (and the vote) must see. The fragments are SQLite's own fixed
// wording, which both builds share (modernc.org/sqlite is translated from
// the same C source). Anything unrecognised stays XX000 with SQLite's
// message.
func classifyGenericError(msg string) string {
	for _, g := range genericErrors {
		if strings.Contains(msg, g.fragment) {
			return g.code
		}
	}
	return pgerr.InternalError
}

// undefinedColumnMessage rewrites SQLite's "no such column: X" into
// PostgreSQL's wording, `column "x" does not exist` (a qualified name
// unquoted, as PostgreSQL prints it), so that a client on SQLite replicas
// reads what PostgreSQL would have said. ok is false for other messages.
func undefinedColumnMessage(msg string) (string, bool) {
	const prefix = "no such column: "
	i := strings.Index(msg, prefix)
	if i < 0 {
		return "", false
	}
	name := msg[i+len(prefix):]
	// With the double-quoted-string fallback off, SQLite suggests single
	// quotes after the name; the libraries add " (1)" or nothing after it.
	if j := strings.Index(name, " - should this be"); j >= 0 {
		name = name[:j]
	}
	name = strings.TrimSuffix(name, " (1)")
	name = strings.Trim(name, `"`)
	if strings.Contains(name, ".") {
		return "column " + name + " does not exist", true
	}
	return `column "` + name + `" does not exist`, true
}

// dependentObjects is SQLSTATE 2BP01, which package pgerr does not name.
const dependentObjects = "2BP01"

// statementError refines a classified error by the verb of the statement
// that failed, for the driver's Exec: SQLite drops a table with an
// implicit DELETE, so dropping a table whose rows a foreign key
// references fails as a foreign key violation, where PostgreSQL says
// dependent objects still exist (2BP01), as the other drivers do.
func statementError(verb string, e *pgerr.Error) *pgerr.Error {
	if e == nil || verb != "DROP TABLE" || e.Code != pgerr.ForeignKeyViolation {
		return e
	}
	out := *e
	out.Code = dependentObjects
	out.Message = "cannot drop a table that a foreign key references: " + e.Message
	return &out
}

// libraryPrefixes are the result code texts (sqlite3_errstr) that
// modernc.org/sqlite puts before a message.
var libraryPrefixes = []string{"SQL logic error: ", "constraint failed: ", "datatype mismatch: "}

// bareMessage returns SQLite's message without what the libraries add
// around it: modernc.org/sqlite's result code text before it and the
// code in parentheses after it.
func bareMessage(msg string) string {
	for _, p := range libraryPrefixes {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			msg = rest
			break
		}
	}
	if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
		if _, err := strconv.Atoi(msg[i+2 : len(msg)-1]); err == nil {
			msg = msg[:i]
		}
	}
	return msg
}

// inPostgresWords gives e, classified from SQLite's message msg (bare),
// PostgreSQL's message where SQLite's own says all PostgreSQL's needs,
// and otherwise (a constraint's error, which PostgreSQL words from the
// schema) what SQLite named, in e.Raw, for package errform.
func inPostgresWords(e *pgerr.Error, msg string) {
	splitNames := func(list string) (table string, cols []string) {
		for _, tc := range strings.Split(list, ", ") {
			t, c, ok := strings.Cut(tc, ".")
			if !ok {
				return "", nil
			}
			table, cols = t, append(cols, c)
		}
		return table, cols
	}
	switch e.Code {
	case pgerr.UniqueViolation:
		if list, ok := strings.CutPrefix(msg, "UNIQUE constraint failed: "); ok {
			t, cols := splitNames(list)
			e.Raw = &pgerr.Raw{Table: t, Columns: cols}
		}
	case pgerr.NotNullViolation:
		if list, ok := strings.CutPrefix(msg, "NOT NULL constraint failed: "); ok {
			t, cols := splitNames(list)
			e.Raw = &pgerr.Raw{Table: t, Columns: cols}
		}
	case pgerr.CheckViolation:
		if name, ok := strings.CutPrefix(msg, "CHECK constraint failed: "); ok {
			e.Raw = &pgerr.Raw{Constraint: name}
		}
	case pgerr.ForeignKeyViolation:
		e.Raw = &pgerr.Raw{} // SQLite names nothing
	case pgerr.UndefinedTable:
		if name, ok := strings.CutPrefix(msg, "no such table: "); ok {
			e.Message = fmt.Sprintf("relation %q does not exist", strings.TrimPrefix(name, "main."))
		}
	case pgerr.DuplicateTable:
		// "table t already exists", "table "t" already exists", "index
		// i already exists": PostgreSQL's relations are both.
		if rest, ok := strings.CutSuffix(msg, " already exists"); ok {
			if _, name, ok := strings.Cut(rest, " "); ok {
				e.Message = fmt.Sprintf("relation %q already exists", strings.Trim(name, `"`))
			}
		}
	case pgerr.UndefinedColumn:
		// "table t has no column named c" (an INSERT's target column).
		if rest, ok := strings.CutPrefix(msg, "table "); ok {
			if t, c, ok := strings.Cut(rest, " has no column named "); ok {
				e.Message = fmt.Sprintf("column %q of relation %q does not exist", c, strings.Trim(t, `"`))
			}
		}
	case cardinalityViolation:
		e.Message = errMoreThanOneRow.Error()
	case pgerr.StringDataRightTruncation:
		// VarcharFunction's error is PostgreSQL's words already.
		if i := strings.Index(msg, errVarcharLength); i >= 0 {
			if j := strings.IndexByte(msg[i:], ')'); j >= 0 {
				e.Message = msg[i : i+j+1]
			}
		}
	case pgerr.SerializationFailure:
		// SQLITE_BUSY or SQLITE_LOCKED: another writer holds the file.
		e.Message = "could not serialize access due to concurrent update"
	case pgerr.DivisionByZero, pgerr.InvalidTextRepresentation:
		// shepherd's functions' errors are PostgreSQL's words already.
		if strings.HasPrefix(msg, errDivisionByZero.Error()) || strings.HasPrefix(msg, errNumericSyntax.Error()) {
			e.Message = msg
		}
	case pgerr.NumericValueOutOfRange:
		switch {
		case strings.HasPrefix(msg, errNumericOverflow.Error()):
			e.Message = errNumericOverflow.Error()
			var p, s int
			if _, err := fmt.Sscanf(msg, errNumericOverflow.Error()+": precision %d, scale %d", &p, &s); err == nil {
				e.Raw = &pgerr.Raw{Precision: p, Scale: s}
			}
		case strings.HasPrefix(msg, errInt4Range.Error()):
			e.Message = errInt4Range.Error()
		case strings.HasPrefix(msg, errInt2Range.Error()):
			e.Message = errInt2Range.Error()
		}
	}
}
