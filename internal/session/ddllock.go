package session

import (
	"context"
	"slices"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgtree"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// lockDDL takes the DDL locks (see Shared) of the relations st names,
// waiting as PostgreSQL's DDL waits for its ACCESS EXCLUSIVE lock, and
// returns st analysed anew against the schema the session sees once it
// holds them: st was analysed when it arrived, perhaps before another
// session's DDL of the same table reached the catalog, and what dialect
// writes from the catalog (SQLite's table rebuild) must come from the
// definition the statement really changes. The locks are held until the
// transaction's change is in the catalog (commit) or it rolled back
// (endBlock).
func (s *Session) lockDDL(ctx context.Context, st *sqlan.Stmt) (*sqlan.Stmt, error) {
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, err
	}
	rels := ddlRelations(st.Tree(), snap)
	if len(rels) == 0 {
		return st, nil
	}
	for _, rel := range rels {
		if err := s.waitLock(ctx, lockKey{rel: rel, db: s.database}, true, true); err != nil {
			return nil, err
		}
	}
	sts, err := s.parse(st.SQL)
	if err != nil {
		return nil, err
	}
	if len(sts) != 1 {
		return nil, pgerr.New(pgerr.InternalError, "shepherd analysed a DDL statement again as %d statements (a bug; nothing ran)", len(sts))
	}
	return sts[0], nil
}

// parseWaiting is parse, except that a DDL statement whose analysis
// failed while another transaction holds the DDL lock of a relation it
// names is analysed again once this session holds those locks: it may
// fail only for want of that transaction's change (an ALTER of a column
// another block is adding), and PostgreSQL waits for the transaction and
// then runs the statement against the new definition. The locks taken
// stay with the session's transaction (the statement runs next, and
// takes them again in lockDDL); outside a block a statement that still
// fails lets go of them.
func (s *Session) parseWaiting(ctx context.Context, sql string) ([]*sqlan.Stmt, error) {
	sts, err := s.parse(sql)
	if err == nil {
		return sts, nil
	}
	return s.retryDDL(ctx, sql, err)
}

// retryDDL is parseWaiting once the analysis of sql failed with err.
func (s *Session) retryDDL(ctx context.Context, sql string, err error) ([]*sqlan.Stmt, error) {
	// The analysis may have failed on the text itself (nesting deeper
	// than the parser's stack, bad encoding): parse only what sqlan's
	// own checks let through.
	if _, serr := sqlan.Split(sql); serr != nil {
		return nil, err
	}
	raw, perr := pg_query.Parse(sql)
	if perr != nil || len(raw.Stmts) != 1 || !ddlNode(raw.Stmts[0].Stmt) {
		return nil, err
	}
	snap, serr := s.visibleSchema()
	if serr != nil {
		return nil, err
	}
	rels := ddlRelations(raw.Stmts[0].Stmt, snap)
	if !s.shared.locks.heldByOthers(&s.owner, rels, s.database) {
		return nil, err
	}
	var lerr error
	for _, rel := range rels {
		if lerr = s.waitLock(ctx, lockKey{rel: rel, db: s.database}, true, true); lerr != nil {
			break
		}
	}
	if lerr != nil {
		err = lerr
	} else {
		var sts []*sqlan.Stmt
		if sts, err = s.parse(sql); err == nil {
			return sts, nil
		}
	}
	if !s.inBlock && !s.implicit && s.txn == nil {
		s.shared.locks.releaseTables(&s.owner)
	}
	return nil, err
}

// ddlNode reports whether a raw statement is DDL of relations.
func ddlNode(n *pg_query.Node) bool {
	switch n.GetNode().(type) {
	case *pg_query.Node_CreateStmt, *pg_query.Node_AlterTableStmt, *pg_query.Node_DropStmt,
		*pg_query.Node_IndexStmt, *pg_query.Node_RenameStmt, *pg_query.Node_ViewStmt,
		*pg_query.Node_CreateTableAsStmt:
		return true
	}
	return false
}

// ddlRelations names the relations whose DDL lock a DDL statement takes,
// sorted (two statements take theirs in one order): every relation it
// names, the table of an index it names, and the tables the foreign keys
// of those tables reference or that reference them (whose definitions,
// as SQLite's rebuild writes them, name the relation). More than
// PostgreSQL locks, never less than a rebuild reads.
func ddlRelations(tree *pg_query.Node, snap *schema.Snapshot) []string {
	if tree == nil {
		return nil
	}
	var names []string
	pgtree.Walk(tree.ProtoReflect(), func(m protoreflect.Message) bool {
		switch n := m.Interface().(type) {
		case *pg_query.RangeVar:
			names = append(names, n.Relname)
		case *pg_query.DropStmt:
			// DROP names its objects as lists of strings (the last
			// one the relation's name).
			for _, o := range n.Objects {
				if l := o.GetList(); l != nil && len(l.Items) > 0 {
					if str := l.Items[len(l.Items)-1].GetString_(); str != nil {
						names = append(names, str.Sval)
					}
				}
			}
		}
		return true
	})
	out := slices.Clone(names)
	for _, name := range names {
		if table, ok := snap.IndexTable(name); ok {
			out = append(out, table)
			name = table
		}
		if t := snap.Table(name); t != nil {
			out = append(out, t.Parents()...)
		}
		out = append(out, snap.Children(name)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// waitLock takes k, waiting as long as PostgreSQL's settings let it:
// lock_timeout and statement_timeout bound the wait, and after
// deadlock_timeout a cycle through an engine's lock is looked for
// (lockTable.engineCycle).
func (s *Session) waitLock(ctx context.Context, k lockKey, exclusive, xact bool) error {
	wctx, cancel := s.waitContext(ctx)
	defer cancel()
	s.owner.checkAfter = s.timeoutSetting("deadlock_timeout")
	_, err := s.shared.locks.lock(wctx, &s.owner, k, exclusive, xact, true)
	return err
}

// waitContext bounds a wait for a lock shepherd holds by lock_timeout and
// statement_timeout, as PostgreSQL's waits are: the lock's wait then ends
// with 55P03 or 57014 (see lockTable.lock).
func (s *Session) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	lockT, stmtT := s.timeoutSetting("lock_timeout"), s.timeoutSetting("statement_timeout")
	switch {
	case lockT > 0 && (stmtT == 0 || lockT <= stmtT):
		return context.WithTimeoutCause(ctx, lockT, pgerr.New(pgerr.LockNotAvailable, "canceling statement due to lock timeout"))
	case stmtT > 0:
		return context.WithTimeoutCause(ctx, stmtT, pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout"))
	}
	return context.WithCancel(ctx)
}

// timeoutSetting is a setting in milliseconds as a duration, 0 when off.
func (s *Session) timeoutSetting(name string) time.Duration {
	v, _ := s.param(name)
	ms, ok, _ := parseUnits(v, "ms")
	if !ok || ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}
