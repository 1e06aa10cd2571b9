package sqlan

import (
	"errors"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// duckDB writes the statement for the DuckDB replicas names: PostgreSQL's
// text, rewritten where DuckDB reads it otherwise (dialect.DuckDB). What
// depends on the types of expressions (a numeric division, an average's
// digits) DuckDB computes as SQLite does, in binary floating point, so a
// statement the SQL writer refuses for SQLite is refused for DuckDB too;
// with SQLite replicas in the cluster that writer has already run.
func (s *Stmt) duckDB(env *Env, names []string) (string, error) {
	name := func(err error) error {
		var pe *pgerr.Error
		if errors.As(err, &pe) && (pe.Code == pgerr.FeatureNotSupported || pe.Code == stackDepthExceeded) {
			pe.Message = strings.Replace(pe.Message, "for SQLite replicas", "for DuckDB replicas", 1) +
				" (" + strings.Join(names, ", ") + ")"
		}
		return err
	}
	prepared, err := dialect.PrepareDuckDB(s.tree, env.Schema)
	if err != nil {
		return "", name(err)
	}
	tree, err := dialect.DuckDB(withoutSequenceDefaults(prepared), env.Schema)
	if err != nil {
		return "", name(err)
	}
	after, err := dialect.DuckDBAfter(s.tree, env.Schema)
	if err != nil {
		return "", name(err)
	}
	parts := oneObjectEach(tree)
	if parts == nil {
		parts = []*pg_query.Node{tree}
	}
	// The parts run in one transaction, in order; shepherd has checked
	// before that every object of a DROP exists or IF EXISTS
	// (checkDropObjects), so none fails part way. The driver splits
	// the text of the statements it may be given in parts
	// (driver.StatementSeparator): none of them may hold the separator.
	texts := make([]string, len(parts), len(parts)+len(after))
	for i, p := range parts {
		t, err := s.deparse(p)
		if err != nil {
			return "", err
		}
		texts[i] = t
	}
	texts = append(texts, after...)
	if len(texts) == 1 && !splitsDuckDB(tree) {
		return texts[0], nil
	}
	for _, t := range texts {
		if strings.Contains(t, driver.StatementSeparator) {
			return "", name(unsupported("a DROP, TRUNCATE, ALTER TABLE or DELETE holding a statement separator (a semicolon before a line break), for DuckDB replicas"))
		}
	}
	return strings.Join(texts, driver.StatementSeparator), nil
}

// splitsDuckDB reports whether the DuckDB driver splits the text of
// statement n at driver.StatementSeparator (it splits those it may be
// given in several parts: DROP, TRUNCATE, ALTER and DELETE).
func splitsDuckDB(n *pg_query.Node) bool {
	return n.GetDropStmt() != nil || n.GetTruncateStmt() != nil || n.GetAlterTableStmt() != nil || n.GetDeleteStmt() != nil
}

// oneObjectEach splits a DROP or TRUNCATE of several tables, which
// DuckDB takes one at a time, and an ALTER TABLE of several actions,
// into one statement each, or returns nil.
func oneObjectEach(tree *pg_query.Node) []*pg_query.Node {
	var out []*pg_query.Node
	if ds := tree.GetDropStmt(); ds != nil && len(ds.Objects) > 1 {
		for _, o := range ds.Objects {
			one := proto.Clone(tree).(*pg_query.Node)
			one.GetDropStmt().Objects = []*pg_query.Node{o}
			out = append(out, one)
		}
	}
	if at := tree.GetAlterTableStmt(); at != nil && len(at.Cmds) > 1 {
		// An ADD COLUMN ... NOT NULL and its SET NOT NULL (see
		// dialect.DuckDB).
		for _, c := range at.Cmds {
			one := proto.Clone(tree).(*pg_query.Node)
			one.GetAlterTableStmt().Cmds = []*pg_query.Node{c}
			out = append(out, one)
		}
	}
	if ts := tree.GetTruncateStmt(); ts != nil && len(ts.Relations) > 1 {
		for _, r := range ts.Relations {
			one := proto.Clone(tree).(*pg_query.Node)
			one.GetTruncateStmt().Relations = []*pg_query.Node{r}
			out = append(out, one)
		}
	}
	return out
}

func (s *Stmt) deparse(tree *pg_query.Node) (string, error) {
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: tree}}})
	if err != nil {
		return "", pgerr.Wrap(pgerr.InternalError, err, "writing the statement for DuckDB")
	}
	return dialect.QuoteDuckNames(text), nil
}
