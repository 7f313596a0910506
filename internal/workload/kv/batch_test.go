package kv

import (
	"context"
	"errors"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
)

// checkBatchRun runs kv with a batch and checks both phases and the data.
func checkBatchRun(t *testing.T, st store.Store, p Params) {
	t.Helper()
	phases, err := Run(context.Background(), st, p, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 {
		t.Fatalf("phases = %+v", phases)
	}
	w, r := phases[0], phases[1]
	n := min(int64(p.Batch), p.Keys)
	if w.Ops != p.Keys || w.OpsPerCall != int(n) || len(w.Errors) != 0 {
		t.Errorf("write: ops %d, ops per call %d, errors %v %v; want %d ops in calls of %d", w.Ops, w.OpsPerCall, w.Errors, w.ErrorSamples, p.Keys, n)
	}
	if w.ThroughputOpsS <= 0 || w.LatencyUs.Max <= 0 {
		t.Errorf("write: throughput %v ops/s, latency %+v", w.ThroughputOpsS, w.LatencyUs)
	}
	// Reads are one by one and find every key with its value.
	if r.Ops != p.Keys || r.OpsPerCall != 0 || len(r.Errors) != 0 {
		t.Errorf("read: ops %d, ops per call %d, errors %v %v", r.Ops, r.OpsPerCall, r.Errors, r.ErrorSamples)
	}
}

func TestBatchWrite(t *testing.T) {
	p := Params{Keys: 3000, ValueSize: 100, KeyMode: workload.KeyRandomFloat, Seed: 5, Clients: 3, Batch: 500}
	t.Run("memory", func(t *testing.T) { // no BulkLoader: SetBatch
		t.Parallel()
		checkBatchRun(t, memStore(t), p)
		q := p
		q.Batch = 10000 // above Keys: one chunk of every key
		checkBatchRun(t, memStore(t), q)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		url := servertest.Start(t, server.Redis, server.Options{Profile: "none"}).URL
		st, err := redis.New(context.Background(), redis.Config{URL: url, Namespace: storetest.Namespace(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(context.Background()) })
		checkBatchRun(t, st, p)
	})
	t.Run("memcached", func(t *testing.T) {
		t.Parallel()
		url := servertest.Start(t, server.Memcached, server.Options{}).URL
		st, err := memcached.New(context.Background(), memcached.Config{URL: url, Namespace: storetest.Namespace(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(context.Background()) })
		checkBatchRun(t, st, p)
	})
	t.Run("postgres", func(t *testing.T) { // COPY into a table Reset has emptied
		t.Parallel()
		url := servertest.Start(t, server.Postgres, server.Options{}).URL
		st, err := postgres.New(context.Background(), postgres.Config{URL: url, Namespace: storetest.Namespace(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(context.Background()) })
		checkBatchRun(t, st, p)
		checkBatchRun(t, st, p) // a second run on the same store: Reset empties the table first
	})
}

func TestBatchUnsupported(t *testing.T) {
	st, err := files.New(context.Background(), files.Config{Dir: t.TempDir(), Namespace: "kvtest"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	phases, err := Run(context.Background(), st, Params{Keys: 10, ValueSize: 1, Clients: 1, Batch: 5}, Hooks{})
	if !errors.Is(err, store.ErrUnsupported) || len(phases) != 0 {
		t.Fatalf("Run with batch on files = %d phases, %v; want ErrUnsupported before any phase", len(phases), err)
	}
}

func TestBatchValidate(t *testing.T) {
	for _, bad := range []Params{
		{Keys: 10, ValueSize: 1, Clients: 1, Batch: -1},
		{Keys: 10, ValueSize: 1, Clients: 1, Batch: 3},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	for _, good := range []Params{
		{Keys: 10, ValueSize: 1, Clients: 1, Batch: 5},
		{Keys: 10, ValueSize: 1, Clients: 1, Batch: 1000},
	} {
		if err := good.Validate(); err != nil {
			t.Errorf("%+v: %v", good, err)
		}
	}
}
