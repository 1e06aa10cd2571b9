package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// decide records that the core decided t's commit (its first COMMIT
// Send): t joins the decision order, and a schema change of t reaches the
// catalog, as shepherd records it with the commit.
func (s *sim) decide(t *txn) {
	t.decided = true
	s.order = append(s.order, t)
	for _, q := range t.stmts {
		if q.kind == stmtSwap {
			s.cat.commit(q)
			s.res.Swaps++
		}
	}
}

// noteIntent records, as the shell does before it hands statement i of t
// to the core (cluster, Txn.submit), a DDL intent: in a run with a log and
// a replica that commits DDL as it runs it, once t has a DDL statement.
// The shell's record is durable before the core sees the statement, so
// here at once. An intent is resolved by the commit's durable record, or
// dropped when t ends without one (dropIntent).
func (s *sim) noteIntent(t *txn, i int) {
	if !s.wal || !slices.Contains(s.setup.ddlCommits, true) || slices.Contains(s.intents, t.id) {
		return
	}
	if t.stmts[i].kind == stmtDDL {
		s.intents = append(s.intents, t.id)
	}
}

// dropIntent forgets t's intent: t ended, or its client heard it failed,
// without a commit (the shell drops it durably before the client hears).
func (s *sim) dropIntent(id coord.TxnID) {
	s.intents = slices.DeleteFunc(s.intents, func(x coord.TxnID) bool { return x == id })
}

// resolveIntents does what start-up does with the open DDL intents
// (internal/server, resolveIntents), with coord.PlanIntents' decision: a
// transaction to complete gets a durable record after the log's last,
// as the shell appends it before replay; a replica to retire is retired.
// Intents whose commit was logged are resolved by it.
func (s *sim) resolveIntents() {
	var ddlReplicas []int
	for r, on := range s.setup.ddlCommits {
		if on {
			ddlReplicas = append(ddlReplicas, r)
		}
	}
	intents := make([]coord.DDLIntent, len(s.intents))
	for i, id := range s.intents {
		t := s.txns[id]
		intents[i] = coord.DDLIntent{Txn: uint64(id), Lone: t.sent == 1 && len(t.stmts) == 1, Deferred: t.blockDDL, Replicas: ddlReplicas}
		for _, r := range ddlReplicas {
			if t.blockDDL && s.fakes[r].done[id] {
				// Its log table holds the commit (see s.highest).
				intents[i].Holds = append(intents[i].Holds, r)
			}
		}
	}
	s.intents = nil
	planIntents := coord.PlanIntents
	if s.opt.planIntents != nil {
		planIntents = s.opt.planIntents
	}
	plan := planIntents(intents, func(txn uint64) bool {
		b, ok := s.barrierOf[coord.TxnID(txn)]
		return ok && s.durable[b]
	})
	for _, txn := range plan.Complete {
		id := coord.TxnID(txn)
		top, _ := s.logTop()
		b := max(top+1, s.base)
		s.barrierOf[id] = b
		s.recs[b] = s.logRecord(id, b)
		s.durable[b] = true
		s.txns[id].completed = true
		s.res.Completed++
		s.logf("restart completes t%d's DDL at log barrier %d", id, b)
	}
	for r, why := range plan.Retire {
		s.fakes[r].retired, s.fakes[r].down = true, true
		s.res.IntentRetired++
		s.logf("restart retires r%d: %s", r, why)
	}
}

// logRecord is the log record of transaction id at log barrier b, as the
// shell writes it (cluster, walStatement): each writing statement with the
// client's text and, for each dialect among the replicas, the form its
// replicas were sent. Statements that only read are kept without forms;
// replay skips them.
func (s *sim) logRecord(id coord.TxnID, b int) wal.Record {
	t := s.txns[id]
	rec := wal.Record{Txn: uint64(id), Barrier: uint64(b)}
	var dialects []uint8
	for _, f := range s.fakes {
		if !slices.Contains(dialects, f.dialect()) {
			dialects = append(dialects, f.dialect())
		}
	}
	keep := survivors(t.stmts[:t.sent])
	for i := range t.sent {
		q := t.stmts[i]
		if !keep[i] {
			continue // undone by a ROLLBACK TO, or a savepoint statement
		}
		st := wal.Statement{SQL: t.src[i].encode(), Writes: q.writes(), DDL: q.schemaChange()}
		if st.Writes {
			for _, d := range dialects {
				st.Forms = append(st.Forms, wal.Form{Dialect: d, SQL: q.encode()})
			}
		}
		rec.Statements = append(rec.Statements, st)
	}
	return rec
}

// replayLog applies to f, as the shell's replay does (cluster.Replay),
// every durable record below log barrier upTo whose transaction f has not
// committed, in barrier order: its writing statements, each in the form
// f's dialect ran (wal.Statement.FormFor), never the client's text again.
// It returns how many it applied.
func (s *sim) replayLog(f *fake, upTo int) int {
	var bs []int
	for b, rec := range s.recs {
		if b < upTo && s.durable[b] && !f.done[coord.TxnID(rec.Txn)] {
			bs = append(bs, b)
		}
	}
	slices.Sort(bs)
	get := func(k int) int { return f.committed[k] }
	put := func(k, v int) { f.committed[k] = v }
	for _, b := range bs {
		rec := s.recs[b]
		for _, st := range rec.Statements {
			if !st.Writes {
				continue
			}
			q, err := s.replayStmt(f, st)
			if err != nil {
				s.failf("replay of barrier %d to r%d: %v", b, f.id, err)
				return 0
			}
			q.run(get, put)
		}
		f.done[coord.TxnID(rec.Txn)] = true
	}
	s.res.Replayed += len(bs)
	return len(bs)
}

// logState is the state the log's durable records below barrier upTo
// give, applied in barrier order to the initial state as the replicas
// ran them: what a replica that caught up to upTo must hold.
func (s *sim) logState(upTo int) store {
	var bs []int
	for b := range s.recs {
		if b < upTo && s.durable[b] {
			bs = append(bs, b)
		}
	}
	slices.Sort(bs)
	st := slices.Clone(s.setup.initial)
	get := func(k int) int { return st[k] }
	put := func(k, v int) { st[k] = v }
	for _, b := range bs {
		for _, ls := range s.recs[b].Statements {
			if !ls.Writes || len(ls.Forms) == 0 {
				continue
			}
			if q, err := decodeStmt(ls.Forms[0].SQL); err == nil {
				q.run(get, put)
			}
		}
	}
	return st
}

// replayStmt is the statement replay sends to f.
func (s *sim) replayStmt(f *fake, st wal.Statement) (stmt, error) {
	if s.opt.retranslate {
		// The broken variant: the client's names, resolved against
		// today's catalog.
		q, err := decodeStmt(st.SQL)
		return s.cat.translate(q), err
	}
	form, ok := st.FormFor(f.dialect())
	if !ok {
		return stmt{}, fmt.Errorf("%s: no form for dialect %d", st.SQL, f.dialect())
	}
	return decodeStmt(form.SQL)
}

// logTop returns the log's last durable barrier, and whether it holds any.
func (s *sim) logTop() (top int, logged bool) {
	for b := range s.durable {
		if _, ok := s.recs[b]; ok && b > top {
			top, logged = b, true
		}
	}
	return top, logged
}

// highest returns the highest barrier f's log table holds: one row per
// logged transaction it committed, and, for a replica that lies about it
// (faults.claims), one beyond the log's last.
func (s *sim) highest(f *fake, top int, logged bool) uint64 {
	high := 0
	for id := range f.done {
		if b, ok := s.barrierOf[id]; ok {
			high = max(high, b)
		}
	}
	if f.faults.claims > 0 && logged {
		high = max(high, top+f.faults.claims)
	}
	return uint64(high)
}

// restart crashes shepherd and starts it again on its write-ahead log.
// Every connection goes, and with it every transaction in flight: what
// was queued for the log and not durable never committed; a transaction
// whose record was durable committed, whether or not its client heard so
// (its connection dropped). Then start-up runs as the shell's does
// (internal/server, recoverReplicas), with its decisions: each replica
// reachable (not crashed, not retired) reports its log table, which
// coord.CheckBarrier validates against the log; the replica is replayed
// what it lacks (replayLog); coord.PlanStart picks the replicas to start
// with (any f+1 usable) and the barrier to go on from; a new core starts,
// told the others are down, and they come back later by catching up from
// the log, as while shepherd runs. Checked on the spot:
//
//   - a replica taken in holds nothing the log lacks (committed = logged),
//     and a replica that claims more is left out;
//   - start-up refuses only if fewer than f+1 correct replicas were usable;
//   - every transaction acknowledged, or decided, or durable in the log, is
//     committed on every replica taken in, and every correct one among
//     them holds exactly the reference state.
func (s *sim) restart() {
	s.res.Restarts++
	s.logf("shepherd crashes at step %d", s.steps)
	for _, e := range s.logQ {
		delete(s.barrierOf, e.txn)
		delete(s.recs, e.barrier)
	}
	s.logQ = nil
	clear(s.pendingCat) // their records never became durable: no commit
	clear(s.ddlLocks)   // the sessions are gone
	s.resolveIntents()
	top, logged := s.logTop()
	// Durable transactions whose COMMIT no replica was sent yet
	// committed too: the log says so, and start-up replays them.
	var late []*txn
	for id, b := range s.barrierOf {
		if t := s.txns[id]; s.durable[b] && !t.decided {
			late = append(late, t)
		}
	}
	slices.SortFunc(late, func(a, b *txn) int { return s.barrierOf[a.id] - s.barrierOf[b.id] })
	for _, t := range late {
		s.decide(t)
	}
	for _, t := range s.order[s.replayed:] {
		if !t.acked && !t.commitsAnyway {
			t.crashCommitted = true
			s.res.LostCommits++
		}
	}
	for _, c := range s.clients {
		if c.cur != nil && !c.cur.crashCommitted {
			s.res.Lost++
		}
		c.cur, c.waiting = nil, false
	}
	for _, t := range s.txns {
		if !t.finished {
			t.finished = true
			s.finishedTxns++
		}
	}
	s.replay()
	if s.err != nil {
		return
	}
	if s.replayed < len(s.order) {
		s.failf("restart: t%d decided before the crash but not replayable", s.order[s.replayed].id)
		return
	}

	s.recoverCatalog()
	if s.err != nil {
		return
	}

	checkBarrier, planStart := coord.CheckBarrier, coord.PlanStart
	if s.opt.checkBarrier != nil {
		checkBarrier = s.opt.checkBarrier
	}
	if s.opt.planStart != nil {
		planStart = s.opt.planStart
	}
	reports := make([]coord.StartReport, len(s.fakes))
	usableCorrect := 0
	for r, f := range s.fakes {
		f.disconnect()
		f.joining = false // its catch-up went with shepherd; start-up replays
		crashed := f.down && f.faults.crashAt > 0 && s.steps >= f.faults.crashAt && !f.rejoined
		switch {
		case f.retired:
			reports[r].Err = errors.New("retired")
		case crashed:
			reports[r].Err = errors.New("unreachable")
		default:
			high := s.highest(f, top, logged)
			if err := checkBarrier("sim_log", high, uint64(top), logged); err != nil {
				reports[r].Err = err
				continue
			}
			s.replayLog(f, top+1)
			reports[r].High = max(high, uint64(top))
			if !f.faults.faulty() {
				usableCorrect++
			}
		}
	}
	if s.err != nil {
		return
	}
	plan, ok := planStart(s.setup.f, uint64(top), reports)
	s.logf("restart on log barrier %d: base %d, left out %v, ok %v", top, plan.Base, plan.Out, ok)
	if !ok {
		if usableCorrect >= s.setup.f+1 {
			s.failf("restart refused with %d correct replicas usable (f+1 = %d): %v", usableCorrect, s.setup.f+1, plan.Out)
			return
		}
		s.halted = true
		s.res.OverBudget = true
		return
	}
	for r, f := range s.fakes {
		if _, out := plan.Out[r]; out {
			f.down = true
			continue
		}
		f.down = false
		if f.crashOnly() && s.steps >= f.faults.crashAt {
			f.rejoined = true // caught up: held to the correct standard
		}
		if high := s.highest(f, top, logged); high > uint64(top) {
			s.failf("restart took r%d in, whose log table holds barrier %d, beyond the log's last (%d)", r, high, top)
			return
		}
		for id := range f.done {
			if b, ok := s.barrierOf[id]; !ok || !s.durable[b] {
				s.failf("restart took r%d in, which committed t%d, a transaction the log lacks", r, id)
				return
			}
		}
		for _, t := range s.order {
			if !f.done[t.id] {
				s.failf("restart: r%d, taken in, lacks t%d, which committed (barrier %d)", r, t.id, s.barrierOf[t.id])
				return
			}
		}
		if !f.faults.faulty() && !slices.Equal(f.committed, s.ref) {
			s.failf("restart: r%d (correct) holds %v, the serial replay %v", r, f.committed, s.ref)
			return
		}
	}
	s.base = int(plan.Base)
	if s.base <= top {
		s.failf("restart: base %d is not beyond the log's last barrier %d", s.base, top)
		return
	}
	s.nextLog, s.logged = s.base, s.base
	s.logBroken, s.logFailAt = false, 0
	s.newCore()
	s.progressTick = s.tick
	for r := range s.fakes {
		if _, out := plan.Out[r]; out {
			s.stepCore(coord.Down{R: coord.ReplicaID(r)})
		}
	}
}

// newCatalogFile returns the shell's schema catalog as its file holds it
// at first (schema.Catalog, kept in memory: each of its writes is
// durable at once, as the file's): one table per name, n<i> with the
// column k<i>, so that the table a name denotes tells its key.
func newCatalogFile(keys int) (*schema.Catalog, error) {
	cat, err := schema.Open("")
	if err != nil {
		return nil, err
	}
	var sqls []string
	for k := range keys {
		sqls = append(sqls, fmt.Sprintf("CREATE TABLE n%d (k%d int)", k, k))
	}
	trees, err := parseSQL(strings.Join(sqls, "; "))
	if err != nil {
		return nil, err
	}
	return cat, cat.Commit(0, trees)
}

// parseSQL parses statements with PostgreSQL's parser, as the shell does.
func parseSQL(sql string) ([]*pg_query.Node, error) {
	res, err := pg_query.Parse(sql)
	if err != nil {
		return nil, err
	}
	var trees []*pg_query.Node
	for _, st := range res.Stmts {
		trees = append(trees, st.Stmt)
	}
	return trees, nil
}

// catalogTrees is a schema change of the toy SQL as the shell's catalog
// records it: a swap of names a and b is ALTER TABLE a RENAME TO a
// temporary name, b to a, the temporary name to b; other DDL changes no
// name.
func catalogTrees(q stmt) ([]*pg_query.Node, error) {
	if q.kind != stmtSwap {
		return nil, nil
	}
	return parseSQL(fmt.Sprintf("ALTER TABLE n%d RENAME TO swap_tmp; ALTER TABLE n%d RENAME TO n%d; ALTER TABLE swap_tmp RENAME TO n%d",
		q.k, q.hi, q.k, q.hi))
}

// names reads which key each name denotes off the catalog file (-1: the
// name denotes no table).
func names(cat *schema.Catalog, keys int) catalog {
	snap := cat.Snapshot()
	out := make(catalog, keys)
	for i := range out {
		out[i] = -1
		if t := snap.Table(fmt.Sprintf("n%d", i)); t != nil && len(t.Columns) == 1 {
			if k, err := strconv.Atoi(strings.TrimPrefix(t.Columns[0].Name, "k")); err == nil {
				out[i] = k
			}
		}
	}
	return out
}

// writeCatalog writes t's schema changes to the catalog file, with its
// log barrier, in one write, as the session does after its commit
// (schema.Catalog.Commit, the shell's own): only a transaction with a
// schema change.
func (s *sim) writeCatalog(t *txn) {
	if s.file == nil {
		s.unlockDDL(t.id)
		return // a run without a log or schema changes
	}
	keep := survivors(t.stmts[:t.sent])
	ddl := false
	var trees []*pg_query.Node
	for i, q := range t.stmts[:t.sent] {
		if keep[i] && q.schemaChange() {
			ddl = true
			ts, err := catalogTrees(q)
			if err != nil {
				s.failf("t%d: %v: %v", t.id, q, err)
				return
			}
			trees = append(trees, ts...)
		}
	}
	if !ddl {
		s.unlockDDL(t.id)
		return
	}
	var barrier uint64
	if b, ok := s.barrierOf[t.id]; ok && s.wal && !s.opt.catalogAtCancel {
		barrier = uint64(b)
	}
	if err := s.file.Commit(barrier, trees); err != nil {
		s.failf("t%d: the catalog refuses its changes: %v", t.id, err)
	}
	s.unlockDDL(t.id) // the change is in the file: the next DDL is translated from it
}

// catalogAfterCommit is the session's Txn.AfterCommit for t, whose client
// was let go during its COMMIT: t's changes reach the catalog file once
// its record is durable (at once if it is), never if the log refuses it.
func (s *sim) catalogAfterCommit(t *txn) {
	if b, ok := s.barrierOf[t.id]; !s.wal || ok && s.durable[b] || s.opt.catalogAtCancel {
		s.writeCatalog(t)
		return
	}
	s.pendingCat[t.id] = true
}

// recoverCatalog does what start-up does with the catalog file
// (internal/server, recoverCatalog), with coord.PlanCatalog's decision
// and the catalog's own record of what it holds (schema.LogMark): the
// schema changes of the durable records the file lacks are applied from
// the log, each transaction's barrier recorded with its last, and the
// file then holds the whole log (Settle). Checked: the names it maps are
// those the log's committed schema changes give, applied once each in
// barrier order. The recovered catalog is the one the new run translates
// with.
func (s *sim) recoverCatalog() {
	if s.file == nil {
		return // a run without schema changes
	}
	var bs []int
	for b := range s.recs {
		if s.durable[b] {
			bs = append(bs, b)
		}
	}
	slices.Sort(bs)
	want := make(catalog, len(s.cat))
	for k := range want {
		want[k] = k
	}
	logged := make([]coord.LoggedDDL, 0, len(bs))
	for _, b := range bs {
		t := coord.LoggedDDL{Barrier: uint64(b)}
		for _, st := range s.recs[b].Statements {
			if !st.DDL {
				continue
			}
			t.DDL = append(t.DDL, st.SQL)
			q, err := decodeStmt(st.SQL)
			if err != nil {
				s.failf("restart: log barrier %d: %v", b, err)
				return
			}
			want.commit(q)
		}
		logged = append(logged, t)
	}
	planCatalog := coord.PlanCatalog
	if s.opt.planCatalog != nil {
		planCatalog = s.opt.planCatalog
	}
	before := names(s.file, len(s.cat))
	mark := s.file.Mark()
	for _, step := range planCatalog(mark.Holds, logged) {
		q, err := decodeStmt(step.SQL)
		if err != nil {
			s.failf("restart: catalog recovery of log barrier %d: %v", step.Barrier, err)
			return
		}
		trees, err := catalogTrees(q)
		if err != nil {
			s.failf("restart: catalog recovery of log barrier %d: %v", step.Barrier, err)
			return
		}
		var b uint64
		if step.Last {
			b = step.Barrier
		}
		if err := s.file.Commit(b, trees); err != nil {
			s.failf("restart: catalog recovery of log barrier %d: %v", step.Barrier, err)
			return
		}
		s.logf("restart recovers %v (log barrier %d) into the catalog", q, step.Barrier)
	}
	if len(bs) > 0 {
		if top := uint64(bs[len(bs)-1]); top > mark.Floor || mark.Floor == math.MaxUint64 {
			if err := s.file.Settle(top); err != nil {
				s.failf("restart: %v", err)
				return
			}
		}
	}
	got := names(s.file, len(s.cat))
	if !slices.Equal(got, want) {
		s.failf("restart: the catalog recovered from the log maps names to keys as %v (the file held %v), "+
			"the log's committed schema changes give %v", got, before, want)
		return
	}
	s.cat = got
}
