// Package blockio gives a driver a net.Conn (Wrap) that reads and writes
// with blocking system calls on the calling goroutine's OS thread instead of
// parking the goroutine on Go's network poller.
//
// Why: a closed-loop client with one goroutine per connection and one
// request in flight on each parks after every request and is made runnable
// again by the poller, which on a small machine hands it to another OS
// thread through a futex wake-up: CPU and latency the server on the same
// machine needs. A thread blocked in read(2) is woken by the kernel
// directly, as a C client's is. Only up to one connection per thread
// (see Use).
//
// Wrap moves a freshly dialed socket to a blocking duplicate that the poller
// does not watch (a watched one would wake the poller on every reply for
// nothing). Deadlines still work: when one passes, the socket is shut down,
// which wakes a blocked read or write with os.ErrDeadlineExceeded and leaves
// the connection unusable, which is what a driver does with a connection
// whose deadline passed mid-request anyway.
package blockio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Mode names a connection's I/O for the result.
const (
	ModeBlocking = "blocking" // a blocked OS thread per connection (Wrap)
	ModePoller   = "poller"   // Go's network poller
)

// ModeOf names the mode of a connection that is blocking or not.
func ModeOf(blocking bool) string {
	if blocking {
		return ModeBlocking
	}
	return ModePoller
}

type connsKey struct{}

// WithConnections tells the stores that the clients opened with ctx are n
// connections driven at once (a phase's workers), for Use. Admin
// connections and connect-per-op clients are opened without it.
func WithConnections(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, connsKey{}, n)
}

// Use reports whether a client opened with ctx should Wrap its connection:
// when the phase has at most one connection per OS thread that may run Go
// code (GOMAXPROCS), so every thread blocked in a read holds a P of its own.
//
// With more, the runtime starves some of them: in a system call a thread
// keeps its P, so one whose read returns while every P is held by a thread
// blocked in read finds none, waits in the global run queue, and only
// sysmon's retake (after 20 µs, backing off to 10 ms) frees one. Measured on
// a 2-CPU VM, PostgreSQL point reads over 8 connections with GOMAXPROCS 2:
// blocking p50 17–20 µs but p99.9 23 ms (poller: 23–54 µs and 1.0–1.5 ms)
// at the same throughput, which is an unfair client, not a faster one;
// GOMAXPROCS 9 made it fair but 9–21% slower than the poller.
//
// At or below one connection per thread, blocking wins (ops/s, poller →
// blocking): Redis 1 connection 12k → 19k (p50 60–95 → 16 µs), Memcached
// 15–23k → 21–28k, PostgreSQL 1 connection 13–14k → 17–19k and 2
// connections 42–49k → 60–65k, MariaDB 1 connection 7.1k → 8.0–8.8k.
func Use(ctx context.Context) bool {
	n, ok := ctx.Value(connsKey{}).(int)
	return ok && n >= 1 && n <= runtime.GOMAXPROCS(0)
}

// Conn is a socket whose reads and writes block their OS thread (Wrap).
type Conn struct {
	net.Conn // the dialed connection, closed: kept for its addresses

	file *os.File // the blocking duplicate of the socket

	mu       sync.Mutex  // guards deadline, timer and file's shutdown
	deadline time.Time   // zero: none
	timer    *time.Timer // goes off at deadline, made by the first one
	expired  atomic.Bool // a deadline passed: the socket is shut down
	closed   atomic.Bool
}

// Wrap returns c moved to blocking I/O, for a driver's dial function: the
// driver sets the connection up with it, and the deadlines it sets and moves
// keep working. A connection that is not a socket (it has no descriptor) is
// returned as it is, still served by the poller. On an error c is closed.
func Wrap(c net.Conn) (net.Conn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	f, err := blockingDup(sc)
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Close(); err != nil {
		f.Close()
		return nil, fmt.Errorf("blockio: close the polled socket: %w", err)
	}
	return &Conn{Conn: c, file: f}, nil
}

// blockingDup returns a blocking duplicate of sc's descriptor.
func blockingDup(sc syscall.Conn) (*os.File, error) {
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("blockio: %w", err)
	}
	dup := -1
	var dupErr error
	if err := raw.Control(func(fd uintptr) {
		// A plain dup: Go's poller does not know this descriptor, and
		// closing the original removes the original from its epoll set.
		dup, dupErr = syscall.Dup(int(fd))
	}); err != nil {
		return nil, fmt.Errorf("blockio: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("blockio: dup socket: %w", dupErr)
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, false); err != nil {
		syscall.Close(dup)
		return nil, fmt.Errorf("blockio: set blocking: %w", err)
	}
	// A blocking descriptor: os.NewFile does not hand it to the poller, and
	// its reads and writes block in the kernel. os.File counts the calls in
	// progress, so Close cannot free the number under a blocked read.
	return os.NewFile(uintptr(dup), "socket"), nil
}

// Read reads from the socket, blocking the OS thread.
func (c *Conn) Read(p []byte) (int, error) {
	if c.expired.Load() {
		return 0, c.opErr("read", os.ErrDeadlineExceeded)
	}
	n, err := c.file.Read(p)
	if err == io.EOF && !c.expired.Load() {
		return n, io.EOF
	}
	return n, c.ioErr("read", err)
}

// Write writes all of p, blocking the OS thread.
func (c *Conn) Write(p []byte) (int, error) {
	if c.expired.Load() {
		return 0, c.opErr("write", os.ErrDeadlineExceeded)
	}
	n, err := c.file.Write(p)
	return n, c.ioErr("write", err)
}

// ioErr is what a read or write returns for err: nil for nil,
// a timeout once a deadline has passed (the shutdown it caused is not the
// peer's doing), else err as the net package would give it.
func (c *Conn) ioErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case c.expired.Load():
		return c.opErr(op, os.ErrDeadlineExceeded)
	}
	return c.opErr(op, cause(op, err))
}

// Close shuts the socket down first, which wakes a read or write blocked on
// it, then closes it.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return c.opErr("close", net.ErrClosed)
	}
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.shutdown()
	c.mu.Unlock()
	return c.file.Close()
}

// SetDeadline sets both deadlines: there is one for both.
// Drivers move it around every request (rueidis, gomemcache): one timer,
// reset, so that costs no allocation.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if c.timer != nil {
		c.timer.Stop()
	}
	if t.IsZero() {
		return nil
	}
	d := time.Until(t)
	if d <= 0 {
		c.expire()
		return nil
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.fire)
	} else {
		c.timer.Reset(d)
	}
	return nil
}

// fire runs when the timer goes off; the deadline may have moved since.
func (c *Conn) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
		c.expire()
	}
}

// SetReadDeadline is SetDeadline: a socket shut down for a late read
// cannot be written either.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.SetDeadline(t)
}

// SetWriteDeadline is SetDeadline.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.SetDeadline(t)
}

// expire marks the deadline passed and shuts the socket down; c.mu is held.
func (c *Conn) expire() {
	if c.expired.Swap(true) {
		return
	}
	c.shutdown()
}

// shutdown wakes any read or write blocked on the socket; c.mu is held.
func (c *Conn) shutdown() {
	raw, err := c.file.SyscallConn()
	if err != nil {
		return // already closed
	}
	_ = raw.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
}

func (c *Conn) opErr(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// cause turns os.File's *PathError ("read socket: ...") into what the net
// package puts in a *net.OpError: an *os.SyscallError around the errno, so
// callers that test for ECONNRESET or net.ErrClosed see the same errors.
func cause(op string, err error) error {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err
	}
	if errors.Is(pe.Err, os.ErrClosed) {
		return net.ErrClosed
	}
	var errno syscall.Errno
	if errors.As(pe.Err, &errno) {
		return os.NewSyscallError(op, errno)
	}
	return pe.Err
}
