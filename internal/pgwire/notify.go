package pgwire

import (
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Notification is one NOTIFY a listening session receives: the notifying
// session's process id, the channel and the payload.
type Notification struct {
	PID     uint32
	Channel string
	Payload string
}

// Notifier is a Session that receives notifications (LISTEN). As
// PostgreSQL does, the front sends them as NotificationResponse messages
// when no transaction is open: just before a ReadyForQuery with status
// 'I', and while the connection waits for the client's next command
// after one.
type Notifier interface {
	// Notifications returns the notifications waiting, oldest first, and
	// takes them as sent. It may be called from another goroutine than
	// the connection's while the connection is idle.
	Notifications() []Notification
	// NotificationsWaiting receives when a notification arrives (it may
	// have been taken already).
	NotificationsWaiting() <-chan struct{}
}

// idleSender sends a Notifier's notifications while the connection waits
// for a command: idle is set (under mu) from a ReadyForQuery with status
// 'I' until the next message arrives, and only then may another goroutine
// write to the client; the connection's goroutine takes mu to clear it,
// so it never writes at the same time.
type idleSender struct {
	mu   sync.Mutex
	idle bool
}

// watchNotifications sends n's notifications whenever they arrive while
// the connection is idle, until done is closed.
func (c *conn) watchNotifications(n Notifier, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-n.NotificationsWaiting():
		}
		c.async.mu.Lock()
		if c.async.idle {
			c.sendNotifications(n)
			_ = c.flush()
		}
		c.async.mu.Unlock()
	}
}

// sendNotifications queues the session's waiting notifications.
func (c *conn) sendNotifications(n Notifier) {
	for _, m := range n.Notifications() {
		c.send(&pgproto3.NotificationResponse{PID: m.PID, Channel: m.Channel, Payload: m.Payload})
	}
}

// setIdle marks whether the connection waits for a command with no
// transaction open (see idleSender). Becoming idle sends what arrived
// since the last ReadyForQuery: its signal may have come while the
// connection was not idle yet.
func (c *conn) setIdle(idle bool) {
	n, ok := c.sess.(Notifier)
	if !ok {
		return
	}
	c.async.mu.Lock()
	c.async.idle = idle
	if idle {
		c.sendNotifications(n)
		_ = c.flush()
	}
	c.async.mu.Unlock()
}
