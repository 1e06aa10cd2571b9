package sim

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestDeterministic: a seed replays exactly, trace and all.
func TestDeterministic(t *testing.T) {
	for _, m := range []coord.Mode{coord.Serial, coord.CBS} {
		var a, b bytes.Buffer
		ra := Run(Options{Mode: m, Seed: 7, Log: &a})
		rb := Run(Options{Mode: m, Seed: 7, Log: &b})
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("%v: two runs of seed 7 logged differently", m)
		}
		ra.Err, rb.Err = nil, nil
		if ra != rb {
			t.Fatalf("%v: two runs of seed 7 differ:\n%+v\n%+v", m, ra, rb)
		}
		if quiet := Run(Options{Mode: m, Seed: 7}); quiet.Steps != ra.Steps || quiet.Commits != ra.Commits {
			t.Fatalf("%v: logging changed the run: %+v vs %+v", m, quiet, ra)
		}
	}
}

// wrapped is a core whose actions pass through a hook before the
// simulator sees them: the hook returns the actions to carry out.
type wrapped struct {
	inner core
	hook  func(inner core, a coord.Action) []coord.Action
}

func (w *wrapped) Step(ev coord.Event) { w.inner.Step(ev) }

func (w *wrapped) Ready() []coord.Action {
	var out []coord.Action
	for in := w.inner.Ready(); len(in) > 0; in = w.inner.Ready() {
		for _, a := range in {
			out = append(out, w.hook(w.inner, a)...)
		}
	}
	return out
}

// threeCorrect is a serial-mode cluster of three correct locking replicas.
func threeCorrect(s *setup) {
	s.n, s.f = 3, 1
	s.classes = []driver.Class{driver.Locking, driver.Locking, driver.Locking}
	s.faults = make([]faults, 3)
}

// TestChecksCatchBrokenCores runs cores broken on purpose: each check must
// notice.
func TestChecksCatchBrokenCores(t *testing.T) {
	cases := []struct {
		name  string
		tweak func(*setup)
		hook  func(s *sim, inner core, a coord.Action) []coord.Action
		want  string
	}{{
		// Check 1: statement replies come from a replica that always lies.
		name: "reply from a liar",
		tweak: func(s *setup) {
			threeCorrect(s)
			s.faults[2] = faults{lie: 1}
		},
		hook: func(s *sim, _ core, a coord.Action) []coord.Action {
			if r, ok := a.(coord.Reply); ok && r.Op.Kind == coord.OpStmt && r.Fail == nil {
				if _, answered := s.fakes[2].answers[r.Op]; answered {
					r.From = 2
				}
				return []coord.Action{r}
			}
			return []coord.Action{a}
		},
		// (or, first, the check that an acknowledged answer was given
		// by f+1 replicas)
		want: "the serial replay gives|was given by 1 replicas, fewer than f+1",
	}, {
		// Check 2: a correct replica rolls back instead of committing
		// writing transactions; the core is told it committed.
		name:  "lost commit",
		tweak: threeCorrect,
		hook: func(s *sim, inner core, a coord.Action) []coord.Action {
			send, ok := a.(coord.Send)
			if !ok || send.R != 1 || send.Op.Kind != coord.OpCommit || !writes(s.txns[send.Op.Txn]) {
				return []coord.Action{a}
			}
			s.fakes[1].answers[send.Op] = answerRec{try: send.Try}
			inner.Step(coord.Answered{R: 1, Op: send.Op, Try: send.Try})
			send.Op.Kind = coord.OpRollback
			return []coord.Action{send}
		},
		// (or a survey finds r1 reading another state than the others)
		// (or r1 is taken out for answering a later write otherwise)
		want: "r1 (correct) ends with|they read different states|r1 (correct) taken out for a write",
	}, {
		// Check 3: one reply never reaches its client.
		name:  "lost reply",
		tweak: threeCorrect,
		hook: func(s *sim, _ core, a coord.Action) []coord.Action {
			if r, ok := a.(coord.Reply); ok && r.Op == (coord.Op{Txn: 20, Kind: coord.OpStmt}) {
				return nil
			}
			return []coord.Action{a}
		},
		want: "stuck",
	}, {
		// Contract: a replica gets a transaction's statements twice.
		name:  "duplicate send",
		tweak: threeCorrect,
		hook: func(s *sim, _ core, a coord.Action) []coord.Action {
			if send, ok := a.(coord.Send); ok && send.Op == (coord.Op{Txn: 9, Kind: coord.OpStmt}) {
				return []coord.Action{a, a}
			}
			return []coord.Action{a}
		},
		want: "out of order",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Run(Options{Mode: coord.Serial, Seed: 3, tweak: c.tweak,
				wrap: func(s *sim, inner core) core {
					return &wrapped{inner: inner, hook: func(inner core, a coord.Action) []coord.Action {
						return c.hook(s, inner, a)
					}}
				}})
			if res.Err == nil {
				t.Fatalf("the broken core passed: %s", summary(res))
			}
			f, ok := res.Err.(*Failure)
			if !ok || !slices.ContainsFunc(strings.Split(c.want, "|"), func(w string) bool { return strings.Contains(f.Msg, w) }) {
				t.Fatalf("failed, but not with %q:\n%v", c.want, res.Err)
			}
		})
	}
}

func writes(t *txn) bool {
	for _, q := range t.stmts {
		if q.writes() {
			return true
		}
	}
	return false
}

// TestFakeDeadlock: two locking attempts that upgrade shared locks on the
// same key deadlock, and one of them fails with 40P01.
func TestFakeDeadlock(t *testing.T) {
	f := newFake(0, driver.Locking, faults{}, store{0, 0}, newRNG(1))
	read, add := stmt{kind: stmtRead, k: 0}, stmt{kind: stmtAdd, k: 0, d: 1}
	for _, id := range []coord.TxnID{1, 2} {
		if bad := f.send(coord.Op{Txn: id, Kind: coord.OpStmt}, 0, 1); bad != "" {
			t.Fatal(bad)
		}
		if bad := f.send(coord.Op{Txn: id, Kind: coord.OpStmt, Seq: 1}, 0, 2); bad != "" {
			t.Fatal(bad)
		}
	}
	a1, a2 := f.latest[1], f.latest[2]
	f.step(a1, read, 0)
	f.deliver(0)
	f.step(a2, read, 0)
	f.deliver(0)
	f.step(a1, add, 0)
	if !a1.blocked || len(f.inflight) != 0 {
		t.Fatalf("t1's upgrade should wait for t2: %s", f.describe(func(coord.TxnID) string { return "" }))
	}
	f.step(a2, add, 0)
	if a2.state != failed || len(f.inflight) != 1 || f.inflight[0].vote.Code != "40P01" {
		t.Fatalf("t2 should be the deadlock victim: %s", f.describe(func(coord.TxnID) string { return "" }))
	}
	f.deliver(0)
	if a1.blocked {
		t.Fatalf("t1 should be woken: %s", f.describe(func(coord.TxnID) string { return "" }))
	}
	f.step(a1, add, 0)
	if m := f.deliver(0); m.val != 1 {
		t.Fatalf("t1 add = %d, want 1", m.val)
	}
}

// TestFoundSeeds replays seeds that found bugs, which the sweeps may no
// longer draw: each fails if its fix is reverted.
func TestFoundSeeds(t *testing.T) {
	for _, c := range []struct {
		mode     coord.Mode
		scenario string
		seed     int64
		fix      string
	}{
		// A stale attempt of a concurrent MVCC secondary whose row count
		// equalled the primary's committed, writing differently.
		{coord.CBS, "mvcc-broken-primary", 49, "re-run every stale attempt"},
		// A sequential secondary running a transaction ahead of its
		// COMMIT (coord.Config.Ahead) that kept it when another one's
		// COMMIT was asked for: each waits for the other (stuck).
		{coord.CBS, "", 3, "a run ahead gives way to a COMMIT (scheduleSequential)"},
		// The same, and a decision that aborts only the runs ahead of
		// transactions whose COMMIT was asked for: the replica commits
		// the one it ran ahead before a transaction decided earlier
		// (a correct replica's write answered otherwise), or, under the
		// figure 5 primary, waits for ever.
		{coord.CBS, "", 9, "a decision aborts every run ahead (decide)"},
		{coord.CBS, "ahead-broken-primary", 14, "a decision aborts every run ahead (decide)"},
		// An exclusive block (DDL inside a block, deferred.go) that
		// failed was picked by a sequential secondary, aborted there as
		// failed, and picked again, for ever: the run hangs in one Step.
		{coord.CBS, "corrupt-secondary", 26, "a failed exclusive block is not run (nextDue)"},
		// A secondary whose engine fails every statement (40P01) re-runs
		// a decided transaction for ever; a later block with DDL (deferred
		// on the MariaDB-like primary) runs only on the two other
		// replicas, one of them that secondary, which never reaches it:
		// the block waited for its answer, and every other client for
		// the block, for ever (stuck).
		{coord.CBS, "mvcc-failing-secondary", 16, "a deferred statement waits for its f+1 participants at most DrainTicks once one answered (voteDeferred)"},
		{coord.CBS, "mvcc-failing-secondary", 25, "the same"},
		{coord.CBS, "mvcc-failing-secondary", 26, "the same"},
		{coord.CBS, "mvcc-failing-secondary", 30, "the same"},
		{coord.SS, "mvcc-failing-secondary", 16, "the same"},
		// A participant primary's error on a deferred statement (DDL
		// inside a block, the MariaDB-like replica not the primary) was
		// held for a vote that counted the MariaDB-like replica, which
		// runs the statement only after the decision, as still to
		// answer: the client waited for ever (stuck).
		{coord.CBS, "erring-primary-locking", 55, "voteError counts only participants for a deferred statement"},
		// A primary's DDL error, not voted while a replica commits DDL
		// as it runs it (docs/DESIGN.md), was taken by the check for an
		// error f+1 replicas must have given (the model's mistake).
		{coord.CBS, "erring-primary-locking", 66, "checkBacked skips DDL errors with DDLCommits replicas"},
		{coord.CBS, "erring-primary-locking", 76, "the same"},
	} {
		if res := Run(Options{Mode: c.mode, Scenario: c.scenario, Seed: c.seed}); res.Err != nil {
			t.Errorf("%v %s seed %d (%s): %v", c.mode, c.scenario, c.seed, c.fix, res.Err)
		}
	}
}

// TestBrokenShellDecisions runs the scenarios of shepherd's restart,
// schema changes and silent corruption with the shell's decisions broken
// as they were before issue 14 was fixed, or as a compare that misses a
// difference would be: each named seed must fail, with the check that
// names the damage. (They pass with the real decisions: TestScenarios.)
func TestBrokenShellDecisions(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		mode     coord.Mode
		seed     int64
		broken   func(*Options)
		want     string
	}{{
		// Item 2: replay resolves the client's names against today's
		// catalog instead of sending the form the replicas ran.
		name: "replay re-translates", scenario: "schema-swap", mode: coord.CBS, seed: 1,
		broken: func(o *Options) { o.retranslate = true },
		want:   "r1 caught up to barrier",
	}, {
		name: "replay re-translates across a restart", scenario: "schema-swap-restart", mode: coord.SS, seed: 2,
		broken: func(o *Options) { o.retranslate = true },
		want:   "r1 caught up to barrier",
	}, {
		// Item 9: start-up believes every replica's log table.
		name: "restart trusts log tables", scenario: "restart-liar", mode: coord.CBS, seed: 1,
		broken: func(o *Options) {
			o.checkBarrier = func(string, uint64, uint64, bool) error { return nil }
		},
		want: "restart took r2 in, whose log table holds barrier",
	}, {
		// Item 9: start-up needs every replica.
		name: "restart needs every replica", scenario: "restart-down", mode: coord.SS, seed: 1,
		broken: func(o *Options) {
			o.planStart = func(f int, top uint64, reports []coord.StartReport) (coord.StartPlan, bool) {
				plan, _ := coord.PlanStart(f, top, reports)
				return plan, len(plan.Out) == 0
			}
		},
		want: "restart refused with 3 correct replicas usable",
	}, {
		// A crash after a replica that commits DDL as it runs it ran a
		// schema change not yet logged: start-up that takes it in as it
		// is (no intents resolved) leaves it alone with the change.
		name: "restart ignores DDL intents", scenario: "restart", mode: coord.SS, seed: 3,
		broken: func(o *Options) {
			o.planIntents = func([]coord.DDLIntent, func(uint64) bool) coord.IntentPlan { return coord.IntentPlan{} }
		},
		want: "restart: r0 (correct) holds",
	}, {
		name: "restart ignores DDL intents (cbs)", scenario: "restart", mode: coord.CBS, seed: 3,
		broken: func(o *Options) {
			o.planIntents = func([]coord.DDLIntent, func(uint64) bool) coord.IntentPlan { return coord.IntentPlan{} }
		},
		want: "restart: r0 (correct) holds",
	}, {
		// The same with DDL inside blocks, deferred on the MariaDB-like
		// primary (coord.Submit.Defer), and lone DDL among them.
		name: "restart ignores DDL intents (blocks)", scenario: "ddl-block", mode: coord.CBS, seed: 2,
		broken: func(o *Options) {
			o.planIntents = func([]coord.DDLIntent, func(uint64) bool) coord.IntentPlan { return coord.IntentPlan{} }
		},
		want: "restart: r0 (correct) holds",
	}, {
		// Item 10: start-up does not apply from the log the schema
		// changes the catalog file lacks (shepherd stopped between the
		// log and the catalog): the names map to what they did before.
		name: "restart leaves the catalog stale", scenario: "schema-swap-restart", mode: coord.CBS, seed: 2,
		broken: func(o *Options) {
			o.planCatalog = func(func(uint64) bool, []coord.LoggedDDL) []coord.CatalogStep { return nil }
		},
		want: "restart: the catalog recovered from the log maps names",
	}, {
		// Item 10: start-up applies every logged schema change, also
		// those the file recorded with their barrier: swaps applied
		// twice.
		name: "restart applies the catalog's changes again", scenario: "schema-swap-restart", mode: coord.CBS, seed: 1,
		broken: func(o *Options) {
			o.planCatalog = func(_ func(uint64) bool, txns []coord.LoggedDDL) []coord.CatalogStep {
				return coord.PlanCatalog(func(uint64) bool { return false }, txns)
			}
		},
		want: "restart: the catalog recovered from the log maps names",
	}, {
		// Item 10: a pinned swap (its client let go during COMMIT)
		// recorded in the catalog at once, without its barrier, as the
		// session did before Txn.AfterCommit: start-up applies it again.
		name: "catalog records a pinned commit before its outcome", scenario: "schema-swap-pinned", mode: coord.CBS, seed: 1,
		broken: func(o *Options) { o.catalogAtCancel = true },
		want:   "restart: the catalog recovered from the log maps names",
	}, {
		// A compare that calls every survey unanimous misses the
		// replica that committed other values than it answered.
		name: "survey misses corruption", scenario: "corrupt-secondary", mode: coord.CBS, seed: 1,
		broken: func(o *Options) {
			o.wrap = func(_ *sim, inner core) core {
				return &wrapped{inner: inner, hook: func(_ core, a coord.Action) []coord.Action {
					if sv, ok := a.(coord.Surveyed); ok {
						sv.Unanimous = true
						return []coord.Action{sv}
					}
					return []coord.Action{a}
				}}
			}
		},
		want: "unanimous, but the replicas that took part answered in 2 different ways: [[0 2] [1]]",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{Mode: c.mode, Scenario: c.scenario, Seed: c.seed}
			if res := Run(o); res.Err != nil {
				t.Fatalf("fails with the real decisions: %v", res.Err)
			}
			c.broken(&o)
			res := Run(o)
			if res.Err == nil {
				t.Fatalf("the broken variant passed: %s", summary(res))
			}
			if f, ok := res.Err.(*Failure); !ok || !strings.Contains(f.Msg, c.want) {
				t.Fatalf("failed, but not with %q:\n%v", c.want, res.Err)
			}
		})
	}
}
