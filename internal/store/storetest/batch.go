package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// RunBatch runs the conformance suite of store.Batcher (and of
// store.BulkLoader when the store's clients implement it) with default options.
func RunBatch(t *testing.T, open Opener) { RunBatchOptions(t, open, Options{}) }

// RunBatchOptions runs the batch conformance suite: batches must behave
// exactly like the same Gets and Sets one by one, also mixed with them.
// Options.LargeValue bounds the large values; Foreign and Exists are not used.
func RunBatchOptions(t *testing.T, open Opener, o Options) {
	tests := []testCase{
		{"RoundTrip", testBatchRoundTrip},
		{"MixedWithSingleOps", testBatchMixed},
		{"DstReuse", testBatchDst},
		{"OverwriteAndDuplicates", testBatchOverwrite},
		{"Large", testBatchLarge},
		{"TTL", testBatchTTL},
		{"EdgeCases", testBatchEdges},
		{"Concurrent", testBatchConcurrent},
		{"Reset", testBatchReset},
		{"BulkLoad", testBulkLoad},
	}
	runCases(t, open, o, tests)
}

// BatchClient opens a client that must implement store.KV and store.Batcher.
func BatchClient(t testing.TB, s store.Store) (store.KV, store.Batcher) {
	t.Helper()
	kv := KVClient(t, s)
	return kv, mustImplement[store.Batcher](t, kv)
}

func bytesOf(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func mustSetBatch(t *testing.T, b store.Batcher, keys, vals [][]byte, ttl time.Duration) {
	t.Helper()
	if err := b.SetBatch(ctxT(t), keys, vals, ttl); err != nil {
		t.Fatalf("SetBatch(%d pairs, %v): %v", len(keys), ttl, err)
	}
}

// expectBatch gets keys in one batch and checks each against want; a nil
// want means missing.
func expectBatch(t *testing.T, b store.Batcher, keys, want [][]byte) {
	t.Helper()
	found := make([]bool, len(keys))
	dst, err := b.GetBatch(ctxT(t), keys, nil, found)
	if err != nil {
		t.Fatalf("GetBatch(%d keys): %v", len(keys), err)
	}
	if len(dst) < len(keys) {
		t.Fatalf("GetBatch returned %d values for %d keys", len(dst), len(keys))
	}
	for i, k := range keys {
		switch {
		case want[i] == nil && (found[i] || len(dst[i]) != 0):
			t.Errorf("key %d %q: found %v, %d bytes; want missing", i, trunc(k), found[i], len(dst[i]))
		case want[i] != nil && !found[i]:
			t.Errorf("key %d %q: missing, want %d bytes", i, trunc(k), len(want[i]))
		case want[i] != nil && !bytes.Equal(dst[i], want[i]):
			t.Errorf("key %d %q: %d bytes %q, want %d bytes %q", i, trunc(k), len(dst[i]), trunc(dst[i]), len(want[i]), trunc(want[i]))
		}
	}
}

// batchCases are awkward keys and values: every store's encoding must give
// batches and single operations the same names.
func batchCases() (keys, vals [][]byte) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	keys = [][]byte{
		[]byte("b:plain"), []byte("b:zero"), []byte("b:all"), []byte("b:empty"),
		{0, 1, 2, ' ', '\n', 0xff}, []byte("a key with spaces\r\n"), {},
		bytes.Repeat([]byte("k"), 300), bytes.Repeat([]byte{0xa5}, 1000), []byte("#YQ"), []byte("a"),
	}
	vals = [][]byte{
		[]byte("plain"), {0, 0, 'a', 0}, all, {},
		[]byte("binary key"), []byte("spaces"), []byte("empty key"),
		[]byte("long300"), []byte("long1000"), []byte("lookalike a"), []byte("lookalike b"),
	}
	return keys, vals
}

func testBatchRoundTrip(t *testing.T, s store.Store, _ Options) {
	kv, b := BatchClient(t, s)
	keys, vals := batchCases()
	mustSetBatch(t, b, keys, vals, 0)
	// Every key as a single Get, from this client and from another one.
	other := KVClient(t, s)
	for i, k := range keys {
		expect(t, kv, k, vals[i])
		expect(t, other, k, vals[i])
	}
	// In one batch, with missing keys in between.
	q := append(bytesOf("b:missing1"), keys...)
	want := append([][]byte{nil}, vals...)
	q = append(q, []byte("b:missing2"))
	want = append(want, nil)
	expectBatch(t, b, q, want)
}

func testBatchMixed(t *testing.T, s store.Store, _ Options) {
	kv, b := BatchClient(t, s)
	ctx := ctxT(t)
	// Single Sets, read back by a batch.
	for i := range 20 {
		mustSet(t, kv, []byte("m:"+strconv.Itoa(i)), []byte("single "+strconv.Itoa(i)), 0)
	}
	keys := make([][]byte, 20)
	want := make([][]byte, 20)
	for i := range keys {
		keys[i] = []byte("m:" + strconv.Itoa(i))
		want[i] = []byte("single " + strconv.Itoa(i))
	}
	expectBatch(t, b, keys, want)
	// Interleaved: batch, single, batch, on one connection.
	for round := range 5 {
		vals := make([][]byte, len(keys))
		for i := range vals {
			vals[i] = []byte(fmt.Sprintf("round %d key %d", round, i))
		}
		mustSetBatch(t, b, keys, vals, 0)
		expect(t, kv, keys[round], vals[round])
		if err := kv.Delete(ctx, keys[round]); err != nil {
			t.Fatal(err)
		}
		vals[round] = nil
		expectBatch(t, b, keys, vals)
	}
}

func testBatchDst(t *testing.T, s store.Store, _ Options) {
	_, b := BatchClient(t, s)
	ctx := ctxT(t)
	mustSetBatch(t, b, bytesOf("d:1", "d:2"), bytesOf("value one", "value two"), 0)
	found := make([]bool, 3)
	// dst shorter than keys: grown.
	dst, err := b.GetBatch(ctx, bytesOf("d:1", "d:2", "d:none"), [][]byte{[]byte("stale stale stale")}, found)
	if err != nil || len(dst) < 3 {
		t.Fatalf("GetBatch = %d values, %v", len(dst), err)
	}
	if string(dst[0]) != "value one" || string(dst[1]) != "value two" || len(dst[2]) != 0 || !found[0] || !found[1] || found[2] {
		t.Fatalf("GetBatch = %q %v", dst[:3], found)
	}
	// dst with room: reused in place, and a slot that held a value is
	// emptied when its new key is missing.
	first := &dst[0][:1][0]
	dst, err = b.GetBatch(ctx, bytesOf("d:2", "d:none", "d:1"), dst, found)
	if err != nil {
		t.Fatal(err)
	}
	if string(dst[0]) != "value two" || len(dst[1]) != 0 || found[1] || string(dst[2]) != "value one" {
		t.Fatalf("second GetBatch = %q %v", dst[:3], found)
	}
	if &dst[0][:1][0] != first {
		t.Error("GetBatch did not append to dst[i][:0] although it had room")
	}
	// The caller owns the results: changing them changes nothing stored.
	dst[0][0] = 'X'
	expectBatch(t, b, bytesOf("d:2"), bytesOf("value two"))
	// found too short is an error, not a panic.
	if _, err := b.GetBatch(ctx, bytesOf("d:1", "d:2"), nil, make([]bool, 1)); err == nil {
		t.Error("GetBatch with 1 found slot for 2 keys: no error")
	}
}

func testBatchOverwrite(t *testing.T, s store.Store, _ Options) {
	kv, b := BatchClient(t, s)
	mustSetBatch(t, b, bytesOf("o:1", "o:2"), bytesOf("first, long value", "first"), 0)
	mustSetBatch(t, b, bytesOf("o:1", "o:2"), bytesOf("2nd", ""), 0)
	expectBatch(t, b, bytesOf("o:1", "o:2"), bytesOf("2nd", ""))
	// A key twice in one batch: the later pair wins, as with Sets in order.
	mustSetBatch(t, b, bytesOf("o:dup", "o:3", "o:dup"), bytesOf("earlier", "three", "later"), 0)
	expect(t, kv, []byte("o:dup"), []byte("later"))
	expectBatch(t, b, bytesOf("o:dup", "o:dup", "o:3"), bytesOf("later", "later", "three"))
}

func testBatchLarge(t *testing.T, s store.Store, o Options) {
	_, b := BatchClient(t, s)
	// Many pairs: more than any store's chunk, in one call.
	const n = 2500
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("l:%05d", i))
		vals[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%200)
	}
	mustSetBatch(t, b, keys, vals, 0)
	expectBatch(t, b, keys, vals)
	// A few large values.
	big := make([][]byte, 3)
	for i := range big {
		big[i] = make([]byte, o.LargeValue-i)
		if _, err := rand.Read(big[i]); err != nil {
			t.Fatal(err)
		}
	}
	bigKeys := bytesOf("l:big0", "l:big1", "l:big2")
	mustSetBatch(t, b, bigKeys, big, 0)
	expectBatch(t, b, bigKeys, big)
	// Small after large: no stale bytes anywhere.
	mustSetBatch(t, b, bigKeys, bytesOf("s0", "s1", "s2"), 0)
	expectBatch(t, b, bigKeys, bytesOf("s0", "s1", "s2"))
}

// testBatchTTL uses 2 s, as testTTL does, for Memcached's whole seconds.
func testBatchTTL(t *testing.T, s store.Store, _ Options) {
	_, b := BatchClient(t, s)
	const ttl = 2 * time.Second
	start := time.Now()
	mustSetBatch(t, b, bytesOf("t:short1", "t:short2"), bytesOf("a", "b"), ttl)
	mustSetBatch(t, b, bytesOf("t:none", "t:long"), bytesOf("c", "d"), 0)
	mustSetBatch(t, b, bytesOf("t:long"), bytesOf("d"), time.Hour)
	if time.Since(start) < time.Second {
		expectBatch(t, b, bytesOf("t:short1", "t:short2"), bytesOf("a", "b"))
	}
	time.Sleep(time.Until(start.Add(ttl + 1100*time.Millisecond)))
	expectBatch(t, b, bytesOf("t:short1", "t:none", "t:short2", "t:long"), [][]byte{nil, []byte("c"), nil, []byte("d")})
}

func testBatchEdges(t *testing.T, s store.Store, _ Options) {
	_, b := BatchClient(t, s)
	ctx := ctxT(t)
	if err := b.SetBatch(ctx, nil, nil, 0); err != nil {
		t.Errorf("empty SetBatch: %v", err)
	}
	if dst, err := b.GetBatch(ctx, nil, nil, nil); err != nil || len(dst) != 0 {
		t.Errorf("empty GetBatch = %d values, %v", len(dst), err)
	}
	if err := b.SetBatch(ctx, bytesOf("e:1", "e:2"), bytesOf("v"), 0); err == nil {
		t.Error("SetBatch with 2 keys and 1 value: no error")
	}
	// The caller may reuse its buffers once SetBatch returns.
	keys, vals := bytesOf("e:k1", "e:k2"), bytesOf("v1", "v2")
	mustSetBatch(t, b, keys, vals, 0)
	copy(keys[0], "XXXX")
	copy(vals[1], "XX")
	expectBatch(t, b, bytesOf("e:k1", "e:k2"), bytesOf("v1", "v2"))
	// A cancelled context fails the batch without breaking the client.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.SetBatch(cctx, bytesOf("e:c"), bytesOf("v"), 0); err == nil {
		t.Error("SetBatch with a cancelled context: no error")
	}
	if _, err := b.GetBatch(cctx, bytesOf("e:k1"), nil, make([]bool, 1)); err == nil {
		t.Error("GetBatch with a cancelled context: no error")
	}
	expectBatch(t, b, bytesOf("e:k1"), bytesOf("v1"))
}

func testBatchConcurrent(t *testing.T, s store.Store, _ Options) {
	const clients, rounds, depth = 6, 40, 16
	bs := make([]store.Batcher, clients)
	for i := range bs {
		_, bs[i] = BatchClient(t, s)
	}
	ctx := ctxT(t)
	concurrently(t, clients, func(w int) error {
		keys := make([][]byte, depth)
		vals := make([][]byte, depth)
		found := make([]bool, depth)
		var dst [][]byte
		for r := range rounds {
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("c%d:%d", w, (r*depth+i)%50))
				vals[i] = []byte(fmt.Sprintf("w%d-r%d-%d", w, r, i))
			}
			if err := bs[w].SetBatch(ctx, keys, vals, 0); err != nil {
				return fmt.Errorf("client %d SetBatch: %w", w, err)
			}
			var err error
			if dst, err = bs[w].GetBatch(ctx, keys, dst, found); err != nil {
				return fmt.Errorf("client %d GetBatch: %w", w, err)
			}
			for i := range keys {
				if !found[i] || !bytes.Equal(dst[i], vals[i]) {
					return fmt.Errorf("client %d round %d key %s: %q %v, want %q", w, r, keys[i], dst[i], found[i], vals[i])
				}
			}
		}
		return nil
	})
}

func testBatchReset(t *testing.T, s store.Store, _ Options) {
	_, b := BatchClient(t, s)
	keys := bytesOf("r:1", "r:2", "r:3")
	mustSetBatch(t, b, keys, bytesOf("1", "2", "3"), 0)
	if err := s.Reset(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	expectBatch(t, b, keys, make([][]byte, 3))
	mustSetBatch(t, b, keys[:1], bytesOf("after"), 0)
	expectBatch(t, b, keys, [][]byte{[]byte("after"), nil, nil})
}

// testBulkLoad checks store.BulkLoader where the store has it: Load on a
// freshly reset store, read back by batches and single Gets.
func testBulkLoad(t *testing.T, s store.Store, _ Options) {
	kv, b := BatchClient(t, s)
	l, ok := kv.(store.BulkLoader)
	if !ok {
		t.Logf("%T has no BulkLoader", kv)
		return
	}
	ctx := ctxT(t)
	if err := l.Load(ctx, nil, nil); err != nil {
		t.Errorf("empty Load: %v", err)
	}
	if err := l.Load(ctx, bytesOf("x"), nil); err == nil {
		t.Error("Load with 1 key and no value: no error")
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("bl:%06d", i))
		vals[i] = []byte(fmt.Sprintf("bulk value %d", i*7))
	}
	cases, caseVals := batchCases()
	keys = append(keys, cases...)
	vals = append(vals, caseVals...)
	if err := l.Load(ctx, keys[:1000], vals[:1000]); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := l.Load(ctx, keys[1000:], vals[1000:]); err != nil {
		t.Fatalf("second Load: %v", err)
	}
	expectBatch(t, b, keys, vals)
	for _, i := range []int{0, 999, 1000, n - 1, len(keys) - 1} {
		expect(t, kv, keys[i], vals[i])
	}
}
