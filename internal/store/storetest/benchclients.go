package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/pollio"
)

// BenchGetClients runs b.N gets over clients KV clients of st, each reading
// a key of its own holding value, and reports the client's CPU per get
// (pollio.CPUPerOp): the figure make bench's versus tables set beside the
// field's tools'.
func BenchGetClients(b *testing.B, st store.Store, clients int, value []byte) {
	ctx := context.Background()
	ops := make([]func() error, clients)
	for i := range ops {
		kv := KVClient(b, st)
		k := []byte(fmt.Sprintf("bench:clients:%d", i))
		if err := kv.Set(ctx, k, value, 0); err != nil {
			b.Fatal(err)
		}
		dst := make([]byte, 0, 16)
		ops[i] = func() error {
			v, ok, err := kv.Get(ctx, k, dst)
			if err == nil && (!ok || len(v) != len(value)) {
				err = fmt.Errorf("get %s: %q %v", k, v, ok)
			}
			return err
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu, err := pollio.CPUPerOp(b.N, ops)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3, "client-µs/op")
}
