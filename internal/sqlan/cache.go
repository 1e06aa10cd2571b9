package sqlan

import "sync"

// Cache remembers the analysis of query strings so that a statement sent
// again (the common case: prepared and repeated queries) is parsed once.
// It holds at most its capacity; the oldest entry makes room for a new
// one. Errors are not cached. Safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	cap   int
	byKey map[string][]*Stmt
	order []string // insertion order, a ring of cap keys
	next  int
}

// NewCache returns a cache of at most capacity query strings.
func NewCache(capacity int) *Cache {
	if capacity < 1 {
		capacity = 1
	}
	return &Cache{cap: capacity, byKey: make(map[string][]*Stmt, capacity), order: make([]string, 0, capacity)}
}

// Parse is Parse with caching.
func (c *Cache) Parse(sql string) ([]*Stmt, error) {
	c.mu.Lock()
	sts, ok := c.byKey[sql]
	c.mu.Unlock()
	if ok {
		return sts, nil
	}
	sts, err := Parse(sql)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[sql]; ok {
		return sts, nil
	}
	if len(c.order) < c.cap {
		c.order = append(c.order, sql)
	} else {
		delete(c.byKey, c.order[c.next])
		c.order[c.next] = sql
		c.next = (c.next + 1) % c.cap
	}
	c.byKey[sql] = sts
	return sts, nil
}
