package sqlan

import (
	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Array types (schema's "_int4", ...) are described with PostgreSQL's
// OIDs and carried as text: MariaDB and SQLite store PostgreSQL's output
// text of the array (see dialect/arrays.go), which is what PostgreSQL
// answers too.
func init() {
	for elem, oid := range arrayOIDs {
		if !schema.StoresArraysOf(elem) {
			continue
		}
		t := "_" + elem
		typeByName[t] = ColumnGuess{Type: answer.Text, OID: oid}
		typeOIDs[t] = oid
	}
}

// canonicalArrayArgs rewrites, in place, each parameter the statement
// takes as an array (a value for an array column, $1 in x = ANY($1))
// into PostgreSQL's output text of the array, so that every replica
// stores and compares the same bytes whatever form the client sent
// (lib/pq quotes every element, pgx's binary arrays reach here as
// pgtype's text). Text PostgreSQL refuses gets its error, before any
// replica runs the statement.
func (s *Stmt) canonicalArrayArgs(args []driver.Arg) error {
	for i, t := range s.paramTypes {
		if i >= len(args) || !schema.IsArray(t) || args[i].Null {
			continue
		}
		v, err := dialect.CanonicalArray(args[i].Text, t)
		if err != nil {
			return err
		}
		args[i].Text = v
	}
	return nil
}
