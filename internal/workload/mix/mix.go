// Package mix is a read/write mix over a keyspace with a key distribution,
// YCSB's workloads A/B/C for every key-value store: each op draws a key
// (uniform, zipfian or sequential) and GETs it with probability ReadRatio,
// else SETs it. It answers questions such as "does a 95/5 read-heavy
// zipfian load change the ranking that throughput's pure sets and gets
// gave?"
//
// The keyspace is written first, unmeasured, so every GET must hit; then
// ONE measured phase, "mix", runs both kinds interleaved, and the engine
// records gets and sets apart as well (Phase.ByOp), so the mix's total does
// not hide that its kinds cost differently.
//
// A SET writes the key's value of version 0, the very value the
// pre-population wrote: every later GET can still be checked byte for byte
// whichever worker wrote last, with no shared state between workers. A miss
// or a different value is a mismatch error, as in throughput. (Writing the
// same bytes again costs a store as much as a new value of that size: none
// of the stores compares values before writing.)
package mix

import (
	"context"
	"fmt"
	"math"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// Defaults, applied by Params.WithDefaults to zero fields.
const (
	DefaultKeyspace  = 100000 // as throughput
	DefaultValueSize = 100    // a small cached object, as kv's default
	DefaultClients   = 50     // as throughput: enough concurrency to load a server
	DefaultOps       = 100000
	DefaultReadRatio = 0.9 // a read-mostly cache
	DefaultKeyMode   = workload.KeySequential
	// DefaultKeyDist is uniform, as throughput draws keys, so a mix's
	// figures compare with throughput's; ask for zipfian to add skew.
	DefaultKeyDist = keydist.Uniform
)

// Phase and kind names.
const (
	PhaseMix = "mix"
	OpGet    = "get"
	OpSet    = "set"
)

// Kinds are the kinds of op of the mix phase, indexed by worker.Kind.
var Kinds = []string{OpGet, OpSet}

const (
	kindGet = iota
	kindSet
)

// Params are one mix cell's parameters.
type Params struct {
	// Keyspace: keys [0, Keys), default 100000; ValueSize default 100;
	// KeyMode default sequential ("key:0000000042"); Seed.
	workload.Keyspace
	// ReadRatio is the probability that an op is a GET: 0 = all sets,
	// 1 = all gets. nil takes the default, 0.9.
	ReadRatio *float64     `json:"read_ratio"`
	KeyDist   keydist.Dist `json:"key_dist"` // uniform (default), zipfian or sequential
	// Load: Clients default 50; Ops default 100000 when neither Ops nor
	// Duration is given. Pipeline is not supported.
	Load workload.Load `json:"load"`
	// Part is the cell's place in a sharded run (run --shard): its workers
	// draw the whole run's streams for their numbers, and its sets go to
	// its own part of the keyspace.
	Part workload.Part `json:"shard,omitzero"`
}

// Ratio returns p's read ratio, or the default when unset.
func (p Params) Ratio() float64 {
	if p.ReadRatio == nil {
		return DefaultReadRatio
	}
	return *p.ReadRatio
}

// WithDefaults returns p with every zero field set to its default: the
// parameters a run actually uses.
func (p Params) WithDefaults() Params {
	p.Keyspace = p.Keyspace.WithDefaults(workload.Keyspace{Keys: DefaultKeyspace, ValueSize: DefaultValueSize, KeyMode: DefaultKeyMode})
	if p.ReadRatio == nil {
		r := DefaultReadRatio
		p.ReadRatio = &r
	}
	if p.KeyDist == "" {
		p.KeyDist = DefaultKeyDist
	}
	p.Load = p.Load.WithDefaults(DefaultClients, DefaultOps)
	return p
}

// Validate rejects impossible parameters (after defaults) before any work.
func (p Params) Validate() error {
	p = p.WithDefaults()
	errs := p.Keyspace.Check()
	if err := CheckRatio(p.Ratio()); err != nil {
		errs = append(errs, err)
	}
	if _, err := keydist.Parse(string(p.KeyDist)); err != nil {
		errs = append(errs, err)
	}
	if p.Load.Pipeline > 1 {
		errs = append(errs, fmt.Errorf("--pipeline is not supported (got %d): a pipeline would carry gets and sets of one kind per call; drop it, or use the throughput workload for pipelined gets and sets", p.Load.Pipeline))
	}
	errs = append(errs, p.Load.Validate())
	return workload.Refuse("mix", errs...)
}

// Memory estimates a cell's memory (workload.Estimate): per client the
// key, the value it sends or expects and the value it reads, with a
// recorder per kind; the pre-population; and the keyspace's data.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	buffers := workload.KeyBytes + 3*int64(p.ValueSize)
	return workload.PopulatedEstimate(p.Keyspace, p.Load.Clients, workload.ClientBytes(len(Kinds), buffers))
}

// CheckRatio rejects a read ratio outside [0, 1].
func CheckRatio(r float64) error {
	if math.IsNaN(r) || r < 0 || r > 1 {
		return fmt.Errorf("read ratio must be between 0 (all sets) and 1 (all gets), got %v", r)
	}
	return nil
}

// Run populates the keyspace, unmeasured, then measures the mix phase. It
// returns the phases measured (none when it fails before the phase).
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.WithDefaults()
	sp, err := keydist.New(p.KeyDist, p.Keys)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	clients, closeAll, err := workload.KVClients(ctx, st, p.Load)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	defer closeAll()
	if err := workload.Populate(ctx, st, p.Keyspace, p.Load.Clients); err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	ph, err := measure(ctx, clients, p, sp, h)
	if err != nil {
		return []metrics.Phase{ph}, fmt.Errorf("mix phase: %w", err)
	}
	return []metrics.Phase{ph}, nil
}

// measure runs the mix phase on a populated keyspace.
func measure(ctx context.Context, clients []store.KV, p Params, sp *keydist.Space, h workload.Hooks) (metrics.Phase, error) {
	workers := make([]load.Worker, len(clients))
	for i, c := range clients {
		n, of := p.Part.Worker(i, len(clients))
		workers[i] = newWorker(c, p, n, sp.Gen(p.Seed, uint64(n), n, of))
	}
	cfg := p.Load.Config(PhaseMix)
	cfg.Kinds = Kinds
	cfg.ClientIO = workload.ClientIO(clients)
	return load.Run(ctx, h.Apply(cfg), workers)
}

// worker is one client's op loop. Nothing in Do allocates: the key, value
// and read buffers are the worker's own and reused.
type worker struct {
	kv    store.KV
	keys  keydist.Gen
	ops   keydist.Rand // the get-or-set draws: a stream of their own, so the keys drawn do not depend on the ratio
	reads float64      // an op is a get when its draw in [0, 1) is below this
	mode  workload.KeyMode
	seed  uint64
	size  int
	kind  int // of the last op, for the engine
	part  workload.Part
	keyN  int64 // the keyspace's size

	key, val, got []byte
}

// opStreams sets the op-kind streams apart from the key streams (worker
// numbers).
const opStreams = 1 << 62

func newWorker(kv store.KV, p Params, n int, keys keydist.Gen) *worker {
	return &worker{
		kv: kv, keys: keys, ops: keydist.NewRand(p.Seed, opStreams+uint64(n)), reads: p.Ratio(),
		mode: p.KeyMode, seed: p.Seed, size: p.ValueSize, part: p.Part, keyN: p.Keys,
		key: make([]byte, 0, 32), val: make([]byte, 0, p.ValueSize), got: make([]byte, 0, p.ValueSize),
	}
}

// Kind is the kind of the last op, an index into Kinds.
func (w *worker) Kind() int { return w.kind }

func (w *worker) Do(ctx context.Context, _ int64) error {
	i := w.keys.Next()
	if w.ops.Float64() >= w.reads { // ratio 1: always below; 0: never
		w.kind = kindSet
		i = w.part.WriteKey(i, w.keyN)
		w.key = workload.AppendKey(w.key[:0], w.mode, w.seed, i)
		w.val = workload.AppendValue(w.val[:0], w.seed, i, 0, w.size)
		return w.kv.Set(ctx, w.key, w.val, 0)
	}
	w.key = workload.AppendKey(w.key[:0], w.mode, w.seed, i)
	w.val = workload.AppendValue(w.val[:0], w.seed, i, 0, w.size)
	w.kind = kindGet
	got, ok, err := w.kv.Get(ctx, w.key, w.got[:0])
	w.got = got
	if err != nil {
		return err
	}
	return workload.CheckRead(w.key, got, ok, w.val)
}

// Driver opens p's clients on st and populates the keyspace once,
// unmeasured, for a workload that runs the mix's ops at rates and client
// counts of its own (capacity): the workers, their phase configuration,
// more(n) for n fresh workers on connections of their own, and closeAll.
func Driver(ctx context.Context, st store.Store, p Params) (workers []load.Worker, cfg load.Config, more func(ctx context.Context, n int) ([]load.Worker, func(), error), closeAll func(), err error) {
	if err := p.Validate(); err != nil {
		return nil, cfg, nil, nil, err
	}
	p = p.WithDefaults()
	sp, err := keydist.New(p.KeyDist, p.Keys)
	if err != nil {
		return nil, cfg, nil, nil, fmt.Errorf("mix: %w", err)
	}
	open := func(ctx context.Context, n int) ([]load.Worker, func(), error) {
		l := p.Load
		l.Clients = n
		clients, closeAll, err := workload.KVClients(ctx, st, l)
		if err != nil {
			return nil, nil, fmt.Errorf("mix: %w", err)
		}
		ws := make([]load.Worker, n)
		for i, c := range clients {
			ws[i] = newWorker(c, p, i, sp.Gen(p.Seed, uint64(i), i, n))
		}
		return ws, closeAll, nil
	}
	workers, closeAll, err = open(ctx, p.Load.Clients)
	if err != nil {
		return nil, cfg, nil, nil, err
	}
	if err := workload.Populate(ctx, st, p.Keyspace, p.Load.Clients); err != nil {
		closeAll()
		return nil, cfg, nil, nil, fmt.Errorf("mix: %w", err)
	}
	cfg = p.Load.Config(PhaseMix)
	cfg.Kinds = Kinds
	return workers, cfg, open, closeAll, nil
}
