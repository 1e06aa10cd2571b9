// Package repair finds the rows on which replicas differ and heals the
// minority from what f+1 of them agree on, while clients go on.
//
// Voting catches a faulty replica only when a query reads its damaged
// rows. A lost write or a flipped value that nobody reads sleeps until a
// second replica goes bad and f is exceeded; this package looks for such
// rows on purpose.
//
// Compare. For each table shepherd created (the catalog knows its key and
// column types), the key space is walked in chunks whose bounds come from
// the primary. Each chunk is hashed inside every engine: every row is
// written in one canonical text per column type, the same bytes on
// PostgreSQL, MariaDB and SQLite, and the sums of two 32-bit slices of
// the rows' MD5 and the row count form the chunk's signature. A chunk
// whose signatures differ is split into Fanout sub-ranges, hashed in one
// statement grouped by sub-range, and the differing ones are split again
// (a Merkle-style descent) until at most Leaf rows remain; those rows are
// fetched from every replica and compared in shepherd with the vote's own
// canonical forms. Tables with columns whose text differs between engines
// (floats, times of day, JSON, intervals) skip the hashing and are
// compared row by row, a chunk at a time.
//
// Every step is a survey (cluster.Survey): a transaction the coordinator
// schedules like client work, so every replica answers on the same
// logical state, but whose answers are collected rather than voted on.
//
// Repair. A row on which f+1 replicas agree (on its value, or on its
// absence) is written to the others as one survey per row: each
// dissenting replica gets the change that turns its row, as it was seen,
// into the agreed one (a DELETE, INSERT or UPDATE guarded by the row's
// hash), and each agreeing replica a check that its row is still the one
// seen. The survey commits only if every replica found what was expected,
// so a row a client changed in the meantime is left for the next pass
// rather than overwritten. A row without f+1 agreement is never written:
// it raises an alarm. Schema differences (a missing table or column) are
// reported as errors of that replica, not repaired.
package repair
