// Package schema is shepherd's own record of the tables clients created
// through it: column types as the client declared them (PostgreSQL's
// names), which columns shepherd fills in itself (keys it generates,
// defaults that would differ between replicas), keys and indexes.
//
// The SQL writer needs it to translate (integer division, SELECT *, index
// names that MariaDB scopes by table) and the statement analyser needs it
// to pin generated values. A Snapshot is immutable; a Catalog holds the
// current one and replaces it, with a new version, after each DDL
// statement that committed. The catalog is kept in a file under the data
// directory so that a restarted shepherd still knows which columns it must
// fill in, and where each key sequence stands.
package schema

import "slices"

// Fill says how shepherd fills a column that an INSERT leaves out, when
// the engines' own default would give different values on different
// replicas.
type Fill uint8

// Fills.
const (
	FillNone    Fill = iota // the engine's default (none, or a constant) is fine
	FillSerial              // SERIAL / IDENTITY: the next value of the column's sequence
	FillNow                 // now(), current_timestamp: the transaction's timestamp
	FillDate                // current_date
	FillUUID                // gen_random_uuid(): a fresh UUID per row
	FillRandom              // random(): a fresh float per row
	FillNextval             // DEFAULT nextval('s'): the next value of sequence Column.Seq
)

var fillNames = [...]string{"", "serial", "now", "date", "uuid", "random", "nextval"}

// String returns the fill's name.
func (f Fill) String() string {
	if int(f) < len(fillNames) {
		return fillNames[f]
	}
	return "fill?"
}

// Column is one column of a table.
type Column struct {
	Name string `json:"name"`
	// Type is PostgreSQL's internal name of the declared type: int2, int4,
	// int8, numeric, float4, float8, bool, text, varchar, bpchar, bytea,
	// date, time, timestamp, timestamptz, uuid, json, jsonb; or an array
	// type, "_" and its element type's name ("_text", arrays.go).
	Type string `json:"type"`
	// Mods are the type modifiers: varchar/char length, numeric
	// precision and scale.
	Mods    []int32 `json:"mods,omitempty"`
	NotNull bool    `json:"not_null,omitempty"`
	Fill    Fill    `json:"fill,omitempty"`
	// Always marks GENERATED ALWAYS AS IDENTITY: PostgreSQL accepts the
	// value shepherd chose only with OVERRIDING SYSTEM VALUE.
	Always bool `json:"always,omitempty"`
	// Seq is the sequence of a FillNextval column.
	Seq string `json:"seq,omitempty"`
	// Identity marks GENERATED ... AS IDENTITY (SERIAL has Fill
	// FillSerial without it), for the system catalogs.
	Identity bool `json:"identity,omitempty"`
	// Default is the DEFAULT expression as PostgreSQL's parser wrote it
	// back ("" when none, or for SERIAL), for the system catalogs.
	Default string `json:"default,omitempty"`
}

// Table is one table (or view, with no fills).
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	// Key is the primary key's columns, if any.
	Key []string `json:"key,omitempty"`
	// View marks a view.
	View bool `json:"view,omitempty"`
	// Uses are the tables and views a view's query reads (PostgreSQL
	// refuses to drop them while the view exists; the other engines do
	// not).
	Uses []string `json:"uses,omitempty"`
	// UsesColumns are the column names a view's query mentions ("*" for
	// a star): the columns of Uses it may depend on.
	UsesColumns []string `json:"uses_columns,omitempty"`
	// Query is a view's query as shepherd wrote it for PostgreSQL (""
	// when it could not be written back), for checks of what the view
	// computes.
	Query string `json:"query,omitempty"`
	// Aliases are the column names a view's definition gives (CREATE
	// VIEW v (a, b) AS ...), which replace its query's first ones.
	Aliases []string `json:"aliases,omitempty"`
	// Constraints are the table's primary key, unique constraints,
	// foreign keys and checks, by the names PostgreSQL knows them: the
	// one record of them, which error messages (package errform), the
	// names the replicas' engines get (package dialect) and the system
	// catalogs (package pgcatalog) all read, so that a client sees one
	// name for one constraint. What else needs them (the tables a
	// table's foreign keys reference) is derived by methods. Catalog
	// files of older shepherds, which kept foreign keys, unique
	// constraints and checks in fields of their own, are converted when
	// read (see UnmarshalJSON).
	Constraints []Constraint `json:"constraints,omitempty"`
}

// Children returns the other tables whose foreign keys reference table.
func (s *Snapshot) Children(table string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for name, t := range s.Tables {
		if name == table {
			continue
		}
		if t.references(table) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Dependents returns the views that read relation (see Table.Uses),
// sorted.
func (s *Snapshot) Dependents(relation string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for name, t := range s.Tables {
		for _, u := range t.Uses {
			if u == relation && name != relation {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// HasFills reports whether some column is filled by shepherd.
func (t *Table) HasFills() bool {
	for _, c := range t.Columns {
		if c.Fill != FillNone {
			return true
		}
	}
	return false
}

// Snapshot is the schema at one version. It is never modified once
// published.
type Snapshot struct {
	Version uint64            `json:"version"`
	Tables  map[string]*Table `json:"tables"`
	// Indexes maps an index name to its table.
	Indexes map[string]string `json:"indexes"`
	// IndexColumns maps an index name to its columns.
	IndexColumns map[string][]string `json:"index_columns,omitempty"`
	// Sequences are the sequences of CREATE SEQUENCE, by name (see
	// Sequence).
	Sequences map[string]*Sequence `json:"sequences,omitempty"`
	// UniqueIndexes are the indexes made by CREATE UNIQUE INDEX.
	UniqueIndexes map[string]bool `json:"unique_indexes,omitempty"`
	// IndexDefs maps an index name to its CREATE INDEX statement as
	// PostgreSQL's parser reads it back (name given, no IF NOT EXISTS):
	// what a SQLite rebuild of its table makes again, WHERE, UNIQUE and
	// ordering included. Its table and column names are those of the
	// statement; Indexes and IndexColumns follow later renames. Absent
	// for indexes made by an older shepherd.
	IndexDefs map[string]string `json:"index_defs,omitempty"`
}

// Table returns the named table (names as the parser folded them), or nil
// when shepherd does not know it. A nil snapshot knows nothing.
func (s *Snapshot) Table(name string) *Table {
	if s == nil {
		return nil
	}
	return s.Tables[name] // the parser folded unquoted names already
}

// IndexTable returns the table an index belongs to.
func (s *Snapshot) IndexTable(index string) (string, bool) {
	if s == nil {
		return "", false
	}
	t, ok := s.Indexes[index]
	return t, ok
}

// clone returns a deep-enough copy for applying one DDL statement: maps
// are copied, tables are copied when changed (by the caller).
func (s *Snapshot) clone() *Snapshot {
	n := &Snapshot{Tables: map[string]*Table{}, Indexes: map[string]string{}, IndexColumns: map[string][]string{}, Sequences: map[string]*Sequence{}}
	if s == nil {
		return n
	}
	for k, v := range s.Sequences {
		n.Sequences[k] = v
	}
	for k, v := range s.IndexColumns {
		n.IndexColumns[k] = v
	}
	if len(s.UniqueIndexes) > 0 {
		n.UniqueIndexes = map[string]bool{}
		for k, v := range s.UniqueIndexes {
			n.UniqueIndexes[k] = v
		}
	}
	if len(s.IndexDefs) > 0 {
		n.IndexDefs = map[string]string{}
		for k, v := range s.IndexDefs {
			n.IndexDefs[k] = v
		}
	}
	n.Version = s.Version
	for k, v := range s.Tables {
		n.Tables[k] = v
	}
	for k, v := range s.Indexes {
		n.Indexes[k] = v
	}
	return n
}

func (t *Table) clone() *Table {
	n := *t
	n.Columns = append([]Column(nil), t.Columns...)
	n.Key = append([]string(nil), t.Key...)
	n.Constraints = append([]Constraint(nil), t.Constraints...)
	return &n
}
