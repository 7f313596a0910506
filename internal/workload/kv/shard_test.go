package kv

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Each of 3 shards writes and reads back its own contiguous part of the
// keys, in whole chunks with a batch; the parts are disjoint and cover the
// run's keys.
func TestShardsWriteDisjointPartsOfTheKeys(t *testing.T) {
	for _, batch := range []int{0, 2} {
		const keys = 10
		owner := map[int64]int{}
		for i := 0; i < 3; i++ {
			st := memStore(t)
			p := Params{Keys: keys, ValueSize: 8, KeyMode: workload.KeySequential, Seed: 3, Clients: 1, Batch: batch, Shard: workload.Shard{Index: i, Count: 3}}
			phases, err := Run(context.Background(), st, p, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := st.Open(context.Background())
			kv := c.(store.KV)
			var present int64
			for k := range int64(keys) {
				if _, ok, err := kv.Get(context.Background(), workload.AppendKey(nil, p.KeyMode, p.Seed, k), nil); err != nil {
					t.Fatal(err)
				} else if ok {
					present++
					if o, dup := owner[k]; dup {
						t.Fatalf("batch %d: key %d written by shards %d and %d", batch, k, o, i)
					}
					owner[k] = i
				}
			}
			c.Close()
			if phases[0].Ops != present || phases[1].Ops != present || len(phases[1].Errors) != 0 {
				t.Fatalf("batch %d, shard %d/3: wrote %d, read %d (errors %v), %d keys in the store", batch, i, phases[0].Ops, phases[1].Ops, phases[1].Errors, present)
			}
		}
		if len(owner) != keys {
			t.Fatalf("batch %d: the shards wrote %d keys of %d", batch, len(owner), keys)
		}
	}
}
