package redis

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func open(t testing.TB, url string) *Store {
	s, err := New(context.Background(), Config{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// raw is a plain client outside any store, as a foreign user would have.
func raw(t *testing.T, url string) rueidis.Client {
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// foreignKeys look like ours but are not: other namespaces, no trailing
// colon, a different first word.
func foreignKeys(ns string) []string {
	return []string{"foreign", "storebench", "storebench:" + ns, "storebench:" + ns + "_x:k", "xstorebench:" + ns + ":k", "storebench:sbt_other:k"}
}

func TestRedis(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{}).URL

	t.Run("OneConnectionPerClient", func(t *testing.T) {
		// Not parallel: it counts goroutines.
		ctx, cancel := context.WithCancel(context.Background()) // cancellable, no deadline: the risky kind
		defer cancel()
		s := open(t, url)
		before := runtime.NumGoroutine()
		const n = 3
		for range n {
			kv := storetest.KVClient(t, s)
			for i := range 100 {
				if err := kv.Set(ctx, []byte("k"), []byte("v"), 0); err != nil {
					t.Fatal(err)
				}
				if _, _, err := kv.Get(ctx, []byte("k"), nil); err != nil {
					t.Fatal(err)
				}
				if i%10 == 0 {
					if err := kv.Delete(ctx, []byte("k")); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		rc := raw(t, url)
		list, err := rc.Do(ctx, rc.B().ClientList().Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		name := "name=storebench:" + s.cfg.Namespace + " "
		if got := strings.Count(list, name); got != n {
			t.Errorf("%d connections named %q for %d clients:\n%s", got, name, n, list)
		}
		// Pipelining mode would start two goroutines per connection.
		if grown := runtime.NumGoroutine() - before; grown >= 2*n {
			t.Errorf("goroutines grew by %d for %d clients: commands went through rueidis's background pipeline", grown, n)
		}
	})

	opts := storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			c := raw(t, url)
			ctx := context.Background()
			keys := foreignKeys(storetest.Namespace(t))
			for _, k := range keys {
				if err := c.Do(ctx, c.B().Set().Key(k).Value("not ours").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			return func(t *testing.T) {
				for _, k := range keys {
					if v, err := c.Do(ctx, c.B().Get().Key(k).Build()).ToString(); err != nil || v != "not ours" {
						t.Errorf("foreign key %q: %q, %v", k, v, err)
					}
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			c := raw(t, url)
			e, err := c.Do(context.Background(), c.B().Scan().Cursor(0).Match(KeyPrefix+info.Namespace+":*").Count(10000).Build()).AsScanEntry()
			if err != nil {
				t.Fatal(err)
			}
			return len(e.Elements) > 0
		},
	}
	storetest.RunKVPaths(t, func(t *testing.T) store.Store { return open(t, url) }, opts)
	t.Run("Add", func(t *testing.T) {
		t.Parallel()
		storetest.RunAdd(t, func(t *testing.T) store.Store { return open(t, url) })
	})

	t.Run("NeverTouchesOutsidePrefix", func(t *testing.T) {
		// Not parallel: it writes the same foreign keys as KV's Foreign
		// check ("foreign", "storebench", …), with another value.
		ctx := context.Background()
		s := open(t, url)
		c := raw(t, url)
		keys := foreignKeys(s.cfg.Namespace)
		for _, k := range keys {
			if err := c.Do(ctx, c.B().Set().Key(k).Value("x").Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		kv := storetest.KVClient(t, s)
		for i := range 2500 { // more than one SCAN/UNLINK batch
			if err := kv.Set(ctx, []byte{byte(i), byte(i >> 8), '*', '?'}, []byte("v"), 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Reset(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if n, err := c.Do(ctx, c.B().Exists().Key(k).Build()).AsInt64(); err != nil || n != 1 {
				t.Errorf("foreign key %q gone: %v", k, err)
			}
		}
		e, err := c.Do(ctx, c.B().Scan().Cursor(0).Match(s.prefix+"*").Count(100000).Build()).AsScanEntry()
		if err != nil || len(e.Elements) != 0 {
			t.Errorf("%d keys left under %s: %v", len(e.Elements), s.prefix, err)
		}
		if err := c.Do(ctx, c.B().Del().Key(keys...).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Info", func(t *testing.T) {
		t.Parallel()
		info, err := open(t, url).Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"save", "appendonly", "appendfsync", "aof-use-rdb-preamble", "maxmemory"} {
			if _, ok := info.Settings[k]; !ok {
				t.Errorf("setting %s missing", k)
			}
		}
		if info.Version == "" || strings.Contains(info.Durability, "unknown") {
			t.Errorf("info = %+v", info)
		}
	})
}

func TestDurability(t *testing.T) {
	for want, conf := range map[string]map[string]string{
		"memory only: a restart loses everything": {"save": "", "appendonly": "no"},
		"AOF, fsync every write":                  {"save": "", "appendonly": "yes", "appendfsync": "always"},
		"AOF, fsync every second: the last ~1 s may be lost; plus RDB snapshots (save 60 1)": {"save": "60 1", "appendonly": "yes", "appendfsync": "everysec"},
		"RDB snapshots (save 3600 1) only: writes since the last snapshot are lost":          {"save": "3600 1", "appendonly": "no"},
		"unknown (CONFIG GET not allowed)":                                                   nil,
	} {
		if got := durability(conf); got != want {
			t.Errorf("durability(%v) = %q, want %q", conf, got, want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = New(context.Background(), Config{URL: "redis://u:hunter22@" + addr, Namespace: "sbt_x"})
	if err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "hunter22") {
		t.Fatalf("error = %v; want one naming %s without the password", err, addr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if c := errclass.Classify(err); c != errclass.ClassUnavailable {
		t.Errorf("class %s", c)
	}
	if err := (Config{URL: "http://x", Namespace: "a"}).Validate(); err == nil {
		t.Error("bad scheme accepted")
	}
}

func BenchmarkGet(b *testing.B) {
	storetest.BenchGet(b, open(b, servertest.Start(b, server.Redis, server.Options{}).URL))
}

func BenchmarkSet(b *testing.B) {
	storetest.BenchSet(b, open(b, servertest.Start(b, server.Redis, server.Options{}).URL))
}

func BenchmarkGetBatch16(b *testing.B) {
	storetest.BenchGetBatch(b, open(b, servertest.Start(b, server.Redis, server.Options{}).URL))
}
