package pgcatalog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // the engine's executor

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Engine holds the catalog relations in an in-memory SQLite database and
// runs catalog queries there. Its tables hold PostgreSQL's built-in rows
// (loaded once) and rows for the tables, views, indexes and constraints of
// one schema snapshot, reloaded when a query asks about another snapshot.
// Queries are serialised: catalog queries are rare and small.
type Engine struct {
	mu     sync.Mutex
	db     *sql.DB
	conn   *sql.Conn
	loaded *schema.Snapshot
	dbName string // the database name the information_schema rows carry
	dbList string // the other databases pg_database lists, joined by "\x00"
	ok     bool   // loaded is in the tables (false before the first load)
	// timeout and maxBytes are the limits of one query (see Query).
	timeout  time.Duration
	maxBytes int
}

// The limits of one catalog query. The engine answers one query at a
// time (Engine.mu), so a query that runs long or answers much (pg_class
// crossed with itself a few times) would hold every session's catalog
// queries up, and take memory, without bound: it is stopped with 54000
// once it ran QueryTimeout, or once its answer (the values' text) grew
// past MaxAnswerBytes. PostgreSQL's own catalogs answer what clients ask
// in milliseconds, with answers of kilobytes.
var (
	// QueryTimeout is a variable only so that the server's tests, whose
	// catalog answers are compared with PostgreSQL's while every package
	// runs under -race at once, can give slow runs room; the limit itself
	// is tested here (TestQueryLimits).
	QueryTimeout = 10 * time.Second
)

// MaxAnswerBytes bounds a catalog query's answer (see QueryTimeout).
const MaxAnswerBytes = 64 << 20

var (
	engines   sync.Map // *schema.Catalog -> *Engine
	enginesMu sync.Mutex
)

// For returns the engine answering for catalog cat, made on first use.
func For(cat *schema.Catalog) (*Engine, error) {
	if e, ok := engines.Load(cat); ok {
		return e.(*Engine), nil
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if e, ok := engines.Load(cat); ok {
		return e.(*Engine), nil
	}
	e, err := New()
	if err != nil {
		return nil, err
	}
	engines.Store(cat, e)
	return e, nil
}

// New opens an engine with the built-in rows loaded and no user objects.
func New() (*Engine, error) {
	db, err := sql.Open("sqlite", ":memory:?_dqs=0")
	if err != nil {
		return nil, fmt.Errorf("pgcatalog: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pgcatalog: %w", err)
	}
	e := &Engine{db: db, conn: conn, timeout: QueryTimeout, maxBytes: MaxAnswerBytes}
	// No value of the engine may be longer than an answer may be.
	_, err = sqlite.Limit(conn, sqliteLimitLength, MaxAnswerBytes)
	if err == nil {
		err = e.setup(ctx)
	}
	if err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("pgcatalog: %w", err)
	}
	return e, nil
}

// Close releases the engine.
func (e *Engine) Close() error {
	e.conn.Close()
	return e.db.Close()
}

// sqliteLimitLength is SQLite's SQLITE_LIMIT_LENGTH: the longest text or
// blob value.
const sqliteLimitLength = 0

// setup creates the relations (pg_catalog and information_schema as
// attached databases, so that both qualified and bare names resolve) and
// loads the built-in rows.
func (e *Engine) setup(ctx context.Context) error {
	var stmts []string
	for _, r := range relations {
		if v, ok := catalogViews[r.name]; ok && r.schema == "pg_catalog" {
			stmts = append(stmts, "CREATE VIEW pg_catalog."+r.name+" AS "+v)
			continue
		}
		var cols []string
		for _, c := range r.cols {
			cols = append(cols, quoteIdent(c.name)+" "+kindOf(c.typ).affinity())
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s.%s (%s)", r.schema, quoteIdent(r.name), strings.Join(cols, ", ")))
	}
	stmts = append(sideTables, stmts...)
	for _, s := range stmts {
		if _, err := e.conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	tx, err := e.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range relations {
		if len(r.rows) == 0 {
			continue
		}
		ins, err := tx.PrepareContext(ctx, insertSQL(r))
		if err != nil {
			return err
		}
		args := make([]any, len(r.cols))
		for _, row := range r.rows {
			for i, v := range row {
				args[i] = storeValue(r.cols[i].typ, v)
			}
			if _, err := ins.ExecContext(ctx, args...); err != nil {
				ins.Close()
				return fmt.Errorf("%s.%s: %w", r.schema, r.name, err)
			}
		}
		ins.Close()
	}
	b, err := dataFiles.ReadFile("data/keywords.tsv")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return fmt.Errorf("keywords.tsv: %q", line)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO shepherd_keywords VALUES (?, ?, ?, ?, ?)",
			f[0], f[1], storeValue("bool", &f[2]), f[3], f[4]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func insertSQL(r *relation) string {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(r.cols)), ", ")
	return fmt.Sprintf("INSERT INTO %s.%s VALUES (%s)", r.schema, quoteIdent(r.name), marks)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// sideTables are the engine's own tables, which the rewritten forms of
// catalog functions read (pg_get_indexdef, pg_get_constraintdef,
// pg_get_serial_sequence, pg_get_keywords). They are kept with the
// catalog relations (views can read them), but no client query can name
// them: the rewriter knows them only unqualified, from its own forms.
var sideTables = []string{
	"PRAGMA case_sensitive_like = ON",
	"ATTACH DATABASE ':memory:' AS pg_catalog",
	"ATTACH DATABASE ':memory:' AS information_schema",
	"CREATE TABLE pg_catalog.shepherd_indexdef (oid INTEGER PRIMARY KEY, def TEXT, cols TEXT)",
	"CREATE TABLE pg_catalog.shepherd_condef (oid INTEGER PRIMARY KEY, def TEXT, pretty TEXT)",
	"CREATE TABLE pg_catalog.shepherd_viewdef (oid INTEGER PRIMARY KEY, plain TEXT, pretty TEXT, qualified TEXT, pretty_qualified TEXT)",
	"CREATE TABLE pg_catalog.shepherd_serial (tab TEXT, col TEXT, seq TEXT)",
	"CREATE TABLE pg_catalog.shepherd_seqlast (name TEXT, last INTEGER, rel_last INTEGER, called INTEGER)",
	"CREATE TABLE pg_catalog.shepherd_keywords (word TEXT, catcode TEXT, barelabel INTEGER, catdesc TEXT, baredesc TEXT)",
}

// catalogViews are the pg_catalog views the engine defines over its
// relations, in SQLite's SQL (a view reads its own database only).
// Indexes of the system catalogs are not in pg_indexes: the engine has
// none.
var catalogViews = map[string]string{
	// pg_sequences' last_value is the sequence's state when the query
	// runs (shepherd_seqlast, see Session.SeqLast).
	"pg_sequences": `SELECT n.nspname AS schemaname, c.relname AS sequencename,
		(SELECT a.rolname FROM pg_authid a WHERE a.oid = c.relowner) AS sequenceowner, s.seqtypid AS data_type,
		s.seqstart AS start_value, s.seqmin AS min_value, s.seqmax AS max_value, s.seqincrement AS increment_by,
		s.seqcycle AS cycle, s.seqcache AS cache_size, (SELECT l.last FROM shepherd_seqlast l WHERE l.name = c.relname) AS last_value
		FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'S'`,
	// The I/O statistics views list PostgreSQL's rows; shepherd reads
	// no blocks of its own, so the counters are 0 (NULL, as in
	// PostgreSQL, where there is no index or TOAST table to count).
	"pg_statio_all_tables": `SELECT c.oid AS relid, n.nspname AS schemaname, c.relname AS relname, 0 AS heap_blks_read, 0 AS heap_blks_hit,
		CASE WHEN EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = c.oid) THEN 0 END AS idx_blks_read,
		CASE WHEN EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = c.oid) THEN 0 END AS idx_blks_hit,
		CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS toast_blks_read, CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS toast_blks_hit,
		CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS tidx_blks_read, CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS tidx_blks_hit
		FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 't', 'm')`,
	"pg_statio_user_tables": `SELECT c.oid AS relid, n.nspname AS schemaname, c.relname AS relname, 0 AS heap_blks_read, 0 AS heap_blks_hit,
		CASE WHEN EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = c.oid) THEN 0 END AS idx_blks_read,
		CASE WHEN EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = c.oid) THEN 0 END AS idx_blks_hit,
		CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS toast_blks_read, CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS toast_blks_hit,
		CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS tidx_blks_read, CASE WHEN c.reltoastrelid <> 0 THEN 0 END AS tidx_blks_hit
		FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 't', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND substr(n.nspname, 1, 8) <> 'pg_toast'`,
	"pg_tables": `SELECT n.nspname AS schemaname, c.relname AS tablename,
		(SELECT a.rolname FROM pg_authid a WHERE a.oid = c.relowner) AS tableowner, NULL AS tablespace,
		c.relhasindex AS hasindexes, c.relhasrules AS hasrules, c.relhastriggers AS hastriggers,
		c.relrowsecurity AS rowsecurity
		FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p')`,
	"pg_indexes": `SELECT n.nspname AS schemaname, c.relname AS tablename, i.relname AS indexname,
		NULL AS tablespace, d.def AS indexdef
		FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
		LEFT JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN shepherd_indexdef d ON d.oid = i.oid
		WHERE c.relkind IN ('r', 'm', 'p') AND i.relkind IN ('i', 'I')`,
}

// userTables are the tables that hold rows for user objects: those with
// OIDs at or above firstUserOID in the tables that also hold built-in
// rows, all rows in the others.
var userTables = []string{
	"pg_catalog.pg_class", "pg_catalog.pg_attribute", "pg_catalog.pg_type", "pg_catalog.pg_database",
	"pg_catalog.pg_index", "pg_catalog.pg_constraint", "pg_catalog.pg_attrdef",
	"pg_catalog.pg_description", "pg_catalog.pg_sequence", "pg_catalog.pg_depend",
	"information_schema.tables", "information_schema.columns", "information_schema.views",
	"information_schema.table_constraints", "information_schema.key_column_usage",
	"information_schema.constraint_column_usage", "information_schema.referential_constraints",
	"information_schema.sequences",
	"shepherd_indexdef", "shepherd_condef", "shepherd_serial", "shepherd_viewdef",
}

// load replaces the user rows with those of snap. The caller holds e.mu.
func (e *Engine) load(ctx context.Context, snap *schema.Snapshot, viewCols func(*schema.Table) []answer.Column, db string, dbs []string) error {
	if db == "" {
		db = defaultDatabase
	}
	list := strings.Join(dbs, "\x00")
	if e.ok && e.loaded == snap && e.dbName == db && e.dbList == list {
		return nil
	}
	tx, err := e.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range userTables {
		var where string
		switch t {
		case "pg_catalog.pg_class", "pg_catalog.pg_type", "pg_catalog.pg_database":
			where = fmt.Sprintf(" WHERE oid >= %d", firstUserOID)
		case "pg_catalog.pg_attribute":
			where = fmt.Sprintf(" WHERE attrelid >= %d", firstUserOID)
		case "pg_catalog.pg_description":
			where = fmt.Sprintf(" WHERE objoid >= %d", firstUserOID)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+where); err != nil {
			return err
		}
	}
	for _, r := range buildRows(snap, viewCols, db, dbs...) {
		rel := relByName[r.rel]
		q := ""
		var args []any
		if rel != nil {
			q = insertSQL(rel)
			args = make([]any, len(rel.cols))
			for i, c := range rel.cols {
				if v, ok := r.vals[c.name]; ok {
					args[i] = v
				} else {
					args[i] = zeroValue(c.typ)
				}
			}
		} else {
			// a side table: values in order
			marks := strings.TrimSuffix(strings.Repeat("?, ", len(r.list)), ", ")
			q = fmt.Sprintf("INSERT INTO %s VALUES (%s)", r.rel, marks)
			args = r.list
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("pgcatalog: loading %s: %w", r.rel, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	e.loaded, e.dbName, e.dbList, e.ok = snap, db, list, true
	return nil
}

// zeroValue is what a user row holds in a column shepherd has nothing
// for: PostgreSQL's value for a plain table (0, false, empty), NULL for
// arrays, expressions and text that may be absent.
func zeroValue(typ string) any {
	switch kindOf(typ) {
	case kInt, kBool:
		return int64(0)
	case kFloat:
		return float64(0)
	case kArray:
		return nil
	}
	if typ == "char" {
		return ""
	}
	return nil
}
