package link

import (
	"syscall"
	"time"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK.
const prSetTimerSlack = 29

// preciseSleep sleeps d in the kernel, on the calling thread, with a
// timer slack of a microsecond (the default 50 µs would lengthen every
// short link by as much). Slack is a property of the thread, which may
// run other goroutines afterwards; a smaller slack only makes their
// timers more punctual.
func preciseSleep(d time.Duration) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1000, 0)
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: waitUntil sleeps the rest
}
