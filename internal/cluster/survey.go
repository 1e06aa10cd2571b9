package cluster

import (
	"context"
	"fmt"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
)

// Probe is one statement of a survey, written for each replica.
type Probe struct {
	// Queries holds the statement for each replica, by replica index.
	Queries []driver.Query
	// Ordered says the rows are compared in order (for the default vote).
	Ordered bool
	// Vote, when set, turns replica r's result into its vote: a repair
	// votes on whether the replica's state was the one it expected. nil
	// votes with the answer's digest.
	Vote func(r int, res replica.Result) coord.Vote
}

// SurveyResult is what every replica answered to a survey.
type SurveyResult struct {
	// Answers[i][r] is replica r's result for probe i, for the replicas
	// in Took.
	Answers [][]replica.Result
	// Took marks the replicas that ran every probe on the survey's state;
	// the others were down or catching up.
	Took []bool
	// Committed says every replica in Took agreed (on the votes) and the
	// survey committed; otherwise it rolled back everywhere.
	Committed bool
}

// Survey runs probes as one transaction that the coordinator schedules
// like client work, so that every replica answers on the same logical
// state, and returns every replica's answers without voting on them (see
// coord.Begin). It commits only if every replica that took part gave the
// same votes: a repair writes only where every replica's state was the one
// it expected.
func (c *Cluster) Survey(ctx context.Context, probes []Probe) (*SurveyResult, error) {
	t := &Txn{c: c, id: coord.TxnID(c.nextTxn.Add(1)), survey: true}
	c.mu.Lock()
	if len(c.mu.txns) == 0 {
		c.mu.idle = make(chan struct{})
	}
	c.mu.txns[t.id] = t
	c.mu.core.Step(coord.Begin{Txn: t.id, Survey: true})
	c.applyLocked()
	c.mu.Unlock()
	for i := range probes {
		op := coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: i}
		t.seq++
		if _, err := t.submit(ctx, op, stmtCall{probe: &probes[i]}); err != nil {
			t.Rollback()
			return nil, fmt.Errorf("cluster: survey statement %d on the primary: %w", i+1, err)
		}
	}
	t.done = true
	_, err := t.submit(ctx, coord.Op{Txn: t.id, Kind: coord.OpCommit}, stmtCall{})
	var pe *pgerr.Error
	if err != nil && !(asPG(err, &pe) && pe.Code == pgerr.SerializationFailure) {
		return nil, fmt.Errorf("cluster: survey: %w", err)
	}
	// Surveyed came before the COMMIT's reply: the replicas it took have
	// answered every statement, and those answers are final (a survey is
	// not run again once decided). A replica left out may still be
	// working; it is not waited for.
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.surveyed == nil {
		return nil, pgerr.New(pgerr.InternalError, "survey ended without a verdict")
	}
	res := &SurveyResult{Took: t.surveyed.Took, Committed: t.surveyed.Unanimous && err == nil}
	for i := range probes {
		row := make([]replica.Result, len(c.managers))
		if rs := t.answers.of(coord.Op{Txn: t.id, Kind: coord.OpStmt, Seq: i}); rs != nil {
			for r, took := range res.Took {
				if took {
					row[r] = rs[r]
				}
			}
		}
		res.Answers = append(res.Answers, row)
	}
	return res, nil
}

func asPG(err error, pe **pgerr.Error) bool {
	e, ok := err.(*pgerr.Error)
	if ok {
		*pe = e
	}
	return ok
}

// Dialects returns each replica's dialect, by index.
func (c *Cluster) Dialects() []driver.Dialect {
	out := make([]driver.Dialect, len(c.managers))
	for i, m := range c.managers {
		out[i] = m.Engine().Dialect()
	}
	return out
}

// Names returns each replica's name, by index.
func (c *Cluster) Names() []string {
	out := make([]string, len(c.managers))
	for i, m := range c.managers {
		out[i] = m.Name()
	}
	return out
}

// F returns the number of faulty replicas tolerated.
func (c *Cluster) F() int { return c.opts.F }

// Connect opens a connection of its own to replica r, outside every
// transaction the coordinator schedules: for reads whose answer needs no
// agreement (where to split a key range).
func (c *Cluster) Connect(ctx context.Context, r int) (driver.Conn, error) {
	return c.managers[r].Engine().Connect(ctx)
}

// Up reports which replicas are up and taking part in new transactions.
func (c *Cluster) Up() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]bool, len(c.managers))
	for r := range out {
		out[r] = !c.mu.core.IsDown(coord.ReplicaID(r)) && !c.mu.core.Joining(coord.ReplicaID(r))
	}
	return out
}

// Lag returns how many decided transactions the replica furthest behind
// (of those up) has yet to commit (CBS and SS; 0 in other modes). A
// survey waits for every replica, so background work holds back while it
// is high.
func (c *Cluster) Lag() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	decided, lag := c.mu.core.Decided(), 0
	for r := range c.managers {
		id := coord.ReplicaID(r)
		if c.mu.core.IsDown(id) || c.mu.core.Joining(id) || c.mu.core.Applied(id) < 0 {
			continue
		}
		lag = max(lag, decided-c.mu.core.Applied(id))
	}
	return lag
}

// Active returns how many transactions are live (clients' and surveys').
func (c *Cluster) Active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.txns)
}
