package redis

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestBatch(t *testing.T) {
	// Not parallel with other tests: OneConnectionPerClient counts goroutines.
	url := servertest.Start(t, server.Redis, server.Options{}).URL

	t.Run("OneConnectionPerClient", func(t *testing.T) {
		// Not parallel: it counts goroutines.
		ctx, cancel := context.WithCancel(context.Background()) // cancellable, no deadline: the risky kind
		defer cancel()
		s := open(t, url)
		before := runtime.NumGoroutine()
		const n = 3
		keys := make([][]byte, 16)
		vals := make([][]byte, 16)
		for i := range keys {
			keys[i] = []byte("k" + strconv.Itoa(i))
			vals[i] = []byte("v" + strconv.Itoa(i))
		}
		found := make([]bool, len(keys))
		for range n {
			kv, b := storetest.BatchClient(t, s)
			for range 50 {
				if err := b.SetBatch(ctx, keys, vals, 0); err != nil {
					t.Fatal(err)
				}
				if _, err := b.GetBatch(ctx, keys, nil, found); err != nil {
					t.Fatal(err)
				}
				if err := kv.(store.BulkLoader).Load(ctx, keys, vals); err != nil {
					t.Fatal(err)
				}
				if _, _, err := kv.Get(ctx, keys[0], nil); err != nil {
					t.Fatal(err)
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
		if grown := runtime.NumGoroutine() - before; grown >= 2*n {
			t.Errorf("goroutines grew by %d for %d clients: batches went through rueidis's background pipeline", grown, n)
		}
	})

	t.Run("Conformance", func(t *testing.T) {
		storetest.RunBatch(t, func(t *testing.T) store.Store { return open(t, url) })
	})
}
