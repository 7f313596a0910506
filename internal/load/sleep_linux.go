package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// napper parks a worker's goroutine on a timerfd until a short wait is over:
// the netpoller wakes it when the timer fires, within µs, and no OS thread
// or P is held meanwhile. Measured on 2 CPUs, 8 workers, GOMAXPROCS 2, wake
// lateness p50 at 2,000 / 4,000 ops/s: 0.5–1.7 ms with nanosleep (a thread
// asleep in a syscall keeps its P, and the timers of the other workers on
// that P wait until sysmon takes it back) against 6–10 µs with a timerfd;
// at 8,000 ops/s client CPU 1.1 s against 3.0 s (nanosleep's misses ended
// in yielding loops). A Go timer alone wakes up to 1 ms late.
type napper struct {
	f  *os.File
	fd int
}

// newNapper returns nil when no timerfd can be had (e.g. out of file
// descriptors); nap then falls back to nanosleep.
func newNapper() *napper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &napper{f: os.NewFile(uintptr(fd), "storebench-timerfd"), fd: fd}
}

// nap blocks the calling goroutine for about d (> 0).
func (n *napper) nap(d time.Duration) {
	if n == nil || d <= 0 {
		nanosleep(d)
		return
	}
	// A zero it_value would disarm the timer and the read would never end.
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}
	if err := unix.TimerfdSettime(n.fd, 0, &its, nil); err != nil {
		nanosleep(d)
		return
	}
	var expirations [8]byte
	_, _ = n.f.Read(expirations[:]) // an error only shortens the wait; the caller loops
}

func (n *napper) close() {
	if n != nil {
		_ = n.f.Close()
	}
}

// nanosleep blocks the calling thread for about d: the fallback, still
// closer than a Go timer.
func nanosleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil) // EINTR only shortens the wait; the caller loops
}
