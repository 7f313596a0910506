package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/pollio"
)

// TestOneReadPerQuery checks that a query makes no read(2) before its reply
// can be there (pollconn.go): through net.Conn, pgconn's write then read
// made 2.00 reads per Get, 2.03 per Set and 1.85 per Delete, the first
// failing with EAGAIN; now a Get reads once, and a Set or Delete about 1.25
// times (the server's reply to a write sometimes comes in two segments).
//
// On one P: with an idle one, pgconn's per-query timer (its 15 ms
// slow-write guard) can wake the thread waiting in the poller, whose
// eventfd read(2) would count here too.
func TestOneReadPerQuery(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	s := open(t, servertest.Start(t, server.Postgres, server.Options{}).URL, "")
	cl, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c := cl.(*Client)
	if c.polled == nil {
		t.Fatal("the client's socket is not polled (pollconn.go)")
	}
	if err := c.Set(ctx, []byte("k"), []byte("value"), 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		max  float64 // with a little room for the runtime's and the test's own reads
		op   func() error
	}{
		{"Get", 1.1, func() error {
			v, ok, err := c.Get(ctx, []byte("k"), nil)
			if err == nil && (!ok || string(v) != "value") {
				t.Fatalf("get: %q %v", v, ok)
			}
			return err
		}},
		{"Set", 1.5, func() error { return c.Set(ctx, []byte("s"), []byte("v"), 0) }},
		{"Delete", 1.5, func() error { return c.Delete(ctx, []byte("d")) }},
	} {
		perOp, err := pollio.ReadsPerOp(1000, tc.op)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if perOp > tc.max {
			t.Errorf("%s: %.2f read(2) calls per op, want at most %.1f", tc.name, perOp, tc.max)
		}
	}
}

// TestHeldWriteWithAReadWaiting checks polledConn's two paths: an armed
// write is sent by the next read, and, when a read is already waiting (the
// reader goroutine pgconn starts after a 15 ms flush), written at once, so
// that its reply can end that read.
func TestHeldWriteWithAReadWaiting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // answers each 4-byte request with its bytes reversed
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 4)
		for {
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			if _, err := c.Write([]byte{b[3], b[2], b[1], b[0]}); err != nil {
				return
			}
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	p := &polledConn{Conn: nc}
	p.io.Reset(nc, false)
	if !p.io.Polled() {
		t.Fatal("not polled")
	}
	read := func() string {
		b := make([]byte, 4)
		if _, err := io.ReadFull(p, b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	p.setArm(true)
	if n, err := p.Write([]byte("abcd")); n != 4 || err != nil {
		t.Fatalf("held write: %d, %v", n, err)
	}
	p.setArm(false)
	if got := read(); got != "dcba" {
		t.Fatalf("reply to a held request: %q", got)
	}

	got := make(chan string, 1)
	go func() {
		b := make([]byte, 4)
		_, err := io.ReadFull(p, b)
		if err != nil {
			b = []byte(err.Error())
		}
		got <- string(b)
	}()
	for waiting := false; !waiting; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		waiting = p.reading
		p.mu.Unlock()
	}
	p.setArm(true)
	if n, err := p.Write([]byte("wxyz")); n != 4 || err != nil {
		t.Fatalf("write with a read waiting: %d, %v", n, err)
	}
	p.setArm(false)
	select {
	case g := <-got:
		if g != "zyxw" {
			t.Fatalf("reply to a request written with a read waiting: %q", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request armed while a read was waiting was held, never sent")
	}
}

// TestGetOnATerminatedBackend checks that a Get on a connection whose
// backend was terminated fails with the server's word for it (57P01, sent
// before the connection closes), and that the client does not hang.
func TestGetOnATerminatedBackend(t *testing.T) {
	ctx := context.Background()
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	s := open(t, url, "")
	cl, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c := cl.(*Client)
	if _, _, err := c.Get(ctx, []byte("k"), nil); err != nil {
		t.Fatal(err)
	}
	exec(t, sql(t, url), "SELECT pg_terminate_backend($1)", int32(c.pg.PID()))
	time.Sleep(100 * time.Millisecond) // the FATAL message is on its way
	_, _, err = c.Get(ctx, []byte("k"), nil)
	if pe, ok := errors.AsType[*pgconn.PgError](err); !ok || pe.Code != "57P01" {
		t.Fatalf("Get on a terminated backend: %v, want the server's 57P01", err)
	}
	if _, _, err := c.Get(ctx, []byte("k"), nil); err == nil {
		t.Fatal("a Get after the connection closed succeeded")
	}
}
