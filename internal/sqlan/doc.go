// Package sqlan analyses the SQL that clients send, once, with
// PostgreSQL's own parser (pg_query): it splits a query string into
// statements, classifies each (read, write, DDL, transaction control,
// SET/SHOW), works out the facts the rest of shepherd needs (does it return
// rows, is its row order fixed, how many parameters, the command tag verb,
// BEGIN's options) and writes the statement for each replica dialect.
//
// Statements shepherd cannot replicate safely are refused here, before any
// replica sees them, with SQLSTATE 0A000 and the construct's name.
//
// Dialect rewriting is, for now, limited to parameter placeholders: $n
// stays $n for PostgreSQL, becomes ?n for SQLite (which numbers them the
// same way) and ? for MySQL (positional: the argument list is reordered
// and repeated to match). Fuller translation works on the parse tree and
// lives here too.
package sqlan
