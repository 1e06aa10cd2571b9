// Package cluster is the shell around the coordinator: it owns the replica
// managers, feeds the coordinator the client's operations and the
// replicas' answers, and carries out the actions the coordinator returns.
//
// All coordinator calls happen under one mutex, and the actions of a Step
// are carried out before the mutex is released: sending a task to a
// manager and handing a reply to a waiting session never block, so the
// critical section stays short and actions keep the coordinator's order.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/errform"
	"github.com/shepherd-db/shepherd/internal/metrics"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// Replica is one configured replica.
type Replica struct {
	Name   string
	Engine driver.Engine
	// Concurrent, when set, overrides coord.DefaultConcurrent for the
	// replica as a CBS secondary.
	Concurrent *bool
}

// Options configure a cluster.
type Options struct {
	Mode coord.Mode
	F    int
	Log  *slog.Logger
	// WAL, in CBS and SS, is the write-ahead log: a decided transaction is
	// appended, durably, before any replica is sent its COMMIT. nil: none.
	// The local log (*wal.Log) or a replicated one (*ha.Log): see WAL.
	WAL WAL
	// Base is the log barrier of this run's first commit (the core counts
	// from 0): above every barrier in the log and in the replicas' log
	// tables.
	Base uint64
	// PrimaryTimeout is how long the primary may leave work unanswered,
	// answering nothing, before it is replaced (CBS, SS); 0: never.
	PrimaryTimeout time.Duration
	// OpTimeout is how long the primary may leave one statement
	// unanswered while it answers the rest (CBS, SS; coord.Config.OpTicks);
	// 0: never, the default, since a statement may run or wait for a lock
	// that long. It must exceed the engines' statement and lock timeouts.
	OpTimeout time.Duration
	// Cache translates logged statements when a replica that was taken
	// out catches up (with WAL).
	Cache *sqlan.Cache
	// DigestRows: a secondary keeps only the digest of an answer of more
	// rows than this (CBS and SS); -1 keeps every answer whole.
	DigestRows int
	// AnswerMemory bounds, in bytes, the rows of one statement's answer
	// a replica's answer keeps in memory (answer.RowSize); 0: no bound.
	// Past it, the rows of an answer that goes to the client as it is
	// (WithSpill) are spilled to a file in SpillDir; any other answer
	// fails with 53200. Every row is voted on either way.
	AnswerMemory int64
	// SpillDir is where answers are spilled; "" is the system's
	// temporary directory.
	SpillDir string
	// Tick is the period of the coordinator's clock (all modes but
	// passthrough): in CBS a secondary op outstanding for
	// coord.DefaultStallTicks ticks counts as blocked, and a survey waits
	// coord.DefaultSurveyTicks for a replica. 0 means DefaultTick.
	Tick time.Duration
	// ProbeInterval and ProbeTimeout: how often each replica's engine is
	// probed, and how long it has to answer before it is taken out (CBS
	// and SS; see liveness.go). 0 means a default that fits
	// PrimaryTimeout; ProbeInterval < 0 turns probes off.
	ProbeInterval, ProbeTimeout time.Duration
	// RetiredFile is where the retired replicas are recorded (see
	// Retirement), so that a restart keeps them out; "": in memory only.
	// Retired are those it held at start (LoadRetired), by name: they
	// start out, and stay out until Reinstate.
	RetiredFile string
	Retired     map[string]Retirement
	// IntentFile is where the DDL intents are recorded (see Intent), with
	// WAL and a replica that commits DDL as it runs it; "": none (tests
	// that do not restart).
	IntentFile string
	// MaxTxnBytes bounds, with WAL, the writes a transaction holds until
	// its end (see Txn.hold); 0 means wal.MaxRecordBytes.
	MaxTxnBytes int
	// Metrics observes statement and commit latencies; nil: none.
	Metrics *metrics.Metrics
	// MaxTransactions bounds the client transactions live at once, and
	// so the engine connections they hold on each replica; one more
	// waits in Begin for a slot (see admission). 0: no bound.
	MaxTransactions int
}

// DefaultTick is Options.Tick when left 0.
const DefaultTick = 10 * time.Millisecond

// Cluster runs transactions on the replicas under the coordinator's rules.
// It is safe for concurrent use by many sessions.
type Cluster struct {
	opts     Options
	log      *slog.Logger
	managers []*replica.Manager
	status   []replicaStatus
	nextTxn  atomic.Uint64
	// primary is the replica clients are answered from first (CBS and
	// SS), -1 in the other modes; it changes with the view.
	primary atomic.Int32
	stop    chan struct{}
	ticker  sync.WaitGroup // the clock and the log waiter
	logq    logQueue
	views   views
	trimmed uint64 // log-table rows below it are deleted (awaitLog only)
	// dialects are the distinct dialects the replicas speak.
	dialects []driver.Dialect
	trimming sync.Mutex // held while a trim runs
	durable  durable
	probing  probing
	intents  intents
	admit    admission

	// viewChanges counts NewPrimary actions (the views' history may be
	// bounded; this is not).
	viewChanges atomic.Int64
	// decisions times the decided transactions, for the replicas' lag
	// in seconds (metrics.go); c.mu.
	decisions decisionClock
	// cancelHandled, set by tests only, is called once the cancel of an
	// operation was passed on to the replicas (see Txn.submit).
	cancelHandled func(coord.Op)
	// beforeInline, set by tests only, is called when the session's
	// goroutine is about to run tasks of an inline transaction (see
	// runInlined), c.mu not held.
	beforeInline func()

	mu struct {
		sync.Mutex
		core *coord.Coordinator
		txns map[coord.TxnID]*Txn
		// idle is closed while no transaction is live anywhere; busy
		// is closed while some transaction has sent work to replicas;
		// answered is closed and made nil when a replica answers or is
		// taken out; nil while nobody waits (answeredLocked makes it),
		// which saves a channel per answer.
		idle     chan struct{}
		busy     chan struct{}
		answered chan struct{}
		// recovering marks the replicas taken out whose return is
		// being tried; retired those taken out by TakeDown, which stay
		// out.
		recovering map[coord.ReplicaID]bool
		retired    map[coord.ReplicaID]bool
		// retirements are the entries of Options.RetiredFile, by name
		// (those of replicas no longer configured are kept).
		retirements map[string]Retirement
	}
}

type replicaStatus struct {
	mismatches atomic.Int64
	reruns     atomic.Int64
	digested   atomic.Int64
	commits    atomic.Int64
	down       atomic.Bool
	suspect    atomic.Bool
	// failure, when set, says why the replica cannot come back by itself
	// (see catchUpFailed).
	failure atomic.Pointer[string]
	// retired, when set, says why the replica was retired (see
	// Retirement).
	retired atomic.Pointer[string]
}

// New returns a cluster over replicas (already opened). The caller checks
// the configuration (replica count for the mode and f).
func New(opts Options, replicas []Replica) *Cluster {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	c := &Cluster{opts: opts, log: opts.Log, status: make([]replicaStatus, len(replicas)), stop: make(chan struct{})}
	c.logq.more = make(chan struct{}, 1)
	c.admit.limit = max(opts.MaxTransactions, 0)
	cfg := coord.Config{Mode: opts.Mode, N: len(replicas), F: opts.F, PrimaryTimeout: -1, Ahead: true}
	if opts.PrimaryTimeout > 0 {
		tick := opts.Tick
		if tick <= 0 {
			tick = DefaultTick
		}
		cfg.PrimaryTimeout = max(1, int(opts.PrimaryTimeout/tick))
	}
	if opts.OpTimeout > 0 {
		tick := opts.Tick
		if tick <= 0 {
			tick = DefaultTick
		}
		cfg.OpTicks = max(1, int(opts.OpTimeout/tick))
	}
	if opts.WAL != nil && (opts.Mode == coord.CBS || opts.Mode == coord.SS) {
		cfg.Log = true
		if opts.Base == 0 {
			opts.Base = 1 // 0 means "no barrier" in a replica task
		}
		c.opts.Base = opts.Base
		c.durable.next = opts.Base // what came before this run is on disk
		if opts.IntentFile != "" {
			// Start-up resolved and emptied it; kept if not, so that
			// the next write does not drop what it holds.
			if list, err := LoadIntents(opts.IntentFile); err == nil {
				c.intents.list = list
			}
		}
	} else {
		c.opts.WAL = nil
	}
	for _, r := range replicas {
		cfg.Classes = append(cfg.Classes, r.Engine.Class())
		conc := coord.DefaultConcurrent(r.Engine.Class())
		if r.Concurrent != nil {
			conc = *r.Concurrent
		}
		cfg.Concurrent = append(cfg.Concurrent, conc)
		// MariaDB and MySQL commit DDL as they run it.
		cfg.DDLCommits = append(cfg.DDLCommits, r.Engine.Dialect() == driver.MySQL)
	}
	c.mu.core = coord.New(cfg)
	c.primary.Store(int32(c.mu.core.Primary()))
	if p := c.mu.core.Primary(); p >= 0 {
		c.views.add(View{Number: 0, Primary: replicas[p].Name, Since: time.Now(), Why: "start"})
	}
	c.mu.txns = map[coord.TxnID]*Txn{}
	c.mu.recovering = map[coord.ReplicaID]bool{}
	c.mu.retired = map[coord.ReplicaID]bool{}
	c.mu.retirements = map[string]Retirement{}
	for name, r := range opts.Retired {
		c.mu.retirements[name] = r
	}
	c.durable.more = make(chan struct{})
	c.mu.idle = make(chan struct{})
	close(c.mu.idle)
	c.mu.busy = make(chan struct{})
	for i, r := range replicas {
		c.managers = append(c.managers, replica.New(coord.ReplicaID(i), r.Name, r.Engine, c.log, c.onResult))
		if d := r.Engine.Dialect(); !slices.Contains(c.dialects, d) {
			c.dialects = append(c.dialects, d)
		}
	}
	if opts.Mode != coord.Passthrough {
		// CBS and SS: stalls and a silent primary; serial: how long a
		// survey waits for a replica.
		period := opts.Tick
		if period <= 0 {
			period = DefaultTick
		}
		c.ticker.Add(1)
		go c.tick(period)
	}
	if c.opts.WAL != nil {
		c.ticker.Add(1)
		go c.awaitLog()
	}
	c.startProbes()
	for i, m := range c.managers {
		if r, ok := opts.Retired[m.Name()]; ok {
			// Retired in an earlier run: out from the start, and not
			// brought back by recovery (it holds what the others lack).
			why := r.Why
			c.status[i].retired.Store(&why)
			c.mu.Lock()
			c.mu.retired[coord.ReplicaID(i)] = true
			c.mu.core.Step(coord.Down{R: coord.ReplicaID(i)})
			c.applyLocked()
			c.mu.Unlock()
			c.log.Error("replica retired in an earlier run stays out: it holds a change the other replicas rolled back; "+
				"rebuild it from a replica in use, then run REJOIN REPLICA on the admin console",
				"replica", m.Name(), "why", r.Why, "since", r.Since)
		}
	}
	return c
}

// tick is the coordinator's clock: it lets the core notice a secondary
// that stopped making progress.
func (c *Cluster) tick(period time.Duration) {
	defer c.ticker.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		if len(c.mu.txns) > 0 {
			c.mu.core.Step(coord.Tick{})
			c.applyLocked()
		}
		c.mu.Unlock()
	}
}

// Close shuts the managers down; transactions still open fail.
func (c *Cluster) Close() {
	close(c.stop)
	c.ticker.Wait()
	for _, m := range c.managers {
		m.Close()
	}
}

// Idle waits until every replica that is up has finished every
// transaction begun so far (committed or rolled back), or ctx ends. A
// replica may still be finishing work after the client was answered: f+1
// replicas suffice for that.
func (c *Cluster) Idle(ctx context.Context) error {
	c.mu.Lock()
	idle := c.mu.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Busy waits until some transaction has sent work to the replicas, or ctx
// ends (for tests that must act while a statement runs).
func (c *Cluster) Busy(ctx context.Context) error {
	c.mu.Lock()
	busy := c.mu.busy
	c.mu.Unlock()
	select {
	case <-busy:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Txn is one client transaction. Its methods are called by one session
// goroutine at a time.
type Txn struct {
	c    *Cluster
	id   coord.TxnID
	opts driver.TxOptions
	seq  int
	done bool
	// reply carries each submit's outcome (replyLocked): one submit
	// waits at a time, and it takes the one reply of its op before it
	// returns, so one channel serves them all. It comes from replies and
	// goes back there when t ends (see putReply).
	reply chan outcome
	// held counts the bytes of the writes t holds (see hold).
	held int
	// single marks a transaction of one statement that replicas may run in
	// their own autocommit.
	single bool
	// inline marks a single transaction whose tasks the session's
	// goroutine runs itself (replica.Manager.Run), in passthrough: the
	// answer is taken where it is waited for, without a hand-off to a
	// worker goroutine and back. stepping (guarded by c.mu) is set while
	// the session's goroutine steps the core for t: what the step sends
	// to a replica then goes to inlined (guarded by c.mu, with room for
	// passthrough's one replica in inlinedBuf), and the session's
	// goroutine runs it once it let go of c.mu (runInlined).
	inline     bool
	stepping   bool
	inlined    []inlineTask
	inlinedBuf [1]inlineTask
	// autocommit: the client's statement in autocommit (ExecSingle), not
	// a block; deferAt (-1: none; guarded by c.mu) is the first statement
	// deferred on the replicas that commit DDL as they run it
	// (coord.Submit.Defer): its DDL inside a block.
	autocommit bool
	deferAt    int

	// admitted: t holds a slot of Options.MaxTransactions, given back
	// when the coordinator is done with it (guarded by c.mu).
	admitted bool
	// singleSlot: its slot was taken for a statement in autocommit
	// (BeginSingle).
	singleSlot bool
	// survey marks the cluster's own compare and repair transactions
	// (see Survey); surveyed (guarded by c.mu) is the coordinator's
	// verdict on one.
	survey   bool
	surveyed *coord.Surveyed

	// Guarded by c.mu:
	barrier uint64 // in the write-ahead log, once logged
	// durable: its log record is on disk (it commits, whatever comes);
	// commits counts replicas that reported its COMMIT done; finished:
	// the coordinator is done with it; afterCommit is AfterCommit's.
	durable  bool
	commits  int
	finished bool
	// cancelled: a client's cancel was sent to the replicas (serial
	// mode; see serialCommit).
	cancelled bool
	// intent: a DDL intent was recorded for it (see Intent); only the
	// session's goroutine touches it.
	intent      bool
	afterCommit func(barrier uint64) error
	afterEnd    func() // AfterEnd's
	stmts       []stmtCall
	// stmtsBuf holds the first statement: an autocommit statement's
	// transaction takes no allocation for it.
	stmtsBuf [1]stmtCall
	// waitOp is the op whose reply a submit waits for, while waits: one
	// at a time.
	waitOp  coord.Op
	waits   bool
	answers answerSet
}

// inlineTask is a task a session's goroutine runs itself (Txn.inline).
type inlineTask struct {
	r    coord.ReplicaID
	task replica.Task
	// aborts is the manager's Aborts when the core sent the task (c.mu
	// held, as when a replica taken out aborts its attempts): Run's since.
	aborts uint64
}

// replies are reply channels of ended transactions, for the next ones:
// a channel per transaction is an allocation per autocommit statement.
var replies = sync.Pool{New: func() any { return make(chan outcome, 1) }}

// putReply gives t's reply channel back once t is over. Every reply sent
// on it was taken by the submit that waited for it (replyLocked sends
// only to a waiting submit), so it is empty.
func (t *Txn) putReply() {
	if t.reply != nil {
		replies.Put(t.reply)
		t.reply = nil
	}
}

// numDialects bounds driver.Dialect values (1 to 4), for arrays indexed
// by dialect.
const numDialects = 5

type stmtCall struct {
	st   *sqlan.Stmt
	args []driver.Arg
	// probe replaces st and args in a survey.
	probe *Probe
	// queries are the statement written for each dialect the replicas
	// speak, done before taking the cluster's lock (see Txn.submit).
	queries [numDialects]driver.Query
	written [numDialects]bool
	// spill: the answer goes to the client as it is, and may be spilled
	// to disk past Options.AnswerMemory (WithSpill).
	spill bool
}

type spillKey struct{}

// WithSpill returns ctx saying that the answer of the statement run with
// it goes to the client as it is (through pgwire): its rows may come
// back partly spilled to disk (answer.Answer.More) rather than fail past
// Options.AnswerMemory. A caller that reads the rows itself must not
// pass it on.
func WithSpill(ctx context.Context) context.Context {
	if s, ok := ctx.(*spillCtx); ok && s.spill {
		return ctx
	}
	return &spillCtx{ctx, true}
}

// WithoutSpill returns ctx with WithSpill undone: the context WithSpill
// wrapped, when it can, rather than a new one.
func WithoutSpill(ctx context.Context) context.Context {
	if s, ok := ctx.(*spillCtx); ok {
		if !s.spill {
			return ctx
		}
		if !Spills(s.Context) {
			return s.Context
		}
	}
	return &spillCtx{ctx, false}
}

// spillCtx is a context with the mark of WithSpill or WithoutSpill. It is
// a type of its own, not context.WithValue's, so that WithoutSpill can
// unwrap it: every statement to the client passes through both, and
// each wrapping is an allocation.
type spillCtx struct {
	context.Context
	spill bool
}

func (c *spillCtx) Value(key any) any {
	if _, ok := key.(spillKey); ok {
		return c.spill
	}
	return c.Context.Value(key)
}

// Spills reports whether ctx came from WithSpill.
func Spills(ctx context.Context) bool {
	v, _ := ctx.Value(spillKey{}).(bool)
	return v
}

type outcome struct {
	answer *answer.Answer
	err    *pgerr.Error
}

// Begin starts a transaction. Nothing reaches the replicas until its first
// statement. While Options.MaxTransactions transactions are live, it
// waits for one to end, in turn (see admission); ctx ending first gives
// 57014 (or ctx's cause, when a PostgreSQL error: statement_timeout),
// Close 57P01, and no transaction. The caller ends the transaction it got (Commit or
// Rollback), which gives the slot back once every replica is done with
// it.
func (c *Cluster) Begin(ctx context.Context, opts driver.TxOptions) (*Txn, error) {
	if err := c.admit.acquire(ctx, c.stop, false); err != nil {
		return nil, err
	}
	return c.begin(opts, false), nil
}

// BeginSingle is Begin for a statement in autocommit, the transaction's
// only one: it may take the slots of Options.MaxTransactions kept from
// transaction blocks (see admission), so that it does not wait behind
// blocks whose clients are idle.
func (c *Cluster) BeginSingle(ctx context.Context, opts driver.TxOptions) (*Txn, error) {
	if err := c.admit.acquire(ctx, c.stop, true); err != nil {
		return nil, err
	}
	return c.begin(opts, true), nil
}

// BeginNow is Begin without the wait: the transaction takes a slot of
// Options.MaxTransactions even past the bound. It is for a session that
// holds a lock of shepherd's own (advisory, DDL) outside a transaction:
// others may wait for that lock while holding their slots, and were it
// to queue behind them no one would go on.
func (c *Cluster) BeginNow(opts driver.TxOptions) *Txn {
	c.admit.force()
	return c.begin(opts, false)
}

func (c *Cluster) begin(opts driver.TxOptions, single bool) *Txn {
	t := &Txn{c: c, id: coord.TxnID(c.nextTxn.Add(1)), opts: opts, deferAt: -1, admitted: true, singleSlot: single}
	c.mu.Lock()
	if len(c.mu.txns) == 0 {
		c.mu.idle = make(chan struct{})
	}
	c.mu.txns[t.id] = t
	c.mu.core.Step(coord.Begin{Txn: t.id})
	c.applyLocked()
	c.mu.Unlock()
	return t
}

// Exec runs one statement of the transaction on the replicas and returns
// the answer the coordinator chose. When ctx ends first, the statement is
// cancelled on every replica and Exec returns what they then agree on
// (normally 57014).
//
// A statement some replica could not take (see driver.Sizer) is refused
// with 54000 before any replica runs it; the transaction is left to the
// caller to fail, as after any error.
func (t *Txn) Exec(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	call := stmtCall{st: st, args: args, spill: Spills(ctx)}
	t.c.write(&call)
	if err := t.c.oversize(&call); err != nil {
		return nil, err
	}
	if err := t.hold(&call); err != nil {
		return nil, err
	}
	op := coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: t.seq}
	t.seq++
	start := time.Now()
	a, err := t.submit(ctx, op, call)
	t.c.opts.Metrics.Statement(time.Since(start), err)
	if err != nil {
		// The answer chosen may be an engine's error in its own words;
		// the client gets PostgreSQL's (the vote compared SQLSTATEs).
		err = errform.Rewrite(err, st.Tree(), st.Schema(), args)
	}
	return a, err
}

// write writes call's statement for each dialect the replicas speak.
func (c *Cluster) write(call *stmtCall) {
	for _, d := range c.dialects {
		if !call.written[d] {
			call.queries[d], call.written[d] = query(*call, d), true
		}
	}
}

// oversize refuses a statement that a replica's engine would not take
// whole: the engine would fail it, or drop the connection, where the
// others succeed; the replica would be taken out and its catch-up would
// fail on the same statement for ever. Every replica counts, also one
// that is down: it must replay the statement when it returns.
func (c *Cluster) oversize(call *stmtCall) *pgerr.Error {
	for _, m := range c.managers {
		s, ok := m.Engine().(driver.Sizer)
		if !ok {
			continue
		}
		if o := s.Oversize(call.queries[m.Engine().Dialect()]); o != nil {
			return o.Refusal(m.Name())
		}
	}
	return nil
}

// hold counts the write call against what t may hold, with a log: every
// statement of a transaction is kept until its end (a secondary may run
// it again), and the log records its writes in one record, in the
// client's form and every dialect's, at most wal.MaxRecordBytes of it. A
// transaction past that could never commit, so the statement that takes
// it past (Options.MaxTxnBytes) fails with 54000 before any replica runs
// it, rather than memory being taken without bound (a block of many
// COPYs) for a COMMIT the log refuses. The count is of text only, below
// the record's size; it includes writes a ROLLBACK TO undid, which the
// transaction still keeps.
func (t *Txn) hold(call *stmtCall) *pgerr.Error {
	c := t.c
	if c.opts.WAL == nil || call.st == nil || call.st.Kind == sqlan.Read {
		return nil
	}
	size := func(sql string, args []driver.Arg) int {
		n := len(sql)
		for _, a := range args {
			n += len(a.Text) + 1
		}
		return n
	}
	n := size(call.st.SQL, call.args)
	for _, d := range c.dialects {
		n += size(call.queries[d].SQL, call.queries[d].Args)
	}
	limit := c.opts.MaxTxnBytes
	if limit <= 0 {
		limit = wal.MaxRecordBytes
	}
	if t.held+n > limit {
		what := fmt.Sprintf("%d bytes", limit)
		if limit >= 1<<20 {
			what = fmt.Sprintf("%d MB", limit>>20)
		}
		return pgerr.New(pgerr.ProgramLimitExceeded, "the transaction's writes exceed shepherd's limit of %s for one transaction", what).
			WithDetail("shepherd keeps a transaction's statements until it ends, and its write-ahead log records them in one record.").
			WithHint("Split the work into several transactions.")
	}
	t.held += n
	return nil
}

// ExecSingle runs the only statement of a transaction that the caller
// will commit right after (the client's autocommit). When nothing would
// ever need undoing — one replica (passthrough), or a plain read — the
// replicas run it in their own autocommit, which saves them the BEGIN and
// COMMIT round trips. With several replicas a write must stay in a real
// transaction: if the replicas disagree it has to roll back everywhere.
func (t *Txn) ExecSingle(ctx context.Context, st *sqlan.Stmt, args []driver.Arg) (*answer.Answer, error) {
	// Not in CBS and SS: there a read must hold its locks on the primary
	// until the COMMIT decision, since the primary's blocking is what
	// orders the secondaries (a read in autocommit would let a writer
	// overtake it).
	t.autocommit = true
	switch t.c.opts.Mode {
	case coord.Passthrough:
		t.single = t.seq == 0
		// Its one replica answers: the session's goroutine may as well
		// take the answer itself (replica.Manager.Run).
		t.inline = t.single && len(t.c.managers) == 1 && t.c.managers[0].Inline()
	case coord.Serial:
		t.single = t.seq == 0 && st.Kind == sqlan.Read
	}
	return t.Exec(ctx, st, args)
}

// Commit asks the replicas to commit. A nil error means at least f+1
// replicas committed.
func (t *Txn) Commit(ctx context.Context) error {
	if t.done {
		return pgerr.New(pgerr.InternalError, "transaction already ended")
	}
	t.done = true
	start := time.Now()
	if t.c.opts.Mode == coord.Serial {
		if err := t.serialCommit(); err != nil {
			t.c.opts.Metrics.Commit(time.Since(start), err)
			return err
		}
	}
	_, err := t.submit(ctx, coord.Op{Txn: t.id, Kind: coord.OpCommit}, stmtCall{})
	t.putReply()
	t.c.opts.Metrics.Commit(time.Since(start), err)
	return err
}

// serialCommit keeps a client's cancel from splitting the replicas in
// serial mode, where a replica taken out does not come back until
// restart. A cancel reaches the replicas at different times: it may stop
// a write on some after f+1 others finished it, and the client then got
// their answer. Committing would leave the replicas that stopped without
// the write, and take them out. So once a cancel was sent, the COMMIT
// waits until every replica that is up answered every statement (each
// has finished or stopped its own); if their answers to a statement that
// may change state differ, the transaction is rolled back everywhere
// instead, and the client, who asked to cancel, gets 57014.
func (t *Txn) serialCommit() error {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.cancelled {
		return nil
	}
	bound := time.NewTimer(serialCancelWait)
	defer bound.Stop()
wait:
	for !t.allAnsweredLocked() {
		more := c.answeredLocked()
		c.mu.Unlock()
		select {
		case <-more:
		case <-bound.C:
			// A replica that neither finishes nor stops (a hung
			// engine): go on as without a cancel; the coordinator takes
			// it out if it answers otherwise.
			c.mu.Lock()
			break wait
		case <-c.stop:
			c.mu.Lock()
			return pgerr.New(pgerr.AdminShutdown, "terminating connection due to administrator command")
		}
		c.mu.Lock()
	}
	split := false
	for seq, call := range t.stmts {
		if call.st == nil || call.st.Kind == sqlan.Read {
			continue
		}
		if call.st.Kind == sqlan.DDL && c.ddlCommits() {
			// A replica that commits DDL as it runs it cannot roll it
			// back: the transaction goes on to commit where it can
			// (the coordinator retires such a replica that the vote
			// went against).
			return nil
		}
		var first *coord.Vote
		for r, res := range t.answers.of(coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq}) {
			if c.mu.core.IsDown(coord.ReplicaID(r)) {
				continue
			}
			switch {
			case first == nil:
				first = &res.Vote
			case res.Vote != *first:
				split = true
			}
		}
	}
	if !split {
		return nil
	}
	c.log.Warn("a cancel stopped a write on some replicas after others finished it: the transaction is rolled back everywhere", "txn", uint64(t.id))
	c.mu.core.Step(coord.Submit{Op: coord.Op{Txn: t.id, Kind: coord.OpRollback}})
	c.applyLocked()
	return pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request").
		WithDetail("The cancel reached some replicas after others had finished a write; the transaction was rolled back on every replica.")
}

// serialCancelWait bounds how long serialCommit waits for the replicas'
// answers after a cancel.
const serialCancelWait = 10 * time.Second

// DefersBlockDDL reports whether DDL inside a transaction block is taken
// although some replica commits DDL as it runs it (MariaDB): CBS and SS
// defer the block on those replicas until its commit is decided
// (coord.Submit.Defer). Other modes with such a replica refuse it.
func (c *Cluster) DefersBlockDDL() bool {
	return c.ddlCommits() && (c.opts.Mode == coord.CBS || c.opts.Mode == coord.SS)
}

// defers reports whether call, a statement of t, is DDL inside a block
// to defer on the replicas that commit DDL as they run it.
func (c *Cluster) defers(t *Txn, call stmtCall) bool {
	return call.st != nil && call.st.Kind == sqlan.DDL && !t.autocommit && !t.survey && c.DefersBlockDDL()
}

// ddlCommits reports whether some replica commits DDL as it runs it
// (MariaDB, MySQL).
func (c *Cluster) ddlCommits() bool {
	for _, m := range c.managers {
		if m.Engine().Dialect() == driver.MySQL {
			return true
		}
	}
	return false
}

// allAnsweredLocked reports whether every replica that is up answered every
// statement of t. c.mu is held.
func (t *Txn) allAnsweredLocked() bool {
	for seq := range t.stmts {
		rs := t.answers.of(coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: seq})
		for r := range t.c.managers {
			if t.c.mu.core.IsDown(coord.ReplicaID(r)) {
				continue
			}
			if rs == nil || rs[r].Op.Txn == 0 {
				return false
			}
		}
	}
	return true
}

// Rollback rolls the transaction back everywhere. It does not wait for the
// replicas: a rollback cannot fail in a way the client could act on.
func (t *Txn) Rollback() {
	if t.done {
		return
	}
	t.done = true
	t.putReply()
	c := t.c
	c.mu.Lock()
	t.stepping = true
	c.mu.core.Step(coord.Submit{Op: coord.Op{Txn: t.id, Kind: coord.OpRollback}})
	c.applyLocked()
	t.stepping = false
	run := t.takeInlinedLocked()
	c.mu.Unlock()
	c.runInlined(context.Background(), run)
}

// takeInlinedLocked returns the tasks a step of t sent to be run on the
// session's goroutine, and forgets them. c.mu is held.
func (t *Txn) takeInlinedLocked() []inlineTask {
	run := t.inlined
	t.inlined = nil
	return run
}

// runInlined runs tasks of an inline transaction on the calling
// goroutine, and hands their results to the coordinator as a worker's.
// c.mu is not held.
func (c *Cluster) runInlined(ctx context.Context, run []inlineTask) {
	if c.beforeInline != nil && len(run) > 0 {
		c.beforeInline()
	}
	for i := range run {
		c.onResult(c.managers[run[i].r].Run(ctx, &run[i].task, run[i].aborts))
		run[i].task = replica.Task{}
	}
}

func (t *Txn) submit(ctx context.Context, op coord.Op, call stmtCall) (*answer.Answer, error) {
	c := t.c
	if call.st != nil {
		// Write the statement for each dialect now, outside the lock
		// every session and replica answer goes through.
		c.write(&call)
	}
	intent := op.Kind == coord.OpStmt && c.intentFor(t, call)
	if intent {
		// Durably before the core can send it to a replica that
		// commits it at once, and in the order the core gets them.
		c.intents.order.Lock()
		if err := c.recordIntent(t, call); err != nil {
			c.intents.order.Unlock()
			return nil, err
		}
	}
	if t.reply == nil {
		t.reply = replies.Get().(chan outcome)
	}
	ch := t.reply
	c.mu.Lock()
	if op.Kind == coord.OpStmt {
		if t.stmts == nil {
			t.stmts = t.stmtsBuf[:0]
		}
		t.stmts = append(t.stmts, call)
	}
	t.waitOp, t.waits = op, true
	// Savepoint statements count as writes: a replica whose answer to
	// one differs (SQLite, say, had lost the transaction under it) must
	// not commit the transaction (the backstop of coord's commitAt).
	writes := call.st != nil && (call.st.Kind == sqlan.Write || call.st.Kind == sqlan.Savepoint)
	ddl := call.st != nil && call.st.Kind == sqlan.DDL
	deferred := c.defers(t, call)
	if deferred && t.deferAt < 0 {
		t.deferAt = op.Seq
	}
	c.mu.core.Step(coord.Submit{Op: op, Writes: writes, DDL: ddl, Defer: deferred,
		Recovers: call.st != nil && call.st.Kind == sqlan.Savepoint && call.st.SavepointOp == sqlan.SavepointRollbackTo})
	t.stepping = true
	c.applyLocked()
	t.stepping = false
	run := t.takeInlinedLocked()
	c.mu.Unlock()
	if intent {
		c.intents.order.Unlock()
	}
	// An inline transaction's statement runs here; its reply is then
	// ready below.
	c.runInlined(ctx, run)
	select {
	case o := <-ch:
		return o.answer, errOrNil(o.err)
	case <-ctx.Done():
	}
	// Cancelled: stop what the client waits for, then take the reply that
	// follows (it comes promptly once cancelled).
	switch p := c.primary.Load(); {
	case p < 0:
		// Every replica votes on the statement: stop it everywhere, but
		// only while it is undecided. A cancel reaches the replicas at
		// different times, so it may stop the statement on some after
		// others finished it (see serialCommit). A COMMIT is never
		// cancelled: it runs to the agreed end on every replica.
		c.mu.Lock()
		if undecided := t.waits && t.waitOp == op; undecided && op.Kind == coord.OpStmt {
			t.cancelled = true
			for _, m := range c.managers {
				m.CancelOp(op)
			}
		}
		c.mu.Unlock()
	case op.Kind == coord.OpStmt:
		// The client waits for the primary only; the secondaries' runs
		// are rolled back with the transaction, and are no evidence
		// against them. The primary has the statement already (it is
		// sent on submit), so a cancel that comes after it finished can
		// be dropped rather than kept for the next one.
		c.managers[p].CancelOp(op)
		// A statement the core still holds (queued behind another DDL,
		// or for the next primary) is not on the primary yet.
		c.mu.Lock()
		if t.deferAt >= 0 && op.Seq >= t.deferAt {
			// A deferred statement runs on the replicas that run DDL in
			// transactions, whose answers are the reply: stop it there
			// (the others get it only once the block is decided).
			for _, m := range c.managers {
				m.CancelOp(op)
			}
		}
		c.mu.core.Step(coord.Cancel{Txn: t.id})
		c.applyLocked()
		c.mu.Unlock()
	default:
		c.mu.Lock()
		c.mu.core.Step(coord.Cancel{Txn: t.id})
		c.applyLocked()
		c.mu.Unlock()
	}
	if c.cancelHandled != nil {
		c.cancelHandled(op)
	}
	o := <-ch
	return o.answer, errOrNil(o.err)
}

func errOrNil(e *pgerr.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// onResult receives a replica's result (from a manager goroutine).
func (c *Cluster) onResult(r replica.Result) {
	if r.Digested {
		c.status[r.R].digested.Add(1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.mu.txns[r.Op.Txn]; t != nil {
		if t.survey && r.Op.Kind == coord.OpStmt && r.Op.Seq < len(t.stmts) {
			if p := t.stmts[r.Op.Seq].probe; p != nil && p.Vote != nil {
				r.Vote = p.Vote(int(r.R), r)
			}
		}
		t.results(r)
		if r.Op.Kind == coord.OpCommit && r.Err == nil {
			t.commits++
			c.status[r.R].commits.Add(1)
		}
	}
	c.mu.core.Step(coord.Answered{R: r.R, Op: r.Op, Try: r.Try, V: r.Vote})
	c.applyLocked()
	c.wakeAnswerWaitersLocked()
}

// wakeAnswerWaitersLocked wakes whoever waits for replicas' answers
// (serialCommit). c.mu is held.
func (c *Cluster) wakeAnswerWaitersLocked() {
	if c.mu.answered != nil {
		close(c.mu.answered)
		c.mu.answered = nil
	}
}

// answeredLocked returns the channel wakeAnswerWaitersLocked closes next.
// c.mu is held.
func (c *Cluster) answeredLocked() chan struct{} {
	if c.mu.answered == nil {
		c.mu.answered = make(chan struct{})
	}
	return c.mu.answered
}

// results keeps a replica's result until the ballot is decided.
func (t *Txn) results(r replica.Result) {
	rs := t.answers.slot(r.Op, len(t.c.managers))
	if rs[r.R].Op.Txn != 0 && r.Try < rs[r.R].Try {
		return // a late answer of an aborted attempt
	}
	rs[r.R] = r
}

// answerSet holds the replicas' results of a transaction's ops, indexed
// by replica. The first ops' are kept in first, and with one replica in
// buf: passthrough's autocommit statement and its COMMIT then take no
// allocation. The rest go to more.
type answerSet struct {
	first  [2]opResults
	nfirst int
	buf    [2]replica.Result
	more   map[coord.Op][]replica.Result
}

type opResults struct {
	op coord.Op
	rs []replica.Result
}

// of returns op's results, nil if none came yet.
func (s *answerSet) of(op coord.Op) []replica.Result {
	for i := range s.nfirst {
		if s.first[i].op == op {
			return s.first[i].rs
		}
	}
	return s.more[op]
}

// slot returns op's results, with room for n replicas' when none came
// yet.
func (s *answerSet) slot(op coord.Op, n int) []replica.Result {
	if rs := s.of(op); rs != nil {
		return rs
	}
	if i := s.nfirst; i < len(s.first) {
		rs := s.buf[i : i+1 : i+1]
		if n != 1 {
			rs = make([]replica.Result, n)
		}
		s.first[i] = opResults{op, rs}
		s.nfirst++
		return rs
	}
	if s.more == nil {
		s.more = map[coord.Op][]replica.Result{}
	}
	rs := make([]replica.Result, n)
	s.more[op] = rs
	return rs
}

// applyLocked carries out the coordinator's actions. c.mu is held.
func (c *Cluster) applyLocked() {
	actions := c.mu.core.Ready()
	for _, a := range actions {
		if a, ok := a.(coord.Retire); ok {
			// Recorded durably before anything else of the step is
			// carried out: the client may be told of the refusal that
			// caused it only once a restart would keep the replica out.
			c.retireLocked(a.R, a.Why)
		}
	}
	for _, a := range actions {
		switch a := a.(type) {
		case coord.Send:
			c.sendLocked(a)
		case coord.Abort:
			c.status[a.R].reruns.Add(1)
			c.managers[a.R].Abort(a.Txn, a.Try)
		case coord.Reply:
			c.replyLocked(a)
		case coord.Mismatch:
			c.mismatchLocked(a)
		case coord.MarkDown:
			c.status[a.R].down.Store(true)
			c.managers[a.R].AbortAll()
			c.managers[a.R].DropIdle()
			c.log.Warn("replica taken out", "replica", c.managers[a.R].Name(), "why", a.Why)
			c.wakeAnswerWaitersLocked()
			if int32(a.R) == c.primary.Load() {
				c.views.lastDown = c.managers[a.R].Name() + ": " + a.Why
			}
			c.startRecovery(a.R)
		case coord.Log:
			c.logLocked(a)
		case coord.Retire:
			// Recorded above, before its MarkDown, or before a recovery
			// already under way rejoins it: it must stay out until
			// repaired, also across restarts.
			c.log.Error("replica retired: its state differs from the others' and the log cannot repair it; "+
				"rebuild it from a replica in use, then run REJOIN REPLICA on the admin console",
				"replica", c.managers[a.R].Name(), "why", a.Why)
		case coord.NewPrimary:
			c.primary.Store(int32(a.R))
			c.viewChanges.Add(1)
			c.views.add(View{Number: a.View, Primary: c.managers[a.R].Name(), Since: time.Now(), Why: c.views.lastDown})
			c.log.Warn("new primary", "replica", c.managers[a.R].Name(), "view", a.View)
		case coord.Surveyed:
			if t := c.mu.txns[a.Txn]; t != nil {
				t.surveyed = &a
			}
		case coord.Finished:
			if t := c.mu.txns[a.Txn]; t != nil {
				t.finished = true
				// Its outcome is known: logged, or ended without a
				// commit (awaitLog drops the intent of a commit sooner).
				c.dropIntent(a.Txn, "finished")
				if t.afterCommit != nil && c.opts.WAL == nil && t.commits > 0 {
					// Without a log, a COMMIT some replica did is the
					// outcome.
					c.runAfterCommitLocked(t)
				}
				t.afterCommit = nil
				if fn := t.afterEnd; fn != nil {
					t.afterEnd = nil
					fn()
				}
				if t.admitted {
					// Every replica is done with it (or out, its
					// connections dropped): its slot goes to the next.
					t.admitted = false
					c.admit.release(t.singleSlot)
				}
			}
			delete(c.mu.txns, a.Txn)
			if len(c.mu.txns) == 0 {
				close(c.mu.idle)
				c.mu.busy = make(chan struct{})
			}
		}
	}
	c.mu.core.Recycle(actions)
	c.decisions.note(c.mu.core.Decided(), time.Now)
}

func (c *Cluster) sendLocked(a coord.Send) {
	t := c.mu.txns[a.Op.Txn]
	if t == nil {
		return
	}
	select {
	case <-c.mu.busy:
	default:
		close(c.mu.busy)
	}
	task := c.taskLocked(t, a)
	if t.inline && t.stepping {
		// The session's goroutine runs it once it let go of c.mu.
		if t.inlined == nil {
			t.inlined = t.inlinedBuf[:0]
		}
		t.inlined = append(t.inlined, inlineTask{r: a.R, task: task, aborts: c.managers[a.R].Aborts()})
		return
	}
	c.managers[a.R].Submit(task)
}

// taskLocked is the task that carries out a, a Send for t. c.mu is held.
func (c *Cluster) taskLocked(t *Txn, a coord.Send) replica.Task {
	m := c.managers[a.R]
	task := replica.Task{Op: a.Op, Try: a.Try, TxOptions: t.opts, Autocommit: t.single,
		NoVote: c.opts.Mode == coord.Passthrough}
	if a.Op.Kind == coord.OpCommit {
		task.Barrier = t.barrier
	}

	if c.primary.Load() >= 0 {
		// Each replica runs at the isolation its class needs for CBS
		// (driver default); the client's level is served by the protocol.
		task.TxOptions = driver.TxOptions{ReadOnly: t.opts.ReadOnly}
	}
	if a.Op.Kind == coord.OpStmt && t.stmts[a.Op.Seq].probe != nil {
		p := t.stmts[a.Op.Seq].probe
		task.Query = p.Queries[a.R]
		task.Ordered = p.Ordered
		task.DigestRows = -1 // the survey wants every replica's rows
	} else if a.Op.Kind == coord.OpStmt {
		call := t.stmts[a.Op.Seq]
		d := m.Engine().Dialect()
		task.Query = call.queries[d]
		if !call.written[d] {
			task.Query = query(call, d)
		}
		task.Ordered = call.st.Ordered
		task.SortKeys = call.st.SortKeys
		task.CountRows = call.st.CountRows(d)
		task.Hints = call.st.DigestHints()
		task.DigestRows = -1
		task.Memory, task.Spill, task.SpillDir = c.opts.AnswerMemory, call.spill, c.opts.SpillDir
		if p := c.primary.Load(); p >= 0 && int32(a.R) != p && (t.deferAt < 0 || a.Op.Seq < t.deferAt) {
			// (A deferred statement's reply is a participant's answer:
			// see coord.Submit.Defer.)
			task.DigestRows = c.opts.DigestRows
		}
	}
	return task
}

// query writes a statement for one replica's dialect.
func query(call stmtCall, d driver.Dialect) driver.Query { return sqlan.Query(call.st, d, call.args) }

func (c *Cluster) replyLocked(a coord.Reply) {
	t := c.mu.txns[a.Op.Txn]
	if t == nil {
		return
	}
	var ch chan outcome
	if t.waits && t.waitOp == a.Op {
		ch, t.waits = t.reply, false
	}
	var o outcome
	switch {
	case a.Fail != nil:
		o.err = a.Fail
		if a.Op.Kind == coord.OpCommit && a.Fail.Code == pgerr.SerializationFailure {
			// The replicas accused (if any) were logged as mismatches;
			// this says what the client was told.
			c.log.Warn("commit refused", "txn", uint64(a.Op.Txn), "why", a.Fail.Message)
		}
	case a.From >= 0:
		r := t.answers.of(a.Op)[a.From]
		o.answer, o.err = r.Answer, r.Err
		if r.Digested {
			// Never hand a client an answer whose rows were dropped.
			o.answer, o.err = nil, pgerr.New(pgerr.InternalError, "the answer chosen for the client was kept as a digest only")
			c.log.Error("digest-only answer chosen for a reply", "replica", c.managers[a.From].Name(), "op", a.Op.String())
		}
		if r.Overflow != nil && o.err == nil {
			// Its rows passed the answer's memory bound: voted, but
			// not kept for the client.
			o.answer, o.err = nil, r.Overflow
		}
	}
	if failedReply(o) {
		// It never commits: its intent goes before the client hears.
		c.dropIntent(a.Op.Txn, "failed")
	}
	if ch != nil {
		ch <- o
	}
}

func (c *Cluster) mismatchLocked(a coord.Mismatch) {
	if t := c.mu.txns[a.Op.Txn]; t != nil && t.cancelled && a.Got.Code == pgerr.QueryCanceled {
		// The client's cancel stopped it here and came too late
		// elsewhere: no evidence against the replica (serialCommit).
		return
	}
	st := &c.status[a.R]
	st.mismatches.Add(1)
	st.suspect.Store(true)
	sql := ""
	if t := c.mu.txns[a.Op.Txn]; t != nil && a.Op.Kind == coord.OpStmt && a.Op.Seq < len(t.stmts) && t.stmts[a.Op.Seq].st != nil {
		sql = t.stmts[a.Op.Seq].st.SQL
	}
	c.log.Warn("replica answer lost the vote",
		"replica", c.managers[a.R].Name(), "txn", uint64(a.Op.Txn), "op", a.Op.String(),
		"statement", sql, "got", a.Got.String(), "want", a.Want.String())
}

// TakeDown takes the named replica out, as if its connection had broken,
// and keeps it out (a replica lost by itself is brought back): it stops
// running and voting until shepherd restarts or Reinstate. Unlike a
// retirement it is not recorded in Options.RetiredFile. Tests use it to
// need the remaining ones.
func (c *Cluster) TakeDown(name string) error {
	for i, m := range c.managers {
		if m.Name() == name {
			c.mu.Lock()
			c.mu.retired[coord.ReplicaID(i)] = true
			c.mu.core.Step(coord.Down{R: coord.ReplicaID(i)})
			c.applyLocked()
			c.mu.Unlock()
			return nil
		}
	}
	return pgerr.New(pgerr.UndefinedObject, "replica %q does not exist", name)
}
