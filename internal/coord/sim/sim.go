package sim

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// Options select one run.
type Options struct {
	Mode coord.Mode
	Seed int64
	// Scenario, when set, names the cluster to use instead of the one the
	// seed draws (see Scenarios).
	Scenario string
	// Log, when set, receives a line for every event, action and decision
	// of a fake replica.
	Log io.Writer

	// tweak and wrap let this package's tests change what the seed drew
	// and interpose on the core (to show that the checks catch a broken
	// core).
	tweak func(*setup)
	wrap  func(*sim, core) core
	// Broken variants of the shell's decisions, for this package's
	// tests: retranslate makes replay resolve the client's names against
	// the catalog of the replay's day (issue 14, item 2) instead of
	// sending the logged form; checkBarrier and planStart, when set,
	// replace coord.CheckBarrier and coord.PlanStart at restart, and
	// planIntents coord.PlanIntents, planCatalog coord.PlanCatalog.
	// catalogAtCancel records a pinned transaction's schema changes in
	// the catalog when its client is let go, without its barrier, as
	// the session did before Txn.AfterCommit (issue 14, item 10).
	catalogAtCancel bool
	retranslate     bool
	checkBarrier    func(table string, high, top uint64, logged bool) error
	planStart       func(f int, top uint64, reports []coord.StartReport) (coord.StartPlan, bool)
	planIntents     func(intents []coord.DDLIntent, logged func(txn uint64) bool) coord.IntentPlan
	planCatalog     func(holds func(barrier uint64) bool, txns []coord.LoggedDDL) []coord.CatalogStep
}

// core is what the simulator needs of the coordinator.
type core interface {
	Step(coord.Event)
	Ready() []coord.Action
}

// Result is what one run did and found.
type Result struct {
	Seed  int64
	Mode  coord.Mode
	Setup string // the configuration the seed drew
	// Txns were begun; Commits acknowledged; Refused had their COMMIT
	// fail; RolledBack ended in ROLLBACK (asked for, or after an error).
	Txns, Commits, Refused, RolledBack int
	Steps, Ticks                       int
	Aborts                             int // coord.Abort actions
	// CorrectAccused counts Mismatch actions against correct replicas;
	// CorrectDown the correct replicas the core took out.
	CorrectAccused, CorrectDown int
	// Lagging counts the transactions the core had not finished when the
	// run stopped because only faulty replicas still worked on them.
	Lagging int
	// Rejoined counts crashed replicas that came back and caught up.
	Rejoined int
	// Restarts counts the times shepherd crashed and started again from
	// its log; Lost the transactions that went with it (their clients
	// saw the connection drop), of which LostCommits had their record
	// durable and so committed all the same.
	Restarts, Lost, LostCommits int
	// Completed counts the DDL transactions start-up completed from an
	// open intent (coord.PlanIntents), IntentRetired the replicas it
	// retired instead.
	Completed, IntentRetired int
	// Swaps counts the schema changes (name swaps) committed; Replayed
	// the transactions replayed from the log to a replica.
	Swaps, Replayed int
	// SurveyFound counts faulty replicas a survey found different from
	// the f+1 that agreed (compare-and-repair would repair them).
	SurveyFound int
	// OverBudget: the run stopped without progress once more than f
	// replicas were faulty or retired (see overBudget).
	OverBudget bool
	// Err is the first check that failed, nil when every check passed.
	Err error
}

// Run simulates one seeded run of the core in opt.Mode and checks it.
func Run(opt Options) (res Result) {
	rng := newRNG(opt.Seed)
	s := &sim{opt: opt, rng: rng, setup: newSetup(rng)}
	if opt.Scenario != "" {
		tweak := scenarios[opt.Scenario]
		if tweak == nil {
			return Result{Seed: opt.Seed, Mode: opt.Mode, Err: fmt.Errorf("sim: no scenario %q (have %v)", opt.Scenario, Scenarios())}
		}
		tweak(&s.setup)
	}
	if opt.tweak != nil {
		opt.tweak(&s.setup)
	}
	s.res = Result{Seed: opt.Seed, Mode: opt.Mode, Setup: s.setup.String()}
	defer func() {
		if p := recover(); p != nil {
			s.failf("panic (in the core unless the stack says otherwise): %v\n%s", p, debug.Stack())
		}
		s.res.Err = s.err
		res = s.res
	}()
	s.start()
	s.res.Setup = s.setup.String()
	s.loop()
	if s.err == nil {
		s.checkEnd()
	}
	return s.res
}

// PlannedTxns returns how many transactions the run of seed begins.
func PlannedTxns(seed int64) int { return newSetup(newRNG(seed)).txns }

func newRNG(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x5eed5eed)) }

// sim is one run: the core, the fake replicas, the clients, and the
// reference serial store the checks compare against.
type sim struct {
	opt   Options
	rng   *rand.Rand
	setup setup
	core  core
	// co is the coordinator itself (core may wrap it), for its queries.
	co    *coord.Coordinator
	fakes []*fake
	// clients run transactions; started counts the transactions begun.
	clients []*client
	started int
	// finishedTxns counts the transactions the core reported Finished.
	finishedTxns int
	txns         map[coord.TxnID]*txn
	// ref is the reference store: the committed transactions replayed one
	// at a time in the order their commits were decided. order lists the
	// transactions in that order; the first replayed of them are applied.
	ref          store
	order        []*txn
	replayed     int
	tick, steps  int
	progressTick int // tick of the latest Reply or Finished
	moves        []move
	// The write-ahead log, in runs that have one (Config.Log): logQ are
	// the records logged but not yet durable; logged is the barrier below
	// which every record is settled (durable, or refused); durable holds
	// the barriers on disk; barrierOf is each logged transaction's
	// barrier (refused ones and those lost when the log failed are
	// forgotten: they never committed).
	wal       bool
	logQ      []logEntry
	logged    int
	nextLog   int
	barrierOf map[coord.TxnID]int
	durable   map[int]bool
	// Log faults, drawn from logRNG (its own stream, so that runs
	// without them replay as before): each record is refused with
	// chance logRefuse (too large, say); flush number logFailAt (from
	// 1; 0 never) fails, as a failed fsync does, and the log takes
	// nothing more (logBroken).
	logRNG    *rand.Rand
	logRefuse float64
	logFailAt int
	flushes   int
	logBroken bool
	// ddlRNG draws the DDL transactions and the cancels (setup.ddl);
	// spRNG the savepoints (setup.savepoints).
	ddlRNG, spRNG *rand.Rand
	// blockRNG draws which DDL statements stand in blocks (setup.blockDDL).
	blockRNG *rand.Rand
	// base is the log barrier of the current core's barrier 0: 1 at
	// first (a new log), then what coord.PlanStart decided at each
	// restart. Barriers in the sim's own books (barrierOf, durable,
	// recs, logQ, logged, nextLog) are log barriers.
	base int
	// recs are the log's records by barrier, as the shell writes them:
	// each writing statement with the client's text (the statement in
	// names) and one form per dialect (the statement in keys, as the
	// replicas ran it). Replay reads them, never the transactions.
	recs map[int]wal.Record
	// intents are the open DDL intents, in the order they were recorded
	// (see noteIntent).
	intents []coord.TxnID
	// cat is shepherd's schema catalog: what the names of a statement
	// denote (setup.swapEvery changes it).
	cat catalog
	// file is the shell's schema catalog as its file (catalog.json)
	// holds it (see newCatalogFile): the names as the shell recorded
	// them, and which logged transactions' changes it holds
	// (schema.LogMark), written together, when the shell writes them:
	// once the client's COMMIT succeeded, or, for a client let go during
	// its COMMIT (coord.ErrCommitsAnyway), once its record is durable
	// (cluster's Txn.AfterCommit). A crash in between leaves the file
	// without them; start-up recovers them from the log (see
	// recoverCatalog). pendingCat are the let-go transactions whose
	// record is not durable yet.
	file       *schema.Catalog
	pendingCat map[coord.TxnID]bool
	// ddlLocks are the session's DDL locks (session/ddllock.go): a
	// swap takes one on each name it renames, before it is translated,
	// and holds it until its change is in the catalog file (or it ended
	// without one). Without them a swap could be translated, and reach
	// the file, before an earlier swap of the same name did: the file
	// would then apply them in another order than the log.
	ddlLocks map[int]coord.TxnID
	// swapRNG draws the name swaps, restartRNG the restarts.
	swapRNG, restartRNG *rand.Rand
	// halted: shepherd could not start again (too few usable replicas).
	halted bool
	ring   traceRing
	res    Result
	err    error
}

// logEntry is a record on its way to the log.
type logEntry struct {
	txn     coord.TxnID
	barrier int
	refused bool
}

// client is one simulated database client: one transaction at a time,
// one operation at a time, waiting for each reply.
type client struct {
	id      int
	cur     *txn
	waiting bool // an op is out and its Reply has not come
	op      coord.Op
	// lockWait is the tick the client began waiting for a DDL lock
	// (ddlLocks) another transaction holds, 0 when it does not wait.
	lockWait int
}

// txn is one client transaction as the client sees it.
type txn struct {
	id     coord.TxnID
	client *client
	// src are the statements as the client wrote them, in names; stmts
	// as shepherd translated them at submit (keys), what the replicas and
	// the reference run.
	src   []stmt
	stmts []stmt
	got   []int // the answers the client received, by statement
	sent  int   // statements submitted
	ended bool  // COMMIT or ROLLBACK submitted
	// mustRollback: a statement failed, the client rolls back next.
	mustRollback bool
	finished     bool // the core reported Finished
	// decided: the core sent COMMIT to some replica. acked, refused: the
	// client's COMMIT succeeded, failed.
	decided, acked, refused bool
	// survey: a compare or repair step of the shell's (coord.Begin); it
	// may write, as a repair does, and commits only when unanimous.
	survey bool
	// blockDDL: t's DDL statement stands among others, in a block
	// (coord.Submit.Defer).
	blockDDL bool
	// mayCancel: the client may give up waiting for its COMMIT
	// (coord.Cancel); cancelled once it did. commitsAnyway: its COMMIT
	// failed with coord.ErrCommitsAnyway, so it commits nevertheless.
	mayCancel, cancelled, commitsAnyway bool
	// unknown: its COMMIT failed with 08007, the outcome unknown.
	unknown bool
	// crashCommitted: shepherd crashed before its client heard of its
	// COMMIT, and its log record was durable: it committed.
	crashCommitted bool
	// completed: start-up completed it from its DDL intent
	// (coord.PlanIntents), so its client may never have heard the
	// answer to its statement.
	completed bool
}

func (s *sim) start() {
	st := s.setup
	concurrent := st.concurrent
	if len(concurrent) != st.n {
		concurrent = nil // a tweak reshaped the cluster: the class defaults
	}
	// Half the cbs/ss runs have a write-ahead log, whose flushes are one
	// more thing that can happen at any moment.
	s.wal = (s.opt.Mode == coord.CBS || s.opt.Mode == coord.SS) && (s.opt.Seed%2 == 0 || st.walOn)
	s.barrierOf = map[coord.TxnID]int{}
	s.spRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x5a7e))
	s.durable = map[int]bool{}
	if s.opt.Mode == coord.CBS || s.opt.Mode == coord.SS {
		s.ddlRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0xdd1))
		if !st.ddlSet {
			st.ddl = s.ddlRNG.IntN(3) == 0
			var locking []int
			for r, c := range st.classes {
				if c == driver.Locking {
					locking = append(locking, r)
				}
			}
			st.ddlCommits = make([]bool, st.n)
			switch p := primaryOf(st.classes); {
			case p >= 0 && st.classes[p] == driver.Locking && s.ddlRNG.IntN(4) > 0:
				st.ddlCommits[p] = true
			case len(locking) > 0:
				st.ddlCommits[locking[s.ddlRNG.IntN(len(locking))]] = true
			}
		}
	} else {
		st.ddl = false // the serial core runs no engine with such DDL
	}
	if !st.ddl {
		st.ddlCommits = nil
	}
	s.blockRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0xb10c))
	if !st.blockSet {
		st.blockDDL = st.ddl && s.blockRNG.IntN(2) == 0
	}
	if !s.wal {
		st.restarts = nil
	} else if !st.restartSet {
		// A third of the runs with a log see shepherd crash and start
		// again, from a stream of their own.
		s.restartRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x4e57a47))
		if s.restartRNG.IntN(3) == 0 {
			st.restarts = []int{1 + s.restartRNG.IntN(30*st.txns)}
		}
	}
	if s.wal && !st.ddl && st.swapEvery == 0 && s.opt.Scenario == "" {
		// A quarter of the drawn runs with a log and no DDL swap names
		// now and then, from a stream of their own.
		if rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x5a4c)).IntN(4) == 0 {
			st.swapEvery = 10
		}
	}
	if st.swapEvery > 0 {
		s.swapRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x5a4b))
	}
	s.cat = make(catalog, st.keys)
	for k := range s.cat {
		s.cat[k] = k
	}
	if s.wal && (st.swapEvery > 0 || st.ddl) {
		// Only runs with a log restart, and only schema changes write
		// the catalog.
		var err error
		if s.file, err = newCatalogFile(st.keys); err != nil {
			s.failf("the catalog: %v", err)
		}
	}
	s.pendingCat = map[coord.TxnID]bool{}
	s.ddlLocks = map[int]coord.TxnID{}
	s.recs = map[int]wal.Record{}
	s.base, s.nextLog, s.logged = 1, 1, 1
	s.setup = st
	if s.wal {
		s.logRNG = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x10910c))
		if s.logRNG.IntN(3) == 0 {
			s.logRefuse = pick(s.logRNG, 0.01, 0.05, 0.2)
		}
		if s.logRNG.IntN(4) == 0 {
			s.logFailAt = 1 + s.logRNG.IntN(st.txns)
		}
	}
	stall := st.stallTicks
	if stall == 0 {
		stall = coord.DefaultStallTicks
	}
	s.newCore()
	for r := range st.n {
		f := newFake(coord.ReplicaID(r), st.classes[r], st.faults[r], st.initial, s.rng)
		f.ddlCommits = st.ddlCommits != nil && st.ddlCommits[r]
		if s.opt.Log != nil {
			f.note = s.logf
		}
		if s.wal && f.crashOnly() && s.rng.IntN(4) > 0 {
			// It comes back, catches up from the log and rejoins.
			f.rejoinAt = st.faults[r].crashAt + 1 + s.rng.IntN(3000)
		}
		s.fakes = append(s.fakes, f)
	}
	for i := range st.clients {
		s.clients = append(s.clients, &client{id: i})
	}
	s.txns = map[coord.TxnID]*txn{}
	s.ref = slices.Clone(st.initial)
	s.logf("seed %d mode %v %s: %v", s.opt.Seed, s.opt.Mode, s.opt.Scenario, st)
}

// newCore starts a coordinator, as the shell does when shepherd starts.
func (s *sim) newCore() {
	st := s.setup
	concurrent := st.concurrent
	if len(concurrent) != st.n {
		concurrent = nil // a tweak reshaped the cluster: the class defaults
	}
	stall := st.stallTicks
	if stall == 0 {
		stall = coord.DefaultStallTicks
	}
	// Surveys give up on a replica well within the progress check's
	// patience (stuckTicks): it holds locks clients may wait for.
	s.co = coord.New(coord.Config{Mode: s.opt.Mode, N: st.n, F: st.f, Classes: st.classes, Concurrent: concurrent,
		StallTicks: st.stallTicks, OpTicks: st.opTicks, Log: s.wal, SurveyTicks: 20 * stall, DDLCommits: st.ddlCommits,
		DrainTicks: 20 * stall, Ahead: true})
	s.core = s.co
	if s.opt.wrap != nil {
		s.core = s.opt.wrap(s, s.core)
	}
}

// move is one thing that can happen next besides a Tick.
type move struct {
	c *client  // the client submits its next op
	f *fake    // with a: a runs its next op; else answer i arrives
	a *attempt //
	i int
	// flush: the log makes some of its queued records durable.
	flush bool
	// cancel: with c, the client gives up waiting for its COMMIT.
	cancel bool
}

func (s *sim) loop() {
	budget := 100_000 + 500*s.setup.txns
	quietSince := -1 // tick since which the clients are done and correct replicas idle
	for s.err == nil && !s.done() && !s.halted {
		s.steps++
		s.res.Steps = s.steps
		if s.steps > budget {
			if s.overBudget() {
				return
			}
			s.failf("livelock: %d steps and still not done", s.steps)
			return
		}
		if !s.clientsDone() || !s.correctQuiet() {
			quietSince = -1
		} else if quietSince < 0 {
			quietSince = s.tick
		}
		switch {
		case quietSince >= 0 && s.tick-quietSince > s.stuckTicks():
			s.drainEnd()
			return
		case quietSince < 0 && s.tick-s.progressTick > s.stuckTicks():
			if s.overBudget() {
				return
			}
			s.failf("stuck: no reply or finished transaction for %d ticks", s.tick-s.progressTick)
			return
		}
		s.crashes()
		ms := s.collect()
		if s.rng.Float64()*(1+s.setup.tickEvery*float64(len(ms))) < 1 {
			s.doTick()
			continue
		}
		s.do(ms[s.rng.IntN(len(ms))])
	}
}

// overBudget reports whether more than f replicas are out of the
// cluster's fault budget: faulty ones, and correct ones the core retired
// (coord.Retire, a DDL it could not undo there). The core then owes no
// progress; what it did must still pass the other checks.
func (s *sim) overBudget() bool {
	n := 0
	for _, f := range s.fakes {
		if f.faults.faulty() || f.retired {
			n++
		}
	}
	if n > s.setup.f {
		s.res.OverBudget = true
		s.logf("stopped: %d replicas faulty or retired, more than f = %d", n, s.setup.f)
		return true
	}
	return false
}

// drainEnd ends a run whose clients are done and whose correct replicas
// have long been idle while the core has not finished every transaction.
// That is fine while faulty replicas still work on them (they may fail or
// stall forever; nobody else waits for them), and a core that forgot a
// transaction otherwise.
func (s *sim) drainEnd() {
	for _, f := range s.fakes {
		if s.faulty(f) && !f.down && (len(f.open) > 0 || len(f.inflight) > 0) {
			s.res.Lagging = s.unfinished()
			return
		}
	}
	var ids []coord.TxnID
	for id, t := range s.txns {
		if !t.finished {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	s.failf("the core never finished t%d (and %d more) though every replica is idle", ids[0], len(ids)-1)
}

// stuckTicks is how long the run may go without progress: well beyond
// any stall a fake makes and any abort-and-retry the core may need.
func (s *sim) stuckTicks() int {
	stall := s.setup.stallTicks
	if stall == 0 {
		stall = coord.DefaultStallTicks
	}
	longest := 0
	for _, f := range s.setup.faults {
		longest = max(longest, f.stallMax)
	}
	return 300 + 30*stall + 4*longest
}

// done reports whether every client finished its work and the core
// finished every transaction.
func (s *sim) done() bool {
	if !s.clientsDone() || s.unfinished() > 0 {
		return false
	}
	for _, f := range s.fakes {
		if len(f.inflight) > 0 || slices.ContainsFunc(f.open, f.runnable) {
			return false
		}
	}
	return true
}

func (s *sim) clientsDone() bool {
	if s.started < s.setup.txns {
		return false
	}
	for _, c := range s.clients {
		if c.cur != nil || c.waiting {
			return false
		}
	}
	return true
}

// unfinished counts the transactions the core has not finished.
func (s *sim) unfinished() int { return s.started - s.finishedTxns }

// correctQuiet reports whether every correct replica in use has nothing
// open and nothing on its way.
func (s *sim) correctQuiet() bool {
	for _, f := range s.fakes {
		if !s.faulty(f) && !f.down && (len(f.open) > 0 || len(f.inflight) > 0) {
			return false
		}
	}
	return true
}

// faulty reports whether f may lag for ever: a faulty replica, except one
// that only crashed and has rejoined, which checkEnd holds to the same
// standard as a correct one.
func (s *sim) faulty(f *fake) bool { return f.faults.faulty() && !(f.rejoined && f.crashOnly()) }

func (s *sim) crashes() {
	if slices.Contains(s.setup.restarts, s.steps) {
		s.restart()
		if s.err != nil || s.halted {
			return
		}
	}
	for _, f := range s.fakes {
		if f.faults.crashAt == s.steps && !f.down {
			f.crash()
			s.stepCore(coord.Down{R: f.id})
		}
	}
	s.catchUpFails()
	s.rejoins()
}

// rejoins brings crashed replicas back as the shell does: the replica is
// reachable again (coord.Rejoin); it applies, from the log, every
// transaction decided before that which it had not committed, once the
// log holds them all, in barrier order; then it has caught up
// (coord.Caught) and gets new work.
func (s *sim) rejoins() {
	for _, f := range s.fakes {
		switch {
		case f.down && f.rejoinAt > 0 && s.steps >= f.rejoinAt && !f.joining && !f.rejoined && !f.retired:
			f.down, f.joining = false, true
			s.stepCore(coord.Rejoin{R: f.id})
			f.catchTo = s.base + s.co.Decided()
			s.logf("r%d rejoins; catches up to barrier %d", f.id, f.catchTo)
		case f.joining && s.logged >= f.catchTo:
			n := s.replayLog(f, f.catchTo)
			if want := s.logState(f.catchTo); !f.faults.faulty() || f.crashOnly() {
				// A replica that only crashed is correct once back:
				// it holds what the log says, or replay wrote
				// something else than the others committed.
				if !slices.Equal(f.committed, want) {
					s.failf("r%d caught up to barrier %d holding %v, the log's transactions give %v", f.id, f.catchTo, f.committed, want)
					return
				}
			}
			f.joining, f.rejoined = false, true
			s.res.Rejoined++
			s.logf("r%d caught up: %d transactions applied from the log", f.id, n)
			s.stepCore(coord.Caught{R: f.id})
		}
	}
}

// collect lists the possible moves, in a deterministic order.
func (s *sim) collect() []move {
	ms := s.moves[:0]
	for _, c := range s.clients {
		if !c.waiting && (c.cur != nil || s.started < s.setup.txns) && !s.lockBlocked(c) {
			ms = append(ms, move{c: c})
		}
		if t := c.cur; c.waiting && t != nil && t.mayCancel && !t.cancelled && c.op.Kind == coord.OpCommit {
			ms = append(ms, move{c: c, cancel: true})
		}
	}
	for _, f := range s.fakes {
		for _, a := range f.open {
			if f.runnable(a) {
				ms = append(ms, move{f: f, a: a})
			}
		}
		for i, m := range f.inflight {
			if m.due <= s.tick {
				ms = append(ms, move{f: f, i: i})
			}
		}
	}
	if len(s.logQ) > 0 && !s.logBroken {
		ms = append(ms, move{flush: true})
	}
	s.moves = ms
	return ms
}

func (s *sim) doTick() {
	s.tick++
	s.res.Ticks = s.tick
	s.stepCore(coord.Tick{})
}

func (s *sim) do(m move) {
	switch {
	case m.flush:
		s.flush()
	case m.cancel:
		m.c.cur.cancelled = true
		s.stepCore(coord.Cancel{Txn: m.c.cur.id})
	case m.c != nil:
		s.clientNext(m.c)
	case m.a != nil:
		var q stmt
		if op := m.a.queue[0]; op.Kind == coord.OpStmt {
			q = s.txns[op.Txn].stmts[op.Seq]
		}
		m.f.step(m.a, q, s.tick)
	default:
		msg := m.f.deliver(m.i)
		ev := coord.Answered{R: m.f.id, Op: msg.op, Try: msg.a.try, V: msg.vote}
		s.stepCoreNoted(ev, answered{ev, msg.val})
	}
}

// flush is a group commit: a prefix of the queue becomes durable at
// once, the records refused in it (in order, as the shell reports them)
// excepted. Or the write fails: the core is told the log failed, and
// whatever was queued never committed.
func (s *sim) flush() {
	k := 1 + s.rng.IntN(len(s.logQ))
	batch := s.logQ[:k]
	s.flushes++
	if s.logFailAt > 0 && s.flushes >= s.logFailAt {
		s.logBroken = true
		for _, e := range s.logQ {
			delete(s.barrierOf, e.txn)
			delete(s.recs, e.barrier)
			delete(s.pendingCat, e.txn)
			s.unlockDDL(e.txn)
		}
		s.logQ = nil
		s.logf("the log fails")
		s.stepCore(coord.LogFailed{Fail: pgerr.New(pgerr.IOError, "sim: fsync failed")})
		return
	}
	s.logQ = s.logQ[k:]
	last := -1
	for _, e := range batch {
		if !e.refused {
			s.durable[e.barrier] = true
			s.logged, last = e.barrier+1, e.barrier
			if s.pendingCat[e.txn] {
				delete(s.pendingCat, e.txn)
				s.writeCatalog(s.txns[e.txn])
			}
			continue
		}
		if last >= 0 {
			s.stepCore(coord.Logged{Barrier: last - s.base})
			last = -1
		}
		delete(s.barrierOf, e.txn)
		delete(s.recs, e.barrier)
		delete(s.pendingCat, e.txn)
		s.unlockDDL(e.txn)
		s.logged = e.barrier + 1
		s.stepCore(coord.LogRefused{Txn: e.txn, Fail: pgerr.New(pgerr.ProgramLimitExceeded, "sim: record too large")})
	}
	if last >= 0 {
		s.stepCore(coord.Logged{Barrier: last - s.base})
	}
}

// clientNext makes client c submit its next operation.
func (s *sim) clientNext(c *client) {
	t := c.cur
	if t == nil {
		t = s.begin(c)
		if s.lockBlocked(c) {
			return // its swap waits for a DDL lock (collect offers it again)
		}
	}
	gaveUp := c.lockWait > 0 // waited out its DDL lock (lockBlocked)
	c.lockWait = 0
	switch {
	case gaveUp:
		// lock_timeout, or the deadlock check's 40P01: the session
		// fails the statement, and the client rolls back.
		t.mustRollback = true
		s.submit(c, coord.Op{Txn: t.id, Kind: coord.OpRollback})
	case t.mustRollback, t.sent > 0 && t.sent < len(t.stmts) && s.rng.IntN(50) == 0 && !t.ddl():
		s.submit(c, coord.Op{Txn: t.id, Kind: coord.OpRollback})
	case t.sent < len(t.stmts):
		s.submit(c, coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: t.sent})
	case !t.ddl() && s.rng.IntN(10) == 0:
		s.submit(c, coord.Op{Txn: t.id, Kind: coord.OpRollback})
	default:
		s.submit(c, coord.Op{Txn: t.id, Kind: coord.OpCommit})
	}
}

// lockBlocked reports whether client c's next statement is a swap that
// must wait for a DDL lock another transaction holds (ddlLocks), as the
// session waits; a wait longer than lockWaitTicks ends (lock_timeout, or
// the deadlock check's 40P01 where the holder waits for c in an engine),
// and the client's next move then rolls back.
func (s *sim) lockBlocked(c *client) bool {
	t := c.cur
	if t == nil || t.mustRollback || t.sent >= len(t.src) || t.src[t.sent].kind != stmtSwap {
		c.lockWait = 0
		return false
	}
	q := t.src[t.sent]
	held := false
	for _, n := range []int{q.k, q.hi} {
		if h, ok := s.ddlLocks[n]; ok && h != t.id {
			held = true
		}
	}
	switch {
	case !held:
		c.lockWait = 0
		return false
	case c.lockWait == 0:
		c.lockWait = max(s.tick, 1)
	}
	return s.tick-c.lockWait <= lockWaitTicks
}

// lockWaitTicks bounds a wait for a DDL lock (see lockBlocked).
const lockWaitTicks = 20

// unlockDDL releases transaction id's DDL locks (ddlLocks).
func (s *sim) unlockDDL(id coord.TxnID) {
	for n, h := range s.ddlLocks {
		if h == id {
			delete(s.ddlLocks, n)
		}
	}
}

func (s *sim) begin(c *client) *txn {
	s.started++
	s.res.Txns = s.started
	t := &txn{id: coord.TxnID(s.started), client: c, survey: s.rng.IntN(16) == 0}
	keys := s.setup.keys
	if s.setup.ddl {
		// The last key is the schema: only DDL writes it, and nothing
		// reads it (a replica that commits DDL as it runs it shows it
		// early; a read of it there would be outvoted, which is another
		// matter than the one modelled here: replicas left different).
		keys--
	}
	for range 1 + s.rng.IntN(4) {
		t.src = append(t.src, randomStmt(s.rng, keys))
	}
	if s.setup.savepoints && !t.survey && s.spRNG.IntN(3) == 0 {
		// A savepoint somewhere, rolled back to later: the writes
		// between them are undone on every replica and in the log.
		i := s.spRNG.IntN(len(t.src) + 1)
		j := i + s.spRNG.IntN(len(t.src)-i+1)
		var check []stmt
		if s.spRNG.IntN(2) == 0 {
			// A statement that may fail, recovered from by the
			// ROLLBACK TO (see reply).
			check = []stmt{{kind: stmtAddCheck, k: s.spRNG.IntN(keys), d: s.spRNG.IntN(19) - 9}}
		}
		t.src = slices.Concat(t.src[:i], []stmt{{kind: stmtSavepoint}}, check, t.src[i:j], []stmt{{kind: stmtRollbackTo}}, t.src[j:])
	}
	if s.setup.swapEvery > 0 && !t.survey && s.swapRNG.IntN(s.setup.swapEvery) == 0 {
		// A lone schema change, in autocommit, as DDL is taken.
		a := s.swapRNG.IntN(keys)
		b := (a + 1 + s.swapRNG.IntN(keys-1)) % keys
		t.src = []stmt{{kind: stmtSwap, k: a, hi: b}}
	}
	if s.setup.ddl && !t.survey {
		// With MariaDB among the replicas the session takes DDL only
		// on its own, in autocommit: a lone statement, then COMMIT.
		every := s.setup.ddlEvery
		if every == 0 {
			every = 8
		}
		if s.ddlRNG.IntN(every) == 0 {
			ddl := stmt{kind: stmtDDL, k: keys, d: 1000 + s.ddlRNG.IntN(1000)}
			sp := slices.ContainsFunc(t.src, func(q stmt) bool { return q.kind == stmtSavepoint })
			if s.setup.blockDDL && !sp && s.blockRNG.IntN(2) == 0 {
				// In a block, among its statements: deferred on the
				// replicas that commit DDL as they run it.
				t.src = slices.Insert(t.src, s.blockRNG.IntN(len(t.src)+1), ddl)
				t.blockDDL = true
			} else {
				t.src = []stmt{ddl}
			}
		}
		t.mayCancel = s.ddlRNG.IntN(4) == 0
	}
	t.stmts = slices.Clone(t.src) // translated one by one as submitted
	s.txns[t.id] = t
	c.cur = t
	s.stepCore(coord.Begin{Txn: t.id, Survey: t.survey})
	return t
}

func (s *sim) submit(c *client, op coord.Op) {
	t := c.cur
	switch op.Kind {
	case coord.OpStmt:
		// Shepherd translates the statement now, against the catalog
		// as it stands; the replicas are sent the translation.
		if q := t.src[op.Seq]; q.kind == stmtSwap {
			s.ddlLocks[q.k], s.ddlLocks[q.hi] = t.id, t.id
		}
		t.stmts[op.Seq] = s.cat.translate(t.src[op.Seq])
		t.sent++
	default:
		t.ended = true
	}
	c.waiting, c.op = true, op
	if op.Kind == coord.OpStmt {
		s.noteIntent(t, op.Seq)
	}
	writes := op.Kind == coord.OpStmt && op.Seq < len(t.stmts) && t.stmts[op.Seq].writes()
	ddl := op.Kind == coord.OpStmt && t.stmts[op.Seq].schemaChange()
	s.stepCore(coord.Submit{Op: op, Writes: writes, DDL: ddl, Defer: ddl && t.blockDDL,
		Recovers: op.Kind == coord.OpStmt && t.stmts[op.Seq].kind == stmtRollbackTo})
}

// recoverAt returns the index of the ROLLBACK TO that follows statement
// seq of t, inside the savepoint, -1 if there is none.
func (t *txn) recoverAt(seq int) int {
	for i := seq + 1; i < len(t.src); i++ {
		if t.src[i].kind == stmtRollbackTo {
			return i
		}
	}
	return -1
}

// ddl reports whether t is a DDL transaction (one statement).
func (t *txn) ddl() bool { return len(t.stmts) == 1 && t.stmts[0].schemaChange() }

// stepCore feeds ev to the core and carries out the actions it returns.
func (s *sim) stepCore(ev coord.Event) { s.stepCoreNoted(ev, ev) }

func (s *sim) stepCoreNoted(ev coord.Event, noted any) {
	s.record(noted)
	s.core.Step(ev)
	actions := s.core.Ready()
	for _, a := range actions {
		s.record(a)
		s.apply(a)
		if s.err != nil {
			return
		}
	}
	// As the shell does: the next step's actions reuse the slice, which
	// a nested step (apply may step the core) must not disturb.
	if r, ok := s.core.(interface{ Recycle([]coord.Action) }); ok {
		r.Recycle(actions)
	}
}

func (s *sim) apply(a coord.Action) {
	switch a := a.(type) {
	case coord.Send:
		s.send(a)
	case coord.Abort:
		s.res.Aborts++
		if bad := s.fakes[a.R].abort(a.Txn, a.Try); bad != "" {
			s.failf("contract: %s", bad)
		}
	case coord.Reply:
		s.reply(a)
	case coord.Mismatch:
		if t := s.txns[a.Op.Txn]; t != nil && t.survey {
			s.failf("contract: Mismatch of r%d on %v, a survey", a.R, a.Op)
		}
		if !s.fakes[a.R].faults.faulty() {
			s.res.CorrectAccused++
		}
	case coord.Surveyed:
		s.surveyed(a)
	case coord.MarkDown:
		if f := s.fakes[a.R]; !f.faults.faulty() && !f.down {
			s.res.CorrectDown++
			if strings.Contains(a.Why, "differs from the agreed one") {
				// A correct replica answers every write as the others
				// do unless its state already differs: something let
				// it commit otherwise than they did.
				s.failf("r%d (correct) taken out for a write answered otherwise: %s", a.R, a.Why)
			}
		}
		s.fakes[a.R].crash()
		s.checkApplied(a.R)
	case coord.Finished:
		s.finished(a.Txn)
	case coord.Retire:
		s.fakes[a.R].retired = true
	case coord.Log:
		if !s.wal {
			s.failf("contract: Log of t%d without a write-ahead log", a.Txn)
		}
		if b := s.base + a.Barrier; b != s.nextLog {
			s.failf("contract: Log of t%d with barrier %d (log barrier %d), want %d (barrier order)", a.Txn, a.Barrier, b, s.nextLog-s.base)
		}
		if s.logBroken {
			s.failf("contract: Log of t%d after the log failed", a.Txn)
		}
		b := s.nextLog
		s.nextLog++
		s.barrierOf[a.Txn] = b
		s.recs[b] = s.logRecord(a.Txn, b)
		refused := s.logRefuse > 0 && s.logRNG.Float64() < s.logRefuse
		s.logQ = append(s.logQ, logEntry{txn: a.Txn, barrier: b, refused: refused})
	}
}

func (s *sim) send(a coord.Send) {
	if s.wal && a.Op.Kind == coord.OpCommit {
		if b, ok := s.barrierOf[a.Op.Txn]; !ok || !s.durable[b] {
			s.failf("contract: COMMIT of t%d sent to r%d without its log record durable", a.Op.Txn, a.R)
		}
	}
	t := s.txns[a.Op.Txn]
	if t == nil {
		s.failf("contract: send of %v, a transaction never begun", a.Op)
		return
	}
	if bad := s.fakes[a.R].send(a.Op, a.Try, t.sent); bad != "" {
		s.failf("contract: %s", bad)
	}
	if a.Op.Kind == coord.OpCommit && !t.decided {
		s.decide(t)
	}
}

func (s *sim) finished(id coord.TxnID) {
	t := s.txns[id]
	switch {
	case t == nil:
		s.failf("contract: Finished t%d, a transaction never begun", id)
	case t.finished:
		s.failf("contract: Finished t%d twice", id)
	case !t.ended:
		s.failf("contract: Finished t%d before the client ended it", id)
	}
	if s.err != nil {
		return
	}
	t.finished = true
	s.finishedTxns++
	s.progressTick = s.tick
	if b, ok := s.barrierOf[id]; !ok || !s.durable[b] || t.blockDDL {
		// It ended without a commit, or (DDL in a block) the replicas
		// that commit DDL as they run it have all of it.
		s.dropIntent(id)
	}
	for _, f := range s.fakes {
		for seq := range t.sent {
			delete(f.answers, coord.Op{Txn: id, Kind: coord.OpStmt, Seq: seq})
		}
		delete(f.answers, coord.Op{Txn: id, Kind: coord.OpCommit})
		delete(f.answers, coord.Op{Txn: id, Kind: coord.OpRollback})
	}
}

// surveyed checks the verdict on a survey: every replica it took has
// answered every statement (in its latest attempt), and correct replicas
// gave the same answers, since the survey is scheduled so that all of them
// read the same logical state. That holds when the primary's concurrency
// control is sound; a primary that never blocks (figure 5) lets a writer
// overtake the survey, so runs with one are not checked.
func (s *sim) surveyed(a coord.Surveyed) {
	t := s.txns[a.Txn]
	if t == nil || !t.survey {
		s.failf("contract: Surveyed of t%d, not a survey", a.Txn)
		return
	}
	if t.client.op.Kind != coord.OpCommit || !t.client.waiting {
		s.failf("contract: Surveyed of t%d before its COMMIT", a.Txn)
		return
	}
	ref := -1
	for r, took := range a.Took {
		if !took {
			continue
		}
		f := s.fakes[r]
		for seq := range t.sent {
			if _, ok := f.answers[coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq}]; !ok {
				s.failf("contract: Surveyed t%d took r%d, which has not answered statement %d", t.id, r, seq)
				return
			}
		}
		if f.faults.faulty() || f.down || s.brokenCC() {
			continue
		}
		if ref < 0 {
			ref = r
			continue
		}
		for seq := range t.sent {
			op := coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq}
			x, y := s.fakes[ref].answers[op], f.answers[op]
			if x.vote != y.vote {
				s.failf("survey t%d statement %d %v: correct replicas r%d and r%d answered %d and %d: they read different states",
					t.id, seq, t.stmts[seq], ref, r, x.val, y.val)
				return
			}
		}
	}
	s.compared(t, a)
	n, all := 0, true
	for r, took := range a.Took {
		if took {
			n++
			all = all && !s.fakes[r].faults.faulty()
		}
	}
	switch {
	case a.Unanimous && n < s.setup.f+1:
		s.failf("survey t%d: unanimous with %d replicas, fewer than f+1", t.id, n)
	case !a.Unanimous && n >= s.setup.f+1 && all && !s.brokenCC():
		s.failf("survey t%d: only correct replicas took part and agreed, yet it is not unanimous", t.id)
	}
}

// compared checks a survey as compare-and-repair reads it: the replicas
// that took part, grouped by their answers, and the group f+1 of them
// agree on (coord.Agreement, the rule internal/repair decides with). A
// survey the core calls unanimous must have one group: a faulty replica
// whose data differs where the survey read (one that committed other
// values than it answered with) is seen. With an agreement, no correct
// replica may be outside it: the repair would overwrite a correct one.
func (s *sim) compared(t *txn, a coord.Surveyed) {
	groups := map[string][]int{}
	for r, took := range a.Took {
		if !took {
			continue
		}
		var key []byte
		for seq := range t.sent {
			v := s.fakes[r].answers[coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq}].vote
			key = append(append(append(key, v.Digest[:]...), v.Code...), 0)
		}
		groups[string(key)] = append(groups[string(key)], r)
	}
	if a.Unanimous && len(groups) > 1 {
		var ways [][]int
		for _, rs := range groups {
			ways = append(ways, rs)
		}
		slices.SortFunc(ways, func(a, b []int) int { return a[0] - b[0] })
		s.failf("survey t%d: unanimous, but the replicas that took part answered in %d different ways: %v", t.id, len(groups), ways)
		return
	}
	if s.brokenCC() {
		return
	}
	agreed, ok := coord.Agreement(groups, s.setup.f)
	if !ok {
		return
	}
	for key, rs := range groups {
		if key == agreed {
			continue
		}
		for _, r := range rs {
			if f := s.fakes[r]; !f.faults.faulty() && !f.down {
				s.failf("survey t%d: r%d (correct) differs from the %d replicas that agree %v: compare-and-repair would blame it", t.id, r, len(groups[agreed]), groups[agreed])
				return
			}
			s.res.SurveyFound++
		}
	}
}

// brokenCC reports whether some replica's concurrency control never
// blocks.
func (s *sim) brokenCC() bool {
	for _, f := range s.fakes {
		if f.faults.noLocks {
			return true
		}
	}
	return false
}

// reply hands a Reply to the client waiting for it.
func (s *sim) reply(r coord.Reply) {
	t := s.txns[r.Op.Txn]
	if t == nil || !t.client.waiting || t.client.op != r.Op {
		s.failf("contract: reply to %v, which no client is waiting for", r.Op)
		return
	}
	val, code, ok := s.outcome(r)
	if !ok {
		return
	}
	c := t.client
	c.waiting = false
	s.progressTick = s.tick
	if code != "" && code != pgerr.TransactionResolutionUnknown && (r.Fail == nil || !errors.Is(r.Fail, coord.ErrCommitsAnyway)) {
		// The client hears of a failure: the transaction never
		// commits, and its intent is resolved before it hears (the
		// shell drops it first).
		s.dropIntent(t.id)
	}
	switch r.Op.Kind {
	case coord.OpStmt:
		if code != "" {
			// Not voted (docs/DESIGN.md, voteError): a DDL error while
			// some replica commits DDL as it runs it, which would commit
			// DDL the primary refused.
			ddlUnvoted := t.stmts[r.Op.Seq].kind == stmtDDL && slices.Contains(s.setup.ddlCommits, true)
			if r.Fail == nil && !t.survey && statementError(code) && !ddlUnvoted {
				s.checkBacked(r, code)
			}
			if rb := t.recoverAt(r.Op.Seq); code == pgerr.CheckViolation && r.Fail == nil && rb >= 0 {
				// The client goes on with its ROLLBACK TO: what it
				// meant to run in between is dropped, unsent.
				t.src = slices.Delete(t.src, r.Op.Seq+1, rb)
				t.stmts = slices.Delete(t.stmts, r.Op.Seq+1, rb)
				t.got = append(t.got, checkViolation)
				return
			}
			t.mustRollback = true
			return
		}
		t.got = append(t.got, val)
	case coord.OpCommit:
		c.cur = nil
		switch {
		case r.Fail != nil && errors.Is(r.Fail, coord.ErrCommitsAnyway):
			if !t.cancelled {
				s.failf("contract: t%d's COMMIT was answered as cancelled, but its client never cancelled", t.id)
				return
			}
			s.res.Commits++
			t.commitsAnyway = true
			s.catalogAfterCommit(t)
		case code != "":
			s.res.Refused++
			t.refused = true
			s.unlockDDL(t.id)
			t.unknown = code == pgerr.TransactionResolutionUnknown
		default:
			s.res.Commits++
			t.acked = true
			if b, ok := s.barrierOf[t.id]; s.wal && (!ok || !s.durable[b]) {
				s.failf("t%d: COMMIT acknowledged without its log record durable", t.id)
				return
			}
			if !t.survey {
				s.checkCommitBacked(t)
			}
			s.writeCatalog(t)
		}
		s.replay()
	case coord.OpRollback:
		c.cur = nil
		s.res.RolledBack++
		s.unlockDDL(t.id)
	}
}

// statementError reports whether code is an error a statement gives for
// its own reasons, which a replica gives only as f+1 do (see checkBacked);
// not a concurrency failure, a cancel, or 25P02 after one.
func statementError(code string) bool {
	switch code {
	case pgerr.DeadlockDetected, pgerr.SerializationFailure, pgerr.LockNotAvailable,
		pgerr.QueryCanceled, pgerr.InFailedSQLTransaction:
		return false
	}
	return !pgerr.IsConnection(&pgerr.Error{Code: code})
}

// checkBacked checks that an error a client gets from a replica for a
// statement's own reasons was given by f+1 replicas (issue 14, item 11):
// a faulty primary must not fail statements at will. (Surveys are not
// voted: their answers are collected, and a failed one changes nothing.)
func (s *sim) checkBacked(r coord.Reply, code string) {
	n := 0
	for _, f := range s.fakes {
		if rec, ok := f.answers[r.Op]; ok && rec.vote.Code == code {
			n++
		}
	}
	if n < s.setup.f+1 {
		s.failf("%v: the client got %s from r%d, which only %d replicas gave (f+1 = %d needed)", r.Op, code, r.From, n, s.setup.f+1)
	}
}

// checkCommitBacked checks, when t's COMMIT is acknowledged, that every
// answer its client got was given by f+1 replicas (the promise: an
// acknowledged answer is backed by f+1 replicas, so by at least one
// correct one, whatever a faulty one stored afterwards).
func (s *sim) checkCommitBacked(t *txn) {
	for seq, got := range t.got {
		op := coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq}
		want := voteFor(got)
		if got == checkViolation {
			want = coord.Vote{Code: pgerr.CheckViolation}
		}
		n := 0
		for _, f := range s.fakes {
			if rec, ok := f.answers[op]; ok && rec.vote == want {
				n++
			}
		}
		if n < s.setup.f+1 {
			s.failf("t%d acknowledged: its statement %d answer %d was given by %d replicas, fewer than f+1 = %d", t.id, seq, got, n, s.setup.f+1)
			return
		}
	}
}

// outcome turns a Reply into what the client receives: a value, or an
// error's SQLSTATE.
func (s *sim) outcome(r coord.Reply) (val int, code string, ok bool) {
	switch {
	case r.Fail != nil:
		if r.Fail.Code == "" {
			s.failf("contract: reply to %v fails without a SQLSTATE", r.Op)
			return 0, "", false
		}
		return 0, r.Fail.Code, true
	case r.From < 0:
		if r.Op.Kind != coord.OpRollback {
			s.failf("contract: reply to %v from no replica", r.Op)
			return 0, "", false
		}
		return 0, "", true
	case int(r.From) >= len(s.fakes):
		s.failf("contract: reply to %v from r%d, which does not exist", r.Op, r.From)
		return 0, "", false
	}
	rec, ok := s.fakes[r.From].answers[r.Op]
	if !ok {
		s.failf("contract: reply to %v from r%d, which has not answered it", r.Op, r.From)
		return 0, "", false
	}
	return rec.val, rec.vote.Code, true
}

// replay applies to the reference store the transactions whose commits
// were decided, in decision order, as far as their clients know the
// outcome, and compares the answers with what the clients got (check 1).
//
// The decision order is the order in which the core first sent each
// transaction's COMMIT to a replica. It is not always the order of the
// COMMIT replies: in CBS a reply waits for f+1 replicas to have committed,
// so a slow answer can delay the reply of a transaction decided earlier
// than one already acknowledged (concurrent transactions, so clients
// cannot tell).
func (s *sim) replay() {
	for s.err == nil && s.replayed < len(s.order) {
		t := s.order[s.replayed]
		switch {
		case t.acked, t.commitsAnyway, t.crashCommitted:
			s.checkCommit(t)
		case t.refused && t.unknown && s.overBudget():
			// More than f replicas out: the outcome is unknown, as the
			// client was told; it committed where it was sent.
			s.checkCommit(t)
		case t.refused:
			s.failf("t%d: COMMIT was sent to replicas but the client was told it failed (the outcome is unknown)", t.id)
		default:
			return
		}
		s.replayed++
	}
}

// checkCommit replays an acknowledged transaction on the reference store
// and compares the answers with what its client got.
func (s *sim) checkCommit(t *txn) {
	if !t.decided {
		s.failf("t%d: COMMIT acknowledged but never sent to a replica", t.id)
		return
	}
	if len(t.got) != len(t.stmts) && !(t.completed && len(t.got) < len(t.stmts)) {
		s.failf("t%d committed with %d of its %d statements answered", t.id, len(t.got), len(t.stmts))
		return
	}
	want := s.ref.apply(t.stmts)
	for i, q := range t.stmts[:len(t.got)] {
		if t.got[i] != want[i] {
			s.failf("t%d (commit #%d in decision order) statement %d %v: the client got %d, the serial replay gives %d",
				t.id, s.replayed+1, i, q, t.got[i], want[i])
			return
		}
	}
}

// checkEnd compares every correct replica still in use with the reference
// store once all work drained (check 2).
func (s *sim) checkEnd() {
	s.replay() // transactions that commit although their clients gave up
	if s.err != nil {
		return
	}
	if s.replayed < len(s.order) {
		s.failf("t%d: COMMIT decided but its client never told the outcome", s.order[s.replayed].id)
		return
	}
	for _, f := range s.fakes {
		if (f.faults.faulty() && !(f.rejoined && f.crashOnly())) || f.down || f.joining {
			continue
		}
		if s.res.OverBudget && (len(f.open) > 0 || len(f.inflight) > 0) {
			continue // stopped mid-way: only replicas at rest compare
		}
		if len(f.open) > 0 {
			s.failf("r%d (correct) still has %d open transactions after the run", f.id, len(f.open))
			return
		}
		if !slices.Equal(f.committed, s.ref) {
			s.failf("r%d (correct) ends with %v, the serial replay with %v", f.id, f.committed, s.ref)
			return
		}
	}
}

// status says where transaction id stands: what its client did last, and
// where the core decided its commit among the others.
func (s *sim) status(id coord.TxnID) string {
	t := s.txns[id]
	if t == nil {
		return "?"
	}
	st := "running"
	switch {
	case t.acked:
		st = "committed"
	case t.refused:
		st = "commit refused"
	case t.ended && t.client.op.Kind == coord.OpCommit && t.client.cur == t:
		st = "COMMIT asked"
	case t.ended:
		st = "rolled back"
	}
	if t.decided {
		st += fmt.Sprintf(", decided #%d", slices.Index(s.order, t)+1)
	}
	return st
}

// Failure is a failed check, with what is needed to reproduce it.
type Failure struct {
	Seed     int64
	Mode     coord.Mode
	Scenario string
	Msg      string
	State    string // the fakes and clients when it failed
	Trace    string // the last events and actions
}

func (e *Failure) Error() string {
	return fmt.Sprintf("seed %d mode %v: %s\nreplay: %s\n%s\nlast events:\n%s",
		e.Seed, e.Mode, e.Msg, ReplayCommand(e.Mode, e.Scenario, e.Seed), e.State, e.Trace)
}

// ReplayCommand is the command line that reruns one seed verbosely.
func ReplayCommand(m coord.Mode, scenario string, seed int64) string {
	sc := ""
	if scenario != "" {
		sc = " -sim.scenario=" + scenario
	}
	return fmt.Sprintf("go test ./internal/coord/sim -run 'TestSim$' -sim.modes=%v%s -sim.seed=%d -v", m, sc, seed)
}

func (s *sim) failf(format string, args ...any) {
	if s.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	s.logf("FAIL: %s", msg)
	s.err = &Failure{Seed: s.opt.Seed, Mode: s.opt.Mode, Scenario: s.opt.Scenario, Msg: msg, State: s.describe(), Trace: s.ring.String(s)}
}

func (s *sim) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "setup: %v\nstep %d tick %d (last progress at tick %d)\n", s.setup, s.steps, s.tick, s.progressTick)
	for _, f := range s.fakes {
		b.WriteString("  " + f.describe(s.status) + "\n")
	}
	for _, c := range s.clients {
		if c.cur != nil {
			fmt.Fprintf(&b, "  client %d: t%d %v sent=%d waiting=%v for %v\n", c.id, c.cur.id, c.cur.stmts, c.cur.sent, c.waiting, c.op)
		}
	}
	var unfinished []coord.TxnID
	for id, t := range s.txns {
		if !t.finished {
			unfinished = append(unfinished, id)
		}
	}
	slices.Sort(unfinished)
	if len(unfinished) > 20 {
		unfinished = unfinished[:20]
	}
	fmt.Fprintf(&b, "  not finished by the core (first 20): %v\n", unfinished)
	fmt.Fprintf(&b, "  reference store: %v", s.ref)
	return b.String()
}
