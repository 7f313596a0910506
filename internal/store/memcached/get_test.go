package memcached

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestDirectPath checks Get and Set's own protocol code (get.go) against a
// real memcached: exact bytes on the wire for a lazily opened client, one
// connection shared with gomemcache's operations, values that span the
// reader's buffer and contain the protocol's own delimiters, and recovery
// after the connection broke.
func TestDirectPath(t *testing.T) {
	url := servertest.Start(t, server.Memcached, server.Options{}).URL
	ctx := context.Background()
	s := open(t, url)
	// stats reads the server's counters, on a connection of its own that
	// sends "stats\r\n": the reading counts both.
	stats := func() map[string]int64 {
		t.Helper()
		st, err := s.stats(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, k := range []string{"bytes_read", "total_connections"} {
			if m[k], err = strconv.ParseInt(st[k], 10, 64); err != nil {
				t.Fatalf("stat %s = %q", k, st[k])
			}
		}
		return m
	}

	t.Run("LazyFirstGetIsTheGetAlone", func(t *testing.T) {
		lc, err := s.OpenPerRequest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := lc.(*Client)
		defer c.Close()
		before := stats()
		if _, ok, err := c.Get(ctx, []byte("lazy"), nil); err != nil || ok {
			t.Fatalf("get of a missing key: ok %v, %v", ok, err)
		}
		after := stats()
		wantRead := int64(len("get "+c.keyFor([]byte("lazy"))+"\r\n") + len("stats\r\n"))
		if got := after["bytes_read"] - before["bytes_read"]; got != wantRead {
			t.Errorf("server read %d bytes for a lazy client's first get and a stats, want %d: no ping before the get", got, wantRead)
		}
		if got := after["total_connections"] - before["total_connections"]; got != 2 {
			t.Errorf("%d connections for one lazy get and one stats, want 2", got)
		}
	})

	t.Run("OneConnectionWhicheverPathDials", func(t *testing.T) {
		conns0 := stats()["total_connections"]
		lc, err := s.OpenPerRequest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := lc.(*Client)
		if err := c.Set(ctx, []byte("shared"), []byte("v"), 0); err != nil { // direct path dials
			t.Fatal(err)
		}
		if err := c.Delete(ctx, []byte("shared")); err != nil { // gomemcache adopts it
			t.Fatal(err)
		}
		vals, err := c.GetBatch(ctx, [][]byte{[]byte("a"), []byte("b")}, nil, make([]bool, 2))
		if err != nil || len(vals) != 2 {
			t.Fatal(vals, err)
		}
		if _, _, err := c.Get(ctx, []byte("shared"), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// The client's one connection, and the stats call's.
		if got := stats()["total_connections"] - conns0; got != 2 {
			t.Errorf("the client made %d connections, want 1", got-1)
		}
		if c.conn != nil {
			t.Error("Close left the client's connection set")
		}
	})

	t.Run("Values", func(t *testing.T) {
		c := openClient(t, s)
		tricky := bytes.Repeat([]byte("x\r\nEND\r\nVALUE k 0 3\r\n"), 1000) // 20 KB, five times the reader's buffer
		for _, v := range [][]byte{{}, []byte("\r\n"), tricky, bytes.Repeat([]byte{0, 0xff}, 4097)} {
			if err := c.Set(ctx, []byte("v"), v, 0); err != nil {
				t.Fatal(err)
			}
			got, ok, err := c.Get(ctx, []byte("v"), make([]byte, 3, 8))
			if err != nil || !ok || !bytes.Equal(got, v) {
				t.Fatalf("%d-byte value: got %d bytes ok %v err %v", len(v), len(got), ok, err)
			}
			if _, ok, err := c.Get(ctx, []byte("absent"), nil); err != nil || ok {
				t.Fatalf("after a %d-byte value, a miss: ok %v err %v", len(v), ok, err)
			}
		}
	})

	t.Run("RecoversAfterABrokenConnection", func(t *testing.T) {
		c := openClient(t, s)
		if err := c.Set(ctx, []byte("r"), []byte("before"), 0); err != nil {
			t.Fatal(err)
		}
		c.conn.Conn.Close() // as if the server had gone: neither path knows
		if _, _, err := c.Get(ctx, []byte("r"), nil); err == nil {
			t.Fatal("get on a closed connection did not fail")
		}
		got, ok, err := c.Get(ctx, []byte("r"), nil)
		if err != nil || !ok || string(got) != "before" {
			t.Fatalf("the get after: %q ok %v err %v", got, ok, err)
		}
	})

	t.Run("UnreachableIsUnavailable", func(t *testing.T) {
		down := &Store{cfg: s.cfg, addr: "127.0.0.1:1"} // nothing listens on port 1
		lc, err := down.OpenPerRequest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close()
		_, _, err = lc.(*Client).Get(ctx, []byte("k"), nil)
		if c := errclass.Classify(err); c != errclass.ClassUnavailable {
			t.Errorf("get from a closed port: %v classified %v, want unavailable", err, c)
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		c := openClient(t, s)
		c.s = &Store{cfg: Config{Timeout: time.Nanosecond}, addr: s.addr}
		c.s.gen.Store(s.gen.Load())
		c.conn.until, c.conn.slack = time.Time{}, 0 // as dial gives a 1 ns timeout
		start := time.Now()
		if _, _, err := c.Get(ctx, []byte("t"), nil); err == nil {
			t.Error("a get with a 1 ns timeout succeeded")
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a 1 ns timeout took %v", d)
		}
	})
}

func openClient(t *testing.T, s *Store) *Client {
	t.Helper()
	c, err := s.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Client)
}

// TestMultiGet checks GetBatch's own multi-get (getMulti) where a reply
// must be matched to the key asked: misses between hits, a key that is the
// prefix of the next one, keys storebench must encode (base64, or a hash
// when long) side by side in one command longer than any single key may
// be, values with the protocol's delimiters, and one batch answered
// entirely by misses.
func TestMultiGet(t *testing.T) {
	srv := servertest.Start(t, server.Memcached, server.Options{})
	ctx := context.Background()
	c := storetest.KVClient(t, open(t, srv.URL))
	long := bytes.Repeat([]byte("L"), 400)
	keys := [][]byte{[]byte("a"), []byte("ab"), []byte("miss-1"), []byte("key with spaces"), long, []byte("miss-2"), []byte("abc"), []byte("#a")}
	for i := range 40 {
		keys = append(keys, []byte("k:"+strconv.Itoa(i)))
	}
	want := map[string][]byte{}
	for i, k := range keys {
		if bytes.HasPrefix(k, []byte("miss")) {
			continue
		}
		v := []byte("v" + strconv.Itoa(i) + "\r\nEND\r\n")
		want[string(k)] = v
		if err := c.Set(ctx, k, v, 0); err != nil {
			t.Fatal(err)
		}
	}
	b := c.(store.Batcher)
	dst, found := make([][]byte, len(keys)), make([]bool, len(keys))
	for round := range 2 { // the second reuses the buffers
		got, err := b.GetBatch(ctx, keys, dst, found)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i, k := range keys {
			w, hit := want[string(k)]
			if found[i] != hit || !bytes.Equal(got[i], w) {
				t.Errorf("round %d key %.20q: %q %v, want %q %v", round, k, got[i], found[i], w, hit)
			}
		}
		dst = got
	}
	misses := [][]byte{[]byte("miss-1"), []byte("miss-2")}
	if _, err := b.GetBatch(ctx, misses, dst[:2], found[:2]); err != nil || found[0] || found[1] {
		t.Errorf("all misses: %v %v", found[:2], err)
	}
	// The connection is still in step.
	if v, ok, err := c.Get(ctx, []byte("ab"), nil); err != nil || !ok || !bytes.Equal(v, want["ab"]) {
		t.Errorf("get after the multi-gets: %q %v %v", v, ok, err)
	}
}
