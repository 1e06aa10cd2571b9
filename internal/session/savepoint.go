package session

import (
	"context"
	"strconv"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// invalidSavepoint is PostgreSQL's SQLSTATE for a savepoint name that
// does not exist (invalid_savepoint_specification).
const invalidSavepoint = "3B001"

// savepoint is one savepoint of the open block, as the client named it
// and as the replicas know it.
type savepoint struct {
	name string // the client's name (PostgreSQL's parser folded it)
	// replica is the name the replicas know it by: one per SAVEPOINT
	// of the transaction, since the engines do not agree on names
	// (MariaDB folds their case) and the latest of equal names must win.
	replica string
	// ddl is how many DDL statements the block had run when it was made:
	// those after it are undone by ROLLBACK TO and must not reach the
	// schema catalog.
	ddl int
	// seqs is the block's own sequences when it was made (see
	// seqBlock.rollbackTo).
	seqs seqBlock
}

// savepoint runs SAVEPOINT, RELEASE or ROLLBACK TO with PostgreSQL's
// rules: only inside a transaction block (25P01); a name that does not
// exist fails with 3B001; the latest savepoint of a name wins; ROLLBACK
// TO keeps the savepoint and destroys those made after it, RELEASE
// destroys it and those after it; in a failed block only ROLLBACK TO is
// accepted, and it ends the failure. The replicas run the statement in
// order with the block's others (the core decides whether they agreed
// well enough for a ROLLBACK TO to recover: see coord.Submit.Recovers).
func (s *Session) savepoint(ctx context.Context, st *sqlan.Stmt) (*answer.Answer, error) {
	if !s.inBlock {
		what := map[sqlan.SavepointOp]string{sqlan.SavepointDefine: "SAVEPOINT",
			sqlan.SavepointRelease: "RELEASE SAVEPOINT", sqlan.SavepointRollbackTo: "ROLLBACK TO SAVEPOINT"}[st.SavepointOp]
		return nil, pgerr.New(pgerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", what)
	}
	if s.failed && st.SavepointOp != sqlan.SavepointRollbackTo {
		return nil, pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	i := len(s.savepoints) - 1
	if st.SavepointOp != sqlan.SavepointDefine {
		for i >= 0 && s.savepoints[i].name != st.SavepointName {
			i--
		}
		if i < 0 {
			s.fail()
			return nil, pgerr.New(invalidSavepoint, "savepoint \"%s\" does not exist", st.SavepointName)
		}
	}
	if s.txn == nil {
		s.txn = s.cluster.Begin(s.txOpts)
		s.shared.locks.bind(&s.owner, s.txn)
		s.txnTime = time.Now()
	}
	var sp savepoint
	if st.SavepointOp == sqlan.SavepointDefine {
		s.spCount++
		sp = savepoint{name: st.SavepointName, replica: "shepherd_sp" + strconv.Itoa(s.spCount), ddl: len(s.ddl), seqs: s.seqs.block.clone()}
	} else {
		sp = s.savepoints[i]
	}
	if _, err := s.txn.Exec(ctx, sqlan.NewSavepoint(st.SavepointOp, sp.replica), nil); err != nil {
		s.fail()
		return nil, err
	}
	switch st.SavepointOp {
	case sqlan.SavepointDefine:
		s.savepoints = append(s.savepoints, sp)
	case sqlan.SavepointRelease:
		s.savepoints = s.savepoints[:i]
	case sqlan.SavepointRollbackTo:
		s.savepoints = s.savepoints[:i+1]
		s.ddl = s.ddl[:sp.ddl]
		s.failed = false
		s.seqs.block = s.seqs.block.rollbackTo(sp.seqs)
	}
	return &answer.Answer{Tag: st.Verb}, nil
}
