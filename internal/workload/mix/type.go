package mix

import (
	"context"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"

	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// Type is the mix workload's registration.
var Type = workload.Define("mix",
	"gets and sets at a read ratio (default 0.9) over a uniform, zipfian or sequential key distribution, every get checked; figures per kind",
	workload.Load{Clients: DefaultClients, Ops: DefaultOps}, func() workload.Spec { return &Spec{} }, nil)

// Spec is a mix entry of a scenario: one cell, named by its read ratio and
// key distribution (two mixes of one run differ by them).
type Spec struct {
	workload.KeyspaceSpec `yaml:",inline"`
	ReadRatio             *float64 `yaml:"read_ratio,omitempty" json:"read_ratio,omitempty"`
	KeyDist               string   `yaml:"key_dist,omitempty" json:"key_dist,omitempty"`
}

// Params are the entry's cell parameters under load l, defaults applied
// (also capacity's op mix).
func (s *Spec) Params(l workload.Load, seed uint64) Params {
	return Params{Keyspace: s.Seeded(seed), ReadRatio: s.ReadRatio, KeyDist: keydist.Dist(s.KeyDist), Load: l}.WithDefaults()
}

// Defaults are Params.WithDefaults'.
func (s *Spec) Defaults() {
	p := s.Params(workload.Load{}, 0)
	s.KeyspaceSpec, s.ReadRatio, s.KeyDist = p.Keyspace.Written(), p.ReadRatio, string(p.KeyDist)
}

func (s *Spec) Validate(l workload.Load, seed uint64) error { return s.Params(l, seed).Validate() }

func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	params := s.Params(p.Load, p.Seed)
	params.Part = p.Shard.Part(p.Whole)
	c := workload.StoreCell(params, params.Memory(), func(ctx context.Context, st store.Store, h workload.Hooks) ([]metrics.Phase, error) {
		return Run(ctx, st, params, h)
	})
	c.Names = []string{"read_ratio", "key_dist"}
	return []workload.Cell{c}, nil
}

// Stalls: its phases can have their server stopped (a scenario's stall).
func (*Spec) Stalls() {}

// Shards: a shard writes its part of the keys (run --shard).
func (*Spec) Shards() {}
