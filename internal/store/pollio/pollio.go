// Package pollio sends a request with the first read of its reply, in one
// pass through Go's network poller, for the store clients that write their
// own protocol (memcached's direct path, Redis's pipelines) and under
// pgconn's socket (the postgres store's KV clients, its pollconn.go).
//
// A plain write then read nearly always finds the reply not there yet, so
// an op pays a read(2) that fails with EAGAIN before the goroutine parks:
// 1.6–1.9 reads per Memcached get instead of 1 (/proc/self/io syscr), each
// failed one 0.6–0.8 µs of CPU on the 2-CPU VM. Conn instead writes the
// request inside syscall.RawConn.Read, after the poller has cleared the
// socket's readiness and before it waits: the reply's arrival comes after
// that clearing, so its wake-up cannot be lost. (Waiting first and writing
// outside could lose it: a wake-up noted between the write and the wait
// would be cleared.) An event loop does the same: write, then back to
// epoll_wait.
package pollio

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// Conn is what a client's buffered writer writes to and its buffered
// reader reads from: conn, except that a held request (Hold, or a Write
// while armed) goes out with the next Read.
type Conn struct {
	conn net.Conn
	// raw is conn's socket as the poller serves it; nil where reads
	// block their thread (blockio) or conn has no descriptor: there
	// every request is written at once.
	raw syscall.RawConn

	arm     bool   // the next Write is a request to hold for Read
	pending []byte // that request: the caller's buffer, untouched until the reply is read

	// One Read's state, for step (a method value made once: no
	// allocation per read).
	p      []byte
	n      int
	err    error
	stepFn func(fd uintptr) bool
}

// Reset puts x on conn, whose reads block their thread when blocking.
func (x *Conn) Reset(conn net.Conn, blocking bool) {
	x.conn, x.raw, x.arm, x.pending = conn, nil, false, nil
	if sc, ok := conn.(syscall.Conn); ok && !blocking {
		if raw, err := sc.SyscallConn(); err == nil {
			x.raw = raw
		}
	}
	if x.stepFn == nil {
		x.stepFn = x.step
	}
}

// Polled says requests can be held: conn is served by the poller.
func (x *Conn) Polled() bool { return x.raw != nil }

// Arm makes the next Write, if conn is polled, a request held for the next
// Read; Disarm undoes it. The caller arms only when its reader has nothing
// buffered, so that the next Read does reach x.
func (x *Conn) Arm()    { x.arm = x.raw != nil }
func (x *Conn) Disarm() { x.arm = false }

// Hold writes p with the next Read where conn is polled (p must stay
// untouched until then), and at once otherwise. Like Arm, only when the
// caller's reader has nothing buffered.
func (x *Conn) Hold(p []byte) error {
	if x.raw != nil {
		x.pending = p
		return nil
	}
	_, err := x.conn.Write(p)
	return err
}

// Write holds an armed request for Read, and writes anything else.
func (x *Conn) Write(p []byte) (int, error) {
	if x.arm {
		x.arm, x.pending = false, p
		return len(p), nil
	}
	return x.conn.Write(p)
}

// Read sends the pending request, if any, then reads (see the package doc).
func (x *Conn) Read(p []byte) (int, error) {
	if x.pending == nil {
		return x.conn.Read(p)
	}
	x.p, x.n, x.err = p, 0, nil
	err := x.raw.Read(x.stepFn)
	x.p, x.pending = nil, nil
	if err != nil { // the poller's: a deadline passed, or the connection was closed
		return 0, x.opErr("read", err)
	}
	return x.n, x.err
}

// step is RawConn.Read's function: its first call writes the request and
// waits (false), the next ones read until the reply is there.
func (x *Conn) step(fd uintptr) bool {
	if req := x.pending; req != nil {
		x.pending = nil
		n, err := rawIO(syscall.SYS_WRITE, fd, req)
		switch {
		case err == syscall.EAGAIN:
			n = 0
		case err != nil:
			x.err = x.opErr("write", os.NewSyscallError("write", err))
			return true
		}
		if n < len(req) { // the socket's send buffer is full: the poller waits for room
			if _, err := x.conn.Write(req[n:]); err != nil {
				x.err = err
				return true
			}
		}
		return false
	}
	n, err := rawIO(syscall.SYS_READ, fd, x.p)
	switch {
	case err == syscall.EAGAIN:
		return false
	case err != nil:
		x.err = x.opErr("read", os.NewSyscallError("read", err))
	case n == 0 && len(x.p) > 0:
		x.err = io.EOF
	}
	x.n = max(n, 0)
	return true
}

// opErr wraps err as net's own reads and writes do, so that errclass sees
// the same errors either way.
func (x *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: x.conn.LocalAddr(), Addr: x.conn.RemoteAddr(), Err: err}
}

// rawIO is read(2) or write(2) (trap) of p on fd without telling the Go
// scheduler (syscall.RawSyscall): the poller's sockets are non-blocking, so
// the call never waits, and the thread keeps its P through it. Through
// syscall.Read and Write, a call that took more than 20 µs (a loopback
// write runs the receiving side's TCP work too, and a busy machine
// preempts it) let sysmon hand the P to another thread: a wake-up, a
// context switch and the goroutines' caches moved, per such call.
func rawIO(trap, fd uintptr, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	for {
		n, _, errno := syscall.RawSyscall(trap, fd, uintptr(ptr), uintptr(len(p)))
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return -1, errno
	}
}
