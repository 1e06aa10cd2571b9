package session

import (
	"context"
	"time"

	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// PostgreSQL's timeouts on the replicas' work: statement_timeout,
// lock_timeout and idle_in_transaction_session_timeout (a lock shepherd
// holds itself is bounded in waitContext).

// errStatementTimeout is the cause of a call's end by statement_timeout.
var errStatementTimeout = pgerr.New(pgerr.QueryCanceled, "canceling statement due to statement timeout")

// statementTimeout bounds one client call (a Query message, with all its
// statements, or an Execute) by statement_timeout, as PostgreSQL does:
// when it fires, the running statement is cancelled on the replicas as by
// a cancel request, and timedOut gives the client PostgreSQL's error.
func (s *Session) statementTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := s.timeoutSetting("statement_timeout"); d > 0 {
		return context.WithTimeoutCause(ctx, d, errStatementTimeout)
	}
	return ctx, func() {}
}

// timedOut turns the cancel error (57014) of a call statement_timeout
// ended into PostgreSQL's "canceling statement due to statement timeout".
func timedOut(ctx context.Context, err error) error {
	if err == nil || context.Cause(ctx) != errStatementTimeout {
		return err
	}
	if pe := pgerr.From(err); pe.Code == pgerr.QueryCanceled && pe.Message != errStatementTimeout.Message {
		return pgerr.New(pgerr.QueryCanceled, "%s", errStatementTimeout.Message)
	}
	return err
}

// IdleInTransactionTimeout implements pgwire.IdleInTransactionTimeouter:
// idle_in_transaction_session_timeout.
func (s *Session) IdleInTransactionTimeout() time.Duration {
	return s.timeoutSetting("idle_in_transaction_session_timeout")
}

// errLockTimeout is the cause of a statement's end by lock_timeout.
var errLockTimeout = pgerr.New(pgerr.LockNotAvailable, "canceling statement due to lock timeout")

// lockTimeout bounds, by lock_timeout, how long the statement t runs may
// wait for a lock another transaction holds in an engine (a lock
// shepherd holds itself is bounded in waitContext). The replicas do not
// say when a statement starts to wait, so a watcher asks the cluster
// (Cluster.Blockers: the primary's engine, or a serial engine's
// transaction slot) every quarter of the timeout (10ms to 1s), and
// cancels the statement once it has been seen waiting for the whole
// timeout; lockTimedOut gives the client PostgreSQL's 55P03. The returned
// stop ends the watcher and waits for it.
func (s *Session) lockTimeout(ctx context.Context, t *cluster.Txn) (context.Context, func()) {
	d := s.timeoutSetting("lock_timeout")
	if d <= 0 || t == nil {
		return ctx, func() {}
	}
	return watchLockTimeout(ctx, d, func(ctx context.Context) (bool, error) {
		b, err := s.cluster.Blockers(ctx, t)
		return len(b) > 0, err
	})
}

// watchLockTimeout is lockTimeout's watcher, with waiting asking whether
// the statement waits for a lock. Each look asks for an answer from a
// read that began at or after the look (driver.WithNotBefore: an engine
// may keep its latest read a while), so a wait seen was under way at the
// look, not only before it. A wait first seen began after the look
// before, which did not see it; the statement is cancelled at a look at
// least d after that one that still sees it, so a wait that ended before
// lock_timeout never cancels it. stop cancels the watcher's own context
// first, so a look that hangs (an unanswering primary) does not hold up
// the statement's end, then waits for it to end.
func watchLockTimeout(ctx context.Context, d time.Duration, waiting func(context.Context) (bool, error)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	wctx, wcancel := context.WithCancel(ctx)
	every := min(max(d/4, 10*time.Millisecond), time.Second)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(every)
		defer tick.Stop()
		last := time.Now()  // the latest look that began; the statement's start before the first
		var since time.Time // when the wait began, at the earliest; zero if not seen waiting
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
				now := time.Now()
				w, err := waiting(driver.WithNotBefore(wctx, now))
				switch {
				case err != nil || !w:
					since = time.Time{}
				case since.IsZero():
					since = last
				case now.Sub(since) >= d:
					cancel(errLockTimeout)
					return
				}
				last = now
			}
		}
	}()
	return ctx, func() {
		wcancel()
		<-exited
		cancel(nil)
	}
}

// lockTimedOut turns the cancel error (57014) of a statement lock_timeout
// ended into PostgreSQL's 55P03 "canceling statement due to lock timeout".
func lockTimedOut(ctx context.Context, err error) error {
	if err == nil || context.Cause(ctx) != errLockTimeout {
		return err
	}
	if pe := pgerr.From(err); pe.Code == pgerr.QueryCanceled {
		return pgerr.New(pgerr.LockNotAvailable, "%s", errLockTimeout.Message)
	}
	return err
}
