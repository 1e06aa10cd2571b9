// Package slt runs sqllogictest files (SQLite's SQL test corpus) through
// shepherd and through a PostgreSQL server alone, and compares the two
// answers record by record (issue 16). The files' own expected values
// come from SQLite and are not used: PostgreSQL is the oracle, and a
// record PostgreSQL itself rejects is left out of the figures.
//
// The file format (https://www.sqlite.org/sqllogictest/doc/trunk/about.wiki):
//
//	hash-threshold N
//	skipif ENGINE | onlyif ENGINE     (conditions of the next record)
//	statement ok | statement error
//	SQL ...
//	query TYPES SORT [LABEL]
//	SQL ...
//	----
//	expected values ...
//	halt
//
// Records are separated by blank lines. TYPES has one letter per column
// (T text, I integer, R real); SORT is nosort, rowsort or valuesort.
package slt

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Kind is what a record is.
type Kind int

// Kinds of records.
const (
	Statement Kind = iota // statement ok / statement error
	Query                 // query TYPES SORT [LABEL]
	Halt                  // halt: stop reading the file
)

// Sort is how a query's answer is ordered before it is compared.
type Sort int

// Sort modes of a query record.
const (
	NoSort    Sort = iota // the rows as the engine returns them
	RowSort               // the rows sorted
	ValueSort             // every value of every row, sorted as one list
)

func (s Sort) String() string {
	switch s {
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return "nosort"
}

// Condition is a skipif or onlyif line before a record.
type Condition struct {
	Skip   bool   // skipif (else onlyif)
	Engine string // sqlite, mysql, postgresql, mssql, oracle
}

// Record is one record of a file.
type Record struct {
	Kind Kind
	// Line is the line of the record's first line (its conditions, if
	// any), 1-based.
	Line int
	// Conditions are the skipif/onlyif lines before the record.
	Conditions []Condition
	// SQL is the statement or query text (its lines joined by newlines).
	SQL string
	// ExpectError is set for "statement error" (in SQLite).
	ExpectError bool
	// Types, Sort and Label are a query's.
	Types string
	Sort  Sort
	Label string
}

// Applies reports whether the record's conditions let it run on engine
// (the sqllogictest name: "postgresql", "mysql", "sqlite", ...).
func (r *Record) Applies(engine string) bool {
	for _, c := range r.Conditions {
		if c.Skip == (c.Engine == engine) {
			return false
		}
	}
	return true
}

// Parse reads the records of one file; name is used in errors. It stops at
// a halt record that applies to PostgreSQL, which it returns last.
// Expected values are skipped.
func Parse(name string, rd io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var (
		out []Record
		cur *Record
		lno int
		// header is set once cur's statement or query line is read:
		// the lines that follow are its SQL.
		header bool
		body   []string
		// inValues is set after a query's "----", until the blank line.
		inValues bool
	)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, lno, fmt.Sprintf(format, args...))
	}
	finish := func() error {
		if cur == nil {
			return nil
		}
		if !header {
			return fail("conditions of line %d without a record", cur.Line)
		}
		if cur.Kind != Halt {
			if len(body) == 0 {
				return fail("record of line %d has no SQL", cur.Line)
			}
			cur.SQL = strings.Join(body, "\n")
		}
		out = append(out, *cur)
		cur, header, body, inValues = nil, false, nil, false
		return nil
	}
	for sc.Scan() {
		lno++
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		case inValues:
			continue
		case header:
			if cur.Kind == Query && trim == "----" {
				inValues = true
			} else {
				body = append(body, line)
			}
			continue
		case strings.HasPrefix(trim, "#"):
			continue
		}
		word := strings.Fields(trim)
		// A comment may follow the words of a control line.
		for i, w := range word {
			if strings.HasPrefix(w, "#") {
				word = word[:i]
				break
			}
		}
		if cur == nil {
			cur = &Record{Line: lno}
		}
		switch word[0] {
		case "hash-threshold":
			if len(cur.Conditions) > 0 {
				return nil, fail("hash-threshold after a condition")
			}
			cur = nil
		case "skipif", "onlyif":
			if len(word) < 2 {
				return nil, fail("%s without an engine", word[0])
			}
			cur.Conditions = append(cur.Conditions, Condition{Skip: word[0] == "skipif", Engine: word[1]})
		case "halt":
			cur.Kind, header = Halt, true
			if err := finish(); err != nil {
				return nil, err
			}
			if out[len(out)-1].Applies("postgresql") {
				return out, nil
			}
		case "statement":
			if len(word) != 2 || (word[1] != "ok" && word[1] != "error") {
				return nil, fail("statement must be followed by ok or error")
			}
			cur.Kind, header = Statement, true
			cur.ExpectError = word[1] == "error"
		case "query":
			if len(word) < 2 {
				return nil, fail("query without column types")
			}
			cur.Kind, header = Query, true
			cur.Types = word[1]
			if len(word) > 2 {
				switch word[2] {
				case "nosort":
				case "rowsort":
					cur.Sort = RowSort
				case "valuesort":
					cur.Sort = ValueSort
				default:
					return nil, fail("unknown sort mode %q", word[2])
				}
			}
			if len(word) > 3 {
				cur.Label = word[3]
			}
		default:
			return nil, fail("unknown line %q", trim)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// Sample returns the records up to the first query (a file's setup) and
// then every every-th record: a deterministic part of a file. Any part of
// a file is as good a test as the whole, since answers are compared with
// PostgreSQL's and not with the file's expected values.
func Sample(records []Record, every int) []Record {
	var out []Record
	setup := true
	n := 0
	for _, r := range records {
		if r.Kind == Query {
			setup = false
		}
		if setup || r.Kind == Halt {
			out = append(out, r)
			continue
		}
		if n%every == 0 {
			out = append(out, r)
		}
		n++
	}
	return out
}

// Write writes records in the file format, without expected values.
func Write(w io.Writer, records []Record) error {
	bw := bufio.NewWriter(w)
	for _, r := range records {
		for _, c := range r.Conditions {
			if c.Skip {
				fmt.Fprintf(bw, "skipif %s\n", c.Engine)
			} else {
				fmt.Fprintf(bw, "onlyif %s\n", c.Engine)
			}
		}
		switch r.Kind {
		case Halt:
			fmt.Fprintf(bw, "halt\n\n")
			continue
		case Statement:
			if r.ExpectError {
				fmt.Fprintf(bw, "statement error\n")
			} else {
				fmt.Fprintf(bw, "statement ok\n")
			}
		case Query:
			fmt.Fprintf(bw, "query %s %s", r.Types, r.Sort)
			if r.Label != "" {
				fmt.Fprintf(bw, " %s", r.Label)
			}
			fmt.Fprintln(bw)
		}
		fmt.Fprintf(bw, "%s\n\n", r.SQL)
	}
	return bw.Flush()
}
