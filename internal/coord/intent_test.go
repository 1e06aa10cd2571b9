package coord

import (
	"slices"
	"strings"
	"testing"
)

// TestPlanIntents: a lone DDL statement left open by a crash is completed,
// a transaction with other statements, or several open intents, retire
// the replicas that may hold them, and an intent whose commit was logged
// is resolved.
func TestPlanIntents(t *testing.T) {
	logged := func(txns ...uint64) func(uint64) bool {
		return func(x uint64) bool { return slices.Contains(txns, x) }
	}
	lone := func(txn uint64) DDLIntent { return DDLIntent{Txn: txn, Lone: true, Replicas: []int{0}} }

	if p := PlanIntents(nil, logged()); len(p.Complete) != 0 || len(p.Retire) != 0 {
		t.Errorf("no intents: %+v", p)
	}
	if p := PlanIntents([]DDLIntent{lone(7)}, logged(7)); len(p.Complete) != 0 || len(p.Retire) != 0 {
		t.Errorf("logged intent: %+v, want nothing to do", p)
	}
	if p := PlanIntents([]DDLIntent{lone(7), lone(9)}, logged(7)); !slices.Equal(p.Complete, []uint64{9}) || len(p.Retire) != 0 {
		t.Errorf("one open lone intent: %+v, want t9 completed", p)
	}
	p := PlanIntents([]DDLIntent{{Txn: 4, Replicas: []int{0, 2}}}, logged())
	if len(p.Complete) != 0 || len(p.Retire) != 2 || !strings.Contains(p.Retire[2], "other statements") {
		t.Errorf("open intent with other statements: %+v, want r0 and r2 retired", p)
	}
	if p := PlanIntents([]DDLIntent{lone(3), lone(5)}, logged()); !slices.Equal(p.Complete, []uint64{3, 5}) || len(p.Retire) != 0 {
		t.Errorf("two open lone intents: %+v, want t3 then t5 completed", p)
	}
	p = PlanIntents([]DDLIntent{{Txn: 3, Lone: true, Unknown: true, Replicas: []int{0}}}, logged())
	if len(p.Complete) != 0 || len(p.Retire) != 1 || !strings.Contains(p.Retire[0], "no longer") {
		t.Errorf("an intent the log no longer reaches: %+v, want r0 retired", p)
	}
	p = PlanIntents([]DDLIntent{lone(2), {Txn: 3, Lone: true, Refused: true, Replicas: []int{0}}}, logged())
	if len(p.Complete) != 0 || len(p.Retire) != 1 || !strings.Contains(p.Retire[0], "refuse") {
		t.Errorf("an intent the other replicas refuse: %+v, want r0 retired, nothing completed", p)
	}
	// DDL inside a block, deferred on the replicas that commit DDL as
	// they run it until its commit was logged: unlogged, it left nothing
	// there; logged (or perhaps logged), they may hold part of it.
	deferred := DDLIntent{Txn: 6, Deferred: true, Replicas: []int{0}}
	if p := PlanIntents([]DDLIntent{deferred, lone(7)}, logged()); !slices.Equal(p.Complete, []uint64{7}) || len(p.Retire) != 0 {
		t.Errorf("an unlogged deferred intent and a lone one: %+v, want t7 completed, nothing retired", p)
	}
	p = PlanIntents([]DDLIntent{deferred}, logged(6))
	if len(p.Complete) != 0 || len(p.Retire) != 1 || !strings.Contains(p.Retire[0], "part of transaction 6") {
		t.Errorf("a logged deferred intent: %+v, want r0 retired", p)
	}
	deferred.Holds = []int{0}
	if p := PlanIntents([]DDLIntent{deferred}, logged(6)); len(p.Retire) != 0 {
		t.Errorf("a logged deferred intent whose commit r0's log table holds: %+v, want nothing retired", p)
	}
	deferred.Holds = nil
	deferred.Unknown = true
	if p := PlanIntents([]DDLIntent{deferred}, logged()); len(p.Retire) != 1 {
		t.Errorf("a deferred intent the log no longer reaches: %+v, want r0 retired", p)
	}
	p = PlanIntents([]DDLIntent{lone(3), {Txn: 4, Replicas: []int{1}}}, logged())
	if len(p.Complete) != 0 || len(p.Retire) != 2 || !strings.Contains(p.Retire[1], "other statements") {
		t.Errorf("a lone and another open intent: %+v, want r0 and r1 retired, nothing completed", p)
	}
}

// TestPlanCatalog: start-up applies the schema changes of the logged
// transactions the catalog does not hold, in barrier order, each
// transaction's barrier recorded with its last change, and skips those
// it holds.
func TestPlanCatalog(t *testing.T) {
	txns := []LoggedDDL{{Barrier: 3, DDL: []string{"a"}}, {Barrier: 4}, {Barrier: 5, DDL: []string{"b", "c"}}, {Barrier: 6, DDL: []string{"d"}}}
	got := PlanCatalog(func(b uint64) bool { return b <= 3 || b == 6 }, txns)
	want := []CatalogStep{{Barrier: 5, SQL: "b"}, {Barrier: 5, SQL: "c", Last: true}}
	if !slices.Equal(got, want) {
		t.Errorf("PlanCatalog = %+v, want %+v", got, want)
	}
	if got := PlanCatalog(func(uint64) bool { return true }, txns); len(got) != 0 {
		t.Errorf("a catalog that holds the whole log: %+v, want nothing", got)
	}
}
