package memcached

import (
	"io"
	"net"
	"os"
	"syscall"
)

// connIO is what the direct path's bw writes to and br reads from: the
// client's connection, except that a request sent with send goes out with
// the first read of its reply, in one pass through Go's network poller
// (syscall.RawConn.Read): write the request, wait until the socket is
// readable, read. A plain write then read nearly always finds the reply not
// there yet, so an op paid a read(2) that failed with EAGAIN before the
// goroutine parked: 1.6–1.9 reads per get instead of 1 (/proc/self/io
// syscr; TestOneReadPerGet), each failed one 0.6–0.8 µs of CPU on the
// 2-CPU VM. Measured there on 2026-11-24 with load average 5–10 from other
// work (single runs vary by ±30%): a loop of gets on 50 connections, 15
// interleaved 3-s runs each way, client CPU 12.4 → 11.0 µs per get
// (medians); make bench's defaults row, 22 pairs each way, storebench's
// client CPU per get ÷ memaslap's 1.18 → 1.17 and ops/s ÷ memaslap's
// 0.89 → 0.87 (medians): within that noise.
//
// The request is written inside RawConn.Read, after it has cleared the
// poller's readiness of the socket and before it waits: the reply's arrival
// comes after that clearing, so its wake-up cannot be lost. (Waiting first
// and writing outside could lose it: a wake-up noted between the write and
// the wait would be cleared.)
type connIO struct {
	conn net.Conn
	// raw is conn's socket as the poller serves it; nil where reads
	// block their thread (blockio) or conn has no descriptor: there
	// every request is written at once.
	raw syscall.RawConn

	arm     bool   // the next Write is a request to hold for Read (send)
	pending []byte // that request: bw's buffer, untouched until the reply is read

	// One Read's state, for step (a method value made once: no
	// allocation per read).
	p      []byte
	n      int
	err    error
	stepFn func(fd uintptr) bool
}

// reset puts x on conn, whose reads block their thread when blocking.
func (x *connIO) reset(conn *trackedConn, blocking bool) {
	x.conn, x.raw, x.arm, x.pending = conn, nil, false, nil
	if sc, ok := conn.Conn.(syscall.Conn); ok && !blocking {
		if raw, err := sc.SyscallConn(); err == nil {
			x.raw = raw
		}
	}
	if x.stepFn == nil {
		x.stepFn = x.step
	}
}

// Write holds an armed request for Read, and writes anything else.
func (x *connIO) Write(p []byte) (int, error) {
	if x.arm {
		x.arm, x.pending = false, p
		return len(p), nil
	}
	return x.conn.Write(p)
}

// Read sends the pending request, if any, then reads (see connIO).
func (x *connIO) Read(p []byte) (int, error) {
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
func (x *connIO) step(fd uintptr) bool {
	if req := x.pending; req != nil {
		x.pending = nil
		n, err := syscall.Write(int(fd), req)
		for err == syscall.EINTR {
			n, err = syscall.Write(int(fd), req)
		}
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
	n, err := syscall.Read(int(fd), x.p)
	for err == syscall.EINTR {
		n, err = syscall.Read(int(fd), x.p)
	}
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
func (x *connIO) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: x.conn.LocalAddr(), Addr: x.conn.RemoteAddr(), Err: err}
}
