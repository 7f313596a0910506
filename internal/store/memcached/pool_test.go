package memcached

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func openPool(t testing.TB, url string) *PoolStore {
	p, err := NewPool(context.Background(), PoolConfig{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func TestMemcachedPool(t *testing.T) {
	c := servertest.StartCluster(t, server.Memcached, server.Options{}, server.ClusterOptions{})
	url := c.URL()
	open := func(t *testing.T) store.Store { return openPool(t, url) }
	opts := storetest.Options{LargeValue: 512 << 10} // item_size_max is 1 MiB with the item's overhead
	t.Run("KV", func(t *testing.T) { storetest.RunKVOptions(t, open, opts) })
	t.Run("KV/blocking-io", func(t *testing.T) { storetest.RunKVOptions(t, storetest.Blocking(open), opts) })
	t.Run("Batch", func(t *testing.T) { storetest.RunBatchOptions(t, open, opts) })
	t.Run("Add", func(t *testing.T) { storetest.RunAdd(t, open) })

	// Every server holds and serves its share of the keys, the one
	// gomemcache's ServerList would give it.
	t.Run("EveryServerServes", func(t *testing.T) { storetest.NodeSpread(t, openPool(t, url), 3) })
	// KeyNodes names the server each key goes to.
	t.Run("KeyNodes", func(t *testing.T) { storetest.KeyNodes(t, openPool(t, url), 3) })
}

// pick chooses the server gomemcache's ServerList.PickServer chooses.
func TestPoolPickIsServerLists(t *testing.T) {
	addrs := []string{"127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"}
	var list memcache.ServerList
	if err := list.SetServers(addrs...); err != nil {
		t.Fatal(err)
	}
	pc := &PoolClient{clients: make([]*Client, len(addrs))}
	for i := range 5000 {
		key := fmt.Appendf(nil, "k%d", i)
		if i%100 == 0 {
			key = []byte(strings.Repeat("x", 240+i%300)) // gomemcache hashes 256 bytes at most
		}
		want, err := list.PickServer(string(key))
		if err != nil {
			t.Fatal(err)
		}
		if got := addrs[pc.pick(key)]; got != want.String() {
			t.Fatalf("key %q: pick %s, ServerList %s", key, got, want)
		}
	}
}

func TestPoolURL(t *testing.T) {
	for raw, want := range map[string]string{
		"memcached-pool://h1:11211,h2:11212/":                    "",
		"memcached-pool://h1:11211":                              "",
		"memcached-pool://h1:11211,h2/":                          "port is not a number",
		"memcached-pool://h1:11211,:1/":                          "server 2 of 2",
		"memcached-pool://u:S3cr3tPw@h1:11211/":                  "no users or passwords",
		"memcached-pool://h1:11211/x":                            "a pool URL is its servers alone",
		"memcached-pool://h1:11211/?timeout=1":                   "a pool URL is its servers alone",
		"memcached-pool://" + strings.Repeat("h:1,", 64) + "h:1": "65 servers: at most 64",
	} {
		err := CheckPoolURL(raw)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "S3cr3tPw") {
			t.Errorf("%q: the error quotes the password: %v", raw, err)
		}
	}
}
