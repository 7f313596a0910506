package netem

import (
	"syscall"
	"time"
)

// sleepShort blocks the calling thread for about d. nanosleep wakes within
// tens of µs, where a Go timer in an otherwise idle process wakes up to 1 ms
// late (the runtime's poller waits in whole milliseconds): too coarse for a
// 50 µs half round trip.
func sleepShort(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR only shortens the wait; the caller loops
}
