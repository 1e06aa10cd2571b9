package session

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgwire"
)

// TestNotifyHub: a notification reaches the listeners of its channel in
// its database only, at the notifier's commit (none at rollback), folded
// with an identical one of the same transaction; a listener whose unsent
// notifications pass maxInbox makes NOTIFY fail with 54000, as
// PostgreSQL's full queue does, until its client takes them.
func TestNotifyHub(t *testing.T) {
	sh := NewShared()
	sess := func(db string) *Session {
		return &Session{shared: sh, database: db, inbox: inbox{ready: make(chan struct{}, 1)}}
	}
	l, other, n := sess("app"), sess("else"), sess("app")
	l.listen(listenOp{channel: "ch", listen: true})
	other.listen(listenOp{channel: "ch", listen: true})
	n.inBlock = true
	for _, p := range []string{"a", "b", "a"} {
		if err := n.notify("ch", p); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Notifications(); len(got) != 0 {
		t.Fatalf("before commit: %v", got)
	}
	n.endNotify(true)
	n.inBlock = false
	got := l.Notifications()
	if len(got) != 2 || got[0].Payload != "a" || got[1].Payload != "b" {
		t.Fatalf("at commit: %v", got)
	}
	if got := other.Notifications(); len(got) != 0 {
		t.Fatalf("another database's listener got %v", got)
	}
	n.inBlock = true
	_ = n.notify("ch", "rolled back")
	n.endNotify(false)
	n.inBlock = false
	if got := l.Notifications(); len(got) != 0 {
		t.Fatalf("after rollback: %v", got)
	}

	l.inbox.add(pgwire.Notification{Channel: "ch", Payload: strings.Repeat("x", maxInbox)})
	if err := n.notify("ch", "one more"); pgerr.Code(err) != "54000" {
		t.Fatalf("full: %v", err)
	}
	if err := n.notify("quiet", "nobody listens"); err != nil {
		t.Fatal(err)
	}
	l.Notifications()
	if err := n.notify("ch", "one more"); err != nil {
		t.Fatal(err)
	}
	l.listen(listenOp{all: true})
	other.listen(listenOp{all: true})
	if len(sh.notify.listeners) != 0 {
		t.Fatalf("listeners left: %v", sh.notify.listeners)
	}
}
