package session

import (
	"sync"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
)

// LISTEN, UNLISTEN, NOTIFY and pg_notify() are shepherd's alone, as in
// PostgreSQL: a notification reaches the sessions listening on its
// channel in its database when the notifying transaction commits (none
// when it rolls back), once for each distinct channel and payload of the
// transaction, in the order they were first sent; LISTEN and UNLISTEN
// take effect when their transaction commits. The front (pgwire) sends
// what a session received while it has no transaction open.

// notifyHub is the listeners of a server's sessions, by database and
// channel.
type notifyHub struct {
	mu        sync.Mutex
	listeners map[string]map[*Session]bool
}

func (h *notifyHub) listen(s *Session, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listeners == nil {
		h.listeners = map[string]map[*Session]bool{}
	}
	if h.listeners[key] == nil {
		h.listeners[key] = map[*Session]bool{}
	}
	h.listeners[key][s] = true
}

func (h *notifyHub) unlisten(s *Session, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.listeners[key], s)
	if len(h.listeners[key]) == 0 {
		delete(h.listeners, key)
	}
}

// full reports whether a session listening on channel has more than
// maxInbox bytes of notifications it has not been sent (it stays in a
// transaction, or its client does not read).
func (h *notifyHub) full(database, channel string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners[database+"\x00"+channel] {
		l.inbox.mu.Lock()
		n := l.inbox.bytes
		l.inbox.mu.Unlock()
		if n > maxInbox {
			return true
		}
	}
	return false
}

// maxInbox bounds the notifications waiting for one session, in bytes
// (PostgreSQL bounds its queue, 8 GB, and fails NOTIFY when it is full).
const maxInbox = 256 << 20

// send hands each notification to the sessions listening on its channel.
func (h *notifyHub) send(database string, notes []pgwire.Notification) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range notes {
		for l := range h.listeners[database+"\x00"+n.Channel] {
			l.inbox.add(n)
		}
	}
}

// inbox is what a session received and has not sent to its client yet.
type inbox struct {
	mu    sync.Mutex
	notes []pgwire.Notification
	bytes int           // of notes' channels and payloads
	ready chan struct{} // capacity 1: a notification arrived
}

func (b *inbox) add(n pgwire.Notification) {
	b.mu.Lock()
	b.notes = append(b.notes, n)
	b.bytes += len(n.Channel) + len(n.Payload)
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// Notifications implements pgwire.Notifier.
func (s *Session) Notifications() []pgwire.Notification {
	s.inbox.mu.Lock()
	defer s.inbox.mu.Unlock()
	out := s.inbox.notes
	s.inbox.notes, s.inbox.bytes = nil, 0
	return out
}

// NotificationsWaiting implements pgwire.Notifier.
func (s *Session) NotificationsWaiting() <-chan struct{} { return s.inbox.ready }

// listenOp is a LISTEN or UNLISTEN of the open block.
type listenOp struct {
	channel string
	listen  bool
	all     bool // UNLISTEN *
}

// notifyState is a session's side of LISTEN and NOTIFY: the channels it
// listens on, and what its open transaction will do at commit.
type notifyState struct {
	listening map[string]bool
	ops       []listenOp
	pending   []pgwire.Notification
}

// programLimitExceeded is SQLSTATE 54000.
const programLimitExceeded = "54000"

// PostgreSQL's limits (NAMEDATALEN and NOTIFY_PAYLOAD_MAX_LENGTH).
const (
	maxChannel = 63
	maxPayload = 7999
)

// notify sends a notification when the transaction commits (at once when
// the statement is its own transaction). A channel and payload the
// transaction already sent are folded into that one.
func (s *Session) notify(channel, payload string) error {
	switch {
	case channel == "":
		return pgerr.New(pgerr.InvalidParameterValue, "channel name cannot be empty")
	case len(channel) > maxChannel:
		return pgerr.New(pgerr.InvalidParameterValue, "channel name too long")
	case len(payload) > maxPayload:
		return pgerr.New(pgerr.InvalidParameterValue, "payload string too long")
	}
	for _, n := range s.notes.pending {
		if n.Channel == channel && n.Payload == payload {
			return nil
		}
	}
	if s.shared.notify.full(s.database, channel) {
		return pgerr.New(programLimitExceeded, "too many notifications in the NOTIFY queue")
	}
	var pid uint32
	if s.conn != nil {
		pid = uint32(s.conn.ProcessID())
	}
	s.notes.pending = append(s.notes.pending, pgwire.Notification{PID: pid, Channel: channel, Payload: payload})
	if !s.inBlock && !s.implicit {
		s.endNotify(true)
	}
	return nil
}

// listen records a LISTEN or UNLISTEN, which takes effect at commit (at
// once outside a block).
func (s *Session) listen(op listenOp) {
	s.notes.ops = append(s.notes.ops, op)
	if !s.inBlock && !s.implicit {
		s.endNotify(true)
	}
}

// endNotify ends the transaction's part in LISTEN and NOTIFY: committed,
// its LISTENs and UNLISTENs take effect, then its notifications go out
// (to this session too, if it listens); rolled back, all is dropped.
func (s *Session) endNotify(commit bool) {
	ops, pending := s.notes.ops, s.notes.pending
	s.notes.ops, s.notes.pending = nil, nil
	if !commit {
		return
	}
	hub := &s.shared.notify
	for _, op := range ops {
		switch {
		case op.all:
			for ch := range s.notes.listening {
				hub.unlisten(s, s.database+"\x00"+ch)
			}
			clear(s.notes.listening)
		case op.listen:
			if s.notes.listening == nil {
				s.notes.listening = map[string]bool{}
			}
			s.notes.listening[op.channel] = true
			hub.listen(s, s.database+"\x00"+op.channel)
		default:
			delete(s.notes.listening, op.channel)
			hub.unlisten(s, s.database+"\x00"+op.channel)
		}
	}
	if len(pending) > 0 {
		hub.send(s.database, pending)
	}
}
