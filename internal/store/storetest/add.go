package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// RunAdd runs the add-if-absent conformance suite (store.Adder) against a
// store whose clients must offer it: the lease of the cache-aside workload
// relies on exactly one of racing Adds winning, and on an expired value
// counting as absent.
func RunAdd(t *testing.T, open Opener) {
	runCases(t, open, Options{}, []testCase{
		{"AddAbsent", testAddAbsent},
		{"AddPresent", testAddPresent},
		{"AddAfterDelete", testAddAfterDelete},
		{"AddTTL", testAddTTL},
		{"AddRace", testAddRace},
	})
}

// AdderClient opens a client of s that must be a KV and an Adder.
func AdderClient(t testing.TB, s store.Store) (store.KV, store.Adder) {
	t.Helper()
	kv := KVClient(t, s)
	return kv, mustImplement[store.Adder](t, kv)
}

func mustAdd(t *testing.T, a store.Adder, k, v []byte, ttl time.Duration, want bool) {
	t.Helper()
	added, err := a.Add(ctxT(t), k, v, ttl)
	if err != nil {
		t.Fatalf("Add(%q): %v", k, err)
	}
	if added != want {
		t.Fatalf("Add(%q) = %v, want %v", k, added, want)
	}
}

func testAddAbsent(t *testing.T, s store.Store, _ Options) {
	kv, a := AdderClient(t, s)
	mustAdd(t, a, []byte("add:new"), []byte("first"), 0, true)
	expect(t, kv, []byte("add:new"), []byte("first"))
}

func testAddPresent(t *testing.T, s store.Store, _ Options) {
	kv, a := AdderClient(t, s)
	mustSet(t, kv, []byte("add:set"), []byte("kept"), 0)
	mustAdd(t, a, []byte("add:set"), []byte("lost"), 0, false)
	expect(t, kv, []byte("add:set"), []byte("kept"))
	// An unexpired value with a TTL is present too.
	mustSet(t, kv, []byte("add:ttl"), []byte("kept"), time.Hour)
	mustAdd(t, a, []byte("add:ttl"), []byte("lost"), time.Hour, false)
	expect(t, kv, []byte("add:ttl"), []byte("kept"))
	// And so is what an Add stored.
	mustAdd(t, a, []byte("add:twice"), []byte("one"), 0, true)
	mustAdd(t, a, []byte("add:twice"), []byte("two"), 0, false)
	expect(t, kv, []byte("add:twice"), []byte("one"))
}

func testAddAfterDelete(t *testing.T, s store.Store, _ Options) {
	kv, a := AdderClient(t, s)
	mustAdd(t, a, []byte("add:del"), []byte("one"), 0, true)
	if err := kv.Delete(ctxT(t), []byte("add:del")); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, a, []byte("add:del"), []byte("two"), 0, true)
	expect(t, kv, []byte("add:del"), []byte("two"))
}

// testAddTTL waits as testTTL does (Memcached's clock ticks in seconds):
// an expired value counts as absent, and an added value expires.
func testAddTTL(t *testing.T, s store.Store, _ Options) {
	kv, a := AdderClient(t, s)
	const ttl = 2 * time.Second
	start := time.Now()
	mustSet(t, kv, []byte("add:expiring"), []byte("old"), ttl)
	mustAdd(t, a, []byte("add:short"), []byte("a"), ttl, true)
	time.Sleep(time.Until(start.Add(ttl + 1100*time.Millisecond)))
	expectMissing(t, kv, []byte("add:short"))
	mustAdd(t, a, []byte("add:expiring"), []byte("new"), 0, true)
	expect(t, kv, []byte("add:expiring"), []byte("new"))
	mustAdd(t, a, []byte("add:short"), []byte("b"), 0, true)
	expect(t, kv, []byte("add:short"), []byte("b"))
}

// testAddRace has 8 clients add one key at once, over and over: exactly
// one must win each round, and the value must be the winner's.
func testAddRace(t *testing.T, s store.Store, _ Options) {
	const clients, rounds = 8, 20
	adders := make([]store.Adder, clients)
	var kv store.KV
	for i := range adders {
		kv, adders[i] = AdderClient(t, s)
	}
	for r := range rounds {
		key := fmt.Appendf(nil, "add:race:%d", r)
		var wins atomic.Int32
		var winner atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, clients)
		for i, a := range adders {
			wg.Go(func() {
				<-start
				added, err := a.Add(context.Background(), key, fmt.Appendf(nil, "client %d", i), time.Minute)
				if err != nil {
					errs <- err
				}
				if added {
					wins.Add(1)
					winner.Store(int32(i))
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d of %d racing Adds won, want exactly 1", r, n, clients)
		}
		got, ok, err := kv.Get(ctxT(t), key, nil)
		if err != nil || !ok || !bytes.Equal(got, fmt.Appendf(nil, "client %d", winner.Load())) {
			t.Fatalf("round %d: Get = %q, %v, %v; want the winner's value (client %d)", r, got, ok, err, winner.Load())
		}
	}
}
