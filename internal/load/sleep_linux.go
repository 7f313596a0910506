package load

import (
	"os"
	"syscall"
	"time"
	"unsafe"

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
//
// Arming and reading the timerfd never block (it is non-blocking), so they
// go straight to the kernel (syscall.RawSyscall) rather than through
// syscall.Syscall, whose entersyscall woke the runtime's sysmon thread on
// each of them when it was asleep. BenchmarkOpenLoopWake (8 workers, no
// work per op; AMD EPYC VM, 3–4 interleaved pairs, GOMAXPROCS 1 and 2),
// client CPU per op through os.File and unix.TimerfdSettime against this
// way: 2,000 ops/s 81–130 against 54–76 µs, 4,000 53–87 against 47–57,
// 8,000 58–70 against 33–40; 32,000 ~32 both (spin-wait fills the CPU
// there). Start lateness p50 unchanged; p99 too noisy to tell apart.
type napper struct {
	f   *os.File
	raw syscall.RawConn
	fd  uintptr
	its unix.ItimerSpec
	buf [8]byte
	// read is n.readExpirations, bound once: a method value made per
	// nap would allocate.
	read func(fd uintptr) bool
}

// newNapper returns nil when no timerfd can be had (e.g. out of file
// descriptors); nap then falls back to nanosleep.
func newNapper() *napper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	n := &napper{f: os.NewFile(uintptr(fd), "storebench-timerfd"), fd: uintptr(fd)}
	if n.raw, err = n.f.SyscallConn(); err != nil {
		_ = n.f.Close()
		return nil
	}
	n.read = n.readExpirations
	return n
}

// readExpirations reads the timer's expiration count; false while the
// timer has not fired (EAGAIN), so that the poller parks the goroutine.
func (n *napper) readExpirations(fd uintptr) bool {
	_, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&n.buf[0])), uintptr(len(n.buf)))
	return errno != syscall.EAGAIN
}

// nap blocks the calling goroutine for about d (> 0).
func (n *napper) nap(d time.Duration) {
	if n == nil || d <= 0 {
		nanosleep(d)
		return
	}
	// A zero it_value would disarm the timer and the read would never end.
	n.its.Value = unix.NsecToTimespec(max(int64(d), 1))
	if _, _, errno := syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, n.fd, 0, uintptr(unsafe.Pointer(&n.its)), 0, 0, 0); errno != 0 {
		nanosleep(d)
		return
	}
	_ = n.raw.Read(n.read) // an error only shortens the wait; the caller loops
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
