package postgres

import (
	"container/list"
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// stmtCacheSize bounds the statements a connection keeps prepared on the
// server. A workload repeats a few dozen statement texts; past the bound
// the least recently used one is deallocated.
const stmtCacheSize = 256

// Statements are prepared, under names of their own (prefix and a
// counter), only for the plain DML verbs: they are what a workload
// repeats, and they take parameters, which utility statements may not.
// Everything else runs unnamed, as before, and any verb outside this set
// and the read-only ones of keepsSchema counts as a schema change.
var preparedVerbs = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true}

// keepsSchema lists the verbs besides preparedVerbs that cannot change
// what a prepared statement means.
var keepsSchema = map[string]bool{"SHOW": true, "VALUES": true, "EXPLAIN": true}

// stmtPrefix starts the name of every statement the driver prepares.
const stmtPrefix = "shepherd_"

// stmtCache is one connection's prepared statements by SQL text, least
// recently used first in order. Only the connection's goroutine uses it.
//
// Invariant: every entry is prepared on the server under its name, and
// was prepared when the engine's schema epoch was epoch.
type stmtCache struct {
	byText map[string]*list.Element // of *cachedStmt
	order  list.List
	// epoch is the engine's schema epoch (Engine.schemaEpoch) the entries
	// were prepared under; when the engine's moves on, they all go.
	epoch uint64
	// named counts the statements ever prepared, for unique names.
	named uint64
}

type cachedStmt struct {
	sql  string
	oids []uint32 // the parameter types the statement was prepared with
	sd   *pgconn.StatementDescription
}

// statement returns a prepared statement for sql with parameter types
// oids, preparing it on the server if the cache has none.
func (c *Conn) statement(ctx context.Context, sql string, oids []uint32) (*pgconn.StatementDescription, error) {
	sc := &c.stmts
	if epoch := c.engine.schemaEpoch.Load(); epoch != sc.epoch {
		// Some connection of the engine changed the schema: what was
		// prepared before may have the wrong parameter or result types.
		if err := c.forgetAll(ctx); err != nil {
			return nil, err
		}
		sc.epoch = epoch
	}
	if sd, ok := sc.cached(sql, oids); ok {
		return sd, nil
	}
	if el, ok := sc.byText[sql]; ok {
		// The same text with other parameter types is another statement.
		if err := c.forget(ctx, el); err != nil {
			return nil, err
		}
	}
	if sc.order.Len() >= stmtCacheSize {
		if err := c.forget(ctx, sc.order.Front()); err != nil {
			return nil, err
		}
	}
	sc.named++
	sd, err := c.pc.Prepare(ctx, stmtPrefix+strconv.FormatUint(sc.named, 10), sql, oids)
	if err != nil {
		return nil, err
	}
	sc.add(sql, oids, sd)
	return sd, nil
}

// cached returns the statement prepared for sql with parameter types
// oids, if there is one, and marks it used.
func (sc *stmtCache) cached(sql string, oids []uint32) (*pgconn.StatementDescription, bool) {
	el, ok := sc.byText[sql]
	if !ok {
		return nil, false
	}
	cs := el.Value.(*cachedStmt)
	if !slices.Equal(cs.oids, oids) {
		return nil, false
	}
	sc.order.MoveToBack(el)
	return cs.sd, true
}

// add records sd, just prepared on the server, as the statement for sql
// with parameter types oids. One for sql with other types is replaced
// here but stays prepared on the server until the connection ends: it
// only happens when a client sends one text with varying types.
func (sc *stmtCache) add(sql string, oids []uint32, sd *pgconn.StatementDescription) {
	if sc.byText == nil {
		sc.byText = map[string]*list.Element{}
	}
	if el, ok := sc.byText[sql]; ok {
		sc.order.Remove(el)
	}
	sc.byText[sql] = sc.order.PushBack(&cachedStmt{sql: sql, oids: slices.Clone(oids), sd: sd})
}

// forget deallocates one cached statement on the server and drops it.
func (c *Conn) forget(ctx context.Context, el *list.Element) error {
	cs := el.Value.(*cachedStmt)
	delete(c.stmts.byText, cs.sql)
	c.stmts.order.Remove(el)
	// A protocol-level Close, unlike DEALLOCATE, works in a failed
	// transaction too.
	return c.pc.Deallocate(ctx, cs.sd.Name)
}

// forgetAll deallocates every cached statement, in one round trip.
func (c *Conn) forgetAll(ctx context.Context) error {
	sc := &c.stmts
	if sc.order.Len() == 0 {
		return nil
	}
	p := c.pc.StartPipeline(ctx)
	for el := sc.order.Front(); el != nil; el = el.Next() {
		p.SendDeallocate(el.Value.(*cachedStmt).sd.Name)
	}
	clear(sc.byText)
	sc.order.Init()
	err := p.Sync()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

// dropCached forgets the statement for sql after the server refused to
// run it as prepared (see isStalePlan); the server's copy is deallocated
// as well, so that its name does not linger.
func (c *Conn) dropCached(ctx context.Context, sql string) error {
	if el, ok := c.stmts.byText[sql]; ok {
		return c.forget(ctx, el)
	}
	return nil
}

// isStalePlan reports whether err is PostgreSQL refusing a prepared
// statement whose result type a schema change altered ("cached plan must
// not change result type"): the statement itself is fine and runs once
// prepared again. It can only happen when the schema changed outside the
// engine's connections, or concurrently with the statement. The error is
// told by its SQLSTATE and the server function that raises it, which,
// unlike the message, does not depend on lc_messages.
func isStalePlan(err error) bool {
	if err == nil {
		return false // before pgErr, which escapes: no allocation per statement
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerr.FeatureNotSupported &&
		pgErr.Routine == "RevalidateCachedQuery"
}

// changesSchema reports whether a statement with this verb may change
// what prepared statements mean: anything but the DML verbs and a few
// read-only ones.
func changesSchema(verb string) bool {
	return !preparedVerbs[verb] && !keepsSchema[verb]
}
