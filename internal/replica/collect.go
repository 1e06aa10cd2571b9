package replica

import (
	"errors"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// collector takes a statement's rows one at a time as the engine sends
// them (driver.Query.Sink). Every row goes into the vote's digest; the
// rows are kept as the task says: at most DigestRows of them (else
// none: Result.Digested), in memory up to Task.Memory and spilled to a
// file beyond when Task.Spill (else none: Result.Overflow). So no
// replica's answer is ever held whole in memory, and the vote is the
// same as over the whole answer (answer.Digester).
type collector struct {
	t     *Task
	dig   *answer.Digester // nil until the first row, and with NoVote
	spool *answer.Spool
	keep  bool  // the rows so far are kept
	n     int64 // rows kept
	// digested, overflow: why the rows are not kept.
	digested bool
	overflow *pgerr.Error
}

func newCollector(t *Task) *collector {
	return &collector{t: t, keep: true, spool: answer.NewSpool(t.Memory, t.Spill, t.SpillDir)}
}

// row is the driver's sink; it never fails the statement: a row that
// cannot be kept is still voted on, and what the client is told is
// decided when the answer is chosen (Result.Overflow).
func (c *collector) row(cols []answer.Column, r []answer.Value) error {
	if !c.t.NoVote {
		if c.dig == nil {
			c.dig = c.newDigester()
		}
		c.dig.Row(cols, r)
	}
	if !c.keep {
		return nil
	}
	if c.t.DigestRows >= 0 && c.n >= int64(c.t.DigestRows) {
		c.drop()
		c.digested = true
		return nil
	}
	c.n++
	switch err := c.spool.Add(r); {
	case errors.Is(err, answer.ErrSpoolFull):
		c.drop()
		c.overflow = pgerr.New(pgerr.OutOfMemory, "out of memory").
			WithDetail("The answer's rows passed answer_memory_mb (%d MB) and this statement's answer cannot be spilled to disk.", c.t.Memory>>20)
	case err != nil:
		c.drop()
		c.overflow = pgerr.Wrap(pgerr.IOError, err, "could not spill the answer's rows to disk")
	}
	return nil
}

func (c *collector) newDigester() *answer.Digester {
	keys := c.t.SortKeys
	if c.t.Ordered {
		keys = nil
	}
	return answer.NewDigester(c.t.Ordered, keys, c.t.Hints)
}

func (c *collector) drop() {
	c.keep = false
	c.spool.Discard()
}

// finish completes res from the rows collected: its rows (those a driver
// returned in the answer go through row first), its digest, and why the
// rows are not there if they are not.
func (c *collector) finish(res *Result) {
	a := res.Answer
	if len(a.Rows) > 0 {
		rows := a.Rows
		a.Rows = nil
		for _, r := range rows {
			c.row(a.Columns, r)
		}
	}
	if !c.t.NoVote {
		if c.dig == nil {
			c.dig = c.newDigester()
		}
		res.Vote.Digest = c.dig.Sum(a)
	}
	switch {
	case c.digested:
		res.Digested = true
	case c.overflow != nil:
		res.Overflow = c.overflow
	default:
		mem, more, err := c.spool.Finish()
		if err != nil {
			res.Overflow = pgerr.Wrap(pgerr.IOError, err, "could not spill the answer's rows to disk")
			return
		}
		a.Rows, a.More = mem, more
	}
}

// discard drops the rows of a statement that failed.
func (c *collector) discard() {
	if c != nil {
		c.spool.Discard()
	}
}
