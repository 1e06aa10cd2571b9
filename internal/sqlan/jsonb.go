package sqlan

import (
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// canonicalJSONBArgs rewrites, in place, each parameter the statement
// takes as jsonb (a value for a jsonb column, $1::jsonb) into jsonb's
// output text of the document (dialect.CanonicalJSONB), so that MariaDB
// and SQLite, which keep a jsonb value as the text they are given, store
// the document PostgreSQL stores: one member per key, escapes decoded,
// whatever form the client sent. Text PostgreSQL refuses gets its
// error, before any replica runs the statement.
func (s *Stmt) canonicalJSONBArgs(args []driver.Arg) error {
	for i, t := range s.paramTypes {
		if i >= len(args) || t != "jsonb" || args[i].Null {
			continue
		}
		v, err := dialect.CanonicalJSONB(args[i].Text)
		if err != nil {
			return err
		}
		args[i].Text = v
	}
	return nil
}
