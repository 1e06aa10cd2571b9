package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// maxBatch bounds the statements ExecBatch sends in one pipeline, so that
// neither side's buffers grow without limit.
const maxBatch = 64

// ExecBatch implements driver.Batcher with a pipeline: every statement's
// messages go out together, ended by one Sync, and the answers are read
// in order. A DML statement with parameters runs prepared as with Exec; one
// the connection has not prepared yet is prepared inside the pipeline
// (Parse, then Bind to it), so that an error in it still comes in its
// place, after the statements before it ran. Inside a transaction block
// one Sync for all is the same as one for each; outside one, it would
// make them one implicit transaction, so there they run one at a time.
func (c *Conn) ExecBatch(ctx context.Context, qs []driver.Query) ([]*answer.Answer, error) {
	if err := c.lostTx(); err != nil {
		return nil, err
	}
	if c.pc.TxStatus() != 'T' && c.pendingBegin == "" {
		return c.execEach(ctx, qs)
	}
	var answers []*answer.Answer
	for len(qs) > 0 {
		n := min(len(qs), maxBatch)
		as, _, err := c.execPipeline(ctx, qs[:n], false)
		answers = append(answers, as...)
		if err != nil {
			return answers, err
		}
		qs = qs[n:]
	}
	return answers, nil
}

// ExecCommit implements driver.Committer: q and COMMIT go out in one
// pipeline (with the deferred BEGIN, if no statement ran yet). If q fails,
// the COMMIT is not run and the transaction stays open, failed, as after
// a failed Exec.
func (c *Conn) ExecCommit(ctx context.Context, q driver.Query) error {
	if err := c.lostTx(); err != nil {
		c.inTx = false
		return err
	}
	if c.pc.TxStatus() != 'T' && c.pendingBegin == "" {
		if _, err := c.Exec(ctx, q); err != nil {
			return err
		}
		return c.Commit(ctx)
	}
	answers, tag, err := c.execPipeline(ctx, []driver.Query{q}, true)
	if len(answers) == 1 {
		c.endTx() // the COMMIT ran, or the connection is lost
	}
	if err != nil {
		return err
	}
	if tag == "ROLLBACK" {
		return c.tagged(pgerr.New(pgerr.InFailedSQLTransaction, "transaction was aborted; COMMIT rolled it back"))
	}
	return nil
}

// execPipeline runs qs, at most maxBatch of them, in one pipeline, behind
// the deferred BEGIN if there is one and, with commit, followed by COMMIT,
// whose command tag it returns. An error of the BEGIN counts as the first
// statement's; one of the COMMIT comes with every statement's answer.
func (c *Conn) execPipeline(ctx context.Context, qs []driver.Query, commit bool) ([]*answer.Answer, string, error) {
	if epoch := c.engine.schemaEpoch.Load(); epoch != c.stmts.epoch {
		if err := c.forgetAll(ctx); err != nil {
			return nil, "", c.classify(ctx, err)
		}
		c.stmts.epoch = epoch
	}
	plan := make([]batchStep, len(qs))
	var b pipelined
	b.p = c.pc.StartPipeline(ctx)
	p := b.p
	begin := c.pendingBegin
	c.pendingBegin = ""
	if begin != "" {
		p.SendQueryParams(begin, nil, nil, nil, nil)
	}
	for i, q := range qs {
		plan[i] = c.sendStep(&b, q)
	}
	if commit {
		p.SendQueryParams("COMMIT", nil, nil, nil, nil)
	}
	err := p.Sync()
	var answers []*answer.Answer
	var tag string
	if err == nil && begin != "" {
		_, err = readTag(p)
	}
	if err == nil {
		answers, err = c.readSteps(p, qs, plan)
	}
	if err == nil && commit {
		tag, err = readTag(p)
	}
	if err == nil {
		err = readSync(p)
	}
	if cerr := p.Close(); err == nil && cerr != nil {
		// Every statement answered, yet the pipeline did not end cleanly:
		// the connection cannot be trusted any more.
		err = cerr
	}
	c.afterBatch(ctx, plan[:min(len(answers)+1, len(plan))])
	if err != nil {
		if isStalePlan(err) && len(answers) < len(qs) {
			_ = c.dropCached(ctx, qs[len(answers)].SQL) // the transaction failed anyway
		}
		return answers, "", c.classify(ctx, err)
	}
	return answers, tag, nil
}

// readTag reads the result of a statement without rows (BEGIN, COMMIT)
// from p and returns its command tag.
func readTag(p *pgconn.Pipeline) (string, error) {
	res, err := p.GetResults()
	if err != nil {
		return "", err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return "", errUnexpected(res)
	}
	tag, err := rr.Close()
	return tag.String(), err
}

// readSync reads the end of p's batch.
func readSync(p *pgconn.Pipeline) error {
	res, err := p.GetResults()
	if err != nil {
		return err
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok {
		return errUnexpected(res)
	}
	return nil
}

// batchStep is how one statement of a batch was sent.
type batchStep struct {
	// prepare is the name it is being prepared under (Parse in the
	// pipeline), "" if it was prepared before or runs unnamed.
	prepare string
	oids    []uint32
	// schema says it may change the schema (see changesSchema).
	schema bool
}

// pipelined is a pipeline being filled by sendStep.
type pipelined struct {
	p *pgconn.Pipeline
	// parsed are the statements it prepares (Parse), by text.
	parsed map[string]batchStep
	// schema says a statement that may change the schema was sent: those
	// after it run unnamed, for a statement prepared before it may no
	// longer mean the same.
	schema bool
}

// sendStep queues q's messages on b.
func (c *Conn) sendStep(b *pipelined, q driver.Query) batchStep {
	values, oids := encodeArgs(q.Args)
	verb := q.Command()
	if len(q.Args) == 0 || !preparedVerbs[verb] || b.schema {
		b.p.SendQueryParams(q.SQL, values, oids, nil, nil)
		step := batchStep{schema: changesSchema(verb)}
		b.schema = b.schema || step.schema
		return step
	}
	if sd, ok := c.stmts.cached(q.SQL, oids); ok {
		b.p.SendQueryStatement(sd, values, nil, nil)
		return batchStep{}
	}
	if step, ok := b.parsed[q.SQL]; ok && slices.Equal(step.oids, oids) {
		b.p.SendQueryPrepared(step.prepare, values, nil, nil) // prepared earlier in this pipeline
		return batchStep{}
	}
	if _, other := c.stmts.byText[q.SQL]; other || b.parsed[q.SQL].prepare != "" {
		// The text with other parameter types, rarely seen: it runs
		// unnamed rather than replace the other statement in the middle
		// of the pipeline.
		b.p.SendQueryParams(q.SQL, values, oids, nil, nil)
		return batchStep{}
	}
	c.stmts.named++
	step := batchStep{prepare: stmtPrefix + strconv.FormatUint(c.stmts.named, 10), oids: oids}
	b.p.SendPrepare(step.prepare, q.SQL, oids)
	b.p.SendQueryPrepared(step.prepare, values, nil, nil)
	if b.parsed == nil {
		b.parsed = map[string]batchStep{}
	}
	b.parsed[q.SQL] = step
	return step
}

// readSteps reads the answers of the batch's statements until the first
// error.
func (c *Conn) readSteps(p *pgconn.Pipeline, qs []driver.Query, plan []batchStep) ([]*answer.Answer, error) {
	answers := make([]*answer.Answer, 0, len(qs))
	for i, q := range qs {
		if plan[i].prepare != "" {
			res, err := p.GetResults()
			if err != nil {
				return answers, err
			}
			sd, ok := res.(*pgconn.StatementDescription)
			if !ok {
				return answers, errUnexpected(res)
			}
			sd.Name, sd.SQL = plan[i].prepare, q.SQL
			c.stmts.add(q.SQL, plan[i].oids, sd)
		}
		res, err := p.GetResults()
		if err != nil {
			return answers, err
		}
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			return answers, errUnexpected(res)
		}
		a, err := c.read(rr, q.Sink)
		if err != nil {
			return answers, err
		}
		answers = append(answers, a)
	}
	return answers, nil
}

// afterBatch records the schema changes of the statements that ran (or
// may have), and trims the statement cache, which a batch may have filled
// past its bound: nothing could be deallocated inside the pipeline.
func (c *Conn) afterBatch(ctx context.Context, ran []batchStep) {
	for _, st := range ran {
		if st.schema {
			c.schemaChanged()
		}
	}
	for c.stmts.order.Len() > stmtCacheSize {
		// Deallocation failing means the connection is lost; the next
		// statement finds that out.
		if c.forget(ctx, c.stmts.order.Front()) != nil {
			return
		}
	}
}

// execEach runs qs one Exec at a time, with ExecBatch's result.
func (c *Conn) execEach(ctx context.Context, qs []driver.Query) ([]*answer.Answer, error) {
	answers := make([]*answer.Answer, 0, len(qs))
	for _, q := range qs {
		a, err := c.Exec(ctx, q)
		if err != nil {
			return answers, err
		}
		answers = append(answers, a)
	}
	return answers, nil
}

// errUnexpected is a pipeline answering out of turn: a bug on one side.
func errUnexpected(res any) error {
	return fmt.Errorf("postgres pipeline: unexpected result %T", res)
}
