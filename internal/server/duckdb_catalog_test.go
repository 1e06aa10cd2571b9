package server

// The corpus's table check (assertSameTables) lists a DuckDB replica's
// tables from its information schema, as PostgreSQL's.
func init() {
	catalogQuery["duckdb"] = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
}
