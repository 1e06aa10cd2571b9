package sqlan

import pg_query "github.com/pganalyze/pg_query_go/v6"

// immediateForeignKeys makes the DEFERRABLE foreign keys a CREATE TABLE
// or ALTER TABLE declares immediate ones, and reports whether there were
// any. With MariaDB or SQLite replicas every replica checks them at
// once: MariaDB cannot defer a check, SQLite's would fail a replica's
// COMMIT, which is taken as the replica failing (see dialect's
// constraint), and a PostgreSQL replica deferring them would accept a
// transaction that breaks one for a while where the others refuse it.
// Checking at once only ever refuses earlier than PostgreSQL, never
// accepts what it refuses; Django declares every foreign key DEFERRABLE
// INITIALLY DEFERRED. The catalog then records them as they are
// enforced.
func immediateForeignKeys(tree *pg_query.Node) bool {
	changed := false
	fix := func(n *pg_query.Node) {
		if con := n.GetConstraint(); con != nil && con.Contype == pg_query.ConstrType_CONSTR_FOREIGN && (con.Deferrable || con.Initdeferred) {
			con.Deferrable, con.Initdeferred = false, false
			changed = true
		}
	}
	column := func(n *pg_query.Node) {
		if cd := n.GetColumnDef(); cd != nil {
			for _, c := range cd.Constraints {
				fix(c)
			}
		}
	}
	if cs := tree.GetCreateStmt(); cs != nil {
		for _, e := range cs.TableElts {
			fix(e)
			column(e)
		}
	}
	if at := tree.GetAlterTableStmt(); at != nil {
		for _, c := range at.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd != nil && cmd.Def != nil {
				fix(cmd.Def)
				column(cmd.Def)
			}
		}
	}
	return changed
}
