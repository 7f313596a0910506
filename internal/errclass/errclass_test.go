package errclass

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// Classify finds a class attached anywhere in the chain first, then reads
// deadlines and dead connections; anything else is other.
func TestClassify(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.Dial("tcp", addr) // nothing listens there any more
	conn, peer := net.Pipe()
	defer peer.Close()
	conn.SetReadDeadline(time.Now())
	_, netTimeout := conn.Read(make([]byte, 1))
	conn.Close()

	for name, tc := range map[string]struct {
		err  error
		want Class
	}{
		"attached":              {fmt.Errorf("op: %w", WithClass(ClassConflict, context.DeadlineExceeded)), ClassConflict},
		"context deadline":      {fmt.Errorf("op: %w", context.DeadlineExceeded), ClassTimeout},
		"os deadline":           {os.ErrDeadlineExceeded, ClassTimeout},
		"net timeout":           {netTimeout, ClassTimeout},
		"connection refused":    {refused, ClassUnavailable},
		"connection reset":      {fmt.Errorf("read: %w", syscall.ECONNRESET), ClassUnavailable},
		"use of closed network": {fmt.Errorf("write: %w", net.ErrClosed), ClassUnavailable},
		"anything else":         {errors.New("boom"), ClassOther},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: Classify(%v) = %q, want %q", name, tc.err, got, tc.want)
		}
	}
	if WithClass(ClassTimeout, nil) != nil {
		t.Error("WithClass of nil is not nil")
	}
	for i, c := range Classes {
		if c.Index() != i {
			t.Errorf("%s.Index() = %d, want %d", c, c.Index(), i)
		}
	}
	if got := Class("novel").Index(); got != ClassOther.Index() {
		t.Errorf("an unknown class's Index = %d, want other's %d", got, ClassOther.Index())
	}
}
