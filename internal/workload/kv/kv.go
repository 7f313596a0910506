// Package kv is the article's experiment: write N keys one by one, then read
// every key back one by one and check each value byte for byte.
//
// With Params.Batch N the write phase loads the keys in chunks of N instead,
// the fastest way the store knows (a comment on the article asks for it):
// store.BulkLoader where the store has it (PostgreSQL COPY, Redis and
// Memcached pipelined sets), else store.Batcher's SetBatch. Each chunk is
// one timed call carrying N operations, so the phase still reports
// operations per second, and its latency is per chunk. Reads stay one by one.
package kv

import (
	"context"
	"fmt"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Params are one kv cell's parameters.
type Params struct {
	Keys      int64            `json:"keys"`       // N: keys written, then read
	ValueSize int              `json:"value_size"` // bytes per value
	KeyMode   workload.KeyMode `json:"key_mode"`   // how keys are spelled
	Seed      uint64           `json:"seed"`       // keys and values derive from it
	Clients   int              `json:"clients"`    // connections; the article uses one
	WarmupOps int64            `json:"warmup_ops"` // reads of the first keys done before the read phase is measured
	// Batch is how keys are written: 0 one by one; N > 0 in chunks of N
	// keys per call (see the package doc). Keys must be a multiple of N;
	// an N above Keys is lowered to Keys.
	Batch int `json:"batch,omitempty"`
	// Shard is the part of the keys this process writes and reads back
	// (run --shard): Keys stays the whole run's count.
	Shard workload.Shard `json:"shard,omitzero"`
}

// keyRange is the keys this cell writes and reads: all of them, or the
// shard's part, in whole chunks when writing in batches.
func (p Params) keyRange() (first, n int64) {
	if p.Batch > 0 {
		c := p.chunk()
		first, n = p.Shard.Range(p.Keys / c)
		return first * c, n * c
	}
	return p.Shard.Range(p.Keys)
}

// Validate rejects impossible parameters before any work starts.
func (p Params) Validate() error {
	for _, err := range []error{
		workload.CheckKeys("keys", p.Keys), workload.CheckValueSize("value_size", p.ValueSize),
		workload.CheckClients("clients", p.Clients), workload.CheckOps("warmup_ops", p.WarmupOps, 0),
		workload.CheckBatch("batch", p.Batch),
	} {
		if err != nil {
			return fmt.Errorf("kv: %w", err)
		}
	}
	if p.Batch > 0 && p.Keys%p.chunk() != 0 {
		return fmt.Errorf("kv: keys (%d) must be a multiple of the batch (%d): every timed call carries the same number of keys", p.Keys, p.Batch)
	}
	_, err := workload.ParseKeyMode(string(p.KeyMode))
	return err
}

// Memory estimates a cell's memory (workload.Estimate): per client the
// value written, the one expected and the one read back, or with Batch a
// chunk's keys and values and the client library's copy of them; and the
// data set.
func (p Params) Memory() workload.Estimate {
	pair := workload.KeyBytes + int64(p.ValueSize)
	buffers := 3 * pair
	if p.Batch > 0 {
		buffers = 2 * p.chunk() * pair
	}
	return workload.Estimate{Clients: p.Clients, PerClient: workload.ClientBytes(0, buffers), Data: p.Keys * workload.EntryBytes(p.ValueSize)}
}

// chunk is the effective batch: Batch, at most Keys.
func (p Params) chunk() int64 { return min(int64(p.Batch), p.Keys) }

// Hooks are the shared workload hooks.
type Hooks = workload.Hooks

// Run resets the store, writes p.Keys keys, then reads them all back. It
// returns the phases measured so far, also when it fails half-way.
func Run(ctx context.Context, st store.Store, p Params, h Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	clients, closeClients, err := OpenClients(ctx, st, p.Clients)
	if err != nil {
		return nil, err
	}
	defer closeClients()
	if p.Batch > 0 {
		if _, err := workload.ChunkWriter(clients[0]); err != nil {
			return nil, fmt.Errorf("kv: batch: %w", err)
		}
	}
	if err := st.Reset(ctx); err != nil {
		return nil, fmt.Errorf("kv: reset store: %w", err)
	}
	write, err := Write(ctx, clients, p, h)
	if err != nil {
		return []metrics.Phase{write}, fmt.Errorf("kv write phase: %w", err)
	}
	var settled string
	if s, ok := st.(store.Settler); ok {
		if err := s.Settle(ctx); err != nil {
			return []metrics.Phase{write}, fmt.Errorf("kv: settle before reads: %w", err)
		}
		settled = "the store was settled after the writes, outside the measured time (PostgreSQL: VACUUM ANALYZE, as the article prewarmed its table)"
	}
	read, err := Read(ctx, clients, p, h)
	if settled != "" {
		read.Notes = append(read.Notes, settled)
	}
	if err != nil {
		return []metrics.Phase{write, read}, fmt.Errorf("kv read phase: %w", err)
	}
	return []metrics.Phase{write, read}, nil
}

// Write sets keys 0..p.Keys-1, spread over the clients, one op each, or
// with p.Batch one chunk per call.
func Write(ctx context.Context, clients []store.KV, p Params, h Hooks) (metrics.Phase, error) {
	if p.Batch > 0 {
		return writeChunks(ctx, clients, p, h)
	}
	writers := make([]load.Worker, len(clients))
	for i, c := range clients {
		writers[i] = &writer{kv: c, p: p, key: make([]byte, 0, 32), val: make([]byte, 0, p.ValueSize)}
	}
	_, n := p.keyRange()
	return load.Run(ctx, phaseConfig("write", n, 0, clients, h), writers)
}

func writeChunks(ctx context.Context, clients []store.KV, p Params, h Hooks) (metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return metrics.Phase{Name: "write"}, err
	}
	n := p.chunk()
	writers := make([]load.Worker, len(clients))
	for i, c := range clients {
		wc, err := workload.ChunkWriter(c)
		if err != nil {
			return metrics.Phase{Name: "write"}, fmt.Errorf("kv: %w", err)
		}
		writers[i] = &chunkWriter{
			write: wc, p: p, n: n,
			buf:  make([]byte, 0, n*(32+int64(p.ValueSize))),
			keys: make([][]byte, n), vals: make([][]byte, n),
		}
	}
	_, keys := p.keyRange()
	cfg := phaseConfig("write", keys/n, 0, clients, h)
	cfg.OpsPerCall = int(n)
	return load.Run(ctx, cfg, writers)
}

// chunkWriter writes keys seq*n .. seq*n+n-1 in one call.
type chunkWriter struct {
	write      workload.WriteChunk
	p          Params
	n          int64
	buf        []byte // every key and value of the chunk, back to back
	keys, vals [][]byte
}

func (w *chunkWriter) Do(ctx context.Context, seq int64) error {
	// buf has room for the whole chunk, so the slices below never move.
	w.buf = w.buf[:0]
	first, _ := w.p.keyRange()
	first += seq * w.n
	for i := range w.n {
		at := len(w.buf)
		w.buf = workload.AppendKey(w.buf, w.p.KeyMode, w.p.Seed, first+i)
		mid := len(w.buf)
		w.buf = workload.AppendValue(w.buf, w.p.Seed, first+i, 0, w.p.ValueSize)
		w.keys[i], w.vals[i] = w.buf[at:mid:mid], w.buf[mid:len(w.buf):len(w.buf)]
	}
	return w.write(ctx, w.keys, w.vals)
}

// Read gets every key back and checks it byte for byte: a missing or
// different value is a mismatch error, never a success.
func Read(ctx context.Context, clients []store.KV, p Params, h Hooks) (metrics.Phase, error) {
	readers := make([]load.Worker, len(clients))
	for i, c := range clients {
		readers[i] = &reader{kv: c, p: p, key: make([]byte, 0, 32), want: make([]byte, 0, p.ValueSize), got: make([]byte, 0, p.ValueSize)}
	}
	// Warm-up reads re-read the first keys; every key is still read in the measured part.
	_, n := p.keyRange()
	return load.Run(ctx, phaseConfig("read", n, min(p.WarmupOps, n), clients, h), readers)
}

func phaseConfig(name string, ops, warmup int64, clients []store.KV, h Hooks) load.Config {
	return h.Apply(load.Config{Name: name, Workers: len(clients), Ops: ops, WarmupOps: warmup, ClientIO: workload.ClientIO(clients)})
}

// OpenClients opens n clients with the KV capability (workload.KVClients),
// and returns a func that closes them.
func OpenClients(ctx context.Context, st store.Store, n int) ([]store.KV, func(), error) {
	clients, closeClients, err := workload.KVClients(ctx, st, workload.Load{Clients: n})
	if err != nil {
		return nil, nil, fmt.Errorf("kv: %w", err)
	}
	return clients, closeClients, nil
}

type writer struct {
	kv       store.KV
	p        Params
	key, val []byte
}

func (w *writer) Do(ctx context.Context, seq int64) error {
	first, _ := w.p.keyRange()
	i := first + seq
	w.key = workload.AppendKey(w.key[:0], w.p.KeyMode, w.p.Seed, i)
	w.val = workload.AppendValue(w.val[:0], w.p.Seed, i, 0, w.p.ValueSize)
	return w.kv.Set(ctx, w.key, w.val, 0)
}

// ErrMismatch marks a read that did not return what was written.
var ErrMismatch = workload.ErrMismatch

type reader struct {
	kv             store.KV
	p              Params
	key, want, got []byte
}

func (r *reader) Do(ctx context.Context, seq int64) error {
	first, n := r.p.keyRange()
	idx := first + seq%n // warm-up reads wrap round to the shard's first keys
	r.key = workload.AppendKey(r.key[:0], r.p.KeyMode, r.p.Seed, idx)
	got, ok, err := r.kv.Get(ctx, r.key, r.got[:0])
	if err != nil {
		return err
	}
	r.got = got
	r.want = workload.AppendValue(r.want[:0], r.p.Seed, idx, 0, r.p.ValueSize)
	return workload.CheckRead(r.key, got, ok, r.want)
}
