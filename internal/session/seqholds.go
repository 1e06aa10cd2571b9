package session

import (
	"sync"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// seqHolds are the committed sequences an open block restarted or
// altered (ALTER SEQUENCE, TRUNCATE ... RESTART IDENTITY): the block
// draws from its own state until COMMIT, so another session drawing from
// the committed one meanwhile could be handed a value the block hands
// out too (the review saw 3 given twice). PostgreSQL makes the other
// session wait for the block (its ALTER holds a lock on the sequence);
// shepherd refuses its nextval()/setval() of such a sequence instead,
// with 55P03, until the block ends. Keys are the database and the
// sequence's name, or "serial " and the SERIAL column's table.column.
type seqHolds struct {
	mu   sync.Mutex
	held map[string]*Session
}

// hold records that s's block restarted the committed sequence key.
func (h *seqHolds) hold(s *Session, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[string]*Session{}
	}
	if _, ok := h.held[s.database+"\x00"+key]; !ok {
		h.held[s.database+"\x00"+key] = s
	}
}

// check fails when another session's open block restarted sequence key
// (what reads as name to the client).
func (h *seqHolds) check(s *Session, key, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o, ok := h.held[s.database+"\x00"+key]; ok && o != s {
		return pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on sequence %q", name).
			WithDetail("Another transaction block restarted or altered it and has not ended; shepherd does not wait for it.").
			WithHint("Retry once that transaction ended.")
	}
	return nil
}

// release drops every hold of s (its block ended).
func (h *seqHolds) release(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, o := range h.held {
		if o == s {
			delete(h.held, k)
		}
	}
}
