// Package kv is the article's experiment: write N keys one by one, then read
// every key back one by one and check each value byte for byte.
package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Params are one kv cell's parameters.
type Params struct {
	Keys      int64            // N: keys written, then read
	ValueSize int              // bytes per value
	KeyMode   workload.KeyMode // how keys are spelled
	Seed      uint64           // keys and values derive from it
	Clients   int              // connections; the article uses one
	WarmupOps int64            // reads of the first keys done before the read phase is measured
}

// Validate rejects impossible parameters before any work starts.
func (p Params) Validate() error {
	switch {
	case p.Keys <= 0:
		return fmt.Errorf("kv: keys must be positive, got %d", p.Keys)
	case p.ValueSize <= 0:
		return fmt.Errorf("kv: value size must be positive, got %d", p.ValueSize)
	case p.Clients <= 0:
		return fmt.Errorf("kv: clients must be positive, got %d", p.Clients)
	case p.WarmupOps < 0:
		return fmt.Errorf("kv: warm-up ops must not be negative, got %d", p.WarmupOps)
	}
	_, err := workload.ParseKeyMode(string(p.KeyMode))
	return err
}

// Hooks are the shared workload hooks.
type Hooks = workload.Hooks

// Run resets the store, writes p.Keys keys, then reads them all back. It
// returns the phases measured so far, also when it fails half-way.
func Run(ctx context.Context, st store.Store, p Params, h Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := st.Reset(ctx); err != nil {
		return nil, fmt.Errorf("kv: reset store: %w", err)
	}
	clients, err := openKV(ctx, st, p.Clients)
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	write, err := Write(ctx, clients, p, h)
	if err != nil {
		return []metrics.Phase{write}, fmt.Errorf("kv write phase: %w", err)
	}
	read, err := Read(ctx, clients, p, h)
	if err != nil {
		return []metrics.Phase{write, read}, fmt.Errorf("kv read phase: %w", err)
	}
	return []metrics.Phase{write, read}, nil
}

// Write sets keys 0..p.Keys-1, spread over the clients, one op each.
func Write(ctx context.Context, clients []store.KV, p Params, h Hooks) (metrics.Phase, error) {
	writers := make([]load.Worker, len(clients))
	for i, c := range clients {
		writers[i] = &writer{kv: c, p: p, key: make([]byte, 0, 32), val: make([]byte, 0, p.ValueSize)}
	}
	return load.Run(ctx, phaseConfig("write", p.Keys, 0, len(clients), h), writers)
}

// Read gets every key back and checks it byte for byte: a missing or
// different value is a mismatch error, never a success.
func Read(ctx context.Context, clients []store.KV, p Params, h Hooks) (metrics.Phase, error) {
	readers := make([]load.Worker, len(clients))
	for i, c := range clients {
		readers[i] = &reader{kv: c, p: p, key: make([]byte, 0, 32), want: make([]byte, 0, p.ValueSize), got: make([]byte, 0, p.ValueSize)}
	}
	// Warm-up reads re-read the first keys; every key is still read in the measured part.
	return load.Run(ctx, phaseConfig("read", p.Keys, min(p.WarmupOps, p.Keys), len(clients), h), readers)
}

func phaseConfig(name string, ops, warmup int64, clients int, h Hooks) load.Config {
	return h.Apply(load.Config{Name: name, Workers: clients, Ops: ops, WarmupOps: warmup})
}

// OpenClients opens n clients with the KV capability.
func OpenClients(ctx context.Context, st store.Store, n int) ([]store.KV, error) {
	return openKV(ctx, st, n)
}

func closeAll(clients []store.KV) {
	for _, c := range clients {
		c.(store.Client).Close()
	}
}

func openKV(ctx context.Context, st store.Store, n int) ([]store.KV, error) {
	var out []store.KV
	for i := 0; i < n; i++ {
		c, err := st.Open(ctx)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("kv: open client %d of %d: %w", i+1, n, err)
		}
		kv, ok := c.(store.KV)
		if !ok {
			c.Close()
			return nil, fmt.Errorf("kv: %w", store.ErrUnsupported)
		}
		out = append(out, kv)
	}
	return out, nil
}

type writer struct {
	kv       store.KV
	p        Params
	key, val []byte
}

func (w *writer) Do(ctx context.Context, seq int64) error {
	w.key = workload.AppendKey(w.key[:0], w.p.KeyMode, w.p.Seed, seq)
	w.val = workload.AppendValue(w.val[:0], w.p.Seed, seq, 0, w.p.ValueSize)
	return w.kv.Set(ctx, w.key, w.val, 0)
}

// ErrMismatch marks a read that did not return what was written.
var ErrMismatch = errors.New("read does not match the write")

type reader struct {
	kv             store.KV
	p              Params
	key, want, got []byte
}

func (r *reader) Do(ctx context.Context, seq int64) error {
	idx := seq % r.p.Keys // warm-up reads wrap round to the first keys
	r.key = workload.AppendKey(r.key[:0], r.p.KeyMode, r.p.Seed, idx)
	got, ok, err := r.kv.Get(ctx, r.key, r.got[:0])
	if err != nil {
		return err
	}
	r.got = got
	if !ok {
		return store.WithClass(store.ClassMismatch, fmt.Errorf("%w: key %s is missing", ErrMismatch, r.key))
	}
	r.want = workload.AppendValue(r.want[:0], r.p.Seed, idx, 0, r.p.ValueSize)
	if !bytes.Equal(got, r.want) {
		return store.WithClass(store.ClassMismatch, fmt.Errorf("%w: key %s: got %d bytes %.20q…, want %d bytes %.20q…", ErrMismatch, r.key, len(got), got, len(r.want), r.want))
	}
	return nil
}
