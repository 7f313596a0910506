// Package hotkey is the file_get_contents article's experiment: one small
// value ("hello world") written once, then read many times, over persistent
// connections or a new connection per read (workload.Load.ConnectPerOp, the
// way a PHP page that connects per request works). Every read is checked
// byte for byte; a miss or another value is a mismatch error.
package hotkey

import (
	"context"
	"fmt"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Defaults, applied by Params.WithDefaults to zero fields.
const (
	DefaultValue   = "hello world"
	DefaultClients = 1
	DefaultOps     = 10000
)

// Key is the one key read.
const Key = "hotkey"

// Phase is the name of the one measured phase.
const Phase = "get"

// Params are one hotkey cell's parameters.
type Params struct {
	// ValueSize, when Value is "", asks for a value of that many bytes
	// derived from Seed; with Value it must be 0 or len(Value).
	ValueSize int `json:"value_size,omitempty"`
	// Value is the value read; default "hello world" (11 bytes).
	Value string `json:"value,omitempty"`
	Seed  uint64 `json:"seed"`
	// Load: Clients default 1; Ops default 10000 when neither Ops nor
	// Duration is given.
	Load workload.Load `json:"load"`
}

// WithDefaults returns p with the value spelled out (Value set, ValueSize
// its length) and the load's defaults: the parameters a run actually uses.
func (p Params) WithDefaults() Params {
	if p.Value == "" {
		if p.ValueSize > 0 {
			p.Value = string(workload.AppendValue(nil, p.Seed, 0, 0, p.ValueSize))
		} else if p.ValueSize == 0 {
			p.Value = DefaultValue
		}
	}
	if p.ValueSize == 0 {
		p.ValueSize = len(p.Value)
	}
	p.Load = p.EffectiveLoad()
	return p
}

// Validate rejects impossible parameters (after defaults) before any work.
// It spells out no value: a value of an absurd size is refused, not built.
func (p Params) Validate() error {
	var errs []error
	switch {
	case p.Value != "" && p.ValueSize != 0 && p.ValueSize != len(p.Value):
		errs = append(errs, fmt.Errorf("value size %d differs from the given value's %d bytes", p.ValueSize, len(p.Value)))
	case p.ValueSize != 0:
		if err := workload.CheckValueSize("value_size", p.ValueSize); err != nil {
			errs = append(errs, err)
		}
	case p.Value != "":
		if err := workload.CheckValueSize("value", len(p.Value)); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, p.EffectiveLoad().Validate())
	return workload.Refuse("hotkey", errs...)
}

// Memory estimates a cell's memory (workload.Estimate): per client the
// value it expects and the values it reads, one per op of a pipeline.
func (p Params) Memory() workload.Estimate {
	vs, l := int64(p.Size()), p.EffectiveLoad()
	return workload.Estimate{Clients: l.Clients, PerClient: workload.ClientBytes(0, int64(2+l.Depth())*vs), Data: workload.EntryBytes(p.Size())}
}

// Size is the size of the value read, without spelling it out as
// WithDefaults does: a plan records it before the run builds the value.
func (p Params) Size() int {
	switch {
	case p.Value != "":
		return len(p.Value)
	case p.ValueSize == 0:
		return len(DefaultValue)
	}
	return p.ValueSize
}

// EffectiveLoad is the load with its defaults, as WithDefaults sets it.
func (p Params) EffectiveLoad() workload.Load {
	return p.Load.WithDefaults(DefaultClients, DefaultOps)
}

// Run resets the store, writes the value once (unmeasured) and reads it
// Load.Ops times (or for Load.Duration) in one phase, "get". A pipeline
// reads the key Pipeline times per round trip (store.Batcher).
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.WithDefaults()
	clients, closeAll, err := workload.FreshClients(ctx, "hotkey", st, p.Load)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	if err := write(ctx, st, []byte(p.Value)); err != nil {
		return nil, err
	}
	workers := make([]load.Worker, len(clients))
	for i, c := range clients {
		workers[i] = newReader(c, p)
	}
	cfg := p.Load.Config(Phase)
	cfg.ClientIO = workload.ClientIO(clients)
	ph, err := load.Run(ctx, h.Apply(cfg), workers)
	if err != nil {
		return []metrics.Phase{ph}, fmt.Errorf("hotkey: %w", err)
	}
	return []metrics.Phase{ph}, nil
}

// write sets the value on a connection of its own.
func write(ctx context.Context, st store.Store, val []byte) error {
	c, err := st.Open(ctx)
	if err != nil {
		return fmt.Errorf("hotkey: write the value: %w", err)
	}
	defer c.Close()
	kv, ok := c.(store.KV)
	if !ok {
		return fmt.Errorf("hotkey: %w", store.ErrUnsupported)
	}
	if err := kv.Set(ctx, []byte(Key), val, 0); err != nil {
		return fmt.Errorf("hotkey: write the value: %w", err)
	}
	return nil
}

// reader reads the key and checks the value; Do allocates nothing.
type reader struct {
	kv    store.KV
	b     store.Batcher // depth > 1
	key   []byte
	want  []byte
	got   []byte
	keys  [][]byte
	dst   [][]byte
	found []bool
}

func newReader(kv store.KV, p Params) *reader {
	r := &reader{kv: kv, key: []byte(Key), want: []byte(p.Value), got: make([]byte, 0, len(p.Value))}
	if d := p.Load.Depth(); d > 1 {
		r.b = kv.(store.Batcher) // KVClients checked it
		r.keys = make([][]byte, d)
		r.dst = make([][]byte, d)
		for i := range r.keys {
			r.keys[i] = r.key
			r.dst[i] = make([]byte, 0, len(p.Value))
		}
		r.found = make([]bool, d)
	}
	return r
}

func (r *reader) Do(ctx context.Context, _ int64) error {
	if r.b != nil {
		dst, err := r.b.GetBatch(ctx, r.keys, r.dst, r.found)
		r.dst = dst
		if err != nil {
			return err
		}
		for i := range r.keys {
			if err := r.check(dst[i], r.found[i]); err != nil {
				return err
			}
		}
		return nil
	}
	got, ok, err := r.kv.Get(ctx, r.key, r.got[:0])
	r.got = got
	if err != nil {
		return err
	}
	return r.check(got, ok)
}

func (r *reader) check(got []byte, ok bool) error {
	return workload.CheckRead(r.key, got, ok, r.want)
}
