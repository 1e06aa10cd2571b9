// Package fault wraps a replica engine so that it misbehaves on purpose,
// at rates the configuration sets: wrong answers, wrong affected-row
// counts, and stalls. It exists to show that voting catches a lying
// replica and that a slow one does not hold the cluster up (DESIGN.md,
// "Fault model and promise").
//
// Every decision comes from one seeded random source per engine, guarded
// by a mutex, and each Exec draws the same number of values from it, so
// a run is reproduced by the same seed and the same order of statements.
// Two replicas given the same seed make the same decisions.
//
// What is faked, per Exec (Begin, Commit, Rollback and Close pass through):
//
//   - stall: the statement waits StallMS before it reaches the engine. If
//     ctx ends during the wait, Exec returns 57014 (query_canceled) as a
//     driver does, and the statement never ran, so the error tells the
//     truth. Stalling before rather than after the engine keeps that
//     promise; the price is that a stalled statement holds no locks yet.
//   - wrong answer: a successful answer with columns is corrupted: one
//     value changes, a row is dropped, or a row is repeated (one of the
//     three at random; a row of plausible values is added to an empty
//     answer). The corrupted answer always has another answer.Digest.
//   - wrong count: a successful INSERT, UPDATE, DELETE or MERGE reports
//     one more affected row than it changed, in RowsAffected and the tag.
//   - misorder: the rows of an answer come in reverse order: the right
//     multiset of rows, in an order its ORDER BY may not allow (decided
//     from the statement's own seed, so that the draws stay aligned).
package fault

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Config sets how often each fault happens. Rates are probabilities in
// [0, 1], drawn per statement; the zero Config injects nothing.
type Config struct {
	// WrongAnswerRate corrupts answers that return rows.
	WrongAnswerRate float64
	// WrongCountRate adds one to the affected-row count of writes.
	WrongCountRate float64
	// StallRate delays statements by StallMS milliseconds.
	StallRate float64
	StallMS   int
	// MisorderRate reverses the rows of answers.
	MisorderRate float64
	// Seed seeds the engine's random source.
	Seed int64
	// Replica names the replica in the errors the wrapper makes itself.
	Replica string
}

// Active reports whether c injects any fault.
func (c Config) Active() bool {
	return c.WrongAnswerRate > 0 || c.WrongCountRate > 0 || (c.StallRate > 0 && c.StallMS > 0) || c.MisorderRate > 0
}

// seedStream is PCG's second seed word, fixed so that Seed alone decides
// the stream.
const seedStream = 0x5eed_fa17_5eed_fa17

// Wrap returns an engine that passes everything to inner and injects the
// faults cfg asks for into the answers of its connections. Class, Dialect
// and Driver are inner's: a faulty replica looks like any other.
func Wrap(inner driver.Engine, cfg Config) driver.Engine {
	e := &Engine{inner: inner}
	e.mu.cfg = cfg
	e.mu.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), seedStream))
	return e
}

// SetConfig changes the faults injected from the next statement on (a
// configuration reload). A new Seed restarts the random stream from it;
// the same Seed goes on with the stream.
func (e *Engine) SetConfig(cfg Config) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cfg.Seed != e.mu.cfg.Seed {
		e.mu.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), seedStream))
	}
	e.mu.cfg = cfg
}

// Config returns the faults the engine injects now.
func (e *Engine) Config() Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mu.cfg
}

// Engine is an engine with injected faults.
type Engine struct {
	inner driver.Engine

	mu struct {
		sync.Mutex
		cfg Config
		rng *rand.Rand
	}
}

// Driver returns the inner engine's driver name.
func (e *Engine) Driver() string { return e.inner.Driver() }

// Class returns the inner engine's class.
func (e *Engine) Class() driver.Class { return e.inner.Class() }

// Dialect returns the inner engine's dialect.
func (e *Engine) Dialect() driver.Dialect { return e.inner.Dialect() }

// Close closes the inner engine.
func (e *Engine) Close() error { return e.inner.Close() }

// Connect opens a session on the inner engine and wraps it.
func (e *Engine) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := e.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{engine: e, inner: c}, nil
}

// plan is what happens to one statement, drawn before it runs.
type plan struct {
	stall, wrongAnswer, wrongCount bool
	// seed drives the choices of a corruption.
	seed uint64
	// cfg is the configuration it was drawn under.
	cfg Config
}

// draw decides the fate of the next statement. It always draws four
// values, so that the stream stays aligned with the statements.
func (e *Engine) draw() plan {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, cfg := e.mu.rng, e.mu.cfg
	return plan{
		stall:       r.Float64() < cfg.StallRate && cfg.StallMS > 0,
		wrongAnswer: r.Float64() < cfg.WrongAnswerRate,
		wrongCount:  r.Float64() < cfg.WrongCountRate,
		seed:        r.Uint64(),
		cfg:         cfg,
	}
}

// Conn is a session whose answers may be faked.
type Conn struct {
	engine *Engine
	inner  driver.Conn
}

// Begin passes through.
func (c *Conn) Begin(ctx context.Context, opts driver.TxOptions) error {
	return c.inner.Begin(ctx, opts)
}

// Commit passes through.
func (c *Conn) Commit(ctx context.Context) error { return c.inner.Commit(ctx) }

// Rollback passes through.
func (c *Conn) Rollback(ctx context.Context) error { return c.inner.Rollback(ctx) }

// Close passes through.
func (c *Conn) Close() error { return c.inner.Close() }

// Exec runs q on the inner connection, stalling before and corrupting
// the answer after as the drawn plan says.
func (c *Conn) Exec(ctx context.Context, q driver.Query) (*answer.Answer, error) {
	p := c.engine.draw()
	if p.stall {
		if err := c.stall(ctx, p.cfg); err != nil {
			return nil, err
		}
	}
	// The rows are corrupted whole, so they are read whole: the caller
	// feeds them to its sink (driver.Query.Sink says a driver may).
	q.Sink = nil
	a, err := c.inner.Exec(ctx, q)
	if err != nil || a == nil {
		return a, err
	}
	rng := rand.New(rand.NewPCG(p.seed, seedStream))
	if p.wrongAnswer && a.Columns != nil {
		corruptRows(a, rng)
	}
	if p.wrongCount {
		miscount(a, q)
	}
	if p.cfg.MisorderRate > 0 && rng.Float64() < p.cfg.MisorderRate && len(a.Rows) > 1 {
		a.Rows = slices.Clone(a.Rows)
		slices.Reverse(a.Rows)
	}
	return a, nil
}

// stall waits StallMS, or until ctx ends.
func (c *Conn) stall(ctx context.Context, cfg Config) error {
	t := time.NewTimer(time.Duration(cfg.StallMS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		err := pgerr.Wrap(pgerr.QueryCanceled, ctx.Err(), "canceling statement due to user request")
		err.Replica = cfg.Replica
		return err
	}
}
