//go:build !linux

package link

import "time"

// preciseSleep sleeps d with the runtime's timers.
func preciseSleep(d time.Duration) { time.Sleep(d) }
