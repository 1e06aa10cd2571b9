package session

import (
	"context"
	"strings"
	"sync"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// LOCK TABLE is answered by shepherd: it takes the lock in shepherd's
// table of table locks (tableLocks), held until the transaction ends,
// with PostgreSQL's modes and conflicts. No replica sees it.
//
// Why not on the replicas: MariaDB's LOCK TABLES commits the open
// transaction, and on a PostgreSQL secondary a lock the primary never
// took could make it wait for, or deadlock with, a transaction the
// primary already ordered before, stalling the secondary. SQLite locks
// the whole file for a writer anyway.
//
// Why this is correct: every transaction through shepherd runs
// serializably (commit barriers order them as one serial order on every
// replica, paper 3), so what a table lock protects (no other
// transaction's change of the table interleaving with the holder's) holds
// for every committed transaction whether or not the others wait: a
// conflicting write makes one of the two fail with 40001 or 40P01
// instead. What the lock adds is PostgreSQL's waiting between LOCK
// statements: two sessions that each LOCK a table (migration tools doing
// so to run one at a time, pg_dump's ACCESS SHARE against a migration's
// ACCESS EXCLUSIVE) wait for each other as in PostgreSQL, in the conflict
// matrix's terms. Statements other than LOCK TABLE take no lock here:
// they neither wait for one nor are waited for (the engines order them).
// A wait here and a wait for an engine's lock in a cycle is a deadlock
// shepherd does not detect (as with advisory locks); a cancel or an
// engine's lock timeout ends it.
//
// These locks are independent of any lock shepherd takes for DDL.

// lockModeNames are PostgreSQL's lock modes, 1 to 8.
var lockModeNames = [...]string{"", "AccessShareLock", "RowShareLock", "RowExclusiveLock",
	"ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"}

// lockConflicts[m] is the set of modes (bit m) mode m conflicts with
// (PostgreSQL's LockConflicts, lock.c).
var lockConflicts = [9]uint16{
	0,
	1 << 8,
	1<<7 | 1<<8,
	1<<5 | 1<<6 | 1<<7 | 1<<8,
	1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8,
	1<<3 | 1<<4 | 1<<6 | 1<<7 | 1<<8,
	1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8,
	1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8,
	1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8,
}

// tableLocks is the table locks of one server, by database and table.
type tableLocks struct {
	mu    sync.Mutex
	locks map[string]*tableLock
}

// tableLock is one table's holders (the modes each holds, as bits) and
// the channel its waiters wait on, closed (and replaced) at each release.
type tableLock struct {
	holders map[*tableOwner]uint16
	changed chan struct{}
}

// tableOwner is one session in the table of table locks.
type tableOwner struct {
	held     map[string]bool
	waiting  string // the lock it waits for ("" none), for deadlock detection
	waitMode int
}

// conflicting returns the other sessions holding k in a mode that
// conflicts with mode (a session never conflicts with itself).
func (t *tableLocks) conflicting(o *tableOwner, l *tableLock, mode int) []*tableOwner {
	var out []*tableOwner
	for other, held := range l.holders {
		if other != o && held&lockConflicts[mode] != 0 {
			out = append(out, other)
		}
	}
	return out
}

// deadlocked reports whether o waiting for holders closes a cycle.
func (t *tableLocks) deadlocked(o *tableOwner, holders []*tableOwner) bool {
	seen := map[*tableOwner]bool{}
	var reaches func(w *tableOwner) bool
	reaches = func(w *tableOwner) bool {
		if w == o {
			return true
		}
		if seen[w] || w.waiting == "" {
			return false
		}
		seen[w] = true
		l := t.locks[w.waiting]
		if l == nil {
			return false
		}
		for _, h := range t.conflicting(w, l, w.waitMode) {
			if reaches(h) {
				return true
			}
		}
		return false
	}
	for _, h := range holders {
		if reaches(h) {
			return true
		}
	}
	return false
}

// lock takes key in mode for o until release; with noWait it fails at
// once (55P03) when another session holds a conflicting mode. Waiting
// ends with ctx (a cancel) or a deadlock, as errors.
func (t *tableLocks) lock(ctx context.Context, o *tableOwner, key, relation string, mode int, noWait bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locks == nil {
		t.locks = map[string]*tableLock{}
	}
	for {
		l := t.locks[key]
		if l == nil {
			l = &tableLock{holders: map[*tableOwner]uint16{}, changed: make(chan struct{})}
			t.locks[key] = l
		}
		holders := t.conflicting(o, l, mode)
		if len(holders) == 0 {
			l.holders[o] |= 1 << mode
			if o.held == nil {
				o.held = map[string]bool{}
			}
			o.held[key] = true
			return nil
		}
		if noWait {
			return pgerr.New(pgerr.LockNotAvailable, "could not obtain lock on relation %q", relation)
		}
		if t.deadlocked(o, holders) {
			return pgerr.New(pgerr.DeadlockDetected, "deadlock detected").
				WithDetail("Process waits for %s on relation %s held by a process that waits for a lock this process holds.", lockModeNames[mode], relation).
				WithHint("See server log for query details.")
		}
		o.waiting, o.waitMode = key, mode
		changed := l.changed
		t.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		t.mu.Lock()
		o.waiting, o.waitMode = "", 0
		if ctx.Err() != nil {
			return pgerr.New(pgerr.QueryCanceled, "canceling statement due to user request")
		}
	}
}

// release lets go of every lock o holds (at the end of its transaction).
func (t *tableLocks) release(o *tableOwner) {
	if len(o.held) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for key := range o.held {
		l := t.locks[key]
		delete(l.holders, o)
		close(l.changed)
		l.changed = make(chan struct{})
		if len(l.holders) == 0 {
			delete(t.locks, key)
		}
	}
	clear(o.held)
}

// lockTables answers LOCK TABLE: only inside a block (25P01, as
// PostgreSQL), of relations the session sees (42P01), each locked in
// the statement's order.
func (s *Session) lockTables(ctx context.Context, st *sqlan.Stmt) (*answer.Answer, error) {
	op := st.Session.Lock
	if !s.inBlock && !s.implicit {
		return nil, pgerr.New(pgerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
	}
	snap, err := s.visibleSchema()
	if err != nil {
		return nil, err
	}
	for _, name := range op.Relations {
		if strings.Contains(name, ".") || snap.Table(name) == nil {
			return nil, pgerr.New(pgerr.UndefinedTable, "relation %q does not exist", name)
		}
	}
	if op.Mode < 1 || op.Mode > 8 {
		return nil, pgerr.New(pgerr.InternalError, "LOCK TABLE of lock mode %d", op.Mode)
	}
	for _, name := range op.Relations {
		if err := s.shared.tables.lock(ctx, &s.tableOwner, s.database+"\x00"+name, name, op.Mode, op.NoWait); err != nil {
			return nil, err
		}
	}
	return &answer.Answer{Tag: st.Verb}, nil
}
