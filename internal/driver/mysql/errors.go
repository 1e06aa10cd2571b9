package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// DivisionByZeroMark is the constant of the expression the SQL writer
// makes MariaDB evaluate when a divisor is zero: MariaDB returns NULL
// for x / 0, and the only error an expression can raise at will is an
// overflow, which the driver reports as 22012 when it names this value.
const DivisionByZeroMark = "18446744073709551615 + ("

// invalidDatetimeFormat is SQLSTATE 22007, which package pgerr does not
// name.
const invalidDatetimeFormat = "22007"

// errorCodes maps MySQL/MariaDB error numbers onto the SQLSTATE
// PostgreSQL gives the same failure. Numbers not listed fall back to the
// server's own SQLSTATE when it is specific.
var errorCodes = map[uint16]string{
	1213: pgerr.DeadlockDetected,       // ER_LOCK_DEADLOCK
	1205: pgerr.SerializationFailure,   // ER_LOCK_WAIT_TIMEOUT
	1020: pgerr.SerializationFailure,   // ER_CHECKREAD: record changed since last read
	1062: pgerr.UniqueViolation,        // ER_DUP_ENTRY
	1586: pgerr.UniqueViolation,        // ER_DUP_ENTRY_WITH_KEY_NAME
	1451: pgerr.ForeignKeyViolation,    // ER_ROW_IS_REFERENCED_2
	1452: pgerr.ForeignKeyViolation,    // ER_NO_REFERENCED_ROW_2
	1216: pgerr.ForeignKeyViolation,    // ER_NO_REFERENCED_ROW
	1217: pgerr.ForeignKeyViolation,    // ER_ROW_IS_REFERENCED
	1048: pgerr.NotNullViolation,       // ER_BAD_NULL_ERROR
	1364: pgerr.NotNullViolation,       // ER_NO_DEFAULT_FOR_FIELD
	3819: pgerr.CheckViolation,         // MySQL ER_CHECK_CONSTRAINT_VIOLATED
	4025: pgerr.CheckViolation,         // MariaDB ER_CONSTRAINT_FAILED
	1064: pgerr.SyntaxError,            // ER_PARSE_ERROR
	1149: pgerr.SyntaxError,            // ER_SYNTAX_ERROR
	1146: pgerr.UndefinedTable,         // ER_NO_SUCH_TABLE
	1051: pgerr.UndefinedTable,         // ER_BAD_TABLE_ERROR
	1054: pgerr.UndefinedColumn,        // ER_BAD_FIELD_ERROR
	1052: pgerr.AmbiguousColumn,        // ER_NON_UNIQ_ERROR
	1060: pgerr.DuplicateColumn,        // ER_DUP_FIELDNAME
	1050: pgerr.DuplicateTable,         // ER_TABLE_EXISTS_ERROR
	1049: pgerr.InvalidCatalogName,     // ER_BAD_DB_ERROR
	1305: pgerr.UndefinedFunction,      // ER_SP_DOES_NOT_EXIST
	1630: pgerr.UndefinedFunction,      // ER_FUNC_INEXISTENT_NAME_COLLISION
	1365: pgerr.DivisionByZero,         // ER_DIVISION_BY_ZERO
	1264: pgerr.NumericValueOutOfRange, // ER_WARN_DATA_OUT_OF_RANGE
	1690: pgerr.NumericValueOutOfRange, // ER_DATA_OUT_OF_RANGE
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
	case me.Number == 1366 || me.Number == 1292:
		code = badValueCode(me.Message)
	case !ok:
		code = string(me.SQLState[:])
		if code == "HY000" || code == "\x00\x00\x00\x00\x00" || code == "" {
			code = pgerr.InternalError
		}
	}
	e := pgerr.Wrap(code, me, me.Message)
	e.Message = me.Message
	if me.Number == 1690 && strings.Contains(me.Message, DivisionByZeroMark) {
		e.Code, e.Message = pgerr.DivisionByZero, "division by zero"
	}
	return e
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
