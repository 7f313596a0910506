package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func openCluster(t testing.TB, url string) *ClusterStore {
	s, err := NewCluster(context.Background(), ClusterConfig{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// rawCluster is a plain cluster client outside any store.
func rawCluster(t *testing.T, addrs []string) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// keysOn counts the keys matching pattern on every node of c, by address.
func keysOn(t *testing.T, c rueidis.Client, pattern string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for addr, node := range c.Nodes() {
		var cursor uint64
		for {
			e, err := node.Do(context.Background(), node.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
			if err != nil {
				t.Fatal(err)
			}
			out[addr] += len(e.Elements)
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	return out
}

func TestRedisCluster(t *testing.T) {
	c := servertest.StartCluster(t, server.Redis, server.Options{Profile: "none"}, server.ClusterOptions{})
	url := c.URL()
	open := func(t *testing.T) store.Store { return openCluster(t, url) }

	opts := storetest.Options{
		Foreign: func(t *testing.T) func(t *testing.T) {
			rc := rawCluster(t, c.Addrs())
			ctx := context.Background()
			keys := foreignKeys(storetest.Namespace(t))
			for _, k := range keys {
				if err := rc.Do(ctx, rc.B().Set().Key(k).Value("not ours").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			return func(t *testing.T) {
				for _, k := range keys {
					if v, err := rc.Do(ctx, rc.B().Get().Key(k).Build()).ToString(); err != nil || v != "not ours" {
						t.Errorf("foreign key %q: %q, %v", k, v, err)
					}
				}
			}
		},
		Exists: func(t *testing.T, info store.Info) bool {
			n := 0
			for _, k := range keysOn(t, rawCluster(t, c.Addrs()), KeyPrefix+info.Namespace+":*") {
				n += k
			}
			return n > 0
		},
	}
	t.Run("KV", func(t *testing.T) { storetest.RunKVOptions(t, open, opts) })
	t.Run("Batch", func(t *testing.T) { storetest.RunBatch(t, open) })
	t.Run("Add", func(t *testing.T) { storetest.RunAdd(t, open) })

	// Keys spread over every node's slots; each node's counters see its
	// share of the writes and of the reads.
	t.Run("EveryNodeServes", func(t *testing.T) {
		s := openCluster(t, url)
		stored := storetest.NodeSpread(t, s, 3)
		for addr, n := range keysOn(t, rawCluster(t, c.Addrs()), s.prefix+"*") {
			if int64(n) != stored[addr] {
				t.Errorf("node %s holds %d keys, counted %d writes", addr, n, stored[addr])
			}
		}
	})

	// KeyNodes names the primary each key's slot is on.
	t.Run("KeyNodes", func(t *testing.T) { storetest.KeyNodes(t, openCluster(t, url), 3) })

	t.Run("Info", func(t *testing.T) {
		info, err := openCluster(t, url).Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Settings["cluster_state"] != "ok" || info.Settings["cluster_size"] != "3" || info.Version == "" || info.Settings["save"] != "" {
			t.Errorf("info: %+v", info)
		}
	})

	t.Run("SingleNodeURLRefused", func(t *testing.T) {
		single := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
		_, err := NewCluster(context.Background(), ClusterConfig{URL: "redis-cluster://" + single.Addr + "/", Namespace: storetest.Namespace(t)})
		if err == nil || !strings.Contains(err.Error(), "not in cluster mode") {
			t.Errorf("a single node as a cluster: %v", err)
		}
	})
}

func TestClusterURL(t *testing.T) {
	const secret = "S3cr3tPw"
	for raw, want := range map[string]string{
		"redis-cluster://h1:7000,h2:7001/":                       "",
		"redis-cluster://u:" + secret + "@h1:7000,h2:7001":       "",
		"redis-cluster://h1:7000/?protocol=2":                    "",
		"redis-cluster://h1:7000,h2/":                            "port is not a number",
		"redis-cluster://h1:7000,:7001/":                         "seed node 2 of 2",
		"redis-cluster://h1:7000,h2:99999/":                      "seed node 2 of 2",
		"redis-cluster://h1:7000/1":                              "database 0 only",
		"redis-cluster://h1:7000/?db=1":                          "database 0 only",
		"redis-cluster://h1:7000/?dial_timeout=1s":               "parameter dial_timeout",
		"redis-cluster://u:" + secret + "@h1:7000/?x=1":          "unknown parameter",
		"redis-cluster://u:" + secret + "@h1:x" + secret:         "",
		"redis-cluster://" + strings.Repeat("h:1,", 64) + "h:1/": "65 seed nodes: at most 64",
	} {
		err := CheckClusterURL(raw)
		switch {
		case want == "" && strings.Contains(raw, "@h1:x"):
			if err == nil {
				t.Errorf("%q accepted", raw)
			}
		case want == "" && err != nil:
			t.Errorf("%q: %v", raw, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%q: error quotes the password: %v", raw, err)
		}
	}
}
