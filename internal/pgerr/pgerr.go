// Package pgerr is the error vocabulary of shepherd: every failure that can
// reach a client carries a PostgreSQL SQLSTATE, so clients, the voting code
// and the replica managers classify errors by code and never by message text.
package pgerr

import (
	"errors"
	"fmt"
)

// SQLSTATE codes shepherd produces or classifies. The set is deliberately
// small: drivers map engine-specific codes onto these classes.
const (
	SuccessfulCompletion = "00000"
	FeatureNotSupported  = "0A000"
	ConnectionException  = "08000"
	ConnectionFailure    = "08006"
	// TransactionResolutionUnknown: a COMMIT whose outcome shepherd
	// cannot vouch for.
	TransactionResolutionUnknown = "08007"
	ProtocolViolation            = "08P01"
	InvalidAuthorization         = "28000"
	InvalidPassword              = "28P01"
	InvalidCatalogName           = "3D000"
	InvalidTransactionState      = "25000"
	ActiveSQLTransaction         = "25001"
	NoActiveSQLTransaction       = "25P01"
	InFailedSQLTransaction       = "25P02"
	ReadOnlySQLTransaction       = "25006"
	SerializationFailure         = "40001"
	DeadlockDetected             = "40P01"
	// LockNotAvailable: a lock wait timed out (MySQL 1205, PostgreSQL
	// lock_timeout).
	LockNotAvailable          = "55P03"
	TransactionRollback       = "40000"
	IntegrityConstraint       = "23000"
	NotNullViolation          = "23502"
	ForeignKeyViolation       = "23503"
	UniqueViolation           = "23505"
	CheckViolation            = "23514"
	SyntaxError               = "42601"
	UndefinedTable            = "42P01"
	UndefinedColumn           = "42703"
	UndefinedFunction         = "42883"
	UndefinedObject           = "42704"
	DuplicateTable            = "42P07"
	DuplicateObject           = "42710"
	DuplicateColumn           = "42701"
	AmbiguousColumn           = "42702"
	DatatypeMismatch          = "42804"
	InsufficientPrivilege     = "42501"
	SyntaxErrorOrAccess       = "42000"
	DataException             = "22000"
	DivisionByZero            = "22012"
	NumericValueOutOfRange    = "22003"
	InvalidTextRepresentation = "22P02"
	StringDataRightTruncation = "22001"
	InvalidParameterValue     = "22023"
	QueryCanceled             = "57014"
	AdminShutdown             = "57P01"
	CannotConnectNow          = "57P03"
	TooManyConnections        = "53300"
	OutOfMemory               = "53200"
	UndefinedParameterRef     = "42P02"
	InvalidSQLStatementName   = "26000"
	InvalidCursorName         = "34000"
	DuplicatePreparedStmt     = "42P05"
	DuplicateCursor           = "42P03"
	InternalError             = "XX000"
)

// IdleInTransactionTimeout ends, FATAL, a session idle in a transaction
// for longer than idle_in_transaction_session_timeout.
const IdleInTransactionTimeout = "25P03"

// PostgreSQL's errors for date and time input.
const (
	InvalidDatetimeFormat       = "22007"
	DatetimeFieldOverflow       = "22008"
	InvalidTimeZoneDisplacement = "22009"
)

// Codes for what a failing write-ahead log tells clients.
const (
	ProgramLimitExceeded = "54000"
	IOError              = "58030"
)

// Severity values used in ErrorResponse messages.
const (
	SeverityError = "ERROR"
	SeverityFatal = "FATAL"
)

// Error is an error with a SQLSTATE. It is what a client sees in an
// ErrorResponse and what voting compares (by Code, never by Message).
type Error struct {
	Code     string // five-character SQLSTATE
	Severity string // ERROR unless FATAL is meant
	Message  string
	Detail   string
	Hint     string
	// Where is the CONTEXT field: where the error happened (PostgreSQL's
	// "COPY t, line 2, column a: ...").
	Where string
	// The fields PostgreSQL sets on errors about one object (a
	// constraint, a column, a type): what a client reads to tell which
	// constraint failed without parsing the message. Empty when unset.
	Schema     string
	Table      string
	Column     string
	DataType   string
	Constraint string
	// Raw is what an engine other than PostgreSQL said of the object of
	// the error, in its own words, for package errform to give the error
	// PostgreSQL's message and fields; nil when there is nothing to
	// rewrite. It is never sent to a client.
	Raw *Raw
	// Replica names the replica the error came from, when it came from one.
	Replica string
	// cause is the underlying error, if any, for errors.Is/As.
	cause error
}

// Raw is what an engine's error named, as the engine named it (see
// Error.Raw). Each field is empty when the engine did not say.
type Raw struct {
	// Table is the table the engine named (a foreign key's referencing
	// table).
	Table string
	// Columns are the columns the engine named: a key's, or the one
	// column of a NOT NULL or range error.
	Columns []string
	// Constraint is the key or constraint name the engine gave
	// (MariaDB's "PRIMARY" for a primary key).
	Constraint string
	// Value is the duplicate key's value as the engine printed it
	// (MariaDB joins a composite key's values with '-').
	Value string
	// HasValue tells an empty Value from none.
	HasValue bool
	// Referenced marks a foreign key violation on the referenced side:
	// a row still referenced was deleted or its key changed.
	Referenced bool
	// Precision and Scale are a numeric field's, for "numeric field
	// overflow", when the engine said.
	Precision, Scale int
}

// Error implements error.
func (e *Error) Error() string {
	s := e.Message
	if e.Replica != "" {
		s = e.Replica + ": " + s
	}
	return fmt.Sprintf("%s (SQLSTATE %s)", s, e.Code)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.cause }

// SQLState returns the five-character SQLSTATE.
func (e *Error) SQLState() string { return e.Code }

// Class returns the two-character SQLSTATE class (e.g. "40").
func (e *Error) Class() string { return e.Code[:2] }

// New returns an ERROR with the given code and message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Severity: SeverityError, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an ERROR with the given code whose message is msg and whose
// cause is err.
func Wrap(code string, err error, msg string) *Error {
	m := msg
	if err != nil {
		if m == "" {
			m = err.Error()
		} else {
			m = m + ": " + err.Error()
		}
	}
	return &Error{Code: code, Severity: SeverityError, Message: m, cause: err}
}

// WithDetail returns a copy of e with Detail set.
func (e *Error) WithDetail(format string, args ...any) *Error {
	c := *e
	c.Detail = fmt.Sprintf(format, args...)
	return &c
}

// WithHint returns a copy of e with Hint set.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// WithWhere returns a copy of e with Where (CONTEXT) set.
func (e *Error) WithWhere(format string, args ...any) *Error {
	c := *e
	c.Where = fmt.Sprintf(format, args...)
	return &c
}

// Fatal returns a copy of e with severity FATAL.
func (e *Error) Fatal() *Error {
	c := *e
	c.Severity = SeverityFatal
	return &c
}

// From returns err as an *Error: err itself (or the *Error it wraps) when it
// has a SQLSTATE, else an internal error XX000 wrapping it. From(nil) is nil.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return Wrap(InternalError, err, "")
}

// Code returns the SQLSTATE of err, or "" when err is nil.
func Code(err error) string {
	if err == nil {
		return ""
	}
	return From(err).Code
}

// IsConnection reports whether err means the connection to a replica (or
// client) is gone: SQLSTATE class 08.
func IsConnection(err error) bool {
	c := Code(err)
	return len(c) == 5 && c[:2] == "08"
}

// IsRetryable reports whether err is a transaction rollback (class 40) that
// a client may retry: serialization failure, deadlock.
func IsRetryable(err error) bool {
	c := Code(err)
	return len(c) == 5 && c[:2] == "40"
}
