// Package session implements one client connection's SQL semantics on top
// of the cluster: transaction blocks (explicit, implicit, failed), autocommit,
// prepared statements, and the SET/SHOW parameters shepherd answers itself.
//
// Transaction rules follow PostgreSQL: a statement outside a block is its
// own transaction and is answered only once it committed; after an error
// inside a block every statement fails with 25P02 until ROLLBACK (COMMIT
// then rolls back too) or ROLLBACK TO SAVEPOINT (savepoint.go); several statements in one simple Query message
// form one implicit block unless they manage transactions themselves.
package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// Session is one client's session. It implements pgwire.Session.
type Session struct {
	cluster *cluster.Cluster
	cache   *sqlan.Cache
	params  map[string]string

	txn      *cluster.Txn     // open transaction on the replicas, nil before its first statement
	inBlock  bool             // explicit BEGIN seen
	implicit bool             // implicit block of a multi-statement Query
	failed   bool             // block failed: 25P02 until it ends
	txOpts   driver.TxOptions // options of the current block
	txnTime  time.Time        // the transaction's timestamp (now())
	ddl      []*sqlan.Stmt    // DDL of the open block, recorded in the catalog at COMMIT
	// deferredDDL: the block sent DDL that the replicas committing DDL as
	// they run it (MariaDB) get only after the block commits
	// (cluster.DefersBlockDDL).
	deferredDDL bool
	defaults    driver.TxOptions // SET SESSION CHARACTERISTICS

	// savepoints of the open block, oldest first; spCount numbers the
	// block's SAVEPOINTs (see savepoint.go).
	savepoints []savepoint
	spCount    int

	// blockSchema is the schema the open block sees (catalog.go).
	blockSchema blockSchema

	// Settings (see params.go): startup holds the startup packet's,
	// params SET's, local SET LOCAL's until the block ends; saved (with
	// savedDefaults) is params as the block found them, for ROLLBACK.
	startup       map[string]string
	local         map[string]string
	saved         map[string]string
	savedDefaults driver.TxOptions
	startDefaults driver.TxOptions

	user, database string
	conn           pgwire.Conn // nil until Attach
	shared         *Shared
	owner          lockOwner          // in shared's advisory lock table
	tableOwner     tableOwner         // in shared's table locks (LOCK TABLE)
	notes          notifyState        // LISTEN and NOTIFY (notify.go)
	inbox          inbox              // notifications received, not yet sent
	lastXid        int64              // txid_current() of the open transaction, 0 before
	seqs           seqSession         // currval() and lastval() of the session's sequences
	reported       map[string]string  // the values the client was last told (ChangedParameters)
	cursors        map[string]*cursor // DECLAREd cursors, by name
	dbs            Databases          // CREATE/DROP DATABASE (databases.go); nil: refused
	closed         func()             // called once at Close (SetDatabases)
	cursorLimit    int64              // bytes its cursors may keep; 0 for shared's

	cancelMu sync.Mutex
	cancel   context.CancelFunc // cancels the running call

	// call is the context of client calls, derived from callParent (see
	// cancellable); callCancel ends it.
	call       context.Context
	callCancel context.CancelFunc
	callParent context.Context
}

// New returns a session on c. cache and shared are shared between
// sessions (shared nil: the session shares advisory locks with no other).
func New(c *cluster.Cluster, cache *sqlan.Cache, shared *Shared, info pgwire.StartupInfo) *Session {
	if shared == nil {
		shared = NewShared()
	}
	s := &Session{cluster: c, cache: cache, params: map[string]string{}, startup: map[string]string{},
		user: info.User, database: info.Database, shared: shared, inbox: inbox{ready: make(chan struct{}, 1)}}
	s.owner.cl = c
	for k, v := range info.Params {
		if k != "user" && k != "database" {
			k = strings.ToLower(k)
			if n, err := normalise(k, v); err == nil {
				v = n
			}
			s.startup[k] = v
		}
	}
	// The front told the client these at startup.
	s.reported = map[string]string{}
	for _, name := range reportedParams {
		s.reported[name], _ = s.param(name)
	}
	return s
}

// TxStatus implements pgwire.Session.
func (s *Session) TxStatus() byte {
	switch {
	case s.failed:
		return 'E'
	case s.inBlock:
		return 'T'
	}
	return 'I'
}

// Cancel implements pgwire.Session.
func (s *Session) Cancel() {
	s.cancelMu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.cancelMu.Unlock()
}

// cancellable derives the context of one client call, which Cancel ends
// until endCall. The context is made anew only when the caller's changed
// or the last one was cancelled: Cancel reaches it only during a call, so
// one not cancelled serves the next call too, which saves a context per
// statement.
func (s *Session) cancellable(ctx context.Context) context.Context {
	if s.call == nil || s.callParent != ctx || s.call.Err() != nil {
		s.call, s.callCancel = context.WithCancel(ctx)
		s.callParent = ctx
	}
	s.cancelMu.Lock()
	s.cancel = s.callCancel
	s.cancelMu.Unlock()
	return s.call
}

// endCall ends the call cancellable began: Cancel no longer reaches it.
func (s *Session) endCall() {
	s.cancelMu.Lock()
	s.cancel = nil
	s.cancelMu.Unlock()
}

// Close implements pgwire.Session: whatever is open is rolled back.
func (s *Session) Close(ctx context.Context) {
	s.endBlock(false)
	s.shared.locks.release(&s.owner, true)
	s.shared.tables.release(&s.tableOwner)
	// UNLISTEN *: the rollback above dropped what it would have sent.
	s.notes.ops = []listenOp{{all: true}}
	s.endNotify(true)
	if s.callCancel != nil {
		s.callCancel() // lets go of the parent context
	}
	if s.closed != nil {
		s.closed()
		s.closed = nil
	}
}

// Query implements pgwire.Session.
func (s *Session) Query(ctx context.Context, sql string, emit func(*answer.Answer) error) (err error) {
	ctx = s.cancellable(ctx)
	defer s.endCall()
	ctx, stop := s.statementTimeout(ctx)
	defer func() { err = timedOut(ctx, err); stop() }()
	if f, ok := parseInsertOrCatch(sql); ok {
		return s.runInsertOrCatch(ctx, f, emit)
	}
	sts, err := s.parseWaiting(ctx, sql)
	var texts []string
	if err != nil || ddlBefore(sts) {
		// Later statements may depend on the DDL of earlier ones (pgx
		// and migration tools send a schema as one string): each is
		// analysed as its turn comes, against the schema it will see.
		split, serr := sqlan.Split(sql)
		if serr != nil || len(split) < 2 {
			if err == nil {
				err = serr
			}
			s.fail()
			return err
		}
		texts, sts = split, make([]*sqlan.Stmt, len(split))
	}
	if len(sts) == 0 {
		return pgwire.ErrEmptyQuery
	}
	if len(sts) > 1 && !s.inBlock {
		s.implicit, s.txOpts = true, s.defaults
	}
	for i, st := range sts {
		var a *answer.Answer
		if texts != nil {
			var one []*sqlan.Stmt
			if one, err = s.parseWaiting(ctx, texts[i]); err == nil && len(one) != 1 {
				err = pgerr.New(pgerr.InternalError, "shepherd split a query string wrongly (a bug; nothing more ran)")
			}
			if err != nil {
				s.fail()
			} else {
				st = one[0]
			}
		}
		if err == nil {
			a, err = s.exec(cluster.WithSpill(ctx), st, nil)
		}
		if err != nil {
			if s.implicit {
				s.implicit = false
				if !s.inBlock {
					// A BEGIN earlier in the string opened a block
					// that outlives it, failed (PostgreSQL's rule).
					s.endBlock(false)
				}
			}
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	if s.implicit {
		s.implicit = false
		if !s.inBlock {
			if err := s.commit(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// ddlBefore reports whether a statement other than the last of sts is
// DDL (sequence DDL too), which the statements after it must be analysed
// with.
func ddlBefore(sts []*sqlan.Stmt) bool {
	for _, st := range sts[:max(len(sts)-1, 0)] {
		if st.Kind == sqlan.DDL || st.Kind == sqlan.Local && st.Session != nil && st.Session.Op == "sequence" {
			return true
		}
	}
	return false
}

// fail marks an open block failed (PostgreSQL's rule: any error aborts
// the block).
func (s *Session) fail() {
	if s.inBlock {
		s.failed = true
	}
}

// exec runs one statement under the session's transaction rules. With
// ctx from cluster.WithSpill (the answer goes to the client as it is), a
// statement the replicas run may answer with rows spilled to disk
// (answer.Answer.More); the statements exec runs for its own use never
// do.
func (s *Session) exec(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	toClient := cluster.Spills(ctx)
	spilling := ctx
	if toClient {
		ctx = cluster.WithoutSpill(ctx)
	}
	switch st.Kind {
	case sqlan.Begin:
		return s.begin(st)
	case sqlan.Commit:
		if !s.inBlock && !s.implicit {
			return &answer.Answer{Tag: "COMMIT"}, nil // PostgreSQL warns; nothing to do
		}
		tag := "COMMIT"
		if s.failed {
			tag = "ROLLBACK"
			s.endBlock(false)
		} else if err := s.commit(ctx); err != nil {
			return nil, err
		}
		return &answer.Answer{Tag: tag}, nil
	case sqlan.Rollback:
		s.endBlock(false)
		return &answer.Answer{Tag: "ROLLBACK"}, nil
	case sqlan.Savepoint:
		return s.savepoint(ctx, st)
	}
	if s.failed {
		return nil, pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.Unnest != nil {
		return s.execUnnest(ctx, st, args)
	}
	if st.SelectFirst != nil {
		return s.execSelectFirst(ctx, st, args)
	}
	switch st.Kind {
	case sqlan.Set:
		return s.set(st)
	case sqlan.Show:
		return s.show(st)
	case sqlan.Explain:
		return explain(st.Inner), nil
	case sqlan.Catalog:
		return s.catalogQuery(ctx, st, args)
	case sqlan.Copy:
		return s.copy(ctx, st.Copy)
	case sqlan.Database:
		return s.createOrDrop(ctx, st)
	case sqlan.Local:
		a, err := s.runLocal(ctx, st, args)
		if err != nil {
			s.fail()
		}
		if !s.inBlock && !s.implicit {
			// The statement was its own transaction.
			s.shared.locks.release(&s.owner, false)
			s.shared.tables.release(&s.tableOwner)
			s.lastXid = 0
		}
		return a, err
	}
	if err := s.writeAllowed(st); err != nil {
		s.fail()
		return nil, err
	}
	autocommit := !s.inBlock && !s.implicit
	if st.Kind == sqlan.DDL && !autocommit && s.cache.Speaks(driver.MySQL) {
		if !s.cluster.DefersBlockDDL() {
			s.fail()
			return nil, pgerr.New(pgerr.FeatureNotSupported,
				"shepherd does not support DDL inside a transaction block with MariaDB/MySQL replicas in this mode (MariaDB commits it at once); run it on its own, or use mode cbs or ss")
		}
		// From here on the block is deferred on the MariaDB replicas
		// (coord.Submit.Defer): savepoint commands stay with the
		// session (savepoint.go).
		s.deferredDDL = true
	}
	if s.txn == nil {
		// Admitted (Cluster.Begin may wait for a slot of
		// max_transactions) before it takes shepherd's own locks: a
		// transaction that holds a lock others wait for never waits
		// behind them for a slot.
		opts := s.txOpts
		if autocommit {
			opts = s.defaults
		}
		txn, err := s.beginTxn(ctx, opts, autocommit)
		if err != nil {
			if autocommit {
				s.endBlock(false)
			} else {
				s.fail()
			}
			return nil, err
		}
		s.txn = txn
		s.shared.locks.bind(&s.owner, s.txn)
		s.txnTime = time.Now()
	}
	if st.Kind == sqlan.DDL {
		var err error
		if st, err = s.lockDDL(ctx, st); err != nil {
			if autocommit {
				s.endBlock(false)
			} else {
				s.fail()
			}
			return nil, err
		}
	}
	if len(st.Pins) > 0 {
		var err error
		if args, err = s.pinArgs(ctx, st, args); err != nil {
			s.fail()
			return nil, err
		}
	}
	exec := s.txn.Exec
	if autocommit {
		exec = s.txn.ExecSingle
	}
	lctx, stopLockTimeout := s.lockTimeout(ctx, s.txn)
	switch {
	case toClient && lctx == ctx:
		lctx = spilling // the context the caller marked: no new one
	case toClient:
		lctx = cluster.WithSpill(lctx)
	}
	a, err := exec(lctx, st, args)
	err = lockTimedOut(lctx, err)
	stopLockTimeout()
	if err != nil {
		if autocommit {
			s.endBlock(false)
		} else {
			s.fail()
		}
		return nil, err
	}
	if st.Kind == sqlan.DDL {
		before, berr := s.visibleSchema()
		s.ddl = append(s.ddl, st)
		if !autocommit && berr == nil {
			// The block's own sequences follow its DDL (tables made,
			// dropped, renamed, TRUNCATE ... RESTART IDENTITY).
			if after, err := s.visibleSchema(); err == nil {
				s.trackSequences(before, after, st.Tree())
			}
		}
	}
	if autocommit {
		if err := s.commit(ctx); err != nil {
			a.More.Close()
			return nil, err
		}
	}
	if a.Columns != nil {
		engineCols := a.Columns
		a = sqlan.ShapeAnswer(a, st.Columns())
		if a.More != nil {
			// The spilled rows are shaped as they are read back.
			guesses := st.Columns()
			a.More.Map = func(row []answer.Value) []answer.Value {
				return sqlan.ShapeAnswer(&answer.Answer{Columns: engineCols, Rows: [][]answer.Value{row}}, guesses).Rows[0]
			}
		}
	}
	return a, nil
}

// execUnnest runs an INSERT ... SELECT FROM unnest(arrays) as the INSERT
// ... VALUES of the arrays' elements (see sqlan.Unnest), analysed like
// any other statement: SERIAL keys pinned row by row, every dialect
// written without arrays.
func (s *Session) execUnnest(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	if err := s.insertAllowed(); err != nil {
		return nil, err
	}
	text, xargs, err := st.Unnest.Expand(args)
	if err != nil {
		s.fail()
		return nil, err
	}
	if text == "" {
		// No elements, no rows: PostgreSQL inserts nothing and checks
		// nothing a row would need.
		a := &answer.Answer{Tag: answer.Tag("INSERT", 0)}
		if st.ReturnsRows {
			cols, err := s.describe(ctx, st.Inner)
			if err != nil {
				s.fail()
				return nil, err
			}
			a.Columns = cols
		}
		return a, nil
	}
	sts, err := s.parse(text)
	if err == nil && len(sts) != 1 {
		err = pgerr.New(pgerr.InternalError, "shepherd expanded unnest() into %d statements (a bug; nothing ran)", len(sts))
	}
	if err == nil {
		err = sts[0].CheckArgs(xargs)
	}
	if err != nil {
		s.fail()
		return nil, err
	}
	return s.exec(ctx, sts[0], xargs)
}

// writeAllowed refuses a write or DDL statement in a read-only
// transaction with 25006, as PostgreSQL does, before any replica runs
// it: SQLite replicas do not enforce read-only, so with SQLite alone (the
// embedded default) the write went through. SELECT ... FOR UPDATE and
// the other statements of Kind Write that PostgreSQL runs in a read-only
// transaction are left to the replicas.
func (s *Session) writeAllowed(st *sqlan.Stmt) error {
	if !s.readOnly() {
		return nil
	}
	switch {
	case st.Kind == sqlan.Write && (st.Verb == "INSERT" || st.Verb == "UPDATE" || st.Verb == "DELETE"),
		st.Kind == sqlan.DDL:
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", st.Verb)
	}
	return nil
}

// insertAllowed refuses an INSERT the session rewrites in a read-only
// transaction, as PostgreSQL does before it reads anything (with no rows
// to insert, no replica would refuse it).
func (s *Session) insertAllowed() error {
	if s.readOnly() {
		s.fail()
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute INSERT in a read-only transaction")
	}
	return nil
}

// execSelectFirst runs an INSERT ... SELECT whose rows shepherd must see
// to fill their keys (see sqlan.SelectFirst): the SELECT, then the INSERT
// ... VALUES of its rows, in one transaction (outside a block, an
// implicit one, as for a query string of several statements).
func (s *Session) execSelectFirst(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	if err := s.insertAllowed(); err != nil {
		return nil, err
	}
	if s.inBlock || s.implicit {
		return s.selectThenInsert(ctx, st, args)
	}
	s.implicit, s.txOpts = true, s.defaults
	a, err := s.selectThenInsert(ctx, st, args)
	s.implicit = false
	if err != nil {
		if !s.inBlock {
			s.endBlock(false)
		}
		return nil, err
	}
	if err := s.commit(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

func (s *Session) selectThenInsert(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	sf := st.SelectFirst
	rows, err := s.exec(ctx, st.Inner, sf.SelectArgs(args))
	if err != nil {
		return nil, err
	}
	out := &answer.Answer{Tag: answer.Tag("INSERT", 0)}
	if len(rows.Rows) == 0 {
		if st.ReturnsRows {
			cols, err := s.describe(ctx, sf.Insert())
			if err != nil {
				s.fail()
				return nil, err
			}
			out.Columns = cols
		}
		return out, nil
	}
	for start := 0; start < len(rows.Rows); start += sf.Batch() {
		part := rows.Rows[start:min(start+sf.Batch(), len(rows.Rows))]
		text, xargs, err := sf.Expand(args, rows.Columns, part)
		var sts []*sqlan.Stmt
		if err == nil {
			sts, err = s.parse(text)
		}
		if err == nil && len(sts) != 1 {
			err = pgerr.New(pgerr.InternalError, "shepherd wrote an INSERT ... SELECT as %d statements (a bug)", len(sts))
		}
		if err == nil {
			err = sts[0].CheckArgs(xargs)
		}
		if err != nil {
			s.fail()
			return nil, err
		}
		a, err := s.exec(ctx, sts[0], xargs)
		if err != nil {
			return nil, err
		}
		out.Columns = a.Columns
		out.Rows = append(out.Rows, a.Rows...)
		out.RowsAffected += a.RowsAffected
	}
	out.Tag = answer.Tag("INSERT", out.RowsAffected)
	return out, nil
}

func (s *Session) begin(st *sqlan.Stmt) (*answer.Answer, error) {
	// The tag is the statement's verb: BEGIN or START TRANSACTION.
	if s.inBlock {
		// PostgreSQL only warns about a nested BEGIN.
		return &answer.Answer{Tag: st.Verb}, nil
	}
	s.inBlock = true
	s.txOpts = s.defaults
	if st.TxOptions.Isolation != "" {
		s.txOpts.Isolation = st.TxOptions.Isolation
	}
	if st.TxOptions.ReadOnly {
		s.txOpts.ReadOnly = true
	}
	return &answer.Answer{Tag: st.Verb}, nil
}

// commit commits the open transaction, if any, and ends the block. DDL
// that committed is recorded in the schema catalog.
func (s *Session) commit(ctx context.Context) error {
	t, ddl, blk := s.txn, s.ddl, s.seqs.block
	var verr error
	if hasSequenceDDL(ddl) {
		// Only shepherd's catalog checks sequence DDL: it must still
		// apply to what others committed since (a sequence of that name
		// made meanwhile).
		_, verr = s.visibleSchema()
	}
	s.txn, s.inBlock, s.failed, s.ddl, s.deferredDDL = nil, false, false, nil, false
	s.shared.locks.bind(&s.owner, nil)
	s.savepoints, s.spCount = nil, 0
	locks := &s.shared.locks
	if verr != nil {
		if t != nil {
			t.Rollback()
		}
		s.endTransaction(false)
		locks.releaseTables(&s.owner)
		return verr
	}
	trees := make([]*pg_query.Node, len(ddl))
	for i, st := range ddl {
		trees[i] = st.Tree()
	}
	seqs := blk.commitForm()
	cat := s.cache.Catalog()
	if t == nil {
		// Nothing ran on the replicas: the catalog's write is the commit.
		s.endTransaction(true)
		var err error
		if len(trees) > 0 || !seqs.Empty() {
			err = cat.CommitBlock(0, trees, seqs)
		}
		locks.releaseTables(&s.owner)
		return err
	}
	if hasSequenceDDL(ddl) || !seqs.Empty() {
		// What the log will not hold, recorded before it is: a crash
		// after the log record and before the catalog's write below
		// would lose it (see schema.Catalog.Pending).
		seqs.Txn = t.ID()
		p := schema.PendingBlock{Txn: seqs.Txn, Named: seqs.Named, Serial: seqs.Serial}
		for _, st := range ddl {
			p.Statements = append(p.Statements, st.SQL)
		}
		if err := cat.Pending(p); err != nil {
			t.Rollback()
			s.endTransaction(false)
			locks.releaseTables(&s.owner)
			return pgerr.Wrap(pgerr.InternalError, err, "shepherd could not record the block's sequences; the transaction was rolled back")
		}
	}
	err := t.Commit(ctx)
	if err != nil && !errors.Is(err, coord.ErrCommitsAnyway) {
		s.endTransaction(false) // a COMMIT that fails rolls back, SETs too
		if seqs.Txn != 0 {
			_ = cat.DropPending(seqs.Txn) // an error is the file's; start-up drops it
		}
		locks.releaseTables(&s.owner)
		return err
	}
	s.endTransaction(true)
	if len(trees) == 0 && seqs.Empty() {
		locks.releaseTables(&s.owner)
		return err
	}
	// Committed: with the log barrier, in one write of the catalog file;
	// a start-up after a crash before this point applies the changes
	// from the log (and the block's SERIAL counters from Pending).
	if err != nil {
		// Committing although the client gave up (DDL that MariaDB
		// committed as it ran it): the outcome is not known yet. The
		// replicas may still refuse it (the MariaDB replica is then
		// retired), and its barrier is known only once decided: the
		// catalog follows what happens, not what was hoped.
		// Its tables stay locked until then (Shared), by an owner of
		// their own: this session goes on.
		t.AfterCommit(func(barrier uint64) error { return cat.CommitBlock(barrier, trees, seqs) })
		held := locks.handOff(&s.owner)
		t.AfterEnd(func() { locks.releaseTables(held) })
		return err
	}
	cerr := cat.CommitBlock(t.Barrier(), trees, seqs)
	locks.releaseTables(&s.owner) // the catalog has the change: the next DDL is written from it
	if cerr != nil {
		return pgerr.Wrap(pgerr.InternalError, cerr, "the statement committed, but shepherd could not record the schema change")
	}
	return err
}

// explain answers EXPLAIN (SHEPHERD): per dialect, the replicas, the
// statement they receive, and what each placeholder is bound to.
func explain(st *sqlan.Stmt) *answer.Answer {
	a := &answer.Answer{Columns: []answer.Column{
		{Name: "dialect", Type: answer.Text}, {Name: "replicas", Type: answer.Text},
		{Name: "statement", Type: answer.Text}, {Name: "parameters", Type: answer.Text},
	}}
	if st == nil {
		a.Tag = answer.Tag("EXPLAIN", 0)
		return a
	}
	if st.Kind == sqlan.Catalog {
		// No replica runs it: shepherd's catalog answers.
		a.Rows = [][]answer.Value{{answer.V(answer.Text, "catalog"), answer.V(answer.Text, "none (shepherd's catalog answers)"),
			answer.V(answer.Text, st.SQL), answer.V(answer.Text, "")}}
		a.Tag, a.RowsAffected = "EXPLAIN", 1
		return a
	}
	for _, f := range st.Forms() {
		a.Rows = append(a.Rows, []answer.Value{
			answer.V(answer.Text, f.Dialect.String()), answer.V(answer.Text, strings.Join(f.Replicas, ", ")),
			answer.V(answer.Text, f.SQL), answer.V(answer.Text, strings.Join(f.Params, ", ")),
		})
	}
	a.Tag, a.RowsAffected = "EXPLAIN", int64(len(a.Rows))
	return a
}

// pinArgs appends the values shepherd chose for st's pins to the client's
// arguments (padded to the statement's parameter count).
func (s *Session) pinArgs(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) ([]driver.Arg, error) {
	pins, err := st.PinArgs(sqlan.PinSource{
		TxnTime:  s.txnTime,
		StmtTime: time.Now(),
		Next: func(table, column string) (int64, error) {
			v, err := s.serialNext(table, column)
			if err == nil {
				s.seqs.called(table+"_"+column+"_seq", v)
			}
			return v, err
		},
		Session: s.sessionPin(ctx, args),
	})
	if err != nil {
		return nil, err
	}
	out := make([]driver.Arg, st.NumParams, st.NumParams+len(pins))
	copy(out, args)
	for i := len(args); i < st.NumParams; i++ {
		out[i] = driver.Arg{Null: true}
	}
	return append(out, pins...), nil
}

// beginTxn starts the session's transaction on the cluster, waiting for a
// slot of max_transactions (cluster.Begin), except while the session
// holds a lock of shepherd's own (a session-level advisory lock, DDL
// locks taken before its transaction): others may wait for that lock
// holding their slots, so it goes in at once (cluster.BeginNow). A
// statement in autocommit (single) may take the slots kept from
// transaction blocks, and so never waits behind idle blocks
// (cluster.BeginSingle).
func (s *Session) beginTxn(ctx context.Context, opts driver.TxOptions, single bool) (*cluster.Txn, error) {
	switch {
	case s.shared.locks.holdsAny(&s.owner):
		return s.cluster.BeginNow(opts), nil
	case single:
		return s.cluster.BeginSingle(ctx, opts)
	}
	return s.cluster.Begin(ctx, opts)
}

// endBlock ends the block; with commit false, rolls it back.
func (s *Session) endBlock(commit bool) {
	if s.txn != nil && !commit {
		s.txn.Rollback()
	}
	s.txn, s.inBlock, s.failed, s.ddl, s.deferredDDL = nil, false, false, nil, false
	s.shared.locks.bind(&s.owner, nil)
	s.savepoints, s.spCount = nil, 0
	s.endTransaction(commit)
	s.shared.locks.releaseTables(&s.owner)
}

// endTransaction ends what lasts for a transaction besides the replicas'
// work: SET LOCAL (and, rolled back, SET), advisory transaction locks,
// txid_current().
func (s *Session) endTransaction(commit bool) {
	s.endNotify(commit)
	s.seqs.block = seqBlock{} // COMMIT handed it to the catalog
	s.shared.seqs.release(s)
	s.endSettings(commit)
	s.endCursors(commit)
	s.shared.locks.release(&s.owner, false)
	s.shared.tables.release(&s.tableOwner)
	s.lastXid = 0
}
