package redis

import (
	"bufio"
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

	// Batches go through the connection rueidis dialed, written and read
	// beside the driver; an error reply in the middle of one leaves the
	// stream in step for the next batch and for rueidis's own commands,
	// and a missing key (RESP3's null) is not found.
	t.Run("RawPipe", func(t *testing.T) {
		ctx := context.Background()
		s := open(t, url)
		kv, b := storetest.BatchClient(t, s)
		if c := kv.(*Client); c.raw.get(c.blocking) == nil {
			t.Fatal("the client's batches do not go through its own connection")
		}
		rc := raw(t, url)
		if err := rc.Do(ctx, rc.B().Lpush().Key(s.prefix+"list").Element("x").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		keys := [][]byte{[]byte("a"), []byte("b")}
		if err := b.SetBatch(ctx, keys, [][]byte{[]byte("1"), []byte("22")}, 0); err != nil {
			t.Fatal(err)
		}
		found := make([]bool, 4)
		_, err := b.GetBatch(ctx, [][]byte{[]byte("a"), []byte("list"), []byte("missing"), []byte("b")}, nil, found)
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("GET of a list in a batch: %v, want WRONGTYPE", err)
		}
		for round := range 3 {
			got, err := b.GetBatch(ctx, [][]byte{[]byte("b"), []byte("missing"), []byte("a")}, nil, found[:3])
			if err != nil || string(got[0]) != "22" || !found[0] || found[1] || len(got[1]) != 0 || string(got[2]) != "1" || !found[2] {
				t.Fatalf("round %d after the error: %q %v %v, want [22 \"\" 1] [true false true]", round, got, found[:3], err)
			}
			v, ok, err := kv.Get(ctx, []byte("a"), nil)
			if err != nil || !ok || string(v) != "1" {
				t.Fatalf("round %d: rueidis's Get after a batch: %q %v %v", round, v, ok, err)
			}
		}
		if kv.(*Client).raw.broken {
			t.Error("an error reply broke the pipe")
		}
	})

	t.Run("Conformance", func(t *testing.T) {
		storetest.RunBatch(t, func(t *testing.T) store.Store { return open(t, url) })
	})
}

// readReply reads RESP3's null ("_"), which replaces RESP2's "$-1" on a
// connection that said HELLO 3, as rueidis's do, as a missing value.
func TestReadReplyNull(t *testing.T) {
	for _, in := range []string{"_\r\n", "$-1\r\n"} {
		kind, v, err := readReply(bufio.NewReader(strings.NewReader(in)), []byte("old"))
		if err != nil || kind != kindNil || string(v) != "old" {
			t.Errorf("%q: kind %q, %q, %v; want the nil kind and dst unchanged", in, kind, v, err)
		}
	}
}
