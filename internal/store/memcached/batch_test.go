package memcached

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestBatch(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, server.Memcached, server.Options{}).URL

	t.Run("SameConnection", func(t *testing.T) {
		// Not parallel: it counts the server's connections.
		ctx := context.Background()
		s := open(t, url)
		total := func() int {
			st, err := s.stats(ctx, "") // one connection of its own
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(st["total_connections"])
			return n
		}
		before := total()
		kv, b := storetest.BatchClient(t, s) // one connection
		keys := make([][]byte, 16)
		vals := make([][]byte, 16)
		for i := range keys {
			keys[i] = []byte("k" + strconv.Itoa(i))
			vals[i] = []byte("v" + strconv.Itoa(i))
		}
		found := make([]bool, len(keys))
		var dst [][]byte
		for i := range 50 {
			if err := b.SetBatch(ctx, keys, vals, 0); err != nil {
				t.Fatal(err)
			}
			var err error
			if dst, err = b.GetBatch(ctx, keys, dst, found); err != nil {
				t.Fatal(err)
			}
			if err := kv.Set(ctx, keys[i%16], vals[i%16], 0); err != nil {
				t.Fatal(err)
			}
			if err := kv.(store.BulkLoader).Load(ctx, keys, vals); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := kv.Get(ctx, keys[i%16], nil); err != nil || !ok || !bytes.Equal(got, vals[i%16]) {
				t.Fatalf("Get = %q %v %v", got, ok, err)
			}
		}
		if got := total() - before; got != 2 { // the client's and the second stats call's
			t.Errorf("%d connections opened for one client and one stats call, want 2", got)
		}
	})

	t.Run("ServerErrorKeepsConnection", func(t *testing.T) {
		ctx := context.Background()
		s := open(t, url)
		kv, b := storetest.BatchClient(t, s)
		huge := make([]byte, 2<<20) // over item_size_max: SERVER_ERROR object too large
		err := b.SetBatch(ctx, [][]byte{[]byte("a"), []byte("huge"), []byte("c")}, [][]byte{[]byte("1"), huge, []byte("3")}, 0)
		if err == nil {
			t.Fatal("SetBatch of a 2 MiB value: no error")
		}
		t.Log(err)
		found := make([]bool, 3)
		dst, err := b.GetBatch(ctx, [][]byte{[]byte("a"), []byte("huge"), []byte("c")}, nil, found)
		if err != nil || string(dst[0]) != "1" || found[1] || string(dst[2]) != "3" {
			t.Fatalf("after the failed batch: %q %v %v", dst, found, err)
		}
		if err := kv.Set(ctx, []byte("d"), []byte("4"), 0); err != nil {
			t.Fatal(err)
		}
		if err := b.SetBatch(ctx, [][]byte{[]byte("e")}, [][]byte{[]byte("5")}, 0); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Conformance", func(t *testing.T) {
		storetest.RunBatchOptions(t, func(t *testing.T) store.Store { return open(t, url) }, storetest.Options{LargeValue: 512 << 10})
	})
}
