package durability

import (
	"context"
	"fmt"
	"strconv"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// fsCostWrites is each side's writes: enough for a steady median, and
// well under a second per side even at an fsync per write through FUSE.
const fsCostWrites = 300

// fsCostWarmup writes go first, unrecorded, on each side: the first writes
// to a fresh store (new directories, a growing file) are not its steady
// cost on either filesystem.
const fsCostWarmup = 100

// The phases that measure the power-cut filesystem's own cost.
const (
	phaseFSPlain = "fs-plain"
	phaseFSMount = "fs-powercut"
)

// powerFS is a crasher whose store lives on a power-cut filesystem.
type powerFS interface {
	// mountStore is the store on the mount, for the cost's writes, and
	// what lets go of it.
	mountStore(ctx context.Context) (store.Store, func(), error)
	// syncAll makes everything on the mount durable.
	syncAll() error
	cutsSoFar() *schema.Cuts
}

// fsWriter writes keys of its own, one after another, on one side of the
// filesystem's cost; trials never read them.
type fsWriter struct {
	kv       store.KV
	side     string
	seed     uint64
	size     int
	seq      int64
	key, val []byte
}

func (w *fsWriter) Do(ctx context.Context, _ int64) error {
	w.key = strconv.AppendInt(append(append(w.key[:0], "durability:fs:"...), w.side+":"...), w.seq, 10)
	w.val = workload.AppendValue(w.val[:0], w.seed, w.seq, 0, w.size)
	w.seq++
	return w.kv.Set(ctx, w.key, w.val, 0)
}

// measureWrites runs one writer's fsCostWrites writes through st as the
// phase name.
func (r *runner) measureWrites(ctx context.Context, st store.Store, name string) (metrics.Phase, error) {
	kvs, closeKV, err := workload.OpenKV(ctx, st.Open, 1)
	if err != nil {
		return metrics.Phase{}, fmt.Errorf("durability: %s: %w", name, err)
	}
	defer closeKV()
	w := &fsWriter{kv: kvs[0], side: name, seed: r.p.Seed, size: r.p.ValueSize}
	ph, err := load.Run(ctx, r.h.Apply(load.Config{Name: name, Workers: 1, Ops: fsCostWrites, WarmupOps: fsCostWarmup}), []load.Worker{w})
	if err != nil {
		return ph, fmt.Errorf("durability: %s: %w", name, err)
	}
	return ph, nil
}

// measureMount runs the mount's side of the cost, then makes what it
// wrote durable, so the first cut discards only the first trial's writes.
func (r *runner) measureMount(ctx context.Context, pf powerFS) (metrics.Phase, error) {
	st, release, err := pf.mountStore(ctx)
	if err != nil {
		return metrics.Phase{}, fmt.Errorf("durability: %s: %w", phaseFSMount, err)
	}
	ph, err := r.measureWrites(ctx, st, phaseFSMount)
	release()
	if err != nil {
		return ph, err
	}
	return ph, pf.syncAll()
}

func fsCost(plain, mount metrics.Phase) *schema.FSCost {
	lat := func(l metrics.Latency) schema.Latency { return schema.Latency{P50: l.P50, P99: l.P99, Mean: l.Mean} }
	return &schema.FSCost{Writes: min(plain.Ops, mount.Ops), Plain: lat(plain.LatencyUs), Mount: lat(mount.LatencyUs)}
}
