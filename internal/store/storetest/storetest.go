// Package storetest is the conformance suite every store runs: the same
// checks against memory, files, SQLite, PostgreSQL, Redis and Memcached, so a
// store that passes behaves like the others as far as the workloads can tell.
package storetest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// Opener returns a fresh store in a fresh namespace (see Namespace). The
// suite closes it; Close must therefore be safe to call twice.
type Opener func(t *testing.T) store.Store

// Options adapts the suite to what a store can check about its backend.
type Options struct {
	// LargeValue is the size of the large-value test; 0 means 1 MiB.
	// Memcached's default item limit (1 MiB including overhead) needs less.
	LargeValue int
	// Foreign, when set, creates something in the backend outside the store's
	// namespace (a key, a table, a file) and returns a check that fails t if
	// it was changed or removed. The suite calls it before Reset and Close.
	Foreign func(t *testing.T) (check func(t *testing.T))
	// Exists, when set, reports whether the namespace described by info is
	// present in the backend; it must be true while the store is open and
	// false after Close.
	Exists func(t *testing.T, info store.Info) bool
	// ConcurrentOps is each client's ops in the concurrency test; 0 means
	// 1000. A connection per op (RunKVPaths' per-request run) does 200:
	// 8,000 PostgreSQL backend forks took more than the test's 30 s on a
	// loaded 2-CPU machine, beside the suite's two other runs.
	ConcurrentOps int
}

// Namespace returns a fresh namespace name for a test, e.g. "sbt_5f2a9c01d3".
func Namespace(t testing.TB) string {
	t.Helper()
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "sbt_" + hex.EncodeToString(b[:])
}

// RunKV runs the key-value conformance suite with default options.
func RunKV(t *testing.T, open Opener) { RunKVOptions(t, open, Options{}) }

// RunKVOptions runs the key-value conformance suite. Subtests run in
// parallel, each on its own store, so the TTL waits overlap.
func RunKVOptions(t *testing.T, open Opener, o Options) {
	tests := []testCase{
		{"RoundTrip", testRoundTrip},
		{"BinaryKeysAndValues", testBinary},
		{"LargeValue", testLarge},
		{"Overwrite", testOverwrite},
		{"GetMissing", testMissing},
		{"Delete", testDelete},
		{"TTL", testTTL},
		{"Concurrent", testConcurrent},
		{"DstReuse", testDstReuse},
		{"Info", testInfo},
		{"Reset", testReset},
		{"Close", testClose},
	}
	runCases(t, open, o, tests)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// KVClient opens a client and checks that it implements store.KV; it is
// closed when t ends.
func KVClient(t testing.TB, s store.Store) store.KV {
	t.Helper()
	c, err := s.Open(context.Background())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("client Close: %v", err)
		}
	})
	return mustImplement[store.KV](t, c)
}

// mustImplement is v as capability C; the test fails when v lacks it.
func mustImplement[C any](t testing.TB, v any) C {
	t.Helper()
	c, ok := v.(C)
	if !ok {
		t.Fatalf("%T does not implement %v", v, reflect.TypeFor[C]())
	}
	return c
}

func mustSet(t *testing.T, kv store.KV, k, v []byte, ttl time.Duration) {
	t.Helper()
	if err := kv.Set(ctxT(t), k, v, ttl); err != nil {
		t.Fatalf("Set(%q, %d bytes, %v): %v", trunc(k), len(v), ttl, err)
	}
}

func expect(t *testing.T, kv store.KV, k, want []byte) {
	t.Helper()
	got, ok, err := kv.Get(ctxT(t), k, nil)
	if err != nil {
		t.Fatalf("Get(%q): %v", trunc(k), err)
	}
	if !ok {
		t.Fatalf("Get(%q): missing, want %d bytes", trunc(k), len(want))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %d bytes %q, want %d bytes %q", trunc(k), len(got), trunc(got), len(want), trunc(want))
	}
}

func expectMissing(t *testing.T, kv store.KV, k []byte) {
	t.Helper()
	got, ok, err := kv.Get(ctxT(t), k, nil)
	if err != nil {
		t.Fatalf("Get(%q): %v", trunc(k), err)
	}
	if ok || len(got) != 0 {
		t.Fatalf("Get(%q) = %q, ok=%v; want missing", trunc(k), trunc(got), ok)
	}
}

func trunc(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func testRoundTrip(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	mustSet(t, kv, []byte("key:1"), []byte("hello"), 0)
	expect(t, kv, []byte("key:1"), []byte("hello"))
	// A second client sees what the first wrote: they share the namespace.
	expect(t, KVClient(t, s), []byte("key:1"), []byte("hello"))
}

func testBinary(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	cases := []struct {
		name string
		k, v []byte
	}{
		{"zero bytes", []byte("bin:zero"), []byte{0, 0, 'a', 0}},
		{"every byte", []byte("bin:all"), all},
		{"empty value", []byte("bin:empty"), []byte{}},
		{"binary key", []byte{0, 1, 2, ' ', '\n', 0xff, 0xfe}, []byte("v")},
		{"key with spaces", []byte("a key with spaces\r\n"), []byte("v2")},
		{"empty key", []byte{}, []byte("empty key")},
		{"long key 300", bytes.Repeat([]byte("k"), 300), []byte("long300")},
		{"long key 1000", bytes.Repeat([]byte{0xa5}, 1000), []byte("long1000")},
		// Keys that an encoding could map to one name must stay apart.
		{"lookalike a", []byte("#YQ"), []byte("lookalike a")},
		{"lookalike b", []byte("a"), []byte("lookalike b")},
	}
	for _, c := range cases {
		mustSet(t, kv, c.k, c.v, 0)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := kv.Get(ctxT(t), c.k, nil)
			if err != nil || !ok {
				t.Fatalf("Get = ok %v, err %v", ok, err)
			}
			if !bytes.Equal(got, c.v) {
				t.Fatalf("Get = %q, want %q", trunc(got), trunc(c.v))
			}
		})
	}
}

func testLarge(t *testing.T, s store.Store, o Options) {
	kv := KVClient(t, s)
	v := make([]byte, o.LargeValue)
	if _, err := rand.Read(v); err != nil {
		t.Fatal(err)
	}
	mustSet(t, kv, []byte("large"), v, 0)
	expect(t, kv, []byte("large"), v)
	// A small write after a large one proves no buffer kept stale bytes.
	mustSet(t, kv, []byte("large"), []byte("small"), 0)
	expect(t, kv, []byte("large"), []byte("small"))
}

func testOverwrite(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	k := []byte("over")
	for _, v := range []string{"first value, long", "2nd", "", "third"} {
		mustSet(t, kv, k, []byte(v), 0)
		expect(t, kv, k, []byte(v))
	}
}

func testMissing(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	expectMissing(t, kv, []byte("never set"))
	// A missing key truncates dst: len 0, no stale bytes.
	got, ok, err := kv.Get(ctxT(t), []byte("never set"), []byte("stale"))
	if err != nil || ok || len(got) != 0 {
		t.Fatalf("Get(missing, dst) = %q, %v, %v; want empty, false, nil", got, ok, err)
	}
}

func testDelete(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	ctx := ctxT(t)
	mustSet(t, kv, []byte("del"), []byte("x"), 0)
	mustSet(t, kv, []byte("keep"), []byte("y"), 0)
	if err := kv.Delete(ctx, []byte("del")); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	expectMissing(t, kv, []byte("del"))
	expect(t, kv, []byte("keep"), []byte("y"))
	if err := kv.Delete(ctx, []byte("del")); err != nil {
		t.Fatalf("Delete(deleted key): %v", err)
	}
	if err := kv.Delete(ctx, []byte("never set")); err != nil {
		t.Fatalf("Delete(missing key): %v", err)
	}
	mustSet(t, kv, []byte("del"), []byte("again"), 0)
	expect(t, kv, []byte("del"), []byte("again"))
}

// testTTL uses a 2 s ttl: Memcached counts whole seconds on a clock that
// ticks once a second, so 1 s could already be gone when read back.
func testTTL(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	const ttl = 2 * time.Second
	start := time.Now()
	mustSet(t, kv, []byte("ttl:short"), []byte("a"), ttl)
	mustSet(t, kv, []byte("ttl:none"), []byte("b"), 0)
	mustSet(t, kv, []byte("ttl:long"), []byte("c"), time.Hour)
	// Overwriting without ttl must clear the earlier expiry.
	mustSet(t, kv, []byte("ttl:cleared"), []byte("d"), ttl)
	mustSet(t, kv, []byte("ttl:cleared"), []byte("e"), 0)
	if time.Since(start) < time.Second {
		expect(t, kv, []byte("ttl:short"), []byte("a"))
	}
	time.Sleep(time.Until(start.Add(ttl + 1100*time.Millisecond)))
	expectMissing(t, kv, []byte("ttl:short"))
	expect(t, kv, []byte("ttl:none"), []byte("b"))
	expect(t, kv, []byte("ttl:long"), []byte("c"))
	expect(t, kv, []byte("ttl:cleared"), []byte("e"))
	// An expired key can be written again.
	mustSet(t, kv, []byte("ttl:short"), []byte("again"), 0)
	expect(t, kv, []byte("ttl:short"), []byte("again"))
}

func testConcurrent(t *testing.T, s store.Store, o Options) {
	const clients = 8
	ops := cmp.Or(o.ConcurrentOps, 1000)
	kvs := make([]store.KV, clients)
	for i := range kvs {
		kvs[i] = KVClient(t, s)
	}
	ctx := ctxT(t)
	concurrently(t, clients, func(w int) error {
		kv := kvs[w]
		var dst []byte
		for i := range ops {
			k := []byte(fmt.Sprintf("c%d:%d", w, i%100))
			v := []byte(fmt.Sprintf("w%d-op%d", w, i))
			switch i % 4 {
			case 0, 1:
				if err := kv.Set(ctx, k, v, 0); err != nil {
					return fmt.Errorf("client %d Set: %w", w, err)
				}
			case 2:
				want := []byte(fmt.Sprintf("w%d-op%d", w, i-1))
				got, ok, err := kv.Get(ctx, []byte(fmt.Sprintf("c%d:%d", w, (i-1)%100)), dst)
				if err != nil || !ok || !bytes.Equal(got, want) {
					return fmt.Errorf("client %d Get = %q, %v, %v; want %q", w, got, ok, err, want)
				}
				dst = got
			case 3:
				if err := kv.Delete(ctx, k); err != nil {
					return fmt.Errorf("client %d Delete: %w", w, err)
				}
			}
		}
		return nil
	})
}

func testDstReuse(t *testing.T, s store.Store, _ Options) {
	kv := KVClient(t, s)
	ctx := ctxT(t)
	mustSet(t, kv, []byte("dst"), []byte("value"), 0)
	dst := make([]byte, 3, 64)
	copy(dst, "old")
	got, ok, err := kv.Get(ctx, []byte("dst"), dst)
	if err != nil || !ok || string(got) != "value" {
		t.Fatalf("Get = %q, %v, %v", got, ok, err)
	}
	if &got[0] != &dst[:1][0] {
		t.Errorf("Get did not append to dst[:0] although dst had room")
	}
	// The caller owns what Get returned and what it passed to Set.
	got[0] = 'X'
	val := []byte("set-buffer")
	mustSet(t, kv, []byte("dst2"), val, 0)
	copy(val, "XXXXXXXXXX")
	expect(t, kv, []byte("dst"), []byte("value"))
	expect(t, kv, []byte("dst2"), []byte("set-buffer"))
}

func testInfo(t *testing.T, s store.Store, _ Options) {
	info, err := s.Info(ctxT(t))
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.Kind == "" || info.Version == "" || info.Location == "" || info.Durability == "" || info.Namespace == "" {
		t.Errorf("Info has empty fields: %+v", info)
	}
	t.Logf("%+v", info)
}

func testReset(t *testing.T, s store.Store, o Options) {
	var check func(t *testing.T)
	if o.Foreign != nil {
		check = o.Foreign(t)
	}
	kv := KVClient(t, s)
	ctx := ctxT(t)
	keys := make([][]byte, 50)
	for i := range keys {
		keys[i] = []byte("reset:" + strconv.Itoa(i))
		mustSet(t, kv, keys[i], []byte("v"), 0)
	}
	mustSet(t, kv, []byte("reset:ttl"), []byte("v"), time.Hour)
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	fresh := KVClient(t, s)
	for _, k := range append(keys, []byte("reset:ttl")) {
		expectMissing(t, fresh, k)
		expectMissing(t, kv, k) // clients opened before Reset see it too
	}
	if check != nil {
		check(t)
	}
	// The store is ready for the next workload.
	mustSet(t, kv, keys[0], []byte("after reset"), 0)
	expect(t, fresh, keys[0], []byte("after reset"))
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("second Reset: %v", err)
	}
	expectMissing(t, fresh, keys[0])
}

func testClose(t *testing.T, s store.Store, o Options) {
	var check func(t *testing.T)
	if o.Foreign != nil {
		check = o.Foreign(t)
	}
	ctx := ctxT(t)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	kv := KVClient(t, s)
	mustSet(t, kv, []byte("close"), []byte("v"), 0)
	if o.Exists != nil && !o.Exists(t, info) {
		t.Fatalf("namespace %q does not exist while the store is open", info.Namespace)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if o.Exists != nil && o.Exists(t, info) {
		t.Errorf("namespace %q still exists after Close", info.Namespace)
	}
	if c, err := s.Open(ctx); err == nil {
		_ = c.Close()
		t.Errorf("Open after Close succeeded")
	}
	if err := s.Reset(ctx); err == nil {
		t.Errorf("Reset after Close succeeded")
	}
	if check != nil {
		check(t)
	}
}

// benchCtx is cancellable like the load engine's (signal.NotifyContext), so
// drivers that watch cancellation per operation show that cost here.
func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return ctx
}

// BenchGet measures one client's Get of a 100-byte value, reusing dst.
func BenchGet(b *testing.B, s store.Store) {
	kv := KVClient(b, s)
	ctx := benchCtx(b)
	k, v := []byte("bench:get"), bytes.Repeat([]byte("v"), 100)
	if err := kv.Set(ctx, k, v, 0); err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, 128)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, ok, err := kv.Get(ctx, k, dst)
		if err != nil || !ok || len(got) != len(v) {
			b.Fatalf("Get = %d bytes, %v, %v", len(got), ok, err)
		}
		dst = got
	}
}

// BenchSet measures one client's Set of a 100-byte value over 1000 keys.
func BenchSet(b *testing.B, s store.Store) {
	kv := KVClient(b, s)
	ctx := benchCtx(b)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte("bench:set:" + strconv.Itoa(i))
	}
	v := bytes.Repeat([]byte("v"), 100)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := kv.Set(ctx, keys[i%len(keys)], v, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchGetBatch measures one client's GetBatch of 16 keys (the throughput
// workload's --pipeline 16) with 3-byte values, as redis-benchmark -P 16
// -d 3; ns/op and allocs/op are per batch.
func BenchGetBatch(b *testing.B, s store.Store) {
	kv := KVClient(b, s)
	bt := mustImplement[store.Batcher](b, kv)
	ctx := benchCtx(b)
	const depth = 16
	keys, vals, dst := make([][]byte, depth), make([][]byte, depth), make([][]byte, depth)
	for i := range keys {
		keys[i], vals[i], dst[i] = []byte("bench:batch:"+strconv.Itoa(i)), []byte("vvv"), make([]byte, 0, 8)
	}
	if err := bt.SetBatch(ctx, keys, vals, 0); err != nil {
		b.Fatal(err)
	}
	found := make([]bool, depth)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := bt.GetBatch(ctx, keys, dst, found)
		if err != nil || !found[depth-1] || len(got[depth-1]) != 3 {
			b.Fatalf("GetBatch = %q, %v, %v", got, found, err)
		}
		dst = got
	}
}

// ErrIs fails t unless err wraps target; for per-store ownership tests.
func ErrIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// testCase is one conformance subtest, run on a fresh store.
type testCase struct {
	name string
	fn   func(t *testing.T, s store.Store, o Options)
}

// concurrently runs client(w) for every w below clients at once, and
// reports each one's error.
func concurrently(t *testing.T, clients int, client func(w int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for w := range clients {
		wg.Go(func() {
			if err := client(w); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// runCases runs every case in parallel, each on a store of its own that is
// closed when the case ends, with o's defaults filled in.
func runCases(t *testing.T, open Opener, o Options, tests []testCase) {
	if o.LargeValue == 0 {
		o.LargeValue = 1 << 20
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := s.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s, o)
		})
	}
}
