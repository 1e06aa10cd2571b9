package sim

import (
	"fmt"
	"strings"

	"github.com/shepherd-db/shepherd/internal/coord"
)

// ringSize is how many events and actions a failure report shows.
const ringSize = 300

// traceRing keeps the latest events and actions, unformatted: formatting
// every one of millions of steps would cost more than the run.
type traceRing struct {
	recs [ringSize]traceRec
	next int
	full bool
}

type traceRec struct {
	step, tick int
	v          any // a coord.Event, coord.Action or answered
	n          int // ticks in a row this record stands for
}

// answered is an Answered event with the value behind its digest.
type answered struct {
	ev  coord.Answered
	val int
}

func (r *traceRing) add(rec traceRec) {
	last := &r.recs[(r.next+ringSize-1)%ringSize]
	if _, tick := rec.v.(coord.Tick); tick && (r.next > 0 || r.full) {
		if _, lastTick := last.v.(coord.Tick); lastTick {
			last.step, last.tick, last.n = rec.step, rec.tick, last.n+1
			return
		}
	}
	rec.n = 1
	r.recs[r.next] = rec
	r.next = (r.next + 1) % ringSize
	r.full = r.full || r.next == 0
}

// String formats the ring, oldest first.
func (r *traceRing) String(s *sim) string {
	var b strings.Builder
	start, n := 0, r.next
	if r.full {
		start, n = r.next, ringSize
	}
	for i := range n {
		rec := r.recs[(start+i)%ringSize]
		b.WriteString(s.format(rec))
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *sim) record(v any) {
	rec := traceRec{step: s.steps, tick: s.tick, v: v}
	s.ring.add(rec)
	if s.opt.Log != nil {
		fmt.Fprintln(s.opt.Log, s.format(rec))
	}
}

// logf writes a line to the verbose log, if there is one.
func (s *sim) logf(format string, args ...any) {
	if s.opt.Log != nil {
		fmt.Fprintf(s.opt.Log, "%7d %5d   . %s\n", s.steps, s.tick, fmt.Sprintf(format, args...))
	}
}

// format renders one record: step, tick, then '>' for an event fed to the
// core and '<' for an action it returned.
func (s *sim) format(rec traceRec) string {
	head := fmt.Sprintf("%7d %5d ", rec.step, rec.tick)
	switch v := rec.v.(type) {
	case coord.Begin:
		return head + fmt.Sprintf("> begin t%d %v", v.Txn, s.txns[v.Txn].stmts)
	case coord.Submit:
		return head + "> submit " + s.opText(v.Op)
	case answered:
		res := fmt.Sprint(v.val)
		if !v.ev.V.OK() {
			res = "error " + v.ev.V.Code
		} else if v.ev.Op.Kind != coord.OpStmt {
			res = "ok"
		}
		return head + fmt.Sprintf("> r%d answered %v try%d: %s", v.ev.R, v.ev.Op, v.ev.Try, res)
	case coord.Down:
		return head + fmt.Sprintf("> down r%d", v.R)
	case coord.Tick:
		if rec.n > 1 {
			return head + fmt.Sprintf("> tick (%d in a row)", rec.n)
		}
		return head + "> tick"
	}
	return head + "<   " + s.formatAction(rec.v)
}

func (s *sim) formatAction(v any) string {
	switch a := v.(type) {
	case coord.Send:
		return fmt.Sprintf("send r%d %s try%d", a.R, s.opText(a.Op), a.Try)
	case coord.Abort:
		return fmt.Sprintf("abort r%d t%d try%d", a.R, a.Txn, a.Try)
	case coord.Reply:
		switch {
		case a.Fail != nil:
			return fmt.Sprintf("reply %v: error %s %s", a.Op, a.Fail.Code, a.Fail.Message)
		case a.From < 0:
			return fmt.Sprintf("reply %v", a.Op)
		}
		return fmt.Sprintf("reply %v from r%d", a.Op, a.From)
	case coord.Mismatch:
		return fmt.Sprintf("mismatch r%d %v got %v want %v", a.R, a.Op, a.Got, a.Want)
	case coord.MarkDown:
		return fmt.Sprintf("markdown r%d: %s", a.R, a.Why)
	case coord.Finished:
		return fmt.Sprintf("finished t%d", a.Txn)
	}
	return fmt.Sprintf("%T %+v", v, v)
}

// opText renders an op with its statement: t5/1 add(k3,+2).
func (s *sim) opText(op coord.Op) string {
	t := s.txns[op.Txn]
	if op.Kind != coord.OpStmt || t == nil || op.Seq >= len(t.stmts) {
		return op.String()
	}
	return op.String() + " " + t.stmts[op.Seq].String()
}
