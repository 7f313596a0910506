package memcached

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/testkit"
)

func open(t testing.TB, url string) *Store {
	s, err := New(context.Background(), Config{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func TestMemcached(t *testing.T) {
	url := servertest.Start(t, server.Memcached, server.Options{}).URL
	addr := strings.TrimPrefix(url, "memcached://")

	t.Run("OneConnectionPerClient", func(t *testing.T) {
		// Not parallel: it counts the server's connections.
		ctx := context.Background()
		s := open(t, url)
		read := func() int {
			st, err := s.stats(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(st["curr_connections"])
			return n
		}
		// The server drops a closed connection (such as the previous stats
		// one) a moment later: read until two readings agree.
		conns := func() int {
			n := -1
			testkit.WaitFor(time.Second, 20*time.Millisecond, func() bool {
				m := read()
				same := m == n
				n = m
				return same
			})
			return n
		}
		before := conns()
		const n = 3
		for range n {
			kv := storetest.KVClient(t, s)
			for i := range 100 {
				k := []byte("k" + strconv.Itoa(i%7))
				if err := kv.Set(ctx, k, []byte("v"), 0); err != nil {
					t.Fatal(err)
				}
				if _, _, err := kv.Get(ctx, []byte("missing"), nil); err != nil {
					t.Fatal(err)
				}
				if err := kv.Delete(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := conns() - before; got != n {
			t.Errorf("%d connections for %d clients", got, n)
		}
	})

	opts := storetest.Options{
		LargeValue: 512 << 10, // the default item_size_max is 1 MiB including the item's overhead
		Foreign: func(t *testing.T) func(t *testing.T) {
			mc := memcache.New(addr)
			keys := []string{"foreign", "sb:sbt_other:1:k", "sb:" + storetest.Namespace(t) + ":1:k"}
			for _, k := range keys {
				if err := mc.Set(&memcache.Item{Key: k, Value: []byte("not ours")}); err != nil {
					t.Fatal(err)
				}
			}
			return func(t *testing.T) {
				for _, k := range keys {
					if it, err := mc.Get(k); err != nil || string(it.Value) != "not ours" {
						t.Errorf("foreign key %q: %v", k, err)
					}
				}
			}
		},
	}
	storetest.RunKVPaths(t, func(t *testing.T) store.Store { return open(t, url) }, opts)
	t.Run("Add", func(t *testing.T) {
		t.Parallel()
		storetest.RunAdd(t, func(t *testing.T) store.Store { return open(t, url) })
	})

	t.Run("KeyEncoding", func(t *testing.T) {
		t.Parallel()
		s := open(t, url)
		c := storetest.KVClient(t, s).(*Client)
		p := "sb:" + s.cfg.Namespace + ":1:"
		for key, want := range map[string]string{
			"plain:key-1":               p + "plain:key-1",
			"a":                         p + "a",
			"#YQ":                       p + "#I1lR",
			"with space":                p + "#d2l0aCBzcGFjZQ",
			"":                          p,
			strings.Repeat("x", 300):    "$",
			string([]byte{0, 0xff, 10}): p + "#AP8K",
		} {
			got := c.keyFor([]byte(key))
			if want == "$" {
				if !strings.HasPrefix(got, p+"$") || len(got) != len(p)+1+43 {
					t.Errorf("long key -> %q", got)
				}
				continue
			}
			if got != want {
				t.Errorf("keyFor(%q) = %q, want %q", key, got, want)
			}
		}
		// The longest raw key that fits stays raw; one more byte is encoded.
		fit := bytes.Repeat([]byte("y"), maxKey-len(p))
		if got := c.keyFor(fit); got != p+string(fit) {
			t.Errorf("key of %d bytes not kept raw", len(fit))
		}
		if got := c.keyFor(append(fit, 'y')); !strings.HasPrefix(got, p+"$") {
			t.Errorf("key of %d bytes not hashed: %q", len(fit)+1, got)
		}
		if err := s.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := c.keyFor([]byte("a")); got != "sb:"+s.cfg.Namespace+":2:a" {
			t.Errorf("after Reset: %q", got)
		}
	})

	t.Run("Info", func(t *testing.T) {
		t.Parallel()
		info, err := open(t, url).Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"num_threads", "maxbytes", "item_size_max", "evictions"} {
			if info.Settings[k] == "" {
				t.Errorf("setting %s missing: %v", k, info.Settings)
			}
		}
		if info.Version == "" || info.Durability == "" {
			t.Errorf("info = %+v", info)
		}
	})
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = New(context.Background(), Config{URL: "memcached://" + addr, Namespace: "sbt_x"})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error = %v; want one naming %s", err, addr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if c := errclass.Classify(err); c != errclass.ClassUnavailable {
		t.Errorf("class %s", c)
	}
	for _, bad := range []string{"redis://x:1", "memcached://", "memcached://h:1/path"} {
		if err := (Config{URL: bad, Namespace: "a"}).Validate(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	storetest.BenchGet(b, open(b, servertest.Start(b, server.Memcached, server.Options{}).URL))
}

func BenchmarkSet(b *testing.B) {
	storetest.BenchSet(b, open(b, servertest.Start(b, server.Memcached, server.Options{}).URL))
}

func BenchmarkGetBatch16(b *testing.B) {
	storetest.BenchGetBatch(b, open(b, servertest.Start(b, server.Memcached, server.Options{}).URL))
}

// BenchmarkGetClients is Get at make bench's concurrency (50 clients, a
// connection each, 3-byte values): client-µs/op is the process's CPU per
// get (pollio.CPUPerOp), the figure the versus tables compare with
// memaslap's.
func BenchmarkGetClients(b *testing.B) {
	storetest.BenchGetClients(b, open(b, servertest.Start(b, server.Memcached, server.Options{}).URL), 50, []byte("vvv"))
}
