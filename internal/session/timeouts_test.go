package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestLockTimeoutLooksAreFresh: every look of the lock_timeout watcher
// asks for a read that began at or after the look (driver.WithNotBefore),
// and the statement is cancelled only at a look begun at least
// lock_timeout after the latest look that saw no wait. An engine's read
// kept from before the look (MariaDB's, up to 125 ms old) made the
// watcher count a wait that had already ended: a false 55P03.
func TestLockTimeoutLooksAreFresh(t *testing.T) {
	const d = 40 * time.Millisecond
	var mu sync.Mutex
	var looks []time.Time // each look's not-before time
	ctx, stop := watchLockTimeout(context.Background(), d, func(ctx context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		looks = append(looks, driver.NotBefore(ctx))
		return len(looks) > 2, nil // it waits from between the second look and the third on
	})
	<-ctx.Done()
	stop()
	if context.Cause(ctx) != errLockTimeout {
		t.Fatalf("cause %v, want errLockTimeout", context.Cause(ctx))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, nb := range looks {
		if nb.IsZero() {
			t.Fatalf("look %d asked without a not-before time: it may be answered from a read older than the look", i+1)
		}
	}
	if len(looks) < 4 {
		t.Fatalf("cancelled after %d looks", len(looks))
	}
	if got := looks[len(looks)-1].Sub(looks[1]); got < d {
		t.Errorf("cancelled at a look %v after the last look that saw no wait, want at least %v", got, d)
	}
}

// TestLockTimeoutStopWhileLookHangs: the statement's end (stop) does not
// wait for a look that hangs, as one at an unanswering primary does: stop
// cancels the look's context before it waits for the watcher.
func TestLockTimeoutStopWhileLookHangs(t *testing.T) {
	looking := make(chan struct{})
	var once sync.Once
	_, stop := watchLockTimeout(context.Background(), 10*time.Millisecond, func(ctx context.Context) (bool, error) {
		once.Do(func() { close(looking) })
		<-ctx.Done() // hangs until its context ends
		return false, ctx.Err()
	})
	<-looking
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second): // a bound on the failure, not a synchronisation
		t.Fatal("stop waited for a look that hangs")
	}
}
