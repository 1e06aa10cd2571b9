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
	if s.deferredDDL {
		return s.deferredSavepoint(st, i)
	}
	if s.txn == nil {
		txn, err := s.beginTxn(ctx, s.txOpts, false)
		if err != nil {
			s.fail()
			return nil, err
		}
		s.txn = txn
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

// deferredSavepoint takes a savepoint command in a block that ran DDL
// deferred on the replicas that commit DDL as they run it (MariaDB; see
// Session.deferredDDL). MariaDB's DDL ended every savepoint there, and
// later DDL would end those made after it, so the replicas are sent no
// savepoint command any more: SAVEPOINT and RELEASE are the session's
// alone (nothing can be rolled back to them), and ROLLBACK TO SAVEPOINT
// is refused; the block can still be rolled back as a whole. i is the
// savepoint named by RELEASE (found already).
func (s *Session) deferredSavepoint(st *sqlan.Stmt, i int) (*answer.Answer, error) {
	switch st.SavepointOp {
	case sqlan.SavepointDefine:
		s.spCount++
		s.savepoints = append(s.savepoints, savepoint{name: st.SavepointName, replica: "shepherd_sp" + strconv.Itoa(s.spCount), ddl: len(s.ddl)})
	case sqlan.SavepointRelease:
		s.savepoints = s.savepoints[:i]
	default:
		s.fail()
		return nil, pgerr.New(pgerr.FeatureNotSupported,
			"ROLLBACK TO SAVEPOINT after DDL inside a transaction block is not supported with MariaDB/MySQL replicas: MariaDB commits DDL as it runs it, so shepherd runs the block's DDL there only after COMMIT, without its savepoints").
			WithHint("roll the whole transaction back, or run the DDL in a transaction of its own")
	}
	return &answer.Answer{Tag: st.Verb}, nil
}
