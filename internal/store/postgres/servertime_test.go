package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
)

// TestServerTime shares one managed server (which preloads
// pg_stat_statements and tracks every statement) among its subtests.
func TestServerTime(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	t.Run("counts", func(t *testing.T) { testServerTimeCounts(t, url) })
	t.Run("hash-index sets", func(t *testing.T) { testServerTimeHashSets(t, url) })
	t.Run("without extension", func(t *testing.T) { testServerTimeWithoutExtension(t, url) })
	t.Run("cancelled sampler", func(t *testing.T) { testCancelledSampler(t, url) })
}

// testCancelledSampler cancels ServerTime's context while its query is in
// flight, as a sampler stopped at the end of a run does: the store's shared
// admin connection must survive it (pgx closes a connection whose query's
// context is cancelled).
func testCancelledSampler(t *testing.T, url string) {
	s := open(t, url, "")
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(i%20)*20*time.Microsecond, cancel)
		_, _ = s.ServerTime(ctx)
		cancel()
	}
	if _, err := s.Info(context.Background()); err != nil {
		t.Fatalf("the admin connection did not survive cancelled samplers: %v", err)
	}
}

// testServerTimeHashSets: the hash-index design's set is one WITH statement
// (UPDATE, else INSERT); it counts as a set like the other designs' INSERT.
func testServerTimeHashSets(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, DesignHashIndex)
	cl, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	before, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const sets = 40
	for i := range sets {
		// Half new keys, half overwrites: both branches of the statement.
		if err := cl.(*Client).Set(ctx, fmt.Appendf(nil, "h%d", i%(sets/2)), []byte("value"), 0); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Ops["set"].Calls - before.Ops["set"].Calls; got != sets {
		t.Errorf("hash-index sets: %d calls counted, want %d (ops %v)", got, sets, after.Ops)
	}
}

// testServerTimeCounts counts known operations through pg_stat_statements.
func testServerTimeCounts(t *testing.T, url string) {
	ctx := context.Background()
	s := open(t, url, "")
	// Another store on the same server: its statements name another schema
	// and must not be counted as ours.
	other := open(t, url, "")
	oc, err := other.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	cl, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	kv := cl.(*Client)

	before, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const sets, gets, dels, batch = 300, 200, 50, 16
	for i := range sets {
		if err := kv.Set(ctx, fmt.Appendf(nil, "k%d", i), []byte("value"), 0); err != nil {
			t.Fatal(err)
		}
		if err := oc.(*Client).Set(ctx, fmt.Appendf(nil, "k%d", i), []byte("value"), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range gets {
		if _, ok, err := kv.Get(ctx, fmt.Appendf(nil, "k%d", i), nil); err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
	}
	for i := range dels {
		if err := kv.Delete(ctx, fmt.Appendf(nil, "k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// A pipelined batch counts one call per statement.
	keys := make([][]byte, batch)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", 100+i)
	}
	if _, err := kv.GetBatch(ctx, keys, nil, make([]bool, batch)); err != nil {
		t.Fatal(err)
	}
	// Administration on the schema is not an operation.
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(after.Source, "pg_stat_statements") {
		t.Errorf("source %q", after.Source)
	}
	want := map[string]int64{"set": sets, "get": gets + batch, "delete": dels}
	for op, n := range want {
		a, b := after.Ops[op], before.Ops[op]
		if got := a.Calls - b.Calls; got != n {
			t.Errorf("%s: %d calls, want %d", op, got, n)
		}
		if d := a.Total - b.Total; d <= 0 {
			t.Errorf("%s: total %v, want > 0", op, d)
		}
		t.Logf("%s: %d calls, mean %.1f µs", op, a.Calls-b.Calls, float64(a.Total-b.Total)/1e3/float64(a.Calls-b.Calls))
	}
	for op := range after.Ops {
		if _, ok := want[op]; !ok && after.Ops[op].Calls != before.Ops[op].Calls {
			t.Errorf("unexpected op %q counted: %+v", op, after.Ops[op])
		}
	}

	// COPY counts as one "load" call per Load.
	if err := kv.Load(ctx, keys, keys); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Ops["load"].Calls - after.Ops["load"].Calls; got != 1 {
		t.Errorf("load: %d calls, want 1", got)
	}
}

// testServerTimeWithoutExtension: a database without pg_stat_statements
// gives ErrNoServerTime with the advice, not a failure.
func testServerTimeWithoutExtension(t *testing.T, url string) {
	ctx := context.Background()
	exec(t, sql(t, url), `CREATE DATABASE nostat`)
	s := open(t, strings.Replace(url, "/storebench?", "/nostat?", 1), "")
	_, err := s.ServerTime(ctx)
	if !errors.Is(err, store.ErrNoServerTime) {
		t.Fatalf("err = %v, want ErrNoServerTime", err)
	}
	const want = "server-side time unavailable: pg_stat_statements not installed (CREATE EXTENSION pg_stat_statements and shared_preload_libraries)"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	// The admin connection is still usable.
	if _, err := s.Info(ctx); err != nil {
		t.Errorf("info after: %v", err)
	}
}
