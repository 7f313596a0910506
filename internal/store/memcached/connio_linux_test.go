package memcached

import (
	"context"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/pollio"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestOneReadPerGet checks that a get on a connection served by the poller
// makes one read(2), the one that gets its reply: before pollio, each get
// first read the socket before the reply could be there (EAGAIN), ~1.9
// reads per get. Sets (one per call and pipelined) and multi-gets alike.
func TestOneReadPerGet(t *testing.T) {
	url := servertest.Start(t, server.Memcached, server.Options{}).URL
	ctx := context.Background()
	c := openClient(t, open(t, url))
	if c.blocking {
		t.Fatal("the client's reads block: this test is about the poller's")
	}
	if err := c.Set(ctx, []byte("k"), []byte("value"), 0); err != nil {
		t.Fatal(err)
	}
	keys, vals := [][]byte{[]byte("k"), []byte("k2")}, [][]byte{[]byte("v"), []byte("v2")}
	dst, found := make([][]byte, 2), make([]bool, 2)
	const ops = 1000
	for _, tc := range []struct {
		name string
		op   func() error
	}{
		{"Get", func() error {
			v, ok, err := c.Get(ctx, []byte("k"), nil)
			if err == nil && (!ok || string(v) != "value") {
				t.Fatalf("get: %q %v", v, ok)
			}
			return err
		}},
		{"Set", func() error { return c.Set(ctx, []byte("s"), []byte("v"), 0) }},
		{"SetBatch", func() error { return c.SetBatch(ctx, keys, vals, 0) }},
		{"GetBatch", func() error {
			_, err := c.GetBatch(ctx, keys, dst, found)
			return err
		}},
	} {
		perOp, err := pollio.ReadsPerOp(ops, tc.op)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A little room for the runtime's and the test's own reads.
		if perOp > 1.1 {
			t.Errorf("%s: %.2f read(2) calls per op, want 1", tc.name, perOp)
		}
	}
}

// TestDeadlineOnAStuckServer checks that Config.Timeout still fails a get,
// a set and a multi-get whose server stopped answering (SIGSTOP), within
// Timeout to 1.25×Timeout (plus scheduling), with a timeout-class error,
// and that the client works again once the server does.
func TestDeadlineOnAStuckServer(t *testing.T) {
	srv := servertest.Start(t, server.Memcached, server.Options{})
	t.Cleanup(func() { srv.Resume() })
	ctx := context.Background()
	const timeout = 300 * time.Millisecond
	s, err := New(ctx, Config{URL: srv.URL, Namespace: storetest.Namespace(t), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	c := openClient(t, s)
	if c.blocking {
		t.Fatal("the client's reads block: this test is about the poller's")
	}
	if err := c.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func() error{
		"get": func() error { _, _, err := c.Get(ctx, []byte("k"), nil); return err },
		"set": func() error { return c.Set(ctx, []byte("k"), []byte("v"), 0) },
		"get batch": func() error {
			_, err := c.GetBatch(ctx, [][]byte{[]byte("k")}, nil, make([]bool, 1))
			return err
		},
	}
	for name, op := range ops {
		if _, err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := op()
		took := time.Since(start)
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		if cl := errclass.Classify(err); cl != errclass.ClassTimeout {
			t.Errorf("%s on a stopped server: %v (class %q), want a timeout", name, err, cl)
		}
		if took < timeout-timeout/10 || took > timeout*5/4+time.Second {
			t.Errorf("%s on a stopped server failed after %v, want %v to %v", name, took, timeout, timeout*5/4)
		}
		if err := op(); err != nil {
			t.Errorf("%s once the server answers again: %v", name, err)
		}
	}
}
