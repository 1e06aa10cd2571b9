package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// DivisionByZeroMark is the constant of the expression the SQL writer
// makes MariaDB evaluate when a divisor is zero: MariaDB returns NULL
// for x / 0, and the only error an expression can raise at will is an
// overflow, which the driver reports as 22012 when it names this value
// first (the overflow of a BIGINT division quotes the whole division,
// its divisor's check with this value inside).
const DivisionByZeroMark = "18446744073709551615 + ("

// Int4RangeMark opens the expression the SQL writer makes MariaDB
// evaluate around 32-bit integer arithmetic: it overflows MariaDB's
// unsigned arithmetic exactly when the value is out of PostgreSQL's
// integer range, and the driver reports that overflow as PostgreSQL
// does (22003 "integer out of range") when its message names this
// value.
const Int4RangeMark = "18446744071562067968 + "

// Int2RangeMark opens the expression the SQL writer makes MariaDB
// evaluate around a smallint result (- x, abs(x)): as Int4RangeMark, for
// PostgreSQL's smallint range (22003 "smallint out of range").
const Int2RangeMark = "18446744073709518848 + "

// AvgCountMark opens the expression the SQL writer makes MariaDB
// evaluate around count(x) where it compares an integer with avg(x) as
// e * count(x) op sum(x): 2^64 - 200000000 plus the count overflows
// MariaDB's unsigned arithmetic exactly when the count reaches
// 200000000, from where that comparison might not be PostgreSQL's (see
// dialect's avgCompare); the driver reports the overflow as a refusal
// (0A000) when its message names this value.
const AvgCountMark = "18446744073509551616 + "

// The marks of the overflows the SQL writer makes MariaDB evaluate where
// PostgreSQL's float8 math functions fail and MariaDB's answer NULL or 0
// (dialect's mariaMath): each opens an expression that overflows
// MariaDB's unsigned arithmetic, and the driver reports the overflow as
// PostgreSQL's error (mathFailures) when its message names the mark.
const (
	SqrtNegativeMark      = "18446744073709551614 + ("
	LogZeroMark           = "18446744073709551613 + ("
	LogNegativeMark       = "18446744073709551612 + ("
	PowerZeroNegativeMark = "18446744073709551611 + ("
	PowerComplexMark      = "18446744073709551610 + ("
	UnderflowMark         = "18446744073709551609 + ("
)

// mathFailures maps each math mark onto PostgreSQL's SQLSTATE and message.
var mathFailures = []struct{ mark, code, message string }{
	{SqrtNegativeMark, "2201F", "cannot take square root of a negative number"},
	{LogZeroMark, "2201E", "cannot take logarithm of zero"},
	{LogNegativeMark, "2201E", "cannot take logarithm of a negative number"},
	{PowerZeroNegativeMark, "2201F", "zero raised to a negative power is undefined"},
	{PowerComplexMark, "2201F", "a negative number raised to a non-integer power yields a complex result"},
	{UnderflowMark, pgerr.NumericValueOutOfRange, "value out of range: underflow"},
}

// SQLSTATEs package pgerr does not name.
const (
	invalidDatetimeFormat  = "22007"
	cardinalityViolation   = "21000" // a scalar subquery found several rows
	dependentObjects       = "2BP01" // dependent_objects_still_exist
	groupingError          = "42803"
	duplicateAlias         = "42712"
	invalidForeignKey      = "42830"
	invalidTableDefinition = "42P16"
)

// errorCodes maps MySQL/MariaDB error numbers onto the SQLSTATE
// PostgreSQL gives the same failure. Numbers not listed fall back to the
// server's own SQLSTATE, translated by sqlstates where MySQL's differs
// from PostgreSQL's.
var errorCodes = map[uint16]string{
	1213: pgerr.DeadlockDetected,          // ER_LOCK_DEADLOCK
	1205: pgerr.SerializationFailure,      // ER_LOCK_WAIT_TIMEOUT
	1020: pgerr.SerializationFailure,      // ER_CHECKREAD: record changed since last read
	1062: pgerr.UniqueViolation,           // ER_DUP_ENTRY
	1586: pgerr.UniqueViolation,           // ER_DUP_ENTRY_WITH_KEY_NAME
	1451: pgerr.ForeignKeyViolation,       // ER_ROW_IS_REFERENCED_2 (DROP TABLE: see Conn.failure)
	1452: pgerr.ForeignKeyViolation,       // ER_NO_REFERENCED_ROW_2
	1216: pgerr.ForeignKeyViolation,       // ER_NO_REFERENCED_ROW
	1217: pgerr.ForeignKeyViolation,       // ER_ROW_IS_REFERENCED
	1048: pgerr.NotNullViolation,          // ER_BAD_NULL_ERROR
	1364: pgerr.NotNullViolation,          // ER_NO_DEFAULT_FOR_FIELD
	1138: pgerr.NotNullViolation,          // ER_INVALID_USE_OF_NULL: SET NOT NULL over NULLs
	3819: pgerr.CheckViolation,            // MySQL ER_CHECK_CONSTRAINT_VIOLATED
	4025: pgerr.CheckViolation,            // MariaDB ER_CONSTRAINT_FAILED
	1064: pgerr.SyntaxError,               // ER_PARSE_ERROR
	1149: pgerr.SyntaxError,               // ER_SYNTAX_ERROR
	1221: pgerr.SyntaxError,               // ER_WRONG_USAGE ("Incorrect usage of UNION and ORDER BY")
	1136: pgerr.SyntaxError,               // ER_WRONG_VALUE_COUNT_ON_ROW: INSERT has more expressions than target columns
	1058: pgerr.SyntaxError,               // ER_WRONG_VALUE_COUNT
	1222: pgerr.SyntaxError,               // ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT: each UNION query must have the same number of columns
	1241: pgerr.SyntaxError,               // ER_OPERAND_COLUMNS: subquery must return only one column
	1242: cardinalityViolation,            // ER_SUBQUERY_NO_1_ROW
	1146: pgerr.UndefinedTable,            // ER_NO_SUCH_TABLE
	1051: pgerr.UndefinedTable,            // ER_BAD_TABLE_ERROR
	1109: pgerr.UndefinedTable,            // ER_UNKNOWN_TABLE: missing FROM-clause entry
	1054: pgerr.UndefinedColumn,           // ER_BAD_FIELD_ERROR
	1072: pgerr.UndefinedColumn,           // ER_KEY_COLUMN_DOES_NOT_EXITS
	1247: pgerr.UndefinedColumn,           // ER_ILLEGAL_REFERENCE: an output alias where PostgreSQL wants a column
	1052: pgerr.AmbiguousColumn,           // ER_NON_UNIQ_ERROR
	1060: pgerr.DuplicateColumn,           // ER_DUP_FIELDNAME
	1050: pgerr.DuplicateTable,            // ER_TABLE_EXISTS_ERROR
	1061: pgerr.DuplicateTable,            // ER_DUP_KEYNAME: an index name is a relation name
	1066: duplicateAlias,                  // ER_NONUNIQ_TABLE
	1068: invalidTableDefinition,          // ER_MULTIPLE_PRI_KEY
	1049: pgerr.InvalidCatalogName,        // ER_BAD_DB_ERROR
	1305: pgerr.UndefinedFunction,         // ER_SP_DOES_NOT_EXIST
	1630: pgerr.UndefinedFunction,         // ER_FUNC_INEXISTENT_NAME_COLLISION
	1582: pgerr.UndefinedFunction,         // ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: no function takes that many arguments
	1583: pgerr.UndefinedFunction,         // ER_WRONG_PARAMETERS_TO_NATIVE_FCT
	1318: pgerr.UndefinedFunction,         // ER_SP_WRONG_NO_OF_ARGS
	4078: pgerr.UndefinedFunction,         // ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION: operator does not exist
	4079: pgerr.UndefinedFunction,         // ER_ILLEGAL_PARAMETER_DATA_TYPE_FOR_OPERATION
	1111: groupingError,                   // ER_INVALID_GROUP_FUNC_USE: aggregate where none is allowed
	1055: groupingError,                   // ER_WRONG_FIELD_WITH_GROUP
	1140: groupingError,                   // ER_MIX_OF_GROUP_FUNC_AND_FIELDS
	1005: invalidForeignKey,               // ER_CANT_CREATE_TABLE (errno 150: see fromMySQLError, Conn.failure)
	1215: invalidForeignKey,               // ER_CANNOT_ADD_FOREIGN
	1553: dependentObjects,                // ER_DROP_INDEX_FK: the index serves a foreign key
	1828: dependentObjects,                // ER_FK_COLUMN_CANNOT_DROP
	1829: dependentObjects,                // ER_FK_COLUMN_CANNOT_DROP_CHILD
	1701: pgerr.FeatureNotSupported,       // ER_TRUNCATE_ILLEGAL_FK: PostgreSQL refuses it with 0A000 too
	1235: pgerr.FeatureNotSupported,       // ER_NOT_SUPPORTED_YET
	1365: pgerr.DivisionByZero,            // ER_DIVISION_BY_ZERO
	1264: pgerr.NumericValueOutOfRange,    // ER_WARN_DATA_OUT_OF_RANGE
	1690: pgerr.NumericValueOutOfRange,    // ER_DATA_OUT_OF_RANGE
	1367: pgerr.NumericValueOutOfRange,    // ER_ILLEGAL_VALUE_FOR_TYPE ("Illegal double '1e500' value")
	1918: pgerr.InvalidTextRepresentation, // ER_BAD_DATA
	1406: pgerr.StringDataRightTruncation,
	1044: pgerr.InvalidAuthorization,  // ER_DBACCESS_DENIED_ERROR
	1045: pgerr.InvalidAuthorization,  // ER_ACCESS_DENIED_ERROR
	1698: pgerr.InvalidAuthorization,  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
	1142: pgerr.InsufficientPrivilege, // ER_TABLEACCESS_DENIED_ERROR
	1143: pgerr.InsufficientPrivilege, // ER_COLUMNACCESS_DENIED_ERROR
	1227: pgerr.InsufficientPrivilege, // ER_SPECIFIC_ACCESS_DENIED_ERROR
	1792: pgerr.ReadOnlySQLTransaction,
	1568: pgerr.ActiveSQLTransaction, // ER_CANT_CHANGE_TX_CHARACTERISTICS
	1040: pgerr.TooManyConnections,
	1317: pgerr.QueryCanceled, // ER_QUERY_INTERRUPTED (KILL QUERY)
	1969: pgerr.QueryCanceled, // MariaDB ER_STATEMENT_TIMEOUT
	3024: pgerr.QueryCanceled, // MySQL ER_QUERY_TIMEOUT
	1927: pgerr.ConnectionFailure,
	1053: pgerr.AdminShutdown, // ER_SERVER_SHUTDOWN
}

// sqlstates translates the SQLSTATEs MySQL defines for itself (ODBC's
// 42S.., 21S01, ...) into PostgreSQL's, for error numbers errorCodes
// does not list. Others are standard, or shared with PostgreSQL.
var sqlstates = map[string]string{
	"42S01": pgerr.DuplicateTable,  // base table or view already exists
	"42S02": pgerr.UndefinedTable,  // base table or view not found
	"42S11": pgerr.DuplicateTable,  // index already exists
	"42S12": pgerr.UndefinedObject, // index not found
	"42S21": pgerr.DuplicateColumn, // column already exists
	"42S22": pgerr.UndefinedColumn, // column not found
	"21S01": pgerr.SyntaxError,     // insert value list does not match column list
	"08S01": pgerr.ConnectionFailure,
	"01000": pgerr.DataException, // a warning (data truncated) raised as an error
	"HY000": pgerr.InternalError,
}

// classify maps an error from go-sql-driver onto a SQLSTATE error.
func classify(ctx context.Context, err error) *pgerr.Error {
	var pe *pgerr.Error
	if errors.As(err, &pe) {
		return pe
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fromMySQLError(me)
	}
	if isConnectionLoss(err) {
		return pgerr.Wrap(pgerr.ConnectionFailure, err, "connection to mysql lost")
	}
	if ctx.Err() != nil {
		return pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request")
	}
	return pgerr.Wrap(pgerr.InternalError, err, "")
}

func fromMySQLError(me *mysql.MySQLError) *pgerr.Error {
	code, ok := errorCodes[me.Number]
	switch {
	case me.Number == 1366 || me.Number == 1292 || me.Number == 1411 || me.Number == 1525:
		code = badValueCode(me.Message)
	case me.Number == 1091:
		code = cantDropCode(me.Message)
	case me.Number == 1005 && !strings.Contains(me.Message, "errno: 150 "):
		// Can't create table for a reason other than a foreign key.
		code = pgerr.InternalError
	case !ok:
		code = string(me.SQLState[:])
		if c, ok := sqlstates[code]; ok {
			code = c
		}
		if code == "\x00\x00\x00\x00\x00" || code == "" {
			code = pgerr.InternalError
		}
	}
	e := pgerr.Wrap(code, me, me.Message)
	e.Message = me.Message
	if me.Number == 1690 && strings.Contains(me.Message, "'"+DivisionByZeroMark) {
		e.Code, e.Message = pgerr.DivisionByZero, "division by zero"
	}
	if me.Number == 1690 && strings.Contains(me.Message, "'"+Int4RangeMark) {
		e.Code, e.Message = pgerr.NumericValueOutOfRange, "integer out of range"
	}
	if me.Number == 1690 && strings.Contains(me.Message, "'"+Int2RangeMark) {
		e.Code, e.Message = pgerr.NumericValueOutOfRange, "smallint out of range"
	}
	if me.Number == 1690 && strings.HasPrefix(me.Message, "BIGINT value is out of range") {
		// Signed 64-bit arithmetic, as PostgreSQL's bigint's.
		e.Message = "bigint out of range"
	}
	for _, m := range mathFailures {
		if me.Number == 1690 && strings.Contains(me.Message, "'"+m.mark) {
			e.Code, e.Message = m.code, m.message
		}
	}
	if me.Number == 1690 && (strings.HasPrefix(me.Message, "DOUBLE value is out of range in 'exp(") ||
		strings.HasPrefix(me.Message, "DOUBLE value is out of range in 'pow(")) {
		// MariaDB's exp and pow fail where the result is infinite, as
		// PostgreSQL's do.
		e.Code, e.Message = pgerr.NumericValueOutOfRange, "value out of range: overflow"
	}
	if me.Number == 1690 && strings.Contains(me.Message, "'"+AvgCountMark) {
		e.Code, e.Message = pgerr.FeatureNotSupported, "shepherd cannot compute avg() exactly over so many values on MariaDB/MySQL replicas (compared: fewer than 200000000; cast to an integer: fewer than 100000000)"
	}
	inPostgresWords(e, me)
	return e
}

// quoted returns the names MariaDB's message quotes ('x', `x` or "x"),
// in order.
func quoted(msg string) []string {
	var out []string
	for i := 0; i < len(msg); i++ {
		q := msg[i]
		if q != '\'' && q != '`' && q != '"' {
			continue
		}
		j := strings.IndexByte(msg[i+1:], q)
		if j < 0 {
			break
		}
		out = append(out, msg[i+1:i+1+j])
		i += j + 1
	}
	return out
}

// inPostgresWords gives e, classified from MariaDB's error me, the
// message PostgreSQL gives where MariaDB's says all PostgreSQL's needs,
// and otherwise (a constraint's error, which PostgreSQL words from the
// schema) what MariaDB named, in e.Raw, for package errform. MariaDB's
// messages have fixed formats (errmsg-utf8.txt); a message in another
// form is left as it is.
func inPostgresWords(e *pgerr.Error, me *mysql.MySQLError) {
	msg := me.Message
	switch me.Number {
	case 1062: // Duplicate entry '%s' for key '%s'
		rest, ok := strings.CutPrefix(msg, "Duplicate entry '")
		i := strings.LastIndex(rest, "' for key '")
		if ok && i >= 0 {
			key := strings.TrimSuffix(rest[i+len("' for key '"):], "'")
			if _, k, ok := strings.Cut(key, "."); ok { // MySQL 8: table.key
				key = k
			}
			e.Raw = &pgerr.Raw{Constraint: key, Value: rest[:i], HasValue: true}
		}
	case 1451, 1452: // Cannot ... row: a foreign key constraint fails ("db"."c", CONSTRAINT "c_p_fkey" FOREIGN KEY ("p") REFERENCES "p" ("id") ...)
		q := quoted(msg)
		if len(q) >= 4 {
			e.Raw = &pgerr.Raw{Table: q[1], Constraint: q[2], Columns: []string{q[3]}, Referenced: me.Number == 1451}
		}
	case 1216, 1217:
		e.Raw = &pgerr.Raw{Referenced: me.Number == 1217}
	case 1265: // Data truncated for column '%s' at row %ld (MODIFY ... NOT NULL of a text column over NULLs, among others)
		if q := quoted(msg); len(q) == 1 {
			e.Raw = &pgerr.Raw{Columns: q}
		}
	case 1048, 1364: // Column '%s' cannot be null; Field '%s' doesn't have a default value
		if q := quoted(msg); len(q) == 1 {
			e.Raw = &pgerr.Raw{Columns: q}
		}
	case 4025, 3819: // CONSTRAINT `%s` failed for `db`.`t`
		if q := quoted(msg); len(q) >= 1 {
			e.Raw = &pgerr.Raw{Constraint: q[0]}
			if len(q) == 3 {
				e.Raw.Table = q[2]
			}
		}
	case 1146: // Table 'db.t' doesn't exist
		if q := quoted(msg); len(q) == 1 {
			name := q[0]
			if _, t, ok := strings.Cut(name, "."); ok {
				name = t
			}
			e.Message = `relation "` + name + `" does not exist`
		}
	case 1050, 1061: // Table '%s' already exists; Duplicate key name '%s'
		if q := quoted(msg); len(q) == 1 {
			e.Message = `relation "` + q[0] + `" already exists`
		}
	case 1054: // Unknown column '%s' in '%s'
		if q := quoted(msg); len(q) == 2 {
			e.Message = undefinedColumn(q[0])
			e.Raw = &pgerr.Raw{Columns: []string{q[0]}}
		}
	case 1365:
		e.Message = "division by zero"
	case 1317: // Query execution was interrupted (KILL QUERY: a cancel)
		e.Message = "canceling statement due to user request"
	case 1213:
		e.Message = "deadlock detected"
	case 1020, 1205: // Record has changed since last read; Lock wait timeout exceeded
		// Both are serialization failures to the client (errorCodes).
		e.Message = "could not serialize access due to concurrent update"
	case 1264: // Out of range value for column '%s' at row %d
		if q := quoted(msg); len(q) == 1 {
			e.Raw = &pgerr.Raw{Columns: q}
		}
	case 1366: // Incorrect %s value: '%s' for column `db`.`t`.`c` at row %d
		if q := quoted(msg); len(q) == 4 && e.Code == pgerr.InvalidTextRepresentation {
			e.Raw = &pgerr.Raw{Table: q[2], Columns: q[3:], Value: q[0], HasValue: true}
		}
	}
}

// undefinedColumn is PostgreSQL's message for a column reference that
// names no column: a qualified name unquoted, as PostgreSQL prints it.
func undefinedColumn(name string) string {
	if strings.Contains(name, ".") {
		return "column " + name + " does not exist"
	}
	return `column "` + name + `" does not exist`
}

// cantDropCode picks the SQLSTATE of "Can't DROP <kind> `name`; check that
// it exists" (1091): a column PostgreSQL calls undefined (42703), an
// index or a constraint an undefined object (42704).
func cantDropCode(msg string) string {
	if strings.HasPrefix(msg, "Can't DROP COLUMN ") {
		return pgerr.UndefinedColumn
	}
	return pgerr.UndefinedObject
}

// failure refines the error of statement q, already classified, by what
// classify cannot see: the statement's verb, and the warnings the server
// left on the connection. Exec calls it for every failed statement. It
// only changes errors classify gave the default code of their error
// number, so calling it twice is harmless.
//
//   - DROP TABLE of a table a foreign key references fails with 1451, a
//     foreign key violation, where PostgreSQL says dependent objects
//     still exist (2BP01);
//   - a foreign key MariaDB cannot create fails with 1005 (errno 150) for
//     any reason, and only SHOW WARNINGS tells which: a referenced table
//     that does not exist (42P01), a referenced column that does not
//     exist (42703), columns of types that do not match (42804), or no
//     unique key on the referenced columns (42830).
func (c *Conn) failure(ctx context.Context, q driver.Query, err error) error {
	var pe *pgerr.Error
	var me *mysql.MySQLError
	if !errors.As(err, &pe) || !errors.As(err, &me) {
		return err
	}
	switch {
	case (me.Number == 1451 || me.Number == 1217) && q.Command() == "DROP TABLE" && pe.Code == pgerr.ForeignKeyViolation:
		out := *pe
		out.Code = dependentObjects
		out.Message = "cannot drop a table that a foreign key references: " + me.Message
		return &out
	case (me.Number == 1005 || me.Number == 1215) && pe.Code == invalidForeignKey:
		if code := c.foreignKeyCode(ctx); code != "" {
			out := *pe
			out.Code = code
			return &out
		}
	}
	return err
}

// foreignKeyCode reads why the last foreign key could not be created from
// the connection's warnings (InnoDB's fixed wording); "" when they do not
// say.
func (c *Conn) foreignKeyCode(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rows, err := c.conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return ""
	}
	defer rows.Close()
	code := ""
	for rows.Next() {
		var level, msg string
		var number int
		if rows.Scan(&level, &number, &msg) != nil {
			return ""
		}
		if number == 150 && code == "" {
			code = foreignKeyWarningCode(msg)
		}
	}
	return code
}

// foreignKeyWarningCode maps InnoDB's warning 150 onto PostgreSQL's code
// for the same mistake; "" when the wording is not known.
func foreignKeyWarningCode(msg string) string {
	switch {
	case strings.Contains(msg, "Referenced table") && strings.Contains(msg, "not found"):
		return pgerr.UndefinedTable
	case strings.Contains(msg, "was not found"):
		return pgerr.UndefinedColumn // "Column x was not found."
	case strings.Contains(msg, "does not match referenced column"):
		return pgerr.DatatypeMismatch
	case strings.Contains(msg, "no index in the referenced table"):
		return invalidForeignKey
	}
	return ""
}

// badValueCode picks the SQLSTATE for "Incorrect <type> value" errors
// (1366, 1292). MySQL uses those two numbers for every type, and only the
// message says which type it was; PostgreSQL tells an unreadable date or
// time (22007) from any other unreadable value (22P02). The message is
// written by the server from a fixed format ("Incorrect %s value: ..."),
// so its type word is reliable.
func badValueCode(msg string) string {
	rest, ok := strings.CutPrefix(msg, "Incorrect ")
	if !ok {
		return pgerr.InvalidTextRepresentation
	}
	typeWord, _, _ := strings.Cut(rest, " ")
	switch strings.ToLower(typeWord) {
	case "date", "time", "datetime", "timestamp", "year":
		return invalidDatetimeFormat
	}
	return pgerr.InvalidTextRepresentation
}

// isConnectionLoss reports whether err means the connection is unusable.
func isConnectionLoss(err error) bool {
	var ne net.Error
	return errors.Is(err, sqldriver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &ne)
}
