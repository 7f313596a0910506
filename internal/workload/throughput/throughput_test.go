package throughput

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/workloadtest"
)

// openers and closing open real stores (workloadtest).
var (
	openers = workloadtest.Openers
	closing = workloadtest.Closing
)

func checkPhases(t *testing.T, phases []metrics.Phase, ops int64, depth int) {
	t.Helper()
	if len(phases) != 2 || phases[0].Name != OpSet || phases[1].Name != OpGet {
		t.Fatalf("phases %+v, want set then get", phases)
	}
	for _, ph := range phases {
		if ph.Ops != ops || len(ph.Errors) != 0 || ph.ThroughputOpsS <= 0 {
			t.Errorf("%s: %d ops, errors %v %v, %.0f ops/s; want %d ops, none failed", ph.Name, ph.Ops, ph.Errors, ph.ErrorSamples, ph.ThroughputOpsS, ops)
		}
		want := depth
		if depth == 1 {
			want = 0
		}
		if ph.OpsPerCall != want {
			t.Errorf("%s: ops per call %d, want %d", ph.Name, ph.OpsPerCall, want)
		}
		if ph.ClientCPUUsPerOp <= 0 {
			t.Errorf("%s: client CPU per op %v", ph.Name, ph.ClientCPUUsPerOp)
		}
	}
}

func TestRun(t *testing.T) {
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			p := Params{Keyspace: workload.Keyspace{Keys: 1000, Seed: 3}, Load: workload.Load{Clients: 4, Ops: 2000}}
			phases, err := Run(context.Background(), st, p, workload.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			checkPhases(t, phases, 2000, 1)

			// Pipeline 8: 100 calls of 8 ops per phase, every read verified.
			p.Load.Pipeline, p.Load.Ops = 8, 800
			p.ValueSize = 50
			phases, err = Run(context.Background(), st, p, workload.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			checkPhases(t, phases, 800, 8)

			// Every key is there with its value after the run.
			kv := storetest.KVClient(t, st)
			for _, i := range []int64{0, 1, 999} {
				k := workload.AppendKey(nil, DefaultKeyMode, p.Seed, i)
				got, ok, err := kv.Get(context.Background(), k, nil)
				if want := workload.AppendValue(nil, p.Seed, i, 0, 50); err != nil || !ok || string(got) != string(want) {
					t.Errorf("key %s = %q %v %v, want %q", k, got, ok, err, want)
				}
			}
		})
	}
}

func TestDurationAndOneOperation(t *testing.T) {
	st := openers["memory"](t)
	p := Params{Keyspace: workload.Keyspace{Keys: 100}, Operations: []string{"get"}, Load: workload.Load{Clients: 2, Duration: 100 * time.Millisecond}}
	phases, err := Run(context.Background(), st, p, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 1 || phases[0].Name != OpGet || phases[0].Ops == 0 || len(phases[0].Errors) != 0 {
		t.Fatalf("phases %+v", phases)
	}
}

// TestMissIsMismatch reads a populated keyspace in which one key is gone
// and one has another value: each read of them is a mismatch error, and
// nothing else is.
func TestMissIsMismatch(t *testing.T) {
	ctx := context.Background()
	for _, depth := range []int{1, 4} {
		st := openers["memory"](t)
		p := Params{Keyspace: workload.Keyspace{Keys: 10, Seed: 8}, Load: workload.Load{Clients: 1, Ops: 400, Pipeline: depth}}.WithDefaults()
		if err := Populate(ctx, st, p); err != nil {
			t.Fatal(err)
		}
		kv := storetest.KVClient(t, st)
		if err := kv.Delete(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 3)); err != nil {
			t.Fatal(err)
		}
		if err := kv.Set(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 5), []byte("tampered"), 0); err != nil {
			t.Fatal(err)
		}
		ph, err := runPhase(ctx, []store.KV{kv}, p, OpGet, 1, workload.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		// Replay the worker's key sequence: a call fails if any of its keys is 3 or 5.
		w := newWorker(kv, p, true, uniform(t, p, workerID(1, 0)))
		var want int64
		for range p.Load.Ops / int64(depth) {
			bad := false
			for range depth {
				if i := w.dist.Next(); i == 3 || i == 5 {
					bad = true
				}
			}
			if bad {
				want++
			}
		}
		if want == 0 {
			t.Fatal("the key sequence never reads key 3 or 5")
		}
		if got := ph.Errors[string(errclass.ClassMismatch)]; got != want || len(ph.Errors) != 1 {
			t.Errorf("depth %d: errors %v, want %d mismatches", depth, ph.Errors, want)
		}
		joined := strings.Join(ph.ErrorSamples, "\n")
		if !strings.Contains(joined, "key:0000000003 is missing") || !strings.Contains(joined, `got 8 bytes "tampered"`) {
			t.Errorf("samples:\n%s", joined)
		}
	}
}

func TestKeysAreUniformAndPerWorker(t *testing.T) {
	p := Params{Keyspace: workload.Keyspace{Keys: 7}, Load: workload.Load{Clients: 1}}.WithDefaults()
	a, b := newWorker(nil, p, false, uniform(t, p, workerID(0, 0))), newWorker(nil, p, false, uniform(t, p, workerID(0, 1)))
	counts := make([]int, 7)
	same := 0
	for range 70000 {
		i, j := a.dist.Next(), b.dist.Next()
		counts[i]++
		if i == j {
			same++
		}
	}
	for i, n := range counts {
		if n < 9500 || n > 10500 {
			t.Errorf("key %d drawn %d times of 70000", i, n)
		}
	}
	if same > 11000 { // independent streams agree 1/7 of the time
		t.Errorf("workers 0 and 1 drew the same key %d times of 70000", same)
	}
	if n := testing.AllocsPerRun(1000, func() { a.dist.Next() }); n != 0 {
		t.Errorf("next allocates %v", n)
	}
}

func TestDoDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	st := openers["memory"](t)
	p := Params{Keyspace: workload.Keyspace{Keys: 100}, Load: workload.Load{Clients: 1}}.WithDefaults()
	if err := Populate(ctx, st, p); err != nil {
		t.Fatal(err)
	}
	kv := storetest.KVClient(t, st)
	for _, depth := range []int{1, 8} {
		p.Load.Pipeline = depth
		w := newWorker(kv, p, true, uniform(t, p, 0))
		if n := testing.AllocsPerRun(1000, func() {
			if err := w.Do(ctx, 0); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("get, depth %d: %v allocations per call", depth, n)
		}
	}
}

func TestPipelineUnsupported(t *testing.T) {
	st := closing(t)(files.New(context.Background(), files.Config{Dir: t.TempDir(), Namespace: "tp"}))
	phases, err := Run(context.Background(), st, Params{Load: workload.Load{Clients: 2, Ops: 10, Pipeline: 4}}, workload.Hooks{})
	if !errors.Is(err, store.ErrUnsupported) || len(phases) != 0 {
		t.Fatalf("pipeline on files = %d phases, %v; want ErrUnsupported before any phase", len(phases), err)
	}
	// Without a pipeline files work, populated one Set at a time.
	phases, err = Run(context.Background(), st, Params{Keyspace: workload.Keyspace{Keys: 50}, Load: workload.Load{Clients: 2, Ops: 100}}, workload.Hooks{})
	if err != nil || len(phases) != 2 || len(phases[1].Errors) != 0 {
		t.Fatalf("files: %v %+v", err, phases)
	}
}

func TestParams(t *testing.T) {
	d := Params{}.WithDefaults()
	if d.Keys != 100000 || d.ValueSize != 3 || d.KeyMode != workload.KeySequential || d.Load.Clients != 50 || d.Load.Ops != 100000 ||
		strings.Join(d.Operations, ",") != "set,get" {
		t.Errorf("defaults = %+v", d)
	}
	if got := (Params{Operations: []string{"get", "set"}}).WithDefaults().Operations; strings.Join(got, ",") != "set,get" {
		t.Errorf("operations run as %v, want set,get", got)
	}
	if err := d.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Params{
		{Keyspace: workload.Keyspace{Keys: -1}},
		{Keyspace: workload.Keyspace{ValueSize: -1}},
		{Keyspace: workload.Keyspace{KeyMode: "zipf"}},
		{Operations: []string{"set", "incr"}},
		{Load: workload.Load{Clients: -1}},
		{Load: workload.Load{Pipeline: 4, ConnectPerOp: true}},
		{Load: workload.Load{Ops: 10, Duration: time.Second}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// uniform is the key generator runPhase gives the worker of stream id.
func uniform(t *testing.T, p Params, id uint64) keydist.Gen {
	t.Helper()
	sp, err := keydist.New(keydist.Uniform, p.Keys)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Gen(p.Seed, id, 0, 1)
}
