package server

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// maxBarrier bounds the barriers shepherd accepts (coord.MaxBarrier).
const maxBarrier = coord.MaxBarrier

// connectTimeout bounds how long start-up waits for one replica to
// accept a connection; one that does not is left out and tried again
// later, as a replica that went away while shepherd ran.
const connectTimeout = 10 * time.Second

// recovered is what start-up found.
type recovered struct {
	// base is the barrier this run's first commit takes: above
	// everything in the log, and in the log tables of the replicas taken
	// in.
	base uint64
	// out are the replicas left out, each with why; they are tried again
	// once shepherd serves, and come back by catching up from the log.
	out map[int]error
}

// recoverReplicas brings the replicas it can reach up to the write-ahead
// log before clients are let in: each logged transaction a replica's log
// table lacks (it crashed, or shepherd did, between the log and its
// COMMIT there) is replayed to it, in barrier order, state-changing
// statements only, each in one engine transaction that also writes its
// log-table row.
//
// It needs f+1 replicas, not all: a replica that cannot be reached, whose
// log table claims a barrier above the log's last (or, with an empty log,
// an absurd one), or to which the replay fails is left out, with the
// reason, and shepherd starts if at least f+1 others are consistent with
// the log. What a replica reports is not trusted to move the barrier
// counter past what the log holds. The replicas in retired (with why)
// are not touched: they hold what the others rolled back, and count as
// left out.
func recoverReplicas(ctx context.Context, engines []driver.Engine, names []string, f int, records []wal.Record, retired map[int]error, log *slog.Logger) (recovered, error) {
	var from, top uint64
	if len(records) > 0 {
		from, top = records[0].Barrier, records[len(records)-1].Barrier
	}
	if top >= maxBarrier {
		return recovered{}, fmt.Errorf("the write-ahead log's last barrier, %d, is beyond %d: the log is damaged", top, uint64(maxBarrier))
	}
	type result struct {
		n   int
		top uint64
		err error
	}
	results := make([]result, len(engines))
	var wg sync.WaitGroup
	for i, e := range engines {
		if err, ok := retired[i]; ok {
			results[i].err = err
			continue
		}
		wg.Go(func() {
			r := &results[i]
			r.n, r.top, r.err = recoverOne(ctx, e, records, from, top)
		})
	}
	wg.Wait()
	// Which replicas to start with, and the barrier to go on from, is
	// coord.PlanStart's decision (the simulator runs it too).
	reports := make([]coord.StartReport, len(results))
	for i, r := range results {
		reports[i] = coord.StartReport{High: r.top, Err: r.err}
		if r.err == nil && r.n > 0 {
			log.Warn("replica caught up from the write-ahead log", "replica", names[i], "transactions", r.n)
		}
	}
	plan, ok := coord.PlanStart(f, top, reports)
	rec := recovered{base: plan.Base, out: plan.Out}
	if !ok {
		var why []string
		for i, r := range results {
			if r.err != nil {
				why = append(why, fmt.Sprintf("%s: %v", names[i], r.err))
			}
		}
		return recovered{}, fmt.Errorf("%d of %d replicas are usable, %d needed: %s", len(engines)-len(rec.out), len(engines), f+1, strings.Join(why, "; "))
	}
	if ctx.Err() != nil {
		return recovered{}, ctx.Err()
	}
	return rec, nil
}

// recoverOne checks one replica's log table against the log (records,
// from its first barrier, from, to its last, top) and replays what it
// lacks. It reports how many transactions it replayed and the highest
// barrier the replica holds.
func recoverOne(ctx context.Context, e driver.Engine, records []wal.Record, from, top uint64) (int, uint64, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	c, err := e.Connect(cctx)
	cancel()
	if err != nil {
		return 0, 0, fmt.Errorf("unreachable: %w", err)
	}
	defer c.Close()
	have, high, err := replica.LogRead(ctx, c, from)
	if err != nil {
		return 0, 0, fmt.Errorf("reading %s: %w", replica.LogTable, err)
	}
	if err := checkBarrier(high, top, len(records) > 0); err != nil {
		return 0, 0, err
	}
	n, err := cluster.Replay(ctx, c, e.Dialect(), records, have)
	if err != nil {
		return n, 0, fmt.Errorf("replaying the write-ahead log: %w", err)
	}
	return n, max(high, top), nil
}

// checkBarrier checks the highest barrier a replica's log table holds
// (coord.CheckBarrier, the rule the simulator runs too).
func checkBarrier(high, top uint64, logged bool) error {
	return coord.CheckBarrier(replica.LogTable, high, top, logged)
}

// lateEngine stands for a network replica that could not be reached when
// shepherd started: it opens the engine on the first Connect that
// succeeds. Start-up leaves the replica out, and the cluster's recovery
// loop brings it back through Connect, as a replica that went away while
// shepherd ran.
type lateEngine struct {
	spec    driver.Spec
	name    string
	class   driver.Class
	dialect driver.Dialect
	open    driver.OpenFunc

	mu sync.Mutex
	e  driver.Engine
}

// Driver returns the driver's name.
func (l *lateEngine) Driver() string { return l.name }

// Class returns the class of the driver's engines.
func (l *lateEngine) Class() driver.Class { return l.class }

// Dialect returns the dialect of the driver's engines.
func (l *lateEngine) Dialect() driver.Dialect { return l.dialect }

func (l *lateEngine) engine() driver.Engine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.e
}

// Connect opens the engine first if that has not succeeded yet.
func (l *lateEngine) Connect(ctx context.Context) (driver.Conn, error) {
	e := l.engine()
	if e == nil {
		var err error
		if e, err = l.open(ctx, l.spec); err != nil {
			return nil, err
		}
		if e.Dialect() != l.dialect || e.Class() != l.class {
			e.Close()
			return nil, pgerr.New(pgerr.InternalError, "replica %s: the engine opened late is not of the expected dialect and class", l.spec.Name)
		}
		l.mu.Lock()
		if l.e == nil {
			l.e = e
		} else {
			e.Close()
			e = l.e
		}
		l.mu.Unlock()
	}
	return e.Connect(ctx)
}

// Close closes the engine if it was opened.
func (l *lateEngine) Close() error {
	if e := l.engine(); e != nil {
		return e.Close()
	}
	return nil
}

// lateDialects are the drivers whose replicas may be unreachable at
// start (they are servers), with their dialects.
var lateDialects = map[string]driver.Dialect{"postgres": driver.Postgres, "mysql": driver.MySQL}

// unreachable reports whether err, from opening a replica, says its
// server could not be reached (08006, 57P03), as opposed to a
// configuration it refuses (a bad DSN is 08000, a bad password 28P01),
// which stops the start.
func unreachable(err error) bool {
	switch pgerr.Code(err) {
	case pgerr.ConnectionFailure, pgerr.CannotConnectNow:
		return true
	}
	return false
}

// recoverCatalog applies to the schema catalog the schema changes of the
// logged transactions it lacks: shepherd records them in catalog.json
// after the commit, so a crash in between leaves the file without them
// while the replicas have them (SERIAL fills and * expansion would then
// go wrong). What to apply is coord.PlanCatalog's decision (the simulator
// runs it too): the changes are applied in barrier order, each statement
// analysed as at its commit, against the catalog as it stood then.
// Afterwards the catalog holds the whole log.
func recoverCatalog(cache *sqlan.Cache, records []wal.Record, log *slog.Logger) error {
	cat := cache.Catalog()
	mark := cat.Mark()
	// A block whose COMMIT was under way recorded its changes, sequence
	// DDL and counters included, which the log lacks
	// (schema.Catalog.Pending): its logged transaction is recovered from
	// that entry, in its place in barrier order, instead of from the
	// log's DDL. (Transaction ids are unique within a run, and every
	// record of an earlier run is held.)
	pending := cat.PendingBlocks()
	logged := make([]coord.LoggedDDL, 0, len(records))
	fromPending := map[uint64]schema.PendingBlock{}
	for _, rec := range records {
		t := coord.LoggedDDL{Barrier: rec.Barrier}
		if p, ok := pending[rec.Txn]; ok {
			fromPending[rec.Barrier] = p
			t.DDL = []string{pendingMarker}
		} else {
			for _, st := range rec.Statements {
				if st.DDL {
					t.DDL = append(t.DDL, st.SQL)
				}
			}
		}
		logged = append(logged, t)
	}
	for _, step := range coord.PlanCatalog(mark.Holds, logged) {
		if p, ok := fromPending[step.Barrier]; ok {
			recoverPending(cache, step.Barrier, p, log)
			continue
		}
		var b uint64
		if step.Last {
			b = step.Barrier // recorded with the transaction's last change
		}
		sts, err := cache.Parse(step.SQL)
		if err == nil && len(sts) != 1 {
			err = fmt.Errorf("%d statements in one log entry", len(sts))
		}
		if err == nil {
			err = cat.Commit(b, []*pg_query.Node{sts[0].Tree()})
		}
		if err != nil {
			// As when the change committed: the client was told the
			// catalog could not record it. The transaction counts as
			// recorded, so that the next start does not try again.
			if b > 0 {
				_ = cat.Commit(b, nil)
			}
			log.Error("a logged schema change could not be recorded in the catalog", "barrier", step.Barrier, "statement", step.SQL, "err", err)
			continue
		}
		log.Warn("schema change recovered from the write-ahead log", "barrier", step.Barrier, "statement", step.SQL)
	}
	var top uint64
	if len(records) > 0 {
		top = records[len(records)-1].Barrier
	}
	if top > mark.Floor || mark.Floor == math.MaxUint64 {
		if err := cat.Settle(top); err != nil {
			return err
		}
	}
	// The other pending blocks never reached the log: never committed.
	return cat.ClearPending()
}

// pendingMarker stands, in what coord.PlanCatalog decides over, for the
// changes of a logged transaction recovered from its pending entry: one
// step, so that the plan places it in barrier order and skips it when
// the catalog holds the transaction.
const pendingMarker = "-- pending block"

// recoverPending records in the catalog what a block whose COMMIT was
// under way recorded of itself (schema.Catalog.Pending), for its logged
// transaction at barrier.
func recoverPending(cache *sqlan.Cache, barrier uint64, p schema.PendingBlock, log *slog.Logger) {
	cat := cache.Catalog()
	var trees []*pg_query.Node
	// Each statement is analysed against the schema the block saw then,
	// as in the block.
	snap := cat.Snapshot()
	for _, sql := range p.Statements {
		sts, err := cache.ParseFor(sql, snap)
		if err == nil && len(sts) != 1 {
			err = fmt.Errorf("%d statements in one pending entry", len(sts))
		}
		var next *schema.Snapshot
		if err == nil {
			next, err = snap.Apply(sts[0].Tree())
		}
		if err != nil {
			log.Error("a pending schema change could not be read", "barrier", barrier, "statement", sql, "err", err)
			continue
		}
		snap = next
		trees = append(trees, sts[0].Tree())
	}
	err := cat.CommitBlock(barrier, trees, &schema.BlockSeqs{Txn: p.Txn, Named: p.Named, Serial: p.Serial})
	if err != nil {
		_ = cat.Commit(barrier, nil)
		log.Error("a pending schema change could not be recorded in the catalog", "barrier", barrier, "err", err)
		return
	}
	log.Warn("schema change recovered from the pending block", "barrier", barrier, "statements", len(p.Statements))
}

// resolveIntents resolves the DDL intents the last run left in the intent
// file (cluster.Intent) before anything else of start-up reads the log:
// coord.PlanIntents decides (the simulator runs it too). A transaction it
// completes is appended to the log, durably, after its last record, and
// is then replayed to every replica like any logged transaction; the
// replicas it retires are recorded in the retirement file. Only then is
// the intent file emptied: a crash in between finds the completed
// transaction logged (so resolved), or plans the same retirements again.
// It returns the log's records, completed ones included, and the
// retirement file's entries (nil if it did not change them).
func resolveIntents(ctx context.Context, w *wal.Log, records []wal.Record, intentFile, retiredFile string, engines []driver.Engine, names []string, log *slog.Logger) ([]wal.Record, map[string]cluster.Retirement, error) {
	intents, err := cluster.LoadIntents(intentFile)
	if err != nil || len(intents) == 0 {
		return records, nil, err
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	byTxn := map[uint64]cluster.Intent{}
	ds := make([]coord.DDLIntent, len(intents))
	for i, in := range intents {
		byTxn[in.Txn] = in
		logged, known := in.Logged(records)
		ds[i] = coord.DDLIntent{Txn: in.Txn, Lone: in.Lone, Deferred: in.Deferred, Unknown: !logged && !known}
		for _, n := range in.Replicas {
			if r, ok := index[n]; ok {
				ds[i].Replicas = append(ds[i].Replicas, r)
				if in.Deferred && logged && holdsCommit(ctx, engines[r], records, in) {
					ds[i].Holds = append(ds[i].Holds, r)
				}
			}
		}
	}
	var open []cluster.Intent
	for _, in := range intents {
		if logged, _ := in.Logged(records); !logged && !in.Deferred {
			open = append(open, in)
		}
	}
	if refused, why := tryIntents(ctx, engines, names, records, open); refused != 0 {
		for i := range ds {
			if ds[i].Txn == refused {
				ds[i].Refused = true
				log.Error("a schema change left open by a crash is refused by a replica in a trial: it is not completed",
					"txn", refused, "why", why)
			}
		}
	}
	plan := coord.PlanIntents(ds, func(txn uint64) bool {
		logged, _ := byTxn[txn].Logged(records)
		return logged
	})
	for _, txn := range plan.Complete {
		var top uint64
		if len(records) > 0 {
			top = records[len(records)-1].Barrier
		}
		rec := byTxn[txn].Record(top + 1)
		if err := w.Append(ctx, rec); err != nil {
			return nil, nil, fmt.Errorf("completing the schema change of transaction %d in the write-ahead log: %w", txn, err)
		}
		records = append(records, rec)
		log.Warn("schema change left open by a crash completed: logged, and replayed to every replica",
			"txn", txn, "barrier", rec.Barrier, "statement", rec.Statements[0].SQL)
	}
	var retired map[string]cluster.Retirement
	if len(plan.Retire) > 0 {
		var add []cluster.Retirement
		for r, why := range plan.Retire {
			add = append(add, cluster.Retirement{Replica: names[r], Why: why, Since: time.Now().UTC()})
			log.Error("replica retired at start: it may hold a schema change the others never got; "+
				"rebuild it from a replica in use, then run REJOIN REPLICA on the admin console", "replica", names[r], "why", why)
		}
		if retired, err = cluster.AddRetirements(retiredFile, add); err != nil {
			return nil, nil, err
		}
	}
	if err := cluster.SaveIntents(intentFile, nil); err != nil {
		return nil, nil, fmt.Errorf("DDL intents: %w", err)
	}
	return records, retired, nil
}

// holdsCommit reports whether replica e's log table holds the commit of
// in's transaction, logged in records: it finished the transaction (see
// coord.DDLIntent.Holds). A replica it cannot read does not.
func holdsCommit(ctx context.Context, e driver.Engine, records []wal.Record, in cluster.Intent) bool {
	i := slices.IndexFunc(records, func(r wal.Record) bool { return r.Txn == in.Txn && r.Barrier >= in.From })
	if i < 0 {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	c, err := e.Connect(cctx)
	cancel()
	if err != nil {
		return false
	}
	defer c.Close()
	have, _, err := replica.LogRead(ctx, c, records[i].Barrier)
	return err == nil && have[records[i].Barrier]
}

// tryIntents tries the open intents (cluster.TryIntents), in order, on
// each replica that runs DDL in transactions (not MariaDB) and holds
// every logged transaction (records), rolling them back: a change such a
// replica refuses would fail the replay of its completion there, on
// every start. It returns the first intent refused, with why, or 0. A
// replica it cannot reach, or that lags the log, proves nothing.
func tryIntents(ctx context.Context, engines []driver.Engine, names []string, records []wal.Record, open []cluster.Intent) (uint64, error) {
	if len(open) == 0 {
		return 0, nil
	}
	var from uint64
	if len(records) > 0 {
		from = records[0].Barrier
	}
	for i, e := range engines {
		if e.Dialect() == driver.MySQL {
			continue
		}
		refused, why := func() (uint64, error) {
			cctx, cancel := context.WithTimeout(ctx, connectTimeout)
			c, err := e.Connect(cctx)
			cancel()
			if err != nil {
				return 0, nil
			}
			defer c.Close()
			have, _, err := replica.LogRead(ctx, c, from)
			if err != nil {
				return 0, nil
			}
			for _, r := range records {
				if !have[r.Barrier] {
					return 0, nil // it lags: replay would change what it refuses
				}
			}
			refused, why, err := cluster.TryIntents(ctx, c, e.Dialect(), open)
			if err != nil {
				return 0, nil
			}
			return refused, fmt.Errorf("%s: %w", names[i], why)
		}()
		if refused != 0 {
			return refused, why
		}
	}
	return 0, nil
}
