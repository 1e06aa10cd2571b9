package duckdb

import (
	"context"
	"errors"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// classify maps an error of the library onto a SQLSTATE error. DuckDB
// classifies its errors by kind (Constraint, Catalog, Binder, ...) and
// says the rest in words: the kind decides where it is enough, the
// message where it is not.
func (e *Engine) classify(ctx context.Context, err error) *pgerr.Error {
	var out *pgerr.Error
	var de *duckdb.Error
	switch {
	case errors.As(err, &out):
	case sharedPGError(err) != nil:
		out = sharedPGError(err)
	case ctx.Err() != nil:
		out = pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request")
	case errors.As(err, &de):
		out = pgerr.Wrap(sqlstateOf(de.Type, de.Msg), err, "")
		out.Message = firstLine(de.Msg)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		out = pgerr.Wrap(pgerr.QueryCanceled, err, "canceling statement due to user request")
	default:
		out = pgerr.Wrap(pgerr.InternalError, err, "")
	}
	return e.tagged(out)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// sqlstateOf maps a DuckDB error kind and message onto a SQLSTATE.
func sqlstateOf(t duckdb.ErrorType, msg string) string {
	has := func(s string) bool { return strings.Contains(msg, s) }
	switch t {
	case duckdb.ErrorTypeConstraint:
		switch {
		case has("NOT NULL constraint"):
			return pgerr.NotNullViolation
		case has("CHECK constraint"):
			return pgerr.CheckViolation
		case has("foreign key"), has("FOREIGN KEY"):
			return pgerr.ForeignKeyViolation
		case has("Duplicate key"), has("duplicate key"), has("unique"), has("primary key"),
			has("Data contains duplicates"):
			// "duplicate key" (lower case): a key a row of the same
			// transaction holds.
			return pgerr.UniqueViolation
		}
		return pgerr.IntegrityConstraint
	case duckdb.ErrorTypeTransaction:
		// A write-write conflict with another transaction: DuckDB's
		// optimistic concurrency control aborts the later one.
		if has("onflict") {
			return pgerr.SerializationFailure
		}
		if has("aborted") {
			return pgerr.InFailedSQLTransaction
		}
		return pgerr.InvalidTransactionState
	case duckdb.ErrorTypeInterrupt:
		return pgerr.QueryCanceled
	case duckdb.ErrorTypeParser, duckdb.ErrorTypeSyntax:
		return pgerr.SyntaxError
	case duckdb.ErrorTypeCatalog:
		switch {
		case has("already exists"):
			return pgerr.DuplicateTable
		case has("Table with name"), has("View with name"), has("does not exist") && has("able"):
			return pgerr.UndefinedTable
		case has("Scalar Function"), has("Aggregate Function"), has("Function with name"):
			return pgerr.UndefinedFunction
		}
		return pgerr.UndefinedObject
	case duckdb.ErrorTypeBinder:
		switch {
		case has("Referenced column"), has("not found in FROM clause"), has("does not have a column"):
			return pgerr.UndefinedColumn
		case has("ambiguous"):
			return pgerr.AmbiguousColumn
		case has("No function matches"):
			return pgerr.UndefinedFunction
		case has("must appear in the GROUP BY"):
			return "42803" // grouping_error
		}
		return pgerr.SyntaxErrorOrAccess
	case duckdb.ErrorTypeOutOfRange:
		return pgerr.NumericValueOutOfRange
	case duckdb.ErrorTypeDivideByZero:
		return pgerr.DivisionByZero
	case duckdb.ErrorTypeConversion, duckdb.ErrorTypeInvalidInput:
		switch {
		case has("division by zero"):
			return pgerr.DivisionByZero
		case has("value too long for type character varying("):
			return pgerr.StringDataRightTruncation
		case has(avgCountError):
			return pgerr.FeatureNotSupported
		case has("violates foreign key constraint"):
			// dialect's check of the rows of an added foreign key.
			return pgerr.ForeignKeyViolation
		case has("out of range"), has("Overflow"), has("overflow"):
			return pgerr.NumericValueOutOfRange
		}
		return pgerr.InvalidTextRepresentation
	case duckdb.ErrorTypeMismatchType, duckdb.ErrorTypeInvalidType:
		return pgerr.DatatypeMismatch
	case duckdb.ErrorTypeNotImplemented:
		return pgerr.FeatureNotSupported
	case duckdb.ErrorTypeConnection, duckdb.ErrorTypeFatal, duckdb.ErrorTypeIO:
		return pgerr.ConnectionFailure
	case duckdb.ErrorTypeOutOfMemory:
		return "53200"
	case duckdb.ErrorTypeDependency:
		return "2BP01"
	case duckdb.ErrorTypeSequence:
		return pgerr.DataException
	}
	return pgerr.InternalError
}
