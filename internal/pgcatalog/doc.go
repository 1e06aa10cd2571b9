// Package pgcatalog answers clients' queries of the system catalogs
// (pg_catalog and information_schema) as PostgreSQL 15 would, for the
// objects shepherd manages.
//
// The catalog relations are kept in an engine shepherd controls, an
// in-memory SQLite database (modernc.org/sqlite: no server, no cgo), and
// the clients' catalog queries run there with SQLite's executor: joins,
// subqueries, aggregates, sorting are SQLite's, never a hand-written
// evaluator's. The engine holds PostgreSQL 15's built-in rows (pg_type
// with its OIDs and array types, pg_proc, pg_operator, pg_am, pg_settings,
// ... written by data/gen.sh from a fresh PostgreSQL 15) and rows for the
// user's tables, views, columns, defaults, keys, unique constraints,
// foreign keys, indexes, sequences and databases, built from shepherd's own schema
// catalog (internal/schema) each time a query asks about a schema
// snapshot other than the one loaded. shepherd's own table (shepherd_log)
// is never shown.
//
// A query is written for SQLite from PostgreSQL's parse tree (rewrite.go,
// exprs.go), printed back with pg_query's deparser: casts become
// functions (a reg* cast of a constant is resolved at once, with
// PostgreSQL's error when the object does not exist), regular
// expressions, arrays (kept as JSON arrays in the engine), ANY/ALL,
// set-returning functions (in the SELECT list: a json_each joined in; in
// FROM: a subquery, or, for unnest over earlier FROM items, since SQLite
// has no LATERAL, a json_each whose columns are expressions) and catalog
// helper functions (format_type, pg_get_expr, pg_get_indexdef,
// pg_get_constraintdef, pg_table_is_visible, pg_get_userbyid,
// obj_description, col_description, has_*_privilege, pg_encoding_to_char,
// acldefault, ...) become SQLite functions registered here (funcs.go) or SQL over the
// engine's tables (pg_get_viewdef and CHECK expressions are written at
// load time as PostgreSQL prints them, viewdef.go and checkexpr.go; what
// depends on the search path, as under pg_dump's ”, is chosen per query),
// with the caller's column references qualified so that
// the SQL's own tables cannot capture them; NULLs sort as PostgreSQL sorts
// them; a string compared with a boolean is read as one. Every string
// constant is bound as a parameter. The result columns get the PostgreSQL
// types the query's expressions have (catalog column types, casts,
// function result types) and values are printed in PostgreSQL's text form
// (booleans t/f, arrays {a,b}, regclass as a name); the client's
// parameters are described with the types PostgreSQL infers (a cast's, a
// compared column's). set_config() calls the session's SET through a
// non-deterministic SQLite function that finds the session by a token
// the query passes (the function registry is process-wide). What the writer does
// not know it refuses with 0A000 naming it; a panic in it becomes an
// error, never a crash.
//
// The session (internal/session) routes a statement here when sqlan
// classified it as a catalog query (Reads, or ReadsSequence: a sequence
// read as a relation, SELECT last_value, is_called FROM s), and passes the schema it sees
// (the committed one with its open block's DDL applied), its user, its
// database name, its SET parameters (current_setting) and a way to work
// out a view's columns (the analyser's). One engine serves every session
// of a schema catalog (For) and serialises their queries; it is made on
// the first catalog query and lives as long as the process.
//
// OIDs: built-in objects have PostgreSQL's; a user object's OID is a hash
// of its kind and name (probed in name order on a collision) at or above
// 16384, so the same schema gives the same OIDs after a restart. Renaming
// an object changes its OID, and dropping and re-creating one gives back
// the same OID, unlike PostgreSQL.
package pgcatalog
