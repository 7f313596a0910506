package kv

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/workload"
)

func memStore(t *testing.T) store.Store {
	t.Helper()
	st, err := memory.New(context.Background(), memory.Config{Namespace: "kvtest"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

func TestRunWritesThenReadsEveryKey(t *testing.T) {
	for _, clients := range []int{1, 3} {
		st := memStore(t)
		p := Params{Keys: 5000, ValueSize: 64, KeyMode: workload.KeyRandomFloat, Seed: 9, Clients: clients, WarmupOps: 100}
		phases, err := Run(context.Background(), st, p, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if len(phases) != 2 || phases[0].Name != "write" || phases[1].Name != "read" {
			t.Fatalf("phases = %+v", phases)
		}
		for _, ph := range phases {
			if ph.Ops != p.Keys || len(ph.Errors) != 0 || ph.Workers != clients {
				t.Errorf("%d clients, %s: ops %d errors %v workers %d", clients, ph.Name, ph.Ops, ph.Errors, ph.Workers)
			}
		}
		if phases[1].Warmup.Ops != 100 {
			t.Errorf("read warm-up = %+v, want 100 ops excluded", phases[1].Warmup)
		}
		// Every key really is in the store with its value.
		c, _ := st.Open(context.Background())
		kv := c.(store.KV)
		for _, i := range []int64{0, 1234, p.Keys - 1} {
			k := workload.AppendKey(nil, p.KeyMode, p.Seed, i)
			got, ok, err := kv.Get(context.Background(), k, nil)
			if !ok || err != nil || string(got) != string(workload.AppendValue(nil, p.Seed, i, 0, p.ValueSize)) {
				t.Errorf("key %d (%s): %q %v %v", i, k, got, ok, err)
			}
		}
		c.Close()
	}
}

func TestReadCountsEveryMismatch(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	p := Params{Keys: 1000, ValueSize: 32, KeyMode: workload.KeySequential, Seed: 1, Clients: 2}
	clients, closeClients, err := OpenClients(ctx, st, p.Clients)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClients()
	if _, err := Write(ctx, clients, p, Hooks{}); err != nil {
		t.Fatal(err)
	}
	// Behind the workload's back: one value changed, one key deleted.
	if err := clients[0].Set(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 10), []byte("tampered"), 0); err != nil {
		t.Fatal(err)
	}
	if err := clients[0].Delete(ctx, workload.AppendKey(nil, p.KeyMode, p.Seed, 20)); err != nil {
		t.Fatal(err)
	}
	read, err := Read(ctx, clients, p, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := read.Errors[string(errclass.ClassMismatch)]; got != 2 {
		t.Fatalf("mismatches = %d (errors %v), want 2", got, read.Errors)
	}
	joined := strings.Join(read.ErrorSamples, "\n")
	if !strings.Contains(joined, "key:0000000010") || !strings.Contains(joined, "key:0000000020 is missing") {
		t.Errorf("samples do not name the keys: %s", joined)
	}
}

func TestValidate(t *testing.T) {
	good := Params{Keys: 1, ValueSize: 1, Clients: 1}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Params{
		{Keys: 0, ValueSize: 1, Clients: 1},
		{Keys: 1, ValueSize: 0, Clients: 1},
		{Keys: 1, ValueSize: 1, Clients: 0},
		{Keys: 1, ValueSize: 1, Clients: 1, WarmupOps: -1},
		{Keys: 1, ValueSize: 1, Clients: 1, KeyMode: "zipf"},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Sizes past the bounds are refused before any allocation, saying the
// limit and why (issue 15: --value-size 9223372036854775807 panicked in
// makeslice).
func TestAbsurdSizesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		want string
	}{
		{Params{Keys: 10, ValueSize: math.MaxInt, Clients: 1}, "value_size 9223372036854775807: at most 536870912 bytes (512 MiB): Redis's largest value"},
		{Params{Keys: 10, ValueSize: workload.MaxValueSize + 1, Clients: 1}, "at most 536870912 bytes"},
		{Params{Keys: 1_000_000_000_000, ValueSize: 1, Clients: 1}, "keys 1000000000000: at most 1000000000"},
		{Params{Keys: 10, ValueSize: 1, Clients: 1_000_000}, "clients 1000000: at most"},
		{Params{Keys: 10_000_000, ValueSize: 1, Clients: 1, Batch: 10_000_000}, "batch 10000000: at most 1000000 keys"},
	} {
		phases, err := Run(context.Background(), memStore(t), tc.p, Hooks{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(phases) != 0 {
			t.Errorf("%+v: phases %v, error %v; want %q before any work", tc.p, phases, err, tc.want)
		}
	}
	if err := (Params{Keys: 10, ValueSize: workload.MaxValueSize, Clients: 1}).Validate(); err != nil {
		t.Errorf("the largest value size refused: %v", err)
	}
}
