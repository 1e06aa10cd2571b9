package sqlan

import (
	"sync"
	"sync/atomic"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Cache remembers the analysis of query strings so that a statement sent
// again (the common case: prepared and repeated queries) is parsed and
// translated once. An analysis depends on the schema, so entries made
// under an older schema version are analysed again. It holds at most its
// capacity; the oldest entry makes room for a new one. Errors are not
// cached. Safe for concurrent use.
type Cache struct {
	replicas map[driver.Dialect][]string
	catalog  *schema.Catalog
	env      atomic.Pointer[Env]

	mu    sync.Mutex
	cap   int
	byKey map[string]cached
	order []string // insertion order, a ring of cap keys
	next  int
}

type cached struct {
	env *Env
	sts []*Stmt
}

// NewCache returns a cache of at most capacity query strings, analysing
// them for the replicas (names by dialect) and the schema of catalog.
func NewCache(capacity int, replicas map[driver.Dialect][]string, catalog *schema.Catalog) *Cache {
	if capacity < 1 {
		capacity = 1
	}
	if catalog == nil {
		catalog, _ = schema.Open("")
	}
	return &Cache{replicas: replicas, catalog: catalog, cap: capacity,
		byKey: make(map[string]cached, capacity), order: make([]string, 0, capacity)}
}

// Catalog returns the schema catalog statements are analysed against.
func (c *Cache) Catalog() *schema.Catalog { return c.catalog }

// Speaks reports whether some replica speaks dialect d.
func (c *Cache) Speaks(d driver.Dialect) bool { return len(c.replicas[d]) > 0 }

// Env returns the environment of the current schema.
func (c *Cache) Env() *Env {
	snap := c.catalog.Snapshot()
	if e := c.env.Load(); e != nil && e.Schema == snap {
		return e
	}
	e := &Env{Replicas: c.replicas, Schema: snap}
	c.env.Store(e)
	return e
}

// EnvOf returns the environment of snap: the current one when snap is the
// catalog's snapshot, else one of its own (a transaction block's schema,
// its DDL applied to the committed one).
func (c *Cache) EnvOf(snap *schema.Snapshot) *Env {
	if e := c.Env(); e.Schema == snap {
		return e
	}
	return &Env{Replicas: c.replicas, Schema: snap}
}

// ParseFor is Parse against snap: cached when snap is the catalog's
// snapshot, else analysed anew and not remembered. A block's own schema is
// private to its session, and an analysis against it must not answer
// another session's (nor this one's once the block rolled back).
func (c *Cache) ParseFor(sql string, snap *schema.Snapshot) ([]*Stmt, error) {
	env := c.EnvOf(snap)
	if env.Schema == c.catalog.Snapshot() {
		return c.Parse(sql)
	}
	return ParseIn(sql, env)
}

// Parse is ParseIn with caching, in the current environment.
func (c *Cache) Parse(sql string) ([]*Stmt, error) {
	env := c.Env()
	c.mu.Lock()
	e, ok := c.byKey[sql]
	c.mu.Unlock()
	if ok && e.env.Schema == env.Schema {
		return e.sts, nil
	}
	sts, err := ParseIn(sql, env)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[sql]; ok {
		c.byKey[sql] = cached{env: env, sts: sts}
		return sts, nil
	}
	if len(c.order) < c.cap {
		c.order = append(c.order, sql)
	} else {
		delete(c.byKey, c.order[c.next])
		c.order[c.next] = sql
		c.next = (c.next + 1) % c.cap
	}
	c.byKey[sql] = cached{env: env, sts: sts}
	return sts, nil
}
