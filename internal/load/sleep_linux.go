package load

import (
	"syscall"
	"time"
)

// sleepShort blocks the calling thread for about d. nanosleep wakes within
// tens of µs, where a Go timer in an otherwise idle process wakes up to 1 ms
// late (the runtime's poller waits in whole milliseconds), which in an open
// loop would add to every latency.
func sleepShort(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the wait; the caller loops
}
