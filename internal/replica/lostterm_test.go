package replica

import (
	"errors"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestLostTerm checks that the fence's refusal of a commit becomes the
// node's lost term, never a replica's fault, and that other errors pass
// unchanged; and that epoch 0 keeps the single-node LogInsert.
func TestLostTerm(t *testing.T) {
	fenced := &pgerr.Error{Code: pgerr.NotNullViolation, Message: `null value in column "epoch"`}
	err := lostTerm(fenced, 7, "pg")
	if !IsLostTerm(err) {
		t.Fatalf("fenced commit: %v is not a lost term", err)
	}
	if e := pgerr.From(err); e.Replica != "pg" || e.Code != pgerr.AdminShutdown {
		t.Fatalf("fenced commit: %+v", e)
	}
	other := &pgerr.Error{Code: pgerr.SerializationFailure, Message: "could not serialize"}
	if got := lostTerm(other, 7, "pg"); got != error(other) || IsLostTerm(got) {
		t.Fatalf("other error changed: %v", got)
	}
	if IsLostTerm(nil) || IsLostTerm(errors.New("x")) || lostTerm(nil, 7, "pg") != nil {
		t.Fatal("nil or plain error taken for a lost term")
	}
	m := &Manager{engine: dialectEngine{d: driver.Postgres}}
	if got, want := m.logInsert(3).SQL, LogInsert(driver.Postgres, 3).SQL; got != want {
		t.Fatalf("epoch 0: %q, want %q", got, want)
	}
	m.SetEpoch(2)
	if got, want := m.logInsert(3).SQL, LogInsertFenced(driver.Postgres, 3, 2).SQL; got != want {
		t.Fatalf("epoch 2: %q, want %q", got, want)
	}
}

// dialectEngine is an engine that only says its dialect.
type dialectEngine struct {
	driver.Engine
	d driver.Dialect
}

func (e dialectEngine) Dialect() driver.Dialect { return e.d }
