package session

import (
	"context"
	"errors"
	"regexp"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Sequelize 6's findOrCreate inserts through a temporary plpgsql
// function that catches the unique violation (query-generator's
// insertQuery with options.exception), one query string of three
// statements:
//
//	CREATE OR REPLACE FUNCTION pg_temp.testfunc(OUT response "T",
//	  OUT sequelize_caught_exception text) RETURNS RECORD AS $func_…$
//	  BEGIN INSERT INTO "T" … RETURNING * INTO response; EXCEPTION WHEN
//	  unique_violation THEN GET STACKED DIAGNOSTICS
//	  sequelize_caught_exception = PG_EXCEPTION_DETAIL; END $func_…$
//	  LANGUAGE plpgsql;
//	SELECT (testfunc.response)."id", …, testfunc.sequelize_caught_exception
//	  FROM pg_temp.testfunc();
//	DROP FUNCTION IF EXISTS pg_temp.testfunc();
//
// shepherd has no functions, so it runs exactly that form as what it
// does: the INSERT ... RETURNING * (in a block, under a savepoint that a
// unique violation rolls back, as the function's exception block does;
// outside one, as a statement of its own), answering the three
// statements as PostgreSQL does: CREATE FUNCTION, one row of the
// inserted columns asked for and NULL (or NULLs and the violation's
// DETAIL), DROP FUNCTION. Any other function is still refused.

// insertOrCatchBody is the function's body; its INSERT is group 1.
var insertOrCatchBody = regexp.MustCompile(`^\s*BEGIN\s+(INSERT\s.*)\s+RETURNING\s+\*\s+INTO\s+response;\s*EXCEPTION\s+WHEN\s+unique_violation\s+THEN\s+GET\s+STACKED\s+DIAGNOSTICS\s+sequelize_caught_exception\s*=\s*PG_EXCEPTION_DETAIL;\s*END\s*$`)

// insertOrCatch is the form above, read from a query string.
type insertOrCatch struct {
	insert  string   // INSERT ... RETURNING *
	table   string   // the OUT parameter's type: the INSERT's table
	columns []string // the response's columns the SELECT asks for
}

// parseInsertOrCatch reads sql as the form above; ok is false for
// anything else.
func parseInsertOrCatch(sql string) (f insertOrCatch, ok bool) {
	if !strings.Contains(sql, "sequelize_caught_exception") {
		return f, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 3 {
		return f, false
	}
	cf := tree.Stmts[0].Stmt.GetCreateFunctionStmt()
	sel := tree.Stmts[1].Stmt.GetSelectStmt()
	drop := tree.Stmts[2].Stmt.GetDropStmt()
	if cf == nil || sel == nil || drop == nil || cf.IsProcedure || !isTestfunc(cf.Funcname) || len(cf.Parameters) != 2 {
		return f, false
	}
	// The OUT parameters: response of the table's row type, the caught
	// exception's text.
	p0, p1 := cf.Parameters[0].GetFunctionParameter(), cf.Parameters[1].GetFunctionParameter()
	if p0 == nil || p1 == nil || p0.Mode != pg_query.FunctionParameterMode_FUNC_PARAM_OUT || p1.Mode != pg_query.FunctionParameterMode_FUNC_PARAM_OUT ||
		p0.Name != "response" || p1.Name != "sequelize_caught_exception" || len(p0.ArgType.GetNames()) != 1 ||
		len(p1.ArgType.GetNames()) != 1 || p1.ArgType.Names[0].GetString_().GetSval() != "text" {
		return f, false
	}
	f.table = p0.ArgType.Names[0].GetString_().GetSval()
	var body, lang string
	for _, o := range cf.Options {
		d := o.GetDefElem()
		if d == nil {
			return f, false
		}
		switch d.Defname {
		case "as":
			if items := d.Arg.GetList().GetItems(); len(items) == 1 {
				body = items[0].GetString_().GetSval()
			}
		case "language":
			lang = d.Arg.GetString_().GetSval()
		default:
			return f, false
		}
	}
	m := insertOrCatchBody.FindStringSubmatch(body)
	if lang != "plpgsql" || m == nil {
		return f, false
	}
	ins, err := pg_query.Parse(m[1])
	if err != nil || len(ins.Stmts) != 1 || ins.Stmts[0].Stmt.GetInsertStmt() == nil ||
		ins.Stmts[0].Stmt.GetInsertStmt().Relation.GetRelname() != f.table || len(ins.Stmts[0].Stmt.GetInsertStmt().ReturningList) > 0 {
		return f, false
	}
	f.insert = m[1] + " RETURNING *"
	// SELECT (testfunc.response)."c", ..., testfunc.sequelize_caught_exception
	// FROM pg_temp.testfunc()
	if len(sel.FromClause) != 1 || len(sel.TargetList) == 0 || sel.WhereClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil {
		return f, false
	}
	rf := sel.FromClause[0].GetRangeFunction()
	if rf == nil || len(rf.Functions) != 1 || rf.Alias != nil {
		return f, false
	}
	call := rf.Functions[0].GetList().GetItems()
	if len(call) == 0 || call[0].GetFuncCall() == nil || !isTestfunc(call[0].GetFuncCall().Funcname) || len(call[0].GetFuncCall().Args) > 0 {
		return f, false
	}
	for i, n := range sel.TargetList {
		rt := n.GetResTarget()
		if rt == nil || rt.Name != "" {
			return f, false
		}
		if i == len(sel.TargetList)-1 {
			if !isField(rt.Val.GetColumnRef(), "sequelize_caught_exception") {
				return f, false
			}
			continue
		}
		ind := rt.Val.GetAIndirection()
		if ind == nil || !isField(ind.Arg.GetColumnRef(), "response") || len(ind.Indirection) != 1 || ind.Indirection[0].GetString_() == nil {
			return f, false
		}
		f.columns = append(f.columns, ind.Indirection[0].GetString_().Sval)
	}
	// DROP FUNCTION IF EXISTS pg_temp.testfunc()
	if drop.RemoveType != pg_query.ObjectType_OBJECT_FUNCTION || len(drop.Objects) != 1 ||
		drop.Objects[0].GetObjectWithArgs() == nil || !isTestfunc(drop.Objects[0].GetObjectWithArgs().Objname) {
		return f, false
	}
	return f, true
}

// isTestfunc reports whether a qualified name is pg_temp.testfunc.
func isTestfunc(name []*pg_query.Node) bool {
	return len(name) == 2 && name[0].GetString_().GetSval() == "pg_temp" && name[1].GetString_().GetSval() == "testfunc"
}

// isField reports whether c is testfunc.field.
func isField(c *pg_query.ColumnRef, field string) bool {
	return c != nil && len(c.Fields) == 2 && c.Fields[0].GetString_().GetSval() == "testfunc" && c.Fields[1].GetString_().GetSval() == field
}

// runInsertOrCatch answers f's query string (see above).
func (s *Session) runInsertOrCatch(ctx context.Context, f insertOrCatch, emit func(*answer.Answer) error) error {
	parse := func(sql string) (*sqlan.Stmt, error) {
		sts, err := s.parseWaiting(ctx, sql)
		if err == nil && len(sts) != 1 {
			err = pgerr.New(pgerr.InternalError, "shepherd read its own statement wrongly (a bug; nothing ran)")
		}
		if err != nil {
			s.fail()
			return nil, err
		}
		return sts[0], nil
	}
	const sp = "shepherd_insert_or_catch"
	if s.failed {
		return pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	ins, err := parse(f.insert)
	if err != nil {
		return err
	}
	if err := emit(&answer.Answer{Tag: "CREATE FUNCTION"}); err != nil {
		return err
	}
	run := func(sql string) error {
		st, err := parse(sql)
		if err == nil {
			_, err = s.exec(ctx, st, nil)
		}
		return err
	}
	block := s.inBlock
	if block {
		if err := run("SAVEPOINT " + sp); err != nil {
			return err
		}
	}
	a, err := s.exec(ctx, ins, nil)
	var caught *pgerr.Error
	if err != nil {
		if !errors.As(err, &caught) || caught.Code != pgerr.UniqueViolation {
			return err
		}
		if block {
			if err := run("ROLLBACK TO SAVEPOINT " + sp); err != nil {
				return err
			}
		}
	}
	if block {
		if err := run("RELEASE SAVEPOINT " + sp); err != nil {
			return err
		}
	}
	out := &answer.Answer{Tag: "SELECT 1", RowsAffected: 1}
	row := make([]answer.Value, 0, len(f.columns)+1)
	guesses := ins.Columns()
	for _, name := range f.columns {
		// The column as PostgreSQL describes it, which the caught
		// violation's answer has no rows to show.
		col := answer.Column{Name: name, Type: answer.Text, Mod: -1, Size: -1}
		for _, g := range guesses {
			if g.Name == name {
				col = sqlan.Shape([]answer.Column{col}, []sqlan.ColumnGuess{g})[0]
			}
		}
		v := answer.Value{Null: true}
		if a != nil {
			for i, c := range a.Columns {
				if c.Name == name {
					col = c
					if len(a.Rows) == 1 {
						v = a.Rows[0][i]
					}
				}
			}
		}
		out.Columns = append(out.Columns, col)
		row = append(row, v)
	}
	out.Columns = append(out.Columns, answer.Column{Name: "sequelize_caught_exception", Type: answer.Text, Mod: -1, Size: -1})
	if caught != nil {
		row = append(row, answer.Value{Text: caught.Detail})
	} else {
		row = append(row, answer.Value{Null: true})
	}
	out.Rows = [][]answer.Value{row}
	if err := emit(out); err != nil {
		return err
	}
	return emit(&answer.Answer{Tag: "DROP FUNCTION"})
}
