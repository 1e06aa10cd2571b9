// Package dialect writes a statement that a client sent in PostgreSQL's
// dialect, already parsed by PostgreSQL's own parser (pg_query), in the
// dialect of another engine: MySQL/MariaDB or SQLite. DuckDB, whose parser
// is PostgreSQL's, gets PostgreSQL's own tree back, rewritten where DuckDB
// reads it otherwise and checked against an allow-list (duckdb.go).
//
// The writer walks the parse tree and prints every node it knows in the
// target's syntax. It knows a node only when it can print it with the
// same meaning: anything else — a node type, a function, a type, an
// option — refuses the whole statement with SQLSTATE 0A000, naming the
// construct and the dialect, before any replica runs it. Refusing is
// always safe; printing something that means a little less (a function
// that treats NULL differently, a sort that places NULLs elsewhere) would
// make correct replicas disagree, which shepherd would then report as a
// fault.
//
// What the writer relies on from the engines' sessions (set up by their
// drivers): MariaDB runs with sql_mode ANSI_QUOTES, PIPES_AS_CONCAT and
// NO_BACKSLASH_ESCAPES, time zone UTC and found-rows counting; SQLite has
// case_sensitive_like and foreign_keys on, and its driver runs every
// statement of an ALTER TABLE text (SQLite's table rebuild, rebuild.go,
// is several statements in one text, run inside the replica's
// transaction; the log replays the same text). What it relies on from the
// schema: tables were created through shepherd, so their types were
// mapped by this package (see types.go), text compares byte-wise
// (utf8mb4_nopad_bin on MariaDB, BINARY on SQLite, the C collation on
// PostgreSQL).
//
// Where the meaning depends on types the text does not show — PostgreSQL
// divides integers by truncating, MariaDB does not — the writer infers
// expression types from constants, casts and the column types of the
// tables in scope (a Schema); when it cannot tell, it refuses rather than
// guesses.
package dialect
