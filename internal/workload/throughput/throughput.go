// Package throughput is redis-benchmark's experiment for every key-value
// store: N clients SET and then GET small values over keys drawn uniformly
// at random from a keyspace (redis-benchmark -t set,get -c 50 -r K -d 3),
// optionally pipelined (-P).
//
// Each operation is one measured phase, "set" then "get". Before the get
// phase the whole keyspace is written, unmeasured, so every GET must hit:
// a miss or a value that differs byte for byte is a mismatch error. Values
// derive from the seed and the key's index, so the set phase and the
// pre-population write the same value for a key.
//
// With Load.Pipeline P each timed call sends P operations through
// store.Batcher in one round trip, on stores that have it. Keys are drawn
// by a uniform keydist generator per worker (splitmix64), seeded from Seed
// and the worker's number: no lock and no allocation per key.
package throughput

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// Defaults, applied by Params.WithDefaults to zero fields.
const (
	DefaultKeyspace  = 100000 // redis-benchmark -r 100000, as in the article
	DefaultValueSize = 3      // redis-benchmark's -d default
	DefaultClients   = 50     // redis-benchmark's -c default
	DefaultOps       = 100000 // redis-benchmark's -n default, per operation
	DefaultKeyMode   = workload.KeySequential
)

// Operation names.
const (
	OpSet = "set"
	OpGet = "get"
)

// Ops lists the operations in the order they run.
var Ops = []string{OpSet, OpGet}

// Params are one throughput cell's parameters.
type Params struct {
	// Keyspace: keys drawn uniformly at random from [0, Keys), default
	// 100000; ValueSize default 3; KeyMode default sequential
	// ("key:0000000042", like redis-benchmark's key:__rand_int__); Seed.
	workload.Keyspace
	// Operations are "set" and/or "get"; default both. They run in that
	// order whatever order they are given in, as redis-benchmark -t does.
	Operations []string `json:"operations"`
	// Load: Clients default 50; Ops default 100000 per phase when neither
	// Ops nor Duration is given.
	Load workload.Load `json:"load"`
	// Part is the cell's place in a sharded run (run --shard): its workers
	// draw the whole run's streams for their numbers, and its sets go to
	// its own part of the keyspace.
	Part workload.Part `json:"shard,omitzero"`
}

// WithDefaults returns p with every zero field set to its default and the
// operations in running order: the parameters a run actually uses.
func (p Params) WithDefaults() Params {
	p.Keyspace = p.Keyspace.WithDefaults(workload.Keyspace{Keys: DefaultKeyspace, ValueSize: DefaultValueSize, KeyMode: DefaultKeyMode})
	if len(p.Operations) == 0 {
		p.Operations = Ops
	} else {
		var ops []string
		for _, o := range Ops {
			if slices.Contains(p.Operations, o) {
				ops = append(ops, o)
			}
		}
		// Unknown names are kept, for Validate to name them.
		for _, o := range p.Operations {
			if !slices.Contains(Ops, o) {
				ops = append(ops, o)
			}
		}
		p.Operations = ops
	}
	p.Load = p.Load.WithDefaults(DefaultClients, DefaultOps)
	return p
}

// Validate rejects impossible parameters (after defaults) before any work.
func (p Params) Validate() error {
	p = p.WithDefaults()
	errs := p.Keyspace.Check()
	for _, o := range p.Operations {
		if !slices.Contains(Ops, o) {
			errs = append(errs, fmt.Errorf("unknown operation %q (valid: set, get)", o))
		}
	}
	errs = append(errs, p.Load.Validate())
	return workload.Refuse("throughput", errs...)
}

// Memory estimates a cell's memory (workload.Estimate): per client a
// pipeline's keys, the values it sends and the values it reads back, with
// the client library's copy; the pre-population; and the keyspace's data.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	vs := int64(p.ValueSize)
	buffers := int64(p.Load.Depth()) * (workload.KeyBytes + 3*vs)
	return workload.PopulatedEstimate(p.Keyspace, p.Load.Clients, workload.ClientBytes(0, buffers))
}

// Run resets the store, then runs one measured phase per operation. It
// returns the phases measured so far, also when it fails half-way. A store
// without store.Batcher fails with store.ErrUnsupported before any work
// when Load.Pipeline > 1.
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.WithDefaults()
	clients, closeAll, err := workload.FreshClients(ctx, "throughput", st, p.Load)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	var phases []metrics.Phase
	for n, op := range p.Operations {
		if op == OpGet {
			if err := Populate(ctx, st, p); err != nil {
				return phases, err
			}
		}
		ph, err := runPhase(ctx, clients, p, op, n, h)
		phases = append(phases, ph)
		if err != nil {
			return phases, fmt.Errorf("throughput %s phase: %w", op, err)
		}
	}
	return phases, nil
}

// runPhase measures op; n numbers the phase, to seed its key sequences.
func runPhase(ctx context.Context, clients []store.KV, p Params, op string, n int, h workload.Hooks) (metrics.Phase, error) {
	sp, err := keydist.New(keydist.Uniform, p.Keys)
	if err != nil {
		return metrics.Phase{Name: op}, err
	}
	workers := make([]load.Worker, len(clients))
	for i, c := range clients {
		w, of := p.Part.Worker(i, len(clients))
		workers[i] = newWorker(c, p, op == OpGet, sp.Gen(p.Seed, workerID(n, w), w, of))
	}
	cfg := p.Load.Config(op)
	cfg.ClientIO = workload.ClientIO(clients)
	return load.Run(ctx, h.Apply(cfg), workers)
}

func workerID(phase, worker int) uint64 { return uint64(phase)<<32 | uint64(worker) }

// Populate empties the store and writes every key of the keyspace with its
// value, unmeasured (see workload.Populate).
func Populate(ctx context.Context, st store.Store, p Params) error {
	p = p.WithDefaults()
	if err := workload.Populate(ctx, st, p.Keyspace, p.Load.Clients); err != nil {
		return fmt.Errorf("throughput: %w", err)
	}
	return nil
}

// worker is one client's op loop. Nothing in Do allocates: the keys,
// values and read buffers are the worker's own and reused.
type worker struct {
	kv    store.KV
	b     store.Batcher // nil unless depth > 1
	get   bool
	depth int
	mode  workload.KeyMode
	seed  uint64
	size  int
	dist  keydist.Gen // uniform over the keyspace
	part  workload.Part
	keyN  int64 // the keyspace's size

	key, val, got []byte // depth 1

	idx        []int64 // depth > 1: the keys' indexes,
	buf        []byte  // keys and values back to back,
	keys, vals [][]byte
	dst        [][]byte
	found      []bool
}

func newWorker(kv store.KV, p Params, get bool, keys keydist.Gen) *worker {
	w := &worker{
		kv: kv, get: get, depth: p.Load.Depth(), mode: p.KeyMode, seed: p.Seed, size: p.ValueSize, dist: keys, part: p.Part, keyN: p.Keys,
		key: make([]byte, 0, 32), val: make([]byte, 0, p.ValueSize), got: make([]byte, 0, p.ValueSize),
	}
	if w.depth > 1 {
		w.b = kv.(store.Batcher) // KVClients checked it
		w.idx = make([]int64, w.depth)
		w.buf = make([]byte, 0, w.depth*(32+p.ValueSize))
		w.keys = make([][]byte, w.depth)
		w.vals = make([][]byte, w.depth)
		w.dst = make([][]byte, w.depth)
		for i := range w.dst {
			w.dst[i] = make([]byte, 0, p.ValueSize)
		}
		w.found = make([]bool, w.depth)
	}
	return w
}

func (w *worker) Do(ctx context.Context, _ int64) error {
	if w.depth > 1 {
		return w.doBatch(ctx)
	}
	i := w.next()
	w.key = workload.AppendKey(w.key[:0], w.mode, w.seed, i)
	w.val = workload.AppendValue(w.val[:0], w.seed, i, 0, w.size)
	if !w.get {
		return w.kv.Set(ctx, w.key, w.val, 0)
	}
	got, ok, err := w.kv.Get(ctx, w.key, w.got[:0])
	w.got = got
	if err != nil {
		return err
	}
	return workload.CheckRead(w.key, got, ok, w.val)
}

// next is the key of the next op: a set's in the shard's own part of the
// keyspace, so shards write disjoint keys.
func (w *worker) next() int64 {
	i := w.dist.Next()
	if !w.get {
		i = w.part.WriteKey(i, w.keyN)
	}
	return i
}

func (w *worker) doBatch(ctx context.Context) error {
	// buf has room for the whole batch, so the slices below never move.
	w.buf = w.buf[:0]
	for j := range w.depth {
		i := w.next()
		w.idx[j] = i
		at := len(w.buf)
		w.buf = workload.AppendKey(w.buf, w.mode, w.seed, i)
		mid := len(w.buf)
		w.buf = workload.AppendValue(w.buf, w.seed, i, 0, w.size)
		w.keys[j], w.vals[j] = w.buf[at:mid:mid], w.buf[mid:len(w.buf):len(w.buf)]
	}
	if !w.get {
		return w.b.SetBatch(ctx, w.keys, w.vals, 0)
	}
	dst, err := w.b.GetBatch(ctx, w.keys, w.dst, w.found)
	w.dst = dst
	if err != nil {
		return err
	}
	for j := range w.depth {
		if !w.found[j] || !bytes.Equal(dst[j], w.vals[j]) {
			return w.batchMismatch(j)
		}
	}
	return nil
}

// batchMismatch describes the mismatches of a batch, from the first, j.
func (w *worker) batchMismatch(j int) error {
	bad := 0
	for k := j; k < w.depth; k++ {
		if !w.found[k] || !bytes.Equal(w.dst[k], w.vals[k]) {
			bad++
		}
	}
	err := workload.Missing(w.keys[j])
	if w.found[j] {
		err = workload.Differs(w.keys[j], w.dst[j], w.vals[j])
	}
	if bad == 1 {
		return err
	}
	return fmt.Errorf("%d of %d reads of the pipeline: %w", bad, w.depth, err)
}
