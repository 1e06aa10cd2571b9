// Package fakeengine is a scripted fake replica engine: a driver.Engine
// with no database behind it, whose every call is answered by rules the
// test sets up. It lets the shell (cluster, replica, admin) be tested in
// seconds, deterministically, for what is hard to provoke in a real
// engine: an answer that differs on one replica, a statement that hangs
// until a test releases it, a connection that breaks mid-transaction, a
// COMMIT that fails. It follows vitess's sandboxconn: per-call switches
// and a record of every call.
//
// It is a fake for tests only and is named so; no configuration can
// select it.
//
// Rules are tried in the order they were added, newest first, so a test
// can override a general rule with a specific one for a while. A call no
// rule matches succeeds: BEGIN, COMMIT and ROLLBACK do nothing, a
// statement that returns rows returns none, any other reports 0 rows.
package fakeengine

import (
	"context"
	"strings"
	"sync"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Kind is the kind of a call on a connection.
type Kind string

// Kinds of calls.
const (
	Connect  Kind = "CONNECT"
	Begin    Kind = "BEGIN"
	Exec     Kind = "EXEC"
	Commit   Kind = "COMMIT"
	Rollback Kind = "ROLLBACK"
	Close    Kind = "CLOSE"
)

// Call is one call the engine received.
type Call struct {
	// Conn numbers the connection (1, 2, ...; 0 for Connect itself).
	Conn int
	Kind Kind
	// SQL is the statement, for Exec.
	SQL string
	// Err is what the call returned.
	Err error
}

// Engine is a scripted engine. It is safe for concurrent use.
type Engine struct {
	name    string
	class   driver.Class
	dialect driver.Dialect

	mu    sync.Mutex
	rules []*Rule
	calls []Call
	conns int
	open  int
}

// New returns an engine of the given class that speaks dialect d.
func New(name string, class driver.Class, d driver.Dialect) *Engine {
	return &Engine{name: name, class: class, dialect: d}
}

// Driver implements driver.Engine.
func (e *Engine) Driver() string { return "fake" }

// Class implements driver.Engine.
func (e *Engine) Class() driver.Class { return e.class }

// Dialect implements driver.Engine.
func (e *Engine) Dialect() driver.Dialect { return e.dialect }

// Close implements driver.Engine.
func (e *Engine) Close() error { return nil }

// Connect implements driver.Engine.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	_, err := e.call(ctx, Call{Kind: Connect}, driver.Query{})
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.conns++
	e.open++
	c := &conn{e: e, id: e.conns}
	e.mu.Unlock()
	return c, nil
}

// On adds a rule for the calls of kind k whose SQL contains sql (any SQL
// when empty). By default the rule answers every matching call; see
// Times.
func (e *Engine) On(k Kind, sql string) *Rule {
	r := &Rule{e: e, kind: k, sql: sql}
	e.mu.Lock()
	e.rules = append(e.rules, r)
	e.mu.Unlock()
	return r
}

// Clear removes every rule.
func (e *Engine) Clear() {
	e.mu.Lock()
	e.rules = nil
	e.mu.Unlock()
}

// Calls returns the calls received so far, in order.
func (e *Engine) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// Count returns how many calls of kind k whose SQL contains sql were
// received.
func (e *Engine) Count(k Kind, sql string) int {
	n := 0
	for _, c := range e.Calls() {
		if c.Kind == k && strings.Contains(c.SQL, sql) {
			n++
		}
	}
	return n
}

// Open returns the number of connections open now.
func (e *Engine) Open() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

// match returns the newest rule for c that still applies, and uses it up
// by one.
func (e *Engine) match(c Call) *Rule {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.rules) - 1; i >= 0; i-- {
		r := e.rules[i]
		if r.kind != c.Kind || !strings.Contains(c.SQL, r.sql) || r.times < 0 {
			continue
		}
		if r.times > 0 {
			r.times--
			if r.times == 0 {
				r.times = -1 // used up
			}
		}
		cp := *r // as set up now: a test may set a rule up while calls run
		return &cp
	}
	return nil
}

// call runs one call through the rules and records it.
func (e *Engine) call(ctx context.Context, c Call, q driver.Query) (*answer.Answer, error) {
	r := e.match(c)
	a, err := r.run(ctx, c, q)
	c.Err = err
	e.mu.Lock()
	e.calls = append(e.calls, c)
	e.mu.Unlock()
	return a, err
}

// Rule says how calls that match it are answered. Its setters may be
// called while calls run (the shell's liveness probes always do): they
// take the engine's lock, and a call uses the rule as it was when matched.
type Rule struct {
	e     *Engine
	kind  Kind
	sql   string
	times int // 0: every call; n > 0: the next n calls; -1: used up

	answer *answer.Answer
	fail   *pgerr.Error
	latch  *Latch
	do     func(Call)
}

// Times limits the rule to the next n matching calls.
func (r *Rule) Times(n int) *Rule { r.set(func() { r.times = n }); return r }

// set changes the rule under the engine's lock.
func (r *Rule) set(f func()) {
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	f()
}

// Rows answers with the given text columns and rows.
func (r *Rule) Rows(cols []string, rows ...[]string) *Rule {
	a := &answer.Answer{Tag: answer.Tag("SELECT", int64(len(rows))), RowsAffected: int64(len(rows))}
	for _, c := range cols {
		a.Columns = append(a.Columns, answer.Column{Name: c, Type: answer.Text, Mod: -1, Size: -1})
	}
	for _, row := range rows {
		vs := make([]answer.Value, len(row))
		for i, v := range row {
			vs[i] = answer.V(answer.Text, v)
		}
		a.Rows = append(a.Rows, vs)
	}
	r.set(func() { r.answer = a })
	return r
}

// Affects answers a statement that changed n rows.
func (r *Rule) Affects(n int64) *Rule {
	r.set(func() { r.answer = &answer.Answer{RowsAffected: n} })
	return r
}

// Fail makes the call fail with SQLSTATE code.
func (r *Rule) Fail(code, msg string) *Rule {
	r.set(func() { r.fail = pgerr.New(code, "%s", msg) })
	return r
}

// Block makes the call wait until l is released, or until its ctx ends
// (then it fails with 57014, as a driver reports a cancelled statement).
// What the rule answers otherwise is answered after the wait.
func (r *Rule) Block(l *Latch) *Rule { r.set(func() { r.latch = l }); return r }

// Do runs f on every matching call, before it is answered.
func (r *Rule) Do(f func(Call)) *Rule { r.set(func() { r.do = f }); return r }

// run answers c by the rule (r may be nil: the default answer).
func (r *Rule) run(ctx context.Context, c Call, q driver.Query) (*answer.Answer, error) {
	if r != nil {
		if r.do != nil {
			r.do(c)
		}
		if r.latch != nil {
			r.latch.reach()
			select {
			case <-r.latch.release:
			case <-ctx.Done():
				r.latch.cancel()
				return nil, pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
			}
		}
		if r.fail != nil {
			return nil, r.fail
		}
	}
	if c.Kind != Exec {
		return nil, nil
	}
	verb := q.Command()
	if r != nil && r.answer != nil {
		a := *r.answer
		if a.Columns == nil {
			a.Tag = answer.Tag(verb, a.RowsAffected)
		}
		return &a, nil
	}
	if q.ReturnsRows {
		return &answer.Answer{Columns: []answer.Column{{Name: "?column?", Type: answer.Text, Mod: -1, Size: -1}}, Tag: answer.Tag("SELECT", 0)}, nil
	}
	return &answer.Answer{Tag: answer.Tag(verb, 0)}, nil
}

// Latch holds the calls of a rule (Block) until it is released.
type Latch struct {
	once      sync.Once
	release   chan struct{}
	reached   chan struct{}
	rOnce     sync.Once
	cancelled chan struct{}
	cOnce     sync.Once
}

// NewLatch returns a latch that holds calls until Release.
func NewLatch() *Latch {
	return &Latch{release: make(chan struct{}), reached: make(chan struct{}), cancelled: make(chan struct{})}
}

// Cancelled is closed once a call waiting on the latch was ended by its
// context (it failed with 57014).
func (l *Latch) Cancelled() <-chan struct{} { return l.cancelled }

func (l *Latch) cancel() { l.cOnce.Do(func() { close(l.cancelled) }) }

// Release lets every call waiting on the latch, and every later one, go.
func (l *Latch) Release() { l.once.Do(func() { close(l.release) }) }

// Reached is closed once some call waits on the latch.
func (l *Latch) Reached() <-chan struct{} { return l.reached }

func (l *Latch) reach() { l.rOnce.Do(func() { close(l.reached) }) }

// conn is one connection. Used by one goroutine at a time.
type conn struct {
	e      *Engine
	id     int
	inTx   bool
	broken bool
	closed bool
}

func (c *conn) do(ctx context.Context, k Kind, q driver.Query) (*answer.Answer, error) {
	if c.closed || c.broken {
		return nil, pgerr.New(pgerr.ConnectionFailure, "connection to the fake engine is broken")
	}
	a, err := c.e.call(ctx, Call{Conn: c.id, Kind: k, SQL: q.SQL}, q)
	if pe, ok := err.(*pgerr.Error); ok && pe.Class() == "08" {
		c.broken = true
	}
	return a, err
}

// Begin implements driver.Conn.
func (c *conn) Begin(ctx context.Context, _ driver.TxOptions) error {
	_, err := c.do(ctx, Begin, driver.Query{})
	if err == nil {
		c.inTx = true
	}
	return err
}

// Commit implements driver.Conn.
func (c *conn) Commit(ctx context.Context) error {
	_, err := c.do(ctx, Commit, driver.Query{})
	c.inTx = false
	return err
}

// Rollback implements driver.Conn.
func (c *conn) Rollback(ctx context.Context) error {
	if !c.inTx {
		return nil
	}
	_, err := c.do(ctx, Rollback, driver.Query{})
	c.inTx = false
	return err
}

// Exec implements driver.Conn.
func (c *conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	return c.do(ctx, Exec, q)
}

// Close implements driver.Conn.
func (c *conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.e.mu.Lock()
	c.e.open--
	c.e.calls = append(c.e.calls, Call{Conn: c.id, Kind: Close})
	c.e.mu.Unlock()
	return nil
}
