package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

// checkBytesSelect refuses, for MariaDB and SQLite, a string constant an
// INSERT ... SELECT stores into a bytea column: PostgreSQL reads it as
// bytea input ('\x00ff' is two bytes), the engines store its text (six).
// A constant cast to bytea, or one in VALUES, is written as its bytes
// (bytesLiteral).
func (w *writer) checkBytesSelect(sel *pg_query.SelectStmt, types []*schema.Column) {
	if w.pg() || sel == nil {
		return
	}
	if sel.Op != pg_query.SetOperation_SETOP_NONE {
		w.checkBytesSelect(sel.Larg, types)
		w.checkBytesSelect(sel.Rarg, types)
		return
	}
	for i, t := range sel.TargetList {
		if i >= len(types) || types[i] == nil || types[i].Type != "bytea" {
			continue
		}
		if _, ok := strConst(t.GetResTarget().GetVal()); ok {
			w.refuse("a string constant stored into bytea column %q by INSERT ... SELECT (cast it to bytea)", types[i].Name)
		}
	}
}
