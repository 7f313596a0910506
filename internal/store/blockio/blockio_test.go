package blockio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// pair returns a blocked client connection and the server side of it.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	wc, err := Wrap(nc)
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.FailNow()
	}
	t.Cleanup(func() { wc.Close(); srv.Close() })
	c, ok := wc.(*Conn)
	if !ok {
		t.Fatalf("Wrap did not switch a TCP connection to blocking I/O: got a %T", wc)
	}
	return c, srv
}

// within fails t unless f returns within d: for calls that must be woken,
// not for timing them.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

func TestRoundTripAfterBlock(t *testing.T) {
	c, srv := pair(t)
	go io.Copy(srv, srv)                                   // echo
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: several partial writes and reads
	errc := make(chan error, 1)
	go func() { _, err := c.Write(big); errc <- err }()
	got := make([]byte, len(big))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("echoed bytes differ")
	}
}

func TestPeerCloseIsEOF(t *testing.T) {
	c, srv := pair(t)
	srv.Close()
	var err error
	within(t, 10*time.Second, "read after the peer closed", func() { _, err = c.Read(make([]byte, 16)) })
	if err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
}

func TestPeerResetIsECONNRESET(t *testing.T) {
	c, srv := pair(t)
	if err := srv.(*net.TCPConn).SetLinger(0); err != nil { // close sends RST
		t.Fatal(err)
	}
	srv.Close()
	var err error
	within(t, 10*time.Second, "read after a reset", func() {
		for err == nil {
			_, err = c.Read(make([]byte, 16))
		}
	})
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) {
		t.Fatalf("read after a reset: %v (%T), want a *net.OpError with ECONNRESET, as the net package gives", err, err)
	}
}

func TestDeadlineWakesBlockedRead(t *testing.T) {
	c, _ := pair(t)
	if err := c.SetDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var err error
	within(t, 10*time.Second, "read past its deadline", func() { _, err = c.Read(make([]byte, 16)) })
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want a timeout (os.ErrDeadlineExceeded)", err)
	}
}

func TestPastDeadlineFailsAtOnce(t *testing.T) {
	c, _ := pair(t)
	if err := c.SetDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
}

// A driver moves the deadline ahead before every request: a deadline that
// was moved or cleared must not go off.
func TestMovedDeadlineDoesNotFire(t *testing.T) {
	c, srv := pair(t)
	go io.Copy(srv, srv)
	for range 20 {
		if err := c.SetDeadline(time.Now().Add(5 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if err := c.SetDeadline(time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatalf("write after the deadlines were moved: %v", err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read after the deadlines were moved: %q, %v", buf, err)
	}
}

func TestCloseWakesBlockedRead(t *testing.T) {
	c, _ := pair(t)
	errc := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 16)); errc <- err }()
	time.Sleep(20 * time.Millisecond) // let it block (if it has not, it fails all the same)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a read blocked when the connection closed returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake a blocked read")
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

func TestNotASocketStaysPolled(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c, err := Wrap(a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c != a {
		t.Fatalf("a net.Pipe end has no descriptor to block on, yet Wrap returned a %T", c)
	}
	go b.Write([]byte("hi"))
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read through the unblocked connection: %q, %v", buf, err)
	}
}

func TestUse(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	bg := context.Background()
	for _, tc := range []struct {
		ctx  context.Context
		want bool
	}{
		{bg, false}, // not a phase's client: admin connections keep the poller
		{WithConnections(bg, 1), true},
		{WithConnections(bg, procs), true},
		{WithConnections(bg, procs+1), false}, // a thread's read would wait for a P
		{WithConnections(bg, 0), false},
	} {
		n, _ := tc.ctx.Value(connsKey{}).(int)
		if got := Use(tc.ctx); got != tc.want {
			t.Errorf("Use(%d connections, GOMAXPROCS %d) = %v, want %v", n, procs, got, tc.want)
		}
	}
}
